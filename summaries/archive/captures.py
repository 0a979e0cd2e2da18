"""Asking the web archive to capture cited pages, and following each capture to its end."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.linkcheck import archive as wayback
from summaries.models import ArchiveCapture, Citation, Source

from . import pace
from .options import archive, backoff, poll_seconds

logger = logging.getLogger(__name__)

ADVANCE_TASK = "summaries.tasks.advance_archive_capture"
State = ArchiveCapture.State
OPEN_STATES = (State.QUEUED, State.PENDING)
READABLE = (Source.State.OK, Source.State.REDIRECTED)


def request_captures(*, source_ids: Iterable[int], now: datetime | None = None) -> list[int]:
    """Queue a capture of each of these sources whose page a check just read with a claim
    found (a citation "supported"), unless one is in progress or was made within
    ARCHIVE_RECAPTURE_DAYS. Returns the ids of the captures queued (sent after commit).
    Does nothing when ARCHIVE_CAPTURE is off."""
    if not settings.ARCHIVE_CAPTURE:
        return []
    now = now or timezone.now()
    ids = set(source_ids)
    supported = set(
        Citation.objects.filter(
            source_id__in=ids,
            verdict=Citation.Verdict.SUPPORTED,
            source__state__in=READABLE,
            source__ignored=False,
        ).values_list("source_id", flat=True)
    )
    recent = now - timedelta(days=settings.ARCHIVE_RECAPTURE_DAYS)
    done = set(
        ArchiveCapture.objects.filter(source_id__in=supported)
        .filter(created_at__gte=recent)
        .values_list("source_id", flat=True)
    ) | set(
        ArchiveCapture.objects.filter(source_id__in=supported, state__in=OPEN_STATES).values_list(
            "source_id", flat=True
        )
    )
    queued = []
    for source_id in sorted(supported - done):
        try:
            with transaction.atomic():
                capture = ArchiveCapture.objects.create(source_id=source_id, created_at=now)
        except IntegrityError:  # another worker queued it meanwhile
            continue
        queue_after_commit(ADVANCE_TASK, capture.pk)
        queued.append(capture.pk)
    return queued


def advance_capture(*, capture_id: int, now: datetime | None = None) -> float | None:
    """Take a capture one step further; return the seconds after which to call again, or
    None when it is finished (or gone).

    A queued capture is sent when its turn comes (`pace`) unless its host opted out or its
    address is not public (then "skipped", nothing sent). A 429, 5xx or network failure
    pauses every capture for the archive's Retry-After and is tried again with back-off, up
    to ARCHIVE_MAX_ATTEMPTS; another refusal is "failed". A pending capture's status is
    asked every ARCHIVE_POLL_SECONDS, ARCHIVE_MAX_POLLS times at most ("timed_out" then).
    Each request is counted by a conditional update first, so two deliveries of the same
    task never send it twice.
    """
    capture = ArchiveCapture.objects.select_related("source").filter(pk=capture_id).first()
    if capture is None or capture.state not in OPEN_STATES:
        return None
    now = now or timezone.now()
    if capture.state == State.QUEUED:
        return _send(capture, now)
    return _poll(capture, now)


def _send(capture: ArchiveCapture, now: datetime) -> float | None:
    target = archive()
    reason = wayback.may_capture(
        capture.source.url, archive=target, opted_out=settings.ARCHIVE_OPT_OUT_HOSTS
    )
    if reason:
        _finish(capture, State.SKIPPED, now, error=reason)
        return None
    wait = pace.take_turn()
    if wait > 0:
        return wait
    if not _count(capture, "attempts", requested_at=now):
        return None
    answer = wayback.request_capture(capture.source.url, archive=target)
    attempts = capture.attempts + 1
    if answer.job_id:
        _update(capture, state=State.PENDING, job_id=answer.job_id[:200], error="")
        return poll_seconds()
    if answer.transient and attempts < settings.ARCHIVE_MAX_ATTEMPTS:
        if answer.retry_after:
            pace.pause(min(answer.retry_after, 3600.0))
        _update(capture, error=answer.error[:500])
        delay = max(answer.retry_after or 0.0, backoff(attempts))
        return delay * (1 + random.random() / 4)  # noqa: S311 - jitter, not a secret
    _finish(capture, State.FAILED, now, error=answer.error)
    return None


def _poll(capture: ArchiveCapture, now: datetime) -> float | None:
    if not _count(capture, "polls", requested_at=now):
        return None
    status = wayback.capture_status(capture.job_id, archive=archive())
    if status.status == "success":
        url = archive().snapshot_url(status.timestamp, status.original_url)
        _finish(capture, State.SUCCESS, now, snapshot_url=url, captured_at=status.captured_at())
        return None
    if status.status == "error":
        _finish(capture, State.FAILED, now, error=status.error)
        return None
    if capture.polls + 1 >= settings.ARCHIVE_MAX_POLLS:
        _finish(capture, State.TIMED_OUT, now, error="the archive did not finish in time")
        return None
    return poll_seconds()


def _count(capture: ArchiveCapture, counter: str, **fields) -> bool:
    """Count one more request on the capture, if nobody counted it meanwhile."""
    seen = getattr(capture, counter)
    updated = ArchiveCapture.objects.filter(
        pk=capture.pk, state=capture.state, **{counter: seen}
    ).update(**{counter: F(counter) + 1}, **fields)
    return updated == 1


def _update(capture: ArchiveCapture, **fields) -> None:
    ArchiveCapture.objects.filter(pk=capture.pk, state__in=OPEN_STATES).update(**fields)


def _finish(capture: ArchiveCapture, state: str, now: datetime, **fields) -> None:
    if "error" in fields:
        fields["error"] = str(fields["error"])[:500]
    _update(capture, state=state, finished_at=now, **fields)
    logger.info("archive capture %s of %s: %s", capture.pk, capture.source.url, state)


def open_captures(*, idle_for: timedelta, now: datetime | None = None) -> list[int]:
    """Captures still queued or pending that nobody advanced for `idle_for` (their task was
    lost): the sweeper queues them again."""
    now = now or timezone.now()
    stale = now - idle_for
    return list(
        ArchiveCapture.objects.filter(state__in=OPEN_STATES, created_at__lt=stale)
        .exclude(requested_at__gte=stale)
        .values_list("pk", flat=True)[:500]
    )
