"""Review: editors submit, reviewers publish or send back with a note."""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone
from reversion.models import Version

from summaries.editing import workflow
from summaries.models import Citation, Source, Summary

from .admin_forms import form_fields
from .factories import ChapterFactory, EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def post_button(client, summary, button, **extra):
    data = {**form_fields(client.get(change_url(summary))), button: "go", **extra}
    return client.post(change_url(summary), data, follow=True)


def messages_of(response) -> str:
    return " ".join(str(message) for message in response.context["messages"])


def test_an_editor_submits_and_cannot_publish_their_own_work(client):
    editor = EditorFactory(username="ed")
    client.force_login(editor)
    summary = SummaryFactory(created_by=editor)
    content = client.get(change_url(summary)).content.decode()
    assert 'name="_publish"' not in content and 'name="_review"' in content
    response = post_button(client, summary, "_publish")
    assert "permission to publish" in messages_of(response)
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT
    post_button(client, summary, "_review")
    summary.refresh_from_db()
    assert summary.status == Summary.Status.IN_REVIEW


def test_a_reviewer_publishes_what_is_in_review(client):
    summary = SummaryFactory(status=Summary.Status.IN_REVIEW)
    client.force_login(ReviewerFactory(username="rita"))
    post_button(client, summary, "_publish")
    summary.refresh_from_db()
    assert summary.is_live()


def test_a_reviewer_sends_back_with_a_note_the_editor_sees(client):
    summary = SummaryFactory(status=Summary.Status.IN_REVIEW)
    reviewer = ReviewerFactory(username="rita", first_name="Rita", last_name="Reviewer")
    client.force_login(reviewer)
    response = post_button(client, summary, "_send_back", review_note="Cite the 2.5× figure.")
    assert "Sent back" in messages_of(response)
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT
    assert summary.review_note == "Cite the 2.5× figure." and summary.review_note_by == reviewer
    assert (
        Version.objects.get_for_object(summary)
        .first()
        .revision.get_comment()
        .startswith("Sent back")
    )

    client.force_login(EditorFactory(username="ed"))
    page = client.get(change_url(summary)).content.decode()
    assert "Sent back by Rita Reviewer" in page
    # The note is shown once, as the review conversation's current note, which the banner
    # links to.
    assert page.count("Cite the 2.5× figure.") == 1
    note = page.index("Cite the 2.5× figure.")
    assert page.rfind('class="review-message review-sent_back review-note"', 0, note) != -1
    assert '<a href="#review-message-' in page


def test_sending_back_needs_a_note_and_a_summary_in_review(client):
    client.force_login(ReviewerFactory())
    in_review = SummaryFactory(status=Summary.Status.IN_REVIEW)
    response = post_button(client, in_review, "_send_back", review_note="  ")
    # A form error: the page stays, with what was typed.
    assert "Say what the editor should change" in response.content.decode()
    in_review.refresh_from_db()
    assert in_review.status == Summary.Status.IN_REVIEW
    draft = SummaryFactory()
    with pytest.raises(Exception, match="Only a summary in review"):
        workflow.send_back(summary=draft, note="Why?")


def test_publishing_clears_the_note(client):
    summary = SummaryFactory(status=Summary.Status.IN_REVIEW)
    workflow.send_back(summary=summary, note="Fix it.")
    workflow.submit_for_review(summary=summary)
    workflow.publish_summary(summary=summary)
    summary.refresh_from_db()
    assert summary.review_note == "" and summary.is_live()


def test_changes_to_a_live_summary_go_through_review_too(client):
    live = SummaryFactory(live=True, tldr="Live words.")
    editor = EditorFactory(username="ed")
    client.force_login(editor)
    data = {**form_fields(client.get(change_url(live))), "tldr": "Changed.", "_review": "go"}
    client.post(change_url(live), data)
    copy = Summary.objects.get(working_copy_of=live)
    assert copy.status == Summary.Status.IN_REVIEW and copy.tldr == "Changed."
    client.force_login(ReviewerFactory(username="rita"))
    post_button(client, live, "_publish")
    live.refresh_from_db()
    assert live.tldr == "Changed." and live.is_live()


# --- The dashboard on the admin index -----------------------------------------------------


def test_the_dashboard_shows_what_needs_each_user(client):
    editor = EditorFactory(username="ed")
    mine = SummaryFactory(video__title="My draft", created_by=editor, updated_by=editor)
    SummaryFactory(video__title="Someone else's draft")
    waiting = SummaryFactory(video__title="Waiting for review", status=Summary.Status.IN_REVIEW)
    soon = timezone.now() + datetime.timedelta(days=1)
    SummaryFactory(video__title="Coming soon", status=Summary.Status.PUBLISHED, publish_at=soon)
    cited = ChapterFactory(
        summary=SummaryFactory(live=True, video__title="Cites a dead link"),
        body="Claim [src](https://example.com/gone).",
    ).summary
    source = Source.objects.create(url="https://example.com/gone", host="example.com")
    Source.objects.filter(pk=source.pk).update(state=Source.State.BROKEN)
    Citation.objects.create(
        summary=cited, source=source, url=source.url, link_text="src", claim="Claim."
    )

    client.force_login(editor)
    page = client.get(reverse("admin:index")).content.decode()
    assert "My draft" in page and "Someone else's draft" not in page
    assert "Waiting for review" not in page  # not a reviewer
    assert "Coming soon" in page
    assert "Cites a dead link" in page and "example.com/gone" in page

    client.force_login(ReviewerFactory(username="rita"))
    page = client.get(reverse("admin:index")).content.decode()
    assert "Waiting for review" in page and change_url(waiting) in page
    assert change_url(mine) not in page  # not rita's draft
