"""The service on several machines, some of them failing.

Built with Linux network namespaces (tests/integration/machines.py), all on one bridge in
198.18.0.0/24 with no route out, created and deleted by the module's fixture:

- db (.10): PostgreSQL and Redis of the test's own (broker, cache and host limiter);
- rp (.11): a streaming replica of db's PostgreSQL, the web machines' DATABASE_REPLICA_URL;
- wa, wb (.21, .22): gunicorn of this project, two processes each;
- w1, w2 (.31, .32): a Celery worker each; Celery beat on w1;
- vc (.41): Varnish with the repository's VCL in front of wa, purged by tag from the
  workers (HTTP_CACHE_PURGE_BACKEND=varnish); only the web and worker machines may purge;
- i1, i2, i3 (.101–.103): "internet" sites serving the cited pages (page_server.py), which
  count the requests per path and per client and the requests in flight; the workers'
  FETCH_ALLOWED_NETWORKS names their subnet (198.18.0.96/27) and nothing else;
- lab (.250): where the test stands: its HTTP, SQL and Redis clients run in threads that
  entered this namespace (the test process itself has no way to the machines).

The database is migrated, the demo loaded and the sources created by `manage.py` run on
web machine A, as an operator would. Each test starts a "due time" by setting every test
source's next check to now, and counts per source the checks recorded (SourceCheck rows)
and the requests the sites received.

Runs as root on PostgreSQL + Redis (the second run of `make test`); skipped elsewhere.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import secrets
import shutil
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import kombu
import psycopg
import pytest
import redis
from django.conf import settings

from bench import varnish
from summaries.demo import data as demo_data
from summaries.linkcheck.batch import BACKLOG  # results waiting to be written, at most
from tests.integration import machines
from tests.integration.machines import Lab, Machine, Postgres, Redis, wait_for

pytestmark = pytest.mark.integration

BASE_DIR = Path(settings.BASE_DIR)
ARTIFACTS = BASE_DIR / "test-artifacts" / "machines"
PAGE_SERVER = Path(__file__).with_name("page_server.py")
PYTHON = sys.executable

SOURCES = 3000
SITES = {"i1": 101, "i2": 102, "i3": 103}
INTERNET = "198.18.0.96/27"  # the sites' subnet: the only one the workers may fetch from
PER_HOST = 2  # FETCH_PER_HOST: requests in flight per site, across both workers
DEADLINE = 5  # FETCH_DEADLINE
LEASE = 30  # CHECK_CLAIM_SECONDS
DISPATCH_EVERY = 2  # CHECK_DISPATCH_EVERY: beat's dispatch, which is also the sweeper
BATCH = 50  # FETCH_BATCH_SIZE
RECORD_EVERY = 10  # summaries.checking.record.RECORD_EVERY: results written in chunks
# The line a worker logs when it starts a check batch (summaries.checking.tasks).
STARTED = re.compile(r"check batch ([0-9a-f]{32}) started")
PAGE_DELAY = "0.01"  # seconds each site takes to answer
# After a claim lapses: the sweep (DISPATCH_EVERY), the host slots the lost worker held
# lapse (DEADLINE + 5 s, checking/limiter.py) and one batch runs.
SWEEP_GRACE = DISPATCH_EVERY + DEADLINE + 5 + 10
DOWN_SECONDS = 4  # how long Redis and PostgreSQL stay down when restarted
SLUG = demo_data.MAIN_VIDEO["slug"]
PAGE = f"/videos/{SLUG}/"
CHANNEL = f"/channels/{demo_data.CHANNEL['slug']}/"
# A made-up query parameter is served but never kept by the page cache: that reader's home
# page is rendered on every request, so it needs the database each time.
UNCACHED = "/?reader=uncached"
READ_PATHS = ("/", PAGE, CHANNEL, UNCACHED, "/api/v1/summaries/", "/readyz")

FIGURES: dict[str, object] = {}


def _requirement() -> str | None:
    database = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" not in database or not settings.REDIS_URL:
        return "runs in the PostgreSQL + Redis run of `make test` (this run has no Redis)"
    return machines.missing_requirement()


# --- The test's hands: SQL, HTTP and Redis from the lab machine ------------------------------


@dataclass
class Answer:
    at: float  # time.time() when the answer came
    web: str
    path: str
    status: int  # 0: no HTTP answer
    seconds: float


def _http(address: str, method: str, path: str, headers=None, timeout: float = 10):
    connection = http.client.HTTPConnection(address, 80, timeout=timeout)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    except OSError as error:
        return 0, repr(error).encode()
    finally:
        connection.close()


class Console:
    """Runs the test's clients in threads on the lab machine (never in the host's own
    network namespace, whose default route leads out)."""

    def __init__(self, lab_machine: Machine, database: str, redis_url: str) -> None:
        self.threads = lab_machine.threads(24)
        self.database = database
        self.redis_url = redis_url

    def on_lab(self, function, *args, timeout: float = 60):
        return self.threads.submit(function, *args).result(timeout)

    def http(self, address: str, method: str, path: str, headers=None, timeout: float = 10):
        return self.on_lab(_http, address, method, path, headers, timeout, timeout=timeout + 5)

    def sql(self, query: str, *params):
        def run():
            with psycopg.connect(self.database, connect_timeout=5, autocommit=True) as conn:
                cursor = conn.execute(query, params)
                return cursor.fetchall() if cursor.description else cursor.rowcount

        return self.on_lab(run)

    def replica_sql(self, replica: str, query: str):
        def run():
            with psycopg.connect(replica, connect_timeout=5, autocommit=True) as conn:
                return conn.execute(query).fetchall()

        return self.on_lab(run)

    def try_sql(self, query: str, *params):
        """The rows, or None while the database cannot be reached."""
        try:
            return self.sql(query, *params)
        except psycopg.OperationalError:
            return None

    def redis(self, function):
        def run():
            client = redis.Redis.from_url(self.redis_url, socket_timeout=5)
            try:
                return function(client)
            finally:
                client.close()

        return self.on_lab(run)

    def stats(self, address: str) -> dict:
        status, body = self.http(address, "GET", "/__stats")
        assert status == 200, body[:300]
        return json.loads(body)


class Readers:
    """Anonymous readers loading pages from both web machines, as fast as they get answers."""

    def __init__(self, console: Console, webs: dict[str, str], count: int = 4) -> None:
        self.console = console
        self.targets = [(name, path) for path in READ_PATHS for name in webs]
        self.webs = webs
        self.count = count
        self.answers: list[Answer] = []
        self.stopping = threading.Event()
        self.futures = []

    def _read(self, offset: int) -> None:
        turn = offset
        while not self.stopping.is_set():
            web, path = self.targets[turn % len(self.targets)]
            turn += 1
            started = time.monotonic()
            status, _ = _http(self.webs[web], "GET", path, timeout=10)
            self.answers.append(Answer(time.time(), web, path, status, time.monotonic() - started))
            time.sleep(0.02)

    def start(self) -> None:
        self.futures = [self.console.threads.submit(self._read, i * 3) for i in range(self.count)]

    def stop(self) -> list[Answer]:
        self.stopping.set()
        for future in self.futures:
            future.result(30)
        return self.answers


# --- The machines --------------------------------------------------------------------------


class Cluster:
    """The lab with its services running; built once for the module."""

    def __init__(self, lab: Lab, run_dir: Path) -> None:
        self.lab = lab
        self.run_dir = run_dir
        make = lab.machine
        self.db = make("db", 10)
        self.replica_machine = make("rp", 11)
        self.webs = {"wa": make("wa", 21), "wb": make("wb", 22)}
        self.workers_machines = {"w1": make("w1", 31), "w2": make("w2", 32)}
        self.cache_machine = make("vc", 41)
        self.varnish: machines.Process | None = None
        self.sites = {role: make(role, host) for role, host in SITES.items()}
        self.lab_machine = make("lab", 250)
        self.postgres = Postgres(
            self.db,
            run_dir / "postgres",
            {
                "fsync": "off",
                "synchronous_commit": "off",
                "full_page_writes": "off",
                "max_connections": "200",
                # A client cut off in the middle of a transaction holds its row locks
                # until the server notices it is gone: keepalives and a TCP user timeout.
                "tcp_keepalives_idle": "2",
                "tcp_keepalives_interval": "1",
                "tcp_keepalives_count": "3",
                "tcp_user_timeout": "5000",
            },
        )
        self.replica = Postgres(
            self.replica_machine, run_dir / "replica", {"max_connections": "200"}
        )
        self.redis = Redis(self.db, run_dir / "redis")
        self.console = Console(self.lab_machine, self.postgres.url, self.redis.url)
        self.secret = secrets.token_urlsafe(50)
        self.web_processes: dict[str, machines.Process] = {}
        self.workers: dict[str, machines.Process] = {}
        self.beat: machines.Process | None = None
        self.site_processes: dict[str, machines.Process] = {}
        self.token = ""
        self.urls: dict[str, int] = {}  # url -> source id

    @property
    def hosts(self) -> list[str]:
        return [site.address for site in self.sites.values()]

    def environment(self, machine: Machine) -> dict[str, str]:
        """The environment of every process of the project on `machine`: production
        settings (DEBUG off), the db machine's services, var/ of the machine's own."""
        var_dir = self.run_dir / machine.role / "var"
        var_dir.mkdir(parents=True, exist_ok=True)
        webs = [web.address for web in self.webs.values()]
        replica = self.replica.url if machine in self.webs.values() else ""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.run_dir),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "curation.settings",
            "CURATION_VAR_DIR": str(var_dir),
            "DEBUG": "0",
            "SECRET_KEY": self.secret,
            "ALLOWED_HOSTS": ",".join([*webs, self.cache_machine.address]),
            "CSRF_TRUSTED_ORIGINS": ",".join(f"http://{web}" for web in webs),
            # Plain HTTP inside the lab: no redirect to https, no secure-only cookies.
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
            "STATICFILES_BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage",
            "DATABASE_URL": self.postgres.url,
            "DATABASE_REPLICA_URL": replica,
            "REDIS_URL": self.redis.url,
            "CACHE_URL": "",
            "API_THROTTLE_ANON": "1000000/minute",
            "API_THROTTLE_USER": "1000000/minute",
            "LOG_LEVEL": "INFO",
            "FETCH_ALLOWED_NETWORKS": INTERNET,
            "FETCH_PER_HOST": str(PER_HOST),
            "FETCH_DEADLINE": str(DEADLINE),
            "FETCH_BATCH_SIZE": str(BATCH),
            "CHECK_CLAIM_SECONDS": str(LEASE),
            "CHECK_DISPATCH_EVERY": str(DISPATCH_EVERY),
            "CHECK_INTERVAL_HEALTHY": str(30 * 24 * 3600),
            "CHECK_INTERVAL_PROBLEM": str(30 * 24 * 3600),
            "RELATED_REFRESH_EVERY": "3600",
            "PUBLISH_CHANGES_EVERY": "3600",
            **self.purge_settings(),
        }

    def purge_settings(self) -> dict[str, str]:
        """Purges of the Varnish machine, where Varnish can run here."""
        if varnish.missing():
            return {}
        return {
            "HTTP_CACHE_PURGE_BACKEND": "varnish",
            "HTTP_CACHE_PURGE_URLS": f"http://{self.cache_machine.address}:80/",
            "HTTP_CACHE_S_MAXAGE": "3600",
        }

    def start_varnish(self) -> None:
        """varnishd on the cache machine in front of web A; the web and worker machines may
        purge, no other (the lab machine, where the test stands, may not)."""
        if varnish.missing():
            return
        folder = self.run_dir / "varnish"
        folder.mkdir(mode=0o755)
        purgers = tuple(m.address for m in (*self.webs.values(), *self.workers_machines.values()))
        (folder / "site.vcl").write_text(varnish.site_vcl(self.webs["wa"].address, 80, purgers))
        listen = f"{self.cache_machine.address}:80"
        self.varnish = self.cache_machine.start("varnish", *varnish.command(folder, listen))
        wait_for(
            lambda: self.console.http(self.cache_machine.address, "GET", "/readyz")[0] == 200,
            "Varnish did not answer",
            60,
            processes=[self.varnish],
        )

    def manage(self, *args: str, env_extra: dict | None = None) -> str:
        web = self.webs["wa"]
        env = {**self.environment(web), **(env_extra or {})}
        return web.run(PYTHON, "manage.py", *args, env=env, cwd=BASE_DIR)

    # -- start-up ---------------------------------------------------------------------------

    def start(self) -> None:
        self.postgres.create()
        self.replica.create_replica_of(self.postgres)
        self.redis.start()
        wait_for(self._redis_answers, "Redis did not start", 30, processes=[self.redis.process])
        for role, site in self.sites.items():
            env = {
                "PATH": os.environ.get("PATH", ""),
                "PAGE_DELAY": PAGE_DELAY,
                "PAGE_LIMIT": str(PER_HOST),
            }
            self.site_processes[role] = site.start(
                f"site-{role}", PYTHON, str(PAGE_SERVER), site.address, "80", env=env
            )
        self.manage("migrate", "--noinput")
        self.manage("load_demo")
        self.manage("create_demo_editor")
        created = self.manage("drf_create_token", "editor")
        self.token = re.search(r"Generated token (\w+)", created).group(1)
        self.manage(
            "shell",
            "-c",
            CREATE_SOURCES,
            env_extra={"LAB_HOSTS": ",".join(self.hosts), "LAB_SOURCES": str(SOURCES)},
        )
        rows = self.console.sql(
            "SELECT url, id FROM summaries_source WHERE host = ANY(%s)", self.hosts
        )
        self.urls = dict(rows)
        assert len(self.urls) == SOURCES
        for role in self.webs:
            self.start_web(role)
        for role in self.workers_machines:
            self.start_worker(role)
        self.beat = self.workers_machines["w1"].start(
            "beat-w1",
            PYTHON,
            "-m",
            "celery",
            "-A",
            "curation",
            "beat",
            "--loglevel",
            "info",
            env=self.environment(self.workers_machines["w1"]),
            cwd=BASE_DIR,
        )
        for role, site in self.sites.items():
            wait_for(
                lambda s=site: self.console.http(s.address, "GET", "/__stats")[0] == 200,
                f"site {role} did not answer",
                30,
                processes=[self.site_processes[role]],
            )
        for role, web in self.webs.items():
            wait_for(
                lambda w=web: self.console.http(w.address, "GET", "/")[0] == 200,
                f"web {role} did not answer",
                60,
                processes=[self.web_processes[role]],
            )
        for role in self.workers:
            self.wait_for_worker(role)
        self.start_varnish()

    def _redis_answers(self) -> bool:
        try:
            return self.console.redis(lambda client: client.ping())
        except redis.RedisError:
            return False

    def start_web(self, role: str) -> None:
        web = self.webs[role]
        self.web_processes[role] = web.start(
            f"web-{role}",
            PYTHON,
            "-m",
            "gunicorn",
            "curation.wsgi",
            "--workers",
            "2",
            "--threads",
            "2",
            "--bind",
            f"{web.address}:80",
            "--timeout",
            "30",
            "--graceful-timeout",
            "5",
            "--no-control-socket",
            "--error-logfile",
            "-",
            env=self.environment(web),
            cwd=BASE_DIR,
        )

    def start_worker(self, role: str) -> machines.Process:
        machine = self.workers_machines[role]
        process = machine.start(
            f"worker-{role}",
            PYTHON,
            "-m",
            "celery",
            "-A",
            "curation",
            "worker",
            "--loglevel",
            "info",
            "--concurrency",
            "1",
            "--hostname",
            f"worker@{role}",
            env=self.environment(machine),
            cwd=BASE_DIR,
        )
        self.workers[role] = process
        return process

    def wait_for_worker(self, role: str) -> None:
        process = self.workers[role]
        wait_for(
            lambda: "ready." in process.log_text(),
            f"worker {role} did not start",
            60,
            processes=[process],
        )

    # -- what the test reads -----------------------------------------------------------------

    def checks(self) -> int:
        return self.console.sql("SELECT count(*) FROM summaries_sourcecheck")[0][0]

    def sources(self) -> dict[int, tuple]:
        """Per source id: (check token, claimed until, history rows, last row id)."""
        rows = self.console.sql(
            "SELECT s.id, s.check_token, s.claimed_until, count(c.id), max(c.id) "
            "FROM summaries_source s LEFT JOIN summaries_sourcecheck c ON c.source_id = s.id "
            "WHERE s.host = ANY(%s) GROUP BY s.id",
            self.hosts,
        )
        return {row[0]: row[1:] for row in rows}

    def rows_since(self, last_id: int) -> list[tuple]:
        """History rows written after row `last_id`: (source id, token, checked_at)."""
        return self.console.sql(
            "SELECT source_id, token, extract(epoch FROM checked_at) FROM summaries_sourcecheck "
            "WHERE id > %s ORDER BY id",
            last_id,
        )

    def attempts_since(self, last_id: int) -> dict[int, int]:
        """Each source's tries (requests) in its history row after row `last_id`."""
        rows = self.console.sql(
            "SELECT source_id, attempts FROM summaries_sourcecheck WHERE id > %s", last_id
        )
        return dict(rows)

    def checks_of(self, source_ids, since_id: int) -> list[tuple]:
        """What the history rows after `since_id` of these sources say (for failures)."""
        return self.console.sql(
            "SELECT source_id, token, state, error_class, error, attempts, response_ms, "
            "checked_at FROM summaries_sourcecheck WHERE id > %s AND source_id = ANY(%s) "
            "ORDER BY id",
            since_id,
            list(source_ids),
        )

    def started_tokens(self, role: str) -> list[str]:
        """The check batches worker `role` started, oldest first, from its log."""
        return STARTED.findall(self.workers[role].log_text())

    def claimed_with(self, token: str) -> int:
        """How many sources are still claimed under batch `token`."""
        return self.console.sql(
            "SELECT count(*) FROM summaries_source WHERE check_token = %s", token
        )[0][0]

    def last_row(self) -> int:
        return self.console.sql("SELECT coalesce(max(id), 0) FROM summaries_sourcecheck")[0][0]

    def hits(self) -> dict[int, Counter]:
        """Per source id: the requests its site received, per client address."""
        counted: dict[int, Counter] = {pk: Counter() for pk in self.urls.values()}
        for site in self.sites.values():
            for path, clients in self.console.stats(site.address)["hits"].items():
                pk = self.urls.get(f"http://{site.address}{path}")
                if pk is not None:
                    counted[pk].update(clients)
        return counted

    def politeness(self) -> dict[str, dict]:
        """Per site: the peak of requests in flight and the moments past PER_HOST."""
        return {
            role: {key: stats[key] for key in ("peak", "over", "requests")}
            for role, site in self.sites.items()
            for stats in [self.console.stats(site.address)]
        }

    def make_due(self) -> float:
        """A due time arrives for every test source; returns its time."""
        now = time.time()
        self.console.sql(
            "UPDATE summaries_source SET next_check_at = now() WHERE host = ANY(%s)", self.hosts
        )
        return now

    def round_done(self, last_id: int) -> bool:
        """Every source has a history row written after `last_id` and none is claimed."""
        done = self.console.try_sql(
            "SELECT count(DISTINCT source_id) FROM summaries_sourcecheck WHERE id > %s", last_id
        )
        if not done or done[0][0] < SOURCES:
            return False
        claimed = self.console.try_sql(
            "SELECT count(*) FROM summaries_source WHERE check_token <> '' AND host = ANY(%s)",
            self.hosts,
        )
        return claimed is not None and claimed[0][0] == 0

    def deliver_held_messages(self, *, held_for: float) -> None:
        """Deliver again now what has been taken from the broker and left unacknowledged
        for `held_for` seconds, as the visibility timeout (an hour) does later.

        A worker that loses Redis hands back the messages it holds; while Redis is down
        that fails, and the messages wait in Redis's unacked set until that timeout.
        """

        def run():
            options = {"visibility_timeout": held_for}
            with kombu.Connection(self.console.redis_url, transport_options=options) as conn:
                conn.default_channel.qos.restore_visible(num=1000)

        self.console.on_lab(run)

    def broker_idle(self) -> bool:
        """No task waits in the broker or is taken and unacknowledged."""
        try:
            waiting, unacked = self.console.redis(
                lambda client: (client.llen("celery"), client.hlen("unacked"))
            )
        except redis.RedisError:
            return False
        return waiting == 0 and unacked == 0

    def queued_tokens(self, *, taken: bool = False) -> set[str]:
        """The tokens of the check batches waiting in the broker; with `taken`, also of
        those a worker has taken and not acknowledged (kombu keeps them in its "unacked"
        hash, and hands them out again if the worker is lost): both are kept by Redis."""

        def read(client):
            waiting = client.lrange("celery", 0, -1)
            unacked = client.hvals("unacked") if taken else []
            # An unacknowledged entry is [message, exchange, routing key].
            return waiting + [json.dumps(json.loads(raw)[0]) for raw in unacked]

        tokens = set()
        for raw in self.console.redis(read):
            message = json.loads(raw)
            if message.get("headers", {}).get("task") != "summaries.tasks.check_source_batch":
                continue
            body = json.loads(base64.b64decode(message["body"]))
            tokens.add(body[0][1])
        return tokens

    def processes(self) -> list[machines.Process]:
        listed = [*self.web_processes.values(), *self.workers.values(), self.beat]
        return [p for p in listed if p is not None]


