"""editing.revisions.compare_live_and_changes: a published summary against its changes."""

import pytest

from summaries.editing import copies, revisions, save, video_changes
from summaries.models import Chapter, Summary, Takeaway

from .factories import (
    ChapterFactory,
    EditorFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def live():
    summary = SummaryFactory(tldr="Speed matters for agents.", live=True)
    for position, title in enumerate(("One", "Two", "Three"), start=1):
        ChapterFactory(
            summary=summary,
            title=title,
            body=f"The {title.lower()} chapter.",
            position=position,
            start_time=60 * position,
        )
    TakeawayFactory(summary=summary, text="Fast models help.", position=1)
    return summary


def edit(summary, change):
    """Edit the live summary's working copy: `change(copy, chapters)` returns the chapters
    to save, in order."""
    editor = EditorFactory()
    copy, _ids, _made = copies.edit_target(summary=summary, user=editor)
    chapters = list(Chapter.objects.filter(summary=copy).order_by("position"))
    chapters = change(copy, chapters)
    save.save_summary(summary=copy, parts={Chapter: chapters}, user=editor)
    return copy


def test_without_changes_there_is_nothing_to_compare(live):
    assert revisions.compare_live_and_changes(live) is None


def test_the_changes_are_compared_with_the_live_summary_field_by_field_and_word_by_word(live):
    def change(copy, chapters):
        copy.tldr = "Speed matters a lot for coding agents."
        one, two, three = chapters
        two.body = "The second chapter, rewritten."
        three.start_time = 200
        return [three, one, Chapter(title="Four", body="A new chapter.")]

    edit(live, change)

    comparison = revisions.compare_live_and_changes(live)

    assert comparison.changed
    (tldr,) = [field for field in comparison.changed_fields if field.name == "tldr"]
    assert (tldr.old, tldr.new) == (
        "Speed matters for agents.",
        "Speed matters a lot for coding agents.",
    )
    assert [s.text for s in tldr.new_segments if s.changed] == ["a lot ", "coding "]
    # Workflow fields of the copy (its status, no publish time) are not changes of content.
    assert {field.name for field in comparison.changed_fields} == {"tldr"}
    chapters = {part.label.split(": ", 1)[1]: part for part in comparison.parts[2].parts}
    assert chapters["Four"].added
    assert chapters["Two"].removed
    assert chapters["Three"].moved
    assert not chapters["One"].moved
    (start,) = chapters["Three"].changed_fields
    assert (start.old, start.new) == ("3:00", "3:20")
    # The copy's parts are known by the live parts they came from.
    live_ids = set(Chapter.objects.filter(summary=live).values_list("pk", flat=True))
    assert chapters["Three"].pk in live_ids and chapters["One"].pk in live_ids
    takeaways = comparison.parts[1]
    assert takeaways.unchanged and not takeaways.changed


def test_an_edited_part_shows_the_words_that_changed(live):
    def change(copy, chapters):
        chapters[1].body = "The second chapter."
        return chapters

    edit(live, change)

    chapters = revisions.compare_live_and_changes(live).parts[2]
    (edited,) = chapters.edited
    (body,) = edited.changed_fields
    assert [s.text for s in body.old_segments if s.changed] == ["two"]
    assert [s.text for s in body.new_segments if s.changed] == ["second"]


def test_pending_video_changes_are_shown_as_video_fields(live):
    topic = TopicFactory(name="Agents")
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    video = live.video
    copy.video_changes = {
        "title": video.title + " (updated)",
        "duration_seconds": 754,
        "topics": [topic.pk],
    }
    Summary.objects.filter(pk=copy.pk).update(video_changes=copy.video_changes)

    comparison = revisions.compare_live_and_changes(live)

    shown = {field.name: field for field in comparison.changed_fields}
    assert shown["video.title"].new == video.title + " (updated)"
    assert shown["video.title"].label == "Video: title"
    assert shown["video.duration_seconds"].new == "12:34"
    assert shown["video.topics"].new == "Agents"
    assert "video.blurb" not in shown  # not changed
    assert video_changes.FIELDS  # every video field is known


def test_the_copy_of_a_draft_is_not_a_thing():
    draft = SummaryFactory()
    assert revisions.compare_live_and_changes(draft) is None


def test_a_takeaway_left_alone_is_unchanged(live):
    edit(live, lambda copy, chapters: chapters[:2])
    comparison = revisions.compare_live_and_changes(live)
    assert [p.removed for p in comparison.parts[2].parts] == [False, False, True]
    assert not comparison.parts[1].changed
    assert Takeaway.objects.filter(summary=live).count() == 1
