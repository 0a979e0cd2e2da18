"""The rules of an address's follows: sign up, confirm, unsubscribe, change how often, bounce.

Double opt-in: a sign-up makes a pending follow and queues one confirmation e-mail (none
when one went to the address within FOLLOW_CONFIRM_RESEND_AFTER); nothing else is ever
mailed to an address until it confirms. A sign-up answers the same whatever the address's
state, so callers cannot tell whether it already follows anything.
"""

from __future__ import annotations

import logging
import smtplib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.models import Channel, Person, Subscriber, Subscription, Topic

from . import mail

logger = logging.getLogger(__name__)

CONFIRMATION_TASK = "summaries.tasks.send_follow_confirmation"
Kind = Subscription.Kind
State = Subscription.State
TARGET_MODELS = {Kind.CHANNEL: Channel, Kind.PERSON: Person, Kind.TOPIC: Topic}


class AddressRefused(ValidationError):
    """An address mail is never sent to: at an IP literal or a name that is not public."""


REFUSED_ADDRESS = (
    "Enter an address at a public domain name (not an IP address or a local name such as "
    "localhost)."
)


def check_address(email: str) -> None:
    """Raise AddressRefused unless the address's domain is a public name: an IP literal
    (`a@[127.0.0.1]`), a single-label domain (`a@localhost`, `a@intranet`) or a name under
    .localhost (loopback, RFC 6761) would send mail to the mail relay's own network."""
    domain = email.rpartition("@")[2].strip().lower().removesuffix(".")
    if (
        not domain
        or domain.startswith("[")
        or "." not in domain
        or domain == "localhost"
        or domain.endswith(".localhost")
    ):
        raise AddressRefused(REFUSED_ADDRESS, code="local_address")


class UnknownTarget(Exception):
    """No channel, person or topic of that kind and slug."""


@dataclass(frozen=True)
class Target:
    kind: str
    channel: Channel | None = None
    person: Person | None = None
    topic: Topic | None = None

    @property
    def fields(self) -> dict:
        return {
            "kind": self.kind,
            "channel": self.channel,
            "person": self.person,
            "topic": self.topic,
        }


def find_target(*, kind: str, slug: str) -> Target:
    """The thing to follow: a channel, person or topic by slug, or everything ("all")."""
    if kind == Kind.ALL:
        return Target(kind=Kind.ALL)
    model = TARGET_MODELS.get(kind)  # type: ignore[call-overload]
    obj = model.objects.filter(slug=slug).first() if model is not None and slug else None
    if obj is None:
        raise UnknownTarget(kind)
    return Target(kind=kind, **{kind: obj})


def normalise_email(email: str) -> str:
    return email.strip().lower()


def request_subscription(
    *, email: str, target: Target, frequency: str, now: datetime | None = None
) -> None:
    """Ask for `email` to follow `target`: a pending follow until the address confirms.

    A follow already confirmed is left as it is (its frequency too: only the address's
    manage page changes it); a pending one takes the new frequency; an ended one is pending
    again. A confirmation is queued (after the commit) unless one was within
    FOLLOW_CONFIRM_RESEND_AFTER seconds. Returns nothing, whatever happened; raises
    AddressRefused, writing nothing, for an address `check_address` refuses.
    """
    now = now or timezone.now()
    email = normalise_email(email)
    check_address(email)
    with transaction.atomic():
        Subscriber.objects.get_or_create(email=email, defaults={"created_at": now})
        subscriber = Subscriber.objects.select_for_update().get(email=email)
        subscription = subscriber.subscriptions.filter(**target.fields).first()
        if subscription is None:
            subscription = Subscription(
                subscriber=subscriber, created_at=now, frequency=frequency, **target.fields
            )
        if subscription.state == State.ACTIVE and subscription.pk:
            return
        subscription.state = State.PENDING
        subscription.frequency = frequency
        subscription.ended_at = None
        subscription.save()
        _queue_confirmation(subscriber, now=now)


def _queue_confirmation(subscriber: Subscriber, *, now: datetime) -> None:
    resend_after = timedelta(seconds=settings.FOLLOW_CONFIRM_RESEND_AFTER)
    last = subscriber.confirmation_sent_at
    if last is not None and last > now - resend_after:
        return
    subscriber.confirmation_sent_at = now
    subscriber.confirmation_due = True
    subscriber.save(update_fields=["confirmation_sent_at", "confirmation_due"])
    queue_after_commit(CONFIRMATION_TASK, subscriber.pk)


def claim_confirmation(*, subscriber_id: int) -> bool:
    """Whether this call may send the address's queued confirmation (one caller only)."""
    return bool(
        Subscriber.objects.filter(pk=subscriber_id, confirmation_due=True).update(
            confirmation_due=False
        )
    )


