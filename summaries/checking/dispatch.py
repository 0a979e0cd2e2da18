"""Which sources are checked when: claims with leases, the sweeper, checks asked for."""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.models import Citation, Source, Summary

logger = logging.getLogger(__name__)


def new_token() -> str:
    return uuid.uuid4().hex


def _claimable(now: datetime) -> Q:
    return Q(ignored=False) & (Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))


def lease() -> timedelta:
    """How long a claim holds its sources (CHECK_CLAIM_SECONDS) before the sweeper may
    hand them to another batch."""
    return timedelta(seconds=settings.CHECK_CLAIM_SECONDS)


def _due(now: datetime) -> Q:
    return Q(next_check_at__isnull=True) | Q(next_check_at__lte=now)


def claim_sources(
    *, queryset: QuerySet[Source], limit: int, now: datetime | None = None
) -> tuple[str, list[int]]:
    """Claim at most `limit` unclaimed, not ignored sources of `queryset` for one batch.

    Returns (token, ids); ids is empty when nothing was claimable. Candidates are read in
    due order (never-checked first) with `SELECT … FOR UPDATE SKIP LOCKED` where the
    database has it (a concurrent claimer skips them rather than waiting), then claimed with
    a conditional UPDATE that only takes rows still unclaimed, so that racing callers never
    share a source on any database (on SQLite, which has no row locks, too). Call inside a
    transaction to queue the batch on commit.
    """
    now = now or timezone.now()
    token = new_token()
    # Never-checked sources (no next_check_at) first, then the longest overdue.
    candidates = queryset.filter(_claimable(now)).order_by(
        F("next_check_at").asc(nulls_first=True), "id"
    )
    with transaction.atomic():
        if connection.features.has_select_for_update_skip_locked:
            candidates = candidates.select_for_update(skip_locked=True, of=("self",))
        ids = list(candidates.values_list("pk", flat=True)[:limit])
        if not ids:
            return token, []
        Source.objects.filter(_claimable(now), pk__in=ids).update(
            check_token=token, claimed_until=now + lease()
        )
        claimed = list(
            Source.objects.filter(pk__in=ids, check_token=token)
            .order_by("id")
            .values_list("pk", flat=True)
        )
    return token, claimed


def _queue(token: str, ids: list[int]) -> None:
    logger.info("check batch %s: %d sources claimed, queued on commit", token, len(ids))
    queue_after_commit("summaries.tasks.check_source_batch", ids, token)


def batch_size() -> int:
    size: int = settings.FETCH_BATCH_SIZE
    return size


def dispatch_due_checks(*, now: datetime | None = None, max_batches: int = 200) -> list[int]:
    """Claim due sources in batches and queue one check task per batch; the beat task.

    Due: not ignored, not claimed (or the claim lapsed: the sweeper case), and never checked
    or past `next_check_at`. Reads one batch of ids at a time from the (ignored,
    next_check_at) index, never every source. Returns the ids queued.
    """
    now = now or timezone.now()
    queued: list[int] = []
    for _ in range(max_batches):
        with transaction.atomic():
            token, ids = claim_sources(
                queryset=Source.objects.filter(_due(now)), limit=batch_size(), now=now
            )
            if ids:
                _queue(token, ids)
        queued += ids
        if len(ids) < batch_size():
            break
    return queued


sweep_sources = dispatch_due_checks  # the sweeper is the dispatcher: lapsed claims are due


@dataclass(frozen=True)
class NewSourceClaims:
    """Claims for sources about to be inserted: `tokens` holds the check_token of each new
    row, in order, and every row's claimed_until is `until`."""

    tokens: list[str]
    until: datetime


