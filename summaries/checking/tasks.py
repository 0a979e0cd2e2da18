"""Celery tasks of source checking: thin, they take ids and call one service.

Named as they were when they lived in summaries.tasks, so that messages already queued and
beat's schedule still find them.
"""

import logging
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_shutting_down
from django.conf import settings
from django.db import transaction

from summaries.background import background_task
from summaries.models import Source
from summaries.ops import logs, metrics

from . import dispatch, evidence, record, shutdown

logger = logging.getLogger(__name__)

# A check batch stops starting fetches CHECK_BATCH_MARGIN seconds plus one fetch deadline
# before its soft time limit, so the fetches in flight end (at their deadline) in time to be
# recorded. The claim lease (CHECK_CLAIM_SECONDS, 15 min), renewed as the batch starts,
# outlasts the hard limit, and the
# Redis broker's visibility timeout (1 h) outlasts the lease: a redelivered batch finds its
# sources recorded or claimed by a newer batch, and does nothing.
CHECK_SOFT_TIME_LIMIT = 150
CHECK_TIME_LIMIT = 180
CHECK_BATCH_MARGIN = 10
# Our own attempt counter: a batch that ran out of time is continued at most this often.
CHECK_MAX_ATTEMPTS = 5


@worker_shutting_down.connect
def _stop_check_batches(**kwargs: object) -> None:
    """SIGTERM (warm shutdown) reached the worker's main process: tell the running batch.

    Celery would otherwise wait for the whole batch, fetch after fetch, which can outlast
    an orchestrator's grace period; the SIGKILL that follows leaves the batch unacked
    until the broker's visibility timeout. The batch instead stops starting fetches and
    hands the rest back (see _check_batch), so the worker exits about one fetch deadline
    after the signal.
    """
    shutdown.request_stop()


def _time_budget() -> float:
    deadline: float = settings.FETCH_DEADLINE
    return max(1.0, CHECK_SOFT_TIME_LIMIT - deadline - CHECK_BATCH_MARGIN)


@background_task(
    name="summaries.tasks.check_source_batch",  # as queued before the move
    bind=True,
    soft_time_limit=CHECK_SOFT_TIME_LIMIT,
    time_limit=CHECK_TIME_LIMIT,
    retry_backoff_max=60,
)
def check_source_batch(
    self: Task[Any, Any], source_ids: list[int], token: str, attempt: int = 1
) -> None:
    """Check the sources claimed with `token` and record the results (idempotent).

    Sources already recorded, or no longer claimed by this batch, are skipped, so a late
    ack or a redelivery redoes nothing. Sources not started in time are continued by a new
    task (attempt + 1, same token, lease renewed); after CHECK_MAX_ATTEMPTS they are
    recorded as timeouts. When the worker is asked to shut down (SIGTERM) the batch starts
    no more fetches, records the ones in flight and hands the sources it did not start to
    a new task under the same attempt number (a shutdown is not their fault), then
    returns so that its message is acknowledged. A worker lost mid-batch loses at most
    the unrecorded results: the lease lapses and the sweeper claims those sources again.
    """
    with logs.bound(batch=token):
        _check_batch(source_ids, token, attempt)


def _check_batch(source_ids: list[int], token: str, attempt: int) -> None:
    logger.info("check batch %s started: %d sources, attempt %d", token, len(source_ids), attempt)
    outcome: record.BatchOutcome | None = None
    try:
        with metrics.CHECK_BATCH_SECONDS.time():
            finished = record.check_source_batch(
                source_ids=source_ids,
                token=token,
                time_budget=_time_budget(),
                stop_requested=shutdown.stop_requested,
            )
    except SoftTimeLimitExceeded:
        logger.warning("check batch %s hit its soft time limit (attempt %s)", token, attempt)
    else:
        outcome = finished
        logger.info(
            "check batch %s finished: %d recorded, %d skipped, %d left (attempt %d)",
            token,
            len(finished.recorded),
            len(finished.skipped),
            len(finished.remaining),
            attempt,
        )
    remaining = (
        outcome.remaining
        if outcome is not None
        else list(
            Source.objects.filter(pk__in=source_ids, check_token=token).values_list("pk", flat=True)
        )
    )
    if not remaining:
        return
    if outcome is not None and outcome.stopped:
        # Not an attempt: the sources did not run out of time. The shutting-down worker
        # may take the new task itself before it stops reading the broker (Celery's loop
        # drains it once more after the signal); it starts nothing and hands it back.
        logger.info(
            "check batch %s handed back %d sources: the worker is shutting down",
            token,
            len(remaining),
        )
        _continue_batch(remaining, token, attempt)
        return
    if attempt >= CHECK_MAX_ATTEMPTS:
        record.give_up_batch(
            source_ids=remaining, token=token, reason=f"not checked in {attempt} attempts"
        )
        return
    _continue_batch(remaining, token, attempt + 1)


def _continue_batch(source_ids: list[int], token: str, attempt: int) -> None:
    """Queue the sources still claimed with `token` as a new task, their lease renewed."""
    with transaction.atomic():
        dispatch.extend_claim(source_ids=source_ids, token=token)
        check_source_batch.delay_on_commit(source_ids, token, attempt)


@background_task(
    name="summaries.tasks.dispatch_source_checks",  # as in the beat schedule
    soft_time_limit=60,
)
def dispatch_source_checks() -> None:
    """Claim due sources in batches and queue a check task per batch (celery beat).

    Also the sweeper: sources whose batch was lost are due again once their claim lapses.
    A duplicate tick claims nothing twice.
    """
    dispatch.dispatch_due_checks()


@background_task(
    name="summaries.tasks.capture_cited_evidence",
    soft_time_limit=60,
)
def capture_cited_evidence(citation_id: int) -> None:
    """Keep the page of a confirmed citation as what it was cited on (idempotent)."""
    evidence.capture_cited_evidence(citation_id=citation_id)


@background_task(name="summaries.tasks.sweep_evidence", soft_time_limit=600)
def sweep_evidence() -> None:
    """Retention of the evidence vault (celery beat, daily)."""
    rows, records = evidence.sweep_evidence()
    logger.info("evidence sweep: %d rows and %d records deleted", rows, records)
