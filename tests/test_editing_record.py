"""The editorial record says what happened and nothing else: no unpublished changes that
change nothing, no "changed successfully" beside a refusal, no revision of a save that
changed nothing, and the editor's message in the review request they sent."""

import pytest
from django.urls import reverse
from reversion.models import Version

from summaries.editing import copies, restore, save, workflow
from summaries.models import Notification, Summary

from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
)
from .receipts_factories import make_transcript

pytestmark = pytest.mark.django_db


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


# --- Restoring what is live leaves no unpublished changes ---------------------------------


def test_restoring_the_live_version_onto_changes_leaves_no_changes(client):
    reviewer = ReviewerFactory(username="rita")
    summary = SummaryFactory(tldr="Live words.")
    ChapterFactory(summary=summary, position=1, title="Opening", body="As it is.")
    save.save_summary(summary=summary, parts={}, user=reviewer, comment="Written")
    workflow.publish_summary(summary=summary, user=reviewer)
    published = Version.objects.get_for_object(summary).order_by("-pk").first()
    copy, _ids, _made = copies.edit_target(summary=summary, user=reviewer)
    copy.tldr = "Changed words."
    save.save_summary(summary=copy, parts={}, user=reviewer, comment="Changed")

    target, made = restore.restore_revision(summary=summary, version=published, user=reviewer)

    assert (target, made) == (summary, False)
    assert copies.working_copy_of(summary) is None
    client.force_login(reviewer)
    dashboard = client.get(reverse("admin:index")).content.decode()
    assert "changes to a live summary" not in dashboard
    # The edit and its undoing stay in the summary's history.
    comments = [v.revision.get_comment() for v in restore.history_versions(summary)]
    assert comments[0].startswith("Restored the content of")
    assert "Changed" in comments


# --- A refused publish stays on the page --------------------------------------------------


def test_a_refused_publish_stays_on_the_page_with_only_the_refusal(client):
    reviewer = ReviewerFactory(username="rita")
    summary = SummaryFactory(video__duration_seconds=60)
    KeyPointFactory(summary=summary, position=1, title="Price", time=22)
    make_transcript(summary.video)  # the key point is not pinned to it: refused
    client.force_login(reviewer)
    data = form_fields(client.get(change_url(summary)))
    response = client.post(change_url(summary), {**data, "_publish": "1"})
    assert response.status_code == 302
    assert response["Location"] == change_url(summary)
    page = client.get(response["Location"])
    shown = [(m.level_tag, str(m)) for m in page.context["messages"]]
    assert [level for level, _ in shown] == ["error"], shown
    assert "Price" in shown[0][1]
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT


def test_a_publish_that_goes_through_still_says_so(client):
    reviewer = ReviewerFactory(username="rita")
    summary = SummaryFactory()
    client.force_login(reviewer)
    data = form_fields(client.get(change_url(summary)))
    response = client.post(change_url(summary), {**data, "_publish": "1"}, follow=True)
    messages = [str(m) for m in response.context["messages"]]
    assert "Published: readers can see this summary now." in messages
    summary.refresh_from_db()
    assert summary.status == Summary.Status.PUBLISHED


# --- The review request carries the editor's message --------------------------------------


def test_the_review_request_says_what_the_editor_wrote(
    mailoutbox, celery_eager, django_capture_on_commit_callbacks
):
    ReviewerFactory(username="rita", email="rita@example.com")
    summary = SummaryFactory()
    with django_capture_on_commit_callbacks(execute=True):
        workflow.submit_for_review(
            summary=summary,
            user=EditorFactory(username="ed"),
            message="Chapter 2 needs a second look:\nthe figures are new.",
        )
    notification = Notification.objects.get(recipient__username="rita")
    assert "Chapter 2 needs a second look:\nthe figures are new." in notification.event.body
    (mail,) = mailoutbox
    assert "Chapter 2 needs a second look:\nthe figures are new." in mail.body


def test_a_review_request_without_a_message_says_only_who_sent_it():
    ReviewerFactory(username="rita")
    summary = SummaryFactory()
    workflow.submit_for_review(summary=summary, user=EditorFactory(username="ed"))
    notification = Notification.objects.get(recipient__username="rita")
    assert notification.event.body.endswith("was sent for review by ed.")


# --- A save that changes nothing records nothing ------------------------------------------


def test_asking_for_empty_rows_without_a_change_records_no_revision(client):
    editor = EditorFactory(username="ed")
    summary = SummaryFactory()
    ChapterFactory(summary=summary, position=1, title="Opening", body="One.\n\nTwo.")
    save.save_summary(summary=summary, parts={}, user=editor, comment="Written")
    client.force_login(editor)
    data = form_fields(client.get(change_url(summary)))
    data["_more_rows"] = "1"
    response = client.post(change_url(summary), data)
    assert response.status_code == 302
    assert response["Location"].endswith("?rows=4")
    assert Version.objects.get_for_object(summary).count() == 1


def test_asking_for_empty_rows_with_a_change_saves_it(client):
    editor = EditorFactory(username="ed")
    summary = SummaryFactory(tldr="Old words.")
    save.save_summary(summary=summary, parts={}, user=editor, comment="Written")
    client.force_login(editor)
    data = form_fields(client.get(change_url(summary)))
    data.update({"_more_rows": "1", "tldr": "New words."})
    assert client.post(change_url(summary), data).status_code == 302
    summary.refresh_from_db()
    assert summary.tldr == "New words."
    assert Version.objects.get_for_object(summary).count() == 2
