"""Serve the site with gunicorn + whitenoise on 127.0.0.1 and measure pages with wrk.

    .venv/bin/python bench/run_pages.py [--videos 10000] [--repeat 3] [--duration 5]

Side by side in one run: the static CSS file (whitenoise), the summary page, the channel
page and the home page, each cached (warm page cache), uncached (page cache missed,
fragments warm) and cold (every cache off: page cache missed, fragment cache off). Every
measurement is repeated --repeat times, interleaved (all targets once, then all again), and
the table gives medians. Everything runs on this machine: gunicorn binds 127.0.0.1 only and
wrk's runs are bounded by --duration. Every request says `Accept-Encoding: gzip`, as
browsers do (--accept-encoding), so pages and the static file are sent compressed: the page
cache keeps each page gzipped once, and whitenoise serves the precompressed file.

What it sets up (all idempotent):
- PostgreSQL database `curation_bench` on 127.0.0.1 (created with createdb if missing,
  migrated; bench/generate_data.py --reset fills it when it holds fewer generated videos
  than --videos);
- collectstatic into a temporary STATIC_ROOT (production storage: compressed manifest);
- gunicorn `curation.wsgi -w 2` with DEBUG=0, a random 64-character SECRET_KEY,
  ALLOWED_HOSTS=127.0.0.1 and REDIS_URL=redis://127.0.0.1:6379/<--redis-db>, so the page
  cache is Redis (that database is emptied at the start: it is the benchmark's own).

The baseline, measured in the same rounds with the same wrk parameters: a bare stack
(bench/bare_settings.py: Django with WhiteNoise as its only middleware, no database, no
request log) under the same gunicorn configuration, serving a copy of the site's collected
stylesheet at the same address. The site's static file and each cached page (summary,
channel, home, API detail and lists) are reported as a share of its throughput, round by
round (targets: >= 0.95 for the static file, >= 0.8 for cached pages): what the site's
own middleware costs an answer. The site runs with LOG_LEVEL=INFO (--log-level), as in
production, so every request writes its log line.

Uncached measurement: every request carries a query string that no other request used
(`?nocache=<run>-<thread>-<n>`, made by a wrk Lua script). The page cache key is built from
the path and the query string, so each request misses the cache and runs the render path a
first visitor gets: cache look-up (miss), the view's queries and template rendering. The
pages measured read no such parameter, so the page cache stores none of them (a page is
kept only under the query string its view reads: summaries/pagecache/middleware.py); the
script checks this, warning when an uncached run adds keys ("new keys": 0 expected).
Cached runs warm the page with one request first and must add no keys either.

Latency and concurrency: wrk -c32 against 2 sync workers keeps 30 requests queued, so its
latencies are mostly waiting time (Little's law: latency = connections / throughput).
The render time of a single uncached request, which the "< 50 ms" target is about, is
measured too: the same uncached pages at one connection (`-t1 -c1`), with no queue.

Sync workers close every connection, leaving sockets in TIME_WAIT on the server port for
60 s. So that no run starts with the port space of the previous one in use, without
waiting those 60 s, each gunicorn also listens on the same port of more loopback addresses
(127.0.0.2 to 127.0.0.17, `LOOPBACK_ADDRESSES`), and each run connects to one with no
socket left in TIME_WAIT (waiting only when every one has some), sending the same Host
header (127.0.0.1:port) so that pages are the same cache keys. Before every run the script
also waits until the CPU is quiet (--max-busy): gunicorn finishes requests still queued
from the previous run, and work of other processes on the machine would skew the figures
(the busy share before each run is printed).

Cold measurement ("every cache off"): after the other runs, gunicorn
is restarted with PAGE_CACHE_FRAGMENTS=0 (curation/settings.py) and the
same pages and API reads are measured uncached again, so shared fragments (a channel's
filter choices, a list's length) are computed on every request, as on the first requests
after a publish. The API's cold reads have targets of their own: the detail at least as
fast as the summary page, each list at least 100 req/s. `--cold-only` measures only these.
At the end bench/render_uncached.py measures the same pages in-process with every cache
off (median and p90 render time, queries; target: median <= 10 ms).

When a target is missed, bench/profile_page.py profiles the uncached pages in-process
(query count, SQL time, the slowest queries, the functions that dominate).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from servers import (
    HOST,
    PYTHON,
    ROOT,
    cpu_busy,
    free_port,
    machine_ticks,
    production_settings,
    run,
    say,
    settle,
    start_gunicorn,
    stop_gunicorn,
    time_wait_count,
)

BENCH = Path(__file__).resolve().parent
STATIC_PATH = "/static/summaries/css/site.css"
GENERATED_PREFIX = "bench-"

# wrk Lua script for uncached runs: a query string no other request of any run used.
NOCACHE_LUA = r"""
local next_thread = 0
function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_id", next_thread)
end
function init(args)
  run_id = args[1] or "0"
  counter = 0
  sep = string.find(wrk.path, "?", 1, true) and "&" or "?"
