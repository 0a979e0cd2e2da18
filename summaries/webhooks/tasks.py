"""The webhook tasks: thin, by id, each calling one service (summaries.tasks imports them)."""

from django.conf import settings

from summaries.background import background_task


@background_task(
    name="summaries.tasks.deliver_webhook",
    bind=True,
    soft_time_limit=int(settings.WEBHOOK_DEADLINE) + 30,
)
def deliver_webhook(self, delivery_id: int) -> None:
    """One attempt at a delivery (nothing when it is not due or someone else has it); a
    failure worth retrying is tried again after the service's backoff."""
    from . import delivery

    wait = delivery.deliver(delivery_id=delivery_id)
    if wait is not None:
        # The service counts attempts (WEBHOOK_MAX_ATTEMPTS); this bound only backs it up.
        raise self.retry(countdown=wait, max_retries=settings.WEBHOOK_MAX_ATTEMPTS)


@background_task(name="summaries.tasks.sweep_webhooks", soft_time_limit=120)
def sweep_webhooks() -> None:
    """Tell of scheduled summaries gone live, requeue lost deliveries, mark interrupted
    ones, drop old events (celery beat, every minute). Idempotent."""
    from . import delivery

    delivery.sweep()


@background_task(name="summaries.tasks.announce_publication", bind=True, soft_time_limit=60)
def announce_publication(self, summary_id: int) -> None:
    """Tell of a scheduled summary as it goes live (queued by the sweeper with its publish
    time as ETA); nothing when it is not live or was told of already. Run a moment early
    (timers are not exact), it tries again when the summary goes live."""
    from . import events

    wait = events.announce_publication(summary_id=summary_id)
    if wait is not None:
        raise self.retry(countdown=wait, max_retries=3)