# Run on web machine A with `manage.py shell -c`: the sources to check, on the sites, not due
# yet; the demo's own sources (real-world addresses) are never checked in the lab.
CREATE_SOURCES = """
import datetime, os
from django.utils import timezone
from summaries.models import Source
hosts = os.environ["LAB_HOSTS"].split(",")
count = int(os.environ["LAB_SOURCES"])
later = timezone.now() + datetime.timedelta(days=30)
Source.objects.exclude(host__in=hosts).update(ignored=True, check_token="", claimed_until=None)
Source.objects.bulk_create(
    [
        Source(url=f"http://{hosts[i % len(hosts)]}/s/{i}", host=hosts[i % len(hosts)],
               next_check_at=later)
        for i in range(count)
    ],
    batch_size=1000,
)
print(Source.objects.filter(host__in=hosts).count())
"""


@pytest.fixture(scope="module")
def cluster():
    reason = _requirement()
    if reason:
        pytest.skip(reason)
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    machines.remove_leftovers()
    run_dir = Path(f"/tmp/{machines.PREFIX}{os.getpid()}-run")  # noqa: S108 - our own
    run_dir.mkdir(mode=0o755)
    run_dir.chmod(0o755)  # the postgres user reaches its data folder through it
    lab = None
    try:
        lab = Lab(ARTIFACTS)
        built = Cluster(lab, run_dir)
        built.start()
        yield built
    finally:
        if lab is not None:
            lab.close()
        shutil.rmtree(run_dir, ignore_errors=True)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "figures.json").write_text(json.dumps(FIGURES, indent=2, default=str))


