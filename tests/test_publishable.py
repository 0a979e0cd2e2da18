"""What may be published is judged by one rule set, whichever road leads there: a first
publication, publishing the changes of a live summary, and the scheduler going live."""

import datetime

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from reversion.models import Version

from summaries.editing import copies, publishable, restore, save, workflow
from summaries.models import Chapter, Summary, Video

from .admin_forms import form_fields
from .factories import ChapterFactory, ReviewerFactory, SummaryFactory, VideoFactory

pytestmark = pytest.mark.django_db


def _restored_past_the_end(*, live: bool = False):
    """A summary whose first revision had a chapter at 15:00 of a 20-minute video; the
    chapter was moved to 5:00, the video shortened to 10 minutes, then the first revision
    restored (the chapter at 15:00 again). Returns (summary, what the restore wrote to)."""
    reviewer = ReviewerFactory()
    summary = SummaryFactory(video=VideoFactory(duration_seconds=1200))
    ChapterFactory(summary=summary, position=1, title="Late", start_time=900)
    save.save_summary(summary=summary, parts={}, user=reviewer, comment="First version")
    first = Version.objects.get_for_object(summary).get()
    chapter = Chapter.objects.get(summary=summary)
    chapter.start_time = 300
    save.save_summary(summary=summary, parts={Chapter: [chapter]}, user=reviewer)
    Video.objects.filter(pk=summary.video_id).update(duration_seconds=600)
    if live:
        workflow.publish_summary(summary=summary, user=reviewer)
    summary.refresh_from_db()
    target, _made = restore.restore_revision(summary=summary, version=first, user=reviewer)
    assert Chapter.objects.get(summary=target).start_time == 900
    return summary, target, reviewer


def test_a_draft_restored_with_a_chapter_past_the_end_is_not_published():
    summary, _target, reviewer = _restored_past_the_end()
    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=summary, user=reviewer)
    assert "15:00 is after the video ends (10:00)" in " ".join(refused.value.messages)
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT
    assert not Summary.objects.published().filter(pk=summary.pk).exists()


def test_changes_restored_with_a_chapter_past_the_end_are_not_published():
    summary, copy, reviewer = _restored_past_the_end(live=True)
    assert copy.working_copy_of == summary
    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=summary, user=reviewer)
    assert "15:00 is after the video ends (10:00)" in " ".join(refused.value.messages)
    assert Chapter.objects.get(summary=summary).start_time == 300


def test_scheduled_changes_past_the_end_wait_for_a_reviewer():
    summary, copy, reviewer = _restored_past_the_end(live=True)
    Video.objects.filter(pk=summary.video_id).update(duration_seconds=1200)
    soon = timezone.now() + datetime.timedelta(hours=1)
    workflow.publish_summary(summary=summary, user=reviewer, at=soon)
    Video.objects.filter(pk=summary.video_id).update(duration_seconds=600)
    assert copies.publish_due_changes(now=soon + datetime.timedelta(minutes=1)) == []
    copy.refresh_from_db()
    assert copy.publish_at is None  # off the schedule, waiting for a reviewer
    assert Chapter.objects.get(summary=summary).start_time == 300


@pytest.mark.parametrize("live", [False, True])
def test_every_road_to_publication_asks_the_same_rules(live):
    summary, target, _reviewer = _restored_past_the_end(live=live)
    with pytest.raises(ValidationError) as refused:
        publishable.check_publishable(target)
    assert "15:00 is after the video ends (10:00)" in " ".join(refused.value.messages)


def test_the_admin_refuses_to_publish_a_restored_chapter_past_the_end(client):
    summary, _target, reviewer = _restored_past_the_end()
    client.force_login(reviewer)
    listing = reverse("admin:summaries_summary_changelist")
    response = client.post(
        listing, {"action": "publish_now", "_selected_action": [summary.pk]}, follow=True
    )
    assert response.status_code == 200
    shown = [(m.level_tag, m.message) for m in response.context["messages"]]
    assert [level for level, _ in shown] == ["error"]
    assert "15:00 is after the video ends (10:00)" in shown[0][1]
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT

    # The summary's own page: its form says what to change, and nothing is published.
    url = reverse("admin:summaries_summary_change", args=[summary.pk])
    data = form_fields(client.get(url))
    data["_publish"] = "1"
    response = client.post(url, data)
    assert "15:00 is after the video ends (10:00)" in response.content.decode()
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT
