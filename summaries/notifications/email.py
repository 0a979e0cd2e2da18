"""E-mailing notifications: at most once each, plain text, and the sweeper.

At most once: a send first claims its notification (e-mail state pending → sending, one
UPDATE that commits before anything is sent); only the claim's winner sends. A second run
of the task (a redelivered message after a worker was lost, one queued again by the
sweeper) finds it claimed, sent or finished and sends nothing. A notification whose worker
died between its claim and recording the send stays "sending" and the sweeper marks it
"interrupted": it may have been sent, so it is never sent again. The price is that a worker
lost after the claim but before the send loses that one e-mail (the inbox still has it).

Only trouble that shows nothing was sent is tried again: the mail server could not be
reached, or it refused the message with a temporary (4xx) reply.
"""

from __future__ import annotations

import logging
import smtplib
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.models import Notification, NotificationEvent, NotificationPreferences

from . import events

logger = logging.getLogger(__name__)

State = Notification.EmailState
# Pending e-mails this late are queued again by the sweeper (their message was lost: the
# broker was down at commit, or a retry's message went missing).
LOST_AFTER = timedelta(minutes=5)
SWEEP_BATCH = 500
ERROR_CHARS = 500


class TransientEmailError(Exception):
    """Nothing was sent and trying again later may work; the task retries it."""


def send_email(*, notification_id: int, now: datetime | None = None) -> str | None:
    """E-mail one notification to its recipient if nobody has yet; returns the e-mail
    state it was left in, or None when it was not this call's to send.

    Skipped (not sent) when the recipient has no address, is inactive or turned the kind
    off since. Raises TransientEmailError, with the notification pending again, when the
    mail server could not be reached or answered 4xx and attempts remain
    (NOTIFICATION_EMAIL_MAX_ATTEMPTS); failed after the last one.
    """
    now = now or timezone.now()
    claimed = Notification.objects.filter(pk=notification_id, email_state=State.PENDING).update(
        email_state=State.SENDING,
        email_claimed_at=now,
        email_attempts=F("email_attempts") + 1,
    )
    if not claimed:
        return None  # sent, being sent, finished, or deleted
    notification = Notification.objects.select_related("event", "recipient").get(pk=notification_id)
    user = notification.recipient
    if not (user.is_active and user.email and _wants(user, notification.event.kind)):
        return _finish(notification, State.SKIPPED, now=now)
    message = build_message(notification)
    connection = get_connection(fail_silently=False)
    try:
        connection.open()
    except (OSError, smtplib.SMTPException) as exc:  # not connected: nothing was sent
        return _not_sent(notification, exc, now=now)
    try:
        connection.send_messages([message])
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        if codes and all(400 <= code < 500 for code in codes):
            return _not_sent(notification, exc, now=now)
        return _finish(notification, State.FAILED, now=now, error=_describe(exc))
    except smtplib.SMTPResponseException as exc:  # the server refused it: not delivered
        if 400 <= exc.smtp_code < 500:
            return _not_sent(notification, exc, now=now)
        return _finish(notification, State.FAILED, now=now, error=_describe(exc))
    except Exception as exc:
        # Lost mid-conversation: the server may have taken it, so it is not sent again.
        logger.warning("notification %s: e-mail may not have been sent: %s", notification.pk, exc)
        return _finish(notification, State.INTERRUPTED, now=now, error=_describe(exc))
    finally:
        connection.close()
    return _finish(notification, State.SENT, now=now)


def build_message(notification: Notification) -> EmailMessage:
    """The plain-text e-mail of a notification (no HTML part: the text editors typed in
    titles, notes and claims is shown as typed, never interpreted)."""
    event = notification.event
    lines = [event.body, ""]
    if event.link:
        lines.append(f"Open it: {settings.SITE_URL}{event.link}")
    lines += [
        f"Your inbox: {settings.SITE_URL}{reverse('admin:summaries_notification_changelist')}",
        "",
        "-- ",
        "You get this because of your notification settings; change them at "
        f"{settings.SITE_URL}{reverse('admin:summaries_notificationpreferences_changelist')}",
    ]
    return EmailMessage(
        subject=f"{settings.EMAIL_SUBJECT_PREFIX}{event.subject}",
        body="\n".join(lines),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[notification.recipient.email],
        headers={"Auto-Submitted": "auto-generated"},
    )


def _wants(user, kind: str) -> bool:
    preferences = NotificationPreferences.objects.filter(user=user).first()
    return preferences is None or preferences.wants(kind)


def _not_sent(notification: Notification, exc: Exception, *, now: datetime) -> str:
    """Nothing was sent: pending again for a retry, or failed after the last attempt."""
    error = _describe(exc)
    if notification.email_attempts >= settings.NOTIFICATION_EMAIL_MAX_ATTEMPTS:
        return _finish(notification, State.FAILED, now=now, error=error)
    notification.email_state = State.PENDING
    notification.email_error = error
    notification.save(update_fields=["email_state", "email_error"])
    raise TransientEmailError(error)


def _finish(notification: Notification, state: str, *, now: datetime, error: str = "") -> str:
    notification.email_state = state
    notification.email_error = error[:ERROR_CHARS]
    if state == State.SENT:
        notification.emailed_at = now
    notification.save(update_fields=["email_state", "email_error", "emailed_at"])
    return state


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]


# --- The sweeper (celery beat) -------------------------------------------------------------


def sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Keep notifications moving: tell of scheduled summaries that went live, queue
    e-mails whose message was lost, mark those whose worker died mid-send "interrupted",
    and drop events older than NOTIFICATION_KEEP_DAYS. Idempotent."""
    now = now or timezone.now()
    went_live = events.announce_went_live(now=now)
    lost = list(
        Notification.objects.filter(email_state=State.PENDING)
        .annotate(since=Coalesce("email_claimed_at", "created_at"))
        .filter(since__lt=now - LOST_AFTER)
        .order_by("since")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    for pk in lost:
        queue_after_commit(events.EMAIL_TASK, pk)
    # A claim outlives its send only when the worker died: a send ends by EMAIL_TIMEOUT.
    dead_after = timedelta(seconds=(settings.EMAIL_TIMEOUT or 60) + 60)
    interrupted = Notification.objects.filter(
        Q(email_claimed_at__lt=now - dead_after) | Q(email_claimed_at__isnull=True),
        email_state=State.SENDING,
    ).update(
        email_state=State.INTERRUPTED,
        email_error="The worker was lost while sending; not sent again (it may have arrived).",
    )
    old = now - timedelta(days=settings.NOTIFICATION_KEEP_DAYS)
    dropped, _ = NotificationEvent.objects.filter(created_at__lt=old).delete()
    return {
        "went_live": went_live,
        "requeued": len(lost),
        "interrupted": interrupted,
        "dropped": dropped,
    }
