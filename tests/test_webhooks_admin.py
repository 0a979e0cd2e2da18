"""Webhooks in the admin: endpoints with their health and latest deliveries, the delivery
log (read only), turning endpoints on and off, who may see what, escaping."""

import importlib
import json

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from summaries.models import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventType,
)

from .admin_forms import form_fields
from .factories import EditorFactory, UserFactory, editors_group

pytestmark = pytest.mark.django_db

WEBHOOKS_MIGRATION = importlib.import_module("summaries.migrations.0016_webhooks")
State = WebhookDelivery.State

ENDPOINTS = reverse("admin:summaries_webhookendpoint_changelist")
DELIVERIES = reverse("admin:summaries_webhookdelivery_changelist")


def endpoint_url(endpoint):
    return reverse("admin:summaries_webhookendpoint_change", args=[endpoint.pk])


def delivery_url(delivery):
    return reverse("admin:summaries_webhookdelivery_change", args=[delivery.pk])


def editors_with_webhooks():
    """The Editors group with what the webhooks migration gives it (made again the same
    way if a transactional test emptied the tables)."""
    group = editors_group()
    if not group.permissions.filter(codename="view_webhookdelivery").exists():
        config = django_apps.get_app_config("summaries")
        models_module = config.models_module  # the migration's function resets it
        try:
            WEBHOOKS_MIGRATION.let_editors_manage_webhooks(django_apps, None)
        finally:
            config.models_module = models_module
    return group


@pytest.fixture
def editor(editor):
    """The shared editor, the Editors group holding its webhook permissions."""
    editors_with_webhooks()
    return editor


@pytest.fixture
def superuser(client):
    user = UserFactory(is_staff=True, is_superuser=True)
    user.save()  # with the password the factory set after creating it
    client.force_login(user)
    return user


def make_endpoint(**values):
    values = {
        "url": "https://hooks.example.org/in",
        "description": "Partner site",
        "events": [WebhookEventType.SUMMARY_PUBLISHED.value],
        **values,
    }
    return WebhookEndpoint.objects.create(**values)


def make_delivery(endpoint, *, body=None, event_type=WebhookEventType.SUMMARY_PUBLISHED, **values):
    event = WebhookEvent.objects.create(
        type=event_type,
        body=body if body is not None else json.dumps({"type": event_type, "data": {"id": 7}}),
        created_at=timezone.now(),
    )
    return WebhookDelivery.objects.create(
        event=event, endpoint=endpoint, created_at=timezone.now(), **values
    )


def page(client, url):
    response = client.get(url)
    assert response.status_code == 200
    return response.text


def disabled_endpoint(**values):
    return make_endpoint(
        is_active=False,
        failures_in_a_row=10,
        disabled_at=timezone.now(),
        disabled_reason="10 deliveries in a row failed; the last: HTTP 503",
        **values,
    )


# --- Endpoints -----------------------------------------------------------------------------


def test_endpoint_list_shows_events_health_and_last_delivery(editor_client, editor):
    endpoint = disabled_endpoint(owner=editor)
    endpoint.events = [
        WebhookEventType.SUMMARY_PUBLISHED.value,
        WebhookEventType.SOURCE_STATE_CHANGED.value,
    ]
    endpoint.save(update_fields=["events"])
    make_delivery(endpoint, state=State.FAILED, attempts=8, status_code=503)
    quiet = make_endpoint(url="https://quiet.example.org/", description="", owner=editor)

    text = page(editor_client, ENDPOINTS)

    assert "https://hooks.example.org/in" in text
    assert "Partner site" in text
    assert "A summary went live" in text
    assert "A cited source changed state" in text
    assert "10 deliveries in a row failed; the last: HTTP 503" in text
    assert "webhook-state-failed" in text
    assert quiet.url in text