end
function request()
  counter = counter + 1
  return wrk.format(nil, wrk.path .. sep .. "nocache=" .. run_id .. "-" .. thread_id
    .. "-" .. counter)
end
"""

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# Where the servers listen besides HOST (module docstring: TIME_WAIT); all of 127/8 is
# loopback on Linux.
LOOPBACK_ADDRESSES = tuple(f"127.0.0.{n}" for n in range(2, 18))
# Against the bare stack's static file, measured in the same run: what the site's own
# middleware (request log, ids, metrics, security headers, page cache) costs an answer.
TARGET_STATIC_RATIO = 0.95  # the site's static file / the bare static file, at least
TARGET_CACHED_RATIO = 0.8  # each cached page / the bare static file, at least
TARGET_P99_MS = 50.0  # uncached p99, below
# Anonymous API reads at page speed, from the same cache as pages.
TARGET_API_DETAIL = 0.5  # API summary detail / cached summary page throughput, at least
TARGET_API_LIST = 0.3  # each API list / cached summary page throughput, at least
# Every cache off: the API detail at least as fast as the summary page it mirrors, and each
# API list page (20 items) at least this many requests a second, at 32 connections.
TARGET_COLD_API_DETAIL = 1.0  # cold API detail / cold summary page throughput, at least
TARGET_COLD_API_LIST = 100.0
API_PAGE_BYTES = 50_000  # a default list page of summaries, at most
# Cached answers compared with the bare static file.
CACHED_PAGES = ("summary", "channel", "home", "api-one", "api-list", "api-vids")


# The servers a target is measured on: the site, and the bare stack (bench/bare_settings.py).
SITE = "site"
BARE = "bare"


@dataclass
class Target:
    page: str
    path: str
    # "static", "cached", "uncached" (fragments warm), "cold" (every cache off), "api"
    mode: str
    connections: int
    server: str = SITE

    @property
    def label(self) -> str:
        return f"{self.page} {self.mode} c{self.connections}"


@dataclass
class Result:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    new_keys: int
    busy_before: float
    others: float  # CPU share of other processes during the run


@dataclass
class Measurements:
    runs: dict[str, list[Result]] = field(default_factory=dict)

    def add(self, target: Target, result: Result) -> None:
        self.runs.setdefault(target.label, []).append(result)

    def median(self, target: Target, attribute: str) -> float:
        return statistics.median(getattr(r, attribute) for r in self.runs[target.label])


# --- Helpers ------------------------------------------------------------------------------


def psql(db: str, sql: str, env: dict, **variables: str) -> str:
    """Run SQL with psql; `:'name'` in the SQL is the quoted value of variable `name`."""
    command = ["psql", "-h", HOST, "-U", "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-At"]
    for name, value in variables.items():
        command += ["-v", f"{name}={value}"]
    completed = subprocess.run(
        command, cwd=ROOT, env=env, check=True, text=True, input=sql, capture_output=True
    )
    return completed.stdout.strip()


def http_get(url: str, timeout: float = 30) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - loopback
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def server_idle(timeout: float, max_busy: float) -> None:
    """Wait (bounded) until requests still queued in gunicorn have been served."""
    deadline = time.monotonic() + timeout
    while cpu_busy(0.5) > max_busy and time.monotonic() < deadline:
        pass


def _process_ticks(pid: int) -> int:
    """User + system CPU ticks of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


