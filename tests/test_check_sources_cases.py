"""`check_sources --urls` over every server behaviour a cited site can show, in one command run.

Loopback servers on 127.0.0.2-7 (allowed through FETCH_ALLOWED_NETWORKS) serve every case;
127.0.0.1 plays the internal address and counts every connection it gets, which must be
none. One URL file, one claims file, one call of the command (the workers' code path via
`checking.run_checks`), then every URL's row of the JSON report is compared whole (state,
status, final_url, title, error_class, claim) and the servers' own records (methods, hits,
request times, bytes sent, requests in flight) show how each answer was reached.

The slow cases (a hang, a slow drip) live on their own host, and so do the hosts that push
back (429/503 pause the whole host), so that none of them eats another case's deadline.
"""

import gzip
import json
import threading
import time
import uuid

import pytest
from django.core.management import call_command

from summaries.checking import limiter as checking_limiter
from summaries.checking.limiter import RedisHostLimiter, get_host_limiter
from tests.pdf_files import make_pdf
from tests.test_checking import url
from tests.test_linkcheck_fetch import (  # noqa: F401 - make_server is a fixture
    by_method,
    hang,
    make_server,
    page,
    redirect,
    reset,
    send,
    sequence,
    stream,
    title_page,
)

pytestmark = pytest.mark.django_db

DEADLINE = 3.0
MAX_BODY = 2_000_000
PAPER = make_pdf(
    [["Opus 4.5 is 2.5\u00d7 faster than its prede-", "cessor."]], title="A study of speed"
)
BIG_PAGE_HEAD = b"<html><head><title>Big page</title></head><body><p>"


@pytest.fixture(autouse=True)
def fetch_settings(settings):
    # 127.0.0.2-3 and 127.0.0.4-7 are allowed (any port); 127.0.0.1 stays refused.
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31", "127.0.0.4/30"]
    settings.FETCH_DEADLINE = DEADLINE
    settings.FETCH_PER_HOST = 2
    settings.FETCH_MAX_BODY = MAX_BODY
    return settings


@pytest.fixture(autouse=True)
def fresh_limiter(fetch_settings, monkeypatch):
    """A limiter of our own: no slot or pause left by another test (or process) applies."""
    limiter = get_host_limiter(2)
    if isinstance(limiter, RedisHostLimiter):  # the Redis run: keys nobody else uses
        limiter.prefix = f"curation:linkcheck:test:{uuid.uuid4().hex}"
    monkeypatch.setattr(checking_limiter, "_limiter", limiter)
    return limiter


def crowded_host(limit: int, hold: float):
    """A route answering 429 when more than `limit` requests are in flight on the host.

    A request is counted out before its answer is sent, so the server only ever counts
    requests whose client still holds its slot: a count over `limit` means the checker
    really had more than `limit` requests in flight.
    """
    state = {"in_flight": 0, "peak": 0, "refused": 0}
    lock = threading.Lock()

    def route(handler):
        with lock:
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
            crowded = state["in_flight"] > limit
            state["refused"] += crowded
        time.sleep(hold)
        with lock:
            state["in_flight"] -= 1
        if crowded:
            send(handler, 429, b"slow down", Retry_After="1")
        else:
            send(handler, 200, title_page("Calm").encode())

    return route, state


def row(
    state, status, final_url, title=None, error_class=None, claim=None, description=None
) -> dict:
    return {
        "state": state,
        "status": status,
        "final_url": final_url,
        "title": title,
        "description": description,
        "error_class": error_class,
        "claim": claim,
    }


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