def send_confirmation(*, subscriber_id: int) -> bool:
    """E-mail the address its queued confirmation, at most once (claimed first); returns
    whether it was sent. Nothing pending (confirmed or ended since): nothing is sent.
    Could not connect, or a 4xx: queued again and TransientMailError raised (the task
    retries)."""
    if not claim_confirmation(subscriber_id=subscriber_id):
        return False
    subscriber = Subscriber.objects.get(pk=subscriber_id)
    follows = list(pending(subscriber_id=subscriber_id))
    if not follows or subscriber.bounced_at is not None:
        return False
    message = mail.confirmation_message(subscriber, follows)
    try:
        message.send(fail_silently=False)
    except (OSError, smtplib.SMTPException) as exc:
        if _nothing_sent(exc):
            Subscriber.objects.filter(pk=subscriber_id).update(confirmation_due=True)
            raise mail.TransientMailError(str(exc)) from exc
        logger.warning("confirmation to subscriber %s not sent: %s", subscriber_id, exc)
        return False
    return True


def _nothing_sent(exc: Exception) -> bool:
    """Not connected, or refused for now (4xx): trying again may work."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return all(400 <= code < 500 for code, _ in exc.recipients.values())
    if isinstance(exc, smtplib.SMTPResponseException):
        return 400 <= exc.smtp_code < 500
    return isinstance(exc, (ConnectionError, smtplib.SMTPConnectError, TimeoutError))


def pending(*, subscriber_id: int):
    """The address's follows waiting for confirmation."""
    return Subscription.objects.filter(
        subscriber_id=subscriber_id, state=State.PENDING
    ).select_related("channel", "person", "topic")


def confirm(*, subscriber_id: int, now: datetime | None = None) -> int:
    """Confirm every pending follow of the address; returns how many. Digests of them
    hold summaries first published from now on. The address counts as working again."""
    now = now or timezone.now()
    with transaction.atomic():
        confirmed = Subscription.objects.filter(
            subscriber_id=subscriber_id, state=State.PENDING
        ).update(state=State.ACTIVE, confirmed_at=now, digest_from=now)
        if confirmed:
            Subscriber.objects.filter(pk=subscriber_id).update(bounced_at=None)
    return confirmed


def unsubscribe(
    *,
    subscriber_id: int,
    subscription_ids: list[int] | tuple[int, ...] | None = None,
    now: datetime | None = None,
) -> int:
    """End the address's follows (those listed, or all); returns how many ended."""
    follows = Subscription.objects.filter(subscriber_id=subscriber_id).exclude(state=State.ENDED)
    if subscription_ids is not None:
        follows = follows.filter(pk__in=subscription_ids)
    return follows.update(state=State.ENDED, ended_at=now or timezone.now())


def change_frequency(*, subscriber_id: int, subscription_id: int, frequency: str) -> bool:
    """Set how often one of the address's follows is mailed; False if it has no such
    follow (or it ended)."""
    if frequency not in Subscription.Frequency.values:
        return False
    return bool(
        Subscription.objects.filter(pk=subscription_id, subscriber_id=subscriber_id)
        .exclude(state=State.ENDED)
        .update(frequency=frequency)
    )


def record_bounce(*, email: str, now: datetime | None = None) -> int:
    """Mail to `email` bounced: end all its follows and mark it; returns how many follows
    ended (0 for an address nobody knows). Signing up and confirming again revives it."""
    now = now or timezone.now()
    with transaction.atomic():
        subscriber = (
            Subscriber.objects.select_for_update().filter(email=normalise_email(email)).first()
        )
        if subscriber is None:
            return 0
        subscriber.bounced_at = now
        subscriber.confirmation_due = False
        subscriber.save(update_fields=["bounced_at", "confirmation_due"])
        return unsubscribe(subscriber_id=subscriber.pk, now=now)


def follows_of(*, subscriber_id: int):
    """The address's follows not ended, for its manage page."""
    return (
        Subscription.objects.filter(subscriber_id=subscriber_id)
        .exclude(state=State.ENDED)
        .select_related("channel", "person", "topic")
        .order_by("kind", "id")
    )


def forget_unfollowed(*, now: datetime | None = None) -> int:
    """Delete the addresses that follow nothing any more: every follow ended (or never
    confirmed) more than FOLLOW_FORGET_AFTER seconds ago, and no sign-up or confirmation
    since. Their follows and digest records go with them. Returns how many were deleted.

    Kept that long so that a reader who unsubscribed by mistake can follow again from
    the same manage link, and so that bounces still stop mail to an address meanwhile.
    """
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.FOLLOW_FORGET_AFTER)
    recent = Q(state=State.ACTIVE) | Q(created_at__gte=cutoff) | Q(ended_at__gte=cutoff)
    still_wanted = Subscription.objects.filter(recent, subscriber=OuterRef("pk"))
    forgotten = (
        Subscriber.objects.filter(created_at__lt=cutoff)
        .exclude(confirmation_sent_at__gte=cutoff)
        .exclude(Exists(still_wanted))
    )
    with transaction.atomic():
        # Locked: a sign-up for one of these addresses waits, then finds it gone and
        # creates it again.
        ids = list(forgotten.select_for_update(skip_locked=True).values_list("pk", flat=True))
        _, per_model = Subscriber.objects.filter(pk__in=ids).delete()
    count = per_model.get(Subscriber._meta.label, 0)
    if count:
        logger.info("Forgot %d addresses that follow nothing", count)
    return count
