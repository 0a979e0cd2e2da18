"""Worker throughput benchmark: source checks per hour per Celery worker process.

    .venv/bin/python bench/run_worker.py [--sources 3000 --hosts 50 --few-hosts 5
                                          --delay 0.2 --concurrency 1 2]

Drives what production runs, not the fetcher alone: for each scenario (many hosts, few
hosts; each worker concurrency) it fills the PostgreSQL database `--db` (created and
migrated here) with `--sources` unchecked sources spread evenly, in shuffled order, over
loopback hosts 127.0.0.2 ... 127.0.0.(hosts+1), empties Redis database `--redis-db`
(broker, cache and shared per-host limiter), starts `celery -A curation worker -l info
--concurrency C` and, once it answers a ping, `celery -A curation beat` with a short
CHECK_DISPATCH_EVERY, so that beat's `dispatch_source_checks` claims the sources and queues
the check batches exactly as in production. It measures from beat sending the first
dispatch to the last source's first SourceCheck row being written.

The hosts are loopback servers as in bench/run_linkcheck.py (a child process, so they share
no GIL with anything measured), answering HEAD/GET after `--delay` seconds and counting the
requests each host has in flight. Politeness is the project's default (FETCH_PER_HOST=2,
FETCH_MAX_IN_FLIGHT=64, FETCH_BATCH_SIZE=2000, FETCH_DEADLINE=10), only FETCH_ALLOWED_NETWORKS
covers the benchmark hosts (never 127.0.0.1). All traffic stays on 127.0.0.0/8; every wait
has a timeout; beat, the worker and the servers are stopped in `finally`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from servers import (  # noqa: E402
    DISPATCH_LINE,
    Process,
    StubHandler,
    allowed_networks,
    empty_redis,
    epoch,
    host_ip,
    log_records,
    machine_ticks,
    peak_rss_mib,
    settle,
    spawn,
    start_stub_server,
    stop_stub_servers,
    wait_for_ping,
)

HOST = "127.0.0.1"
PYTHON = sys.executable
START_TIMEOUT = 60  # seconds for the servers to start
POLL = 0.25  # seconds between progress queries
# Variables that would change what is measured; the children get only what we set.
SCRUBBED = (
    "FETCH_",
    "CHECK_",
    "CELERY_",
    "DATABASE_",
    "REDIS_URL",
    "CACHE_URL",
    "METRICS_",
    "LOG_",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "CURATION_VAR_DIR",
)


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the hosts (a child process) -----------------------------------------------------------


class Counts:
    """Requests per host, and the most any host had in flight at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight: Counter = Counter()
        self.peak: Counter = Counter()
        self.open: Counter = Counter()  # until after the answer was written
        self.open_peak: Counter = Counter()
        self.requests: Counter = Counter()


class Handler(StubHandler):
    """A page with a title, after the server's delay.

    A request counts as in flight from its arrival until just before its answer is written:
    inside the interval in which the client holds its host slot, so a count above
    FETCH_PER_HOST is a real breach (a count that also covered the write would include the
    moment after the client got its answer and released its slot).
    """

    def answer(self) -> None:
        counts, host = self.server.counts, self.server.server_address[0]
        with counts.lock:
            counts.requests[host] += 1
            counts.in_flight[host] += 1
            counts.peak[host] = max(counts.peak[host], counts.in_flight[host])
            counts.open[host] += 1
            counts.open_peak[host] = max(counts.open_peak[host], counts.open[host])
        try:
            try:
                time.sleep(self.server.delay)
            finally:
                with counts.lock:
                    counts.in_flight[host] -= 1
            body = f"<html><head><title>{self.path}</title></head><body></body></html>".encode()
            self.send(200, body=body)
        finally:
            with counts.lock:
                counts.open[host] -= 1


def serve(conn, hosts: int, delay: float, lifetime: float) -> None:
    """The child process: a server per host, ports sent back, stats and stop on request."""
    counts = Counts()
    servers = [
        start_stub_server(host_ip(index), Handler, counts=counts, delay=delay)
        for index in range(hosts)
    ]
    conn.send([server.server_address[1] for server in servers])
    stop_at = time.monotonic() + lifetime  # exits by itself if the parent is gone
    try:
        while time.monotonic() < stop_at:
            if not conn.poll(1.0):
                continue
            if conn.recv() == "stop":
                break
            with counts.lock:
                conn.send(
                    {
                        "peak": dict(counts.peak),
                        "open_peak": dict(counts.open_peak),
                        "requests": dict(counts.requests),
                    }
                )
    except (EOFError, OSError):
        pass
    finally:
        stop_stub_servers(servers)


# -- set-up ------------------------------------------------------------------------------


