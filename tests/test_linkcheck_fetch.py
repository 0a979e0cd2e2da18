"""summaries.linkcheck fetch and check_many against real loopback servers.

Every server here listens on 127.0.0.1-3 with an ephemeral port; names are mapped to those
addresses by a stub resolver, so no test asks real DNS or leaves the machine. 127.0.0.2 and
127.0.0.3 are allowed (FETCH_ALLOWED_NETWORKS="127.0.0.2/31"); 127.0.0.1 plays the internal
address that must never be reached.
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import ipaddress
import json
import socket
import ssl
import struct
import threading
import time
import tracemalloc
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import trustme

from summaries.linkcheck import (
    CheckResult,
    InProcessHostLimiter,
    batch,
    check_many,
    fetch,
    fingerprint_text,
    parse_retry_after,
    verdict,
)

ALLOWED = ["127.0.0.2/31"]
HOSTS = {"a.test": "127.0.0.2", "b.test": "127.0.0.3", "internal.test": "127.0.0.1"}
HTML = "text/html; charset=utf-8"


def resolver(host: str) -> list[str]:
    return [HOSTS[host]]  # KeyError (a LookupError) is a DNS failure


# Small deadlines and back-off keep every test well under a second.
FAST = {
    "resolver": resolver,
    "allowed_networks": ALLOWED,
    "deadline": 3.0,
    "timeout": 3.0,
    "backoff": 0.01,
    "max_backoff": 0.02,
}


# --- The test server --------------------------------------------------------------------

Route = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, format, *args):  # noqa: A002 - silence the access log
        pass

    def do_GET(self):
        self.server.record(self)
        route = self.server.routes.get(self.path.split("?")[0])
        if route is None:
            return send(self, 404, b"<title>Not found</title>")
        route(self)

    do_HEAD = do_GET


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, host: str, name: str):
        super().__init__((host, 0), Handler)
        self.name = name
        self.routes: dict[str, Route] = {}
        self.hits: collections.Counter[str] = collections.Counter()
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.sent: collections.Counter[str] = collections.Counter()  # body bytes written
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.clock: Callable[[], float] = time.monotonic
        self.request_times: list[float] = []
        self.connections = 0

    def record(self, handler: Handler) -> None:
        with self.lock:
            self.hits[handler.path] += 1
            self.requests.append((handler.command, handler.path, dict(handler.headers)))
            self.request_times.append(self.clock())

    def verify_request(self, request, client_address):
        with self.lock:
            self.connections += 1
        return True

    @property
    def port(self) -> int:
        return self.server_address[1]

    def url(self, path: str, *, name: str | None = None) -> str:
        return f"http://{name or self.name}:{self.port}{path}"

    def methods(self, path: str) -> list[str]:
        return [method for method, request_path, _ in self.requests if request_path == path]


@pytest.fixture
def make_server():
    servers: list[Server] = []

    def start(host: str = "127.0.0.2", name: str = "a.test") -> Server:
        server = Server(host, name)
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stopping.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def site(make_server) -> Server:
    return make_server("127.0.0.2", "a.test")


@pytest.fixture
def other_site(make_server) -> Server:
    return make_server("127.0.0.3", "b.test")


@pytest.fixture
def internal(make_server) -> Server:
    return make_server("127.0.0.1", "internal.test")


def send(handler, status: int, body: bytes = b"", content_type: str = HTML, **headers) -> None:
    handler.send_response(status)
    if content_type:
        handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


def page(status: int = 200, body: bytes | str = b"", content_type: str = HTML, **headers):
    data = body.encode() if isinstance(body, str) else body
    return lambda handler: send(handler, status, data, content_type, **headers)


def redirect(status: int, location: str):
    return lambda handler: send(handler, status, b"", "", Location=location)


def sequence(*routes: Route) -> Route:
    """Each request gets the next route; the last one repeats."""
    remaining = list(routes)

    def route(handler):
        current = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        current(handler)

    return route


def by_method(**routes: Route) -> Route:
    return lambda handler: routes[handler.command](handler)


def hang(handler) -> None:
    handler.server.stopping.wait(10)


def reset(handler) -> None:
    # SO_LINGER with a zero timeout makes close() send a RST instead of a FIN.
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()


def stream(
    total: int,
    *,
    content_length: bool,
    chunk: bytes = b"x" * 65536,
    pause=0.0,
    head: bytes = b"",
    content_type: str = "text/html",
):
    """`head`, then `total` bytes in chunks (`sent` counts the chunks, not the head)."""

    def route(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        if content_length:
            handler.send_header("Content-Length", str(len(head) + total))
        handler.end_headers()
        # A small send buffer, so that what was written is close to what the client took.
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        written = 0
        try:
            if head:
                handler.wfile.write(head)
                handler.wfile.flush()
            while written < total and not handler.server.stopping.is_set():
                handler.wfile.write(chunk)
                written += len(chunk)
                with handler.server.lock:
                    handler.server.sent[handler.path] += len(chunk)
                if pause:
                    time.sleep(pause)
        except OSError:
            pass  # the client went away: exactly what the cap should do

    return route


def title_page(title: str, text: str = "") -> str:
    return f"<html><head><title>{title}</title></head><body><p>{text}</p></body></html>"


# --- Status codes -----------------------------------------------------------------------


def test_200_records_title_type_time_and_fingerprint(site):
    body = (
        "<html><head><title>  Caf&eacute; &amp;\n  Co  </title><script>var x=1</script></head>"
        "<body><nav>Menu</nav><header>Site</header><p>Claude is <b>2.5&times;</b> faster."
        "</p><footer>(c)</footer></body></html>"
    )
    site.routes["/"] = page(200, body)
    result = fetch(site.url("/"), need_body=True, **FAST)
    assert result.state == "ok"
    assert (result.status, result.title, result.content_type) == (200, "Café & Co", "text/html")
    assert result.text == "Claude is 2.5× faster."
    assert result.fingerprint == hashlib.sha256(b"Claude is 2.5\xc3\x97 faster.").hexdigest()
    assert result.fingerprint == fingerprint_text("Claude is 2.5× faster.")
    assert result.response_ms is not None and result.response_ms >= 0
    assert (result.final_url, result.redirect_chain, result.attempts) == (site.url("/"), [], 1)
    assert result.address == "127.0.0.2"
    assert site.methods("/") == ["GET"]
    data = json.loads(json.dumps(result.as_dict()))  # what check_sources --json writes
    assert (data["state"], data["status"], data["title"]) == ("ok", 200, "Café & Co")


def test_one_get_reads_the_title_when_the_body_is_not_needed(site):
    head = '<title>Hello</title><meta name="description" content="A greeting.">'
    site.routes["/"] = page(200, f"<html><head>{head}</head><body><p>Hi</p></body></html>")
    result = fetch(site.url("/"), need_body=False, **FAST)
    assert (result.state, result.status, result.method, result.attempts) == ("ok", 200, "GET", 1)
    assert (result.title, result.description) == ("Hello", "A greeting.")
    assert result.text is None  # no claim: the text is not kept
    assert site.methods("/") == ["GET"]


def test_without_a_claim_a_page_is_read_only_to_the_end_of_its_head(site):
    head = b"<html><head><title>Big page</title></head><body>"
    site.routes["/big"] = stream(20_000_000, content_length=True, head=head)
    site.routes["/drip"] = stream(400, content_length=False, head=head, chunk=b"x", pause=0.05)
    big = fetch(site.url("/big"), need_body=False, **FAST)
    assert (big.state, big.title, big.error_class) == ("ok", "Big page", None)
    assert site.sent["/big"] < 1_000_000  # not the 20 MB, and not an error either
    # A body that drips after its head: the check ends with the head, not at the deadline.
    started = time.monotonic()
    drip = fetch(site.url("/drip"), need_body=False, **FAST)
    assert (drip.state, drip.title) == ("ok", "Big page")
    assert time.monotonic() - started < 1.0 and site.sent["/drip"] < 20


def test_without_a_claim_other_bodies_are_not_read(site):
    site.routes["/png"] = stream(20_000_000, content_length=True, content_type="image/png")
    result = fetch(site.url("/png"), need_body=False, **FAST)
    assert (result.state, result.content_type, result.title) == ("ok", "image/png", None)
    assert site.sent["/png"] < 1_000_000


def test_sends_the_name_as_host_and_an_identifying_user_agent(site):
    site.routes["/"] = page(200)
    fetch(site.url("/"), need_body=True, user_agent="test-checker/1.0 (+mailto)", **FAST)
    headers = site.requests[0][2]
    assert headers["Host"] == f"a.test:{site.port}"
    assert headers["User-Agent"] == "test-checker/1.0 (+mailto)"
    assert "gzip" in headers["Accept-Encoding"]


@pytest.mark.parametrize("status", [404, 410])
def test_404_and_410_are_broken_and_never_retried(site, status):
    site.routes["/gone"] = page(status, title_page("Gone"))
    result = fetch(site.url("/gone"), need_body=False, **FAST)
    assert (result.state, result.status, result.error_class) == ("broken", status, "http")
    assert site.methods("/gone") == ["GET"]  # never retried
    assert result.attempts == 1


def test_500_is_retried_then_broken(site):
    site.routes["/err"] = page(500)
    result = fetch(site.url("/err"), need_body=True, retries=2, **FAST)
    assert (result.state, result.status, result.error_class) == ("broken", 500, "http")
    assert site.hits["/err"] == 3 == result.attempts


def test_503_then_200_is_retried_and_ok(site):
    site.routes["/flaky"] = sequence(page(503), page(200, title_page("Back")))
    result = fetch(site.url("/flaky"), need_body=True, **FAST)
    assert (result.state, result.status, result.title, result.attempts) == ("ok", 200, "Back", 2)


def test_backoff_is_exponential_with_full_jitter(site):
    site.routes["/err"] = page(502)
    sleeps: list[float] = []
    fetch(
        site.url("/err"),
        need_body=True,
        retries=3,
        sleep=sleeps.append,
        rng=lambda: 0.5,
        **{**FAST, "backoff": 0.1, "max_backoff": 10},
    )
    assert sleeps == pytest.approx([0.05, 0.1, 0.2])  # rng() * backoff * 2**n
    assert site.hits["/err"] == 4


class FakeClock:
    """A monotonic clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_429_is_not_retried_before_retry_after(site):
    clock = FakeClock()
    site.clock = clock
    site.routes["/limited"] = sequence(page(429, Retry_After="3"), page(200, title_page("OK")))
    result = fetch(
        site.url("/limited"),
        need_body=True,
        clock=clock,
        sleep=clock.sleep,
        rng=lambda: 0.0,
        **{**FAST, "deadline": 10.0},
    )
    assert (result.state, result.attempts) == ("ok", 2)
    assert clock.sleeps == [3.0]
    first, second = site.request_times
    assert second - first >= 3.0