class OtherLoad:
    """The share of the machine's CPU used by processes that are not part of the run.

    Ours: this script, wrk (measured as a reaped child), gunicorn and its workers, the Redis
    server and the PostgreSQL backends connected to the benchmark database. Everything else
    (other people's tests, say) is "others"; a run they disturbed is repeated.
    """

    def __init__(self, gunicorn_pids: list[int], redis_pid: int, db: str) -> None:
        self.gunicorn_pids = gunicorn_pids
        self.redis_pid = redis_pid
        self.db_marker = f" {db} ".encode()

    def _pids(self) -> set[int]:
        pids = {os.getpid(), self.redis_pid, *self.gunicorn_pids}
        for master in self.gunicorn_pids:
            children = Path(f"/proc/{master}/task/{master}/children")
            with contextlib.suppress(OSError):
                pids |= {int(pid) for pid in children.read_text().split()}
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                command = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if command.startswith(b"postgres: ") and self.db_marker in command:
                pids.add(int(proc.name))
        return pids

    def start(self) -> None:
        self.machine = machine_ticks()
        self.ours = {pid: _process_ticks(pid) for pid in self._pids()}
        self.children = resource.getrusage(resource.RUSAGE_CHILDREN)

    def stop(self) -> float:
        busy, all_ticks = (b - a for a, b in zip(self.machine, machine_ticks(), strict=True))
        ours = sum(_process_ticks(pid) - self.ours.get(pid, 0) for pid in self._pids())
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        reaped = (children.ru_utime - self.children.ru_utime) + (
            children.ru_stime - self.children.ru_stime
        )
        ours += reaped * CLOCK_TICKS
        return max(0.0, busy - ours) / max(1, all_ticks)


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def _ms(value: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", value)
    if not match:
        raise ValueError(f"unexpected wrk duration {value!r}")
    return float(match.group(1)) * _UNITS_MS[match.group(2)]


def parse_wrk(output: str) -> tuple[float, float, float, int, int]:
    """(requests/s, p50 ms, p99 ms, requests, errors) from wrk --latency output."""
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    errors = 0
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if non_2xx:
        errors += int(non_2xx.group(1))
    sockets = re.search(r"Socket errors: (.*)", output)
    if sockets:
        errors += sum(int(n) for n in re.findall(r"\d+", sockets.group(1)))
    return rps, p50, p99, requests, errors


# --- Setup ----------------------------------------------------------------------------------


def ensure_tools() -> None:
    if shutil.which("wrk") is None:
        say("wrk is missing: apt-get install -y wrk")
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=True)
    for command, what in (
        (["pg_isready", "-h", HOST], "PostgreSQL"),
        (["redis-cli", "-h", HOST, "ping"], "Redis"),
    ):
        if subprocess.run(command, capture_output=True).returncode != 0:
            raise SystemExit(f"{what} is not answering on {HOST} ({' '.join(command)}).")


def ensure_database(args, env: dict) -> None:
    exists = psql(
        "postgres", "SELECT 1 FROM pg_database WHERE datname = :'name'", env, name=args.db
    )
    if not exists:
        say(f"creating database {args.db}")
        run(["createdb", "-h", HOST, "-U", "postgres", args.db], env=env)
    say("migrating")
    run([PYTHON, "manage.py", "migrate", "--noinput", "--skip-checks", "-v", "0"], env=env)
    count = int(
        psql(
            args.db,
            "SELECT count(*) FROM summaries_video WHERE slug LIKE :'prefix' || '%'",
            env,
            prefix=GENERATED_PREFIX,
        )
    )
    if count < args.videos:
        say(f"{count} generated videos, {args.videos} wanted: generating")
        run(
            [PYTHON, str(BENCH / "generate_data.py"), "--videos", str(args.videos), "--reset"],
            env=env,
        )
    else:
        say(f"{count} generated videos present (>= {args.videos}): reusing them")


def pick_pages(args, env: dict) -> tuple[str, str, dict]:
    """The channel with the most videos, and its heaviest summary (most chapters, sources)."""
    channel = psql(
        args.db,
        "SELECT c.slug FROM summaries_channel c JOIN summaries_video v ON v.channel_id = c.id "
        "WHERE c.slug LIKE :'prefix' || '%' GROUP BY c.slug "
        "ORDER BY count(*) DESC, c.slug LIMIT 1",
        env,
        prefix=GENERATED_PREFIX,
    )
    row = psql(
        args.db,
        "SELECT v.slug, "
        "(SELECT count(*) FROM summaries_chapter ch WHERE ch.summary_id = s.id), "
        "(SELECT count(DISTINCT ci.source_id) FROM summaries_citation ci "
        " WHERE ci.summary_id = s.id), "
        "(SELECT count(*) FROM summaries_video v2 WHERE v2.channel_id = v.channel_id) "
        "FROM summaries_video v JOIN summaries_summary s ON s.video_id = v.id "
        "JOIN summaries_channel c ON c.id = v.channel_id "
        "WHERE c.slug = :'channel' "
        "ORDER BY 2 DESC, 3 DESC, v.published_on DESC LIMIT 1",
        env,
        channel=channel,
    )
    slug, chapters, sources, channel_videos = row.split("|")
    info = {"chapters": chapters, "sources": sources, "channel_videos": channel_videos}
    return slug, channel, info


def page_keys(cache) -> int:
    """Pages stored in the cache database (fragments are not counted)."""
    return sum(1 for _ in cache.scan_iter(match="*:page:*", count=1000))