def report(name: str, figures: dict) -> None:
    FIGURES[name] = figures
    print(f"\n[machines] {name}: {json.dumps(figures, default=str)}")


def _assert_polite(cluster: Cluster) -> dict:
    polite = cluster.politeness()
    peaks = {role: p["peak"] for role, p in polite.items()}
    over = {role: p["over"][:5] for role, p in polite.items() if p["over"]}
    assert not over and max(peaks.values()) <= PER_HOST, (
        f"more than {PER_HOST} requests in flight at a site: peaks {peaks}, first times {over}"
    )
    return peaks


# --- The tests -----------------------------------------------------------------------------


def test_a_worker_cut_off_mid_batch_loses_and_repeats_nothing(cluster):
    """Worker machine w2 is unplugged from the network in the middle of a batch.

    Its claims lapse after the lease and the sweeper (beat on w1) gives them to w1: every
    source gets exactly one history row this due time, within the lease and a sweep of
    the cut. Requests: each source is fetched once, except the few w2 had fetched and not
    recorded when it was cut (a chunk, the results waiting behind it, its requests in
    flight), fetched once
    more by w1. When w2's link comes back, w2 (alive, with its batch) records nothing and
    sends nothing. Then it is killed, and started again for the next tests.
    """
    c = cluster
    w2 = c.workers_machines["w2"].address
    w1 = c.workers_machines["w1"].address
    before_hits = c.hits()
    last_id = c.last_row()
    due_at = c.make_due()

    def w2_busy():
        recorded = c.console.sql(
            "SELECT count(*) FROM summaries_sourcecheck WHERE id > %s", last_id
        )[0][0]
        if recorded < SOURCES // 4:
            return False
        first = sum(h[w2] for h in c.hits().values())
        time.sleep(0.3)
        if sum(h[w2] for h in c.hits().values()) <= first:
            return False  # not fetching right now
        # ...and early in a batch: its newest batch has recorded at most one chunk. w2 checks
        # a batch in about half a second, so a batch nearer its end could be finished by the
        # time the link is down (cut between two batches, w2 would hold nothing for the
        # sweeper to hand over).
        tokens = c.started_tokens("w2")
        return bool(tokens) and c.claimed_with(tokens[-1]) >= BATCH - RECORD_EVERY

    wait_for(
        w2_busy,
        "w2 did not check a quarter of the sources",
        120,
        every=0.2,
        processes=c.processes(),
    )
    c.workers_machines["w2"].cut()
    cut_at = time.time()
    at_cut = c.sources()
    hits_at_cut = c.hits()

    wait_for(
        lambda: c.round_done(last_id),
        "the sources were not all checked after the cut",
        LEASE + SWEEP_GRACE + 120,
        every=0.5,
        processes=[c.workers["w1"], c.beat],
    )
    done_at = time.time()
    rows = c.rows_since(last_id)
    rows_at_heal, hits_at_heal = len(rows), c.hits()
    c.workers_machines["w2"].plug()
    healed_at = time.time()
    # w2 ends the batch it had (its writes find the claims gone) and acknowledges it: the
    # broker has nothing waiting and nothing unacknowledged.
    wait_for(c.broker_idle, "the broker did not empty after w2's link came back", 240, every=0.5)
    idle_at = time.time()
    time.sleep(3)
    settled_rows = c.rows_since(last_id)
    hits = c.hits()

    # Exactly one history row per source for this due time, none written after the heal.
    per_source = Counter(source for source, _, _ in rows)
    assert per_source == dict.fromkeys(c.urls.values(), 1)
    assert len(settled_rows) == rows_at_heal == SOURCES, "w2 recorded after its link came back"
    # Requests this due time, per source and client.
    got = {pk: hits[pk] - before_hits[pk] for pk in c.urls.values()}
    assert all(set(clients) <= {w1, w2} for clients in got.values())
    assert hits == hits_at_heal, "requests were sent after w2's link came back"
    assert all(hits[pk][w2] == hits_at_cut[pk][w2] for pk in got), "w2 fetched while cut off"
    # A check that retried (a time-out, a reset) sent one request a try: its row's attempts.
    # The worker whose batch recorded a source sent exactly that many; w1 sent nothing for
    # what w2 recorded; w2 sent at most that many for what w1 recorded (w2 fetched it and
    # was cut off before recording it).
    # w2's batches are the ones its worker log says it started (the claim was taken before
    # the cut; a batch it had reserved may start after it, and is stranded all the same).
    held_tokens = set(c.started_tokens("w2"))
    token_of = {source: token for source, token, _ in rows}
    tries = c.attempts_since(last_id)
    by_w2 = {pk for pk in got if token_of[pk] in held_tokens}
    odd = {
        pk: dict(got[pk])
        for pk in got
        if (got[pk] != {w2: tries[pk]} if pk in by_w2 else got[pk][w1] != tries[pk])
    }
    # A string, so that pytest prints every odd source (it shortens other objects).
    assert not odd, (
        f"requests other than a check's tries: {odd} (w1 {w1}, w2 {w2}); "
        f"their checks: {c.checks_of(odd, last_id)}"
    )
    twice = {pk for pk in got if pk not in by_w2 and got[pk][w2]}
    # Fetched twice: only what w2 had fetched and not recorded: the chunk it was writing
    # when it was cut off, the results that came meanwhile (its fetcher starts nothing new
    # once BACKLOG of them wait to be written) and its requests in flight at each site.
    # (Runs have seen 15 to 17.)
    assert len(twice) <= RECORD_EVERY + BACKLOG + PER_HOST * len(SITES), len(twice)
    # The sources w2 held were swept (claimed again) and checked by w1 within the bound.
    stranded = {pk for pk, (token, _, _, _) in at_cut.items() if token in held_tokens}
    stranded -= by_w2  # w2 recorded them
    assert stranded, "w2 held no claimed source at the cut"
    checked_at = {source: at for source, _, at in rows}
    assert all(got[pk][w1] == tries[pk] for pk in stranded)
    latest = max(float(checked_at[pk]) for pk in stranded)
    # w2's claims were taken before the cut, so they lapse within LEASE of it; then the
    # sweep queues them behind whatever due batches w1 still has: they are checked within
    # SWEEP_GRACE of the lapse, or of the moment w1 is through the rest of the due time.
    rest_done = max(float(at) for source, _, at in rows if source not in stranded)
    bound = max(LEASE + SWEEP_GRACE, rest_done - cut_at + SWEEP_GRACE)
    assert latest - cut_at <= bound, (latest - cut_at, bound)

    times = sorted(float(at) for _, _, at in rows)
    before_cut = [t for t in times if t <= cut_at]
    report(
        "worker cut off",
        {
            "sources": SOURCES,
            "checks_per_second_both_workers": round(len(before_cut) / (cut_at - due_at), 1),
            "checks_per_second_whole_due_time": round(SOURCES / (times[-1] - due_at), 1),
            "stranded_at_cut": len(stranded),
            "fetched_twice": len(twice),
            "stranded_checked_seconds_after_cut": round(latest - cut_at, 1),
            "bound_seconds": round(bound, 1),
            "rest_checked_seconds_after_cut": round(rest_done - cut_at, 1),
            "all_checked_seconds_after_due": round(done_at - due_at, 1),
            "broker_idle_seconds_after_heal": round(idle_at - healed_at, 1),
            "peak_in_flight_per_site": _assert_polite(c),
        },
    )

    # Later w2 dies for good; its machine starts a new worker for the next tests.
    c.workers["w2"].kill()
    c.start_worker("w2")
    c.wait_for_worker("w2")


