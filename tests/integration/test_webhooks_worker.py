"""Webhook deliveries through a real broker and real Celery worker processes.

The receiver listens on 127.0.0.2, which the workers may send to because
WEBHOOK_ALLOWED_NETWORKS is set in their environment below.
"""

import json
import os
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from summaries.editing import workflow
from summaries.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from summaries.webhooks import delivery, endpoints, signing
from summaries.webhooks.tasks import deliver_webhook
from tests.factories import SummaryFactory
from tests.integration.test_source_checks import (
    QUEUE,
    PrivateRedis,
    needs_redis_server,
    wait_until,
)
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.integration

# Read by the worker processes when they start (set when the module is collected, before
# the session's worker starts in whichever module first needs it).
os.environ["WEBHOOK_ALLOWED_NETWORKS"] = "127.0.0.2/32"
os.environ["WEBHOOK_RETRY_DELAY"] = "0.5"
DELIVER_TASK = "summaries.tasks.deliver_webhook"
VISIBILITY = 10  # seconds until the broker hands an unacknowledged task out again


@pytest.fixture
def receiver():
    started = Receiver().start()
    yield started
    started.stop()


def test_a_published_summary_reaches_the_receiver_after_a_500_signed(
    transactional_db, celery_worker, receiver, settings
):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.2/32"]  # for this process's model checks
    receiver.answers = [500, 200]
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, events=["summary.published"])
    summary = SummaryFactory()
    workflow.publish_summary(summary=summary)  # commits: the task goes to the worker
    sent = WebhookDelivery.objects.get()
    wait_until(
        lambda: WebhookDelivery.objects.filter(pk=sent.pk, state="delivered").exists(),
        "the delivery was not delivered after its retry",
        celery_worker,
    )
    sent.refresh_from_db()
    assert sent.attempts == 2 and [e["status_code"] for e in sent.log] == [500, 200]
    assert len(receiver.received) == 2
    for request in receiver.received:
        event = signing.verify(endpoint.secret, request.body, request.headers)
        assert event["type"] == "summary.published"
        assert event["data"]["summary"]["slug"] == summary.video.slug
        assert request.headers["webhook-id"] == str(sent.event_id)


def test_a_scheduled_summary_is_told_by_the_worker_as_it_goes_live(
    transactional_db, celery_worker, receiver, settings
):
    """The sweep queues the announcement with the publish time as its ETA; the worker holds
    it and tells of the summary when it goes live: seconds, not the minute or more that a
    sweep period and a busy queue add to polling."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, events=["summary.published"])
    summary = SummaryFactory()
    at = timezone.now() + timedelta(seconds=3)
    workflow.publish_summary(summary=summary, at=at)
    assert delivery.sweep()["upcoming"] == 1  # commits: the announcement goes to the broker
    wait_until(
        lambda: WebhookDelivery.objects.filter(endpoint=endpoint).exists(),
        "the worker did not tell of the summary",
        celery_worker,
    )
    sent = WebhookDelivery.objects.select_related("event").get()
    assert timedelta(0) <= sent.created_at - at < timedelta(seconds=10)
    assert json.loads(sent.event.body)["data"]["summary"]["slug"] == summary.video.slug
    # The worker queued its delivery on the default queue, which this test's worker does
    # not consume (it takes the tests' own queue): hand it over as the worker would.
    deliver_webhook.delay(sent.pk)
    wait_until(lambda: len(receiver.received) == 1, "the event was not sent", celery_worker)
    assert signing.verify(endpoint.secret, receiver.received[0].body, receiver.received[0].headers)


def test_a_test_event_after_a_rotation_carries_both_signatures(
    transactional_db, celery_worker, receiver, settings
):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, events=["summary.published"])
    old = endpoint.secret
    endpoint = endpoints.rotate_secret(endpoint=endpoint)
    sent = endpoints.send_test_event(endpoint=endpoint)  # commits: the worker sends it
    wait_until(lambda: len(receiver.received) == 1, "the test event was not sent", celery_worker)
    (request,) = receiver.received
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, endpoint.secret):
        assert signing.verify(secret, request.body, request.headers)["type"] == "ping"
    wait_until(
        lambda: WebhookDelivery.objects.filter(pk=sent.pk, state="delivered").exists(),
        "the test event was not recorded as delivered",
        celery_worker,
    )


@pytest.fixture
def broker():
    """A redis-server of this test only (the broker of the workers it kills and starts).
    Requested before celery_processes, so that it outlives them."""
    server = PrivateRedis()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.app.close()


def _pending_delivery(endpoint: WebhookEndpoint) -> WebhookDelivery:
    now = timezone.now()
    event = WebhookEvent.objects.create(
        id=uuid.uuid4(),
        type="summary.published",
        body=json.dumps({"type": "summary.published", "data": {}}),
        created_at=now,
    )
    return WebhookDelivery.objects.create(
        event=event, endpoint=endpoint, next_attempt_at=now, created_at=now
    )


@needs_redis_server
def test_a_worker_killed_mid_delivery_never_sends_it_twice(receiver, broker, celery_processes):
    """The receiver holds the request; the worker is SIGKILLed with the task unacknowledged.
    The broker hands the task to another worker once its visibility timeout passes: it
    must send nothing (the delivery is claimed), and the sweeper marks it interrupted."""
    receiver.answers = ["hang"]
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, events=["summary.published"])
    sent = _pending_delivery(endpoint)
    app = broker.app
    environment = {"REDIS_URL": broker.url, "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY)}
    doomed = celery_processes.worker("curation-hook-doomed", queue=QUEUE, app=app, **environment)
    task = app.send_task(DELIVER_TASK, args=[sent.pk], queue=QUEUE)
    wait_until(lambda: len(receiver.received) == 1, "the worker sent nothing", doomed)
    doomed.kill()
    live = celery_processes.worker("curation-hook-live", queue=QUEUE, app=app, **environment)
    wait_until(
        lambda: f"{DELIVER_TASK} {task.id} SUCCESS" in live.log_text(),
        "the killed worker's task was not handed out again",
        live,
        timeout=VISIBILITY * 4,
    )
    assert len(receiver.received) == 1
    sent.refresh_from_db()
    assert sent.state == WebhookDelivery.State.SENDING and sent.attempts == 1
    delivery.sweep(now=sent.claimed_at + timedelta(seconds=10 + 61))  # WEBHOOK_DEADLINE 10 s
    sent.refresh_from_db()
    assert sent.state == WebhookDelivery.State.INTERRUPTED
    assert len(receiver.received) == 1