def redis_client(url: str):
    import redis  # installed with celery[redis]

    return redis.Redis.from_url(url)


def empty_cache_db(client, db_number: int) -> None:
    """The benchmark's Redis database must hold nothing but this project's cache keys."""
    foreign = [k for k in client.scan_iter(count=1000) if not k.startswith(b"curation:")]
    if foreign:
        raise SystemExit(
            f"Redis database {db_number} holds keys that are not this project's cache "
            f"(e.g. {foreign[0]!r}); pick a spare one with --redis-db."
        )
    client.flushdb()


# --- Measuring ------------------------------------------------------------------------------


def quiet_address(port: int) -> str:
    """A loopback address the servers listen on whose `port` has no socket in TIME_WAIT;
    the one with fewest when none is free."""
    counts = {}
    for address in (HOST, *LOOPBACK_ADDRESSES):
        counts[address] = time_wait_count(port, address)
        if not counts[address]:
            return address
    return min(counts, key=counts.__getitem__)


def run_wrk(args, port: int, target: Target, run_id: str, lua: Path, address: str = HOST) -> str:
    threads = min(args.threads, target.connections)
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{target.connections}",
        f"-d{args.duration}s",
        "--timeout",
        "10s",
        "--latency",
    ]
    if args.accept_encoding:
        command += ["-H", f"Accept-Encoding: {args.accept_encoding}"]
    if target.mode in ("uncached", "cold"):
        command += ["-s", str(lua)]
    if address != HOST:
        command += ["-H", f"Host: {HOST}:{port}"]
    command.append(f"http://{address}:{port}{target.path}")
    if target.mode in ("uncached", "cold"):
        command += ["--", run_id]
    completed = subprocess.run(
        command, check=True, text=True, capture_output=True, timeout=args.duration + 60
    )
    return completed.stdout


def measure_once(args, ports, target, cache, lua, run_id, load: OtherLoad) -> Result:
    port = ports[target.server]
    address = quiet_address(port)
    waited, busy = settle(args.max_busy, args.drain_timeout, port=port, address=address)
    if target.mode == "cached":
        status, _ = http_get(f"http://{HOST}:{port}{target.path}")  # warm (or keep warm)
        if status != 200:
            raise SystemExit(f"{target.path} answered {status}")
    keys_before = page_keys(cache)
    load.start()
    output = run_wrk(args, port, target, run_id, lua, address)
    others = load.stop()
    rps, p50, p99, requests, errors = parse_wrk(output)
    server_idle(args.drain_timeout, args.max_busy)
    new_keys = page_keys(cache) - keys_before
    say(
        f"  {target.label:<24} {rps:9.1f} req/s  p50 {p50:8.2f} ms  p99 {p99:8.2f} ms"
        f"  requests {requests:6d}  errors {errors}  new keys {new_keys}"
        f"  (on {address}, waited {waited:.0f} s, CPU {busy:.0%} busy before, others {others:.0%}"
        " during)"
    )
    if target.mode in ("uncached", "cold"):
        # Each request carries a query parameter of its own: it misses the cache, renders
        # the page and, since the view reads no such parameter, stores nothing.
        if new_keys:
            say("    warning: uncached requests stored pages: unknown parameters are cached?")
        cache.flushdb()  # drop the fragments those renderings stored
    elif target.mode == "cached" and new_keys > 0:
        say("    warning: a cached run added cache keys: pages were not served warm")
    return Result(rps, p50, p99, requests, errors, new_keys, busy, others)


def measure(
    args, ports: dict[str, int], targets: list[Target], cache, lua: Path, load
) -> Measurements:
    measurements = Measurements()
    for repeat in range(1, args.repeat + 1):
        say(f"round {repeat}/{args.repeat}")
        for number, target in enumerate(targets):
            for attempt in range(args.retries + 1):
                run_id = f"{repeat}.{number}.{attempt}"
                result = measure_once(args, ports, target, cache, lua, run_id, load)
                if result.others <= args.max_others:
                    break
                if attempt < args.retries:
                    say(f"    other processes used {result.others:.0%} of the CPU: again")
            measurements.add(target, result)
    return measurements


def per_round_ratios(runs: list[Result], baseline: list[Result]) -> tuple[list[float], float]:
    """Throughput of each round over the baseline's in the same round, and their median."""
    ratios = [r.rps / b.rps for r, b in zip(runs, baseline, strict=True)]
    return ratios, statistics.median(ratios)


