"""The zero-configuration defaults with several processes on one machine.

No REDIS_URL and no database server: SQLite and the cache under CURATION_VAR_DIR, the
file-system broker. Everything runs as an operator would run it, in subprocesses on a
temporary folder: `manage.py migrate`, `load_demo`, an editor's API token, then
`gunicorn curation.wsgi` with two worker processes on 127.0.0.1 (a free port). A script in
another process stands in for the Celery worker: it records source check results the way
a check task does.

- Pages: once content changes, no worker process answers with a page cached before (the
  content generation is in the database and the cache in files, both shared by every
  process, not kept in each one).
- The file cache (summaries/pagecache/filecache.py): `incr` and `add` are atomic across processes,
  and culling spares keys kept with no timeout.
- SQLite: editors publishing and unpublishing through the API while pages are read and a
  worker records check results never get a 500 ("database is locked").
"""

import collections
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path

import pytest
from django.conf import settings

from summaries.demo import data as demo_data
from summaries.pagecache.filecache import FileBasedCache

pytestmark = pytest.mark.integration

BASE_DIR = Path(settings.BASE_DIR)
SLUG = demo_data.MAIN_VIDEO["slug"]
PAGE = f"/videos/{SLUG}/"
CHANNEL_PAGE = f"/channels/{demo_data.CHANNEL['slug']}/"
API_SUMMARY = f"/api/v1/summaries/{SLUG}/"
COMMAND_TIMEOUT = 180
START_TIMEOUT = 60
STOP_TIMEOUT = 35  # gunicorn's graceful timeout is 30 s
# The worker pid and the probe header of each request, to tell which process answered.
ACCESS_FORMAT = "%({x-probe}i)s %(p)s %(s)s"
PROBE = "X-Probe"
# Variables of the test run that must not reach the site's processes: they run on the
# defaults (the async override is test-only; a set local-page size or eager Celery would
# not be the defaults).
_DROPPED = {
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "PAGE_CACHE_LOCAL_BYTES",
    "CELERY_TASK_ALWAYS_EAGER",
}

# Records a check result for every source, as a check task does (claim, then record in
# bulk), in a loop until CHECKER_SECONDS have passed (at least once), alternating the
# states in CHECKER_STATES so that every round changes what pages show. Prints a JSON
# report; database errors are counted, not raised, so that the load goes on.
CHECKER = r"""
import collections, datetime, json, os, time
import django
django.setup()
from django.db import OperationalError
from django.utils import timezone
from summaries import checking
from summaries.linkcheck import CheckResult, State
from summaries.models import Source

deadline = time.monotonic() + float(os.environ["CHECKER_SECONDS"])
states = [State(s) for s in os.environ["CHECKER_STATES"].split(",")]
rounds, recorded, errors = 0, 0, collections.Counter()
while True:
    state = states[(rounds + sum(errors.values())) % len(states)]
    # A later "now" each round: sources a failed round left claimed are claimable again.
    now = timezone.now() + datetime.timedelta(hours=rounds + sum(errors.values()))
    try:
        token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=1000, now=now)
        urls = dict(Source.objects.filter(pk__in=ids).values_list("pk", "url"))
        status = 200 if state == State.OK else 404
        results = {pk: CheckResult(url=url, state=state, status=status) for pk, url in urls.items()}
        recorded += len(checking.record_results(token=token, results=results, now=now))
        rounds += 1
    except OperationalError as exc:
        errors[str(exc)] += 1
    if time.monotonic() >= deadline:
        break
print(json.dumps({"rounds": rounds, "recorded": recorded, "errors": errors}))
"""


@dataclass
class Site:
    var_dir: Path
    env: dict
    token: str


@dataclass
class Answer:
    probe: str
    status: int  # 0: no HTTP answer (connection refused, reset or timed out)
    body: bytes
    pid: str = ""