def test_an_unpublish_through_one_web_machine_is_a_404_on_the_other(cluster):
    c = cluster
    a, b = c.webs["wa"].address, c.webs["wb"].address
    editor = {"Authorization": f"Token {c.token}", "If-Match": "*"}
    # Both of B's processes have served and cached the page.
    warm = [c.console.on_lab(_http, b, "GET", PAGE) for _ in range(12)]
    assert [status for status, _ in warm] == [200] * 12

    status, body = c.console.http(a, "POST", f"/api/v1/summaries/{SLUG}/unpublish/", editor)
    assert status == 200, body[:500]
    after = [c.console.http(b, "GET", PAGE)[0] for _ in range(12)]
    assert after == [404] * 12

    status, body = c.console.http(a, "POST", f"/api/v1/summaries/{SLUG}/publish/", editor)
    assert status == 200, body[:500]
    assert [c.console.http(b, "GET", PAGE)[0] for _ in range(12)] == [200] * 12


def _get_with_headers(address: str, path: str, headers=None):
    connection = http.client.HTTPConnection(address, 80, timeout=10)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_varnish_in_front_is_purged_by_the_workers_and_refuses_other_purgers(cluster):
    c = cluster
    if c.varnish is None:
        pytest.skip(varnish.missing())
    cache, a = c.cache_machine.address, c.webs["wa"].address
    editor = {"Authorization": f"Token {c.token}", "If-Match": "*"}

    def read(headers=None):
        return c.console.on_lab(_get_with_headers, cache, PAGE, headers)

    def purged() -> float:
        began = time.monotonic()
        wait_for(
            lambda: c.console.sql("SELECT count(*) FROM summaries_cachepurge")[0][0] == 0,
            "the purge was not confirmed",
            60,
            processes=[c.varnish],
        )
        return time.monotonic() - began

    purged()  # the last test's publish may still be on its way to the cache
    read()
    status, headers, _ = read()
    assert status == 200 and len(headers["X-Varnish"].split()) == 2, str(headers)  # a hit

    status, body = c.console.http(a, "POST", f"/api/v1/summaries/{SLUG}/unpublish/", editor)
    assert status == 200, body[:500]
    unpublished = purged()
    assert read()[0] == 404

    status, body = c.console.http(a, "POST", f"/api/v1/summaries/{SLUG}/publish/", editor)
    assert status == 200, body[:500]
    published = purged()
    assert read()[0] == 200
    # An editor's request (a token) is never answered from the cache.
    status, headers, _ = read({"Authorization": f"Token {c.token}"})
    assert len(headers["X-Varnish"].split()) == 1 and headers["Age"] == "0"

    def purge_from_lab():
        connection = http.client.HTTPConnection(cache, 80, timeout=10)
        connection.request("PURGE", "/", headers={"xkey-purge": "all"})
        return connection.getresponse().status

    assert c.console.on_lab(purge_from_lab) == 403
    assert read()[0] == 200 and len(read()[1]["X-Varnish"].split()) == 2  # still cached
    report("varnish", {"unpublish purged (s)": unpublished, "publish purged (s)": published})


