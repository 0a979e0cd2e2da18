"""Graceful shutdown with real processes: what SIGTERM does to a deploy.

- gunicorn (`gunicorn curation.wsgi`, reading gunicorn.conf.py, DEBUG off): a request in
  flight when the master gets SIGTERM is answered in full, a new connection is not
  served, and gunicorn exits 0 within its grace period (GUNICORN_GRACEFUL_TIMEOUT); a
  request slower than the grace period is cut off at it.
- A Celery worker in the middle of a check batch against slow loopback sites: SIGTERM
  makes the batch start no more fetches, record the ones in flight and hand the sources
  it did not start back to the broker as a new task (same claim token, same attempt), so
  the worker exits about one fetch deadline later instead of when the whole batch would
  have ended. A fresh worker then checks the rest: every source gets exactly one
  history row, fetched once.

Each part runs on processes and a broker of its own: gunicorn on a scratch SQLite
database (the slow page reads no table); the Celery workers on the test database, with
a file-system broker in a temporary folder, or a private redis-server when the suite
runs on Redis (their continuation tasks go to the default queue, which the tests' shared
broker must not hold).
"""

import base64
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from celery import Celery
from django.conf import settings
from django.utils import timezone

from summaries import tasks
from summaries.checking import record
from summaries.models import Source, SourceCheck
from tests.integration.conftest import Worker
from tests.integration.test_source_checks import (
    REDIS_SERVER,
    PrivateRedis,
    free_port,
    start_server,
    unfinished,
    wait_until,
)
from tests.slow_urls import SLOW_SECONDS, STARTED
from tests.test_linkcheck_fetch import Server, send

pytestmark = pytest.mark.integration

BASE_DIR = Path(settings.BASE_DIR)
START_TIMEOUT = 60

# --- gunicorn ---------------------------------------------------------------------------

GRACE = 10  # GUNICORN_GRACEFUL_TIMEOUT of the first test: far more than the slow page
# Variables of the test run that must not reach gunicorn (test-only, or another gunicorn's).
_DROPPED = {"DJANGO_ALLOW_ASYNC_UNSAFE", "PROMETHEUS_MULTIPROC_DIR", "CELERY_TASK_ALWAYS_EAGER"}


def _site_environment(var_dir: Path, grace: int) -> dict[str, str]:
    """Production settings (DEBUG off) plus the slow page, on a scratch folder."""
    (var_dir / "static").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.slow_settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        CSRF_TRUSTED_ORIGINS="https://127.0.0.1",
        SECURE_SSL_REDIRECT="0",  # plain HTTP on loopback: no TLS proxy in front
        STATICFILES_BACKEND="django.contrib.staticfiles.storage.StaticFilesStorage",
        CURATION_VAR_DIR=str(var_dir),
        DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}",
        REDIS_URL="",
        CACHE_URL="",
        GUNICORN_GRACEFUL_TIMEOUT=str(grace),
        PYTHONUNBUFFERED="1",
    )
    return env


def _get(port: int, path: str) -> tuple[int, bytes]:
    """(status, body) of a GET; status 0 when no HTTP answer came (refused, reset)."""
    connection = HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    except OSError as error:
        return 0, repr(error).encode()
    finally:
        connection.close()


