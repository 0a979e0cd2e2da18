"""Source checks through a real broker and a real Celery worker process.

The loopback test server listens on 127.0.0.2, which the worker may contact because
FETCH_ALLOWED_NETWORKS is set in its environment below; 127.0.0.1 plays the internal
address that must never be reached.
"""

import collections
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis
from celery import Celery
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from summaries import tasks
from summaries.checking import record
from summaries.models import Citation, Source, SourceCheck
from tests.admin_forms import form_fields
from tests.factories import ChapterFactory
from tests.integration.conftest import Worker, wait_for_ping
from tests.test_linkcheck_fetch import Server, page, redirect, send, title_page

pytestmark = pytest.mark.integration

# Read by the worker processes, which copy this process's environment when they start (the
# session worker may start in another module, so this is set when the module is collected).
os.environ["FETCH_ALLOWED_NETWORKS"] = "127.0.0.2/31"
os.environ.setdefault("FETCH_DEADLINE", "5")
TIMEOUT = 60


def start_server(host: str) -> Server:
    server = Server(host, host)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


@pytest.fixture
def servers():
    started = {"site": start_server("127.0.0.2"), "internal": start_server("127.0.0.1")}
    yield started
    for server in started.values():
        server.stopping.set()
        server.shutdown()
        server.server_close()


def url(server: Server, path: str) -> str:
    return f"http://{server.server_address[0]}:{server.port}{path}"