def claims_for_new_sources(count: int, *, now: datetime | None = None) -> NewSourceClaims:
    """Claims for `count` new sources, so that they are inserted already claimed, which
    spares the UPDATE that claiming them afterwards takes (a chapter may cite thousands).

    A new source is never checked, not ignored and claimed by no one: it is due, and
    `queue_checks_for_summary` would claim it. The rows take one token per batch_size()
    rows, in order; queue them with `queue_new_sources` in the same transaction.
    """
    now = now or timezone.now()
    tokens: list[str] = []
    for start in range(0, count, batch_size()):
        tokens += [new_token()] * min(batch_size(), count - start)
    return NewSourceClaims(tokens=tokens, until=now + lease())


def queue_new_sources(*, claims: NewSourceClaims, ids: Sequence[int | None]) -> list[int]:
    """Queue a check batch, on commit, of the sources inserted with `claims` (`ids` in the
    order of its tokens). Returns the ids queued.

    None stands for a row another save inserted first: it keeps that save's claim, and is
    claimed like any existing source (queue_checks_for_summary) when it is due.
    """
    batches: defaultdict[str, list[int]] = defaultdict(list)
    for token, pk in zip(claims.tokens, ids, strict=True):
        if pk is not None:
            batches[token].append(pk)
    for token, batch in batches.items():
        _queue(token, sorted(batch))
    return [pk for batch in batches.values() for pk in sorted(batch)]


@transaction.atomic
def queue_checks_for_summary(*, summary: Summary, now: datetime | None = None) -> list[int]:
    """After a summary was saved: queue checks of its sources that need one.

    A source is checked when it is due (never checked, or its interval passed) or when one
    of the summary's citations of it has a key phrase but no verdict yet; a source shared by
    many citations is checked once. Checks are queued when the transaction commits; if the
    broker is down then, the save still succeeds and the sweeper picks the sources up once
    their claim lapses. Returns the ids claimed.
    """
    now = now or timezone.now()
    new_phrase = Citation.objects.filter(
        source=OuterRef("pk"), summary=summary, verdict=Citation.Verdict.UNCHECKED
    ).exclude(key_phrase="")
    queryset = Source.objects.filter(citations__summary=summary).filter(
        _due(now) | Exists(new_phrase)
    )
    queryset = Source.objects.filter(pk__in=queryset.values("pk"))
    return _claim_and_queue(queryset, now)


def _claim_and_queue(queryset: QuerySet[Source], now: datetime) -> list[int]:
    claimed: list[int] = []
    while True:
        token, ids = claim_sources(queryset=queryset, limit=batch_size(), now=now)
        if ids:
            _queue(token, ids)
        claimed += ids
        if len(ids) < batch_size():
            return claimed


@transaction.atomic
def request_checks(*, sources: Iterable[Source], now: datetime | None = None) -> list[int]:
    """Check these sources now (admin "check now"), whether due or not.

    Ignored sources and sources already being checked are skipped. Returns the ids queued.
    """
    now = now or timezone.now()
    ids = [source.pk for source in sources]
    return _claim_and_queue(Source.objects.filter(pk__in=ids), now)


@transaction.atomic
def request_summary_checks(
    *, summary: Summary, user: User | None = None
) -> tuple[list[Source], list[int]]:
    """Queue a check of every source the summary cites, now rather than when due.

    Returns the sources and the ids actually queued: ignored sources and sources whose
    check is already under way are skipped (checking.request_checks). The checks are sent
    to the broker after the transaction commits.
    """
    sources = list(Source.objects.filter(citations__summary=summary).distinct())
    return sources, request_checks(sources=sources)


@transaction.atomic
def ignore_source(*, source: Source, ignored: bool = True) -> Source:
    """Stop (or resume) checking a source; an ignored source is never claimed."""
    source.ignored = ignored
    source.save(update_fields=["ignored", "updated_at"])
    return source


def extend_claim(*, source_ids: list[int], token: str, now: datetime | None = None) -> int:
    """Renew the lease of sources still claimed with `token`: when their batch starts
    (it may have waited in the queue for most of the lease) and when it is continued.

    Only the holder renews: a source the sweeper gave to another batch keeps that claim.
    """
    now = now or timezone.now()
    return Source.objects.filter(pk__in=source_ids, check_token=token).update(
        claimed_until=now + lease()
    )