def bare_ratios(args, by_key: dict, measurements: Measurements, lines: list[str]) -> list[str]:
    """The site's static file and each cached page over the bare static file (same run,
    same rounds); appends one line per ratio to `lines`, returns the missed targets."""
    c = args.connections
    bare = measurements.runs[by_key[("bare", "static", c)].label]
    missed = []
    compared = [("static", "static", TARGET_STATIC_RATIO)]
    compared += [(page, "cached", TARGET_CACHED_RATIO) for page in CACHED_PAGES]
    for page, mode, target_ratio in compared:
        target = by_key.get((page, mode, c))
        if target is None:
            continue
        ratios, ratio = per_round_ratios(measurements.runs[target.label], bare)
        ok = ratio >= target_ratio
        lines.append(
            f"{page} {mode} / bare static throughput: "
            + ", ".join(f"{r:.2f}" for r in ratios)
            + f" per round, median {ratio:.2f} (target >= {target_ratio}): "
            + ("met" if ok else "MISSED")
        )
        if not ok:
            missed.append(f"{page}-{mode}-ratio")
    own_static = by_key[("static", "static", c)]
    summary = by_key[("summary", "cached", c)]
    _, own = per_round_ratios(measurements.runs[summary.label], measurements.runs[own_static.label])
    lines.append(f"(cached summary / the site's own static file: median {own:.2f})")
    return missed


def measure_varnish(args, port: int, targets: list[Target], measurements: Measurements) -> None:
    """Cached pages and the static file through Varnish (deploy/varnish/curation.vcl, see
    bench/varnish.py) in front of the same gunicorn, in the same run; each against the
    static file served by Django (and the bare one, when measured). Target: >= 5x."""
    import varnish  # bench/varnish.py

    reason = varnish.missing()
    if reason:
        say(f"\nVarnish not measured: {reason}")
        return
    front = varnish.start_varnish(HOST, port)
    try:
        say(f"\nthrough Varnish on {front.url} (wrk -c{args.connections}):")
        served = [t for t in targets if t.mode in ("static", "cached") and t.page != "bare"]
        varnished = Measurements()
        for repeat in range(args.repeat):
            for target in served:
                through = Target(target.page, target.path, "varnish", target.connections)
                http_get(front.url + target.path)  # warm: the first request is a miss
                # Varnish keeps wrk's connections open: a run leaves at most -c sockets
                # in TIME_WAIT, so only a quiet CPU is waited for.
                settle(args.max_busy, args.drain_timeout)
                output = run_wrk(args, front.port, through, "varnish", Path("/dev/null"))
                rps, p50, p99, requests, errors = parse_wrk(output)
                load = os.getloadavg()[0]
                say(
                    f"  {through.label:<24} {rps:9.1f} req/s  p50 {p50:7.2f} ms  "
                    f"p99 {p99:7.2f} ms  errors {errors}  (round {repeat + 1}, load {load:.2f})"
                )
                varnished.add(through, Result(rps, p50, p99, requests, errors, 0, 0.0, 0.0))
        bases = [t for t in targets if t.mode == "static"]
        for target in served:
            through = Target(target.page, target.path, "varnish", target.connections)
            rps = varnished.median(through, "rps")
            ratios = ", ".join(
                f"{rps / measurements.median(base, 'rps'):.1f}x {base.page} file" for base in bases
            )
            met = (
                "met" if all(rps >= 5 * measurements.median(b, "rps") for b in bases) else "MISSED"
            )
            say(f"  {through.label:<24} median {rps:9.1f} req/s = {ratios} (>= 5x: {met})")
    finally:
        front.stop()


