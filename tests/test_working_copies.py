"""Working copies: edits to a published summary stay unseen until the changes are published."""

import datetime

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.utils import timezone
from reversion.models import Version

from summaries.editing import copies, derived, save, workflow
from summaries.models import Caveat, Chapter, Citation, Source, Summary
from summaries.pagecache.generation import current_generation

from .factories import ChapterFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def live():
    """A live summary with two chapters, a caveat on the second and a confirmed citation."""
    summary = SummaryFactory(live=True, tldr="Live words.")
    ChapterFactory(summary=summary, position=1, title="One", body="First chapter.")
    second = ChapterFactory(
        summary=summary,
        position=2,
        title="Two",
        body="It is 2.5 times faster [a](https://example.com/fast).",
    )
    Caveat.objects.create(summary=summary, chapter=second, position=1, text="Measured once.")
    derived.refresh_derived_data(summary=summary)
    Citation.objects.filter(summary=summary).update(
        confirmed_fingerprint="abc", confirmed_excerpt="2.5 times faster"
    )
    return summary


def page(client, summary) -> str:
    response = client.get(summary.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def edit_copy(live, *, tldr="Changed words.", new_chapter_title="Three"):
    copy, _ = copies.start_working_copy(summary=live)
    copy.tldr = tldr
    chapters = list(copy.chapters.order_by("position"))
    chapters.append(Chapter(title=new_chapter_title, body="A new [b](https://example.com/new)."))
    save.save_summary(summary=copy, parts={Chapter: chapters}, user=None)
    return copy


def test_a_copy_holds_every_part_and_citation_of_the_live_summary(live):
    copy, ids = copies.start_working_copy(summary=live)
    assert copy.working_copy_of == live and copy.video is None
    assert copy.summarised_video == live.video
    assert list(copy.chapters.values_list("title", "position")) == [("One", 1), ("Two", 2)]
    caveat = copy.caveats.get()
    assert caveat.chapter.summary == copy and caveat.chapter.title == "Two"
    citation = copy.citations.get()
    assert citation.chapter.summary == copy and citation.confirmed_fingerprint == "abc"
    assert ids[(Chapter, live.chapters.get(title="Two").pk)] == caveat.chapter_id
    again, ids = copies.start_working_copy(summary=live)
    assert again == copy and ids == {}


def test_readers_see_the_live_summary_while_its_copy_is_edited(client, live):
    page(client, live)  # cached now
    copy = edit_copy(live)
    content = page(client, live)
    assert "Live words." in content and "Changed words." not in content
    assert "“Three”" not in content and ">Three<" not in content
    assert list(Summary.objects.published()) == [live]
    assert copy not in Summary.objects.originals()


def test_links_new_in_a_copy_are_checked_before_publishing(
    live, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        edit_copy(live)
    new = Source.objects.get(url="https://example.com/new")
    assert new.check_token  # claimed for a check batch
    assert any(
        getattr(c, "__qualname__", "").endswith("check_source_batch.delay") for c in callbacks
    )


def test_publishing_the_changes_makes_them_live_in_one_step(client, live):
    page(client, live)
    copy = edit_copy(live)
    editor = ReviewerFactory()
    workflow.publish_summary(summary=copy, user=editor)
    live.refresh_from_db()
    assert live.tldr == "Changed words." and live.is_live()
    assert list(live.chapters.values_list("title", flat=True)) == ["One", "Two", "Three"]
    assert live.caveats.get().chapter.title == "Two"
    assert not Summary.objects.filter(pk=copy.pk).exists()
    kept = live.citations.get(url="https://example.com/fast")
    assert kept.confirmed_fingerprint == "abc"  # confirmations survive publishing
    content = page(client, live)
    assert "Changed words." in content and "Three" in content
    latest = Version.objects.get_for_object(live).first()
    assert latest.revision.get_comment() == "Published changes"
    assert latest.revision.user == editor


def test_discarding_the_changes_leaves_the_live_summary_as_it_was(client, live):
    copy = edit_copy(live)
    assert copies.discard_changes(summary=live)
    assert not Summary.objects.filter(pk=copy.pk).exists()
    live.refresh_from_db()
    assert live.tldr == "Live words." and live.chapters.count() == 2
    assert "Live words." in page(client, live)
    assert not copies.discard_changes(summary=live)


def test_changes_can_be_scheduled_like_a_first_publication(client, live):
    edit_copy(live)
    at = timezone.now() + datetime.timedelta(hours=2)
    workflow.publish_summary(summary=live, at=at)
    assert "Live words." in page(client, live)
    assert copies.publish_due_changes() == []
    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == [live.pk]
        assert "Changed words." in page(client, live)
        assert copies.publish_due_changes() == []


def test_unpublishing_keeps_the_unpublished_changes_as_the_draft(live):
    edit_copy(live)
    workflow.unpublish_summary(summary=live)
    live.refresh_from_db()
    assert live.status == Summary.Status.DRAFT
    assert live.tldr == "Changed words." and live.chapters.count() == 3
    assert not Summary.objects.filter(working_copy_of=live).exists()


def test_changes_are_sent_for_review_and_nothing_else_is(live):
    with pytest.raises(ValidationError):
        workflow.submit_for_review(summary=live)  # nothing to review
    copy = edit_copy(live)
    workflow.submit_for_review(summary=live)
    copy.refresh_from_db()
    live.refresh_from_db()
    assert copy.status == Summary.Status.IN_REVIEW and live.is_live()


def test_publishing_without_changes_is_a_clear_error(live):
    with pytest.raises(ValidationError, match="no unpublished changes"):
        copies.publish_changes(summary=live)


def test_saving_a_copy_leaves_cached_pages_alone(live):
    """Readers never see a copy: saving one must not empty the page cache."""
    copies.start_working_copy(summary=live)
    generation = current_generation()
    edit_copy(live)
    assert current_generation() == generation
