"""Background work. Tasks take ids, re-fetch, and call one service; they hold no rules."""

import logging

from celery import shared_task
from celery.contrib.django.task import DjangoTask
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction

from . import checking
from .editing import derived
from .models import Summary, Video
from .reader import related

logger = logging.getLogger(__name__)

# A check batch stops starting fetches CHECK_BATCH_MARGIN seconds plus one fetch deadline
# before its soft time limit, so the fetches in flight end (at their deadline) in time to be
# recorded. The claim lease (CHECK_CLAIM_SECONDS, 15 min) outlasts the hard limit, and the
# Redis broker's visibility timeout (1 h) outlasts the lease: a redelivered batch finds its
# sources recorded or claimed by a newer batch, and does nothing.
CHECK_SOFT_TIME_LIMIT = 150
CHECK_TIME_LIMIT = 180
CHECK_BATCH_MARGIN = 10
# Our own attempt counter: a batch that ran out of time is continued at most this often.
CHECK_MAX_ATTEMPTS = 5
# Only transient broker/database trouble is retried by Celery; a 404 is a result.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, ConnectionError)


class OnCommitTask(DjangoTask):
    """`delay_on_commit` that never breaks the save it follows.

    If the broker is down when the transaction commits, the error is logged (Django's robust
    on_commit) and the sweeper queues the work later: a save must still succeed.
    """

    def delay_on_commit(self, *args, **kwargs) -> None:
        def send() -> None:
            self.delay(*args, **kwargs)

        # Django names the callback when it logs a failure (a partial has no name).
        send.__qualname__ = f"{self.name}.delay"
        send.task, send.args = self, args
        transaction.on_commit(send, robust=True)


@shared_task(acks_late=True, ignore_result=True)
def rerender_summary(summary_id: int) -> None:
    """Re-render a summary's Markdown and rebuild its citations (idempotent)."""
    summary = Summary.objects.filter(pk=summary_id).first()
    if summary is None:
        return
    derived.rerender_summary(summary=summary)


def _time_budget() -> float:
    deadline = float(getattr(settings, "FETCH_DEADLINE", 10.0))
    return max(1.0, CHECK_SOFT_TIME_LIMIT - deadline - CHECK_BATCH_MARGIN)


@shared_task(
    base=OnCommitTask,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=CHECK_SOFT_TIME_LIMIT,
    time_limit=CHECK_TIME_LIMIT,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=3,
)
def check_source_batch(self, source_ids: list[int], token: str, attempt: int = 1) -> None:
    """Check the sources claimed with `token` and record the results (idempotent).

    Sources already recorded, or no longer claimed by this batch, are skipped, so a late
    ack or a redelivery redoes nothing. Sources not started in time are continued by a new
    task (attempt + 1, same token, lease renewed); after CHECK_MAX_ATTEMPTS they are
    recorded as timeouts. A worker lost mid-batch loses at most the unrecorded results:
    the lease lapses and the sweeper claims those sources again.
    """
    try:
        outcome = checking.check_source_batch(
            source_ids=source_ids, token=token, time_budget=_time_budget()
        )
    except SoftTimeLimitExceeded:
        logger.warning("check batch %s hit its soft time limit (attempt %s)", token, attempt)
        outcome = None
    remaining = (
        outcome.remaining
        if outcome is not None
        else list(
            checking.Source.objects.filter(pk__in=source_ids, check_token=token).values_list(
                "pk", flat=True
            )
        )
    )
    if not remaining:
        return
    if attempt >= CHECK_MAX_ATTEMPTS:
        checking.give_up_batch(
            source_ids=remaining, token=token, reason=f"not checked in {attempt} attempts"
        )
        return
    with transaction.atomic():
        checking.extend_claim(source_ids=remaining, token=token)
        check_source_batch.delay_on_commit(remaining, token, attempt + 1)


@shared_task(
    base=OnCommitTask,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=60,
    time_limit=90,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_jitter=True,
    max_retries=3,
)
def dispatch_source_checks() -> None:
    """Claim due sources in batches and queue a check task per batch (celery beat).

    Also the sweeper: sources whose batch was lost are due again once their claim lapses.
    A duplicate tick claims nothing twice.
    """
    checking.dispatch_due_checks()


# --- Related videos -----------------------------------------------------------------------


@shared_task(
    base=OnCommitTask,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=120,
    time_limit=150,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_jitter=True,
    max_retries=3,
)
def refresh_related_around(video_id: int) -> None:
    """Recompute the stored related videos of a video that went live or offline, and of
    its neighbours. Idempotent; a deleted video is skipped."""
    video = Video.objects.filter(pk=video_id).first()
    if video is None:
        return
    related.refresh_related_around(video=video)


@shared_task(
    base=OnCommitTask,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=240,
    time_limit=300,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_jitter=True,
    max_retries=3,
)
def refresh_stale_related() -> None:
    """Recompute a bounded batch of missing or old related lists (celery beat)."""
    related.refresh_stale_related(limit=settings.RELATED_REFRESH_BATCH)