def report(args, targets, measurements: Measurements, page_info: dict) -> list[str]:
    """Print the table and the target checks; returns the missed targets."""
    busiest = max(r.busy_before for runs in measurements.runs.values() for r in runs)
    disturbed = max(r.others for runs in measurements.runs.values() for r in runs)
    lines = [
        "",
        f"gunicorn -w 2 (sync), LOG_LEVEL={args.log_level}, wrk {args.duration}s per run, "
        f"median of {args.repeat} runs; "
        f"{page_info['videos']} generated videos; CPU at most {busiest:.0%} busy before a run, "
        f"other processes used at most {disturbed:.0%} of it during a run",
        f"summary page: {page_info['chapters']} chapters, {page_info['sources']} sources; "
        f"channel page: {page_info['channel_videos']} videos (page 1 of 20)",
        "",
        f"| {'page':<8} | {'cache':<8} | {'conns':>5} | {'req/s':>8} | {'p50 ms':>8} | "
        f"{'p99 ms':>8} | {'errors':>6} | {'others':>6} |",
        f"|{'-' * 10}|{'-' * 10}|{'-' * 7}|{'-' * 10}|{'-' * 10}|{'-' * 10}|{'-' * 8}|{'-' * 8}|",
    ]
    for t in targets:
        errors = sum(r.errors for r in measurements.runs[t.label])
        others = max(r.others for r in measurements.runs[t.label])
        lines.append(
            f"| {t.page:<8} | {t.mode:<8} | {t.connections:>5} | "
            f"{measurements.median(t, 'rps'):>8.1f} | {measurements.median(t, 'p50_ms'):>8.2f} | "
            f"{measurements.median(t, 'p99_ms'):>8.2f} | {errors:>6} | {others:>6.0%} |"
        )
    by_key = {(t.page, t.mode, t.connections): t for t in targets}
    lines.append("")
    missed = report_cold(args, by_key, measurements, lines)
    if ("summary", "cached", args.connections) not in by_key:  # --cold-only
        for line in lines:
            say(line)
        return missed
    cached = measurements.runs[by_key[("summary", "cached", args.connections)].label]
    missed += bare_ratios(args, by_key, measurements, lines)
    api_parts = []
    for page, target_ratio in (
        ("api-one", TARGET_API_DETAIL),
        ("api-list", TARGET_API_LIST),
        ("api-vids", TARGET_API_LIST),
    ):
        target = by_key.get((page, "cached", args.connections))
        if target is None:
            continue
        runs = measurements.runs[target.label]
        api_ratio = statistics.median(a.rps / c.rps for a, c in zip(runs, cached, strict=True))
        ok = api_ratio >= target_ratio
        api_parts.append(f"{page} {api_ratio:.2f} (>= {target_ratio}) {'met' if ok else 'MISSED'}")
        if not ok:
            missed.append(f"{page}-ratio")
    if api_parts:
        lines.append("API (cached) / cached summary page throughput: " + ", ".join(api_parts))
    if "api_list" in page_info:
        items, size = page_info["api_list"]
        ok = size <= API_PAGE_BYTES
        lines.append(
            f"default API list page: {items} summaries, {size:,} bytes "
            f"(target <= {API_PAGE_BYTES:,}): {'met' if ok else 'MISSED'}"
        )
        if not ok:
            missed.append("api-list-size")
    for connections, note in (
        (1, "render time, no queue"),
        (args.connections, "includes waiting behind the other connections"),
    ):
        parts = []
        for page in ("summary", "channel", "home"):
            target = by_key.get((page, "uncached", connections))
            if target is None:
                continue
            p99 = measurements.median(target, "p99_ms")
            ok = p99 < TARGET_P99_MS
            parts.append(f"{page} {p99:.1f} ms {'met' if ok else 'MISSED'}")
            if not ok and connections == 1:  # at 32 connections p99 is mostly queueing
                missed.append(f"{page}-c{connections}")
        lines.append(
            f"uncached p99 at {connections} connection{'s' if connections > 1 else ''} "
            f"({note}; target < {TARGET_P99_MS:.0f} ms): " + ", ".join(parts)
        )
    for line in lines:
        say(line)
    return missed


def report_cold(args, by_key: dict, measurements: Measurements, lines: list[str]) -> list[str]:
    """The cold figures (pages and API reads) and their targets; returns those missed."""
    cold = [
        f"{page} {measurements.median(t, 'rps'):.1f} req/s, p50 "
        f"{measurements.median(t, 'p50_ms'):.0f} ms, p99 {measurements.median(t, 'p99_ms'):.0f} ms"
        for page in ("summary", "channel", "home", "api-one", "api-list", "api-vids")
        if (t := by_key.get((page, "cold", args.connections))) is not None
    ]
    if cold:
        lines.append(
            f"cold (every cache off: page and fragments) at {args.connections} connections: "
            + "; ".join(cold)
        )
    page = by_key.get(("summary", "cold", args.connections))
    detail = by_key.get(("api-one", "cold", args.connections))
    if page is None or detail is None:
        return []
    missed, parts = [], []
    _, ratio = per_round_ratios(measurements.runs[detail.label], measurements.runs[page.label])
    parts.append(f"API detail / summary page {ratio:.2f} (>= {TARGET_COLD_API_DETAIL})")
    if ratio < TARGET_COLD_API_DETAIL:
        missed.append("api-one-cold")
    for name in ("api-list", "api-vids"):
        if (target := by_key.get((name, "cold", args.connections))) is not None:
            rps = measurements.median(target, "rps")
            parts.append(f"{name} {rps:.1f} req/s (>= {TARGET_COLD_API_LIST:.0f})")
            if rps < TARGET_COLD_API_LIST:
                missed.append(f"{name}-cold")
    lines.append(
        "cold API: " + ", ".join(parts) + (f": MISSED {', '.join(missed)}" if missed else ": met")
    )
    return missed


