"""`check_sources --urls` over every server behaviour of issue 6 §9, in one command run.

One URL file, one claims file, one call of the command (the workers' code path), then every
URL's verdict in the JSON report is checked, and the internal server's hit counter is zero.
"""

import json
import threading
import time

import pytest
from django.core.management import call_command

from tests.test_checking import url
from tests.test_linkcheck_fetch import (  # noqa: F401 - make_server is a fixture
    by_method,
    hang,
    make_server,  # noqa: F811
    page,
    redirect,
    reset,
    send,
    sequence,
    stream,
    title_page,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fetch_settings(settings):
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]  # 127.0.0.2 and .3, never .1
    settings.FETCH_DEADLINE = 2.0
    settings.FETCH_PER_HOST = 2


@pytest.fixture
def servers(make_server):  # noqa: F811
    """Two allowed hosts and 127.0.0.1, which must never be fetched."""
    return (
        make_server("127.0.0.2", "a.test"),
        make_server("127.0.0.3", "b.test"),
        make_server("127.0.0.1", "internal.test"),
    )


def strict(server, *, limit: int = 2):
    """A route answering 429 when more than `limit` requests are in flight on the host."""
    state = {"in_flight": 0, "refused": 0}
    lock = threading.Lock()

    def route(handler):
        with lock:
            state["in_flight"] += 1
            busy = state["in_flight"] > limit
            if busy:
                state["refused"] += 1
        try:
            if busy:
                send(handler, 429, b"slow down", Retry_After="1")
            else:
                time.sleep(0.2)
                send(handler, 200, title_page("Strict", "fine").encode())
        finally:
            with lock:
                state["in_flight"] -= 1

    return route, state


def retry_after_route(times: list[float]):
    def route(handler):
        times.append(time.monotonic())
        if len(times) == 1:
            send(handler, 429, b"", Retry_After="1")
        else:
            send(handler, 200, title_page("Recovered").encode())

    return route


def test_every_case_is_classified_and_the_internal_address_is_never_fetched(servers, tmp_path):
    a, b, internal = servers
    retry_times: list[float] = []
    strict_route, strict_state = strict(b)
    routes = {
        "/ok": page(body=title_page("Fast &amp; sure", "Opus is 2.5× faster.")),
        "/gone": page(410),
        "/error": page(500),
        "/flaky": sequence(page(503), page(body=title_page("Back"))),
        "/ra429": retry_after_route(retry_times),
        "/p301": redirect(301, "p301b"),  # relative
        "/p301b": redirect(301, url(b, "/final")),  # cross-host
        "/p308": redirect(308, "/ok"),
        "/t302": redirect(302, "/t307"),
        "/t307": redirect(307, "/ok"),
        "/loop": redirect(302, url(b, "/back")),
        "/internal": redirect(302, url(internal, "/secret")),
        "/hang": hang,
        "/reset": reset,
        "/big": stream(20_000_000, content_length=True),
        "/drip": stream(10_000, content_length=False, chunk=b"x", pause=0.05),
        "/head405": by_method(HEAD=page(405), GET=page(body=title_page("Head 405"))),
        "/head403": by_method(HEAD=page(403), GET=page(body=title_page("Head 403"))),
        "/plain": page(body=title_page("Sniffed", "It is 2.5x faster"), content_type="text/plain"),
        "/png": page(body=b"\x89PNG\r\n\x1a\n\x00\x00", content_type="image/png"),
        "/without": page(body=title_page("News", "Opus is somewhat faster.")),
    }
    a.routes.update(routes)
    b.routes["/final"] = page(body=title_page("Final"))
    b.routes["/back"] = redirect(302, url(a, "/loop"))
    for n in range(4):
        b.routes[f"/strict{n}"] = strict_route
    internal.routes["/secret"] = page(body=title_page("Secret"))

    paths = ["/missing", *routes]
    urls = [url(a, p) for p in paths] + [url(b, f"/strict{n}") for n in range(4)]
    u = {p: url(a, p) for p in paths}
    claims = {
        u["/ok"]: "2.5 times faster",
        u["/plain"]: "2.5x faster",
        u["/without"]: "2.5 times faster",
        u["/big"]: "anything",  # a phrase makes the checker read the body
        u["/drip"]: "anything",
    }
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    (tmp_path / "claims.json").write_text(json.dumps(claims))
    out = tmp_path / "report.json"

    call_command(
        "check_sources",
        urls=str(tmp_path / "urls.txt"),
        claims=str(tmp_path / "claims.json"),
        json=str(out),
    )
    report = json.loads(out.read_text())

    def verdict(path):
        row = report[u[path]]
        return row["state"], row["status"], row["error_class"]

    assert list(report) == urls
    assert report[u["/ok"]] == {
        "state": "ok",
        "status": 200,
        "final_url": u["/ok"],
        "title": "Fast & sure",
        "error_class": None,
        "claim": "supported",
    }
    assert verdict("/missing") == ("broken", 404, "http")
    assert verdict("/gone") == ("broken", 410, "http")
    assert verdict("/error") == ("broken", 500, "http")
    # A failed HEAD is tried once with GET; a 404 or 410 is never retried, a 500 is.
    assert a.methods("/missing") == a.methods("/gone") == ["HEAD", "GET"]
    assert len(a.methods("/error")) > 2
    assert verdict("/flaky") == ("ok", 200, None)
    assert verdict("/ra429") == ("ok", 200, None)
    assert len(retry_times) == 2 and retry_times[1] - retry_times[0] >= 1.0
    # Moved for good, through a relative and a cross-host Location: update the link.
    assert verdict("/p301")[0] == "redirected"
    assert report[u["/p301"]]["final_url"] == url(b, "/final")
    assert report[u["/p308"]]["state"] == "redirected"
    assert report[u["/p308"]]["final_url"] == u["/ok"]
    assert report[u["/t302"]]["state"] == "ok"  # temporary moves leave the link right
    assert verdict("/loop")[::2] == ("broken", "redirect_loop")
    assert report[u["/internal"]]["state"] == "blocked"
    assert report[u["/internal"]]["error_class"] == "blocked"
    assert internal.hits["/secret"] == 0
    assert verdict("/hang")[::2] == ("error", "timeout")
    assert verdict("/reset")[::2] == ("error", "reset")
    assert verdict("/big")[::2] == ("error", "body_too_large")
    assert a.sent["/big"] < 10_000_000
    assert verdict("/drip")[::2] == ("error", "timeout")
    assert verdict("/head405") == ("ok", 200, None)
    assert verdict("/head403") == ("ok", 200, None)
    assert a.methods("/head405") == ["HEAD", "GET"]
    assert report[u["/plain"]]["title"] == "Sniffed"
    assert report[u["/plain"]]["claim"] == "supported"
    assert verdict("/png") == ("ok", 200, None) and report[u["/png"]]["title"] is None
    assert report[u["/without"]]["claim"] == "not_found"
    for n in range(4):
        assert report[url(b, f"/strict{n}")]["state"] == "ok"
    assert strict_state["refused"] == 0  # never more than 2 in flight on one host
