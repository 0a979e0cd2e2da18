"""summaries.editing.revisions: what a revision did, and what changed between two."""

import importlib

import pytest
import reversion
from reversion.models import Version

from summaries.editing import revisions, workflow
from summaries.editing.save import save_summary
from summaries.models import Chapter, Takeaway

from .factories import (
    ChapterFactory,
    EditorFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
)

pytestmark = pytest.mark.django_db


def save(summary, **parts):
    """Save the summary with its parts of each kind named, in this order: one revision."""
    models = {"chapters": Chapter, "takeaways": Takeaway}
    save_summary(
        summary=summary,
        parts={models[kind]: objects for kind, objects in parts.items()},
        user=EditorFactory(username="alice"),
    )
    return Version.objects.get_for_object(summary).first()


def chapters_of(summary):
    return list(Chapter.objects.filter(summary=summary).order_by("position"))


@pytest.fixture
def summary():
    summary = SummaryFactory(tldr="Speed matters for agents.")
    for position, title in enumerate(("One", "Two", "Three"), start=1):
        ChapterFactory(
            summary=summary, title=title, body=f"The {title.lower()} chapter.", position=position
        )
    TakeawayFactory(summary=summary, text="Fast models help.", position=1)
    return summary


def by_title(kind: revisions.PartsComparison) -> dict:
    return {part.label.split(": ", 1)[1]: part for part in kind.parts}


def test_a_changed_field_shows_both_versions_with_the_changed_words_marked(summary):
    before = save(summary)
    summary.tldr = "Speed matters a lot for coding agents."
    after = save(summary)

    comparison = revisions.compare_revisions(before, after)

    (tldr,) = comparison.changed_fields
    assert tldr.label == "In 30 seconds"
    assert (tldr.old, tldr.new) == (
        "Speed matters for agents.",
        "Speed matters a lot for coding agents.",
    )
    assert [s.text for s in tldr.old_segments if s.changed] == []
    assert [s.text for s in tldr.new_segments if s.changed] == ["a lot ", "coding "]
    # The segments put together are the texts again: nothing lost, nothing added.
    assert "".join(s.text for s in tldr.new_segments) == tldr.new
    assert "".join(s.text for s in tldr.old_segments) == tldr.old


def test_a_part_added_removed_and_edited_is_told_apart(summary):
    before = save(summary)
    one, two, three = chapters_of(summary)
    two.body = "The second chapter, rewritten."
    new = Chapter(title="Four", body="A new chapter.")
    after = save(summary, chapters=[one, two, new])  # three is removed

    chapters = revisions.compare_revisions(before, after).parts[2]

    assert chapters.kind == "chapters"
    assert [p.label for p in chapters.added] == ["Chapter 3: Four"]
    assert [p.pk for p in chapters.removed] == [three.pk]
    assert chapters.removed[0].label == "Chapter 3: Three"
    assert [p.pk for p in chapters.edited] == [two.pk]
    (body,) = chapters.edited[0].changed_fields
    assert (body.old, body.new) == ("The two chapter.", "The second chapter, rewritten.")
    assert [p.pk for p in chapters.unchanged] == [one.pk]
    assert chapters.moved == []
    # A removed part shows what it was; an added one what it is.
    removed_body = next(f for f in chapters.removed[0].fields if f.name == "body")
    assert (removed_body.old, removed_body.new) == ("The three chapter.", "")


def test_a_moved_part_is_the_one_that_changed_place_not_those_it_pushed_along(summary):
    before = save(summary)
    one, two, three = chapters_of(summary)
    after = save(summary, chapters=[three, one, two])

    chapters = revisions.compare_revisions(before, after).parts[2]

    assert [p.pk for p in chapters.moved] == [three.pk]
    moved = chapters.moved[0]
    assert (moved.old_position, moved.new_position) == (3, 1)
    assert moved.changed_fields == ()
    assert chapters.added == [] and chapters.removed == []


def test_parts_after_a_removed_one_have_not_moved(summary):
    before = save(summary)
    one, two, three = chapters_of(summary)
    after = save(summary, chapters=[two, three])

    chapters = revisions.compare_revisions(before, after).parts[2]

    assert [p.pk for p in chapters.removed] == [one.pk]
    assert chapters.moved == []
    assert {p.pk for p in chapters.unchanged} == {two.pk, three.pk}


def test_two_identical_revisions_have_no_differences(summary):
    before = save(summary)
    after = save(summary)

    comparison = revisions.compare_revisions(before, after)

    assert not comparison.changed
    assert comparison.changed_fields == ()
    assert all(not kind.changed for kind in comparison.parts)
    assert len(comparison.parts[2].unchanged) == 3


def test_a_workflow_revision_shows_the_status_and_publish_time_it_changed(summary):
    before = save(summary)
    workflow.publish_summary(summary=summary, user=ReviewerFactory())
    after = Version.objects.get_for_object(summary).first()

    changed = {f.name: f for f in revisions.compare_revisions(before, after).changed_fields}

    assert set(changed) == {"status", "publish_at"}
    assert (changed["status"].old, changed["status"].new) == ("Draft", "Published")
    assert changed["publish_at"].old == ""
    assert changed["publish_at"].new.endswith(f":{summary.publish_at.second:02} UTC")


def test_parts_of_another_summary_in_the_same_revision_are_not_counted(summary):
    other = SummaryFactory()
    ChapterFactory(summary=other, title="Elsewhere")
    before = save(summary)
    # A bulk publish from the list records several summaries in one revision.
    with reversion.create_revision():
        for each in (summary, other):
            workflow.publish_summary(summary=each, user=None)
    after = Version.objects.get_for_object(summary).first()

    chapters = revisions.compare_revisions(before, after).parts[2]

    assert "Elsewhere" not in by_title(chapters)
    assert chapters.added == []


def test_a_long_rewrite_is_compared_line_by_line():
    old = "First paragraph stays.\n\nSecond paragraph says one thing.\n\nThird stays too."
    new = "First paragraph stays.\n\nSecond paragraph says another thing.\n\nThird stays too."

    old_segments, new_segments = revisions.text_diff(old, new)

    assert [s.text for s in old_segments if s.changed] == ["one"]
    assert [s.text for s in new_segments if s.changed] == ["another"]


@pytest.mark.parametrize(
    ("comment", "kind"),
    [
        ("Changed In 30 seconds.", None),
        ("Initial version.", None),
        ("Changed through the API (tldr).", None),
        ("Published", "published"),
        ("Published. Changed In 30 seconds.", "published"),
        ("Published changes", "published"),
        ("Scheduled for 2026-10-02 09:00 UTC", "scheduled"),
        ("Unpublished", "unpublished"),
        ("Sent for review", "submitted"),
        ("Sent back: the second chapter needs a source.", "sent_back"),
        ("Restored the content of the version alice saved on …", "restored"),
        ("Reverted to previous version, saved on 2026-10-01 09:00", "restored"),
        ("Discarded changes", "discarded"),
        ("Removed the pin of “Point 1”", "unpinned"),
        ("Kept the pinned span of “Point 1”", "kept_pin"),
        ("", None),
    ],
)
def test_revisions_recorded_before_actions_were_data_get_the_action_their_comment_says(
    comment, kind
):
    migration = importlib.import_module("summaries.migrations.0044_revision_action")

    assert migration.kind_of(comment) == kind
