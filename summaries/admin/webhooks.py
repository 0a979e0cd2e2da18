"""Webhooks in the admin: endpoints editors register, and the log of every delivery.

Endpoints are edited here; events and deliveries are written by the service (the outbox and
the delivery workers) and only read here. An endpoint that keeps failing is turned off by
the workers, with the reason shown on its page; "Turn on again" starts it afresh. Each
endpoint, its secret and its deliveries are reached by its owner only, or with "manage all
webhook endpoints". Owners send a test event, rotate the secret and redeliver deliveries
(summaries.webhooks.endpoints).
"""

import json

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import OuterRef, Q, Subquery
from django.http import Http404, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from summaries.models import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventType,
)
from summaries.models.webhooks import SUBSCRIBABLE_EVENT_TYPES, manages_all_endpoints
from summaries.webhooks import endpoints as services

from .base import ReadOnlyAdmin

# How many of an endpoint's deliveries its page lists (the delivery log has them all).
RECENT_DELIVERIES = 20

EVENT_LABELS = dict(WebhookEventType.choices)


def event_labels(values) -> str:
    """The event types as editors read them, one a line (an unknown name as it is)."""
    return format_html_join(
        mark_safe("<br>"), "{}", ((EVENT_LABELS.get(v, v),) for v in values or [])
    )


def summaries_shown(event: WebhookEvent):
    """The summaries an event is about, each linked to its admin page; "—" for none."""
    about = event.summaries()
    if not about:
        return "—"
    return format_html_join(
        mark_safe("<br>"),
        '<a href="{}">{}</a>',
        (
            (reverse("admin:summaries_summary_change", args=[s["id"]]), s["title"] or s["slug"])
            for s in about
        ),
    )


def post_only_view(model_admin: admin.ModelAdmin, view):
    """`view` for POSTs only, behind the admin's login check."""
    return model_admin.admin_site.admin_view(require_POST(view))


def delivery_state_badge(delivery: WebhookDelivery):
    return format_html(
        '<span class="webhook-state webhook-state-{}">{}</span>',
        delivery.state,
        delivery.get_state_display(),
    )


def pretty_body(body: str):
    """The JSON body as sent, indented for reading; anything that is not JSON as it is."""
    try:
        text = json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:
        text = body
    return format_html('<pre class="webhook-body">{}</pre>', text)


def when(value) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S} UTC" if value else "—"


def blank(value) -> str:
    return "—" if value in (None, "") else str(value)


class WebhookEndpointForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        label="Events",
        choices=SUBSCRIBABLE_EVENT_TYPES,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one event to send to this endpoint."},
        help_text="What this endpoint is told about.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["url", "description", "events", "is_active"]

    def clean_events(self):
        chosen = set(self.cleaned_data["events"])
        # Stored in the order of the choices, so that the same choice is the same list.
        return [value for value, _ in SUBSCRIBABLE_EVENT_TYPES if value in chosen]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    class Media:
        css = {"all": ["summaries/css/admin.css"]}

    form = WebhookEndpointForm
    list_display = [
        "url",
        "description",
        "events_shown",
        "is_active",
        "failures_in_a_row",
        "disabled_reason",
        "last_delivery",
    ]
    list_filter = ["is_active"]
    search_fields = ["url", "description"]
    actions = ["turn_on", "turn_off", "send_test_events"]
    readonly_fields = [
        "events_shown",
        "secret_shown",
        "failures_in_a_row",
        "disabled_at",
        "disabled_reason",
        "owner",
        "created_at",
        "recent_deliveries",
    ]

    def get_fieldsets(self, request, obj=None):
        fieldsets = [(None, {"fields": ["url", "description", "events", "is_active"]})]
        if obj is None:
            return fieldsets
        if self.has_change_permission(request, obj):
            # The signing secret lets whoever holds it forge deliveries: only those who
            # may change the endpoint see it (to copy it into their receiver).
            fieldsets.append(("Signing", {"fields": ["secret_shown"]}))
        else:
            # Read only: the events by their labels, not the stored list.
            fieldsets[0][1]["fields"][2] = "events_shown"
        return [
            *fieldsets,
            ("Health", {"fields": ["failures_in_a_row", "disabled_at", "disabled_reason"]}),
            (None, {"fields": ["owner", "created_at"]}),
            ("Latest deliveries", {"fields": ["recent_deliveries"]}),
        ]

    def get_readonly_fields(self, request, obj=None):
        """Those who manage all endpoints may hand one to another owner (one whose owner
        left, say); an owner may not give theirs away."""
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is not None and manages_all_endpoints(request.user):
            readonly.remove("owner")
        return readonly

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        owner = form.base_fields.get("owner")
        if owner is not None:
            # Active staff (who can reach an endpoint), and the owner it has (kept as it is).
            users = owner.queryset.model.objects
            owner.queryset = users.filter(
                Q(is_active=True, is_staff=True) | Q(pk=obj.owner_id)
            ).order_by("username")
        return form

    def get_queryset(self, request):
        latest = WebhookDelivery.objects.filter(endpoint=OuterRef("pk")).order_by(
            "-created_at", "-id"
        )
        # Every road (list, page, history, delete, actions) starts here: another editor's
        # endpoint "does not exist" for those without "manage all webhook endpoints".
        return (
            super()
            .get_queryset(request)
            .visible_to(request.user)
            .select_related("owner")
            .annotate(
                last_delivery_state=Subquery(latest.values("state")[:1]),
                last_delivery_at=Subquery(latest.values("created_at")[:1]),
            )
        )

    @admin.display(description="Events")
    def events_shown(self, endpoint):
        return event_labels(endpoint.events)

    @admin.display(description="Last delivery", ordering="last_delivery_at")
    def last_delivery(self, endpoint):
        state = getattr(endpoint, "last_delivery_state", None)
        if state is None:
            return "—"
        return format_html(
            '<span class="webhook-state webhook-state-{}">{}</span><br><small>{}</small>',
            state,
            WebhookDelivery.State(state).label,
            when(endpoint.last_delivery_at),
        )

    @admin.display(description="Secret")
    def secret_shown(self, endpoint):
        shown = format_html(
            '<code class="webhook-secret">{}</code><br><small>{}</small>',
            endpoint.secret,
            "Receivers check each delivery's signature with it (Standard Webhooks).",
        )
        expires = endpoint.previous_secret_expires_at
        if endpoint.previous_secret and expires is not None and expires > timezone.now():
            shown += format_html(
                "<br><small>The secret it replaced also signs deliveries until {}.</small>",
                when(expires),
            )
        return shown

    @admin.display(description="Latest deliveries")
    def recent_deliveries(self, endpoint):
        if endpoint.pk is None:
            return "—"
        deliveries = list(
            endpoint.deliveries.select_related("event").order_by("-created_at", "-id")[
                :RECENT_DELIVERIES
            ]
        )
        if not deliveries:
            return "None yet."
        rows = format_html_join(
            "",
            '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td>'
            "<td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    reverse("admin:summaries_webhookdelivery_change", args=[d.pk]),
                    EVENT_LABELS.get(d.event.type, d.event.type),
                    delivery_state_badge(d),
                    d.attempts,
                    blank(d.status_code),
                    Truncator(d.error).chars(120) or "—",
                    when(d.created_at),
                    when(d.delivered_at),
                )
                for d in deliveries
            ),
        )
        log = reverse("admin:summaries_webhookdelivery_changelist")
        return format_html(
            '<table class="webhook-deliveries"><thead><tr><th>Event</th><th>State</th>'
            "<th>Attempts</th><th>Status</th><th>Error</th><th>Created</th>"
            "<th>Delivered</th></tr></thead><tbody>{}</tbody></table>"
            '<p><a href="{}?endpoint__id__exact={}">All deliveries to this endpoint</a></p>',
            rows,
            log,
            endpoint.pk,
        )

    def _reaches(self, request, obj) -> bool:
        return obj is None or obj.is_reachable_by(request.user)

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) and self._reaches(request, obj)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._reaches(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._reaches(request, obj)

    def save_model(self, request, obj, form, change):
        if not change:
            obj.owner = request.user
        # (Turning a disabled endpoint on again clears its failures: WebhookEndpoint.save.)
        super().save_model(request, obj, form, change)

    def get_deleted_objects(self, objs, request):
        """An endpoint's deliveries go with it: deleting the endpoint needs no permission to
        delete deliveries (which nobody has in the admin, see WebhookDeliveryAdmin)."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        perms_needed.discard(WebhookDelivery._meta.verbose_name)
        return deleted, counts, perms_needed, protected

    def get_urls(self):
        opts = self.model._meta
        name = f"{opts.app_label}_{opts.model_name}"
        return [
            path(
                "<path:object_id>/send-test/",
                post_only_view(self, self.send_test_view),
                name=f"{name}_send_test",
            ),
            path(
                "<path:object_id>/rotate-secret/",
                post_only_view(self, self.rotate_secret_view),
                name=f"{name}_rotate_secret",
            ),
            *super().get_urls(),
        ]

    def _endpoint_to_change(self, request, object_id) -> WebhookEndpoint:
        endpoint = self.get_object(request, unquote(object_id))  # None: not theirs, or gone
        if endpoint is None:
            raise Http404("No such webhook endpoint.")
        if not self.has_change_permission(request, endpoint):
            raise PermissionDenied
        return endpoint

    def _back_to(self, endpoint) -> HttpResponseRedirect:
        return HttpResponseRedirect(
            reverse("admin:summaries_webhookendpoint_change", args=[endpoint.pk])
        )

    def send_test_view(self, request, object_id):
        endpoint = self._endpoint_to_change(request, object_id)
        try:
            services.send_test_event(endpoint=endpoint)
        except ValidationError as refused:
            self.message_user(request, " ".join(refused.messages), messages.ERROR)
        else:
            self.message_user(
                request,
                "A test event is on its way; its delivery is at the top of the list below.",
                messages.SUCCESS,
            )
        return self._back_to(endpoint)

    def rotate_secret_view(self, request, object_id):
        endpoint = services.rotate_secret(endpoint=self._endpoint_to_change(request, object_id))
        if endpoint.previous_secret:
            overlap = (
                "Deliveries carry a signature with the old one too until "
                f"{when(endpoint.previous_secret_expires_at)}."
            )
        else:
            overlap = "The old one signs nothing from now on."
        self.message_user(
            request, f"New secret made: copy it into your receiver. {overlap}", messages.SUCCESS
        )
        return self._back_to(endpoint)

    @admin.action(description="Send a test event", permissions=["change"])
    def send_test_events(self, request, queryset):
        sent = skipped = 0
        for endpoint in queryset:
            try:
                services.send_test_event(endpoint=endpoint)
                sent += 1
            except ValidationError:
                skipped += 1
        messages.success(request, f"Sent a test event to {sent} endpoint(s).")
        if skipped:
            messages.warning(request, f"Skipped {skipped} turned-off endpoint(s).")

    @admin.action(description="Turn on again (and forget their failures)", permissions=["change"])
    def turn_on(self, request, queryset):
        turned = queryset.filter(is_active=False).update(
            is_active=True, failures_in_a_row=0, disabled_at=None, disabled_reason=""
        )
        messages.success(request, f"Turned on {turned} endpoint(s).")

    @admin.action(description="Turn off (send them nothing)", permissions=["change"])
    def turn_off(self, request, queryset):
        turned = queryset.filter(is_active=True).update(is_active=False)
        messages.success(request, f"Turned off {turned} endpoint(s).")


class LogAdmin(ReadOnlyAdmin, admin.ModelAdmin):
    """Rows the service writes: viewed here, never added or changed.

    Not deleted either: the log is the record of what was sent (and a delivery being sent
    must not vanish under its worker); the sweeper drops events, with their deliveries,
    after WEBHOOK_KEEP_DAYS, and deleting an endpoint deletes its deliveries.
    """


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(LogAdmin):
    class Media:
        css = {"all": ["summaries/css/admin.css"]}

    list_display = [
        "event_type",
        "summary",
        "endpoint",
        "badge",
        "attempts",
        "status_code",
        "error_shown",
        "created_at",
        "delivered_at",
    ]
    # Only endpoints with deliveries in the visible log: another editor's are not named.
    list_filter = ["state", "event__type", ("endpoint", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["event", "endpoint"]
    search_fields = ["event__id", "endpoint__url", "endpoint__description"]
    date_hierarchy = "created_at"
    fieldsets = [
        (None, {"fields": ["event_link", "event_type", "summary", "endpoint_link", "badge"]}),
        (
            "Attempts",
            {
                "fields": [
                    "attempts",
                    "status_code",
                    "error",
                    "response_ms",
                    "created_at",
                    "claimed_at",
                    "next_attempt_at",
                    "delivered_at",
                    "log_table",
                ]
            },
        ),
        ("Body sent", {"fields": ["body"]}),
    ]
    readonly_fields = [f for _, options in fieldsets for f in options["fields"]]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .visible_to(request.user)
            .select_related("event", "endpoint")
        )

    actions = ["redeliver"]

    def get_urls(self):
        opts = self.model._meta
        redeliver = path(
            "<path:object_id>/redeliver/",
            post_only_view(self, self.redeliver_view),
            name=f"{opts.app_label}_{opts.model_name}_redeliver",
        )
        return [redeliver, *super().get_urls()]

    def has_redeliver_permission(self, request, obj=None):
        """Those who may change endpoints may send their deliveries again (the queryset
        holds only deliveries to endpoints they reach)."""
        return request.user.has_perm("summaries.change_webhookendpoint")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "can_redeliver": self.has_redeliver_permission(request),
            "redeliverable_states": services.REDELIVERABLE,
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def redeliver_view(self, request, object_id):
        delivery = self.get_object(request, unquote(object_id))  # None: not theirs, or gone
        if delivery is None:
            raise Http404("No such delivery.")
        if not self.has_redeliver_permission(request, delivery):
            raise PermissionDenied
        self._redeliver(request, [delivery])
        url = reverse("admin:summaries_webhookdelivery_change", args=[delivery.pk])
        return HttpResponseRedirect(url)

    @admin.action(description="Redeliver (send again)", permissions=["redeliver"])
    def redeliver(self, request, queryset):
        self._redeliver(request, queryset)

    def _redeliver(self, request, deliveries) -> None:
        sent = on_its_way = off = 0
        for delivery in deliveries:
            try:
                if services.redeliver(delivery=delivery):
                    sent += 1
                else:
                    on_its_way += 1
            except ValidationError:
                off += 1
        if sent:
            messages.success(request, f"Sending {sent} delivery(ies) again.")
        if on_its_way:
            messages.warning(request, f"{on_its_way} delivery(ies) still on their way: left.")
        if off:
            messages.warning(request, f"{off} delivery(ies) to turned-off endpoints: left.")

    @admin.display(description="Event", ordering="event__type")
    def event_type(self, delivery):
        return EVENT_LABELS.get(delivery.event.type, delivery.event.type)

    @admin.display(description="About")
    def summary(self, delivery):
        return summaries_shown(delivery.event)

    @admin.display(description="State", ordering="state")
    def badge(self, delivery):
        return delivery_state_badge(delivery)

    @admin.display(description="Error", ordering="error")
    def error_shown(self, delivery):
        return Truncator(delivery.error).chars(80)

    @admin.display(description="Event ID")
    def event_link(self, delivery):
        url = reverse("admin:summaries_webhookevent_change", args=[delivery.event_id])
        return format_html('<a href="{}"><code>{}</code></a>', url, delivery.event_id)

    @admin.display(description="Endpoint")
    def endpoint_link(self, delivery):
        url = reverse("admin:summaries_webhookendpoint_change", args=[delivery.endpoint_id])
        return format_html(
            '<a href="{}">{}</a><br><small>{}</small>',
            url,
            delivery.endpoint,
            delivery.endpoint.url,
        )

    @admin.display(description="Body")
    def body(self, delivery):
        return pretty_body(delivery.event.body)

    @admin.display(description="Log")
    def log_table(self, delivery):
        entries = [e for e in delivery.log or [] if isinstance(e, dict)]
        if not entries:
            return "No attempt yet."
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td><code>{}</code></td></tr>",
            (
                (
                    number,
                    blank(entry.get("at")),
                    blank(entry.get("status_code")),
                    blank(entry.get("response_ms")),
                    blank(entry.get("error")),
                    entry.get("response") or "",
                )
                for number, entry in enumerate(entries, start=1)
            ),
        )
        return format_html(
            '<table class="webhook-log"><thead><tr><th>#</th><th>At</th><th>Status</th>'
            "<th>ms</th><th>Error</th><th>Response (start)</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )


class DeliveryOfEventInline(admin.TabularInline):
    model = WebhookDelivery
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ["endpoint", "state", "attempts", "status_code", "error", "delivered_at"]
    readonly_fields = fields
    verbose_name_plural = "Deliveries"

    def get_queryset(self, request):
        return super().get_queryset(request).visible_to(request.user).select_related("endpoint")

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(WebhookEvent)
class WebhookEventAdmin(LogAdmin):
    list_display = ["id", "event_type", "created_at", "key"]
    list_filter = ["type"]
    search_fields = ["id", "key"]
    date_hierarchy = "created_at"
    fields = ["id", "event_type", "key", "created_at", "body_shown"]
    readonly_fields = fields
    inlines = [DeliveryOfEventInline]

    def get_queryset(self, request):
        return super().get_queryset(request).visible_to(request.user)

    @admin.display(description="Type", ordering="type")
    def event_type(self, event):
        return EVENT_LABELS.get(event.type, event.type)

    @admin.display(description="Body")
    def body_shown(self, event):
        return pretty_body(event.body)
