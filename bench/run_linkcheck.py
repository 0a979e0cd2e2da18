"""Link-checker benchmark (issue 6, section 10): our checker against linkinator, on loopback.

    .venv/bin/python bench/run_linkcheck.py [--urls 2000 --hosts 20 --delay 0.1
                                             --per-host 2 --in-flight 40]

A child process (so the checker does not share a GIL with the servers) runs one
ThreadingHTTPServer per host on 127.0.0.2 ... 127.0.0.(hosts+1), each answering after
`--delay` seconds, a counting server on 127.0.0.1 (which must never be hit) and a server on
127.0.0.250 for the page that lists every URL for linkinator. The URL set is mostly 200s
with a <title>, plus the failure modes of issue 6 section 9 in small numbers, each with its
expected state. Our checker runs through `check_many` with a stub resolver (hNN.bench.test
-> 127.0.0.NN) and `allowed_networks` covering exactly the benchmark hosts (never
127.0.0.1); linkinator gets the same URLs with IP literals. All traffic stays on
127.0.0.0/8, every wait has a timeout, and the servers stop by themselves.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import multiprocessing
import os
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from servers import StubHandler, start_stub_server, stop_stub_servers  # noqa: E402

DEADLINE = 5.0
HANG_SECONDS = 8.0  # the hanging handler gives up by itself after this
SERVER_LIFETIME = 900.0  # the server process exits by itself after this
INTERNAL = "127.0.0.1"
PAGE_HOST = "127.0.0.250"
LINKINATOR = Path("/tmp/linkinator/node_modules/.bin/linkinator")  # noqa: S108

# (kind, how many, expected state, minimum requests a correct checker sends for it).
# A linkinator verdict is only OK or BROKEN: "ok" and "redirected" should be OK; everything
# else (broken, error, blocked, unverifiable) should not be OK.
FAILURES = [
    ("s404", 10, "broken", 2),  # HEAD 404, then GET 404 (HEAD fails in any way)
    ("s410", 5, "broken", 2),
    ("s500", 4, "broken", 5),  # HEAD, GET, 3 retries
    ("flaky503", 5, "ok", 2),  # 503 once, then 200
    ("ra429", 3, "ok", 2),  # 429 with Retry-After: 1 once, then 200
    ("p301", 8, "redirected", 3),  # two 301 hops to another path (relative Location)
    ("p308", 5, "redirected", 3),  # two 308 hops
    ("temp", 5, "ok", 3),  # 302 then 307 back to a page: temporary, the link stays right
    ("xhost", 5, "redirected", 2),  # 301 to another benchmark host (absolute Location)
    ("loop", 3, "broken", 3),  # -> b -> a -> b
    ("internal", 3, "blocked", 1),  # 302 to 127.0.0.1: must never be fetched
    ("hang", 1, "error", 0),  # no answer: the 5 s deadline ends it
    ("head405", 5, "ok", 2),  # HEAD 405, GET 200
    ("head403", 4, "ok", 2),  # HEAD 403, GET 200
]
MIN_REQUESTS = {kind: requests for kind, _n, _state, requests in FAILURES} | {"ok": 1}
EXPECTED = {kind: state for kind, _n, state, _r in FAILURES} | {"ok": "ok"}
# The host that answers 429 to a third request in flight (per-host cap test).
STRICT_HOST_INDEX = 1


def host_ip(index: int) -> str:
    return f"127.0.0.{index + 2}"


def host_name(index: int) -> str:
    return f"h{index + 2:02d}.bench.test"


# -- the servers (child process) ---------------------------------------------------------


class Handler(StubHandler):
    def page(self, title: str) -> None:
        body = f"<html><head><title>{title}</title></head><body><p>{title}</p></body></html>"
        self.send(200, body=body.encode())

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
            self.page("internal")
            return
        if self.server.kind == "page":
            self.send(200, body=state.listing.get(self.path, "").encode())
            return
        parts = self.path.strip("/").split("/")  # run/kind/n[/step]
        run, kind = parts[0], parts[1]
        index = self.server.index
        with state.lock:
            state.last_at[run] = time.monotonic()
        if kind == "hang":
            time.sleep(HANG_SECONDS)
            return
        key = (run, self.server.index)
        with state.lock:
            state.in_flight[key] += 1
            state.max_in_flight[key] = max(state.max_in_flight[key], state.in_flight[key])
            state.requests[run] += 1
            over = state.in_flight[key] > 2 and index == STRICT_HOST_INDEX
        try:
            time.sleep(state.delay)
            if over:
                with state.lock:
                    state.strict_429s[run] += 1
                self.send(429, {"Retry-After": "1"})
                return
            self.route(run, kind, parts)
        finally:
            with state.lock:
                state.in_flight[key] -= 1

    def route(self, run: str, kind: str, parts: list[str]) -> None:
        state = self.server.state
        path = self.path
        step = parts[3] if len(parts) > 3 else ""
        if kind == "ok":
            self.page(f"Page {path}")
        elif kind in ("s404", "s410", "s500"):
            self.send(int(kind[1:]), body=b"<html><title>error</title></html>")
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
                self.page(f"Recovered {path}")
        elif kind in ("p301", "p308"):
            base = "/".join(parts[:3])
            if step in ("", "0"):
                self.send(int(kind[1:]), {"Location": f"/{base}/1"})
            elif step == "1":
                self.send(int(kind[1:]), {"Location": "2"})  # relative
            else:
                self.page(f"Moved {path}")
        elif kind == "temp":
            base = "/".join(parts[:3])
            if step == "":
                self.send(302, {"Location": f"/{base}/1"})
            elif step == "1":
                self.send(307, {"Location": f"/{base}/2"})
            else:
                self.page(f"Temporary {path}")
        elif kind == "xhost":
            other = (self.server.index + 1) % len(state.ports)
            self.send(301, {"Location": self.url_for(other, f"/{run}/ok/x{parts[2]}")})
        elif kind == "loop":
            base = "/".join(parts[:3])
            self.send(302, {"Location": f"/{base}/{'b' if step != 'b' else 'a'}"})
        elif kind == "internal":
            location = f"http://{INTERNAL}:{state.internal_port}/secret/{parts[2]}"
            self.send(302, {"Location": location})
        elif kind in ("head405", "head403"):
            if self.command == "HEAD":
                self.send(int(kind[4:]))
            else:
                self.page(f"GET only {path}")
        else:
            self.send(404)


class State:
    def __init__(self, delay: float) -> None:
        self.delay = delay
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
            }


def serve(conn, hosts: int, delay: float) -> None:
    """The child process: start the servers, report ports, answer commands, stop."""
    state = State(delay)
    servers = []

    def start(address: str, kind: str, index: int = -1) -> ThreadingHTTPServer:
        server = start_stub_server(address, Handler, state=state, kind=kind, index=index)
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
        stop_stub_servers(servers)


# -- the URL set -------------------------------------------------------------------------


@dataclass
class Case:
    kind: str
    host: int
    path: str  # without the run prefix
    expected: str

    def url(self, run: str, ports: list[int], *, names: bool) -> str:
        host = host_name(self.host) if names else host_ip(self.host)
        return f"http://{host}:{ports[self.host]}/{run}{self.path}"


def make_cases(total: int, hosts: int) -> list[Case]:
    cases: list[Case] = []
    spot = 0
    for kind, count, expected, _requests in FAILURES:
        for n in range(count):
            # Spread failures round-robin; keep them off the strict host's path of 429s.
            host = spot % hosts
            spot += 1
            if kind == "hang":
                host = hosts - 1
            cases.append(Case(kind, host, f"/{kind}/{n}", expected))
    n = 0
    while len(cases) < total:
        cases.append(Case("ok", n % hosts, f"/ok/{n}", "ok"))
        n += 1
    return cases[:total]


def lower_bound(cases: list[Case], delay: float, per_host: int) -> tuple[float, str]:
    """The shortest wall time any checker honouring the per-host cap could take.

    Per host: the slot-seconds its URLs need (minimum requests x delay, the hang's whole
    deadline) shared by `per_host` slots, plus the Retry-After pauses the host demands
    (nothing may be sent to it then), and never less than its slowest single URL.
    The bound is the largest over hosts.
    """
    slot: dict[int, float] = defaultdict(float)
    pause: dict[int, float] = defaultdict(float)
    longest: dict[int, float] = defaultdict(float)
    for case in cases:
        seconds = DEADLINE if case.kind == "hang" else MIN_REQUESTS[case.kind] * delay
        slot[case.host] += seconds
        longest[case.host] = max(longest[case.host], seconds)
        if case.kind == "ra429":
            pause[case.host] += 1.0
    bounds = {
        host: max(slot[host] / per_host + pause[host], longest[host] + pause[host]) for host in slot
    }
    worst = max(bounds, key=bounds.get)
    text = (
        f"host {host_name(worst)}: {slot[worst]:.1f} slot-s / {per_host} slots"
        f" + {pause[worst]:.1f} s Retry-After, slowest single URL {longest[worst]:.1f} s"
    )
    return bounds[worst], text


# -- our checker -------------------------------------------------------------------------


def allowed_networks(hosts: int) -> list[str]:
    first = ipaddress.ip_address(host_ip(0))
    last = ipaddress.ip_address(host_ip(hosts - 1))
    return [str(net) for net in ipaddress.summarize_address_range(first, last)]


def stub_resolver(name: str) -> list[str]:
    label = name.split(".")[0]
    if name.endswith(".bench.test") and label[:1] == "h" and label[1:].isdigit():
        return [f"127.0.0.{int(label[1:])}"]
    raise socket.gaierror(socket.EAI_NONAME, f"{name} is not a benchmark host")


def run_ours(urls: dict[str, Case], args) -> dict:
    from summaries.linkcheck import batch, check_many

    started_at: dict[str, float] = {}
    took: dict[str, float] = {}
    original = batch.fetch

    def timed_fetch(url, **options):  # times each URL; the checker itself is unchanged
        started_at[url] = time.monotonic()
        try:
            return original(url, **options)
        finally:
            took[url] = time.monotonic() - started_at[url]

    networks = allowed_networks(args.hosts)
    batch.fetch = timed_fetch
    try:
        start = time.monotonic()
        results = check_many(
            dict.fromkeys(urls, False),
            max_in_flight=args.in_flight,
            per_host=args.per_host,
            resolver=stub_resolver,
            allowed_networks=networks,
            deadline=DEADLINE,
            timeout=DEADLINE,
            time_budget=120.0,
        )
        wall = time.monotonic() - start
    finally:
        batch.fetch = original
    mismatches = []
    for url, case in urls.items():
        result = results.get(url)
        state = str(result.state) if result else "missing"
        wrong = state != case.expected
        if not wrong and case.kind == "hang":
            wrong = str(result.error_class) != "timeout"
        if wrong:
            detail = f"{result.status} {result.error_class} {result.error}" if result else ""
            mismatches.append(f"{url}: expected {case.expected}, got {state} ({detail})")
    slowest = max(took, key=took.get)
    return {
        "wall": wall,
        "started": start,
        "correct": len(urls) - len(mismatches),
        "mismatches": mismatches,
        "slowest": (slowest, took[slowest]),
        "networks": networks,
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


# -- linkinator --------------------------------------------------------------------------


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
        str(args.in_flight),
        "--timeout",
        str(int(DEADLINE * 1000)),
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
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return {"skipped": "timed out after 300 s"}
    wall = time.monotonic() - start
    (LINKINATOR.parents[2] / "last-output.json").write_text(done.stdout)
    try:
        links = json.loads(done.stdout)["links"]
    except (ValueError, KeyError):
        return {"skipped": f"unreadable output (exit {done.returncode}): {done.stderr[-300:]}"}
    found = {link["url"]: link for link in links}
    mismatches = []
    for url, case in urls.items():
        link = found.get(url)
        verdict = link["state"] if link else "missing"
        should_be_ok = case.expected in ("ok", "redirected")
        if (verdict == "OK") != should_be_ok or link is None:
            status = link.get("status") if link else None
            mismatches.append(f"{url}: expected {case.expected}, linkinator {verdict} {status}")
    return {
        "wall": wall,
        "started": start,
        "correct": len(urls) - len(mismatches),
        "mismatches": mismatches,
    }


# -- main --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--per-host", type=int, default=2)
    parser.add_argument("--in-flight", type=int, default=40)
    parser.add_argument("--skip-linkinator", action="store_true")
    args = parser.parse_args()
    if not 1 <= args.hosts <= 200:
        parser.error("--hosts must be 1..200 (127.0.0.2 ... 127.0.0.201)")

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    servers = context.Process(target=serve, args=(child, args.hosts, args.delay), daemon=True)
    servers.start()
    try:
        if not parent.poll(30):
            print("servers did not start within 30 s")
            return 2
        info = parent.recv()
        ports = info["ports"]
        cases = make_cases(args.urls, args.hosts)
        bound, bound_text = lower_bound(cases, args.delay, args.per_host)

        def stats() -> dict:
            parent.send(("stats", None))
            if not parent.poll(30):
                raise RuntimeError("server process did not answer within 30 s")
            return parent.recv()

        ours_urls = {case.url("a", ports, names=True): case for case in cases}
        ours = run_ours(ours_urls, args)
        after_ours = stats()

        rows = [("ours (check_many)", ours, after_ours["internal_hits"], "a")]
        lk_urls = {case.url("b", ports, names=False): case for case in cases}
        if args.skip_linkinator:
            linkinator = {"skipped": "--skip-linkinator"}
        else:
            links = "\n".join(f'<a href="{url}">{n}</a>' for n, url in enumerate(lk_urls))
            parent.send(("listing", {"/links.html": f"<html><body>{links}</body></html>"}))
            parent.poll(30) and parent.recv()
            page_url = f"http://{PAGE_HOST}:{info['page']}/links.html"
            linkinator = run_linkinator(lk_urls, page_url, args)
        final = stats()
        lk_hits = final["internal_hits"] - after_ours["internal_hits"]
        rows.append(("linkinator 7 (npm)", linkinator, lk_hits, "b"))

        print(
            f"{len(cases)} URLs over {args.hosts} hosts ({host_ip(0)}..{host_ip(args.hosts - 1)})"
        )
        print(
            f"answer delay {args.delay * 1000:.0f} ms, per-host cap {args.per_host}, "
            f"in flight {args.in_flight}, deadline {DEADLINE:.0f} s"
        )
        kinds = Counter(case.kind for case in cases)
        print("mix: " + ", ".join(f"{kind} {count}" for kind, count in kinds.items()))
        print("servers: a child process (spawn), not sharing the checker's interpreter")
        print(f"allowed_networks: {', '.join(ours['networks'])}")
        print(f"lower bound {bound:.2f} s ({bound_text})")
        print(
            f"ours: slowest URL {ours['slowest'][1]:.2f} s ({ours['slowest'][0]}), "
            f"peak RSS {ours['maxrss_mib']:.0f} MiB"
        )
        print()
        header = (
            "tool",
            "wall s",
            "links/s",
            "x bound",
            "correct",
            "127.0.0.1 hits",
            "max/host",
            "429 retry gap",
            "requests",
            "last request at",
        )
        table = [header]
        for name, row, hits, run in rows:
            if "skipped" in row:
                table.append((name, f"not run: {row['skipped']}", *[""] * (len(header) - 2)))
                continue
            gaps = final["retry_gaps"].get(run, [])
            table.append(
                (
                    name,
                    f"{row['wall']:.2f}",
                    f"{len(cases) / row['wall']:.0f}",
                    f"{row['wall'] / bound:.2f}",
                    f"{row['correct']}/{len(cases)}",
                    str(hits),
                    str(final["max_in_flight_per_host"].get(run, 0)),
                    f"min {min(gaps):.2f} s" if gaps else "-",
                    str(final["requests"].get(run, 0)),
                    f"{final['last_at'][run] - row['started']:.1f} s"
                    if run in final["last_at"]
                    else "-",
                )
            )
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        for n, line in enumerate(table):
            print(
                "| "
                + " | ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True))
                + " |"
            )
            if n == 0:
                print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        strict = final["strict_429s"]
        print(
            f"429s from the strict host {host_name(STRICT_HOST_INDEX)} (over 2 in flight):"
            f" ours {strict.get('a', 0)}, linkinator {strict.get('b', 0)}"
        )
        print()
        for name, row, _hits, _run in rows:
            wrong = row.get("mismatches", [])
            if wrong:
                by_kind = Counter(
                    case.kind
                    for url, case in (ours_urls | lk_urls).items()
                    if any(line.startswith(url + ":") for line in wrong)
                )
                print(f"{name}: {len(wrong)} wrong verdicts by kind: {dict(by_kind)}")
                for line in wrong[:20]:
                    print("  " + line)
        ok = (
            after_ours["internal_hits"] == 0
            and not ours["mismatches"]
            and ours["wall"] <= 1.5 * bound
        )
        print(
            f"target (ours within 1.5x of the bound, every verdict right, 0 internal hits): "
            f"{'met' if ok else 'NOT met'}"
        )
        assert after_ours["internal_hits"] == 0, "our checker hit 127.0.0.1"
        return 0 if ok else 1
    finally:
        parent.send(("stop", None))
        servers.join(timeout=15)
        if servers.is_alive():
            servers.terminate()
            servers.join(timeout=5)


if __name__ == "__main__":
    sys.exit(main())
