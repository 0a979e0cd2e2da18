"""Digests: who is due one, what goes in it, and sending it at most once per period.

A follow's digest holds the live summaries (published, publish time reached, not a working
copy) first published after its `digest_from` and up to the run's end, that match what it
follows. Drafts, working copies and scheduled summaries not yet live are never in one.

Periods: "as soon as published" follows are mailed on every run (FOLLOW_DIGEST_EVERY);
daily digests leave from FOLLOW_DIGEST_HOUR (UTC) each day, weekly ones from that hour on
Mondays, at the first run with something new in the period.

At most once: for each address and frequency, a run claims the period first, in one
transaction holding the address's row lock: it writes a `Digest` row for the period
(unique per address, frequency and period) and moves the follows' `digest_from` to the
run's end, then commits, and only then sends. A second or concurrent run finds the period
claimed, or nothing new since `digest_from`, and sends nothing. A worker lost between the
claim and the send loses that digest (it is never sent twice). When nothing was sent (the
mail server could not be reached, or refused with a 4xx), the claim is given back.
"""

from __future__ import annotations

import logging
import smtplib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from summaries.models import Digest, Subscriber, Subscription, Summary

from . import mail

logger = logging.getLogger(__name__)

Frequency = Subscription.Frequency
Kind = Subscription.Kind
# Summaries first published this recently wait for the next run: a publication whose
# transaction commits just after a run read the window would otherwise be missed.
SETTLE = timedelta(seconds=30)
# Candidate addresses are read in pages of this many ids (keyset pages, not one open
# cursor: the claims write between pages, and SQLite gives a connection's open cursor no
# isolation from its own writes).
PAGE = 1000
MAX_SUMMARIES = 50
ERROR_CHARS = 500


@dataclass
class Claimed:
    digest: Digest
    message: EmailMultiAlternatives
    # Each follow's digest_from before the claim, to give the claim back if nothing is sent.
    previous: dict[int, datetime | None] = field(default_factory=dict)


# --- When ----------------------------------------------------------------------------------


def is_due(frequency: str, now: datetime) -> bool:
    """Whether a run at `now` sends digests of this frequency."""
    if frequency == Frequency.IMMEDIATE:
        return True
    utc = now.astimezone(UTC)
    after_hour = utc.hour >= settings.FOLLOW_DIGEST_HOUR
    if frequency == Frequency.DAILY:
        return after_hour
    # A weekly digest not sent on Monday (the workers were down) leaves later in the week.
    return utc.isoweekday() > 1 or after_hour


def period_of(frequency: str, now: datetime) -> str:
    """The period a run at `now` sends for: the minute, the UTC day or the ISO week."""
    utc = now.astimezone(UTC)
    if frequency == Frequency.DAILY:
        return utc.strftime("%Y-%m-%d")
    if frequency == Frequency.WEEKLY:
        year, week, _ = utc.isocalendar()
        return f"{year}-W{week:02d}"
    return utc.strftime("%Y-%m-%dT%H:%M")


# --- What ----------------------------------------------------------------------------------


def new_summaries(*, since: datetime, end: datetime, now: datetime):
    """Live summaries first published in (since, end]."""
    return (
        Summary.objects.published(now)
        .originals()
        .filter(first_published_at__gt=since, first_published_at__lte=end)
    )


def _matches(follow: Subscription) -> Q:
    if follow.kind == Kind.CHANNEL:
        return Q(video__channel_id=follow.channel_id)
    if follow.kind == Kind.PERSON:
        return Q(video__people=follow.person_id)
    if follow.kind == Kind.TOPIC:
        return Q(video__topics=follow.topic_id)
    return Q()


def digest_summaries(follows: list[Subscription], *, end: datetime, now: datetime) -> list[Summary]:
    """What a digest of these follows holds: live summaries each follow has not had yet,
    oldest first (at most MAX_SUMMARIES)."""
    wanted = Q(pk__in=[])
    for follow in follows:
        if follow.digest_from is not None:
            wanted |= Q(first_published_at__gt=follow.digest_from) & _matches(follow)
    ids = (
        Summary.objects.published(now)
        .originals()
        .filter(wanted, first_published_at__lte=end)
        .values("pk")
    )
    return list(
        Summary.objects.filter(pk__in=ids)
        .select_related("video", "video__channel")
        .order_by("first_published_at", "pk")[:MAX_SUMMARIES]
    )


def candidates(*, frequency: str, period: str, end: datetime, now: datetime):
    """Ids of addresses that may be due a digest of this frequency in this period, in
    pages: they have a follow matching a summary new since its digest_from, and the
    period is not claimed yet. Each is checked again under its lock when claimed."""
    follows = Subscription.objects.active().filter(frequency=frequency, digest_from__isnull=False)
    oldest = follows.order_by("digest_from").values_list("digest_from", flat=True).first()
    if oldest is None:
        return
    fresh = new_summaries(since=oldest, end=end, now=now)
    rows = list(fresh.values_list("video__channel_id", "video__people", "video__topics"))
    if not rows:
        return
    channels, people, topics = ({row[i] for row in rows} - {None} for i in range(3))
    newest = fresh.order_by("-first_published_at").values_list("first_published_at", flat=True)[0]
    matching = follows.filter(
        Q(kind=Kind.ALL)
        | Q(channel_id__in=channels)
        | Q(person_id__in=people)
        | Q(topic_id__in=topics),
        digest_from__lt=newest,
    ).exclude(
        Exists(
            Digest.objects.filter(
                subscriber=OuterRef("subscriber_id"), frequency=frequency, period=period
            )
        )
    )
    after = 0
    while True:
        page = list(
            matching.filter(subscriber_id__gt=after)
            .order_by("subscriber_id")
            .values_list("subscriber_id", flat=True)
            .distinct()[:PAGE]
        )
        yield from page
        if len(page) < PAGE:
            return
        after = page[-1]