def test_anonymous_api_reads_come_from_the_replica_machine(cluster):
    """DATABASE_REPLICA_URL names the replica machine: with its replay paused (a lagging
    replica), an unpublish through web A is already a 404 for readers and for the editor's
    API reads on web B (the primary), while anonymous API reads on B still show the summary
    (the replica), until replay resumes."""
    c = cluster
    a, b = c.webs["wa"].address, c.webs["wb"].address
    editor = {"Authorization": f"Token {c.token}", "If-Match": "*"}
    detail = f"/api/v1/summaries/{SLUG}/"
    # The replica has replayed the last test's publish (it lags by a moment).
    wait_for(lambda: c.console.http(b, "GET", detail)[0] == 200, "the replica caught up", 30)
    c.console.replica_sql(c.replica.url, "SELECT pg_wal_replay_pause()")
    try:
        status, body = c.console.http(a, "POST", f"{detail}unpublish/", editor)
        assert status == 200, body[:500]
        assert c.console.http(b, "GET", PAGE)[0] == 404
        status, body = c.console.http(b, "GET", detail, {"Authorization": editor["Authorization"]})
        assert json.loads(body)["status"] != "published", body[:300]
        assert c.console.http(b, "GET", detail)[0] == 200  # the lagging replica answered
    finally:
        c.console.replica_sql(c.replica.url, "SELECT pg_wal_replay_resume()")
    resumed = time.monotonic()
    wait_for(lambda: c.console.http(b, "GET", detail)[0] == 404, "the replica did not catch up", 30)
    caught_up = time.monotonic() - resumed
    status, body = c.console.http(a, "POST", f"{detail}publish/", editor)
    assert status == 200, body[:500]
    wait_for(lambda: c.console.http(b, "GET", detail)[0] == 200, "the replica did not follow", 30)
    report("replica", {"caught_up_seconds_after_resume": round(caught_up, 2)})


