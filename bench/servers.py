"""What the bench scripts share: the servers they start on loopback (gunicorn in production
mode, Celery worker and beat, stub HTTP hosts) and the helpers that go with them (waiting
for a quiet machine, the CPU and memory processes use).

Imported by sibling scripts run as `.venv/bin/python bench/<script>.py` (their folder is
first on sys.path); it imports nothing from the project.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

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


# -- the machine ---------------------------------------------------------------------------


def machine_ticks() -> tuple[int, int]:
    """(busy, all) CPU ticks of the machine since boot, summed over its cores."""
    with open("/proc/stat") as stat:
        ticks = [int(n) for n in stat.readline().split()[1:9]]  # user ... steal
    idle = ticks[3] + ticks[4]  # idle + iowait
    return sum(ticks) - idle, sum(ticks)


def cpu_busy(interval: float = 1.0) -> float:
    """Share of all cores busy over `interval` seconds."""
    busy, total = machine_ticks()
    time.sleep(interval)
    busy2, total2 = machine_ticks()
    return (busy2 - busy) / max(1, total2 - total)


def time_wait_count(port: int, address: str | None = None) -> int:
    """Sockets on the local port (of `address`, if given) that are in TIME_WAIT."""
    where = [f"src {address}:{port}"] if address else [f"( sport = :{port} )"]
    output = subprocess.run(
        ["ss", "-Htan", "state", "time-wait", *where],
        check=True,
        text=True,
        capture_output=True,
    ).stdout
    return sum(1 for line in output.splitlines() if line.strip())


def settle(
    max_busy: float, timeout: float, *, port: int | None = None, address: str | None = None
) -> tuple[float, float]:
    """Wait until the machine is quiet: at most `max_busy` of its CPU in use over a second
    and, with `port`, no socket on that port (of `address`, if given) in TIME_WAIT.

    Other work on a shared machine slows every process measured, and a server may still be
    finishing requests of the previous run (gunicorn's sync workers finish what they
    accepted even after the client left). After `timeout` seconds it gives up with a
    warning on stderr. Returns the seconds waited and the last CPU share measured.
    """
    started = time.monotonic()
    while True:
        waiting = 0 if port is None else time_wait_count(port, address)
        busy = cpu_busy()
        elapsed = time.monotonic() - started
        if not waiting and busy <= max_busy:
            return elapsed, busy
        if elapsed > timeout:
            sockets = f"{waiting} TIME_WAIT sockets on :{port} and " if waiting else ""
            warn(f"after {timeout:.0f} s still {sockets}{busy:.0%} CPU busy; measuring anyway")
            return elapsed, busy


def peak_rss_mib(pid: int) -> float:
    """VmHWM of a process and its children (a worker's pool), summed, in MiB."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("Pid", 0)) == pid or int(fields.get("PPid", 0)) == pid:
            total += int(fields.get("VmHWM", "0 kB").split()[0])
    return total / 1024


def warn(message: str) -> None:
    """A line on stderr, which the scripts keep apart from the report on stdout."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


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
    env: dict,
    port: int,
    log_path: Path,
    *,
    ready_path: str,
    cwd: Path = ROOT,
    app: str = "curation.wsgi",
    also_on: tuple[str, ...] = (),
) -> subprocess.Popen:
    """gunicorn `<app> -w 2` (the site's `curation.wsgi` by default) on HOST:port, and on
    the same port of the loopback addresses `also_on`, once `ready_path` answers 200. The
    configuration is gunicorn.conf.py of `cwd`.

    Its output is appended to `log_path`, which is printed if it exits while starting.
    """
    log = log_path.open("a")
    command = [str(Path(PYTHON).parent / "gunicorn"), app, "-w", "2"]
    for address in (HOST, *also_on):
        command += ["-b", f"{address}:{port}"]
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


# -- Celery worker and beat ----------------------------------------------------------------

CELERY_START_SECONDS = 60  # for a worker to answer a ping
CELERY_STOP_SECONDS = 30  # for a warm shutdown before SIGKILL
# Beat's log line when it sends the periodic dispatch of source checks.
DISPATCH_LINE = "Sending due task dispatch-source-checks"
# Keys a benchmark's worker, beat and cache leave in its Redis database.
OWN_KEYS = ("celery", "_kombu.", "unacked", "curation:", "celery-task-meta-")


@dataclass
class Process:
    """A `celery -A curation` process of a benchmark, and the file its output goes to."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 20) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = CELERY_STOP_SECONDS) -> None:
        """SIGTERM (a worker's warm shutdown), then SIGKILL to the whole process group."""
        if self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            warn(f"{self.name} did not stop within {timeout:.0f} s: SIGKILL")
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(10)


def spawn(name: str, arguments: list[str], env: dict[str, str], log: Path) -> Process:
    """`celery -A curation <arguments>` in the project folder, in a process group of its
    own (so that a worker's pool is stopped with it), its output written to `log`."""
    with log.open("w") as out:
        popen = subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "curation", *arguments],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Process(name, popen, log)


def wait_for_ping(app: Any, worker: Process, hostname: str) -> None:
    """Until the worker `hostname` answers a ping through `app` (a Celery app on its
    broker); RuntimeError if it exits or stays silent for CELERY_START_SECONDS."""
    deadline = time.monotonic() + CELERY_START_SECONDS
    while not app.control.ping(destination=[hostname], timeout=1.0):
        if not worker.alive():
            raise RuntimeError(f"the worker exited:\n{worker.tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"no ping within {CELERY_START_SECONDS} s:\n{worker.tail()}")


def empty_redis(client: Any, db: int) -> None:
    """Empty a benchmark's Redis database; exit if it holds keys no benchmark made."""
    keys: Iterable[bytes] = client.scan_iter(count=1000)
    foreign = [
        key
        for key in (k.decode(errors="replace") for k in keys)
        if not key.startswith(OWN_KEYS) and ".pidbox" not in key
    ]
    if foreign:
        raise SystemExit(
            f"Redis database {db} holds keys this benchmark did not make (e.g. {foreign[0]!r});"
            " pick a spare one."
        )
    client.flushdb()


def log_records(path: Path) -> list[dict[str, Any]]:
    """The JSON records of a log written with LOG_FORMAT=json (other lines skipped)."""
    records = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def epoch(stamp: str) -> float:
    """Seconds since the epoch of a log record's ISO 8601 time."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


# -- stub HTTP hosts -----------------------------------------------------------------------


def host_ip(index: int) -> str:
    """The address of benchmark host `index`: 127.0.0.2, 127.0.0.3, ... (127.0.0.1 is the
    internal address a checker must never reach)."""
    return f"127.0.0.{index + 2}"


def allowed_networks(hosts: int) -> list[str]:
    """The smallest list of networks that covers the first `hosts` benchmark hosts."""
    first = ipaddress.ip_address(host_ip(0))
    last = ipaddress.ip_address(host_ip(hosts - 1))
    return [str(net) for net in ipaddress.summarize_address_range(first, last)]


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