def test_endpoint_page_shows_secret_health_and_latest_deliveries(editor_client, editor):
    endpoint = disabled_endpoint(owner=editor)
    failed = make_delivery(
        endpoint, state=State.FAILED, attempts=8, status_code=503, error="HTTP 503"
    )
    delivered = make_delivery(
        endpoint,
        state=State.DELIVERED,
        attempts=1,
        status_code=204,
        delivered_at=timezone.now(),
        event_type=WebhookEventType.SUMMARY_UNPUBLISHED,
    )

    text = page(editor_client, endpoint_url(endpoint))

    assert f'<code class="webhook-secret">{endpoint.secret}</code>' in text
    assert "10 deliveries in a row failed; the last: HTTP 503" in text
    assert "Latest deliveries" in text
    for delivery in (failed, delivered):
        assert f'href="{delivery_url(delivery)}"' in text
    assert "A live summary was taken down" in text
    assert "HTTP 503" in text
    assert "Delivered" in text


def test_endpoint_page_lists_only_the_latest_twenty_deliveries(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    deliveries = [make_delivery(endpoint) for _ in range(22)]
    text = page(editor_client, endpoint_url(endpoint))
    assert f'href="{delivery_url(deliveries[-1])}"' in text
    assert f'href="{delivery_url(deliveries[0])}"' not in text
    assert f"{DELIVERIES}?endpoint__id__exact={endpoint.pk}" in text


def add_form_data(client):
    response = client.get(reverse("admin:summaries_webhookendpoint_add"))
    assert response.status_code == 200
    data = form_fields(response, form_id="webhookendpoint_form")
    data.pop("events", None)  # the parser keeps one checkbox of a name; set them below
    return data


def test_adding_an_endpoint_stores_its_events_as_a_list_and_who_added_it(editor_client, editor):
    data = add_form_data(editor_client)
    data.update(
        url="https://hooks.example.org/new",
        description="New partner",
        events=[
            WebhookEventType.CITATION_VERDICT_CHANGED.value,
            WebhookEventType.SUMMARY_PUBLISHED.value,
        ],
        is_active="on",
    )

    response = editor_client.post(reverse("admin:summaries_webhookendpoint_add"), data)

    assert response.status_code == 302, response.text
    endpoint = WebhookEndpoint.objects.get(url="https://hooks.example.org/new")
    assert endpoint.events == ["summary.published", "citation.verdict_changed"]
    assert endpoint.owner == editor
    assert endpoint.is_active
    assert endpoint.secret.startswith("whsec_")


def test_an_endpoint_needs_at_least_one_event(editor_client):
    data = add_form_data(editor_client)
    data.update(url="https://hooks.example.org/new", is_active="on")

    response = editor_client.post(reverse("admin:summaries_webhookendpoint_add"), data)

    assert response.status_code == 200
    assert "Choose at least one event to send to this endpoint." in response.text
    assert not WebhookEndpoint.objects.exists()


def test_the_form_shows_why_an_internal_url_is_refused(editor_client):
    data = add_form_data(editor_client)
    data.update(url="https://127.0.0.1/hook", events=["summary.published"], is_active="on")

    response = editor_client.post(reverse("admin:summaries_webhookendpoint_add"), data)

    assert response.status_code == 200
    assert "Deliveries cannot be sent to this URL" in response.text
    assert not WebhookEndpoint.objects.exists()


def test_a_manager_editing_an_endpoint_keeps_its_owner(editor_client, editor):
    editor.user_permissions.add(Permission.objects.get(codename="manage_all_webhookendpoints"))
    author = UserFactory()
    endpoint = make_endpoint(owner=author)
    secret = endpoint.secret
    data = form_fields(editor_client.get(endpoint_url(endpoint)), form_id="webhookendpoint_form")
    data.update(events=[WebhookEventType.SUMMARY_UPDATED.value], description="Renamed")

    assert editor_client.post(endpoint_url(endpoint), data).status_code == 302

    endpoint.refresh_from_db()
    assert endpoint.description == "Renamed"
    assert endpoint.events == ["summary.updated"]
    assert endpoint.owner == author
    assert endpoint.secret == secret


def test_turning_on_a_disabled_endpoint_in_its_form_forgets_its_failures(editor_client, editor):
    endpoint = disabled_endpoint(owner=editor)
    data = form_fields(editor_client.get(endpoint_url(endpoint)), form_id="webhookendpoint_form")
    data.update(events=endpoint.events, is_active="on")

    assert editor_client.post(endpoint_url(endpoint), data).status_code == 302

    endpoint.refresh_from_db()
    assert endpoint.is_active
    assert (endpoint.failures_in_a_row, endpoint.disabled_at, endpoint.disabled_reason) == (
        0,
        None,
        "",
    )


def run_action(client, action, *endpoints):
    return client.post(
        ENDPOINTS,
        {"action": action, "_selected_action": [str(e.pk) for e in endpoints]},
        follow=True,
    )


def test_turn_on_again_action_resets_the_failures(editor_client, editor):
    endpoint = disabled_endpoint(owner=editor)
    active = make_endpoint(url="https://other.example.org/", failures_in_a_row=2, owner=editor)

    response = run_action(editor_client, "turn_on", endpoint, active)

    assert response.status_code == 200
    assert "Turned on 1 endpoint(s)." in response.text
    endpoint.refresh_from_db()
    assert endpoint.is_active
    assert endpoint.failures_in_a_row == 0
    assert endpoint.disabled_at is None
    assert endpoint.disabled_reason == ""
    active.refresh_from_db()
    assert active.failures_in_a_row == 2  # untouched: it was not off


def test_turn_off_action(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    response = run_action(editor_client, "turn_off", endpoint)
    assert "Turned off 1 endpoint(s)." in response.text
    endpoint.refresh_from_db()
    assert not endpoint.is_active
    assert endpoint.disabled_at is None  # turned off by hand, not for failing


def test_an_editor_may_delete_an_endpoint_with_its_deliveries(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    make_delivery(endpoint, state=State.DELIVERED)
    url = reverse("admin:summaries_webhookendpoint_delete", args=[endpoint.pk])

    confirm = page(editor_client, url)
    assert "permission to delete" not in confirm

    assert editor_client.post(url, {"post": "yes"}).status_code == 302
    assert not WebhookEndpoint.objects.exists()
    assert not WebhookDelivery.objects.exists()


# --- Who may see what ----------------------------------------------------------------------


def test_editors_see_endpoints_and_deliveries(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    delivery = make_delivery(endpoint)
    assert editor_client.get(ENDPOINTS).status_code == 200
    assert editor_client.get(reverse("admin:summaries_webhookendpoint_add")).status_code == 200
    assert editor_client.get(DELIVERIES).status_code == 200
    assert editor_client.get(delivery_url(delivery)).status_code == 200


def test_staff_without_permissions_cannot_see_webhooks(client):
    staff = UserFactory(is_staff=True)
    staff.save()  # with the password the factory set after creating it
    client.force_login(staff)
    endpoint = make_endpoint()
    delivery = make_delivery(endpoint)
    assert client.get(ENDPOINTS).status_code == 403
    assert client.get(endpoint_url(endpoint)).status_code == 403
    assert client.get(DELIVERIES).status_code == 403
    assert client.get(delivery_url(delivery)).status_code == 403


def test_the_secret_is_shown_only_to_those_who_may_change_the_endpoint(client):
    viewer = UserFactory(is_staff=True)
    viewer.save()  # with the password the factory set after creating it
    viewer.user_permissions.add(Permission.objects.get(codename="view_webhookendpoint"))
    client.force_login(viewer)
    endpoint = make_endpoint(owner=viewer)
    text = page(client, endpoint_url(endpoint))
    assert endpoint.secret not in text


# --- Deliveries ----------------------------------------------------------------------------


def test_delivery_list_and_filters(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    make_delivery(endpoint, state=State.FAILED, attempts=3, status_code=500, error="HTTP 500")
    text = page(editor_client, DELIVERIES + "?state__exact=failed")
    assert "A summary went live" in text
    assert "Partner site" in text
    assert "webhook-state-failed" in text
    assert "HTTP 500" in text


def test_deliveries_are_found_by_event_id_and_endpoint_url(editor_client, editor):
    first = make_delivery(make_endpoint(description="First", owner=editor))
    second = make_delivery(
        make_endpoint(url="https://second.example.net/", description="Two", owner=editor)
    )

    text = page(editor_client, DELIVERIES + f"?q={first.event_id}")
    assert f'href="{delivery_url(first)}' in text
    assert f'href="{delivery_url(second)}' not in text

    text = page(editor_client, DELIVERIES + "?q=second.example.net")
    assert f'href="{delivery_url(second)}' in text
    assert f'href="{delivery_url(first)}' not in text


def test_delivery_page_shows_the_body_and_every_attempt(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    delivery = make_delivery(
        endpoint,
        body='{"type":"summary.published","data":{"id":7}}',
        state=State.DELIVERED,
        attempts=2,
        status_code=200,
        delivered_at=timezone.now(),
        log=[
            {
                "at": "2026-12-04T10:00:00+00:00",
                "status_code": 502,
                "error": "HTTP 502",
                "response_ms": 120,
                "response": "Bad gateway",
            },
            {
                "at": "2026-12-04T10:00:30+00:00",
                "status_code": 200,
                "error": "",
                "response_ms": 45,
                "response": "ok",
            },
        ],
    )

    text = page(editor_client, delivery_url(delivery))

    assert '<pre class="webhook-body">{\n  &quot;type&quot;: &quot;summary.published&quot;' in text
    assert "2026-12-04T10:00:00+00:00" in text
    assert "2026-12-04T10:00:30+00:00" in text
    assert "HTTP 502" in text
    assert "Bad gateway" in text
    assert '<table class="webhook-log">' in text
    assert text.count("<tr><td>") >= 2
    assert str(delivery.event_id) in text
    assert f'href="{endpoint_url(endpoint)}"' in text


def test_deliveries_cannot_be_added_changed_or_deleted(client, superuser):
    delivery = make_delivery(make_endpoint(), state=State.FAILED, error="HTTP 500")

    assert client.get(reverse("admin:summaries_webhookdelivery_add")).status_code == 403
    text = page(client, delivery_url(delivery))
    assert 'name="state"' not in text
    assert 'name="error"' not in text
    assert 'name="_save"' not in text
    # A POST changes nothing.
    client.post(delivery_url(delivery), {"state": "delivered", "error": ""})
    delivery.refresh_from_db()
    assert (delivery.state, delivery.error) == (State.FAILED, "HTTP 500")
    delete = reverse("admin:summaries_webhookdelivery_delete", args=[delivery.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert WebhookDelivery.objects.filter(pk=delivery.pk).exists()
    assert "delete_selected" not in page(client, DELIVERIES)


def test_events_are_read_only_with_their_deliveries(editor_client, editor):
    delivery = make_delivery(make_endpoint(owner=editor))
    url = reverse("admin:summaries_webhookevent_change", args=[delivery.event_id])
    text = page(editor_client, url)
    assert "Partner site" in text
    assert 'name="_save"' not in text
    assert editor_client.get(reverse("admin:summaries_webhookevent_add")).status_code == 403


def test_html_in_deliveries_is_escaped(editor_client, editor):
    endpoint = make_endpoint(description="<script>alert('d')</script>", owner=editor)
    delivery = make_delivery(
        endpoint,
        body=json.dumps({"title": "<script>alert('b')</script>"}),
        state=State.FAILED,
        error="<script>alert('e')</script>",
        log=[
            {
                "at": "<script>alert('a')</script>",
                "status_code": 500,
                "error": "<script>alert('e')</script>",
                "response_ms": 3,
                "response": "<script>alert('r')</script>",
            }
        ],
    )
    endpoint.disabled_reason = "<script>alert('reason')</script>"
    endpoint.save(update_fields=["disabled_reason"])

    for url in (
        delivery_url(delivery),
        DELIVERIES,
        endpoint_url(endpoint),
        ENDPOINTS,
        reverse("admin:summaries_webhookevent_change", args=[delivery.event_id]),
    ):
        text = page(editor_client, url)
        assert "<script>alert(" not in text, url
    text = page(editor_client, delivery_url(delivery))
    assert "&lt;script&gt;alert(" in text


# --- Ownership: another editor's endpoint is out of reach ----------------------------------


@pytest.fixture
def someone_elses():
    """An endpoint another editor registered, with a delivery in its log."""
    endpoint = make_endpoint(
        url="https://victim.example.org/hook", description="Victim's hook", owner=EditorFactory()
    )
    delivery = make_delivery(endpoint, state=State.FAILED, error="victim-error-text")
    return endpoint, delivery


def test_the_endpoint_list_hides_other_editors_endpoints(editor_client, editor, someone_elses):
    mine = make_endpoint(url="https://mine.example.org/", description="Mine", owner=editor)
    text = page(editor_client, ENDPOINTS)
    assert mine.url in text
    assert "victim.example.org" not in text and "Victim's hook" not in text


def test_another_editors_endpoint_page_and_secret_are_out_of_reach(editor_client, someone_elses):
    endpoint, _ = someone_elses
    response = editor_client.get(endpoint_url(endpoint), follow=True)
    assert endpoint.secret not in response.text
    assert "victim.example.org" not in response.text
    history = reverse("admin:summaries_webhookendpoint_history", args=[endpoint.pk])
    assert "Victim's hook" not in editor_client.get(history, follow=True).text


def test_another_editors_endpoint_cannot_be_re_pointed_in_the_admin(editor_client, someone_elses):
    endpoint, _ = someone_elses
    data = {
        "url": "https://attacker.example.net/",
        "description": "mine now",
        "events": ["summary.published"],
        "is_active": "on",
    }
    editor_client.post(endpoint_url(endpoint), data)
    endpoint.refresh_from_db()
    assert endpoint.url == "https://victim.example.org/hook"
    assert endpoint.description == "Victim's hook"


def test_another_editors_endpoint_cannot_be_deleted_in_the_admin(editor_client, someone_elses):
    endpoint, _ = someone_elses
    url = reverse("admin:summaries_webhookendpoint_delete", args=[endpoint.pk])
    assert "Victim's hook" not in editor_client.get(url, follow=True).text
    editor_client.post(url, {"post": "yes"})
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


@pytest.mark.parametrize(
    ("action", "active"),
    [("turn_off", True), ("turn_on", False), ("delete_selected", True), ("send_test_events", True)],
)
def test_bulk_actions_skip_other_editors_endpoints(editor_client, someone_elses, action, active):
    endpoint, _ = someone_elses
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(is_active=active)
    editor_client.post(
        ENDPOINTS, {"action": action, "_selected_action": [str(endpoint.pk)], "post": "yes"}
    )
    endpoint.refresh_from_db()  # still there, as it was, sent nothing
    assert endpoint.is_active == active and endpoint.deliveries.count() == 1


def test_the_delivery_log_hides_deliveries_to_other_editors_endpoints(
    editor_client, editor, someone_elses
):
    endpoint, delivery = someone_elses
    mine = make_delivery(make_endpoint(url="https://mine.example.org/", owner=editor))
    text = page(editor_client, DELIVERIES)
    assert f'href="{delivery_url(mine)}' in text
    assert f'href="{delivery_url(delivery)}' not in text
    assert "Victim's hook" not in text  # not even in the endpoint filter
    filtered = editor_client.get(
        DELIVERIES + f"?endpoint__id__exact={endpoint.pk}", follow=True
    ).text
    assert "victim-error-text" not in filtered
    response = editor_client.get(delivery_url(delivery), follow=True)
    assert "victim-error-text" not in response.text and str(delivery.event_id) not in response.text


def test_an_events_page_lists_only_deliveries_to_the_editors_own_endpoints(
    editor_client, editor, someone_elses
):
    _, delivery = someone_elses
    WebhookDelivery.objects.create(
        event=delivery.event,
        endpoint=make_endpoint(url="https://mine.example.org/", description="Mine", owner=editor),
        created_at=timezone.now(),
    )
    url = reverse("admin:summaries_webhookevent_change", args=[delivery.event_id])
    text = page(editor_client, url)
    assert "Mine" in text
    assert "Victim's hook" not in text and "victim-error-text" not in text


def test_events_sent_only_to_other_editors_endpoints_are_not_listed(editor_client, someone_elses):
    _, delivery = someone_elses
    events = reverse("admin:summaries_webhookevent_changelist")
    assert str(delivery.event_id) not in page(editor_client, events)
    url = reverse("admin:summaries_webhookevent_change", args=[delivery.event_id])
    assert editor_client.get(url).status_code == 302  # "does not exist", back to the list


def test_an_endpoint_without_an_owner_is_only_for_those_who_manage_all(editor_client):
    unowned = make_endpoint(url="https://orphan.example.org/", description="Orphan")
    assert "orphan.example.org" not in page(editor_client, ENDPOINTS)
    assert editor_client.get(endpoint_url(unowned)).status_code == 302


def test_the_manage_all_permission_reaches_every_endpoint(editor_client, editor, someone_elses):
    endpoint, delivery = someone_elses
    unowned = make_endpoint(url="https://orphan.example.org/")
    editor.user_permissions.add(Permission.objects.get(codename="manage_all_webhookendpoints"))
    text = page(editor_client, ENDPOINTS)
    assert "victim.example.org" in text and "orphan.example.org" in text
    assert endpoint.secret in page(editor_client, endpoint_url(endpoint))
    assert unowned.secret in page(editor_client, endpoint_url(unowned))
    assert "victim-error-text" in page(editor_client, delivery_url(delivery))


def test_superusers_manage_every_endpoint(client, superuser, someone_elses):
    endpoint, _ = someone_elses
    assert endpoint.secret in page(client, endpoint_url(endpoint))


# --- Test events, redelivery, secret rotation ---------------------------------------------


def tool_url(name, obj):
    return reverse(f"admin:summaries_{name}", args=[obj.pk])


def queued(callbacks) -> list[tuple[str, tuple]]:
    return [(c.task.name, c.args) for c in callbacks if hasattr(c, "task")]


def test_send_a_test_event_button_queues_a_ping_after_commit(
    editor_client, editor, django_capture_on_commit_callbacks
):
    endpoint = make_endpoint(owner=editor)
    send = tool_url("webhookendpoint_send_test", endpoint)
    assert f'formaction="{send}"' in page(editor_client, endpoint_url(endpoint))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = editor_client.post(send, follow=True)
    assert "A test event is on its way" in response.text
    (delivery,) = endpoint.deliveries.select_related("event")
    assert delivery.event.type == "ping" and delivery.state == State.PENDING
    assert queued(callbacks) == [("summaries.tasks.deliver_webhook", (delivery.pk,))]
    assert editor_client.get(send).status_code == 405  # a link followed sends nothing


def test_send_a_test_event_action(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    off = make_endpoint(url="https://off.example.org/", owner=editor, is_active=False)
    response = run_action(editor_client, "send_test_events", endpoint, off)
    assert "Sent a test event to 1 endpoint(s)." in response.text
    assert "Skipped 1 turned-off endpoint(s)." in response.text
    assert endpoint.deliveries.get().event.type == "ping"
    assert not off.deliveries.exists()


def test_rotate_the_secret_button(editor_client, editor, settings):
    settings.WEBHOOK_SECRET_OVERLAP = 3600
    endpoint = make_endpoint(owner=editor)
    old = endpoint.secret
    response = editor_client.post(tool_url("webhookendpoint_rotate_secret", endpoint), follow=True)
    endpoint.refresh_from_db()
    assert endpoint.secret != old and endpoint.previous_secret == old
    assert "New secret made" in response.text
    assert f'<code class="webhook-secret">{endpoint.secret}</code>' in response.text
    assert "The secret it replaced also signs deliveries until" in response.text
    assert old not in response.text


def test_redeliver_button_and_action(editor_client, editor, django_capture_on_commit_callbacks):
    endpoint = make_endpoint(owner=editor)
    failed = make_delivery(endpoint, state=State.FAILED, attempts=8, error="HTTP 500")
    pending = make_delivery(endpoint, state=State.PENDING)
    redeliver = tool_url("webhookdelivery_redeliver", failed)
    assert f'formaction="{redeliver}"' in page(editor_client, delivery_url(failed))
    assert "Redeliver" not in page(editor_client, delivery_url(pending))  # on its way already
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = editor_client.post(redeliver, follow=True)
    assert "Sending 1 delivery(ies) again." in response.text
    assert queued(callbacks) == [("summaries.tasks.deliver_webhook", (failed.pk,))]
    failed.refresh_from_db()
    assert (failed.state, failed.attempts) == (State.PENDING, 0)

    WebhookDelivery.objects.filter(pk=failed.pk).update(state=State.DELIVERED)
    response = editor_client.post(
        DELIVERIES,
        {"action": "redeliver", "_selected_action": [str(failed.pk), str(pending.pk)]},
        follow=True,
    )
    assert "Sending 1 delivery(ies) again." in response.text
    assert "1 delivery(ies) still on their way: left." in response.text


def test_the_tools_do_not_reach_another_editors_endpoint(editor_client, someone_elses):
    endpoint, delivery = someone_elses
    WebhookDelivery.objects.filter(pk=delivery.pk).update(state=State.DELIVERED)
    secret = endpoint.secret
    assert editor_client.post(tool_url("webhookendpoint_send_test", endpoint)).status_code == 404
    assert (
        editor_client.post(tool_url("webhookendpoint_rotate_secret", endpoint)).status_code == 404
    )
    assert editor_client.post(tool_url("webhookdelivery_redeliver", delivery)).status_code == 404
    run_action(editor_client, "send_test_events", endpoint)
    editor_client.post(DELIVERIES, {"action": "redeliver", "_selected_action": [str(delivery.pk)]})
    endpoint.refresh_from_db()
    delivery.refresh_from_db()
    assert endpoint.secret == secret and endpoint.deliveries.count() == 1
    assert delivery.state == State.DELIVERED


def test_viewers_have_no_tools(client):
    viewer = UserFactory(is_staff=True)
    viewer.save()
    viewer.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_webhookendpoint", "view_webhookdelivery"])
    )
    client.force_login(viewer)
    endpoint = make_endpoint(owner=viewer)
    delivery = make_delivery(endpoint, state=State.FAILED)
    assert "Send a test event" not in page(client, endpoint_url(endpoint))
    assert "Redeliver" not in page(client, delivery_url(delivery))
    assert client.post(tool_url("webhookendpoint_send_test", endpoint)).status_code == 403
    assert client.post(tool_url("webhookdelivery_redeliver", delivery)).status_code == 403
    assert not endpoint.deliveries.exclude(pk=delivery.pk).exists()


def test_the_delivery_log_names_the_summary(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    body = {
        "type": "summary.published",
        "data": {"summary": {"id": 41, "slug": "s", "title": "Talk"}},
    }
    delivery = make_delivery(endpoint, body=json.dumps(body))
    summary_link = reverse("admin:summaries_summary_change", args=[41])
    assert f'<a href="{summary_link}">Talk</a>' in page(editor_client, DELIVERIES)
    assert f'<a href="{summary_link}">Talk</a>' in page(editor_client, delivery_url(delivery))


def test_a_manager_hands_an_endpoint_without_an_owner_to_an_editor(editor_client, editor):
    editor.user_permissions.add(Permission.objects.get(codename="manage_all_webhookendpoints"))
    heir = EditorFactory()
    unowned = make_endpoint(url="https://orphan.example.org/")
    data = form_fields(editor_client.get(endpoint_url(unowned)), form_id="webhookendpoint_form")
    data.update(events=unowned.events, owner=str(heir.pk))
    assert editor_client.post(endpoint_url(unowned), data).status_code == 302
    unowned.refresh_from_db()
    assert unowned.owner == heir


def test_an_owner_cannot_give_an_endpoint_away(editor_client, editor):
    endpoint = make_endpoint(owner=editor)
    response = editor_client.get(endpoint_url(endpoint))
    assert 'name="owner"' not in response.text
    data = form_fields(response, form_id="webhookendpoint_form")
    data.update(events=endpoint.events, owner=str(EditorFactory().pk))
    assert editor_client.post(endpoint_url(endpoint), data).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.owner == editor


@pytest.mark.parametrize("url", ["http://localhost/hook", "http://metadata.google.internal/"])
def test_the_form_refuses_local_and_cloud_metadata_names(editor_client, url):
    data = add_form_data(editor_client)
    data.update(url=url, events=["summary.published"], is_active="on")

    response = editor_client.post(reverse("admin:summaries_webhookendpoint_add"), data)

    assert response.status_code == 200
    assert "Deliveries cannot be sent to this URL" in response.text
    assert not WebhookEndpoint.objects.exists()


def test_admin_pages_send_a_content_security_policy(editor_client):
    for path in (reverse("admin:index"), reverse("admin:summaries_webhookendpoint_add")):
        policy = editor_client.get(path)["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
        assert directives["script-src"] == "'self'", path
        assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    login = Client().get(reverse("admin:login"))
    assert "script-src 'self'" in login["Content-Security-Policy"]
