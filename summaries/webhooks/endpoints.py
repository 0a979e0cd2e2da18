"""What owners do to their endpoints besides editing them: send a test event, send a
delivery again, rotate the signing secret. Each goes through the normal signed delivery
path (a delivery row, the deliver task queued after commit)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.models import WebhookDelivery, WebhookEndpoint, WebhookEventType
from summaries.models.webhooks import new_webhook_secret

from . import events

State = WebhookDelivery.State
# Deliveries that may be sent again: finished ones. A pending or sending one is on its way.
REDELIVERABLE = (State.DELIVERED, State.FAILED, State.INTERRUPTED)


def _check_active(endpoint: WebhookEndpoint) -> None:
    if not endpoint.is_active:
        raise ValidationError(
            "The endpoint is turned off: turn it on to send it anything.", code="inactive"
        )


@transaction.atomic
def send_test_event(*, endpoint: WebhookEndpoint, now: datetime | None = None) -> WebhookDelivery:
    """Send the endpoint a "ping" event, whatever events it subscribes to: an event and
    its one delivery are written, and the delivery is queued after commit, signed and
    retried like any other. Raises ValidationError when the endpoint is turned off."""
    _check_active(endpoint)
    event = events.emit(
        WebhookEventType.PING, events.ping_data(endpoint), now=now, endpoints=[endpoint]
    )
    return event.deliveries.get()


@transaction.atomic
def redeliver(*, delivery: WebhookDelivery, now: datetime | None = None) -> bool:
    """Send a finished delivery (delivered, failed or interrupted) again: a new round of
    up to WEBHOOK_MAX_ATTEMPTS attempts of the same body under the same `webhook-id`
    (receivers may drop it as a duplicate), signed anew at each attempt. Its log keeps the
    earlier attempts; `attempts` counts the new round. Queued after commit.

    Returns False, changing nothing, when the delivery is still pending or being sent.
    Raises ValidationError when its endpoint is turned off.
    """
    now = now or timezone.now()
    _check_active(delivery.endpoint)
    again = WebhookDelivery.objects.filter(pk=delivery.pk, state__in=REDELIVERABLE).update(
        state=State.PENDING,
        attempts=0,
        next_attempt_at=now,
        claimed_at=None,
        delivered_at=None,
        error="",
    )
    if again:
        queue_after_commit(events.DELIVER_TASK, delivery.pk)
    return bool(again)


@transaction.atomic
def rotate_secret(*, endpoint: WebhookEndpoint, now: datetime | None = None) -> WebhookEndpoint:
    """Give the endpoint a new signing secret and return it (saved).

    The replaced secret keeps signing every delivery, beside the new one, for
    WEBHOOK_SECRET_OVERLAP seconds, so that the receiver can switch without refusing a
    delivery; after that only the new one signs. Rotating again within the overlap drops
    the oldest secret at once (two at most).
    """
    now = now or timezone.now()
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    overlap = int(settings.WEBHOOK_SECRET_OVERLAP)
    if overlap > 0:
        endpoint.previous_secret = endpoint.secret
        endpoint.previous_secret_expires_at = now + timedelta(seconds=overlap)
    else:
        endpoint.previous_secret, endpoint.previous_secret_expires_at = "", None
    endpoint.secret = new_webhook_secret()
    endpoint.save(
        update_fields=["secret", "previous_secret", "previous_secret_expires_at", "updated_at"]
    )
    return endpoint
