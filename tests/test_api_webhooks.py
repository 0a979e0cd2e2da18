"""Registering webhook endpoints through the API, and reading their delivery logs."""

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from summaries.editing import workflow
from summaries.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from summaries.webhooks import delivery
from tests.factories import EditorFactory, SummaryFactory, UserFactory
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db

LIST = "/api/v1/webhooks/"


@pytest.fixture(autouse=True)
def webhook_settings(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    settings.WEBHOOK_DEADLINE = 1.0


def test_anonymous_clients_and_staff_without_the_permission_see_nothing():
    WebhookEndpoint.objects.create(url="https://hooks.example.com/", events=["summary.published"])
    assert APIClient().get(LIST).status_code == 401
    staff = APIClient()
    staff.force_authenticate(UserFactory(is_staff=True))
    assert staff.get(LIST).status_code == 403
    assert staff.post(LIST, {"url": "https://a.example/", "events": []}).status_code == 403
    outsider = APIClient()
    outsider.force_authenticate(UserFactory())  # has a token, not staff
    assert outsider.get(LIST).status_code == 403


def test_an_editor_registers_an_endpoint_and_gets_its_secret_once(editor_api):
    answer = editor_api.post(
        LIST,
        {"url": "https://hooks.example.com/curation", "events": ["summary.published"]},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    created = answer.json()
    endpoint = WebhookEndpoint.objects.get(pk=created["id"])
    assert created["secret"] == endpoint.secret and endpoint.secret.startswith("whsec_")
    assert endpoint.events == ["summary.published"] and endpoint.owner is not None
    shown = editor_api.get(f"{LIST}{endpoint.pk}/").json()
    assert "secret" not in shown and shown["is_active"] is True
    assert editor_api.get(LIST).json()["results"][0]["id"] == endpoint.pk


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"url": "http://127.0.0.1:8000/", "events": ["summary.published"]}, "url"),
        ({"url": "http://10.0.0.5/hook", "events": ["summary.published"]}, "url"),
        ({"url": "ftp://hooks.example.com/", "events": ["summary.published"]}, "url"),
        ({"url": "https://user:pw@hooks.example.com/", "events": ["summary.published"]}, "url"),
        ({"url": "https://hooks.example.com/", "events": []}, "events"),
        ({"url": "https://hooks.example.com/", "events": ["summary.deleted"]}, "events"),
        ({"url": "https://hooks.example.com/", "events": "summary.published"}, "events"),
        ({"url": "https://hooks.example.com/", "events": ["summary.published"] * 2}, "events"),
        ({"events": ["summary.published"]}, "url"),
    ],
)
def test_bad_registrations_are_a_400_naming_the_field(editor_api, payload, field):
    answer = editor_api.post(LIST, payload, format="json")
    assert answer.status_code == 400
    assert field in answer.json()["errors"] if "errors" in answer.json() else answer.json()
    assert not WebhookEndpoint.objects.exists()


def test_turning_a_disabled_endpoint_on_again_clears_its_failures(editor_api, editor):
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example.com/", events=["summary.published"], owner=editor
    )
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        is_active=False, failures_in_a_row=10, disabled_reason="10 deliveries in a row failed"
    )
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(disabled_at="2026-12-01T00:00Z")
    answer = editor_api.patch(f"{LIST}{endpoint.pk}/", {"is_active": True}, format="json")
    assert answer.status_code == 200
    assert answer.json()["failures_in_a_row"] == 0 and answer.json()["disabled_reason"] == ""


