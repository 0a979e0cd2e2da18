"""A real Celery worker process for integration tests, on the configured broker and test DB;
the demo site for browser tests."""

import io
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from curation.celery import app as celery_app
from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, TIMEOUT_MS

WORKER_START_TIMEOUT = 60
WORKER_STOP_TIMEOUT = 30


@dataclass
class Worker:
    hostname: str
    process: subprocess.Popen
    log_path: Path

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL the process and its pool: no warm shutdown, nothing acknowledged."""
        _kill_group(self.process)

    def stop(self) -> None:
        """Warm shutdown (the current task finishes); SIGKILL if that takes too long."""
        _stop(self.process)


def worker_database_url() -> str:
    """DATABASE_URL of the test database pytest-django created (after django_db_setup)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        name = str(db["NAME"])
        if name == ":memory:" or "mode=memory" in name:
            raise RuntimeError(
                "The SQLite test database is in memory, which a worker process cannot share; "
                "tests/conftest.py switches to a file only when integration tests are collected."
            )
        return f"sqlite:///{name}"
    if connection.vendor == "postgresql":
        credentials = quote(db["USER"] or "", safe="")
        if db.get("PASSWORD"):
            credentials += ":" + quote(db["PASSWORD"], safe="")
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        return f"postgres://{credentials}@{host}:{port}/{quote(db['NAME'], safe='')}"
    raise RuntimeError(f"No worker DATABASE_URL for the {connection.vendor} backend.")


def _hostname() -> str:
    # Stable, not per run: the file-system broker keeps a broadcast binding for every worker
    # name it has seen and copies each broadcast (such as ping) to all of them.
    suffix = os.environ.get("PYTEST_XDIST_WORKER", "")
    return f"curation-test{'-' + suffix if suffix else ''}@{socket.gethostname()}"


def _purge(*queues: str) -> None:
    with celery_app.connection_for_write() as conn:
        for queue in queues:
            conn.default_channel.queue_purge(queue)


def _kill_group(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)  # the pool processes too
        process.wait(10)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # warm shutdown: finish the current task
    try:
        process.wait(WORKER_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        _kill_group(process)


def celery_environment(**overrides: str) -> dict[str, str]:
    """The environment of a Celery process: the tests' own, on the test database.

    The async override is test-only. Call after django_db_setup.
    """
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env["DATABASE_URL"] = worker_database_url()
    env.update(overrides)
    return env


def _worker_arguments(hostname: str, queue: str) -> list[str]:
    return [
        *"worker --concurrency 1 --loglevel info".split(),
        *("--queues", queue, "--hostname", hostname),
    ]


def _spawn(name: str, arguments: list[str], env: dict[str, str], log_path: Path) -> Worker:
    """Start `celery -A curation ARGUMENTS` in its own process group, logging to log_path."""
    ARTIFACTS.mkdir(exist_ok=True)
    with log_path.open("w") as log:
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            [sys.executable, "-m", "celery", "-A", "curation", *arguments],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Worker(hostname=name, process=process, log_path=log_path)


def wait_for_ping(worker: Worker, app=celery_app) -> None:
    """Until the worker answers a ping on `app`'s broker; fail if it exits or never does."""
    deadline = time.monotonic() + WORKER_START_TIMEOUT
    while not app.control.ping(destination=[worker.hostname], timeout=1.0):
        if worker.process.poll() is not None:
            pytest.fail(
                f"The Celery worker exited with {worker.process.returncode}:\n{worker.log_tail()}"
            )
        if time.monotonic() > deadline:
            pytest.fail(
                f"The Celery worker did not answer a ping within "
                f"{WORKER_START_TIMEOUT}s:\n{worker.log_tail()}"
            )


@pytest.fixture(scope="session")
def celery_worker(django_db_setup) -> Worker:
    """Start `celery worker` on the test database and the configured broker; stop it after.

    Session-wide (pytest-django runs transactional tests apart from the others, so a module
    fixture could start twice). Depends on django_db_setup so that it is stopped before the
    test database is dropped (PostgreSQL refuses to drop a database a worker is connected to).
    """
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / f"celery-worker-{connection.vendor}.log"
    hostname = _hostname()
    queue = celery_app.conf.task_default_queue  # the tests' own queue (tests/conftest.py)
    pidbox = f"{hostname}.celery.pidbox"
    if celery_app.control.ping(destination=[hostname], timeout=1.0):
        # Left over from a test run that was killed: it may point at another database.
        celery_app.control.shutdown(destination=[hostname])
        time.sleep(2)
    # Drop tasks and broadcasts left by earlier runs (unit tests may send tasks).
    _purge(queue, pidbox)
    worker = _spawn(hostname, _worker_arguments(hostname, queue), celery_environment(), log_path)
    try:
        wait_for_ping(worker)
        yield worker
    finally:
        worker.stop()
        _purge(pidbox)


class CeleryProcesses:
    """Celery workers and beat processes of one test (the `celery_processes` fixture)."""

    def __init__(self) -> None:
        self.started: list[Worker] = []

    def worker(
        self, name: str, *, queue: str, app=celery_app, wait: bool = True, **environment: str
    ) -> Worker:
        """A worker (concurrency 1) consuming `queue` on app's broker, with `environment`
        over the tests' own (set REDIS_URL for another broker). Waits until it answers a
        ping on `app` unless wait=False (then call wait_for_ping)."""
        hostname = f"{name}@localhost"
        worker = self._start(hostname, _worker_arguments(hostname, queue), environment)
        if wait:
            wait_for_ping(worker, app)
        return worker

    def beat(self, name: str, *, schedule: Path, **environment: str) -> Worker:
        """`celery beat` with its schedule database at `schedule` (it answers no ping)."""
        arguments = ["beat", "--loglevel", "info", "--schedule", str(schedule)]
        return self._start(name, arguments, environment)

    def _start(self, name: str, arguments: list[str], environment: dict[str, str]) -> Worker:
        log_path = ARTIFACTS / f"celery-{name.split('@')[0]}.log"
        started = _spawn(name, arguments, celery_environment(**environment), log_path)
        self.started.append(started)
        return started

    def stop_all(self) -> None:
        """Stop every process, the last started first, even when stopping one fails."""
        errors = []
        for started in reversed(self.started):
            try:
                started.stop()
            except Exception as error:  # noqa: BLE001 - stop the others, then report it
                errors.append(error)
        if errors:
            raise errors[0]


@pytest.fixture
def celery_processes(transactional_db):
    """Start extra Celery processes for one test; each is stopped when the test ends.

    Depends on transactional_db so that they are stopped before the database is flushed.
    Request a fixture that runs their broker before this one, so that it outlives them.
    """
    processes = CeleryProcesses()
    try:
        yield processes
    finally:
        processes.stop_all()


@pytest.fixture
def demo(live_server):
    """The demo content (`manage.py load_demo`) on the live server; its URL."""
    call_command("load_demo", stdout=io.StringIO())
    return live_server.url


@pytest.fixture
def reader(browser):
    """An anonymous visitor in a browser context of their own (no editor session)."""
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()
