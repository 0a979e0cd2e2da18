"""The page cache across Redis restarts: whatever Redis loses or brings back from its
snapshot, no page is served past a change the database has committed.

Each test runs its own redis-server on a free loopback port, with its own folder and
snapshot file, while reader threads keep asking for a summary's page and its API detail.
The summary is unpublished while Redis is stopped (after a saving shutdown), or after
Redis's last snapshot and before it crashes; Redis then comes back from that snapshot, with
the content as it was before the unpublish and the pages stored then.
"""

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from django.db import connections
from django.test import Client

from summaries.editing import workflow
from summaries.pagecache import listening
from tests.factories import SummaryFactory

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set"),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server is not installed"),
]

START_TIMEOUT = 10.0
# How long readers keep asking once Redis is back: hundreds of requests each.
READ_AFTER_RESTART = 3.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RestartableRedis:
    """A redis-server of the test's own that can be stopped, crashed and started again
    from its snapshot file (`dump.rdb` in `folder`)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        self.client = redis.Redis(port=self.port, socket_connect_timeout=0.5)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [shutil.which("redis-server"), "--bind", "127.0.0.1", "--port", str(self.port)]
        command += ["--dir", str(self.folder), "--dbfilename", "dump.rdb", "--appendonly", "no"]
        # No snapshots of its own: the test says when (BGSAVE, or a saving shutdown).
        command += ["--save", "", "--shutdown-on-sigterm", "save"]
        self.process = subprocess.Popen(  # noqa: S603 - fixed arguments
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                if self.client.ping():
                    return
            except redis.RedisError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("redis-server did not start")
            time.sleep(0.05)

    def stop_saving(self) -> None:
        """SIGTERM: Redis writes its snapshot and exits."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(START_TIMEOUT)

    def snapshot(self) -> None:
        """BGSAVE, and wait until the snapshot is written."""
        before = self.client.info("persistence")["rdb_saves"]
        self.client.bgsave()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            done = self.client.info("persistence")
            if done["rdb_saves"] > before and not done["rdb_bgsave_in_progress"]:
                assert done["rdb_last_bgsave_status"] == "ok"
                return
            if time.monotonic() > deadline:
                pytest.fail("BGSAVE did not finish")
            time.sleep(0.05)

    def crash(self) -> None:
        """SIGKILL: nothing written since the last snapshot survives."""
        self.process.kill()
        self.process.wait(START_TIMEOUT)

    def keys(self) -> int:
        return self.client.dbsize()

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(START_TIMEOUT)
        self.client.close()


@pytest.fixture
def own_redis(tmp_path, settings):
    """A RestartableRedis, started, as the page cache; killed after the test, pass or fail."""
    server = RestartableRedis(tmp_path)
    try:
        server.start()
        settings.CACHES = {
            "default": {
                "BACKEND": "summaries.pagecache.backend.RedisCache",
                "LOCATION": server.url,
                "KEY_PREFIX": "curation",
                "TIMEOUT": 300,
                # Down means refused at once here; a short timeout keeps readers asking.
                "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
            }
        }
        settings.PAGE_CACHE_LOCAL_BYTES = 8 * 1024 * 1024  # as with Redis by default
        # Every answer counts, uncached ones too: no 429 in place of the 404.
        rates = {"anon": "1000000/minute", "user": "1000000/minute"}
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
        yield server
    finally:
        server.close()


@pytest.fixture(params=["read per request", "listened for"])
def generation_kept(request, settings):
    """Requests read the content generation from the database, or (PostgreSQL) from this
    process's copy that a listener keeps (summaries/pagecache/listening.py)."""
    if request.param == "read per request":
        yield
        return
    if connections["default"].vendor != "postgresql":
        pytest.skip("LISTEN/NOTIFY: PostgreSQL")
    settings.PAGE_CACHE_LISTEN = True
    try:
        yield
    finally:
        listening.stop()


@dataclass
class Answer:
    started_at: float
    path: str
    status: int