def test_429_with_retry_after_beyond_the_deadline_is_not_retried_early(site):
    clock = FakeClock()
    site.routes["/limited"] = page(429, Retry_After="30")
    result = fetch(
        site.url("/limited"),
        need_body=True,
        clock=clock,
        sleep=clock.sleep,
        **{**FAST, "deadline": 5.0},
    )
    assert (result.state, result.status, result.attempts) == ("unverifiable", 429, 1)
    assert clock.sleeps == []


def test_retry_after_http_date():
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
    assert parse_retry_after("Tue, 14 Nov 2023 22:13:50 GMT", now=now) == 30.0
    assert parse_retry_after("Tue, 14 Nov 2023 22:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("120", now=now) == 120.0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None, now=now) is None


@pytest.mark.parametrize("status", [401, 403, 429])
def test_bot_walls_are_unverifiable_not_broken(site, status):
    site.routes["/wall"] = page(status)
    result = fetch(site.url("/wall"), need_body=True, retries=1, **FAST)
    assert (result.state, result.status, result.error_class) == ("unverifiable", status, "http")


@pytest.mark.parametrize(
    ("status", "body", "headers"),
    [
        (403, title_page("Just a moment..."), {}),
        (503, title_page("Attention Required! | Cloudflare"), {}),
        (200, '<html><div class="g-recaptcha" data-sitekey="x"></div></html>', {}),
        (403, "<html>denied</html>", {"cf_mitigated": "challenge"}),
    ],
)
def test_challenge_pages_are_unverifiable_and_not_retried(site, status, body, headers):
    site.routes["/challenge"] = page(status, body, **headers)
    result = fetch(site.url("/challenge"), need_body=True, **FAST)
    assert (result.state, result.status) == ("unverifiable", status)
    assert site.hits["/challenge"] == 1


@pytest.mark.parametrize("head_status", [405, 403, 404, 501])
def test_servers_that_answer_head_wrongly_are_asked_with_get_only(site, head_status):
    site.routes["/"] = by_method(HEAD=page(head_status), GET=page(200, title_page("Fine")))
    result = fetch(site.url("/"), need_body=False, **FAST)
    assert (result.state, result.status, result.method, result.title) == (
        "ok",
        200,
        "GET",
        "Fine",
    )
    assert site.methods("/") == ["GET"]


def test_get_when_head_resets_the_connection(site):
    site.routes["/"] = by_method(HEAD=reset, GET=page(200))
    result = fetch(site.url("/"), need_body=False, **FAST)
    assert (result.state, result.method) == ("ok", "GET")


# --- Redirects --------------------------------------------------------------------------


def test_redirect_chain_with_relative_and_cross_host_locations(site, other_site):
    site.routes["/start"] = redirect(301, "/moved")  # relative
    site.routes["/moved"] = redirect(302, other_site.url("/elsewhere"))  # cross-host
    other_site.routes["/elsewhere"] = redirect(307, "next")  # relative to the directory
    other_site.routes["/next"] = redirect(308, f"//a.test:{site.port}/final")  # scheme-relative
    site.routes["/final"] = page(200, title_page("Final"))
    result = fetch(site.url("/start"), need_body=True, **FAST)
    assert result.redirect_chain == [
        (site.url("/start"), 301),
        (site.url("/moved"), 302),
        (other_site.url("/elsewhere"), 307),
        (other_site.url("/next"), 308),
    ]
    assert (result.final_url, result.status, result.title) == (site.url("/final"), 200, "Final")
    # The permanent 301 leads to another path: the citation should be updated.
    assert result.state == "redirected"


def test_temporary_redirects_and_trailing_slashes_stay_ok(site):
    site.routes["/login-wall"] = redirect(302, "/landing")
    site.routes["/landing"] = page(200)
    site.routes["/docs"] = redirect(301, "/docs/")
    site.routes["/docs/"] = page(200)
    assert fetch(site.url("/login-wall"), need_body=False, **FAST).state == "ok"
    assert fetch(site.url("/docs"), need_body=False, **FAST).state == "ok"


def test_redirects_without_a_claim_are_followed_with_one_get_per_hop(site):
    site.routes["/a"] = redirect(301, "/b")
    site.routes["/b"] = page(200, title_page("Moved here"))
    result = fetch(site.url("/a"), need_body=False, **FAST)
    assert (result.state, result.method, result.title) == ("redirected", "GET", "Moved here")
    assert site.methods("/a") == site.methods("/b") == ["GET"]


def test_redirect_loop(site, other_site):
    site.routes["/loop"] = redirect(302, other_site.url("/back"))
    other_site.routes["/back"] = redirect(302, site.url("/loop"))
    result = fetch(site.url("/loop"), need_body=True, **FAST)
    assert (result.state, result.error_class) == ("broken", "redirect_loop")
    assert site.hits["/loop"] == 1 and other_site.hits["/back"] == 1


def test_too_many_redirects(site):
    for hop in range(10):
        site.routes[f"/hop{hop}"] = redirect(302, f"/hop{hop + 1}")
    result = fetch(site.url("/hop0"), need_body=True, max_redirects=3, **FAST)
    assert (result.state, result.error_class) == ("broken", "too_many_redirects")
    assert len(result.redirect_chain) == 4
    assert site.hits["/hop4"] == 0


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.1:{port}/secret",
        "http://internal.test:{port}/secret",
        "http://[::ffff:127.0.0.1]:{port}/secret",
        "http://2130706433:{port}/secret",
        "http://0x7f.1:{port}/secret",
        "http://a.test@127.0.0.1:{port}/secret",
        "http://169.254.169.254/latest/meta-data/",
        "file:///etc/passwd",
    ],
)
def test_a_redirect_to_an_internal_address_is_never_followed(site, internal, location):
    internal.routes["/secret"] = page(200, "secret")
    site.routes["/go"] = redirect(302, location.format(port=internal.port))
    result = fetch(site.url("/go"), need_body=True, **FAST)
    assert (result.state, result.error_class) == ("blocked", "blocked")
    assert result.redirect_chain == [(site.url("/go"), 302)]
    assert result.attempts == 1  # the refusal was not retried
    assert internal.connections == 0 and sum(internal.hits.values()) == 0