def base_environment(args, var_dir: Path) -> dict[str, str]:
    """The environment of every process: production mode, this benchmark's DB and Redis."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED)}
    env.update(
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        CSRF_TRUSTED_ORIGINS="https://bench.invalid",
        DATABASE_URL=f"postgres://postgres@{HOST}:5432/{args.db}",
        REDIS_URL=f"redis://{HOST}:6379/{args.redis_db}",
        CURATION_VAR_DIR=str(var_dir),
        LOG_FORMAT="json",
        # The defaults of curation/settings.py, set so that no .env can change them.
        FETCH_PER_HOST=str(args.per_host),
        FETCH_MAX_IN_FLIGHT=str(args.in_flight),
        FETCH_BATCH_SIZE=str(args.batch_size),
        FETCH_DEADLINE=str(args.deadline),
        CHECK_DISPATCH_EVERY=str(args.dispatch_every),
    )
    return env


def ensure_database(args, env: dict[str, str]) -> None:
    listed = subprocess.run(
        ["psql", "-h", HOST, "-U", "postgres", "-Atc", "select datname from pg_database"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    if args.db not in listed:
        say(f"creating database {args.db}")
        subprocess.run(["createdb", "-h", HOST, "-U", "postgres", args.db], timeout=60, check=True)
    say(f"migrating {args.db}")
    subprocess.run(
        [PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        timeout=300,
        check=True,
    )


def fill_sources(label: str, hosts: int, ports: list[int], count: int, seed: int) -> None:
    """`count` unchecked sources, the same number per host, in shuffled order (by id)."""
    from django.db import connection

    from summaries.models import Source

    with connection.cursor() as cursor:  # a benchmark database: nothing else lives here
        cursor.execute(f'TRUNCATE "{Source._meta.db_table}" RESTART IDENTITY CASCADE')
    urls = [f"http://{host_ip(n % hosts)}:{ports[n % hosts]}/{label}/ok/{n}" for n in range(count)]
    random.Random(seed).shuffle(urls)
    Source.objects.bulk_create(
        [Source(url=url, host=urlsplit(url).hostname or "") for url in urls], batch_size=1000
    )


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU of every live process in a process group (the worker's pool)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after "(comm)": state ppid pgrp ... utime stime
            total += int(fields[11]) + int(fields[12])
    return total / ticks


# -- one scenario ------------------------------------------------------------------------


@dataclass
class Scenario:
    hosts: int
    concurrency: int
    label: str = ""
    wall: float = 0.0
    done: int = 0
    states: dict[str, int] = field(default_factory=dict)
    peak_per_host: int = 0
    open_peak: int = 0
    requests: int = 0
    worker_cpu: float = 0.0
    machine_busy: float = 0.0
    busy_before: float = 0.0
    batches: int = 0
    continued: int = 0
    dispatch_ms: float = 0.0
    batch_ms: list[float] = field(default_factory=list)
    worker_rss_mib: float = 0.0  # peak resident memory of the worker and its pool
    error: str = ""


def run_scenario(args, scenario: Scenario, env: dict[str, str], log_dir: Path, app, redis):
    from django.db.models import Max

    from summaries.models import Source, SourceCheck

    label = scenario.label
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    servers = context.Process(
        target=serve,
        args=(child, scenario.hosts, args.delay, args.run_timeout + 2 * START_TIMEOUT),
        daemon=True,
        name="servers",
    )
    started: list[Process] = []
    servers.start()
    try:
        if not parent.poll(START_TIMEOUT):
            raise RuntimeError(f"the servers did not start within {START_TIMEOUT} s")
        ports = parent.recv()
        fill_sources(label, scenario.hosts, ports, args.sources, args.seed)
        empty_redis(redis, args.redis_db)
        run_env = env | {"FETCH_ALLOWED_NETWORKS": ",".join(allowed_networks(scenario.hosts))}

        hostname = f"bench-{label}@localhost"
        worker = spawn(
            "worker",
            ["worker", "-l", "info", "--concurrency", str(scenario.concurrency)]
            + ["--hostname", hostname],
            run_env,
            log_dir / f"{label}-worker.log",
        )
        started.append(worker)
        wait_for_ping(app, worker, hostname)
        cpu_before = group_cpu_seconds(worker.popen.pid)
        busy_before = machine_ticks()
        schedule = log_dir / f"{label}-beat-schedule"
        for old in log_dir.glob(f"{schedule.name}*"):  # a fresh schedule: no tick is overdue
            old.unlink()
        beat = spawn(
            "beat",
            ["beat", "-l", "info", "--schedule", str(schedule)],
            run_env,
            log_dir / f"{label}-beat.log",
        )
        started.append(beat)

        give_up = time.monotonic() + args.run_timeout
        while True:
            scenario.done = SourceCheck.objects.values("source_id").distinct().count()
            if scenario.done >= args.sources:
                break
            for process in started:
                if not process.alive():
                    raise RuntimeError(f"{process.name} exited:\n{process.tail()}")
            if time.monotonic() > give_up:
                raise RuntimeError(
                    f"{scenario.done}/{args.sources} checked after {args.run_timeout:.0f} s"
                )
            time.sleep(POLL)
        scenario.worker_cpu = group_cpu_seconds(worker.popen.pid) - cpu_before
        scenario.worker_rss_mib = peak_rss_mib(worker.popen.pid)
        busy_after = machine_ticks()
        scenario.machine_busy = (busy_after[0] - busy_before[0]) / max(
            1, busy_after[1] - busy_before[1]
        )

        sent = [r for r in log_records(beat.log) if DISPATCH_LINE in r.get("message", "")]
        if not sent:
            raise RuntimeError(f"beat logged no dispatch:\n{beat.tail()}")
        first_dispatch = epoch(sent[0]["time"])
        last_recorded = Source.objects.aggregate(last=Max("updated_at"))["last"].timestamp()
        scenario.wall = last_recorded - first_dispatch
        scenario.states = dict(Counter(SourceCheck.objects.values_list("state", flat=True)))

        parent.send("stats")
        if not parent.poll(30):
            raise RuntimeError("the servers did not answer within 30 s")
        stats = parent.recv()
        scenario.peak_per_host = max(stats["peak"].values(), default=0)
        scenario.open_peak = max(stats["open_peak"].values(), default=0)
        scenario.requests = sum(stats["requests"].values())
        read_worker_log(scenario, worker.log)
    finally:
        for process in reversed(started):
            try:
                process.stop()
            except Exception as error:  # noqa: BLE001 - stop the others, then the servers
                say(f"could not stop {process.name}: {error}")
        parent.send("stop")
        servers.join(timeout=15)
        if servers.is_alive():
            servers.terminate()
            servers.join(timeout=5)


def read_worker_log(scenario: Scenario, path: Path) -> None:
    for record in log_records(path):
        message = record.get("message", "")
        if message.startswith("check batch") and " started: " in message:
            scenario.batches += 1
            if not message.endswith("attempt 1"):
                scenario.continued += 1
        if record.get("logger") != "curation.task":
            continue
        task, ms = record.get("task", ""), float(record.get("duration_ms") or 0)
        if task.endswith("dispatch_source_checks"):
            scenario.dispatch_ms = max(scenario.dispatch_ms, ms)  # the tick that claimed
        elif task.endswith("check_source_batch"):
            scenario.batch_ms.append(ms)


# -- report ------------------------------------------------------------------------------


def bounds(args, scenario: Scenario) -> tuple[float, float]:
    """Shortest possible wall time under each limit: (per host, in flight per process)."""
    per_host_count = -(-args.sources // scenario.hosts)
    host_bound = per_host_count * args.delay / args.per_host
    worker_bound = args.sources * args.delay / (args.in_flight * scenario.concurrency)
    return host_bound, worker_bound


def report(args, scenarios: list[Scenario]) -> bool:
    """Print one row per scenario (the run with the median wall time when repeated)."""
    header = (
        "hosts",
        "worker processes",
        "wall s" + (" (range)" if args.repeat > 1 else ""),
        "checks/s",
        "checks/h per process",
        "bound s (per host / in flight)",
        "x bound",
        "peak in flight per host",
        "requests",
        "states",
        "worker CPU",
        "machine CPU (before)",
    )
    table = [header]
    ok = all(
        not s.error and s.peak_per_host <= args.per_host and s.states == {"ok": args.sources}
        for s in scenarios
    )
    groups: dict[tuple[int, int], list[Scenario]] = {}
    for s in scenarios:
        groups.setdefault((s.hosts, s.concurrency), []).append(s)
    shown = []
    for (hosts, concurrency), runs in groups.items():
        failed = [s for s in runs if s.error]
        if failed:
            table.append(
                (str(hosts), str(concurrency), f"failed: {failed[0].error.splitlines()[0]}")
                + ("",) * (len(header) - 3)
            )
            continue
        runs.sort(key=lambda s: s.wall)
        s = runs[(len(runs) - 1) // 2]
        shown.append(s)
        host_bound, worker_bound = bounds(args, s)
        binding = "per host" if host_bound >= worker_bound else "in flight"
        rate = args.sources / s.wall
        wall = f"{s.wall:.1f}"
        if len(runs) > 1:
            wall += f" ({runs[0].wall:.1f}-{runs[-1].wall:.1f})"
        table.append(
            (
                str(hosts),
                str(concurrency),
                wall,
                f"{rate:.0f}",
                f"{rate * 3600 / concurrency:,.0f}",
                f"{host_bound:.1f} / {worker_bound:.1f} ({binding})",
                f"{s.wall / max(host_bound, worker_bound):.2f}",
                str(max(r.peak_per_host for r in runs)),
                str(s.requests),
                ", ".join(f"{k} {v}" for k, v in sorted(s.states.items())),
                f"{s.worker_cpu / s.wall:.0%}",
                f"{s.machine_busy:.0%} ({s.busy_before:.0%})",
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for n, line in enumerate(table):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print()
    for s in shown:
        print(
            f"{s.label}: {s.batches} batch runs ({s.continued} continued), batch task"
            f" median {statistics.median(s.batch_ms or [0]) / 1000:.2f} s"
            f" (max {max(s.batch_ms or [0]) / 1000:.2f} s), dispatch task"
            f" {s.dispatch_ms:.0f} ms, peak per host counted until after the write"
            f" {s.open_peak}, worker peak RSS {s.worker_rss_mib:.0f} MiB (main process and pool)"
        )
    return ok


# -- main --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", type=int, default=3000)
    parser.add_argument("--hosts", type=int, default=50, help="hosts of the first runs")
    parser.add_argument("--few-hosts", type=int, default=5, help="hosts of the last runs (0: none)")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds each answer takes")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--per-host", type=int, default=2, help="FETCH_PER_HOST")
    parser.add_argument("--in-flight", type=int, default=64, help="FETCH_MAX_IN_FLIGHT")
    parser.add_argument("--batch-size", type=int, default=2000, help="FETCH_BATCH_SIZE")
    parser.add_argument("--deadline", type=float, default=10.0, help="FETCH_DEADLINE")
    parser.add_argument("--dispatch-every", type=int, default=5, help="CHECK_DISPATCH_EVERY")
    parser.add_argument("--run-timeout", type=float, default=240.0, help="seconds per run")
    parser.add_argument("--db", default="curation_bench_worker")
    parser.add_argument("--redis-db", type=int, default=9, help="a spare Redis database")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--repeat", type=int, default=1, help="rounds (median reported)")
    parser.add_argument(
        "--quiet", type=float, default=0.3, help="machine CPU busy fraction to wait for"
    )
    parser.add_argument("--quiet-timeout", type=float, default=60.0)
    args = parser.parse_args()
    for hosts in (args.hosts, args.few_hosts):
        if hosts and not 1 <= hosts <= 200:
            parser.error("hosts must be 1..200 (127.0.0.2 ... 127.0.0.201)")

    log_dir = Path(tempfile.gettempdir()) / "curation-bench-worker"
    log_dir.mkdir(exist_ok=True)
    env = base_environment(args, log_dir / "var")
    ensure_database(args, env)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
    import django

    django.setup()
    import redis as redis_lib

    from curation.celery import app

    redis = redis_lib.Redis.from_url(env["REDIS_URL"], socket_timeout=10)
    scenarios = [
        Scenario(hosts, concurrency, label=f"h{hosts}c{concurrency}r{round_ + 1}")
        for round_ in range(args.repeat)
        for hosts in (args.hosts, args.few_hosts)
        if hosts
        for concurrency in args.concurrency
    ]
    started = time.monotonic()
    for scenario in scenarios:
        say(
            f"run {scenario.label}: {args.sources} sources, {scenario.hosts} hosts, "
            f"--concurrency {scenario.concurrency}"
        )
        _, scenario.busy_before = settle(args.quiet, args.quiet_timeout)
        try:
            run_scenario(args, scenario, env, log_dir, app, redis)
        except Exception as error:  # noqa: BLE001 - report it, go on with the next run
            scenario.error = f"{type(error).__name__}: {error}"
            say(f"run {scenario.label} failed: {scenario.error}")
        else:
            say(f"run {scenario.label}: {scenario.wall:.1f} s")
    redis.flushdb()

    print(
        f"{args.sources} sources per run, each host answering after {args.delay * 1000:.0f} ms;"
        f" FETCH_PER_HOST={args.per_host} FETCH_MAX_IN_FLIGHT={args.in_flight}"
        f" FETCH_BATCH_SIZE={args.batch_size} FETCH_DEADLINE={args.deadline:g};"
        f" beat every {args.dispatch_every} s; {os.cpu_count()} CPUs"
    )
    print(f"wall: beat's first dispatch -> last first check recorded; logs in {log_dir}")
    print(f"{args.repeat} round(s), each run after the CPUs were under {args.quiet:.0%} busy")
    print()
    ok = report(args, scenarios)
    print(f"\ntotal {time.monotonic() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
