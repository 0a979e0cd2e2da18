"""Pin actions in a summary's history: each is one small revision (the summary and the parts
whose pins it changed), listed by History with who did it, compared and restored with the
summary's other parts as they were (summaries/editing/pinning.py, revisions.py)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from reversion.models import Version

from summaries.editing import copies, pinning, restore, revisions, save, workflow
from summaries.models import Chapter, KeyPoint, Summary, Takeaway

from .factories import ReviewerFactory, SummaryFactory
from .receipts_factories import (
    PARAPHRASED_POINT,
    VERBATIM_POINT,
    fresh,
    make_transcript,
    pin_and_approve,
    pin_best,
)

pytestmark = pytest.mark.django_db


def summary_of(points: int, editor) -> Summary:
    """A draft of `points` key points (all said in SPEECH) and a chapter, saved once."""
    summary = SummaryFactory(tldr="The new model, its price and what comes next.")
    make_transcript(summary.video)
    said = [VERBATIM_POINT, PARAPHRASED_POINT]
    parts = {
        KeyPoint: [
            KeyPoint(title=f"Point {n}", body=said[n % 2], time=22 if n % 2 == 0 else 6)
            for n in range(points)
        ],
        Chapter: [Chapter(title="Release", body="Welcome back to the channel.", start_time=0)],
        Takeaway: [Takeaway(text="Pricing starts at $20 a month.", time=22)],
    }
    save.save_summary(summary=summary, parts=parts, user=editor)
    return Summary.objects.get(pk=summary.pk)


def history(summary):
    return list(restore.history_versions(summary))


def points_of(summary):
    return list(KeyPoint.objects.filter(summary=summary).order_by("position"))


def pin_write_queries(summary, editor) -> int:
    part = points_of(summary)[0]
    spans = pinning.suggestions(summary=summary, part=part, limit=1)
    with CaptureQueriesContext(connection) as queries:
        pinning.set_pin(
            summary=summary,
            part=part,
            first=spans[0].first_word,
            end=spans[0].end_word,
            user=editor,
        )
    return len(queries)


def test_one_pin_write_costs_a_few_queries_however_many_parts_the_summary_has(editor):
    """The transcript, the pin and the edit version written, the summary's last revision
    found, and a revision of the summary and the part, with its action: never a query per
    part."""
    small, large = summary_of(2, editor), summary_of(40, editor)
    pin_write_queries(small, editor)  # content types, the summary's video, once

    few = pin_write_queries(small, editor)

    assert few <= 13
    pin_write_queries(large, editor)
    assert pin_write_queries(large, editor) == few


def test_one_pin_revision_holds_the_summary_and_the_part_pinned(editor):
    summary = summary_of(5, editor)

    pin_best(summary, points_of(summary)[0], editor)

    revision = history(summary)[0].revision
    held = sorted(version.content_type.model for version in revision.version_set.all())
    assert held == ["keypoint", "summary"]


def test_each_pin_action_is_one_entry_of_history_by_its_editor(editor):
    reviewer = ReviewerFactory(username="rita")
    summary = summary_of(4, editor)
    before = len(history(summary))

    assert pinning.pin_all(summary=summary, user=editor) == 6  # 4 points, chapter, takeaway
    speed = points_of(summary)[1]
    pinning.approve_pin(summary=summary, part=speed, user=reviewer)
    pinning.set_pin(summary=summary, part=points_of(summary)[2], first=None, end=None, user=editor)

    entries = history(summary)[: len(history(summary)) - before]
    assert [(e.revision.user.username, revisions.action_label(e.revision)) for e in entries] == [
        ("eve", "Unpinned"),
        ("rita", "Approved"),
        ("eve", "Pinned"),
    ]
    assert entries[2].revision.get_comment() == "Pinned 6 statements where the transcript says them"
    assert entries[1].revision.get_comment() == "Approved the paraphrase of “Point 1”"


def test_pinning_every_statement_stores_the_first_suggestion_of_each(editor):
    summary = summary_of(3, editor)
    expected = {
        part.pk: pinning.suggestions(summary=summary, part=part, limit=1)[0].first_word
        for part in points_of(summary)
    }

    pinning.pin_all(summary=summary, user=editor)

    assert {part.pk: part.pin["first"] for part in points_of(summary)} == expected
    assert pinning.pin_all(summary=summary, user=editor) == 0  # nothing left to pin


def test_a_pin_revision_compares_as_the_pin_it_changed(editor):
    summary = summary_of(3, editor)
    saved = history(summary)[0]
    pin_best(summary, points_of(summary)[1], editor)
    pinned = history(summary)[0]

    comparison = revisions.compare_revisions(saved, pinned)

    kinds = {kind.kind: kind for kind in comparison.parts}
    assert not any(kind.removed or kind.added for kind in comparison.parts)
    assert len(kinds["key points"].parts) == 3
    assert not kinds["chapters"].changed and not kinds["takeaways"].changed


def test_restoring_a_pin_revision_brings_back_every_part_with_its_pin(editor):
    reviewer = ReviewerFactory(username="rita")
    summary = summary_of(3, editor)
    pin_best(summary, points_of(summary)[0], editor)
    pin_best(summary, points_of(summary)[1], editor)
    pinning.approve_pin(summary=summary, part=points_of(summary)[1], user=reviewer)
    approved = history(summary)[0]
    pins = [part.pin for part in points_of(summary)]
    # Later: a point removed, the pins dropped.
    for part in points_of(summary)[:2]:
        pinning.set_pin(summary=summary, part=part, first=None, end=None, user=editor)
    save.save_summary(summary=summary, parts={KeyPoint: points_of(summary)[:2]}, user=editor)

    restore.restore_revision(summary=summary, version=approved, user=editor)

    assert [part.title for part in points_of(summary)] == ["Point 0", "Point 1", "Point 2"]
    assert [part.pin for part in points_of(summary)] == pins
    assert points_of(summary)[1].pin["approved"]["by"] == "rita"
    assert Chapter.objects.filter(summary=summary).count() == 1


def test_a_working_copy_pinned_before_any_save_is_recorded_whole(editor):
    reviewer = ReviewerFactory(username="rita")
    summary = summary_of(3, editor)
    pin_and_approve(summary, editor)  # the gate publishes nothing unpinned
    workflow.publish_summary(summary=summary, user=reviewer)
    copy, _ = copies.start_working_copy(summary=summary, user=editor)

    pinning.set_pin(summary=copy, part=points_of(copy)[2], first=None, end=None, user=editor)

    version = Version.objects.get_for_object(copy)[0]
    snapshot = revisions.Snapshot(version)
    assert len(snapshot.parts[KeyPoint]) == 3 and len(snapshot.parts[Chapter]) == 1
    assert pinned(snapshot) == [True, True, False]
    pin_best(copy, points_of(copy)[2], editor)  # now a small one on that
    latest = revisions.Snapshot(Version.objects.get_for_object(copy)[0])
    assert pinned(latest) == [True, True, True]


def pinned(snapshot) -> list[bool]:
    """Whether each key point a revision holds is pinned, in order."""
    points = sorted(snapshot.parts[KeyPoint].values(), key=lambda values: values["position"])
    return [values["pin"] is not None for values in points]


def test_a_pin_moves_the_edit_version_on(editor):
    summary = summary_of(2, editor)
    before = summary.lock_version

    pin = pin_best(summary, points_of(summary)[0], editor)

    assert fresh(summary).lock_version == before + 1 == summary.lock_version
    assert pin["status"] == "verbatim"