class Gunicorn:
    """`python -m gunicorn curation.wsgi` from the project folder, as the README runs it."""

    def __init__(self, tmp_path: Path, *, worker_class: str, threads: int, grace: int):
        self.port = free_port()
        self.log_path = tmp_path / "gunicorn.log"
        command = [sys.executable, "-m", "gunicorn", "curation.wsgi"]
        command += ["--workers", "2", "--worker-class", worker_class, "--threads", str(threads)]
        command += ["--bind", f"127.0.0.1:{self.port}", "--error-logfile", "-"]
        command += ["--no-control-socket"]  # its default path is shared by every gunicorn
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(  # noqa: S603 - fixed arguments
                command,
                cwd=BASE_DIR,
                env=_site_environment(tmp_path / "var", grace),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_until(self, condition, what: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"gunicorn: {what} within {timeout}s:\n{self.log()[-3000:]}")
            time.sleep(0.05)

    def start(self) -> None:
        def up() -> bool:
            if self.process.poll() is not None:
                pytest.fail(f"gunicorn exited with {self.process.returncode}:\n{self.log()}")
            return _get(self.port, "/healthz")[0] == 200

        self.wait_until(up, "no answer")

    def slow_request_in_flight(self) -> Future:
        """GET /slow/ in another thread; returns once a worker is running the view."""
        pool = ThreadPoolExecutor(1)
        answer = pool.submit(_get, self.port, "/slow/")
        pool.shutdown(wait=False)  # the request goes on
        self.wait_until(lambda: STARTED in self.log(), "the slow view did not start")
        return answer

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


@pytest.fixture
def gunicorn_server(tmp_path):
    started: list[Gunicorn] = []

    def start(**options) -> Gunicorn:
        server = Gunicorn(tmp_path, **options)
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.kill()


@pytest.mark.parametrize(
    ("worker_class", "threads"), [("sync", 1), ("gthread", 4)], ids=["sync", "gthread"]
)
def test_gunicorn_answers_the_request_in_flight_and_takes_no_new_one(
    gunicorn_server, worker_class, threads
):
    server = gunicorn_server(worker_class=worker_class, threads=threads, grace=GRACE)
    in_flight = server.slow_request_in_flight()

    stopped_at = time.monotonic()
    server.process.send_signal(signal.SIGTERM)  # the master only, as an orchestrator does
    # The master has closed its listener and the idle worker is gone; the busy one is
    # still answering.
    server.wait_until(
        lambda: "Handling signal: term" in server.log() and "Worker exiting" in server.log(),
        "the master did not stop the idle worker",
        timeout=GRACE,
    )
    late_status, late_body = _get(server.port, "/healthz")
    returncode = server.process.wait(GRACE + 5)
    exited_after = time.monotonic() - stopped_at

    assert in_flight.result(5) == (200, b"done"), server.log()[-3000:]
    assert late_status == 0, (late_status, late_body)  # refused or reset, never served
    assert returncode == 0, server.log()[-3000:]
    assert exited_after < SLOW_SECONDS + 3  # when the request was answered, not at GRACE


def test_gunicorn_cuts_off_a_request_slower_than_its_grace_period(gunicorn_server):
    grace = 1  # less than the slow page takes: GUNICORN_GRACEFUL_TIMEOUT reaches gunicorn
    server = gunicorn_server(worker_class="sync", threads=1, grace=grace)
    in_flight = server.slow_request_in_flight()

    stopped_at = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    returncode = server.process.wait(grace + 10)
    exited_after = time.monotonic() - stopped_at

    status, body = in_flight.result(5)
    assert status == 0, body  # the worker was killed mid-request: no answer at all
    assert returncode == 0
    assert exited_after < SLOW_SECONDS  # at the grace period, not when the page was done


# --- Celery worker ----------------------------------------------------------------------

HOSTS = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
ALLOWED_NETWORKS = "127.0.0.2/31,127.0.0.4/32"  # never 127.0.0.1
PER_HOST = 2  # FETCH_PER_HOST: 6 requests in flight over the three hosts
PAGE_SECONDS = 1.0  # each page answers after this; the whole batch takes ~20 s
SOURCES_PER_HOST = 40
FETCH_DEADLINE = 4
# The worker may take this long to exit after SIGTERM: one fetch deadline for the fetches
# in flight, then recording them, queueing the rest and Celery's own shutdown.
EXIT_WITHIN = FETCH_DEADLINE + 5
QUEUE = "celery"  # the workers' default queue on their own broker: continuations go there
BATCH_TASK = tasks.check_source_batch.name
DISPATCH_TASK = tasks.dispatch_source_checks.name


class FolderBroker:
    """kombu's file-system broker in a folder of the test's own, as the zero-configuration
    default runs it (curation/settings.py), under the workers' CURATION_VAR_DIR."""

    def __init__(self, var_dir: Path) -> None:
        folder = var_dir / "broker"
        self.queue_dir = folder / "queue"
        for name in ("queue", "processed", "control"):
            (folder / name).mkdir(parents=True, exist_ok=True)
        self.environment = {"CURATION_VAR_DIR": str(var_dir), "REDIS_URL": "", "CACHE_URL": ""}
        self.app = Celery("curation-shutdown-test", broker="filesystem://", set_as_current=False)
        self.app.conf.broker_transport_options = {
            "data_folder_in": str(self.queue_dir),
            "data_folder_out": str(self.queue_dir),
            "processed_folder": str(folder / "processed"),
            "control_folder": str(folder / "control"),
            "store_processed": False,
            "polling_interval": 0.1,
        }

    def waiting(self) -> list[dict]:
        return [json.loads(path.read_bytes()) for path in self.queue_dir.glob(f"*.{QUEUE}.msg")]

    def unacknowledged(self) -> int:
        return 0  # the file-system transport takes a message out of the folder when read


class RedisBroker:
    """A private redis-server: broker, cache and host limiter of the test's workers."""

    def __init__(self, server: PrivateRedis) -> None:
        self.server = server
        self.app = server.app
        self.environment = {"REDIS_URL": server.url}

    def waiting(self) -> list[dict]:
        return [json.loads(raw) for raw in self.server.client.lrange(QUEUE, 0, -1)]

    def unacknowledged(self) -> int:
        return self.server.client.hlen("unacked")


@pytest.fixture
def broker(tmp_path):
    """Request before celery_processes: the workers are stopped before their broker."""
    if not settings.REDIS_URL:
        folder = FolderBroker(tmp_path / "worker-var")
        yield folder
        folder.app.close()
        return
    if not REDIS_SERVER:
        pytest.skip("redis-server is not installed (the Redis run starts its own)")
    server = PrivateRedis()
    server.start()
    try:
        yield RedisBroker(server)
    finally:
        server.stop()
        server.app.close()


def task_of(message: dict) -> tuple[str, list]:
    """(task name, positional arguments) of a Celery message (protocol 2, JSON body)."""
    body = message["body"]
    if message["properties"].get("body_encoding") == "base64":
        body = base64.b64decode(body)
    args, _kwargs, _embed = json.loads(body)
    return message["headers"]["task"], args


class SlowSites:
    """Loopback sites whose every page answers after `delay` seconds (changeable)."""

    def __init__(self) -> None:
        self.delay = PAGE_SECONDS
        self.servers: dict[str, Server] = {host: start_server(host) for host in HOSTS}

    def page(self, handler) -> None:
        time.sleep(self.delay)
        with contextlib.suppress(OSError):  # the fetch gave up (its deadline) meanwhile
            send(handler, 200, f"<title>Page {handler.path}</title>".encode())

    def add_pages(self, per_host: int) -> list[str]:
        urls = []
        for host, server in self.servers.items():
            for i in range(per_host):
                server.routes[f"/{i}"] = self.page
                urls.append(f"http://{host}:{server.port}/{i}")
        return urls

    def hits(self) -> dict[str, int]:
        """Requests per URL so far."""
        return {
            f"http://{host}:{server.port}{path}": count
            for host, server in self.servers.items()
            for path, count in list(server.hits.items())
        }

    def stop(self) -> None:
        for server in self.servers.values():
            server.stopping.set()
            server.shutdown()
            server.server_close()


@pytest.fixture
def slow_sites():
    sites = SlowSites()
    yield sites
    sites.stop()


def _worker_environment(broker) -> dict[str, str]:
    return {
        **broker.environment,
        "FETCH_ALLOWED_NETWORKS": ALLOWED_NETWORKS,
        "FETCH_DEADLINE": str(FETCH_DEADLINE),
        "FETCH_PER_HOST": str(PER_HOST),
        "FETCH_BATCH_SIZE": str(len(HOSTS) * SOURCES_PER_HOST),  # one batch for them all
        "LOG_LEVEL": "INFO",
        # Only the batch's own tasks in the broker: no archive reviews queued after each
        # recorded chunk (tests/test_archive.py tests those).
        "ARCHIVE_CAPTURE": "0",
        "ARCHIVE_LOOKUP": "0",
    }


def _sigterm(worker: Worker) -> float:
    """SIGTERM the worker's main process (as an orchestrator does: not its pool) and wait
    for it to exit; returns the seconds it took."""
    stopped_at = time.monotonic()
    worker.process.send_signal(signal.SIGTERM)
    try:
        worker.process.wait(60)
    except subprocess.TimeoutExpired:
        worker.kill()
        pytest.fail(f"the worker did not exit within 60 s of SIGTERM:\n{worker.log_tail()}")
    return time.monotonic() - stopped_at


def test_a_sigterm_mid_batch_records_the_fetches_in_flight_and_hands_back_the_rest(
    broker, celery_processes, slow_sites
):
    urls = slow_sites.add_pages(SOURCES_PER_HOST)
    pk_of = {u: Source.objects.create(url=u, host=urlsplit(u).hostname).pk for u in urls}
    environment = _worker_environment(broker)
    first = celery_processes.worker("curation-sigterm", queue=QUEUE, app=broker.app, **environment)

    broker.app.send_task(DISPATCH_TASK, queue=QUEUE)  # claims them all for one batch
    wait_until(
        lambda: SourceCheck.objects.count() >= record.RECORD_EVERY,
        "the worker recorded no chunk of results",
        first,
    )
    (token,) = set(SourceCheck.objects.values_list("token", flat=True))
    exited_after = _sigterm(first)
    log = first.log_text()
    sent = slow_sites.hits()
    recorded = dict(SourceCheck.objects.values_list("source_id", "token"))
    left = {pk for pk in pk_of.values() if pk not in recorded}
    waiting = [task_of(message) for message in broker.waiting()]

    assert first.process.returncode == 0, first.log_tail()
    # Far less than the rest of the batch would have taken (pages of PAGE_SECONDS, six
    # at a time), which would have run to its end without the stop.
    rest_of_batch = len(left) / (PER_HOST * len(HOSTS)) * PAGE_SECONDS
    assert exited_after < EXIT_WITHIN < rest_of_batch, (exited_after, rest_of_batch, log[-3000:])
    assert "handed back" in log, log[-3000:]
    # Every fetch that was started (the ones in flight at the SIGTERM too) was recorded,
    # once, by this batch; nothing else was fetched.
    assert sent == dict.fromkeys((u for u, pk in pk_of.items() if pk in recorded), 1)
    assert set(recorded.values()) == {token}
    assert SourceCheck.objects.count() == len(recorded)
    # The rest is still this batch's, its lease renewed, and waits in the broker as one
    # task of the same batch and attempt.
    assert left
    still_claimed = Source.objects.filter(
        pk__in=left, check_token=token, claimed_until__gt=timezone.now(), last_checked_at=None
    )
    assert still_claimed.count() == len(left)
    assert waiting == [(BATCH_TASK, [sorted(left), token, 1])]

    # A fresh worker takes the handed-back task and checks the rest, quickly now.
    slow_sites.delay = 0.05
    second = celery_processes.worker("curation-fresh", queue=QUEUE, app=broker.app, **environment)
    wait_until(lambda: not unfinished(pk_of.values()), "the rest was not checked", second)
    second.stop()

    history = list(SourceCheck.objects.values_list("source_id", "token"))
    assert sorted(history) == sorted((pk, token) for pk in pk_of.values())
    assert slow_sites.hits() == dict.fromkeys(urls, 1)  # nothing fetched twice
    assert not Source.objects.exclude(check_token="").exists()
    assert broker.waiting() == [] and broker.unacknowledged() == 0
