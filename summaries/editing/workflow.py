"""Where a summary is in its workflow: review, publishing, scheduling, unpublishing."""

from datetime import datetime

import reversion
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from summaries import notifications
from summaries.models import (
    ReviewMessage,
    Summary,
)

from . import copies, events, gate, publishable, receipts, review
from .revisions import Action, record_action

# A reviewer's note is a few sentences, not a second summary.
REVIEW_NOTE_CHARS = 2000


def _record(summary: Summary, user: gate.Actor, action: Action, comment: str) -> None:
    """Save the summary's workflow fields inside a revision, so history shows who did it."""
    with reversion.create_revision():
        summary.updated_by = user if user and user.is_authenticated else None
        summary.save(
            update_fields=[
                "status",
                "publish_at",
                "first_published_at",
                "updated_by",
                "review_note",
            ]
        )
        if user and user.is_authenticated:
            reversion.set_user(user)
        reversion.set_comment(comment)
        record_action(action)


@transaction.atomic
def publish_summary(
    *,
    summary: Summary,
    user: gate.Actor = None,
    at: datetime | None = None,
    change_kind: str | None = None,
    note: str = "",
) -> Summary:
    """Publish a summary now, or schedule it when `at` lies in the future.

    Visibility is decided when content is read (status published and publish time
    reached), so a scheduled summary goes live on time with no periodic job. Records a
    revision. A published summary with unpublished changes (a working copy), or the copy
    itself, publishes the changes instead (copies.publish_changes), recorded as the
    `change_kind` with the public `note` (editing.corrections); a first publication is not
    a change, and they are not used for it. Raises ValidationError
    when the summary is not ready to be read, PermissionDenied when `user` may not publish.
    """
    gate.require(user, gate.PUBLISH, "publish summaries")
    if summary.working_copy_of is not None:
        return copies.publish_changes(
            summary=summary.working_copy_of, user=user, at=at, change_kind=change_kind, note=note
        )
    if copies.working_copy_of(summary) is not None:
        return copies.publish_changes(
            summary=summary, user=user, at=at, change_kind=change_kind, note=note
        )
    # Locked before the gate: an import waits until this publication is committed.
    Summary.objects.select_for_update().filter(pk=summary.pk).exists()
    publishable.check_publishable(summary)
    receipts.publish_transcripts(video=summary.summarised_video)
    now = timezone.now()
    summary.status = Summary.Status.PUBLISHED
    summary.publish_at = at or now
    summary.review_note = ""  # what was asked has been done
    if summary.first_published_at is None:
        summary.first_published_at = summary.publish_at
    scheduled = summary.publish_at > now
    comment = f"Scheduled for {summary.publish_at:%Y-%m-%d %H:%M %Z}" if scheduled else "Published"
    _record(summary, user, Action.SCHEDULED if scheduled else Action.PUBLISHED, comment)
    events.published(summary, by=user, now=now)
    return summary


@transaction.atomic
def unpublish_summary(*, summary: Summary, user: gate.Actor = None) -> Summary:
    """Take a summary (live or scheduled) back to draft; its publish time is cleared.

    Unpublished changes (a working copy) become the draft's content: nothing is lost.
    Raises PermissionDenied when `user` may not publish (unpublishing is publishing).
    """
    gate.require(user, gate.PUBLISH, "unpublish summaries")
    if summary.working_copy_of is not None:
        summary = summary.working_copy_of
    was_live = summary.is_live()
    copies.take_back_changes(summary=summary)
    summary.refresh_from_db()
    summary.status = Summary.Status.DRAFT
    summary.publish_at = None
    _record(summary, user, Action.UNPUBLISHED, "Unpublished")
    events.unpublished(summary, was_live=was_live)
    return summary


@transaction.atomic
def submit_for_review(*, summary: Summary, user: gate.Actor = None, message: str = "") -> Summary:
    """Mark a draft, or the unpublished changes of a published summary, as ready for review.

    A published summary without changes has nothing to review. Records the submission,
    with the optional `message` to the reviewer, in the summary's review conversation, and
    tells the reviewers (the assigned one only, when there is one), with the message.
    Raises PermissionDenied when `user` may not change summaries, ValidationError when the
    message is too long.
    """
    gate.require(user, gate.CHANGE, "send summaries to review")
    message = review.message_text(message, required=False, name="message")
    if summary.status == Summary.Status.PUBLISHED:
        copy = copies.working_copy_of(summary)
        if copy is None:
            raise ValidationError(
                {"status": "This summary is published and has no unpublished changes to review."}
            )
        summary = copy
    summary.status = Summary.Status.IN_REVIEW
    _record(summary, user, Action.SUBMITTED, "Sent for review")
    events.workflow_moved(summary)
    review.record(summary=summary, user=user, kind=ReviewMessage.Kind.SUBMITTED, text=message)
    notifications.summary_submitted(summary=summary, by=user, message=message)
    return summary


@transaction.atomic
def send_back(*, summary: Summary, user: gate.Actor = None, note: str) -> Summary:
    """A reviewer sends a summary (or its unpublished changes) in review back to its editor.

    It becomes a draft again, with the reviewer's note, who wrote it and when, shown on the
    summary until it is published, and kept in the summary's review conversation. A
    published summary's changes are addressed through the summary. Changes scheduled to go
    live are no longer scheduled. Raises
    ValidationError when it is not in review or the note is empty, PermissionDenied when
    `user` may not publish.
    """
    gate.require(user, gate.PUBLISH, "send summaries back")
    if summary.status == Summary.Status.PUBLISHED:
        summary = copies.working_copy_of(summary) or summary
    if summary.status != Summary.Status.IN_REVIEW:
        raise ValidationError({"status": "Only a summary in review can be sent back."})
    note = (note or "").strip()
    if not note:
        raise ValidationError({"note": "Say what the editor should change."})
    summary.status = Summary.Status.DRAFT
    if summary.is_working_copy:
        summary.publish_at, summary.scheduled_version = None, None
    summary.review_note = note[:REVIEW_NOTE_CHARS]
    summary.review_note_by = user if user is not None and user.is_authenticated else None
    summary.review_note_at = timezone.now()
    with reversion.create_revision():
        summary.updated_by = summary.review_note_by
        summary.save(
            update_fields=[
                "status",
                "review_note",
                "review_note_by",
                "review_note_at",
                "updated_by",
                "publish_at",
                "scheduled_version",
            ]
        )
        if summary.review_note_by is not None:
            reversion.set_user(user)
        reversion.set_comment(f"Sent back: {summary.review_note}")
        record_action(Action.SENT_BACK)
    review.record(
        summary=summary, user=user, kind=ReviewMessage.Kind.SENT_BACK, text=summary.review_note
    )
    notifications.summary_sent_back(summary=summary, by=user)
    return summary
