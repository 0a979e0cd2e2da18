"""A Celery worker outlives restarts of its Redis while it holds a retry waiting for its
countdown, and every task queued meanwhile runs.

A retry waiting for its countdown is a message the worker has taken and not acknowledged.
When Redis goes away the worker gives such messages back as it closes the lost connection;
that must not stop it (see curation/celery.py). Redis here keeps its data over a restart
(saved when stopped, as a service manager stops it), so the retry is still in Redis's
list of unacknowledged messages afterwards and is handed out again once the visibility
timeout has passed. (A Redis that loses its data loses the retry with it: the webhook
sweeper queues such deliveries again, summaries/webhooks/delivery.py.)
"""

import json
import os
import time
from collections import Counter
from datetime import datetime

import pytest
import redis
from celery import Celery

from summaries.models import WebhookDelivery, WebhookEndpoint
from tests.integration.conftest import Worker, wait_for_ping
from tests.integration.test_source_checks import (
    QUEUE,
    PrivateRedis,
    needs_redis_server,
    wait_until,
)
from tests.integration.test_webhooks_worker import DELIVER_TASK, _pending_delivery
from tests.webhook_receiver import Received, Receiver

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set"),
    needs_redis_server,
]

RESTARTS = 5
# The first retry waits 2-4 s (WEBHOOK_RETRY_DELAY, halved by jitter at most): long enough
# to restart Redis under it, short enough for a quick test.
RETRY_DELAY = 4
# Above the longest countdown, so that a retry is only handed out again after a restart.
VISIBILITY = 5


class FailingFirstAttempts(Receiver):
    """Answers 500 to the first request of each delivery (by its webhook-id), 204 after."""

    def next_answer(self, request: Received) -> int:
        with self.lock:
            self.received.append(request)
            sent = [
                r for r in self.received if r.headers["webhook-id"] == request.headers["webhook-id"]
            ]
            return 500 if len(sent) == 1 else 204


@pytest.fixture
def receiver():
    started = FailingFirstAttempts().start()
    yield started
    started.stop()


@pytest.fixture
def broker(tmp_path):
    """A redis-server of this test that saves its data when stopped and loads it when
    started again. Requested before celery_processes, so that it outlives the worker."""
    server = PrivateRedis(tmp_path / "redis")
    server.data_dir.mkdir()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.app.close()


def held_retry_eta(broker: PrivateRedis, task_id: str) -> datetime | None:
    """The ETA of the retry of `task_id` that a worker has taken and not acknowledged."""
    for value in broker.client.hvals("unacked"):
        headers = json.loads(value)[0]["headers"]
        if headers["id"] == task_id and headers["retries"] >= 1:
            return datetime.fromisoformat(headers["eta"])
    return None


def wait_for_worker(worker: Worker, app: Celery) -> None:
    """Until the worker answers a ping after a restart; fail if it exits or never does.

    The test's own pooled connection to the old server fails its first command (and is
    dropped then): ping again once.
    """
    try:
        wait_for_ping(worker, app)
    except redis.exceptions.ConnectionError:
        wait_for_ping(worker, app)


def test_a_worker_holding_a_counted_down_retry_survives_five_redis_restarts_and_runs_every_task(
    receiver, broker, celery_processes
):
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, events=["summary.published"])
    worker = celery_processes.worker(
        "curation-redis-restart",
        queue=QUEUE,
        app=broker.app,
        REDIS_URL=broker.url,
        CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY),
        WEBHOOK_RETRY_DELAY=str(RETRY_DELAY),
        WEBHOOK_ALLOWED_NETWORKS="127.0.0.2/32",
    )
    deliveries = []
    for restart in range(1, RESTARTS + 1):
        # A new delivery each time: its first attempt gets a 500 and the worker holds the
        # retry until its countdown ends. Retries held before an earlier restart may be
        # handed out again meanwhile: they wait in Redis or run, as they come.
        sent = _pending_delivery(endpoint)
        deliveries.append(sent.pk)
        task = broker.app.send_task(DELIVER_TASK, args=[sent.pk], queue=QUEUE)
        wait_until(
            lambda task=task: held_retry_eta(broker, task.id) is not None,
            f"before restart {restart}, the worker did not take the retry after a 500",
            worker,
        )
        eta = held_retry_eta(broker, task.id)
        broker.stop()
        assert eta.timestamp() > time.time(), "the countdown ended before Redis stopped"
        broker.start()
        wait_for_worker(worker, broker.app)

    wait_until(
        lambda: (
            WebhookDelivery.objects.filter(pk__in=deliveries, state="delivered").count() == RESTARTS
        ),
        "not every delivery was delivered after the restarts",
        worker,
    )
    assert worker.process.poll() is None, worker.log_tail()
    assert worker.log_text().count("Connection to broker lost") >= RESTARTS
    # Each delivery was tried once (500) and delivered once (204), never sent again.
    statuses = {
        pk: [entry["status_code"] for entry in log]
        for pk, log in WebhookDelivery.objects.filter(pk__in=deliveries).values_list("pk", "log")
    }
    assert statuses == dict.fromkeys(deliveries, [500, 204])
    events = WebhookDelivery.objects.filter(pk__in=deliveries).values_list("event_id", flat=True)
    sent_per_event = Counter(request.headers["webhook-id"] for request in receiver.received)
    assert sent_per_event == dict.fromkeys(map(str, events), 2)
    wait_until(
        lambda: broker.client.hlen("unacked") == 0,
        "the broker still holds unacknowledged messages",
        worker,
    )


# Seconds Redis stops answering before it goes away: longer than the interval (2 s) of the
# worker's event heartbeat, so that one is due while Redis holds its reply.
STALL = 3
SWEEP_TASK = "summaries.tasks.sweep_webhooks"


def test_a_worker_notices_a_broker_that_stalls_before_it_goes_and_consumes_once_it_returns(
    broker, celery_processes
):
    """Redis stops answering with its connections open (saving its data on a busy disk, a
    frozen machine), then goes away. The idle worker notices the lost broker within seconds,
    while Redis is still down, and takes tasks again once it is back."""
    worker = celery_processes.worker(
        "curation-redis-stall", queue=QUEUE, app=broker.app, REDIS_URL=broker.url
    )
    broker.stop(stall=STALL)
    wait_until(
        lambda: "Connection to broker lost" in worker.log_text(),
        "the worker did not notice the broker was gone",
        worker,
        timeout=30,
    )
    broker.start()
    wait_for_worker(worker, broker.app)
    task = broker.app.send_task(SWEEP_TASK, queue=QUEUE)
    wait_until(
        lambda: f"{SWEEP_TASK} {task.id} SUCCESS" in worker.log_text(),
        "the worker took no task after Redis came back",
        worker,
        timeout=30,
    )
    assert worker.process.poll() is None, worker.log_tail()