def test_the_delivery_log_shows_each_attempt(editor_api, editor):
    receiver = Receiver().start()
    try:
        receiver.answers = [500, 200]
        endpoint = WebhookEndpoint.objects.create(
            url=receiver.url, events=["summary.published"], owner=editor
        )
        workflow.publish_summary(summary=SummaryFactory())
        sent = WebhookDelivery.objects.get()
        delivery.deliver(delivery_id=sent.pk)
        sent.refresh_from_db()
        delivery.deliver(delivery_id=sent.pk, now=sent.next_attempt_at)
    finally:
        receiver.stop()
    answer = editor_api.get(f"{LIST}{endpoint.pk}/deliveries/")
    assert answer.status_code == 200
    (shown,) = answer.json()["results"]
    assert shown["event_type"] == "summary.published" and shown["state"] == "delivered"
    assert shown["event_id"] == str(sent.event_id) and shown["attempts"] == 2
    assert [entry["status_code"] for entry in shown["log"]] == [500, 200]


def test_an_editor_removes_an_endpoint_with_its_log(editor_api, editor):
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example.com/", events=["summary.published"], owner=editor
    )
    assert editor_api.delete(f"{LIST}{endpoint.pk}/").status_code == 204
    assert not WebhookEndpoint.objects.exists()


