"""Digests: who is due one, what goes in it, and sending it at most once per period.

A follow's digest holds the live summaries (published, publish time reached, not a working
copy) first published after its `digest_from` (and within HORIZON) and up to the run's
end, that match what it follows. Drafts, working copies and scheduled summaries not yet
live are never in one. The run reads those summaries once, then the addresses in keyset
pages, FOLLOW_DIGEST_BATCH at a time, so its memory does not grow with the followers.

Periods: "as soon as published" follows are mailed on every run (FOLLOW_DIGEST_EVERY);
daily digests leave from FOLLOW_DIGEST_HOUR (UTC) each day, weekly ones from that hour on
Mondays, at the first run with something new in the period.

At most once: for each address and frequency, a run claims the period first, in one
transaction per batch holding the addresses' row locks: it writes a `Digest` row for the period
(unique per address, frequency and period) and moves the follows' `digest_from` to the
run's end, then commits, and only then sends. A second or concurrent run finds the period
claimed, or nothing new since `digest_from`, and sends nothing. A worker lost between the
claim and the send loses that digest (it is never sent twice). When nothing was sent (the
mail server could not be reached, or refused with a 4xx), the claim is given back.
"""

from __future__ import annotations

import logging
import smtplib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from summaries.models import Appearance, Digest, Subscriber, Subscription, Summary, Video

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
# Only summaries first published this recently are new: a follow whose window started
# longer ago (nothing it follows was published since) is not sent the whole catalogue.
HORIZON = timedelta(days=8)
KEEP_CLAIMS = timedelta(days=30)
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


@dataclass(frozen=True)
class Fresh:
    """A live summary new in this run's window, with what it can be followed by."""

    summary: Summary
    first_published_at: datetime
    channel_id: int
    people: frozenset[int]
    topics: frozenset[int]

    def wanted_by(self, follow: Subscription) -> bool:
        if follow.digest_from is None or self.first_published_at <= follow.digest_from:
            return False
        if follow.kind == Kind.CHANNEL:
            return follow.channel_id == self.channel_id
        if follow.kind == Kind.PERSON:
            return follow.person_id in self.people
        if follow.kind == Kind.TOPIC:
            return follow.topic_id in self.topics
        return True


def fresh_summaries(*, frequency: str, end: datetime, now: datetime) -> list[Fresh]:
    """Live summaries (published, publish time reached, not working copies) first
    published after the oldest window start of this frequency's follows, and at most
    HORIZON before `end`, up to `end`; oldest first."""
    oldest = (
        Subscription.objects.active()
        .filter(frequency=frequency, digest_from__isnull=False)
        .order_by("digest_from")
        .values_list("digest_from", flat=True)
        .first()
    )
    if oldest is None:
        return []
    since = max(oldest, end - HORIZON)
    summaries = list(
        Summary.objects.published(now)
        .originals()
        .filter(first_published_at__gt=since, first_published_at__lte=end)
        .select_related("video", "video__channel")
        .order_by("first_published_at", "pk")
    )
    videos = [summary.video_id for summary in summaries]
    people: dict[int, set[int]] = defaultdict(set)
    topics: dict[int, set[int]] = defaultdict(set)
    for video_id, person_id in Appearance.objects.filter(video_id__in=videos).values_list(
        "video_id", "person_id"
    ):
        people[video_id].add(person_id)
    video_topics = Video.topics.through.objects
    for video_id, topic_id in video_topics.filter(video_id__in=videos).values_list(
        "video_id", "topic_id"
    ):
        topics[video_id].add(topic_id)
    return [
        Fresh(
            summary,
            summary.first_published_at,
            summary.video.channel_id,
            frozenset(people[summary.video_id]),
            frozenset(topics[summary.video_id]),
        )
        for summary in summaries
    ]


def pick(follows: list[Subscription], fresh: list[Fresh]) -> list[Summary]:
    """What a digest of these follows holds: the fresh summaries one of them has not had
    yet, oldest first (at most MAX_SUMMARIES)."""
    wanted = [item.summary for item in fresh if any(item.wanted_by(f) for f in follows)]
    return wanted[:MAX_SUMMARIES]


