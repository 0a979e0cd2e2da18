"""A real Celery worker process for integration tests, on the configured broker and test DB."""

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
from django.db import connection

from curation.celery import app as celery_app

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
WORKER_START_TIMEOUT = 60
WORKER_STOP_TIMEOUT = 30


@dataclass
class Worker:
    hostname: str
    process: subprocess.Popen
    log_path: Path

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


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


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # warm shutdown: finish the current task
    try:
        process.wait(WORKER_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


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
    # The same environment as the tests, on the test database; the async override is test-only.
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env["DATABASE_URL"] = worker_database_url()
    command = [sys.executable, *"-m celery -A curation worker --concurrency 1".split()]
    command += ["--loglevel", "info", "--queues", queue, "--hostname", hostname]
    command += ["--without-gossip", "--without-mingle"]  # no other workers to hear from
    with log_path.open("w") as log:
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    worker = Worker(hostname=hostname, process=process, log_path=log_path)
    try:
        deadline = time.monotonic() + WORKER_START_TIMEOUT
        while not celery_app.control.ping(destination=[hostname], timeout=1.0):
            if process.poll() is not None:
                pytest.fail(
                    f"The Celery worker exited with {process.returncode}:\n{worker.log_tail()}"
                )
            if time.monotonic() > deadline:
                pytest.fail(
                    f"The Celery worker did not answer a ping within "
                    f"{WORKER_START_TIMEOUT}s:\n{worker.log_tail()}"
                )
        yield worker
    finally:
        _stop(process)
        _purge(pidbox)
