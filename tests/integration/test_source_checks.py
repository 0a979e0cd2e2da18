"""Source checks through a real broker and a real Celery worker process (issue 6, section 9).

The loopback test server listens on 127.0.0.2, which the worker may contact because
FETCH_ALLOWED_NETWORKS is set in its environment below; 127.0.0.1 plays the internal
address that must never be reached.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
import redis
from celery import Celery
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from curation.celery import app as celery_app
from summaries import checking, tasks
from summaries.models import Citation, Source, SourceCheck
from tests.admin_forms import form_fields
from tests.factories import ChapterFactory
from tests.integration.conftest import ARTIFACTS, worker_database_url
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


def wait_until(condition, message, worker, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"{message} within {timeout}s:\n{worker.log_tail()}")


def test_a_save_queues_checks_that_the_worker_records(
    transactional_db, celery_worker, servers, client, django_user_model
):
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


# --- A worker killed mid-batch ----------------------------------------------------------

KILL_QUEUE = "curation-tests-kill"


def start_worker(name: str, *, app=celery_app, **environment) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env["DATABASE_URL"] = worker_database_url()
    env.update(environment)
    command = [sys.executable, *"-m celery -A curation worker --concurrency 1".split()]
    command += ["--loglevel", "info", "--queues", KILL_QUEUE, "--hostname", name]
    command += ["--without-gossip", "--without-mingle"]
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / f"celery-{name.split('@')[0]}.log").open("a") as log:
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + TIMEOUT
    while not app.control.ping(destination=[name], timeout=1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            pytest.fail(f"worker {name} did not start")
    return process


def kill(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


class _Log:
    def __init__(self, name):
        self.path = ARTIFACTS / f"celery-{name.split('@')[0]}.log"

    def log_tail(self, lines: int = 60) -> str:
        text = self.path.read_text(errors="replace") if self.path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def slow(handler) -> None:
    time.sleep(0.3)
    send(handler, 200, b"<title>Slow</title>")


def test_a_worker_killed_mid_batch_loses_no_check_and_duplicates_none(
    transactional_db, servers, monkeypatch
):
    site = servers["site"]
    site.routes.update({f"/{i}": slow for i in range(20)})
    sources = [Source.objects.create(url=url(site, f"/{i}"), host="127.0.0.2") for i in range(20)]
    with celery_app.connection_for_write() as conn:
        conn.default_channel.queue_purge(KILL_QUEUE)

    # The batches go to this test's own workers, after the claim commits (as delay_on_commit).
    def queue(token, ids):
        transaction.on_commit(
            lambda: tasks.check_source_batch.apply_async((ids, token), queue=KILL_QUEUE)
        )

    monkeypatch.setattr(checking, "_queue", queue)
    first_name, second_name = "curation-kill-a@localhost", "curation-kill-b@localhost"
    first = start_worker(first_name)
    try:
        checking.dispatch_due_checks()
        wait_until(
            lambda: SourceCheck.objects.exists(),
            "the first worker recorded nothing",
            _Log(first_name),
        )
    finally:
        kill(first)  # mid-batch: some results recorded, the rest lost with the worker
    recorded = SourceCheck.objects.count()
    assert 0 < recorded < len(sources)
    # The killed worker's per-host slots (in Redis, when set) lapse after their TTL.
    limiter = checking.host_limiter()
    deadline = time.monotonic() + TIMEOUT
    while limiter.in_flight("127.0.0.2") and time.monotonic() < deadline:
        time.sleep(0.2)

    # The lost sources stay claimed until their lease lapses; the sweeper then claims them.
    later = timezone.now() + timedelta(seconds=settings.CHECK_CLAIM_SECONDS + 1)
    second = start_worker(second_name)
    try:
        assert len(checking.sweep_sources(now=later)) == len(sources) - recorded
        wait_until(
            lambda: not Source.objects.filter(last_checked_at__isnull=True).exists(),
            "the new worker did not check the lost sources",
            _Log(second_name),
        )
    finally:
        second.send_signal(signal.SIGTERM)
        try:
            second.wait(30)
        except subprocess.TimeoutExpired:
            kill(second)
    for source in Source.objects.all():
        assert source.checks.count() == 1, source.url  # exactly once, no duplicate rows
        assert source.state == "ok" and not source.check_token


# --- A Redis restart --------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(port: int) -> subprocess.Popen:
    process = subprocess.Popen(  # noqa: S603 - fixed arguments
        [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
        + ["--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port, socket_connect_timeout=0.5)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if client.ping():
                return process
        except redis.RedisError:
            time.sleep(0.1)
    process.kill()
    pytest.fail("redis-server did not start")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


REDIS_SERVER = shutil.which("redis-server")


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set")
@pytest.mark.skipif(not REDIS_SERVER, reason="redis-server is not installed")
def test_the_worker_survives_a_redis_restart(transactional_db, servers):
    """The worker reconnects after its broker restarts; work lost with it is swept up.

    Runs its own redis-server on a free port (the shared one is left alone).
    """
    site = servers["site"]
    site.routes.update({f"/{i}": page(body=title_page(str(i))) for i in range(4)})
    before = [Source.objects.create(url=url(site, f"/{i}"), host="127.0.0.2") for i in (0, 1)]
    port = free_port()
    broker_url = f"redis://127.0.0.1:{port}/0"
    # Not the current app: the other tests' tasks must keep using the shared broker.
    app = Celery("curation-restart-test", broker=broker_url, set_as_current=False)
    app.conf.broker_connection_retry_on_startup = True
    redis_server = start_redis(port)
    name = "curation-restart@localhost"
    worker = None

    def send(token, ids):
        app.send_task(
            tasks.check_source_batch.name, args=(ids, token), queue=KILL_QUEUE, retry=True
        )

    try:
        worker = start_worker(name, app=app, REDIS_URL=broker_url)
        token, ids = checking.claim_sources(
            queryset=Source.objects.filter(pk=before[0].pk), limit=5
        )
        send(token, ids)
        wait_until(lambda: SourceCheck.objects.count() == 1, "no check before", _Log(name))

        # Claimed, but its message lost with the restarted broker (no persistence).
        token, ids = checking.claim_sources(
            queryset=Source.objects.filter(pk=before[1].pk), limit=5
        )
        stop(redis_server)
        redis_server = start_redis(port)
        later = [Source.objects.create(url=url(site, f"/{i}"), host="127.0.0.2") for i in (2, 3)]
        token, ids = checking.claim_sources(
            queryset=Source.objects.filter(pk__in=[s.pk for s in later]), limit=5
        )
        send(token, ids)
        wait_until(
            lambda: SourceCheck.objects.count() == 3,
            "the worker did not reconnect after the restart",
            _Log(name),
        )
        # The sweeper finds the source whose batch the restart lost.
        lapse = timezone.now() + timedelta(seconds=settings.CHECK_CLAIM_SECONDS + 1)
        with transaction.atomic():
            token, ids = checking.claim_sources(
                queryset=Source.objects.filter(last_checked_at__isnull=True), limit=5, now=lapse
            )
        assert ids == [before[1].pk]
        send(token, ids)
        wait_until(lambda: SourceCheck.objects.count() == 4, "no sweep", _Log(name))
    finally:
        if worker is not None:
            kill(worker)
        stop(redis_server)
    for source in Source.objects.all():
        assert source.state == "ok" and source.checks.count() == 1