def wait_until(condition, message, *processes: Worker, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    logs = "\n".join(f"--- {p.hostname}:\n{p.log_tail()}" for p in processes)
    pytest.fail(f"{message} within {timeout}s:\n{logs}")


def test_a_save_queues_checks_that_the_worker_records(
    transactional_db, celery_worker, servers, client, django_user_model, settings
):
    # The editor's links must pass the same address policy the worker fetches with.
    settings.FETCH_ALLOWED_NETWORKS = os.environ["FETCH_ALLOWED_NETWORKS"].split(",")
    site, internal = servers["site"], servers["internal"]
    ok, gone, sneaky = url(site, "/ok"), url(site, "/gone"), url(site, "/sneaky")
    site.routes["/ok"] = page(body=title_page("Fast", "It is 2.5× faster."))
    site.routes["/sneaky"] = redirect(302, url(internal, "/secret"))
    internal.routes["/secret"] = page(body="secret")
    chapter = ChapterFactory(
        body=f"It is 2.5 times faster [a]({ok}). It went [b]({gone}). It hid [c]({sneaky})."
    )
    summary = chapter.summary
    # A superuser: the Editors group (a data migration) is gone after a transactional flush.
    client.force_login(
        django_user_model.objects.create(
            username="integration-checker", is_staff=True, is_superuser=True
        )
    )
    change = reverse("admin:summaries_summary_change", args=[summary.pk])

    response = client.post(change, form_fields(client.get(change)))  # commits, then queues
    assert response.status_code == 302

    wait_until(
        lambda: not Source.objects.filter(last_checked_at__isnull=True).exists(),
        "the worker did not record every source",
        celery_worker,
    )
    states = dict(Source.objects.values_list("url", "state"))
    assert states == {ok: "ok", gone: "broken", sneaky: "blocked"}
    assert internal.hits["/secret"] == 0
    assert SourceCheck.objects.count() == 3
    assert Citation.objects.get(url=ok).verdict in ("supported", "no_phrase")
    assert not Source.objects.exclude(check_token="").exists()


# --- Reliability: a killed worker, a restarted broker -------------------------------------
#
# Each test runs its own redis-server (no persistence) on a free loopback port: the broker,
# the cache and the host limiter of the Celery processes it starts, and of nothing else. So
# they run beside any database and broker the other tests use, and restart nobody's Redis.

REDIS_SERVER = shutil.which("redis-server")
needs_redis_server = pytest.mark.skipif(
    not REDIS_SERVER, reason="redis-server is not installed (these tests run their own)"
)
QUEUE = "celery"  # the default queue, on the test's own broker: beat and workers send there
DISPATCH_TASK = tasks.dispatch_source_checks.name  # what beat sends (also the sweeper)
# The line a check batch logs as it starts (summaries/checking/tasks.py), with its task id.
BATCH_RECEIVED = re.compile(r"check batch \w+ started: .* task_id=([0-9a-f-]+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PrivateRedis:
    """A redis-server of one test on a free loopback port.

    Without `data_dir` it keeps nothing over a restart; with one it saves its data there
    when stopped (SIGTERM, as a service manager stops it) and loads it when started again.
    """

    def __init__(self, data_dir: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None
        self.client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        # Sends to and pings the test's processes (the current app uses the shared broker).
        self.app = Celery("curation-private-broker", broker=self.url, set_as_current=False)
        self.app.conf.broker_connection_retry_on_startup = True

    def start(self) -> None:
        command = [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port)]
        command += ["--appendonly", "no"]
        if self.data_dir is None:
            command += ["--save", ""]
        else:
            command += ["--save", "3600 1", "--dir", str(self.data_dir)]
        self.process = subprocess.Popen(  # noqa: S603 - fixed arguments
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if self.client.ping():
                    return
            except redis.RedisError:
                time.sleep(0.1)
        self.stop()
        pytest.fail(f"redis-server did not start on port {self.port}")

    def stop(self, stall: float = 0) -> None:
        """Stop the server. With `stall`, it first stops answering for that many seconds
        with its connections open (as one saving its data on a busy disk, or behind a
        network partition, does), then goes away."""
        if self.process is not None and self.process.poll() is None:
            if stall:
                self.process.send_signal(signal.SIGSTOP)
                time.sleep(stall)
            self.process.terminate()  # handled once the server runs again
            if stall:
                self.process.send_signal(signal.SIGCONT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@pytest.fixture
def private_redis(request, tmp_path):
    """Request it before celery_processes: the processes are stopped before their broker.

    Parametrize it indirectly with True for a Redis that keeps its data over a restart.
    """
    server = PrivateRedis(tmp_path / "redis" if getattr(request, "param", False) else None)
    if server.data_dir is not None:
        server.data_dir.mkdir()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.app.close()


class Gate:
    """A route of a test server: answers the first `answered` requests at once and holds
    the rest (catching a worker with requests in flight) until `open()`, or until the server
    stops."""

    def __init__(self, server: Server, answered: int) -> None:
        self.server = server
        self.answered = answered
        self.requests = 0
        self.lock = threading.Lock()
        self.opened = threading.Event()

    def open(self) -> None:
        self.opened.set()

    def route(self, handler) -> None:
        with self.lock:
            self.requests += 1
            hold = self.requests > self.answered
        while hold and not self.opened.wait(0.1) and not self.server.stopping.is_set():
            pass
        with contextlib.suppress(OSError):  # the worker that asked was killed meanwhile
            send(handler, 200, b"<title>Held</title>")


def received(worker: Worker, task_id: str) -> int:
    """How often the worker's log says it started the batch task (a redelivery counts
    again)."""
    return len([m for m in BATCH_RECEIVED.finditer(worker.log_text()) if m.group(1) == task_id])


def rows(pk: int) -> int:
    """The source's history rows."""
    return SourceCheck.objects.filter(source_id=pk).count()


def unfinished(pks) -> bool:
    """Some of these sources are unchecked or still claimed."""
    pending = Q(last_checked_at__isnull=True) | ~Q(check_token="")
    return Source.objects.filter(pending, pk__in=pks).exists()


VISIBILITY = 15  # seconds until the broker hands an unacknowledged batch out again
LEASE = 4  # seconds a claim lasts (CHECK_CLAIM_SECONDS) in the killed-worker test
# A host slot in Redis lapses FETCH_DEADLINE + 5 s after it was taken (checking/limiter.py); a
# fetch waits for a slot at most its own FETCH_DEADLINE, and one that gets none in time is
# recorded as a timeout. So slots left by a dead worker (or not given back while Redis was
# down) make fetches of that host started in the next 5 s fail.
SLOT_OVERHANG = 5


@needs_redis_server
def test_a_killed_workers_batch_delivered_again_fetches_and_records_nothing(
    servers, private_redis, celery_processes
):
    """A worker is SIGKILLed mid-batch while the test server holds two of its requests.

    The broker keeps the batch's message unacknowledged. The sources it did not record stay
    claimed until their lease lapses; then the sweeper (the beat task, on a live worker)
    claims them under a new token and the live worker checks them. Then the visibility
    timeout passes, the killed batch is delivered again and runs: it must neither fetch nor
    record anything (the stale-batch guard). Counted at the test server and in the history:
    after the kill each unrecorded source is fetched exactly once and each recorded one not
    at all, and every source has exactly one history row.
    """
    site = servers["site"]
    per_host = 2  # FETCH_PER_HOST: the requests in flight when the worker dies
    gate = Gate(site, answered=record.RECORD_EVERY)  # one chunk recorded, then requests held
    paths = [f"/{i}" for i in range(record.RECORD_EVERY + 4)]
    site.routes.update(dict.fromkeys(paths, gate.route))
    path_of = {Source.objects.create(url=url(site, p), host="127.0.0.2").pk: p for p in paths}
    app = private_redis.app
    environment = {
        "REDIS_URL": private_redis.url,
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY),
        "CHECK_CLAIM_SECONDS": str(LEASE),
        "FETCH_PER_HOST": str(per_host),
    }
    # The killed worker's two host slots lapse 10 s (its FETCH_DEADLINE + SLOT_OVERHANG)
    # after it took them, about 6 s after the sweep; the live worker's fetches wait for
    # them (up to their FETCH_DEADLINE) instead of timing out.
    doomed = celery_processes.worker(
        "curation-doomed", queue=QUEUE, app=app, wait=False, FETCH_DEADLINE="5", **environment
    )
    # Started now but idle (on a queue nobody sends to) until the other one is killed.
    live = celery_processes.worker(
        "curation-live", queue="idle", app=app, wait=False, FETCH_DEADLINE="20", **environment
    )
    wait_for_ping(doomed, app)
    wait_for_ping(live, app)

    app.send_task(DISPATCH_TASK, queue=QUEUE)  # claims every source for one batch
    wait_until(
        lambda: (
            gate.requests >= record.RECORD_EVERY + per_host
            and SourceCheck.objects.count() >= record.RECORD_EVERY
        ),
        "the worker did not record a chunk and send two more requests",
        doomed,
    )
    doomed.kill()
    gate.open()
    hits_at_kill = collections.Counter(site.hits)
    killed_batches = BATCH_RECEIVED.findall(doomed.log_text())
    assert len(killed_batches) == 1, doomed.log_tail()
    killed_batch = killed_batches[0]
    recorded = set(SourceCheck.objects.values_list("source_id", flat=True))
    unrecorded = set(path_of) - recorded
    asked = {pk for pk in unrecorded if hits_at_kill[path_of[pk]]}
    assert len(recorded) == record.RECORD_EVERY and len(asked) == per_host
    # Before the kill every path was asked once, or not yet; the asked ones not answered.
    assert hits_at_kill == {path_of[pk]: 1 for pk in recorded | asked}
    (killed_token,) = set(
        Source.objects.filter(pk__in=unrecorded).values_list("check_token", flat=True)
    )
    assert killed_token, "the unrecorded sources are no longer claimed by the killed batch"

    # The lease lapses; the sweeper claims the unrecorded sources again, on the live worker.
    wait_until(
        lambda: (
            not Source.objects.filter(pk__in=unrecorded, claimed_until__gte=timezone.now()).exists()
        ),
        "the lease did not lapse",
        live,
    )
    assert app.control.add_consumer(QUEUE, destination=[live.hostname], reply=True)
    app.send_task(DISPATCH_TASK, queue=QUEUE)
    wait_until(lambda: not unfinished(unrecorded), "the swept sources were not checked", live)
    # The broker delivers the killed batch again once its visibility timeout passed.
    wait_until(
        lambda: f"{tasks.check_source_batch.name} {killed_batch} SUCCESS" in live.log_text(),
        f"the killed batch {killed_batch} was not delivered again",
        live,
        timeout=VISIBILITY + TIMEOUT,
    )
    live.stop()  # nothing can run after this

    assert received(doomed, killed_batch) == 1 and received(live, killed_batch) == 1
    assert private_redis.client.hlen("unacked") == 0  # nothing left to deliver again
    # Per source: (requests at the test server after the kill, history rows).
    counted = {pk: (site.hits[p] - hits_at_kill[p], rows(pk)) for pk, p in path_of.items()}
    assert counted == {pk: (int(pk in unrecorded), 1) for pk in path_of}
    token_of = dict(SourceCheck.objects.values_list("source_id", "token"))
    assert {token_of[pk] for pk in recorded} == {killed_token}
    (sweep_token,) = {token_of[pk] for pk in unrecorded}
    # Checked by the sweeper's batch, not the killed one (delivered again only later).
    assert sweep_token != killed_token
    assert not unfinished(path_of)
    assert set(Source.objects.values_list("state", flat=True)) == {"ok"}


RESTART_LEASE = 10  # seconds a claim lasts in the broker-restart test
RESTART_DEADLINE = 10  # FETCH_DEADLINE there: the held requests never time out
RESTART_STALL = 3  # seconds the Redis that keeps its data stops answering before it goes


@needs_redis_server
@pytest.mark.parametrize(
    "private_redis",
    [False, True],
    ids=["redis-loses-its-data", "redis-keeps-its-data"],
    indirect=True,
)
def test_a_broker_restart_mid_batch_while_beat_dispatches_loses_and_repeats_nothing(
    servers, private_redis, celery_processes, tmp_path
):
    """Redis (broker, cache and host limiter) restarts while a worker runs a batch whose
    requests the test server holds, two more batches wait in the broker, and beat
    dispatches every second.

    The batch in flight finishes during the outage and records its results; beat's ticks
    fail meanwhile; sources added during the outage are dispatched once beat reaches the
    broker again. A Redis that loses its data loses the waiting batches: their sources are
    swept by beat's dispatch once their lease lapses. A Redis that keeps its data (saved
    when stopped, after it stalls a few seconds) delivers them after the restart, under
    their own claims. Counted at the
    test server and in the history: every source is fetched exactly once and has exactly
    one history row; and the broker is left with no unacknowledged batch to deliver again.
    """
    keeps_data = private_redis.data_dir is not None
    site = servers["site"]
    gate = Gate(site, answered=0)
    paths = [f"/{i}" for i in range(8)]
    site.routes.update(dict.fromkeys(paths, gate.route))
    path_of = {Source.objects.create(url=url(site, p), host="127.0.0.2").pk: p for p in paths[:6]}
    environment = {
        "REDIS_URL": private_redis.url,
        "CHECK_CLAIM_SECONDS": str(RESTART_LEASE),
        "CHECK_DISPATCH_EVERY": "1",
        "RELATED_REFRESH_EVERY": "3600",
        "FETCH_BATCH_SIZE": "2",
        "FETCH_DEADLINE": str(RESTART_DEADLINE),
    }
    worker = celery_processes.worker(
        "curation-restart", queue=QUEUE, app=private_redis.app, **environment
    )
    beat = celery_processes.beat("curation-beat", schedule=tmp_path / "schedule", **environment)

    # Beat's dispatch claims three batches of two; the worker holds one, two wait in Redis.
    wait_until(lambda: gate.requests >= 2, "beat's first batch did not start", worker, beat)
    held_at = time.monotonic()
    token_of = dict(Source.objects.values_list("pk", "check_token"))
    busy = {pk for pk, p in path_of.items() if site.hits[p]}
    queued = set(path_of) - busy
    (busy_token,) = {token_of[pk] for pk in busy}
    queued_tokens = {token_of[pk] for pk in queued}
    assert len(busy) == 2 and len(queued_tokens) == 2 and "" not in queued_tokens

    # A Redis that saves its data when stopped also stalls first, as one saving on a busy
    # disk does (the worker's event loop must not wait for it).
    private_redis.stop(stall=RESTART_STALL if keeps_data else 0)
    added = {Source.objects.create(url=url(site, p), host="127.0.0.2").pk: p for p in paths[6:]}
    path_of.update(added)
    gate.open()
    wait_until(
        lambda: SourceCheck.objects.filter(source__in=busy).count() == len(busy),
        "the batch in flight did not record its results while Redis was down",
        worker,
    )
    wait_until(
        lambda: (
            "Connection to broker lost" in worker.log_text() and "Message Error" in beat.log_text()
        ),
        "the worker and beat did not notice the broker was gone",
        worker,
        beat,
    )
    if keeps_data:
        # The held requests' host slots could not be given back while Redis was down and
        # come back with its data: restart once they would lapse within a fetch's
        # deadline (SLOT_OVERHANG).
        time.sleep(max(0.0, held_at + SLOT_OVERHANG + 1 - time.monotonic()))
    private_redis.start()
    wait_until(
        lambda: not unfinished(path_of),
        "not every source was checked after the restart",
        worker,
        beat,
        timeout=TIMEOUT + RESTART_LEASE,
    )
    assert beat.process.poll() is None and worker.process.poll() is None
    beat.stop()
    worker.stop()  # nothing can run after this

    # Per source: (requests at the test server, history rows).
    counted = {pk: (site.hits[p], rows(pk)) for pk, p in path_of.items()}
    assert counted == dict.fromkeys(path_of, (1, 1))
    recorded_by = dict(SourceCheck.objects.values_list("source_id", "token"))
    assert {recorded_by[pk] for pk in busy} == {busy_token}  # by the batch in flight
    if keeps_data:  # delivered after the restart
        assert {recorded_by[pk] for pk in queued} == queued_tokens
    else:  # lost with the broker's data, then swept
        assert not {recorded_by[pk] for pk in queued} & queued_tokens
    assert private_redis.client.hlen("unacked") == 0  # nothing left to deliver again
    assert not unfinished(path_of)
    assert set(Source.objects.values_list("state", flat=True)) == {"ok"}