def _outage(answers: list[Answer], start: float, end: float) -> dict[str, dict[int, int]]:
    """Per path, the statuses readers got between start and end."""
    statuses: dict[str, Counter] = {}
    for a in answers:
        if start <= a.at <= end:
            statuses.setdefault(a.path, Counter())[a.status] += 1
    return {path: dict(counted) for path, counted in statuses.items()}


def _recovered_at(answers: list[Answer], since: float, webs) -> float | None:
    """When every page had answered 200 on every web machine after `since`, and the last
    failure before that."""
    last_failure = max(
        (a.at for a in answers if a.at >= since and a.status != 200 and a.path != "/readyz"),
        default=since,
    )
    later = [a for a in answers if a.at > last_failure and a.path != "/readyz"]
    if {(a.web, a.path) for a in later if a.status == 200} >= {
        (web, path) for web in webs for path in READ_PATHS if path != "/readyz"
    }:
        return last_failure
    return None


def test_redis_then_postgresql_restart_while_readers_read_and_workers_check(cluster):
    """Redis, then PostgreSQL, is restarted (stopped for DOWN_SECONDS, as a service manager
    would) in the middle of a due time, while readers load pages from both web machines.

    Readers get no 500 while a service is down, and 200 again on their own once it is back;
    every source is checked exactly once per due time (history rows); the batches waiting
    in Redis are still there after its restart; nothing is left in the broker.
    """
    c = cluster
    readers = Readers(c.console, {role: web.address for role, web in c.webs.items()})
    readers.start()
    figures: dict[str, object] = {}
    try:
        time.sleep(2)
        for service in ("redis", "postgres"):
            figures[service] = _restart_in_a_due_time(c, service, readers)
    finally:
        answers = readers.stop()

    statuses = Counter((a.path, a.status) for a in answers)
    figures["reader_answers"] = {f"{path} {status}": n for (path, status), n in statuses.items()}
    figures["peak_in_flight_per_site"] = _assert_polite(c)
    report("restarts", figures)
    server_errors = [a for a in answers if a.status >= 500 and a.status != 503 or a.status == 0]
    assert not server_errors, Counter((a.path, a.status) for a in server_errors)