# --- Claim and send -------------------------------------------------------------------------


def claim(
    *, subscriber_id: int, frequency: str, period: str, end: datetime, now: datetime
) -> Claimed | None:
    """Claim this period's digest of the address and build it; None when it is claimed
    already, the address bounced, or nothing is new (nothing is written then)."""
    with transaction.atomic():
        subscriber = (
            Subscriber.objects.select_for_update()
            .filter(pk=subscriber_id, bounced_at__isnull=True)
            .first()
        )
        if subscriber is None:
            return None
        if Digest.objects.filter(
            subscriber=subscriber, frequency=frequency, period=period
        ).exists():
            return None
        follows = list(
            subscriber.subscriptions.filter(
                state=Subscription.State.ACTIVE, frequency=frequency
            ).select_related("channel", "person", "topic")
        )
        summaries = digest_summaries(follows, end=end, now=now)
        if not summaries:
            return None
        digest = Digest.objects.create(
            subscriber=subscriber,
            frequency=frequency,
            period=period,
            summary_ids=[summary.pk for summary in summaries],
            created_at=now,
        )
        previous = {follow.pk: follow.digest_from for follow in follows}
        Subscription.objects.filter(pk__in=previous).update(digest_from=end)
    return Claimed(digest, mail.digest_message(subscriber, follows, summaries), previous)


def give_back(claimed: Claimed, *, end: datetime) -> None:
    """Nothing was sent: drop the claim and let the follows' window start where it did."""
    with transaction.atomic():
        claimed.digest.delete()
        for pk, digest_from in claimed.previous.items():
            Subscription.objects.filter(pk=pk, digest_from=end).update(digest_from=digest_from)


def send_batch(batch: list[Claimed], *, end: datetime, now: datetime) -> int:
    """Send claimed digests over one SMTP connection; returns how many were sent.

    Could not connect: every claim is given back and TransientMailError raised (the task
    tries again). A message refused with a 4xx is given back; one refused for good is
    failed; trouble mid-conversation fails that one (it may have arrived) and gives back
    those not tried yet.
    """
    if not batch:
        return 0
    connection = get_connection(fail_silently=False)
    try:
        connection.open()
    except (OSError, smtplib.SMTPException) as exc:
        for claimed in batch:
            give_back(claimed, end=end)
        raise mail.TransientMailError(str(exc)) from exc
    sent = 0
    try:
        for index, claimed in enumerate(batch):
            try:
                connection.send_messages([claimed.message])
            except (smtplib.SMTPRecipientsRefused, smtplib.SMTPResponseException) as exc:
                if _temporary(exc):
                    give_back(claimed, end=end)
                else:
                    _finish(claimed.digest, Digest.State.FAILED, now=now, error=_describe(exc))
            except Exception as exc:
                logger.warning("digest %s may not have been sent: %s", claimed.digest.pk, exc)
                _finish(claimed.digest, Digest.State.FAILED, now=now, error=_describe(exc))
                for rest in batch[index + 1 :]:
                    give_back(rest, end=end)
                break
            else:
                _finish(claimed.digest, Digest.State.SENT, now=now)
                sent += 1
    finally:
        connection.close()
    return sent


def send_digests(*, now: datetime | None = None) -> dict[str, int]:
    """Send every digest due now, FOLLOW_DIGEST_BATCH messages per SMTP connection;
    returns how many were sent per frequency. Idempotent: run twice, nothing is sent twice."""
    now = now or timezone.now()
    end = now - SETTLE
    counts = {}
    for frequency in Frequency.values:
        if not is_due(frequency, now):
            continue
        period = period_of(frequency, now)
        sent, batch = 0, []
        for subscriber_id in candidates(frequency=frequency, period=period, end=end, now=now):
            claimed = claim(
                subscriber_id=subscriber_id, frequency=frequency, period=period, end=end, now=now
            )
            if claimed is not None:
                batch.append(claimed)
            if len(batch) >= settings.FOLLOW_DIGEST_BATCH:
                sent += send_batch(batch, end=end, now=now)
                batch = []
        sent += send_batch(batch, end=end, now=now)
        counts[frequency] = sent
    return counts


def _temporary(exc: Exception) -> bool:
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        return bool(codes) and all(400 <= code < 500 for code in codes)
    return isinstance(exc, smtplib.SMTPResponseException) and 400 <= exc.smtp_code < 500


def _finish(digest: Digest, state: str, *, now: datetime, error: str = "") -> None:
    digest.state = state
    digest.error = error[:ERROR_CHARS]
    digest.sent_at = now if state == Digest.State.SENT else None
    digest.save(update_fields=["state", "error", "sent_at"])


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