# --- What is measured ---------------------------------------------------------------------


def start_bare_stack(env: dict, static_root: Path, work: Path, port: int) -> subprocess.Popen:
    """The bare stack (bench/bare_settings.py) under the same gunicorn configuration,
    serving a copy of the site's collected stylesheet (and its compressed forms) at the
    same address, so that both stacks send the same bytes."""
    bare_root = work / "bare-static"
    relative = STATIC_PATH.removeprefix("/static/")
    source = static_root / relative
    (bare_root / relative).parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".gz", ".br"):
        original = source.with_name(source.name + suffix)
        if original.exists():
            shutil.copyfile(original, bare_root / f"{relative}{suffix}")
    bare_env = {
        **env,
        "DJANGO_SETTINGS_MODULE": "bench.bare_settings",
        "BARE_STATIC_ROOT": str(bare_root),
    }
    return start_gunicorn(
        bare_env,
        port,
        work / "bare.log",
        ready_path=STATIC_PATH,
        app="bench.bare_wsgi",
        also_on=LOOPBACK_ADDRESSES,
    )


def bare_static_targets(connections: int) -> list[Target]:
    """The bare stack's static file: the baseline of every ratio."""
    return [Target("bare", STATIC_PATH, "static", connections, BARE)]


def static_targets(connections: int) -> list[Target]:
    """The site's own static file, through its whole middleware stack."""
    return [Target("static", STATIC_PATH, "static", connections)]


def page_targets(pages: list[tuple[str, str]], connections: int) -> list[Target]:
    """Reader pages cached and uncached (fragments warm) at `connections`, and uncached at
    one connection (render time with no queue)."""
    targets = []
    for name, path in pages:
        targets += [Target(name, path, "cached", connections)]
        targets += [Target(name, path, "uncached", connections)]
    return targets + [Target(name, path, "uncached", 1) for name, path in pages]


def api_targets(api: list[tuple[str, str]], connections: int) -> list[Target]:
    """Anonymous API reads, page-cached like pages: warm at `connections`, and every
    request missing the cache (a parameter of its own) at one."""
    targets = [Target(name, path, "cached", connections) for name, path in api]
    return targets + [Target(name, path, "uncached", 1) for name, path in api]


def cold_targets(pages: list[tuple[str, str]], connections: int) -> list[Target]:
    """Every cache off (the server restarted with PAGE_CACHE_FRAGMENTS=0)."""
    return [Target(name, path, "cold", n) for n in (connections, 1) for name, path in pages]


