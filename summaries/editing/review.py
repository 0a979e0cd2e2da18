"""A summary's review conversation and its assigned reviewer.

Every message (a submission's message, a reviewer's send-back note, a reply by an editor or
a reviewer) is a ReviewMessage on the summary itself, never on its working copy, so the
conversation is kept across rounds of changes. The workflow records the submissions and
send-backs (workflow.py); replies and assignments are recorded here.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet

from summaries import notifications
from summaries.models import REVIEW_MESSAGE_CHARS, ReviewMessage, Summary
from summaries.text.line_endings import normalised_text

from . import gate


def original(summary: Summary) -> Summary:
    """The summary a working copy changes (the summary itself otherwise)."""
    return summary.working_copy_of if summary.working_copy_of is not None else summary


def thread(summary: Summary) -> QuerySet[ReviewMessage]:
    """The summary's review conversation, oldest first, with each message's author."""
    return ReviewMessage.objects.filter(summary=original(summary)).select_related("author")


def current_note_id(summary: Summary, messages: list[ReviewMessage]) -> int | None:
    """The send-back note `summary` (a draft or a working copy) still waits on: the last
    send-back in its conversation `messages`, while it is a draft with a note."""
    if summary.status != Summary.Status.DRAFT or not summary.review_note:
        return None
    sent_back = [m for m in messages if m.kind == ReviewMessage.Kind.SENT_BACK]
    return sent_back[-1].pk if sent_back else None


def message_text(text: str | None, *, required: bool, name: str = "text") -> str:
    """`text` stripped, its line breaks as LF (text.line_endings); ValidationError (under
    `name`) when empty but required, or too long."""
    text = normalised_text(text or "").strip()
    if required and not text:
        raise ValidationError({name: "Write a message."})
    if len(text) > REVIEW_MESSAGE_CHARS:
        raise ValidationError(
            {name: f"Keep it to {REVIEW_MESSAGE_CHARS} characters (it has {len(text)})."}
        )
    return text


def record(*, summary: Summary, user: gate.Actor, kind: str, text: str = "") -> ReviewMessage:
    """Write one message of the conversation (no permission check: for the workflow's
    services, which check their own). `text` must have passed message_text."""
    author = user if user is not None and user.is_authenticated else None
    message = ReviewMessage(summary=original(summary), author=author, kind=kind, text=text)
    message.save()
    return message


def _may_take_part(user: gate.Actor) -> bool:
    return gate.may(user, gate.CHANGE) or gate.may(user, gate.PUBLISH)


def reply(*, summary: Summary, user: gate.Actor, text: str) -> ReviewMessage:
    """Add a reply by an editor or a reviewer to the summary's review conversation, and
    tell the others in the review (notifications.review_reply).

    Raises ValidationError when the text is empty or longer than REVIEW_MESSAGE_CHARS,
    PermissionDenied when `user` may neither change nor publish summaries.
    """
    if not _may_take_part(user):
        raise PermissionDenied("You do not have permission to reply in reviews.")
    text = message_text(text, required=True)
    with transaction.atomic():
        message = record(summary=summary, user=user, kind=ReviewMessage.Kind.REPLY, text=text)
        notifications.review_reply(summary=summary, message=message)
    return message


def may_review(user: gate.Actor) -> bool:
    """Whether `user` can be asked to review: an active user who may publish."""
    return user is not None and gate.may_publish(user)  # a person, not the system


def reviewer_choices() -> QuerySet[User]:
    """The users a summary can be assigned to, by name."""
    users = get_user_model().objects.with_perm(gate.PUBLISH, is_active=True)
    return users.filter(is_staff=True).order_by("username")


def assign_reviewer(*, summary: Summary, reviewer: User | None, user: gate.Actor) -> Summary:
    """Ask `reviewer` (None: nobody in particular) to review the summary and its changes.

    Set on the summary itself (a working copy's summary), without touching its lock
    version: assigning is not an edit, and must not turn someone's save into a conflict.
    Recorded in the conversation as a note. Returns the summary. Raises ValidationError
    when `reviewer` may not publish, PermissionDenied when `user` may not change summaries.
    """
    if not _may_take_part(user):
        raise PermissionDenied("You do not have permission to assign reviewers.")
    if reviewer is not None and not may_review(reviewer):
        raise ValidationError(
            {"assigned_to": f"{reviewer.get_username()} may not publish, so cannot review."}
        )
    summary = original(summary)
    if summary.assigned_to_id == getattr(reviewer, "pk", None):
        return summary
    Summary.objects.filter(pk=summary.pk).update(assigned_to=reviewer)
    summary.assigned_to = reviewer
    who = reviewer.get_full_name() or reviewer.get_username() if reviewer else None
    record(
        summary=summary,
        user=user,
        kind=ReviewMessage.Kind.NOTE,
        text=f"Asked {who} to review." if who else "No reviewer in particular.",
    )
    return summary