def _restart_in_a_due_time(c: Cluster, service: str, readers: Readers) -> dict:
    last_id = c.last_row()
    due_at = c.make_due()
    wait_for(
        lambda: (
            c.console.sql("SELECT count(*) FROM summaries_sourcecheck WHERE id > %s", last_id)[0][0]
            >= SOURCES // 5
        ),
        f"a fifth of the sources were not checked before the {service} restart",
        120,
        every=0.2,
        processes=c.processes(),
    )
    queued = c.queued_tokens() if service == "redis" else set()
    down_at = time.time()
    if service == "redis":
        c.redis.stop()
        time.sleep(DOWN_SECONDS)
        c.redis.start()
        wait_for(c._redis_answers, "Redis did not come back", 30)
        # A batch a worker took between the count and the stop is kept too (unacked).
        kept = c.queued_tokens(taken=True)
        assert queued <= kept | _recorded_tokens(c, last_id), "batches were lost"
    else:
        c.postgres.stop()
        time.sleep(DOWN_SECONDS)
        c.postgres.start()
    up_at = time.time()
    wait_for(
        lambda: _checks_after(c, up_at),
        f"no check was recorded after the {service} restart",
        120,
        every=0.2,
    )
    checks_back_at = time.time()
    wait_for(
        lambda: c.round_done(last_id),
        f"not every source was checked after the {service} restart",
        LEASE + SWEEP_GRACE + 180,
        every=0.5,
        processes=c.processes(),
    )
    done_at = time.time()
    # A batch a worker held when Redis stopped could not be handed back: it would come back
    # after the visibility timeout. Bring it back now; its late delivery must check nothing
    # again (each source is checked once, below).
    # (Again while waiting: a worker's own look for such messages holds a lock meanwhile.)
    wait_for(
        lambda: c.deliver_held_messages(held_for=10) or c.broker_idle(),
        "the broker did not empty",
        60,
        every=0.5,
    )
    rows = c.rows_since(last_id)
    per_source = Counter(source for source, _, _ in rows)
    assert per_source == dict.fromkeys(c.urls.values(), 1), "a source was not checked once"
    recovered = wait_for(
        lambda: _recovered_at(readers.answers, up_at, c.webs),
        f"readers did not recover after the {service} restart",
        60,
    )
    down = _outage(readers.answers, down_at, up_at)
    # Down is seen, as a 503: by the readiness probe, and while PostgreSQL is away by a page
    # that has to be rendered (cached pages may still be served).
    assert 503 in down.get("/readyz", {}), down
    if service == "postgres":
        assert 503 in down.get(UNCACHED, {}), down
    return {
        "down_seconds": round(up_at - down_at, 1),
        "reader_statuses_while_down": down,
        "readers_recovered_seconds_after_up": round(max(0.0, recovered - up_at), 2),
        "checks_resumed_seconds_after_up": round(checks_back_at - up_at, 2),
        "checks_per_second": round(SOURCES / (done_at - due_at), 1),
        "batches_waiting_at_stop": len(queued),
    }


def _recorded_tokens(c: Cluster, last_id: int) -> set[str]:
    return {token for _, token, _ in c.rows_since(last_id)}


def _checks_after(c: Cluster, moment: float) -> bool:
    rows = c.console.try_sql(
        "SELECT count(*) FROM summaries_sourcecheck WHERE checked_at > to_timestamp(%s)", moment
    )
    return bool(rows and rows[0][0] > 0)
