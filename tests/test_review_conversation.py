"""editing.review: the review conversation kept on a summary, and its assigned reviewer."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from summaries.editing import copies, review, workflow
from summaries.models import REVIEW_MESSAGE_CHARS, ReviewMessage, Summary

from .factories import EditorFactory, ReviewerFactory, SummaryFactory, UserFactory

pytestmark = pytest.mark.django_db

Kind = ReviewMessage.Kind


def conversation(summary):
    return [
        (m.kind, m.author.username if m.author else None, m.text) for m in review.thread(summary)
    ]


def test_every_send_back_and_reply_is_kept_in_order_not_only_the_latest_note():
    editor, reviewer = EditorFactory(username="ed"), ReviewerFactory(username="rita")
    summary = SummaryFactory(created_by=editor)
    workflow.submit_for_review(summary=summary, user=editor, message="Ready, I think.")
    workflow.send_back(summary=summary, user=reviewer, note="Cite the 2.5× figure.")
    review.reply(summary=summary, user=editor, text="Which paper do you mean?")
    review.reply(summary=summary, user=reviewer, text="The one from March.")
    workflow.submit_for_review(summary=summary, user=editor)
    workflow.send_back(summary=summary, user=reviewer, note="Now the chapter titles.")

    assert conversation(summary) == [
        (Kind.SUBMITTED, "ed", "Ready, I think."),
        (Kind.SENT_BACK, "rita", "Cite the 2.5× figure."),
        (Kind.REPLY, "ed", "Which paper do you mean?"),
        (Kind.REPLY, "rita", "The one from March."),
        (Kind.SUBMITTED, "ed", ""),
        (Kind.SENT_BACK, "rita", "Now the chapter titles."),
    ]
    summary.refresh_from_db()
    assert summary.review_note == "Now the chapter titles."  # the latest, as before


def test_the_conversation_of_changes_is_kept_on_the_summary_and_outlives_them():
    editor, reviewer = EditorFactory(), ReviewerFactory()
    live = SummaryFactory(live=True)
    copy, _ids, _made = copies.edit_target(summary=live, user=editor)
    workflow.submit_for_review(summary=live, user=editor, message="Typo fixed.")
    review.reply(summary=copy, user=reviewer, text="Thanks.")
    assert set(ReviewMessage.objects.values_list("summary", flat=True)) == {live.pk}
    workflow.publish_summary(summary=live, user=reviewer)
    assert not Summary.objects.filter(pk=copy.pk).exists()
    assert [m.text for m in review.thread(live)] == ["Typo fixed.", "Thanks."]


def test_a_reply_needs_text_within_the_cap_and_someone_who_may_edit_or_review():
    summary = SummaryFactory()
    with pytest.raises(ValidationError):
        review.reply(summary=summary, user=EditorFactory(), text="   ")
    with pytest.raises(ValidationError):
        review.reply(summary=summary, user=EditorFactory(), text="x" * (REVIEW_MESSAGE_CHARS + 1))
    with pytest.raises(PermissionDenied):
        review.reply(summary=summary, user=UserFactory(is_staff=True), text="Hello")
    assert not ReviewMessage.objects.exists()


def test_a_submit_message_is_capped_like_a_reply():
    summary = SummaryFactory()
    with pytest.raises(ValidationError):
        workflow.submit_for_review(
            summary=summary, user=EditorFactory(), message="x" * (REVIEW_MESSAGE_CHARS + 1)
        )
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT


def test_a_summary_is_assigned_only_to_someone_who_may_publish():
    editor, reviewer = EditorFactory(), ReviewerFactory(username="rita")
    summary = SummaryFactory()
    lock_version = summary.lock_version
    review.assign_reviewer(summary=summary, reviewer=reviewer, user=editor)
    summary.refresh_from_db()
    assert summary.assigned_to == reviewer
    # Not an edit: whoever is editing the summary meanwhile is not told of a conflict.
    assert summary.lock_version == lock_version
    with pytest.raises(ValidationError):
        review.assign_reviewer(summary=summary, reviewer=EditorFactory(), user=editor)
    with pytest.raises(ValidationError):
        review.assign_reviewer(
            summary=summary, reviewer=ReviewerFactory(is_active=False), user=editor
        )
    with pytest.raises(PermissionDenied):
        review.assign_reviewer(summary=summary, reviewer=reviewer, user=UserFactory())
    review.assign_reviewer(summary=summary, reviewer=None, user=editor)
    summary.refresh_from_db()
    assert summary.assigned_to is None


def test_the_changes_of_a_summary_are_assigned_on_the_summary():
    live = SummaryFactory(live=True)
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    reviewer = ReviewerFactory()
    review.assign_reviewer(summary=copy, reviewer=reviewer, user=EditorFactory())
    live.refresh_from_db()
    copy.refresh_from_db()
    assert live.assigned_to == reviewer and copy.assigned_to is None