def test_the_schema_documents_the_signature_and_that_reads_need_credentials(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    listing = schema["paths"]["/api/v1/webhooks/"]["get"]
    assert "webhook-signature" in listing["description"]
    assert {} not in listing.get("security", [])
    assert "403" in listing["responses"]


# --- Ownership: another editor's endpoint is out of reach ----------------------------------


@pytest.fixture
def someone_elses():
    """An endpoint another editor registered, with a delivery in its log."""
    endpoint = WebhookEndpoint.objects.create(
        url="https://victim.example.org/hook",
        description="Victim's hook",
        events=["summary.published"],
        owner=EditorFactory(),
    )
    now = timezone.now()
    event = WebhookEvent.objects.create(
        type="summary.published", body='{"data": {}}', created_at=now
    )
    WebhookDelivery.objects.create(
        event=event, endpoint=endpoint, created_at=now, error="victim-error-text"
    )
    return endpoint


def test_the_list_shows_only_the_editors_own_endpoints(editor_api, editor, someone_elses):
    mine = WebhookEndpoint.objects.create(
        url="https://mine.example.org/", events=["summary.published"], owner=editor
    )
    assert [e["id"] for e in editor_api.get(LIST).json()["results"]] == [mine.pk]


def test_another_editors_endpoint_is_a_404(editor_api, someone_elses):
    assert editor_api.get(f"{LIST}{someone_elses.pk}/").status_code == 404


def test_another_editors_endpoint_cannot_be_re_pointed(editor_api, someone_elses):
    """The attack: PATCH the URL to one's own receiver, then read the signed deliveries."""
    answer = editor_api.patch(
        f"{LIST}{someone_elses.pk}/", {"url": "https://attacker.example.net/"}, format="json"
    )
    assert answer.status_code == 404
    answer = editor_api.put(
        f"{LIST}{someone_elses.pk}/",
        {"url": "https://attacker.example.net/", "events": ["summary.published"]},
        format="json",
    )
    assert answer.status_code == 404
    someone_elses.refresh_from_db()
    assert someone_elses.url == "https://victim.example.org/hook"


def test_another_editors_endpoint_cannot_be_deleted(editor_api, someone_elses):
    assert editor_api.delete(f"{LIST}{someone_elses.pk}/").status_code == 404
    assert WebhookEndpoint.objects.filter(pk=someone_elses.pk).exists()


def test_another_editors_delivery_log_is_a_404(editor_api, someone_elses):
    answer = editor_api.get(f"{LIST}{someone_elses.pk}/deliveries/")
    assert answer.status_code == 404 and "victim-error-text" not in answer.text


def test_an_endpoint_without_an_owner_is_only_for_those_who_manage_all(editor_api, editor):
    unowned = WebhookEndpoint.objects.create(
        url="https://orphan.example.org/", events=["summary.published"]
    )
    assert editor_api.get(LIST).json()["results"] == []
    assert editor_api.get(f"{LIST}{unowned.pk}/").status_code == 404
    editor.user_permissions.add(Permission.objects.get(codename="manage_all_webhookendpoints"))
    manager = APIClient()
    manager.force_authenticate(type(editor).objects.get(pk=editor.pk))  # permissions afresh
    assert manager.get(f"{LIST}{unowned.pk}/").status_code == 200


def test_the_manage_all_permission_reaches_every_endpoint(editor, someone_elses):
    editor.user_permissions.add(Permission.objects.get(codename="manage_all_webhookendpoints"))
    manager = APIClient()
    manager.force_authenticate(type(editor).objects.get(pk=editor.pk))
    assert [e["id"] for e in manager.get(LIST).json()["results"]] == [someone_elses.pk]
    answer = manager.get(f"{LIST}{someone_elses.pk}/deliveries/")
    assert answer.json()["results"][0]["error"] == "victim-error-text"
    answer = manager.patch(f"{LIST}{someone_elses.pk}/", {"description": "Fixed"}, format="json")
    assert answer.status_code == 200
    someone_elses.refresh_from_db()
    assert someone_elses.description == "Fixed" and someone_elses.owner != editor


# --- Test events, redelivery, secret rotation ---------------------------------------------


def queued(callbacks) -> list[tuple[str, tuple]]:
    return [(c.task.name, c.args) for c in callbacks if hasattr(c, "task")]


@pytest.fixture
def mine(editor):
    return WebhookEndpoint.objects.create(
        url="https://mine.example.org/", events=["summary.updated"], owner=editor
    )


def test_posting_test_sends_a_ping_after_commit(
    editor_api, mine, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        answer = editor_api.post(f"{LIST}{mine.pk}/test/")
    assert answer.status_code == 202, answer.json()
    sent = WebhookDelivery.objects.get(endpoint=mine)
    assert answer.json() == {
        "id": sent.pk,
        "event_id": str(sent.event_id),
        "event_type": "ping",
        "summaries": [],
        "state": "pending",
        "attempts": 0,
        "status_code": None,
        "error": "",
        "response_ms": None,
        "next_attempt_at": answer.json()["next_attempt_at"],
        "delivered_at": None,
        "created_at": answer.json()["created_at"],
        "log": [],
    }
    assert queued(callbacks) == [("summaries.tasks.deliver_webhook", (sent.pk,))]


def test_a_test_event_to_a_turned_off_endpoint_is_a_409(editor_api, mine):
    WebhookEndpoint.objects.filter(pk=mine.pk).update(is_active=False)
    answer = editor_api.post(f"{LIST}{mine.pk}/test/")
    assert answer.status_code == 409
    assert not WebhookDelivery.objects.exists()


def test_rotating_answers_the_new_secret_and_until_when_the_old_one_signs(
    editor_api, mine, settings
):
    settings.WEBHOOK_SECRET_OVERLAP = 3600
    old = mine.secret
    answer = editor_api.post(f"{LIST}{mine.pk}/rotate-secret/")
    assert answer.status_code == 200
    mine.refresh_from_db()
    assert answer.json() == {
        "id": mine.pk,
        "secret": mine.secret,
        "previous_secret_expires_at": answer.json()["previous_secret_expires_at"],
    }
    assert mine.secret != old and mine.previous_secret == old
    assert mine.previous_secret_expires_at.isoformat().startswith(
        answer.json()["previous_secret_expires_at"][:19]
    )


def test_redelivering_a_finished_delivery(editor_api, mine, django_capture_on_commit_callbacks):
    sent = _delivery(mine, state=WebhookDelivery.State.FAILED, attempts=8)
    url = f"{LIST}{mine.pk}/deliveries/{sent.pk}/redeliver/"
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        answer = editor_api.post(url)
    assert answer.status_code == 202
    assert answer.json()["state"] == "pending" and answer.json()["attempts"] == 0
    assert queued(callbacks) == [("summaries.tasks.deliver_webhook", (sent.pk,))]
    assert editor_api.post(url).status_code == 409  # on its way now


def test_a_delivery_is_redelivered_only_under_its_own_endpoint(editor_api, editor, mine):
    other_of_mine = WebhookEndpoint.objects.create(
        url="https://two.example.org/", events=["summary.updated"], owner=editor
    )
    sent = _delivery(other_of_mine, state=WebhookDelivery.State.FAILED)
    answer = editor_api.post(f"{LIST}{mine.pk}/deliveries/{sent.pk}/redeliver/")
    assert answer.status_code == 404


def test_the_tools_do_not_reach_another_editors_endpoint(editor_api, someone_elses):
    secret = someone_elses.secret
    delivery = someone_elses.deliveries.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(state=WebhookDelivery.State.FAILED)
    base = f"{LIST}{someone_elses.pk}/"
    assert editor_api.post(f"{base}test/").status_code == 404
    assert editor_api.post(f"{base}rotate-secret/").status_code == 404
    assert editor_api.post(f"{base}deliveries/{delivery.pk}/redeliver/").status_code == 404
    someone_elses.refresh_from_db()
    delivery.refresh_from_db()
    assert someone_elses.secret == secret and someone_elses.deliveries.count() == 1
    assert delivery.state == WebhookDelivery.State.FAILED


def test_the_tools_need_the_change_permission(mine):
    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_webhookendpoint", "add_webhookendpoint"])
    )
    mine.owner = viewer
    mine.save()
    client = APIClient()
    client.force_authenticate(viewer)
    assert client.get(f"{LIST}{mine.pk}/").status_code == 200
    assert client.post(f"{LIST}{mine.pk}/test/").status_code == 403
    assert client.post(f"{LIST}{mine.pk}/rotate-secret/").status_code == 403


def test_the_delivery_log_names_the_summary(editor_api, editor):
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example.com/", events=["summary.published"], owner=editor
    )
    summary = SummaryFactory()
    workflow.publish_summary(summary=summary)
    (shown,) = editor_api.get(f"{LIST}{endpoint.pk}/deliveries/").json()["results"]
    assert shown["summaries"] == [
        {"id": summary.pk, "slug": summary.video.slug, "title": summary.video.title}
    ]


