"""Webhooks: endpoints clients register, the events we tell them about, and each delivery.

An event is written in the same transaction as the change it reports (an outbox), with one
delivery row per subscribed endpoint, so a change that commits is never left untold and a
change that rolls back is never told. A delivery is claimed (state "sending") before its
request is sent: a worker killed mid-request leaves it "sending" and it is never sent again,
then marked "interrupted" by the sweeper. The one repeat is after an attempt that timed out
(the receiver may have taken it): the next attempt carries the same webhook-id, so the
receiver can drop the duplicate.
"""

import base64
import json
import secrets
import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Exists, OuterRef

from summaries.linkcheck import Blocked, default_resolver, parse_networks, parse_target
from summaries.linkcheck.transport import NetError, vetted_addresses

from .base import TimestampedModel


class WebhookEventType(models.TextChoices):
    SUMMARY_PUBLISHED = "summary.published", "A summary went live"
    SUMMARY_UPDATED = "summary.updated", "A live summary's changes went live"
    SUMMARY_UNPUBLISHED = "summary.unpublished", "A live summary was taken down"
    SUMMARY_CORRECTED = (
        "summary.corrected",
        "A live summary was corrected (or a correction withdrawn)",
    )
    SOURCE_STATE_CHANGED = "source.state_changed", "A cited source changed state"
    CITATION_VERDICT_CHANGED = "citation.verdict_changed", "A citation's claim verdict changed"
    PIN_STATUS_CHANGED = "pin.status_changed", "A live statement's pin changed status"
    CITATION_ARCHIVED_COPY_CHANGED = (
        "citation.archived_copy_changed",
        "A citation's archived copy was shown or withdrawn",
    )
    # Sent to one endpoint when its owner asks for a test; never subscribed to.
    PING = "ping", "A test event (sent on request)"


# What an endpoint may subscribe to: every type but the test event.
SUBSCRIBABLE_EVENT_TYPES = [c for c in WebhookEventType.choices if c[0] != WebhookEventType.PING]
MANAGE_ALL_ENDPOINTS = "summaries.manage_all_webhookendpoints"


def new_webhook_secret() -> str:
    """A Standard Webhooks secret: "whsec_" and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


# Names that mean this machine, or the cloud's metadata service, whatever the resolver of
# the web machine says (it may know none of them; the worker that delivers may).
LOOPBACK = ("127.0.0.1", "::1")
CLOUD_METADATA = ("169.254.169.254", "fd00:ec2::254")
CLOUD_METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
# Names only a local network resolves (besides single labels, which a resolver completes
# with its own search domains).
LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".lan")
# Seconds a registration waits for DNS; a name that does not resolve in time is checked at
# every delivery anyway.
REGISTRATION_DNS_TIMEOUT = 2.0


def _is_local_name(host: str) -> bool:
    return "." not in host or host == "localhost" or host.endswith(LOCAL_SUFFIXES)


def _registration_resolver(host: str) -> list[str]:
    if host == "localhost" or host.endswith(".localhost"):
        return list(LOOPBACK)  # RFC 6761: always loopback
    if host in CLOUD_METADATA_NAMES:
        return list(CLOUD_METADATA)
    return default_resolver(host)


def validate_webhook_url(url: str) -> None:
    """Refuse what deliveries could never be sent to, by the rules every delivery follows
    (summaries.linkcheck.deliver): other schemes, credentials in the URL, odd ports, and
    internal addresses (unless WEBHOOK_ALLOWED_NETWORKS opens them), a name's included:
    it is resolved and each of its addresses vetted. `localhost` and cloud metadata names
    count as the addresses they mean wherever they are resolved; a local name (one label,
    .internal, .local, ...) that does not resolve here is refused; a public one that does
    not resolve (yet) is accepted. Every delivery resolves and vets the name again."""
    networks = parse_networks(settings.WEBHOOK_ALLOWED_NETWORKS)
    try:
        target = parse_target(url)
        try:
            vetted_addresses(
                target,
                resolver=_registration_resolver,
                allowed_networks=networks,
                timeout=REGISTRATION_DNS_TIMEOUT,
            )
        except NetError:
            if _is_local_name(target.host):
                raise Blocked(f"{target.host} is a local name, not a public one") from None
    except Blocked as blocked:
        raise ValidationError(
            f"Deliveries cannot be sent to this URL: {blocked.reason}.", code="blocked"
        ) from None


def validate_event_types(events) -> None:
    known = {value for value, _ in SUBSCRIBABLE_EVENT_TYPES}
    if not isinstance(events, list) or not events:
        raise ValidationError("Choose at least one event type.", code="required")
    unknown = [e for e in events if not isinstance(e, str) or e not in known]
    if unknown:
        raise ValidationError(
            "Unknown event types: %(unknown)s. Known: %(known)s.",
            code="invalid",
            params={"unknown": ", ".join(map(str, unknown)), "known": ", ".join(sorted(known))},
        )
    if len(set(events)) != len(events):
        raise ValidationError("An event type is listed twice.", code="invalid")


def manages_all_endpoints(user) -> bool:
    """Whether `user` reaches every endpoint, whoever owns it (superusers do)."""
    return bool(user and user.is_authenticated and user.is_active) and user.has_perm(
        MANAGE_ALL_ENDPOINTS
    )


class WebhookEndpointQuerySet(models.QuerySet):
    def visible_to(self, user):
        """The endpoints `user` may reach (read; change and delete with the model
        permissions): their own, or every one with "manage all webhook endpoints". An
        endpoint with no owner is reached only that way."""
        if manages_all_endpoints(user):
            return self
        if not (user and user.is_authenticated and user.is_active):
            return self.none()
        return self.filter(owner=user)


class WebhookEndpoint(TimestampedModel):
    url = models.URLField(
        "URL",
        max_length=2000,
        validators=[validate_webhook_url],
        help_text="Where deliveries are POSTed (https, a public address).",
    )
    description = models.CharField(max_length=200, blank=True)
    events = models.JSONField(
        default=list,
        validators=[validate_event_types],
        help_text="The event types sent to this endpoint (a list of names).",
    )
    secret = models.CharField(
        max_length=100,
        default=new_webhook_secret,
        editable=False,
        help_text="Signs every delivery (Standard Webhooks, HMAC-SHA256).",
    )
    # After a rotation the replaced secret still signs deliveries (beside the new one)
    # until this time, so that receivers can switch without refusing any.
    previous_secret = models.CharField(max_length=100, blank=True, editable=False)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    is_active = models.BooleanField(
        "active", default=True, help_text="Inactive endpoints are sent nothing."
    )
    failures_in_a_row = models.PositiveIntegerField(default=0, editable=False)
    disabled_at = models.DateTimeField(null=True, blank=True, editable=False)
    disabled_reason = models.CharField(max_length=300, blank=True, editable=False)
    # Who registered the endpoint, and alone reaches it (its secret, settings and delivery
    # log) besides holders of "manage all webhook endpoints". An endpoint whose owner is
    # gone is left to those.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="webhook_endpoints",
        help_text="The user who registered the endpoint and may change it.",
    )

    objects = WebhookEndpointQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        permissions = [("manage_all_webhookendpoints", "Can manage all webhook endpoints")]

    def __str__(self):
        return self.description or self.url

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Turning a disabled endpoint on again starts its failure count afresh."""
        if self.is_active and self.disabled_at is not None:
            self.disabled_at, self.disabled_reason, self.failures_in_a_row = None, "", 0
            if kwargs.get("update_fields") is not None:
                fields = {"disabled_at", "disabled_reason", "failures_in_a_row"}
                kwargs["update_fields"] = {*kwargs["update_fields"], *fields}
        super().save(*args, **kwargs)

    def wants(self, event_type: str) -> bool:
        return self.is_active and event_type in (self.events or [])

    def is_reachable_by(self, user) -> bool:
        """The object-level form of WebhookEndpointQuerySet.visible_to."""
        if manages_all_endpoints(user):
            return True
        return (
            self.owner_id is not None
            and bool(user and user.is_active)
            and (self.owner_id == user.pk)
        )

    def signing_secrets(self, now) -> list[str]:
        """The secrets a delivery at `now` is signed with: the current one, and the one it
        replaced while its overlap lasts."""
        keys = [self.secret]
        expires = self.previous_secret_expires_at
        if self.previous_secret and expires is not None and now < expires:
            keys.append(self.previous_secret)
        return keys


class WebhookEventQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Events with a delivery to an endpoint `user` may reach (all, for managers)."""
        if manages_all_endpoints(user):
            return self
        endpoints = WebhookEndpoint.objects.visible_to(user)
        return self.filter(
            Exists(WebhookDelivery.objects.filter(event=OuterRef("pk"), endpoint__in=endpoints))
        )


class WebhookEvent(models.Model):
    """Something that happened, with the JSON body every endpoint is sent, byte for byte."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    type = models.CharField(max_length=40, choices=WebhookEventType.choices)
    # Set for events that must be told once however often they are looked for (a scheduled
    # publication noticed by the sweeper and by the publish itself).
    key = models.CharField(max_length=200, unique=True, null=True, blank=True)
    body = models.TextField()
    created_at = models.DateTimeField(db_index=True)

    objects = WebhookEventQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.type} {self.id}"

    def summaries(self) -> list[dict]:
        """The summaries the event is about, as its body told them (id, slug, title): one
        for summary and citation events, those citing the source for a source's."""
        try:
            data = json.loads(self.body).get("data") or {}
        except (ValueError, AttributeError):
            return []
        found = data.get("summaries") or ([data["summary"]] if data.get("summary") else [])
        return [
            {"id": s.get("id"), "slug": s.get("slug"), "title": s.get("title")}
            for s in found
            if isinstance(s, dict)
        ]


class WebhookDeliveryQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Deliveries to the endpoints `user` may reach."""
        if manages_all_endpoints(user):
            return self
        return self.filter(endpoint__in=WebhookEndpoint.objects.visible_to(user))


class WebhookDelivery(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"
        # The worker was lost while sending: it may or may not have arrived, and it is
        # not sent again (at most once).
        INTERRUPTED = "interrupted", "Interrupted (not sent again)"

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    # One entry per attempt: when, what came back, how long it took.
    log = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()

    objects = WebhookDeliveryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            # At most one delivery of an event to an endpoint.
            models.UniqueConstraint(fields=["event", "endpoint"], name="one_delivery_per_event")
        ]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="delivery_due")]

    def __str__(self):
        return f"{self.event.type} → {self.endpoint}"
