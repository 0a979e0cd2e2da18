"""gunicorn's own lines (start, workers booting, a worker timeout, a rejected request)
in the site's LOG_FORMAT: with LOG_FORMAT=json every line gunicorn writes is a JSON object.

Runs `python -m gunicorn curation.wsgi` (reading gunicorn.conf.py) on a scratch SQLite
site, as tests/integration/test_graceful_shutdown.py does.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.integration.test_graceful_shutdown import _get, _site_environment
from tests.integration.test_source_checks import free_port
from tests.slow_urls import STARTED

pytestmark = pytest.mark.integration

START_TIMEOUT = 60
WORKER_TIMEOUT = 1  # gunicorn's --timeout: the slow page below outlasts it


def _wait_until(condition, what: str, log: Path, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gunicorn: {what} within {timeout}s:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)


def _send_raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        return sock.recv(1024)


@pytest.fixture
def gunicorn_json_log(tmp_path):
    """Run gunicorn with LOG_FORMAT=json through a start, a worker timeout, a rejected
    request and a stop; return everything it wrote to stderr."""
    port = free_port()
    log = tmp_path / "gunicorn.log"
    env = {**_site_environment(tmp_path / "var", grace=5), "LOG_FORMAT": "json"}
    command = [sys.executable, "-m", "gunicorn", "curation.wsgi", "--workers", "1"]
    command += ["--timeout", str(WORKER_TIMEOUT), "--bind", f"127.0.0.1:{port}"]
    command += ["--no-control-socket"]
    with log.open("w") as stderr:
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        _wait_until(lambda: _get(port, "/healthz")[0] == 200, "no answer", log)
        assert _get(port, f"/slow/?seconds={WORKER_TIMEOUT * 10}")[0] != 200  # cut off
        _wait_until(
            lambda: "Booting worker" in log.read_text().split(STARTED)[-1],
            "no worker booted after the timeout",
            log,
        )
        _wait_until(lambda: _get(port, "/healthz")[0] == 200, "no answer after the timeout", log)
        assert _send_raw(port, b"NOT AN HTTP REQUEST\r\n\r\n").startswith(b"HTTP/1.1 400")
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    return log.read_text()


def test_gunicorn_writes_json_lines_only_with_log_format_json(gunicorn_json_log):
    lines = gunicorn_json_log.splitlines()
    not_json = []
    entries = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            not_json.append(line)
    assert not not_json, f"{len(not_json)} of {len(lines)} lines are not JSON:\n" + "\n".join(
        not_json
    )
    messages = [entry["message"] for entry in entries]
    for expected in ("Listening at", "Booting worker", "WORKER TIMEOUT", "Invalid request"):
        assert any(expected in message for message in messages), (expected, messages)
    assert any(message == STARTED for message in messages)
