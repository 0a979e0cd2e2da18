"""Sending deliveries: one signed attempt per call, retries with backoff, the log, the sweeper.

No attempt twice: an attempt first claims its delivery (pending → sending, one UPDATE that
commits before anything is sent), and only the claim's winner sends. A second message for
the same delivery (a redelivered task after a worker was killed, a duplicate queued by the
sweeper) finds it claimed, sent or finished and sends nothing. A delivery whose worker died
mid-request stays "sending" and is marked "interrupted" by the sweeper, never sent again:
the receiver may have had it, and a second attempt is not. An attempt that timed out is
followed by another after the backoff (the receiver may have taken the first, and may not
have): both carry the same webhook-id, by which receivers drop duplicates.
"""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.linkcheck import allow_list
from summaries.linkcheck.deliver import PostResult, post
from summaries.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

from . import events
from .signing import signed_headers

logger = logging.getLogger(__name__)

State = WebhookDelivery.State
# Pending deliveries this late are queued again by the sweeper (their message was lost:
# the broker was down when the event was saved, or a retry's message went missing).
LOST_AFTER = timedelta(minutes=2)
SWEEP_BATCH = 500
ERROR_CHARS = 500


def deliver(*, delivery_id: int, now: datetime | None = None) -> float | None:
    """Make one attempt at a delivery if it is due and nobody else is making it.

    Returns the seconds to wait before the next attempt when this one failed and may be
    tried again (the delivery is pending again), else None.
    """
    now = now or timezone.now()
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id, state=State.PENDING, next_attempt_at__lte=now
    ).update(state=State.SENDING, claimed_at=now, attempts=F("attempts") + 1)
    if not claimed:
        return None  # sent, being sent, finished, not due yet, or deleted
    delivery = WebhookDelivery.objects.select_related("event", "endpoint").get(pk=delivery_id)
    endpoint = delivery.endpoint
    if not endpoint.is_active:
        _finish(delivery, State.FAILED, error="The endpoint is disabled.", now=now)
        return None
    body = delivery.event.body.encode()
    headers = signed_headers(
        endpoint.signing_secrets(now), event_id=str(delivery.event_id), timestamp=now, body=body
    )
    result = post(
        endpoint.url,
        body,
        headers=headers,
        allowed_networks=allow_list(
            settings.WEBHOOK_ALLOWED_NETWORKS, public=settings.FETCH_PUBLIC
        ),
        deadline=float(settings.WEBHOOK_DEADLINE),
        user_agent="curation-webhooks/1.0",
    )
    return record_attempt(delivery, result, now=timezone.now())


def queue_at(task_name: str, *args, eta: datetime) -> None:
    """Send the task `task_name` with `args` to run at `eta`, when the current transaction
    commits (a broker that is down is logged, not raised, like queue_after_commit)."""
    task = current_app.tasks[task_name]

    def send() -> None:
        task.apply_async(args=args, eta=eta)

    send.__qualname__ = f"{task_name}.apply_async"
    send.task, send.args, send.eta = task, args, eta
    transaction.on_commit(send, robust=True)


def record_attempt(delivery: WebhookDelivery, result: PostResult, *, now: datetime):
    """Write what an attempt got; returns the wait before the next one, or None."""
    delivery.log = [*delivery.log, _log_entry(result, now)]
    delivery.status_code = result.status
    delivery.response_ms = result.response_ms
    delivery.error = _error_text(result)
    if result.delivered:
        _finish(delivery, State.DELIVERED, now=now)
        WebhookEndpoint.objects.filter(pk=delivery.endpoint_id, failures_in_a_row__gt=0).update(
            failures_in_a_row=0
        )
        return None
    if result.worth_retrying and delivery.attempts < settings.WEBHOOK_MAX_ATTEMPTS:
        wait = retry_delay(delivery.attempts)
        delivery.state = State.PENDING
        delivery.next_attempt_at = now + timedelta(seconds=wait)
        delivery.save(update_fields=_RECORDED + ["next_attempt_at"])
        return wait
    _finish(delivery, State.FAILED, now=now, error=delivery.error)
    _count_failure(delivery.endpoint_id, delivery.error, now=now)
    return None


_RECORDED = ["state", "status_code", "response_ms", "error", "log"]