@pytest.fixture
def outside_connections(monkeypatch):
    """Refuse, and record, any connection to an address outside 127.0.0.0/8 and ::1.

    The loopback test servers are reached as usual; a fetch that would leave the machine
    gets "connection refused" before a packet is sent.
    """
    attempts: list[tuple[str, int]] = []
    connect = socket.socket.connect

    def guarded(self, address):
        if not ipaddress.ip_address(address[0]).is_loopback:
            attempts.append((address[0], address[1]))
            raise ConnectionRefusedError(f"test refused a connection to {address}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return attempts


@pytest.mark.parametrize("location", ["http://public.test:443/page", "https://public.test:80/page"])
def test_a_redirect_to_the_other_schemes_port_on_a_public_address_is_blocked(
    site, location, outside_connections
):
    """From an allowed server, a hop to a public name must still use its scheme's port."""
    hosts = {**HOSTS, "public.test": "8.8.8.8"}
    site.routes["/go"] = redirect(302, location)
    result = fetch(site.url("/go"), need_body=True, **{**FAST, "resolver": lambda h: [hosts[h]]})
    assert (result.state, result.error_class) == ("blocked", "blocked")
    assert "port" in result.error
    assert result.redirect_chain == [(site.url("/go"), 302)]
    assert result.final_url == location
    assert result.attempts == 1  # the allowed hop only; the refusal was not retried
    assert outside_connections == []


def test_a_6to4_address_carrying_an_allowed_ipv4_address_is_blocked(outside_connections):
    """2002:7f00:2:: embeds the allowed 127.0.0.2 but is an IPv6 address: never contacted.

    Port 80, so that only the address can be the reason for the refusal.
    """
    calls: list[str] = []

    def sixtofour(host):
        calls.append(host)
        return ["2002:7f00:2::"]

    result = fetch("http://sixtofour.test/", need_body=True, **{**FAST, "resolver": sixtofour})
    assert (result.state, result.error_class, result.attempts) == ("blocked", "blocked", 0)
    assert "6to4" in result.error and "127.0.0.2" in result.error
    assert calls == ["sixtofour.test"]
    assert outside_connections == []


def test_names_are_resolved_once_per_fetch(site, internal):
    """A name that rebinds to an internal address after the first answer is never followed."""
    answers = iter([["127.0.0.2"], ["127.0.0.1"], ["127.0.0.1"]])
    calls: list[str] = []

    def rebinding(host):
        calls.append(host)
        return next(answers)

    internal.routes["/"] = page(200)
    site.routes["/"] = by_method(HEAD=page(405), GET=redirect(302, "/next"))
    site.routes["/next"] = page(200)
    # Same port on both addresses would be needed for a real rebinding; what matters is
    # that the resolver is asked once and the vetted address is the one connected to.
    result = fetch(site.url("/"), need_body=False, **{**FAST, "resolver": rebinding})
    assert result.state == "ok" and result.address == "127.0.0.2"
    assert calls == ["a.test"]
    assert internal.connections == 0


def test_a_name_with_one_internal_address_among_others_is_blocked(site, internal):
    site.routes["/"] = page(200)
    result = fetch(
        site.url("/"), need_body=True, **{**FAST, "resolver": lambda h: ["127.0.0.2", "127.0.0.1"]}
    )
    assert (result.state, result.attempts) == ("blocked", 0)
    assert site.connections == 0 and internal.connections == 0


def test_proxy_settings_in_the_environment_are_ignored(site, other_site, monkeypatch):
    for variable in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(variable, other_site.url("/"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    site.routes["/"] = page(200)
    assert fetch(site.url("/"), need_body=True, **FAST).state == "ok"
    assert other_site.connections == 0


# --- Network failures and caps ----------------------------------------------------------


def test_a_hang_past_the_deadline_is_a_timeout(site):
    site.routes["/hang"] = hang
    started = time.monotonic()
    result = fetch(site.url("/hang"), need_body=True, **{**FAST, "deadline": 0.4})
    elapsed = time.monotonic() - started
    assert (result.state, result.error_class) == ("error", "timeout")
    assert elapsed < 1.0


def kernel_sockets(address: str, port: int) -> list[str]:
    """The states (hex, as in /proc/net/tcp) of the kernel's TCP sockets bound to
    address:port: a socket a process has closed stays listed while the kernel still owes
    its peer something (a FIN_WAIT socket goes on sending what is unacknowledged)."""
    local = f"{socket.htonl(int(ipaddress.IPv4Address(address))):08X}:{port:04X}"
    with open("/proc/net/tcp") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    return [row[3] for row in rows if row[1] == local]


def test_a_request_given_up_on_is_reset_not_left_for_the_kernel_to_deliver():
    # Ended with a FIN, a connection whose request the fetcher gave up on lives on in the
    # kernel, which sends again whatever the peer has not acknowledged: a worker cut off
    # from the network would deliver the request once its link came back, after the
    # batch's claim (and its right to send) had lapsed. Reset, nothing of it is left.
    def get(port: int) -> str:
        url = f"http://a.test:{port}/"
        result = fetch(url, need_body=True, retries=0, **{**FAST, "deadline": 0.3})
        return result.error_class

    request, left = left_in_the_kernel(get)
    assert request.startswith(b"GET / HTTP/1.1")
    assert left == []


def left_in_the_kernel(send: Callable[[int], str]) -> tuple[bytes, list[str]]:
    """`send(port)` to a listener on 127.0.0.2 that takes the request and never answers,
    which must end in a timeout: (the request as received, the states of the client's
    sockets still in the kernel once `send` has returned)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.2", 0))
        listener.listen(1)
        assert send(listener.getsockname()[1]) == "timeout"
        connection, (client_address, client_port) = listener.accept()
        with connection:
            return connection.recv(65536), kernel_sockets(client_address, client_port)


def test_a_slow_drip_body_cannot_outlive_the_deadline(site):
    # One byte every 20 ms: each read succeeds well within any per-read timeout.
    site.routes["/drip"] = stream(10_000, content_length=False, chunk=b"x", pause=0.02)
    started = time.monotonic()
    result = fetch(site.url("/drip"), need_body=True, **{**FAST, "deadline": 0.5})
    elapsed = time.monotonic() - started
    assert (result.state, result.error_class) == ("error", "timeout")
    assert elapsed < 1.0
    assert site.sent["/drip"] < 100


def test_a_reset_connection_is_retried_then_an_error(site):
    site.routes["/reset"] = reset
    result = fetch(site.url("/reset"), need_body=True, retries=2, **FAST)
    assert (result.state, result.error_class, result.attempts) == ("error", "reset", 3)


def test_a_closed_connection_without_answer_is_a_reset(site):
    site.routes["/close"] = lambda handler: handler.connection.shutdown(socket.SHUT_RDWR)
    result = fetch(site.url("/close"), need_body=True, retries=0, **FAST)
    assert (result.state, result.error_class) == ("error", "reset")


def test_a_refused_connection_is_an_error_and_not_retried():
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.2", 0))
        port = probe.getsockname()[1]
    result = fetch(f"http://a.test:{port}/", need_body=True, **FAST)
    assert (result.state, result.error_class, result.attempts) == ("error", "refused", 1)


def test_an_unknown_name_is_a_dns_error():
    result = fetch("http://nowhere.test/", need_body=True, **FAST)
    assert (result.state, result.error_class, result.attempts) == ("error", "dns", 0)


@pytest.mark.parametrize("content_length", [True, False])
def test_a_20_mb_body_is_too_large_and_not_downloaded(site, content_length):
    site.routes["/big"] = stream(20_000_000, content_length=content_length)
    result = fetch(site.url("/big"), need_body=True, max_body=2_000_000, **FAST)
    assert (result.state, result.status, result.error_class) == ("error", 200, "body_too_large")
    # Stopped at the cap (plus what the socket buffers took), far from 20 MB.
    assert site.sent["/big"] < 10_000_000


def test_a_gzip_bomb_is_cut_off_after_max_body_decoded_bytes(site):
    bomb = gzip.compress(b"<html><body>" + b" " * 100_000_000, compresslevel=9)
    assert len(bomb) < 200_000
    site.routes["/bomb"] = page(200, bomb, Content_Encoding="gzip")
    tracemalloc.start()
    try:
        result = fetch(site.url("/bomb"), need_body=True, max_body=1_000_000, **FAST)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (result.state, result.error_class) == ("error", "body_too_large")
    assert peak < 20_000_000


def test_a_small_gzip_body_is_decoded(site):
    site.routes["/gz"] = page(
        200, gzip.compress(title_page("Zipped").encode()), Content_Encoding="gzip"
    )
    result = fetch(site.url("/gz"), need_body=True, **FAST)
    assert (result.state, result.title) == ("ok", "Zipped")


# --- Content types and claims -----------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "body", "title", "text"),
    [
        ("text/plain", title_page("Sniffed", "It is 2.5x faster"), "Sniffed", "It is 2.5x faster"),
        ("", title_page("No type", "hello"), "No type", "hello"),
        ("application/octet-stream", title_page("Binary?", "hi"), "Binary?", "hi"),
        (
            "text/plain; charset=latin-1",
            "Caf\xe9  au\nlait".encode("latin-1"),
            None,
            "Café au lait",
        ),
        ("application/json", '{"speed": "2.5x"}', None, None),
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00", None, None),
        ("text/html", b"\x89PNG\r\n\x1a\n\x00\x00\x00", None, None),
    ],
)
def test_wrong_and_unusual_content_types(site, content_type, body, title, text):
    site.routes["/doc"] = page(200, body, content_type)
    result = fetch(site.url("/doc"), need_body=True, **FAST)
    assert (result.state, result.title, result.text) == ("ok", title, text)
    assert result.fingerprint  # binary bodies are fingerprinted by their bytes


def test_claim_phrase_found_or_not_on_the_fetched_page(site):
    site.routes["/with"] = page(200, title_page("News", "Opus is 2.5&times;&nbsp;faster."))
    site.routes["/without"] = page(200, title_page("News", "Opus is somewhat faster."))
    with_phrase = fetch(site.url("/with"), need_body=True, **FAST)
    without = fetch(site.url("/without"), need_body=True, **FAST)
    phrase = "2.5 times faster"
    assert verdict(with_phrase.text, phrase, None, with_phrase.fingerprint) == "supported"
    assert verdict(without.text, phrase, None, without.fingerprint) == "not_found"
    confirmed = with_phrase.fingerprint
    assert verdict(with_phrase.text, phrase, confirmed, with_phrase.fingerprint) == "supported"
    site.routes["/with"] = page(200, title_page("News", "Opus is 2.5× faster, they said."))
    changed = fetch(site.url("/with"), need_body=True, **FAST)
    assert verdict(changed.text, phrase, confirmed, changed.fingerprint) == "changed"


# --- TLS: connect to the vetted address, verify the name ---------------------------------


@pytest.fixture
def tls_site(make_server):
    authority = trustme.CA()
    server = make_server("127.0.0.2", "secure.test")
    seen_sni: list[str | None] = []
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("secure.test").configure_cert(server_context)
    server_context.sni_callback = lambda sock, name, ctx: seen_sni.append(name)
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    client_context = ssl.create_default_context()
    authority.configure_trust(client_context)
    server.routes["/"] = page(200, title_page("Secure"))
    return server, client_context, seen_sni


def test_https_connects_to_the_vetted_address_and_verifies_the_name(tls_site):
    server, client_context, seen_sni = tls_site
    hosts = {"secure.test": ["127.0.0.2"]}
    result = fetch(
        f"https://secure.test:{server.port}/",
        need_body=True,
        ssl_context=client_context,
        **{**FAST, "resolver": hosts.__getitem__},
    )
    assert (result.state, result.title, result.address) == ("ok", "Secure", "127.0.0.2")
    assert seen_sni == ["secure.test"]
    assert server.requests[0][2]["Host"] == f"secure.test:{server.port}"


def test_https_with_a_certificate_for_another_name_is_a_tls_error(tls_site):
    server, client_context, _ = tls_site
    hosts = {"wrong.test": ["127.0.0.2"]}
    result = fetch(
        f"https://wrong.test:{server.port}/",
        need_body=False,
        ssl_context=client_context,
        **{**FAST, "resolver": hosts.__getitem__},
    )
    assert (result.state, result.error_class) == ("error", "tls")
    assert result.attempts == 1  # neither retried nor repeated with GET
    assert server.requests == []


def test_https_with_an_untrusted_certificate_is_a_tls_error(tls_site):
    server, _, _ = tls_site
    hosts = {"secure.test": ["127.0.0.2"]}
    result = fetch(
        f"https://secure.test:{server.port}/",
        need_body=True,
        **{**FAST, "resolver": hosts.__getitem__},
    )
    assert (result.state, result.error_class) == ("error", "tls")


# --- Many URLs at once ------------------------------------------------------------------


def crowd_sensitive(limit: int):
    """A route that answers 429 when more than `limit` requests are in flight at once."""
    state = {"in_flight": 0, "peak": 0}
    lock = threading.Lock()

    def route(handler):
        with lock:
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
            crowded = state["in_flight"] > limit
        time.sleep(0.03)
        with lock:  # counted out before answering, so the next request never overlaps it
            state["in_flight"] -= 1
        send(handler, 429 if crowded else 200, b"<title>ok</title>")

    return route, state


def test_check_many_never_exceeds_two_requests_per_host(site, other_site):
    route, state = crowd_sensitive(2)
    for number in range(12):
        site.routes[f"/page{number}"] = route
        other_site.routes[f"/page{number}"] = page(200)
    urls = {site.url(f"/page{n}"): n % 2 == 0 for n in range(12)}
    urls |= {other_site.url(f"/page{n}"): False for n in range(12)}
    results = check_many(urls, max_in_flight=8, per_host=2, retries=0, **FAST)
    assert {result.state for result in results.values()} == {"ok"}
    assert set(results) == set(urls)
    assert state["peak"] == 2  # in parallel, but two at a time, never three


def test_the_crowd_sensitive_host_does_push_back_without_the_limit(site):
    route, state = crowd_sensitive(2)
    for number in range(12):
        site.routes[f"/page{number}"] = route
    urls = {site.url(f"/page{n}"): True for n in range(12)}
    results = check_many(urls, max_in_flight=12, per_host=12, retries=0, **FAST)
    assert state["peak"] > 2
    assert "unverifiable" in {result.state for result in results.values()}


def test_check_many_reports_each_result_and_merges_duplicates(site):
    site.routes["/a"] = page(200, title_page("A"))
    site.routes["/b"] = page(404)
    seen: list[tuple[str, CheckResult]] = []
    pairs = [(site.url("/a"), False), (site.url("/a"), True), (site.url("/b"), False)]
    results = check_many(pairs, on_result=lambda url, result: seen.append((url, result)), **FAST)
    assert {url: result.state for url, result in results.items()} == {
        site.url("/a"): "ok",
        site.url("/b"): "broken",
    }
    assert results[site.url("/a")].title == "A"  # fetched once, with its body
    assert site.hits["/a"] == 1
    assert sorted(url for url, _ in seen) == sorted(results)


def test_check_many_records_a_checker_bug_instead_of_raising(site):
    def broken_resolver(host):
        raise RuntimeError("bug")

    results = check_many({site.url("/"): True}, **{**FAST, "resolver": broken_resolver})
    result = results[site.url("/")]
    assert (result.state, result.error_class) == ("error", "internal")


def test_a_host_that_pushes_back_is_slowed_down_for_everyone_not_paused(site):
    limiter = InProcessHostLimiter(per_host=2)
    site.routes["/busy"] = sequence(page(503, Retry_After="1"), page(200))
    site.routes["/other"] = page(200)
    result = fetch(site.url("/busy"), need_body=True, retries=0, limiter=limiter, **FAST)
    assert result.state == "broken"
    assert limiter.limit("a.test") == 1  # halved, for every fetch sharing the limiter
    assert limiter.wait_time("a.test") == 0.0
    assert limiter.limit("b.test") == 2


def test_in_process_limiter_counts_slots_and_pauses():
    now = [0.0]
    limiter = InProcessHostLimiter(per_host=2, clock=lambda: now[0])
    assert limiter.acquire("a", timeout=0) and limiter.acquire("a", timeout=0)
    assert not limiter.acquire("a", timeout=0)
    assert limiter.acquire("b", timeout=0)
    limiter.release("a")
    assert limiter.in_flight("a") == 1 and limiter.acquire("a", timeout=0)
    limiter.release("a")
    limiter.release("a")
    limiter.pause("a", 5)
    assert limiter.wait_time("a") == 5 and not limiter.acquire("a", timeout=0)
    now[0] = 5.0
    assert limiter.wait_time("a") == 0 and limiter.acquire("a", timeout=0)
    with pytest.raises(ValueError, match="per_host must be at least 1"):
        InProcessHostLimiter(per_host=0)


def test_a_503_asking_for_an_hour_does_not_pause_its_host(site):
    limiter = InProcessHostLimiter(per_host=2)
    site.routes["/busy"] = page(503, Retry_After="3600")
    fetch(site.url("/busy"), need_body=True, retries=0, limiter=limiter, **FAST)
    assert limiter.wait_time("a.test") == 0.0
    assert limiter.limit("a.test") == 1


def test_check_many_goes_on_with_a_host_that_pushed_back(site):
    site.routes["/busy"] = page(503)
    site.routes["/later"] = page(200)
    options = {**FAST, "backoff": 0.3, "max_backoff": 0.3}
    results = check_many(
        {site.url("/busy"): True, site.url("/later"): True}, per_host=1, retries=0, **options
    )
    assert results[site.url("/busy")].state == "broken"
    assert results[site.url("/later")].state == "ok"
    busy_at, later_at = site.request_times
    assert later_at - busy_at < 0.2  # no pause: the next URL goes at once, one at a time


def test_a_fetch_waiting_to_retry_gives_its_place_to_fresh_work(site):
    # One place per host. /flaky fails with a 500 and waits 0.5 s before its retry; the
    # other pages of the host are fetched during that wait, not after it.
    site.routes["/flaky"] = sequence(page(500), page(200, title_page("Back")))
    for n in range(3):
        site.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))
    urls = [site.url("/flaky"), *(site.url(f"/p{n}") for n in range(3))]
    options = {**FAST, "backoff": 0.5, "max_backoff": 0.5, "rng": lambda: 1.0}
    results = check_many(dict.fromkeys(urls, False), per_host=1, retries=1, **options)
    assert {result.state for result in results.values()} == {"ok"}
    order = [path for _method, path, _headers in site.requests]
    assert order[0] == "/flaky" and order[-1] == "/flaky"  # the retry came last
    assert sorted(order[1:-1]) == ["/p0", "/p1", "/p2"]


def test_slow_work_on_each_result_never_leaves_a_place_idle(site):
    # The caller records each result (a database write in production) while the fetches
    # go on: all eight requests are sent before the slow caller has handled two results.
    for n in range(8):
        site.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))
    handled = []

    def slow_record(url, result):
        time.sleep(0.25)
        handled.append(url)

    started = time.monotonic()
    results = check_many(
        {site.url(f"/p{n}"): False for n in range(8)}, per_host=2, on_result=slow_record, **FAST
    )
    assert len(results) == len(handled) == 8
    assert site.request_times[-1] - started < 0.5


def test_a_failing_caller_stops_the_batch_and_sees_its_error(site):
    for n in range(20):
        site.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))

    def broken_record(url, result):
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError, match="database went away"):
        check_many(
            {site.url(f"/p{n}"): False for n in range(20)},
            per_host=1,
            on_result=broken_record,
            **FAST,
        )
    assert len(site.requests) < 20  # nothing new started after the failure


class NoSlots:
    """A shared limiter that cannot be reached: no slot is ever given."""

    def acquire(self, host, *, timeout=None):
        return False

    def release(self, host):
        pass

    def pause(self, host, seconds):
        pass

    def wait_time(self, host):
        return 0.0

    def slow_down(self, host):
        pass

    def speed_up(self, host):
        pass

    def limit(self, host):
        return 2


def test_a_host_that_gets_no_slot_is_not_tried_url_after_url(site):
    for n in range(10):
        site.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))
    urls = {site.url(f"/p{n}"): False for n in range(10)}
    results = check_many(urls, per_host=2, host_limiter=NoSlots(), **FAST)
    # The first two (one per place) waited and got none; the other eight were not started.
    assert len(results) == 2
    assert {r.error_class for r in results.values()} == {"no_slot"}
    assert site.requests == []


class SlotAtTheDeadline(NoSlots):
    """A slot comes free only as the fetch's deadline runs out (another worker's batch
    held it, say)."""

    def acquire(self, host, *, timeout=None):
        time.sleep(timeout or 0)
        return True


def test_a_slot_that_comes_too_late_for_a_request_is_not_a_timeout_of_the_site(site):
    """Nothing was sent, so nothing is known of the site: the URL is left for a later
    attempt rather than recorded as a site that timed out."""
    site.routes["/a"] = page(200, title_page("A"))
    options = {**FAST, "deadline": 0.3, "timeout": 0.3}
    results = check_many(
        {site.url("/a"): False}, per_host=1, host_limiter=SlotAtTheDeadline(), **options
    )
    result = results[site.url("/a")]
    assert batch.not_started(result), (result.error_class, result.attempts, result.error)
    assert site.requests == []


class SlotAfter(NoSlots):
    """A slot comes free after `seconds`."""

    def __init__(self, seconds):
        self.seconds = seconds

    def acquire(self, host, *, timeout=None):
        time.sleep(self.seconds)
        return True


@pytest.mark.parametrize("limiter", [SlotAfter(0.3), None], ids=["slot-late", "no-limiter"])
def test_no_request_is_sent_once_send_until_has_passed(site, limiter):
    """A batch's claim on its URLs ends at `send_until`: after that another batch may hold
    them, so nothing more is sent (the URL is left, not started, for whoever holds it)."""
    site.routes["/a"] = page(200, title_page("A"))
    send_until = time.monotonic() + (0.1 if limiter else -1.0)
    results = check_many(
        {site.url("/a"): False}, per_host=1, host_limiter=limiter, send_until=send_until, **FAST
    )
    result = results[site.url("/a")]
    assert batch.not_started(result), (result.error_class, result.attempts, result.error)
    assert site.requests == []


def test_a_caller_that_cannot_keep_up_stops_new_fetches(site):
    for n in range(60):
        site.routes[f"/p{n}"] = page(200, title_page(f"P{n}"))
    blocked = threading.Event()

    def stuck_then_fine(url, result):
        if not blocked.is_set():
            blocked.set()
            time.sleep(1.0)  # the database is unreachable for a second

    started = time.monotonic()
    results = check_many(
        {site.url(f"/p{n}"): False for n in range(60)},
        per_host=8,
        on_result=stuck_then_fine,
        **FAST,
    )
    assert len(results) == 60  # all done once the caller caught up
    during = [at for at in site.request_times if at - started < 0.9]
    assert len(during) <= batch.BACKLOG + 8 + 1  # waiting results, places, the first


def test_check_many_starts_nothing_new_after_its_time_budget(site):
    site.routes["/hang"] = hang
    urls = {site.url("/hang"): True, site.url("/next"): True, site.url("/last"): True}
    started = time.monotonic()
    results = check_many(urls, per_host=1, time_budget=0.1, **{**FAST, "deadline": 0.3})
    assert list(results) == [site.url("/hang")]  # the others are left for the caller
    assert results[site.url("/hang")].error_class == "timeout"
    assert time.monotonic() - started < 1.0
