"""Politeness per request: a host that pushes back is slowed down, not stopped.

A 429 or 503 halves its host's concurrency (recovering one step at a time as answers come
back without push-back), the URL that got a Retry-After waits it out on its own, and the
host's other URLs go on at the reduced concurrency. Connections are kept alive per host
within a batch, and only ever reused for an address the fetch has just vetted. Real
loopback servers as in test_linkcheck_fetch.py.
"""

from __future__ import annotations

import threading
import time

import pytest

from summaries.linkcheck import InProcessHostLimiter, check_many, fetch, limits, transport
from tests.test_linkcheck_fetch import (  # noqa: F401 - fixtures
    FAST,
    Handler,
    Server,
    make_server,  # a fixture
    page,
    sequence,
    title_page,
)


@pytest.fixture
def site(make_server) -> Server:  # noqa: F811 - the fixture imported above
    return make_server("127.0.0.2", "a.test")


def timed(route, log: list, lock: threading.Lock, seconds: float = 0.1):
    """A route that answers after `seconds` and logs (path, arrived, answered)."""

    def answer(handler):
        arrived = time.monotonic()
        time.sleep(seconds)
        with lock:
            log.append((handler.path, arrived, time.monotonic()))
        route(handler)

    return answer


def overlap(log: list, start: float, end: float) -> int:
    """The most requests of the log in flight at once among those arriving in [start, end)."""
    spans = [(a, b) for _path, a, b in log if start <= a < end]
    return max((sum(1 for a2, b2 in spans if a2 <= a < b2) for a, _b in spans), default=0)


# --- The limiter: multiplicative decrease, additive increase --------------------------------


def test_a_hosts_concurrency_halves_on_push_back_and_recovers_step_by_step():
    limiter = InProcessHostLimiter(per_host=4)
    assert limiter.limit("a") == 4
    limiter.slow_down("a")
    assert limiter.limit("a") == 2
    limiter.slow_down("a")
    limiter.slow_down("a")
    assert limiter.limit("a") == 1  # never below one request at a time
    assert limiter.limit("b") == 4  # other hosts are not affected
    assert limiter.acquire("a", timeout=0)
    assert not limiter.acquire("a", timeout=0)  # the reduced limit holds
    limiter.release("a")
    for _ in range(limits.INCREASE_AFTER - 1):
        limiter.speed_up("a")
    assert limiter.limit("a") == 1
    limiter.speed_up("a")
    assert limiter.limit("a") == 2
    for _ in range(3 * limits.INCREASE_AFTER):
        limiter.speed_up("a")
    assert limiter.limit("a") == 4  # back to the configured limit, never over it
    assert limiter.wait_time("a") == 0.0  # slowed down, never paused


def test_a_slowed_host_with_requests_in_flight_gives_no_slot_until_under_its_new_limit():
    limiter = InProcessHostLimiter(per_host=2)
    assert limiter.acquire("a", timeout=0) and limiter.acquire("a", timeout=0)
    limiter.slow_down("a")
    limiter.release("a")
    assert not limiter.acquire("a", timeout=0)  # one still in flight: the limit is one
    limiter.release("a")
    assert limiter.acquire("a", timeout=0)


# --- check_many against a loopback host ------------------------------------------------------


def test_a_429_with_retry_after_on_one_url_does_not_stop_the_hosts_other_urls(site):
    log: list = []
    lock = threading.Lock()
    site.routes["/limited"] = timed(
        sequence(page(429, Retry_After="1"), page(200, title_page("Back"))), log, lock
    )
    for n in range(6):
        site.routes[f"/p{n}"] = timed(page(200, title_page(f"P{n}")), log, lock)
    urls = [site.url("/limited"), *(site.url(f"/p{n}") for n in range(6))]
    results = check_many(dict.fromkeys(urls, False), per_host=2, **FAST)
    assert {result.state for result in results.values()} == {"ok"}
    limited = [arrived for path, arrived, _ in log if path == "/limited"]
    others = [arrived for path, arrived, _ in log if path != "/limited"]
    assert len(limited) == 2
    # The host's other pages were all sent while /limited waited out its Retry-After.
    assert max(others) < limited[0] + 1.0


def test_the_url_that_got_retry_after_is_not_requested_again_early(site):
    site.routes["/limited"] = sequence(page(429, Retry_After="1"), page(200, title_page("OK")))
    for n in range(4):
        site.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))
    urls = [site.url("/limited"), *(site.url(f"/p{n}") for n in range(4))]
    results = check_many(dict.fromkeys(urls, False), per_host=2, **FAST)
    assert results[site.url("/limited")].state == "ok"
    times = [
        t
        for (_m, path, _h), t in zip(site.requests, site.request_times, strict=True)
        if path == "/limited"
    ]
    assert len(times) == 2 and times[1] - times[0] >= 1.0