def test_every_case_is_classified_and_the_internal_address_is_never_touched(
    make_server,  # noqa: F811
    tmp_path,
):
    a = make_server("127.0.0.2", "a")  # quick pages, redirects, content types, claims
    b = make_server("127.0.0.3", "b")  # cross-host targets, 500, reset
    c = make_server("127.0.0.4", "c")  # 429 when more than 2 requests are in flight
    d = make_server("127.0.0.5", "d")  # 429 with Retry-After, then 200; 503, then 200
    e = make_server("127.0.0.6", "e")  # hang, slow drip, 20 MB bodies
    f = make_server("127.0.0.7", "f")  # 429 every time (a bot wall)
    internal = make_server("127.0.0.1", "internal")
    internal.routes["/secret"] = page(body=title_page("Secret"))
    internal.routes["/direct"] = page(body=title_page("Secret"))

    ip = internal.port
    a.routes.update(
        {
            "/ok": page(body=title_page("Fast &amp; sure", "Opus is 2.5&times; faster.")),
            "/titled": page(body=title_page("Titled")),
            "/described": page(
                body='<html><head><title>Described</title><meta name="description" '
                'content="What the page is about."></head><body><p>Text</p></body></html>'
            ),
            "/paper.pdf": page(body=PAPER, content_type="application/pdf"),
            "/claimed.pdf": page(body=PAPER, content_type="application/pdf"),
            "/gone": page(410, title_page("Gone")),
            # 301 with a relative Location, then 301 to another host.
            "/m301": redirect(301, "m301b"),
            "/m301b": redirect(301, url(b, "/final")),
            "/m308": redirect(308, "/landing"),
            "/landing": page(body=title_page("Landing")),
            # 302 to another host, then 307 with a relative Location there.
            "/t302": redirect(302, url(b, "/t307")),
            # A permanent move to a page that then moves temporarily.
            "/mixed": redirect(301, "/t302"),
            "/loop": redirect(302, url(b, "/back")),
            "/to-internal": redirect(302, f"http://127.0.0.1:{ip}/secret"),
            "/to-localhost": redirect(302, f"http://localhost:{ip}/secret"),
            "/to-mapped": redirect(307, f"http://[::ffff:127.0.0.1]:{ip}/secret"),
            "/to-decimal": redirect(301, f"http://2130706433:{ip}/secret"),
            "/head405": by_method(HEAD=page(405), GET=page(body=title_page("Head 405"))),
            "/head403": by_method(HEAD=page(403), GET=page(body=title_page("Head 403"))),
            "/wall403": page(403, title_page("Forbidden")),
            "/challenge": page(body=title_page("Just a moment...", "2.5 times faster")),
            "/as-plain": page(
                body=title_page("Sniffed", "It is 2.5x faster"), content_type="text/plain"
            ),
            "/as-octet": page(
                body=title_page("Octets", "It is 2.5 times faster"),
                content_type="application/octet-stream",
            ),
            "/png": page(body=b"\x89PNG\r\n\x1a\n\x00\x00 2.5x", content_type="image/png"),
            "/png-as-html": page(body=b"\x89PNG\r\n\x1a\n\x00\x00 2.5x", content_type="text/html"),
            "/without": page(body=title_page("News", "Opus is somewhat faster.")),
            "/bomb": page(
                body=gzip.compress(b"<html><body>" + b" " * 20_000_000), Content_Encoding="gzip"
            ),
        }
    )
    for hop in range(12):
        a.routes[f"/hop{hop}"] = redirect(302, f"hop{hop + 1}")
    b.routes.update(
        {
            "/final": page(body=title_page("Final", "The final answer is 42.")),
            "/t307": redirect(307, "final"),
            "/back": redirect(302, url(a, "/loop")),
            "/error": page(500, title_page("Oops")),
            "/reset": reset,
        }
    )
    calm, crowd = crowded_host(limit=2, hold=0.3)
    for n in range(6):
        c.routes[f"/s{n}"] = calm
    ra_times: list[float] = []

    def retry_after(handler):
        ra_times.append(time.monotonic())  # measured by the server, on arrival
        if len(ra_times) == 1:
            send(handler, 429, b"", Retry_After="1")
        else:
            send(handler, 200, title_page("Recovered", "Served after the wait.").encode())

    d.routes["/ra429"] = retry_after
    d.routes["/flaky"] = sequence(page(503), page(body=title_page("Back", "Back in business.")))
    e.routes.update(
        {
            "/big": stream(20_000_000, content_length=True),
            "/big-stream": stream(20_000_000, content_length=False),
            # No claim: the head is read (the title), the 20 MB after it are not.
            "/big-page": stream(20_000_000, content_length=True, head=BIG_PAGE_HEAD),
            "/hang": hang,
            # One byte every 50 ms for 10 s: every read is quick, only the deadline ends it.
            "/drip": stream(200, content_length=False, chunk=b"x", pause=0.05),
        }
    )
    f.routes["/wall429"] = page(429, Retry_After="1")

    A = {path: url(a, path) for path in [*a.routes, "/missing"]}
    B = {path: url(b, path) for path in b.routes}
    hop = {n: url(a, f"/hop{n}") for n in range(12)}
    expected = {
        # 200 with a title: the title is read with the body (needed for the claim).
        A["/ok"]: row("ok", 200, A["/ok"], "Fast & sure", claim="supported"),
        # Without a claim one GET, read to the end of the head: the title and description.
        A["/titled"]: row("ok", 200, A["/titled"], "Titled"),
        A["/described"]: row(
            "ok", 200, A["/described"], "Described", description="What the page is about."
        ),
        url(e, "/big-page"): row("ok", 200, url(e, "/big-page"), "Big page"),
        # PDFs: the title from the metadata, the claim from the text.
        A["/paper.pdf"]: row("ok", 200, A["/paper.pdf"], "A study of speed"),
        A["/claimed.pdf"]: row("ok", 200, A["/claimed.pdf"], "A study of speed", claim="supported"),
        A["/missing"]: row("broken", 404, A["/missing"], error_class="http"),
        A["/gone"]: row("broken", 410, A["/gone"], error_class="http", claim="unavailable"),
        B["/error"]: row("broken", 500, B["/error"], error_class="http"),
        url(d, "/flaky"): row("ok", 200, url(d, "/flaky"), "Back", claim="supported"),
        url(d, "/ra429"): row("ok", 200, url(d, "/ra429"), "Recovered", claim="supported"),
        **{url(c, f"/s{n}"): row("ok", 200, url(c, f"/s{n}"), "Calm") for n in range(6)},
        # Permanent moves elsewhere: the link should be updated.
        A["/m301"]: row("redirected", 200, B["/final"], "Final", claim="supported"),
        A["/m308"]: row("redirected", 200, A["/landing"], "Landing"),
        # Temporary moves leave the link right.
        A["/t302"]: row("ok", 200, B["/final"], "Final"),
        A["/mixed"]: row("redirected", 200, B["/final"], "Final"),
        A["/loop"]: row("broken", 302, A["/loop"], error_class="redirect_loop"),
        hop[0]: row("broken", 302, hop[10], error_class="too_many_redirects"),
        # Redirects to the internal address, however spelled, and the address itself.
        A["/to-internal"]: row(
            "blocked", 302, f"http://127.0.0.1:{ip}/secret", error_class="blocked"
        ),
        A["/to-localhost"]: row(
            "blocked", 302, f"http://localhost:{ip}/secret", error_class="blocked"
        ),
        A["/to-mapped"]: row(
            "blocked", 307, f"http://[::ffff:127.0.0.1]:{ip}/secret", error_class="blocked"
        ),
        A["/to-decimal"]: row(
            "blocked", 301, f"http://2130706433:{ip}/secret", error_class="blocked"
        ),
        url(internal, "/direct"): row("blocked", None, url(internal, "/direct"), None, "blocked"),
        url(e, "/hang"): row("error", None, url(e, "/hang"), error_class="timeout"),
        B["/reset"]: row("error", None, B["/reset"], error_class="reset"),
        url(e, "/big"): row(
            "error", 200, url(e, "/big"), error_class="body_too_large", claim="unavailable"
        ),
        url(e, "/big-stream"): row(
            "error", 200, url(e, "/big-stream"), error_class="body_too_large", claim="unavailable"
        ),
        A["/bomb"]: row(
            "error", 200, A["/bomb"], error_class="body_too_large", claim="unavailable"
        ),
        url(e, "/drip"): row(
            "error", None, url(e, "/drip"), error_class="timeout", claim="unavailable"
        ),
        A["/head405"]: row("ok", 200, A["/head405"], "Head 405"),
        A["/head403"]: row("ok", 200, A["/head403"], "Head 403"),
        # Bot walls are unverifiable, not broken.
        A["/wall403"]: row("unverifiable", 403, A["/wall403"], error_class="http"),
        url(f, "/wall429"): row("unverifiable", 429, url(f, "/wall429"), error_class="http"),
        A["/challenge"]: row(
            "unverifiable",
            200,
            A["/challenge"],
            "Just a moment...",
            "http",
            claim="unavailable",
        ),
        # Wrong content types: HTML served as text/plain or octets is still read as HTML;
        # an image (whatever its label) has no text to find a phrase in.
        A["/as-plain"]: row("ok", 200, A["/as-plain"], "Sniffed", claim="supported"),
        A["/as-octet"]: row("ok", 200, A["/as-octet"], "Octets", claim="supported"),
        A["/png"]: row("ok", 200, A["/png"], claim="unavailable"),
        A["/png-as-html"]: row("ok", 200, A["/png-as-html"], claim="unavailable"),
        # Pages with and without the claim phrase.
        A["/without"]: row("ok", 200, A["/without"], "News", claim="not_found"),
    }
    claims = {
        A["/ok"]: "2.5 times faster",  # the page says "2.5&times;"
        A["/gone"]: "anything",
        A["/m301"]: "final answer",
        A["/challenge"]: "2.5 times faster",
        A["/as-plain"]: "2.5x faster",
        A["/as-octet"]: "2.5× faster",
        A["/claimed.pdf"]: "2.5 times faster than its predecessor",
        A["/png"]: "2.5x",
        A["/png-as-html"]: "2.5x",
        A["/without"]: "2.5 times faster",
        url(d, "/flaky"): "back in business",
        url(d, "/ra429"): "after the wait",
        A["/bomb"]: "anything",  # a phrase makes the checker read the body
        url(e, "/big"): "anything",
        url(e, "/big-stream"): "anything",
        url(e, "/drip"): "anything",
    }
    # The big bodies first on their host, so that the hang and the drip run side by side.
    urls = sorted(expected, key=lambda link: link in (url(e, "/hang"), url(e, "/drip")))
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    (tmp_path / "claims.json").write_text(json.dumps(claims))
    out = tmp_path / "report.json"

    started = time.monotonic()
    call_command(
        "check_sources",
        urls=str(tmp_path / "urls.txt"),
        claims=str(tmp_path / "claims.json"),
        json=str(out),
    )
    elapsed = time.monotonic() - started
    report = json.loads(out.read_text())

    assert list(report) == urls
    wrong = {link: report[link] for link in urls if report[link] != expected[link]}
    assert wrong == {}, {link: expected[link] for link in wrong}

    # The internal address: not one connection, whatever the spelling or the route to it.
    assert internal.connections == 0 and sum(internal.hits.values()) == 0

    # One GET per URL (no HEAD), with or without a claim; servers that answer HEAD wrongly
    # are never asked with it.
    assert a.methods("/titled") == a.methods("/ok") == a.methods("/paper.pdf") == ["GET"]
    assert a.methods("/head405") == a.methods("/head403") == ["GET"]
    # 404, 410 and 403 are never retried; 500 and resets are.
    assert a.methods("/missing") == a.methods("/wall403") == ["GET"]
    assert a.methods("/gone") == a.methods("/challenge") == ["GET"]
    assert set(b.methods("/error")) == {"GET"} and len(b.methods("/error")) >= 3
    assert b.hits["/reset"] >= 3
    assert d.methods("/flaky") == ["GET", "GET"]  # 503, retried: 200

    # 429 with Retry-After: 1: retried once, and not before the second had passed (the
    # first back-off alone would be at most 0.5 s).
    assert d.methods("/ra429") == ["GET", "GET"]
    assert len(ra_times) == 2 and gaps(ra_times)[0] >= 1.0
    # A 429 every time: a GET and its retries, a second apart; then the deadline.
    assert f.methods("/wall429")[:2] == ["GET", "GET"]
    assert min(gaps(f.request_times)) >= 1.0

    # The crowded host: two at a time (in parallel), never three, so never a 429.
    assert crowd == {"in_flight": 0, "peak": 2, "refused": 0}
    assert sum(c.hits.values()) == 6

    # Redirects: every hop fetched once; the loop stopped when it came back; the eleventh
    # redirect was not followed.
    assert a.hits["/loop"] == 1 and b.hits["/back"] == 1
    assert a.hits["/hop10"] == 1 and a.hits["/hop11"] == 0
    assert a.methods("/m301") == a.methods("/m301b") == ["GET"]
    assert b.methods("/t307") == ["GET", "GET"]  # from /t302 and through /mixed

    # Caps: the 20 MB bodies were not downloaded; the drip was cut at the deadline.
    assert e.sent["/big"] < MAX_BODY and e.sent["/big-stream"] < 5 * MAX_BODY
    assert e.sent["/big-page"] < MAX_BODY
    assert e.hits["/hang"] == 1
    assert e.sent["/drip"] <= DEADLINE / 0.05 + 5  # ~60 of its 200 bytes
    # Hosts ran side by side: about one deadline for the slowest (hang and drip).
    assert elapsed < 3 * DEADLINE
