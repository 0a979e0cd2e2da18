"""/api/v1/webhooks/: endpoints registered by editors (or tokens with the permission), and
each endpoint's delivery log. Nothing here is public: reads need the view permission too."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import DjangoModelPermissions

from summaries.models import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEventType,
)
from summaries.models.webhooks import validate_event_types

from .permissions import is_staff

SIGNING = """
Every delivery is a POST of a JSON event, `{"id", "type", "created_at", "data"}`, signed the
[Standard Webhooks](https://www.standardwebhooks.com/) way:

- `webhook-id`: the event's id, the same on every attempt (drop duplicates by it);
- `webhook-timestamp`: Unix seconds when this attempt was signed;
- `webhook-signature`: `v1,` and the base64 HMAC-SHA256, keyed by the endpoint's secret
  (the base64 after `whsec_`), of `{webhook-id}.{webhook-timestamp}.{raw body}`.

Refuse a timestamp more than 5 minutes from your clock (the replay window), compare
signatures in constant time, and answer 2xx within 10 seconds. Anything else (a 5xx, 408,
425, 429, a timeout, a refused connection) is tried again with exponential backoff (30 s
doubling, at most 8 attempts); 3xx and other 4xx answers are final. An endpoint whose
deliveries fail 10 times in a row is turned off until an editor turns it on again. An
event is never sent twice by a worker lost mid-request; a timed-out attempt (which you may
have taken) is tried again with the same `webhook-id`. Events: `summary.published`,
`summary.updated` (changes to a live summary went live), `summary.unpublished`,
`source.state_changed` and `citation.verdict_changed` (for sources and citations of live
summaries, when a known state or verdict changes). Drafts, scheduled summaries and
unpublished changes are never told of.
"""


class EditorPermissions(DjangoModelPermissions):
    """Staff users with the model permission, for reads as well as writes."""

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
    }

    def has_permission(self, request, view):
        return is_staff(request.user) and super().has_permission(request, view)


class WebhookEndpointSerializer(serializers.ModelSerializer):
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=WebhookEventType.choices),
        allow_empty=False,
        validators=[validate_event_types],
        help_text="Event types to send: " + ", ".join(WebhookEventType.values) + ".",
    )
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    deliveries_url = serializers.HyperlinkedIdentityField(
        view_name="api:webhook-deliveries", read_only=True
    )

    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "url",
            "description",
            "events",
            "is_active",
            "owner",
            "failures_in_a_row",
            "disabled_at",
            "disabled_reason",
            "created_at",
            "updated_at",
            "deliveries_url",
        ]
        read_only_fields = ["failures_in_a_row", "disabled_at", "disabled_reason"]


class NewWebhookEndpointSerializer(WebhookEndpointSerializer):
    """What a registration answers: the endpoint with its signing secret (shown once here;
    editors see it in the admin)."""

    secret = serializers.CharField(read_only=True)

    class Meta(WebhookEndpointSerializer.Meta):
        fields = [*WebhookEndpointSerializer.Meta.fields, "secret"]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.UUIDField(source="event.id", read_only=True)
    event_type = serializers.CharField(source="event.type", read_only=True)
    log = serializers.ListField(child=serializers.DictField(), read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event_id",
            "event_type",
            "state",
            "attempts",
            "status_code",
            "error",
            "response_ms",
            "next_attempt_at",
            "delivered_at",
            "created_at",
            "log",
        ]
        read_only_fields = fields


@extend_schema_view(
    list=extend_schema(summary="Registered webhook endpoints", description=SIGNING),
    create=extend_schema(
        summary="Register a webhook endpoint",
        description=SIGNING,
        responses={201: NewWebhookEndpointSerializer},
    ),
    retrieve=extend_schema(summary="A webhook endpoint"),
    update=extend_schema(summary="Change a webhook endpoint"),
    partial_update=extend_schema(
        summary="Change a webhook endpoint (send is_active=true to turn it on again)"
    ),
    destroy=extend_schema(summary="Remove a webhook endpoint and its delivery log"),
)
class WebhookEndpointViewSet(viewsets.ModelViewSet):
    """Each user reaches the endpoints they registered; another's is a 404 (read, change,
    delete, log), unless they hold "manage all webhook endpoints"."""

    queryset = WebhookEndpoint.objects.all()
    serializer_class = WebhookEndpointSerializer
    permission_classes = [EditorPermissions]
    lookup_value_regex = r"[0-9]+"

    def get_queryset(self):
        return WebhookEndpoint.objects.visible_to(self.request.user).select_related("owner")

    def get_serializer_class(self):
        if self.action == "create":
            return NewWebhookEndpointSerializer
        if self.action == "deliveries":
            return WebhookDeliverySerializer
        return WebhookEndpointSerializer

    def perform_create(self, serializer):
        serializer.save(owner=self.request.user)

    @extend_schema(
        summary="An endpoint's delivery log, newest first",
        responses=WebhookDeliverySerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk=None):
        endpoint = self.get_object()
        deliveries = WebhookDelivery.objects.filter(endpoint=endpoint).select_related("event")
        page = self.paginate_queryset(deliveries.order_by("-created_at", "-pk"))
        return self.get_paginated_response(WebhookDeliverySerializer(page, many=True).data)