@dataclass
class Readers:
    """Threads asking for `paths` over and over, each with a client (and so a page cache
    middleware, with its own copies of pages) of its own, as web processes do."""

    paths: list[str]
    count: int = 3
    answers: list[Answer] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    errors: list[BaseException] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        for _ in range(self.count):
            thread = threading.Thread(target=self._read, daemon=True)
            thread.start()
            self.threads.append(thread)

    def _read(self) -> None:
        client = Client(raise_request_exception=True)
        try:
            while not self.stopping.is_set():
                for path in self.paths:
                    started_at = time.monotonic()
                    status = client.get(path).status_code
                    self.answers.append(Answer(started_at, path, status))
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            self.errors.append(error)
        finally:
            connections.close_all()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(30)
        assert not self.errors, self.errors

    def wait_for(self, condition, what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert not self.errors, self.errors
            if time.monotonic() > deadline:
                pytest.fail(f"readers never saw {what}")
            time.sleep(0.02)

    def since(self, moment: float) -> list[Answer]:
        return [answer for answer in list(self.answers) if answer.started_at >= moment]

    def keep_reading(self, seconds: float) -> None:
        """Until every reader has asked for every path many times over `seconds`."""
        since = time.monotonic()
        time.sleep(seconds)
        self.wait_for(lambda: len(self.since(since)) >= 20 * len(self.paths), "many answers")


@pytest.fixture
def readers():
    started = []

    def start(paths: list[str]) -> Readers:
        group = Readers(paths)
        started.append(group)
        group.start()
        return group

    yield start
    for group in started:
        group.stopping.set()
        for thread in group.threads:
            thread.join(30)


def live_summary_and_readers(readers_fixture):
    summary = SummaryFactory(live=True)
    paths = [summary.get_absolute_url(), f"/api/v1/summaries/{summary.video.slug}/"]
    group = readers_fixture(paths)
    # Both answered, and both stored: a reader has been answered from the cache since.
    group.wait_for(
        lambda: sum(a.status == 200 for a in group.answers) >= 10 * len(paths), "the pages"
    )
    return summary, group


def stale_answers(group: Readers, changed_at: float) -> list[Answer]:
    """Answers to requests that began once the database had the change, and did not say
    the unpublished summary is gone."""
    return [answer for answer in group.since(changed_at) if answer.status != 404]


# Answers after a restart needed before a test may call none of them stale.
AFTER_RESTART = 100


def read_after_restart(group: Readers, restarted_at: float) -> None:
    """Readers go on for READ_AFTER_RESTART seconds, and on until AFTER_RESTART of them
    were answered since the restart, however loaded the machine is."""
    group.keep_reading(READ_AFTER_RESTART)
    group.wait_for(
        lambda: len(group.since(restarted_at)) >= AFTER_RESTART, "enough answers after the restart"
    )


def assert_none_stale(group: Readers, changed_at: float, restarted_at: float) -> None:
    after_restart = group.since(restarted_at)
    assert len(after_restart) >= AFTER_RESTART, "too few readers were answered after the restart"
    stale = stale_answers(group, changed_at)
    late = [answer for answer in stale if answer.started_at >= restarted_at]
    assert stale == [], f"{len(stale)} stale answers ({len(late)} after the restart): {stale[0]}"


def test_an_unpublish_made_while_redis_was_stopped_is_never_undone_by_its_snapshot(
    transactional_db, own_redis, readers, generation_kept
):
    summary, group = live_summary_and_readers(readers)
    assert own_redis.keys() > 0  # the pages (and what they were stored with) are in Redis

    own_redis.stop_saving()
    workflow.unpublish_summary(summary=summary)
    changed_at = time.monotonic()
    group.keep_reading(0.5)  # served without the cache meanwhile
    own_redis.start()  # from the snapshot written as it stopped
    restarted_at = time.monotonic()
    read_after_restart(group, restarted_at)
    group.stop()

    assert_none_stale(group, changed_at, restarted_at)


def test_an_unpublish_made_after_the_last_snapshot_survives_a_redis_crash(
    transactional_db, own_redis, readers, generation_kept
):
    summary, group = live_summary_and_readers(readers)
    own_redis.snapshot()

    workflow.unpublish_summary(summary=summary)
    changed_at = time.monotonic()
    group.keep_reading(0.5)
    own_redis.crash()
    group.keep_reading(0.5)  # served without the cache meanwhile
    own_redis.start()  # from the snapshot taken before the unpublish
    restarted_at = time.monotonic()
    read_after_restart(group, restarted_at)
    group.stop()

    assert_none_stale(group, changed_at, restarted_at)
