"""Varnish with the repository's VCL cannot be made to keep, for every reader, an answer one
client chose: forwarding headers are the VCL's own, answers to parameters the site does
not serve are not kept, and API reads asking for another rendering are passed.

Varnish runs on loopback (a working directory and port of its own, stopped by its id), in
front of the live server or of a small backend of this test that tells what it was sent.
"""

import http.client
import json
import re
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import varnish as bench_varnish
from bench.varnish import free_port, missing, start_varnish
from tests.factories import SummaryFactory
from tests.integration.browser_helpers import ARTIFACTS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(bool(missing()), reason=missing() or "varnish is installed"),
]

SITE = "https://curation.example"
MADE_UP = 20


def get(varnish, path: str, **headers: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(varnish.host, varnish.port, timeout=30)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


def from_cache(response) -> bool:
    """A hit: Varnish names two transactions in X-Varnish (this one and the object's)."""
    return len(response.getheader("X-Varnish", "").split()) == 2


@pytest.fixture
def site(settings, live_server, transactional_db):
    """The live server behind Varnish, set up as in production behind a TLS proxy: it
    trusts X-Forwarded-Proto, and shared caches may keep pages for a day."""
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    settings.SITE_URL = SITE
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = False
    settings.HTTP_CACHE_S_MAXAGE = 86400
    started = start_varnish(live_server.thread.host, live_server.thread.port, log_dir=ARTIFACTS)
    try:
        yield started
    finally:
        started.stop()


class _Echo(BaseHTTPRequestHandler):
    """A backend that answers, never to be kept, the forwarding headers it was sent."""

    def do_GET(self):  # noqa: N802 - the handler's API
        names = ("X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-For", "Forwarded")
        body = json.dumps({name: self.headers.get(name) for name in names}).encode()
        self.send_response(200)
        self.send_header("Cache-Control", "private")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def echo():
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_client_cannot_choose_the_forwarding_headers(echo):
    varnish = start_varnish("127.0.0.1", echo, log_dir=ARTIFACTS)
    try:
        forged = {
            "X-Forwarded-Proto": "https",
            "X-Forwarded-Host": "evil.example",
            "X-Forwarded-For": "203.0.113.9",
            "Forwarded": "for=203.0.113.9;proto=https;host=evil.example",
        }
        seen = json.loads(get(varnish, "/any/", **forged).body)
        # Plain HTTP came in (not on the "tls" listener): Varnish says so itself.
        assert seen["X-Forwarded-Proto"] == "http"
        assert seen["X-Forwarded-Host"] is None and seen["Forwarded"] is None
        assert seen["X-Forwarded-For"] == "127.0.0.1"
    finally:
        varnish.stop()


def test_only_the_tls_listener_is_told_to_the_site_as_https(echo):
    """The TLS terminator connects to the listener named "tls" (docs/deploy.md)."""
    workdir = Path(tempfile.mkdtemp(prefix="curation-varnish-"))
    workdir.chmod(0o755)  # varnishd's unprivileged child reads site.vcl
    (workdir / "site.vcl").write_text(bench_varnish.site_vcl("127.0.0.1", echo, ("127.0.0.1",)))
    plain, tls = free_port(), free_port()
    arguments = [
        *bench_varnish.command(workdir, f"127.0.0.1:{plain}"),
        "-a",
        f"tls=127.0.0.1:{tls}",
    ]
    log_path = ARTIFACTS / f"varnishd-{plain}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            arguments, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    started = bench_varnish.Varnish(process, "127.0.0.1", plain, workdir, log_path)
    try:
        bench_varnish._wait_until_answering(started)
        on_tls = SimpleNamespace(host="127.0.0.1", port=tls)
        assert (
            json.loads(get(on_tls, "/", **{"X-Forwarded-Proto": "http"}).body)["X-Forwarded-Proto"]
            == "https"
        )
        assert (
            json.loads(get(started, "/", **{"X-Forwarded-Proto": "https"}).body)[
                "X-Forwarded-Proto"
            ]
            == "http"
        )
    finally:
        started.stop()


def test_a_forwarded_scheme_or_host_never_reaches_what_other_readers_get(site):
    summary = SummaryFactory(live=True)
    page = summary.get_absolute_url()
    api = f"/api/v1/summaries/{summary.video.slug}/"
    forged = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
    for path in (page, api, "/feeds/rss/", "/sitemap.xml"):
        get(site, path, Host="localhost", **forged)  # the first request, to tempt the cache
        answer = get(site, path)
        text = answer.body.decode()
        assert answer.status == 200, path
        links = re.findall(r"https?://(?:localhost|127\.0\.0\.1|evil\.example)[^\s\"'<]*", text)
        assert not links, (path, links)
        assert SITE + "/" in text, path


def test_made_up_query_strings_are_not_kept(site):
    summary = SummaryFactory(live=True)
    page = summary.get_absolute_url()
    kept = 0
    for n in range(MADE_UP):
        path = f"{page}?made-up-{n}={n}"
        first = get(site, path)
        assert first.status == 200
        kept += from_cache(get(site, path))
    assert kept == 0, f"{kept}/{MADE_UP} made-up query strings were kept"
    # The page itself, and the same parameters in another order, are kept.
    get(site, page)
    assert from_cache(get(site, page))


def test_an_api_read_asking_for_another_rendering_is_not_served_to_others(site):
    SummaryFactory(live=True)
    path = "/api/v1/summaries/"
    indented = get(site, path, Accept="application/json; indent=8")
    assert indented.status == 200
    for _ in range(3):
        plain = get(site, path)
        assert plain.status == 200
        assert b"\n        " not in plain.body, "an indented answer was served to everyone"
    assert from_cache(get(site, path)), "the plain answer is still kept"
    assert not from_cache(get(site, path, Accept="application/json; indent=8"))