# --- Main ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=10_000)
    parser.add_argument("--db", default="curation_bench")
    parser.add_argument("--redis-db", type=int, default=14, help="a spare Redis database")
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--accept-encoding",
        default="gzip",
        help="Accept-Encoding sent with every request, as browsers send it ('' for none: "
        "every response uncompressed)",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--drain-timeout", type=float, default=90.0)
    parser.add_argument(
        "--max-busy",
        type=float,
        default=0.15,
        help="CPU share (all cores) above which a run waits for the machine to quieten",
    )
    parser.add_argument(
        "--max-others",
        type=float,
        default=0.10,
        help="CPU share of other processes during a run above which the run is repeated",
    )
    parser.add_argument("--retries", type=int, default=2, help="repeats of a disturbed run")
    parser.add_argument("--profile", action="store_true", help="profile even if targets are met")
    parser.add_argument("--no-api", action="store_true", help="skip the API runs")
    parser.add_argument("--no-cold", action="store_true", help="skip the every-cache-off runs")
    parser.add_argument(
        "--cold-only", action="store_true", help="only the every-cache-off runs (pages and API)"
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        help="the site's LOG_LEVEL: INFO (the default, as in production) writes the "
        "request log line of every request to gunicorn's log file",
    )
    parser.add_argument(
        "--varnish", action="store_true", help="also the cached pages through Varnish"
    )
    parser.add_argument(
        "--render-requests",
        type=int,
        default=100,
        help="requests per page of the in-process render measurement (0: skip it)",
    )
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", args.db):
        parser.error("--db must be a plain lower-case identifier")
    if not 1 <= args.duration <= 60 or not 1 <= args.repeat <= 10:
        parser.error("--duration must be 1-60 s and --repeat 1-10")

    ensure_tools()
    cache_url = f"redis://{HOST}:6379/{args.redis_db}"
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "STATIC_ROOT")}
    env.update(
        production_settings(),
        DATABASE_URL=f"postgres://postgres@{HOST}:5432/{args.db}",
        REDIS_URL=cache_url,
        # wrk is one client: the anonymous API throttle would answer it with 429s.
        API_THROTTLE_ANON="100000000/minute",
        LOG_LEVEL=args.log_level,
    )
    ensure_database(args, env)
    static_root = Path(tempfile.mkdtemp(prefix="curation-bench-static-"))
    env["STATIC_ROOT"] = str(static_root)
    work = Path(tempfile.mkdtemp(prefix="curation-bench-"))
    lua = work / "nocache.lua"
    lua.write_text(NOCACHE_LUA)
    gunicorn = bare = None
    try:
        say("collectstatic")
        run(
            [PYTHON, "manage.py", "collectstatic", "--noinput", "--skip-checks", "-v", "0"], env=env
        )
        cache = redis_client(cache_url)
        empty_cache_db(cache, args.redis_db)

        port = free_port()
        log_path = work / "gunicorn.log"
        gunicorn = start_gunicorn(
            env, port, log_path, ready_path=STATIC_PATH, also_on=LOOPBACK_ADDRESSES
        )
        ports = {SITE: port, BARE: free_port()}
        bare = start_bare_stack(env, static_root, work, ports[BARE])

        slug, channel, info = pick_pages(args, env)
        info["videos"] = args.videos
        pages = [("summary", f"/videos/{slug}/"), ("channel", f"/channels/{channel}/")]
        pages.append(("home", "/"))
        # The API: the default pages of the summary and video lists (lean
        # items), and the heavy summary's detail.
        api = [
            ("api-list", "/api/v1/summaries/"),
            ("api-vids", "/api/v1/videos/"),
            ("api-one", f"/api/v1/summaries/{slug}/"),
        ]
        say(f"Accept-Encoding: {args.accept_encoding or '(none)'}; pages:")
        for name, path in [("static", STATIC_PATH), *pages, *api]:
            status, body = http_get(f"http://{HOST}:{port}{path}")
            say(f"  {name:<8} {path}  {status}  {len(body):,} bytes")
            if status != 200:
                raise SystemExit(f"{path} answered {status}")
        listed = http_get(f"http://{HOST}:{port}{api[0][1]}")[1]
        info["api_list"] = (len(json.loads(listed)["results"]), len(listed))

        c = args.connections
        measured_api = [] if args.no_api else api
        targets = bare_static_targets(c) + static_targets(c) + page_targets(pages, c)
        targets += api_targets(measured_api, c)
        redis_pid = int(cache.info("server")["process_id"])
        load = OtherLoad([gunicorn.pid, bare.pid], redis_pid, args.db)
        if args.cold_only:
            targets, measurements = [], Measurements()
        else:
            measurements = measure(args, ports, targets, cache, lua, load)
        stop_gunicorn(bare)
        bare = None
        if args.varnish:
            measure_varnish(args, port, targets, measurements)
        if not args.no_cold:
            # Every cache off: the same server with the fragment cache off.
            stop_gunicorn(gunicorn)
            cold_env = {**env, "PAGE_CACHE_FRAGMENTS": "0"}
            gunicorn = start_gunicorn(
                cold_env, port, log_path, ready_path=STATIC_PATH, also_on=LOOPBACK_ADDRESSES
            )
            cold = cold_targets(pages + measured_api, c)
            load = OtherLoad([gunicorn.pid], redis_pid, args.db)
            for target, results in measure(args, ports, cold, cache, lua, load).runs.items():
                measurements.runs[target] = results
            targets += cold
        missed = report(args, targets, measurements, info)
        stop_gunicorn(gunicorn)
        gunicorn = None
        if args.render_requests:
            say("\nin-process render with every cache off (bench/render_uncached.py)")
            # It picks the same three pages and names them.
            run(
                [PYTHON, str(BENCH / "render_uncached.py"), "-n", str(args.render_requests)],
                env=env,
            )

        if missed or args.profile:
            say("\nprofiling the uncached pages in-process (bench/profile_page.py)")
            try:
                run([PYTHON, str(BENCH / "profile_page.py"), *(p for _, p in pages)], env=env)
            except subprocess.CalledProcessError as exc:
                say(f"profiling failed (exit {exc.returncode}); the figures above stand")
        return 0
    finally:
        stop_gunicorn(bare)
        stop_gunicorn(gunicorn)
        shutil.rmtree(static_root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def _stop_on_signal(signum, frame):  # SIGTERM/SIGHUP: unwind so that gunicorn is stopped
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_on_signal)
    signal.signal(signal.SIGHUP, _stop_on_signal)
    sys.exit(main())
