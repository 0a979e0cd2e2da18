"""/api/v1/webhooks/: endpoints registered by editors (or tokens with the permission), and
each endpoint's delivery log. Nothing here is public: reads need the view permission too.
Each user reaches only the endpoints they registered, unless they hold "manage all webhook
endpoints". Owners send test events, rotate secrets and redeliver (POST actions that need
the change permission)."""

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import DjangoModelPermissions
from rest_framework.response import Response

from summaries.api.links import api_url
from summaries.models import WebhookDelivery, WebhookEndpoint
from summaries.models.webhooks import SUBSCRIBABLE_EVENT_TYPES, validate_event_types
from summaries.webhooks import endpoints as services

from .errors import Conflict
from .permissions import is_staff

SIGNING = """
Every delivery is a POST of a JSON event, `{"id", "type", "created_at", "data"}`, signed the
[Standard Webhooks](https://www.standardwebhooks.com/) way:

- `webhook-id`: the event's id, the same on every attempt (drop duplicates by it);
- `webhook-timestamp`: Unix seconds when this attempt was signed;
- `webhook-signature`: `v1,` and the base64 HMAC-SHA256, keyed by the endpoint's secret
  (the base64 after `whsec_`), of `{webhook-id}.{webhook-timestamp}.{raw body}`. After a
  secret rotation (`POST …/rotate-secret/`) and for `WEBHOOK_SECRET_OVERLAP` seconds (24 h
  by default), the header holds two signatures separated by a space, the new secret's
  first: `v1,<new> v1,<old>`. Accept the request if any one matches your secret (Standard
  Webhooks libraries do), so that you can switch secrets without refusing a delivery.

Refuse a timestamp more than 5 minutes from your clock (the replay window), compare
signatures in constant time, and answer 2xx within 10 seconds. Anything else (a 5xx, 408,
425, 429, a timeout, a refused connection) is tried again with exponential backoff (30 s
doubling, at most 8 attempts); 3xx and other 4xx answers are final. An endpoint whose
deliveries fail 10 times in a row is turned off until an editor turns it on again. An
event is never sent twice by a worker lost mid-request; a timed-out attempt (which you may
have taken) is tried again with the same `webhook-id`. Events: `summary.published`,
`summary.updated` (changes to a live summary went live), `summary.unpublished`,
`source.state_changed` and `citation.verdict_changed` (for sources and citations of live
summaries, when a known state or verdict changes), and `ping` (a test event, sent only
on request by `POST …/test/`). Drafts, scheduled summaries and unpublished changes are
never told of; a scheduled summary's `summary.published` leaves as it goes live.
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


class EditorChangePermissions(EditorPermissions):
    """For POST actions on an endpoint (test event, rotation, redelivery): the change
    permission, not the add permission a POST would otherwise need."""

    perms_map = {**EditorPermissions.perms_map, "POST": ["%(app_label)s.change_%(model_name)s"]}


class SiteHyperlinkedIdentityField(serializers.HyperlinkedIdentityField):
    """The object's API address on SITE_URL (links.py)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reverse = api_url


class WebhookEndpointSerializer(serializers.ModelSerializer):
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=SUBSCRIBABLE_EVENT_TYPES),
        allow_empty=False,
        validators=[validate_event_types],
        help_text="Event types to send: "
        + ", ".join(value for value, _ in SUBSCRIBABLE_EVENT_TYPES)
        + ".",
    )
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    deliveries_url = SiteHyperlinkedIdentityField(
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


class SecretSerializer(serializers.ModelSerializer):
    """A rotation's answer: the new secret, and until when the old one still signs."""

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "secret", "previous_secret_expires_at"]
        read_only_fields = fields


class DeliverySummarySerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True)
    slug = serializers.CharField(allow_null=True)
    title = serializers.CharField(allow_null=True)


class WebhookDeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.UUIDField(source="event.id", read_only=True)
    event_type = serializers.CharField(source="event.type", read_only=True)
    summaries = DeliverySummarySerializer(
        source="event.summaries",
        many=True,
        read_only=True,
        help_text="The summaries the event is about, as it told them (none for a ping).",
    )
    log = serializers.ListField(child=serializers.DictField(), read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event_id",
            "event_type",
            "summaries",
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

    @extend_schema(
        summary="Send the endpoint a test event (type ping)",
        description="Queued like any delivery, signed the same way; answers the delivery "
        "(follow it in the delivery log). 409 when the endpoint is turned off.",
        request=None,
        responses={202: WebhookDeliverySerializer},
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="test",
        url_name="test",
        permission_classes=[EditorChangePermissions],
    )
    def send_test(self, request, pk=None):
        try:
            sent = services.send_test_event(endpoint=self.get_object())
        except ValidationError as refused:
            raise Conflict(" ".join(refused.messages), code="inactive") from None
        return Response(WebhookDeliverySerializer(sent).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="Rotate the endpoint's signing secret",
        description="Answers the new secret (shown only here). The old one keeps signing "
        "deliveries beside it until `previous_secret_expires_at` (WEBHOOK_SECRET_OVERLAP).",
        request=None,
        responses={200: SecretSerializer},
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="rotate-secret",
        url_name="rotate-secret",
        permission_classes=[EditorChangePermissions],
    )
    def rotate_secret(self, request, pk=None):
        endpoint = services.rotate_secret(endpoint=self.get_object())
        return Response(SecretSerializer(endpoint).data)

    @extend_schema(
        summary="Send a finished delivery again",
        description="The same event and `webhook-id`, signed anew, in a new round of "
        "attempts. 409 while the delivery is still on its way, or its endpoint is off.",
        request=None,
        responses={202: WebhookDeliverySerializer},
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"deliveries/(?P<delivery_id>[0-9]+)/redeliver",
        url_name="redeliver",
        permission_classes=[EditorChangePermissions],
    )
    def redeliver(self, request, pk=None, delivery_id=None):
        endpoint = self.get_object()
        delivery = get_object_or_404(
            WebhookDelivery.objects.select_related("event", "endpoint"),
            pk=delivery_id,
            endpoint=endpoint,
        )
        try:
            again = services.redeliver(delivery=delivery)
        except ValidationError as refused:
            raise Conflict(" ".join(refused.messages), code="inactive") from None
        if not again:
            raise Conflict("The delivery is still on its way.", code="in_progress")
        delivery.refresh_from_db()
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)