def _environment(var_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(
        DJANGO_SETTINGS_MODULE="curation.settings",
        CURATION_VAR_DIR=str(var_dir),
        # The default database, spelled out: the test run's own DATABASE_URL may name another.
        DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}",
        # Set but empty, so that a .env in the checkout cannot set them either.
        REDIS_URL="",
        CACHE_URL="",
        DEBUG="1",
        # Templates name static files that were never collected.
        STATICFILES_BACKEND="django.contrib.staticfiles.storage.StaticFilesStorage",
        # The load below is one client; a 429 would hide what is measured.
        API_THROTTLE_USER="1000000/minute",
        API_THROTTLE_ANON="1000000/minute",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env


def _run(env: dict, *args: str) -> str:
    done = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{args} exited with {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


def _manage(env: dict, *args: str) -> str:
    return _run(env, "manage.py", *args)


@pytest.fixture(scope="module")
def prepared_site(tmp_path_factory) -> tuple[Path, str]:
    """A migrated database with the demo and an editor's token, copied for each test."""
    var_dir = tmp_path_factory.mktemp("defaults-site") / "var"
    env = _environment(var_dir)
    _manage(env, "migrate", "--noinput")
    _manage(env, "load_demo")
    _manage(env, "create_demo_editor")
    created = _manage(env, "drf_create_token", "editor")
    token = re.search(r"Generated token (\w+)", created)
    assert token, created
    return var_dir, token.group(1)


@pytest.fixture
def site(prepared_site, tmp_path) -> Site:
    template, token = prepared_site
    var_dir = tmp_path / "var"
    shutil.copytree(template, var_dir)
    return Site(var_dir=var_dir, env=_environment(var_dir), token=token)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _request(port: int, method: str, path: str, headers: dict | None = None) -> tuple:
    connection = HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    except OSError as exc:  # refused, reset, timed out: no answer at all
        return 0, repr(exc).encode()
    finally:
        connection.close()


class Server:
    def __init__(self, process: subprocess.Popen, port: int, access_log: Path, error_log: Path):
        self.process = process
        self.port = port
        self.access_log = access_log
        self.error_log = error_log

    def log_tail(self, lines: int = 40) -> str:
        text = self.error_log.read_text(errors="replace") if self.error_log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def errors(self) -> collections.Counter:
        """The exception lines Django logged (a traceback's last line), counted."""
        text = self.error_log.read_text(errors="replace") if self.error_log.exists() else ""
        return collections.Counter(
            re.findall(r"^\w+(?:\.\w+)*(?:Error|Exception): .*$", text, re.M)
        )

    def request(self, method: str, path: str, headers: dict | None = None) -> Answer:
        probe = uuid.uuid4().hex
        status, body = self._send(method, path, {**(headers or {}), PROBE: probe})
        return Answer(probe=probe, status=status, body=body)

    def _send(self, method, path, headers):
        return _request(self.port, method, path, headers)

    def get_many(self, path: str, count: int, concurrency: int = 2) -> list[Answer]:
        """`count` GETs, `concurrency` at a time (so that both workers take some), with the
        pid of the worker that answered each."""
        with ThreadPoolExecutor(concurrency) as pool:
            answers = list(pool.map(lambda _: self.request("GET", path), range(count)))
        self._add_pids(answers)
        return answers

    def _add_pids(self, answers: list[Answer]) -> None:
        # A worker logs a request once it has answered; wait for the lines to be written.
        wanted = {a.probe for a in answers}
        deadline = time.monotonic() + 10
        while True:
            pids = {}
            for line in self.access_log.read_text().splitlines():
                probe, pid, _ = line.split(" ", 2)
                if probe in wanted:
                    pids[probe] = pid
            if len(pids) == len(wanted) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        for answer in answers:
            answer.pid = pids.get(answer.probe, "")

    def warm(self, path: str) -> list[Answer]:
        """GET `path` until two worker processes have each answered it twice with a 200
        (the first renders and caches the page, the second is served from the cache)."""
        answers = []
        for _ in range(50):
            answers += self.get_many(path, 4)
            served = collections.Counter(a.pid for a in answers if a.status == 200)
            if len(served) >= 2 and all(n >= 2 for n in served.values()):
                return answers
        statuses = collections.Counter((a.pid, a.status) for a in answers)
        pytest.fail(f"two workers did not both serve {path}: {statuses}\n{self.log_tail()}")


@contextlib.contextmanager
def gunicorn(site: Site, *, workers: int = 2, threads: int = 1):
    """`gunicorn curation.wsgi` on the site's defaults, stopped on the way out."""
    port = _free_port()
    access_log = site.var_dir / "access.log"
    error_log = site.var_dir / "gunicorn.log"
    command = [sys.executable, "-m", "gunicorn", "curation.wsgi"]
    command += ["--workers", str(workers), "--threads", str(threads)]
    command += ["--bind", f"127.0.0.1:{port}", "--timeout", "60"]
    command += ["--access-logfile", str(access_log), "--access-logformat", ACCESS_FORMAT]
    # No control socket: its default path is one per user, shared by every gunicorn.
    command += ["--error-logfile", "-", "--no-control-socket"]
    with error_log.open("w") as log:  # gunicorn's log and Django's errors
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            command,
            cwd=BASE_DIR,
            env=site.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(process, port, access_log, error_log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while _request(port, "GET", "/api/v1/")[0] == 0:
            if process.poll() is not None:
                pytest.fail(f"gunicorn exited with {process.returncode}:\n{server.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"gunicorn did not answer in {START_TIMEOUT}s:\n{server.log_tail()}")
            time.sleep(0.2)
        yield server
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def _editor(site: Site) -> dict:
    # Workflow actions need If-Match; "*" acts on whatever version is current.
    return {"Authorization": f"Token {site.token}", "If-Match": "*"}


def _summary(answers: list[Answer]) -> collections.Counter:
    return collections.Counter((a.pid, a.status) for a in answers)


# --- One file cache for every process --------------------------------------------------

# Each process adds 1 to "generation" ROUNDS times and tries to `add` the keys first-0 to
# first-<ROUNDS - 1>, printing the ones it added; all processes start together.
HAMMER = r"""
import os, time
import django
from django.conf import settings
settings.configure(
    CACHES={"default": {"BACKEND": os.environ["BACKEND"], "LOCATION": os.environ["LOCATION"]}}
)
django.setup()
from django.core.cache import cache
while not os.path.exists(os.environ["GO"]):
    time.sleep(0.001)
for i in range(int(os.environ["ROUNDS"])):
    cache.incr("generation")
    if cache.add(f"first-{i}", os.getpid(), None):
        print(i)
"""


def test_the_file_cache_counts_and_adds_atomically_across_processes(tmp_path):
    """What a counter kept in the cache needs: no increment lost, one `add` of a key wins.

    (Django's FileBasedCache loses about two increments in three here.)
    """
    processes, rounds = 4, 150
    location = tmp_path / "cache"
    cache = FileBasedCache(str(location), {})
    cache.set("generation", 0, None)
    env = {
        **os.environ,
        "BACKEND": "summaries.pagecache.filecache.FileBasedCache",
        "LOCATION": str(location),
        "GO": str(tmp_path / "go"),
        "ROUNDS": str(rounds),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    hammers = [
        subprocess.Popen(  # noqa: S603 - fixed arguments
            [sys.executable, "-c", HAMMER], cwd=BASE_DIR, env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(processes)
    ]
    try:
        (tmp_path / "go").touch()
        outputs = [hammer.communicate(timeout=COMMAND_TIMEOUT)[0] for hammer in hammers]
    finally:
        for hammer in hammers:
            if hammer.poll() is None:
                hammer.kill()
                hammer.wait(10)
    assert [hammer.returncode for hammer in hammers] == [0] * processes
    assert cache.get("generation") == processes * rounds
    added = collections.Counter(int(line) for out in outputs for line in out.split())
    assert added == dict.fromkeys(range(rounds), 1)


def test_culling_drops_expired_files_first_and_spares_keys_without_a_timeout(tmp_path):
    """Past MAX_ENTRIES: expired files go, then the live ones closest to expiry; a key kept
    with no timeout stays while others can go."""
    cache = FileBasedCache(str(tmp_path), {"OPTIONS": {"MAX_ENTRIES": 30, "CULL_CHECK_EVERY": 1}})
    cache.set("content-generation", 7, None)
    for i in range(20):
        cache.set(f"old:{i}", i, 0)  # expired at once
    for i in range(15):
        cache.set(f"page:{i}", i, 300)
    assert [cache.get(f"page:{i}") for i in range(15)] == list(range(15))
    for i in range(200):
        cache.set(f"later:{i}", i, 300 + i)
    assert len(list(tmp_path.glob("*.djcache"))) <= 30
    assert cache.get("content-generation") == 7
    assert cache.get("later:199") == 199
    assert cache.incr("content-generation") == 8


def test_an_unpublished_summary_is_gone_from_every_worker(site):
    with gunicorn(site) as server:
        server.warm(PAGE)

        unpublished = server.request("POST", f"{API_SUMMARY}unpublish/", _editor(site))
        assert unpublished.status == 200, unpublished.body[:500]

        answers = server.get_many(PAGE, 20)
        assert [a.status for a in answers] == [404] * 20, (
            f"(worker, status) after unpublishing: {_summary(answers)}"
        )
        assert len({a.pid for a in answers}) == 2, _summary(answers)


def test_check_results_recorded_by_another_process_reach_every_worker(site):
    with gunicorn(site) as server:
        before = server.warm(PAGE)
        assert all(b"Not checked yet" in a.body for a in before if a.status == 200)

        # What the Celery worker does after checking links: another process, no request.
        report = json.loads(
            _run(
                {**site.env, "CHECKER_SECONDS": "0", "CHECKER_STATES": "broken"},
                "-c",
                CHECKER,
            )
        )
        assert report["recorded"] > 0 and not report["errors"], report

        answers = server.get_many(PAGE, 20)
        fresh = [a.status == 200 and b"Not checked yet" not in a.body for a in answers]
        assert all(fresh), f"(worker, status) after the checks: {_summary(answers)}"
        assert all(b"Unavailable when last checked" in a.body for a in answers)
        assert len({a.pid for a in answers}) == 2, _summary(answers)


# --- SQLite under concurrent writers ----------------------------------------------------

LOAD_SECONDS = 15


def test_editors_readers_and_a_checker_at_once_get_no_server_error(site):
    """Publish/unpublish from two editor threads, pages read from three more, on two
    gunicorn processes of four threads each, while another process records checks."""
    answers: list[tuple[str, int, bytes]] = []
    stop = threading.Event()

    def editor():
        while not stop.is_set():
            for action in ("unpublish", "publish"):
                answer = server.request("POST", f"{API_SUMMARY}{action}/", _editor(site))
                answers.append((action, answer.status, answer.body))

    def reader(path):
        while not stop.is_set():
            answer = server.request("GET", path)
            answers.append((path, answer.status, answer.body))

    checker_env = {**site.env, "CHECKER_SECONDS": str(LOAD_SECONDS), "CHECKER_STATES": "broken,ok"}
    with gunicorn(site, workers=2, threads=4) as server:
        checker = subprocess.Popen(  # noqa: S603 - fixed arguments
            [sys.executable, "-c", CHECKER],
            cwd=BASE_DIR,
            env=checker_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            threads = [threading.Thread(target=editor) for _ in range(2)]
            threads += [
                threading.Thread(target=reader, args=(p,)) for p in (PAGE, "/", CHANNEL_PAGE)
            ]
            for thread in threads:
                thread.start()
            try:
                out, err = checker.communicate(timeout=LOAD_SECONDS + COMMAND_TIMEOUT)
            finally:
                stop.set()
                for thread in threads:
                    thread.join(120)
        finally:
            if checker.poll() is None:
                os.killpg(checker.pid, signal.SIGKILL)
                checker.wait(10)
        logged = server.errors()

    assert checker.returncode == 0, err[-3000:]
    report = json.loads(out)
    counts = collections.Counter((what, status) for what, status, _ in answers)
    print(f"answers: {dict(counts)}\nchecker: {report}")  # shown with -rP
    failed = [(what, status, body) for what, status, body in answers if status >= 500 or not status]
    details = "\n".join(f"{what} {status}: {body[:200]!r}" for what, status, body in failed[:3])
    assert not failed, f"{len(failed)} failed of {counts}:\n{details}\nlogged: {logged}"
    assert not report["errors"], f"the checker process: {report}"
    # The load really ran: both kinds of writer and the readers got through, many times.
    assert report["rounds"] >= 5, report
    assert counts["publish", 200] >= 5 and counts["unpublish", 200] >= 5, counts
    assert all(status in (200, 404) for (what, status) in counts if what == PAGE), counts
