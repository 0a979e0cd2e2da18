"""Signing deliveries the Standard Webhooks way (https://www.standardwebhooks.com/).

Each request carries `webhook-id` (the event's id: the same on every attempt, for
receivers to drop duplicates), `webhook-timestamp` (Unix seconds of this attempt) and
`webhook-signature`: "v1," and the base64 HMAC-SHA256, keyed by the endpoint's secret
(base64 after "whsec_"), of "{id}.{timestamp}.{body}". While a rotated secret's overlap
lasts, the header holds two such signatures separated by a space, the new secret's first:
a receiver accepts the request if any one matches its secret (which Standard Webhooks
libraries do). Receivers refuse timestamps more than five minutes from their clock (the
replay window).
"""

from datetime import datetime

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

__all__ = ["REPLAY_WINDOW_SECONDS", "WebhookVerificationError", "signed_headers", "verify"]

REPLAY_WINDOW_SECONDS = 5 * 60  # what standardwebhooks' verify() allows either side


def signed_headers(
    secrets: str | list[str], *, event_id: str, timestamp: datetime, body: bytes
) -> dict:
    """The headers of one attempt, signed with each of `secrets` (one signature each)."""
    keys = [secrets] if isinstance(secrets, str) else secrets
    signatures = [
        Webhook(key).sign(msg_id=event_id, timestamp=timestamp, data=body) for key in keys
    ]
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": " ".join(signatures),
    }


def verify(secret: str, body: bytes, headers: dict) -> dict:
    """The body as JSON if its signature is right and recent; WebhookVerificationError if not."""
    return Webhook(secret).verify(body, headers)
