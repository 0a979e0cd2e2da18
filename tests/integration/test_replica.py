"""A real PostgreSQL streaming replica behind DATABASE_REPLICA_URL.

The test starts its own primary and replica clusters on free loopback ports, serves the
site with gunicorn on both, pauses the replica's replay (a lagging replica) and shows which
requests read where: anonymous API reads from the replica; the editor's writes, the reads of
the same requests and reader pages from the primary.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

PG_BIN = Path("/usr/lib/postgresql/15/bin")
BASE_DIR = Path(settings.BASE_DIR)
DEMO_SLUG = "speed-maxis-unite-why-fast-ai-models-matter-for-agents"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run PostgreSQL as its user"),
    pytest.mark.skipif(not (PG_BIN / "initdb").exists(), reason="PostgreSQL 15 is not installed"),
    pytest.mark.skipif(
        not os.environ.get("DATABASE_URL", "").startswith("postgres"),
        reason="runs once, in the PostgreSQL run",
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"


def as_postgres(*command, **kwargs):
    return subprocess.run(  # noqa: S603 - fixed arguments
        [RUNUSER, "-u", "postgres", "--", *map(str, command)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


class Cluster:
    def __init__(self, root: Path, name: str):
        self.dir = root / name
        self.port = free_port()

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir}"
        )
        as_postgres(
            PG_BIN / "pg_ctl", "-D", self.dir, "-o", options, "-l", f"{self.dir}.log", "-w", "start"
        )

    def stop(self) -> None:
        if (self.dir / "postmaster.pid").exists():
            subprocess.run(  # noqa: S603 - fixed arguments
                [
                    RUNUSER,
                    "-u",
                    "postgres",
                    "--",
                    PG_BIN / "pg_ctl",
                    "-D",
                    self.dir,
                    "-m",
                    "fast",
                    "-w",
                    "stop",
                ],
                capture_output=True,
                timeout=60,
            )

    def sql(self, query: str, database: str = "postgres") -> str:
        result = as_postgres(
            PG_BIN / "psql",
            "-h",
            "127.0.0.1",
            "-p",
            self.port,
            "-U",
            "postgres",
            "-d",
            database,
            "-At",
            "-c",
            query,
        )
        return result.stdout.strip()

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"


@pytest.fixture
def clusters():
    """A primary and its streaming replica, both stopped and removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="curation-replica-"))
    root.chmod(0o755)
    shutil.chown(root, "postgres", "postgres")
    primary, replica = Cluster(root, "primary"), Cluster(root, "replica")
    try:
        as_postgres(PG_BIN / "initdb", "-D", primary.dir, "-A", "trust", "-U", "postgres")
        primary.start()
        primary.sql("create database curation")
        as_postgres(
            PG_BIN / "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            primary.port,
            "-U",
            "postgres",
            "-D",
            replica.dir,
            "-R",
            "-X",
            "stream",
        )
        replica.start()
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()
        shutil.rmtree(root, ignore_errors=True)


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return result.stdout


def http(port: int, method: str, path: str, headers=None, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(  # noqa: S310 - loopback only
        f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers or {}
    )
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def wait_for(condition, message: str, timeout: float = 30.0) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition():
            return time.monotonic() - started
        time.sleep(0.2)
    pytest.fail(f"{message} within {timeout}s")


def test_anonymous_api_reads_come_from_the_replica_and_nothing_else_does(clusters, tmp_path):
    primary, replica = clusters
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CACHE_URL")}
    env.update(
        DATABASE_URL=primary.url("curation"),
        DATABASE_REPLICA_URL=replica.url("curation"),
        CURATION_VAR_DIR=str(tmp_path / "var"),
        DEBUG="1",
        API_CACHE_MAX_AGE="0",
    )
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    manage(env, "migrate", "--noinput")
    manage(env, "load_demo")
    login = manage(env, "create_demo_editor")
    username = login.split("Editor login: ", 1)[1].split(" /", 1)[0]
    token = manage(env, "drf_create_token", username).split("Generated token ", 1)[1].split()[0]
    editor = {"Authorization": f"Token {token}"}
    demo = f"/api/v1/summaries/{DEMO_SLUG}/"
    count = "select count(*) from summaries_summary where tldr like '%%Replica check.%%'"

    port = free_port()
    server = subprocess.Popen(  # noqa: S603 - fixed arguments
        [sys.executable, "-m", "gunicorn", "curation.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1"],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _status(port, demo) == 200, "gunicorn did not serve the API")
        wait_for(lambda: replica.sql(count.replace("%%", "%"), "curation") == "0", "replica behind")

        replica.sql("select pg_wal_replay_pause()")  # from now on the replica lags
        tag = http(port, "GET", demo, editor)[1]["ETag"]
        status, headers, body = http(
            port, "PATCH", demo, {**editor, "If-Match": tag}, {"tldr": "Replica check."}
        )
        assert status == 200, body[:500]
        status, _, body = http(
            port, "POST", f"{demo}publish/", {**editor, "If-Match": headers["ETag"]}, {}
        )
        assert status == 200, body[:500]
        # The write request read its own write: from the primary.
        assert json.loads(body)["tldr"] == "Replica check."

        anonymous = json.loads(http(port, "GET", demo)[2])
        assert anonymous["tldr"] != "Replica check."  # the lagging replica answered
        assert json.loads(http(port, "GET", demo, editor)[2])["tldr"] == "Replica check."
        page = http(port, "GET", f"/videos/{DEMO_SLUG}/")[2].decode()
        assert "Replica check." in page  # reader pages read the primary

        replica.sql("select pg_wal_replay_resume()")
        caught_up = wait_for(
            lambda: json.loads(http(port, "GET", demo)[2])["tldr"] == "Replica check.",
            "the replica did not catch up",
        )
        print(f"replica caught up {caught_up:.1f} s after replay resumed")
    finally:
        server.terminate()
        server.wait(30)


def _status(port: int, path: str) -> int:
    try:
        return http(port, "GET", path)[0]
    except OSError:
        return 0