def _delivery(endpoint, **values):
    now = timezone.now()
    event = WebhookEvent.objects.create(type="summary.updated", body="{}", created_at=now)
    return WebhookDelivery.objects.create(
        event=event, endpoint=endpoint, created_at=now, next_attempt_at=now, **values
    )


def test_the_delivery_log_costs_as_many_queries_for_many_deliveries(editor_api, mine):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert editor_api.get(f"{LIST}{mine.pk}/deliveries/").status_code == 200
        return len(queries)

    _delivery(mine)
    count()  # the user's permissions are cached from here on
    one = count()
    for _ in range(5):
        _delivery(mine)
    assert count() == one


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/hook",
        "https://localhost./hook",
        "https://api.localhost/hook",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata/computeMetadata/v1/",
        "http://instance-data/latest/meta-data/",
        "http://instance-data.ec2.internal/latest/meta-data/",
        "https://intranet/hook",
    ],
)
def test_local_and_cloud_metadata_names_are_refused_at_registration(editor_api, url):
    answer = editor_api.post(LIST, {"url": url, "events": ["summary.published"]}, format="json")
    assert answer.status_code == 400
    (message, *_) = answer.json()["error"]["fields"]["url"]
    assert message.startswith("Deliveries cannot be sent to this URL")
    assert not WebhookEndpoint.objects.exists()


def test_a_name_in_an_allowed_network_may_be_registered(editor_api, settings):
    """The delivery's rules: localhost resolves to loopback, which an allowed network opens."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    answer = editor_api.post(
        LIST, {"url": "http://localhost:8123/hook", "events": ["summary.published"]}, format="json"
    )
    assert answer.status_code == 201, answer.json()
