"""`make run` serves the pages readers get, on the zero-configuration defaults.

The README's first command, run as a new user runs it (SQLite, the file-system broker, a
folder of its own): the site answers with DEBUG off — the site's own 404 page, not
Django's technical page that lists every URL pattern; hashed static files served by
whitenoise; the demo editor signs in over plain HTTP on this machine. `DEBUG=1 make run`
is the documented way to get Django's debug pages.
"""

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from http.client import HTTPConnection
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings

pytestmark = [
    pytest.mark.integration,
    # It runs on the defaults whatever the run's database: once is enough.
    pytest.mark.skipif(
        bool(os.environ.get("DATABASE_URL")), reason="the zero-configuration run covers it"
    ),
]

ROOT = Path(settings.BASE_DIR)
MAKE = shutil.which("make") or "make"
START_TIMEOUT = 240
# Variables of the test run that would change what `make run` does.
_DROPPED = {
    "DATABASE_URL",
    "REDIS_URL",
    "CACHE_URL",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "STATICFILES_BACKEND",
    "DJANGO_SETTINGS_MODULE",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "PAGE_CACHE_LOCAL_BYTES",
    "CELERY_TASK_ALWAYS_EAGER",
    "MAKEFLAGS",
    "MFLAGS",
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(port: int, path: str, headers: dict | None = None, method: str = "GET", body=None):
    connection = HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def _wait_for_home(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"make run ended ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if _get(port, "/")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(1)
    pytest.fail(f"the home page did not answer in {START_TIMEOUT} s:\n{log.read_text()[-3000:]}")


@pytest.fixture
def make_run(tmp_path):
    """`make run` on a free port and a folder of its own; (port, its output file)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(PORT=str(port), CURATION_VAR_DIR=str(tmp_path / "var"), PYTHONUNBUFFERED="1")
    log = tmp_path / "make-run.log"
    with log.open("wb") as output:
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            [MAKE, "run"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for_home(port, process, log)
        yield port, log
    finally:
        with_group = os.getpgid(process.pid)
        os.killpg(with_group, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(with_group, signal.SIGKILL)
            process.wait(timeout=10)
        # honcho's children are in the same group; none may outlive the test.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(with_group, signal.SIGKILL)


def _sign_in(port: int, log: Path) -> tuple[int, dict]:
    """Sign in with the editor login `make run` printed: (status, headers) of the POST."""
    password = re.search(r"Editor login: editor / (\S+)", log.read_text()).group(1)
    _, headers, body = _get(port, "/admin/login/")
    cookie = SimpleCookie(headers["Set-Cookie"])["csrftoken"].value
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()
    fields = {"csrfmiddlewaretoken": token, "username": "editor", "password": password}
    form = urlencode({**fields, "next": "/admin/"})
    status, headers, _ = _get(
        port,
        "/admin/login/",
        method="POST",
        body=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={cookie}",
            "Origin": f"http://127.0.0.1:{port}",
            "Referer": f"http://127.0.0.1:{port}/admin/login/",
        },
    )
    return status, headers


def test_make_run_serves_what_readers_get(make_run):
    port, log = make_run

    status, headers, body = _get(port, "/no-such-page/")
    assert status == 404
    assert "We can’t find that page" in body.decode()
    assert b"URLconf" not in body and b"DEBUG = True" not in body

    status, headers, home = _get(port, "/")
    assert status == 200
    assert "Strict-Transport-Security" not in headers  # plain HTTP on this machine
    stylesheet = re.search(rb'href="(/static/summaries/css/site\.[0-9a-f]{12}\.css)"', home)
    assert stylesheet, "the stylesheet is named by its hash, as in production"
    status, headers, _ = _get(port, stylesheet.group(1).decode())
    assert status == 200
    assert "immutable" in headers["Cache-Control"]

    status, headers = _sign_in(port, log)
    assert status == 302 and headers["Location"] == "/admin/"


def test_debug_pages_are_one_variable_away():
    """`DEBUG=1 make run` runs with Django's debug pages: no production-like key, no
    collected static files (make's dry run shows what it would do)."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    plain = subprocess.run(  # noqa: S603 - fixed arguments
        [MAKE, "-n", "run"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    debug = subprocess.run(  # noqa: S603 - fixed arguments
        [MAKE, "-n", "run", "DEBUG=1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DEBUG=0" in plain and "collectstatic" in plain and "SECRET_KEY=" in plain
    assert "DEBUG=1" in debug and "collectstatic" not in debug and "SECRET_KEY=" not in debug
