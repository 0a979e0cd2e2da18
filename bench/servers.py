"""Servers the bench scripts start on loopback (gunicorn in production mode, stub HTTP hosts)
and the helpers that go with them.

Imported by sibling scripts run as `.venv/bin/python bench/<script>.py` (their folder is
first on sys.path); it imports nothing from the project.
"""

from __future__ import annotations

import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
HOST = "127.0.0.1"
START_SECONDS = 30  # for gunicorn to answer, and for it to stop before SIGKILL


def say(message: str) -> None:
    print(message, flush=True)


def run(
    command: list[str], env: dict | None = None, capture: bool = False, cwd: Path = ROOT
) -> str:
    """Run a command to its end (an error if it fails); its output if `capture`."""
    completed = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        check=True,
        text=True,
        stdout=subprocess.PIPE if capture else None,
    )
    return completed.stdout if capture else ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def http_status(url: str, timeout: float = 5) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - loopback
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def cpu_busy(interval: float = 1.0) -> float:
    """Share of all cores busy over `interval` seconds (from /proc/stat)."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            ticks = [int(n) for n in stat.readline().split()[1:9]]
        return sum(ticks), ticks[3] + ticks[4]  # total, idle + iowait

    total, idle = sample()
    time.sleep(interval)
    total2, idle2 = sample()
    return 1 - (idle2 - idle) / max(1, total2 - total)


# -- gunicorn ------------------------------------------------------------------------------


def production_settings() -> dict[str, str]:
    """The environment of a production configuration served over plain HTTP on HOST.

    DEBUG off, a fresh random 64-character SECRET_KEY, HOST the only allowed host, and no
    HTTPS redirect or secure-only cookies (there is no TLS on loopback). The caller adds
    the database, cache and static files.
    """
    return {
        "DJANGO_SETTINGS_MODULE": "curation.settings",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "ALLOWED_HOSTS": HOST,
        "CSRF_TRUSTED_ORIGINS": f"http://{HOST}",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }


def start_gunicorn(
    env: dict, port: int, log_path: Path, *, ready_path: str, cwd: Path = ROOT
) -> subprocess.Popen:
    """gunicorn `curation.wsgi -w 2` on HOST:port, once `ready_path` answers 200.

    Its output is appended to `log_path`, which is printed if it exits while starting.
    """
    log = log_path.open("a")
    command = [str(Path(PYTHON).parent / "gunicorn"), "curation.wsgi", "-w", "2"]
    command += ["-b", f"{HOST}:{port}"]
    say(f"starting {' '.join(command)} (settings {env['DJANGO_SETTINGS_MODULE']})")
    gunicorn = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=log)
    log.close()  # the child keeps its own descriptor
    deadline = time.monotonic() + START_SECONDS
    while True:
        if gunicorn.poll() is not None:
            raise SystemExit(f"gunicorn exited:\n{log_path.read_text()}")
        try:
            if http_status(f"http://{HOST}:{port}{ready_path}") == 200:
                return gunicorn
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"gunicorn did not answer within {START_SECONDS} s")
        time.sleep(0.3)


def stop_gunicorn(gunicorn: subprocess.Popen | None) -> None:
    if gunicorn is None or gunicorn.poll() is not None:
        return
    gunicorn.send_signal(signal.SIGTERM)  # the master stops its workers
    try:
        gunicorn.wait(timeout=START_SECONDS)
    except subprocess.TimeoutExpired:
        gunicorn.kill()
        gunicorn.wait()
    say("gunicorn stopped")


# -- stub HTTP hosts -----------------------------------------------------------------------


class StubHandler(BaseHTTPRequestHandler):
    """HEAD and GET both call `answer()`, which subclasses define; no request log.

    HTTP/1.0: one request per connection, as a client opening a fresh connection per
    check sees it.
    """

    protocol_version = "HTTP/1.0"
    server_version = "bench"

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:  # noqa: N802
        self.answer()

    def do_GET(self) -> None:  # noqa: N802
        self.answer()

    def answer(self) -> None:
        raise NotImplementedError

    def send(
        self,
        status: int,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        content_type: str = "text/html; charset=utf-8",
    ):
        """An answer (HTML unless said otherwise); the body is left out for HEAD."""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def start_stub_server(
    address: str, handler: type[StubHandler], **attributes
) -> ThreadingHTTPServer:
    """A threaded server on address:<free port>, serving in a thread of its own.

    `attributes` are set on the server, where the handler reads them (`self.server.x`).
    Stop it with `stop_stub_servers`.
    """
    server = ThreadingHTTPServer((address, 0), handler)
    server.daemon_threads = True
    server.request_queue_size = 128
    for name, value in attributes.items():
        setattr(server, name, value)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}).start()
    return server


def stop_stub_servers(servers: list[ThreadingHTTPServer]) -> None:
    for server in servers:
        server.shutdown()
        server.server_close()