def test_a_503_with_a_long_retry_after_does_not_stall_the_host(site):
    site.routes["/busy"] = page(503, Retry_After="120")
    for n in range(6):
        site.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))
    urls = [site.url("/busy"), *(site.url(f"/p{n}") for n in range(6))]
    started = time.monotonic()
    results = check_many(dict.fromkeys(urls, False), per_host=2, **FAST)
    elapsed = time.monotonic() - started
    busy = results[site.url("/busy")]
    # Its Retry-After lies past the deadline: the 503 stands, and it is not asked again.
    assert (busy.state, busy.status, busy.attempts) == ("broken", 503, 1)
    assert site.hits["/busy"] == 1
    assert all(results[site.url(f"/p{n}")].state == "ok" for n in range(6))
    assert elapsed < 1.5  # the other pages did not wait for the 120 s, nor for a pause


def test_after_push_back_the_host_gets_one_request_at_a_time_then_two_again(site):
    log: list = []
    lock = threading.Lock()
    site.routes["/limited"] = timed(
        sequence(page(429, Retry_After="1"), page(200, title_page("Back"))), log, lock, 0.05
    )
    for n in range(30):
        site.routes[f"/p{n}"] = timed(page(200, title_page(f"P{n}")), log, lock, 0.05)
    urls = [site.url("/limited"), *(site.url(f"/p{n}") for n in range(30))]
    results = check_many(dict.fromkeys(urls, False), per_host=2, **FAST)
    assert {result.state for result in results.values()} == {"ok"}
    pushed_back_at = min(answered for path, _arrived, answered in log if path == "/limited")
    assert overlap(log, 0, pushed_back_at) == 2  # two at a time before the 429
    # Halved to one at once (the first few requests after it), back to two later.
    assert overlap(log, pushed_back_at, pushed_back_at + 0.15) == 1
    assert overlap(log, pushed_back_at + 0.6, float("inf")) == 2


# --- Keep-alive, pinned to vetted addresses ---------------------------------------------------


class KeepAliveHandler(Handler):
    protocol_version = "HTTP/1.1"


class KeepAliveServer(Server):
    """A test server that keeps connections alive (HTTP/1.1), on a port of choice."""

    def __init__(self, host: str, name: str, port: int = 0):
        self.wanted_port = port
        super().__init__(host, name)
        self.RequestHandlerClass = KeepAliveHandler

    def server_bind(self) -> None:
        self.server_address = (self.server_address[0], self.wanted_port)
        super().server_bind()


@pytest.fixture
def keep_alive_servers():
    servers: list[KeepAliveServer] = []

    def start(host: str, name: str, port: int = 0) -> KeepAliveServer:
        server = KeepAliveServer(host, name, port)
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stopping.set()
        server.shutdown()
        server.server_close()


def test_a_batch_reuses_its_connections_to_a_host(keep_alive_servers):
    server = keep_alive_servers("127.0.0.2", "a.test")
    for n in range(8):
        server.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))
    urls = {server.url(f"/p{n}"): n % 2 == 0 for n in range(8)}
    results = check_many(urls, per_host=1, **FAST)
    assert {result.state for result in results.values()} == {"ok"}
    assert server.hits.total() == 8
    assert server.connections == 1  # one connection, kept alive from page to page


def test_a_kept_connection_is_reused_only_for_an_address_just_vetted(keep_alive_servers):
    first = keep_alive_servers("127.0.0.2", "a.test")
    second = keep_alive_servers("127.0.0.3", "a.test", port=first.port)  # same port
    for server in (first, second):
        server.routes["/x"] = page(200, title_page("X"))
        server.routes["/y"] = page(200, title_page("Y"))
    answers = {"a.test": ["127.0.0.2"], "internal.test": ["127.0.0.1"]}
    options = {**FAST, "resolver": lambda host: answers[host]}
    with transport.KeepAlive() as connections:
        one = fetch(first.url("/x"), need_body=False, connections=connections, **options)
        answers["a.test"] = ["127.0.0.3"]  # the name now points elsewhere
        two = fetch(first.url("/y"), need_body=False, connections=connections, **options)
        answers["a.test"] = ["127.0.0.1"]  # and now to an address that is refused
        three = fetch(first.url("/x"), need_body=False, connections=connections, **options)
    assert (one.state, one.address) == ("ok", "127.0.0.2")
    assert (two.state, two.address) == ("ok", "127.0.0.3")  # not the kept connection
    assert three.state == "blocked"
    assert first.hits.total() == 1 and second.hits.total() == 1


def test_a_connection_the_server_closed_is_not_reused(keep_alive_servers):
    server = keep_alive_servers("127.0.0.2", "a.test")
    server.routes["/closes"] = page(200, title_page("C"), Connection="close")
    server.routes["/next"] = page(200, title_page("N"))
    with transport.KeepAlive() as connections:
        one = fetch(server.url("/closes"), need_body=False, connections=connections, **FAST)
        two = fetch(server.url("/next"), need_body=False, connections=connections, **FAST)
    assert (one.state, two.state) == ("ok", "ok")
    assert server.connections == 2