def candidates(*, frequency: str, period: str, fresh: list[Fresh]):
    """Ids of addresses that may be due a digest of this frequency in this period, in
    pages: they have a follow matching a fresh summary newer than its digest_from, and
    the period is not claimed yet. Each is checked again under its lock when claimed."""
    if not fresh:
        return
    channels = {item.channel_id for item in fresh}
    people = set().union(*(item.people for item in fresh))
    topics = set().union(*(item.topics for item in fresh))
    newest = fresh[-1].first_published_at
    matching = (
        Subscription.objects.active()
        .filter(
            Q(kind=Kind.ALL)
            | Q(channel_id__in=channels)
            | Q(person_id__in=people)
            | Q(topic_id__in=topics),
            frequency=frequency,
            digest_from__lt=newest,
        )
        .exclude(
            Exists(
                Digest.objects.filter(
                    subscriber=OuterRef("subscriber_id"), frequency=frequency, period=period
                )
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


def claim_many(
    subscriber_ids: list[int],
    *,
    frequency: str,
    period: str,
    fresh: list[Fresh],
    end: datetime,
    now: datetime,
) -> list[Claimed]:
    """Claim this period's digest of each address and build it, in one transaction that
    locks the addresses (in id order, so runs never wait on each other in a circle).
    Skipped, with nothing written: an address whose period is claimed already, that
    bounced, or has nothing new."""
    made = []
    with transaction.atomic():
        subscribers = {
            subscriber.pk: subscriber
            for subscriber in Subscriber.objects.select_for_update()
            .filter(pk__in=subscriber_ids, bounced_at__isnull=True)
            .order_by("pk")
        }
        taken = set(
            Digest.objects.filter(
                subscriber_id__in=subscribers, frequency=frequency, period=period
            ).values_list("subscriber_id", flat=True)
        )
        follows = defaultdict(list)
        for follow in Subscription.objects.filter(
            subscriber_id__in=set(subscribers) - taken,
            state=Subscription.State.ACTIVE,
            frequency=frequency,
        ).select_related("channel", "person", "topic"):
            follows[follow.subscriber_id].append(follow)
        for subscriber_id, theirs in follows.items():
            summaries = pick(theirs, fresh)
            if summaries:
                made.append((subscribers[subscriber_id], theirs, summaries))
        rows = Digest.objects.bulk_create(
            Digest(
                subscriber=subscriber,
                frequency=frequency,
                period=period,
                summary_ids=[summary.pk for summary in summaries],
                created_at=now,
            )
            for subscriber, _, summaries in made
        )
        Subscription.objects.filter(
            pk__in=[follow.pk for _, theirs, _ in made for follow in theirs]
        ).update(digest_from=end)
    return [
        Claimed(
            digest,
            mail.digest_message(subscriber, theirs, summaries),
            {follow.pk: follow.digest_from for follow in theirs},
        )
        for digest, (subscriber, theirs, summaries) in zip(rows, made, strict=True)
    ]


def claim(
    *, subscriber_id: int, frequency: str, period: str, end: datetime, now: datetime
) -> Claimed | None:
    """Claim and build one address's digest (see claim_many); None when skipped."""
    fresh = fresh_summaries(frequency=frequency, end=end, now=now)
    claimed = claim_many(
        [subscriber_id], frequency=frequency, period=period, fresh=fresh, end=end, now=now
    )
    return claimed[0] if claimed else None


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
    delivered: list[int] = []
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
                delivered.append(claimed.digest.pk)
    finally:
        connection.close()
        Digest.objects.filter(pk__in=delivered).update(state=Digest.State.SENT, sent_at=now)
    return len(delivered)


def send_digests(*, now: datetime | None = None) -> dict[str, int]:
    """Send every digest due now, FOLLOW_DIGEST_BATCH messages per SMTP connection;
    returns how many were sent per frequency. Idempotent: run twice, nothing is sent twice."""
    now = now or timezone.now()
    end = now - SETTLE
    counts = {}
    for frequency in Frequency.values:
        if is_due(frequency, now):
            counts[frequency] = _send_frequency(frequency, period_of(frequency, now), end, now)
    # Claims of periods long past hold nothing a run still needs (a week is the longest).
    Digest.objects.filter(created_at__lt=now - KEEP_CLAIMS).delete()
    return counts


def _send_frequency(frequency: str, period: str, end: datetime, now: datetime) -> int:
    fresh = fresh_summaries(frequency=frequency, end=end, now=now)
    sent, ids = 0, []
    for subscriber_id in candidates(frequency=frequency, period=period, fresh=fresh):
        ids.append(subscriber_id)
        if len(ids) >= settings.FOLLOW_DIGEST_BATCH:
            sent += _claim_and_send(ids, frequency, period, fresh, end, now)
            ids = []
    return sent + _claim_and_send(ids, frequency, period, fresh, end, now)


def _claim_and_send(ids, frequency, period, fresh, end, now) -> int:
    if not ids:
        return 0
    claimed = claim_many(ids, frequency=frequency, period=period, fresh=fresh, end=end, now=now)
    return send_batch(claimed, end=end, now=now)


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