def retry_delay(attempts: int, *, rng=random.random) -> float:
    """Seconds before attempt `attempts + 1`: doubling from WEBHOOK_RETRY_DELAY, capped,
    between half and all of it (jitter spreads the retries of many deliveries)."""
    base = float(settings.WEBHOOK_RETRY_DELAY) * 2 ** (attempts - 1)
    capped = min(base, float(settings.WEBHOOK_MAX_RETRY_DELAY))
    return capped * (0.5 + rng() / 2)


def _finish(delivery: WebhookDelivery, state: str, *, now: datetime, error: str = "") -> None:
    delivery.state = state
    delivery.error = error[:ERROR_CHARS]
    delivery.next_attempt_at = None
    if state == State.DELIVERED:
        delivery.delivered_at = now
    delivery.save(update_fields=_RECORDED + ["next_attempt_at", "delivered_at"])


def _count_failure(endpoint_id: int, error: str, *, now: datetime) -> None:
    """One more delivery failed for good; disable the endpoint after too many in a row."""
    with transaction.atomic():
        WebhookEndpoint.objects.filter(pk=endpoint_id).update(
            failures_in_a_row=F("failures_in_a_row") + 1
        )
        limit = settings.WEBHOOK_DISABLE_AFTER
        disabled = WebhookEndpoint.objects.filter(
            pk=endpoint_id, is_active=True, failures_in_a_row__gte=limit
        ).update(
            is_active=False,
            disabled_at=now,
            disabled_reason=f"{limit} deliveries in a row failed; the last: {error}"[:300],
        )
    if disabled:
        logger.warning("webhook endpoint %s disabled after %d failures", endpoint_id, limit)


def _log_entry(result: PostResult, now: datetime) -> dict:
    return {
        "at": now.isoformat(),
        "status_code": result.status,
        "error": _error_text(result),
        "response_ms": result.response_ms,
        "response": result.response_excerpt[:200],
    }


def _error_text(result: PostResult) -> str:
    if result.delivered:
        return ""
    if result.status is not None:
        return f"HTTP {result.status}"
    return f"{result.error_class}: {result.error}"[:ERROR_CHARS]


# --- The sweeper (celery beat) -----------------------------------------------------------


def sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Keep deliveries moving: tell of scheduled summaries that went live, queue the
    announcement of those going live before the sweep after next for their exact time,
    queue pending deliveries whose message was lost, mark deliveries whose worker died
    "interrupted", and drop events older than WEBHOOK_KEEP_DAYS. Idempotent.

    A sweep only every WEBHOOK_SWEEP_EVERY seconds would tell of a publication up to a
    whole period late (and later when a sweep's message expires behind busy workers): the
    announcement queued ahead, with the publish time as its ETA, tells of it as it goes
    live. Two periods ahead, so that one lost sweep loses no announcement.
    """
    now = now or timezone.now()
    announced = events.announce_due_publications(now=now)
    ahead = timedelta(seconds=2 * settings.WEBHOOK_SWEEP_EVERY)
    upcoming = events.upcoming_publications(now=now, within=ahead)
    for summary_id, publish_at in upcoming:
        queue_at(events.ANNOUNCE_TASK, summary_id, eta=publish_at)
    lost = list(
        WebhookDelivery.objects.filter(state=State.PENDING, next_attempt_at__lte=now - LOST_AFTER)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    for pk in lost:
        queue_after_commit(events.DELIVER_TASK, pk)
    # A claim outlives its attempt only when the worker died: an attempt ends by its deadline.
    dead_after = timedelta(seconds=float(settings.WEBHOOK_DEADLINE) + 60)
    interrupted = WebhookDelivery.objects.filter(
        state=State.SENDING, claimed_at__lt=now - dead_after
    ).update(
        state=State.INTERRUPTED,
        next_attempt_at=None,
        error="The worker was lost while sending; not sent again (it may have arrived).",
    )
    old = now - timedelta(days=settings.WEBHOOK_KEEP_DAYS)
    dropped, _ = WebhookEvent.objects.filter(created_at__lt=old).delete()
    return {
        "announced": announced,
        "upcoming": len(upcoming),
        "requeued": len(lost),
        "interrupted": interrupted,
        "dropped": dropped,
    }
