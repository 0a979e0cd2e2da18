"""Varnish in front of the site, with the repository's VCL, purged by tag from a real worker.

Varnish runs on loopback (a working directory and port of its own, stopped by its id) in
front of the live server; a Celery worker of this test consumes a queue of its own and
sends the purges (HTTP_CACHE_PURGE_BACKEND=varnish). A purge is confirmed when its outbox
row is gone: the worker deletes it only after Varnish answered 200.
"""

import datetime
import http.client
import os
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client
from django.utils import timezone

from bench.varnish import free_port, missing, start_varnish
from summaries.editing import workflow
from summaries.models import CachePurge
from tests.factories import SummaryFactory, UserFactory, publish_edit
from tests.integration.browser_helpers import ARTIFACTS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(bool(missing()), reason=missing() or "varnish is installed"),
]

PURGE_QUEUE = f"test-purges{os.environ.get('PYTEST_XDIST_WORKER', '')}"
CONFIRM_TIMEOUT = 10.0
CHANGES = 20


def get(varnish, path: str, **headers: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(varnish.host, varnish.port, timeout=30)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


def purge(varnish, tags: str) -> int:
    connection = http.client.HTTPConnection(varnish.host, varnish.port, timeout=10)
    connection.request("PURGE", "/", headers={"xkey-purge": tags})
    status = connection.getresponse().status
    connection.close()
    return status


def from_cache(response) -> bool:
    """A hit: Varnish names two transactions in X-Varnish (this one and the object's)."""
    return len(response.getheader("X-Varnish", "").split()) == 2


@pytest.fixture
def varnish(live_server):
    host, port = live_server.thread.host, live_server.thread.port
    started = start_varnish(host, port, log_dir=ARTIFACTS)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def site(settings, live_server, varnish, celery_processes):
    """The live server behind Varnish, purging it through a worker of this test."""
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: purges within a second need the Redis broker")
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    settings.HTTP_CACHE_S_MAXAGE = 3600
    settings.HTTP_CACHE_PURGE_BACKEND = "varnish"
    settings.HTTP_CACHE_PURGE_URLS = [varnish.url + "/"]
    settings.HTTP_CACHE_PURGE_QUEUE = PURGE_QUEUE
    celery_processes.worker(
        "purger",
        queue=PURGE_QUEUE,
        HTTP_CACHE_PURGE_BACKEND="varnish",
        HTTP_CACHE_PURGE_URLS=varnish.url + "/",
    )
    return varnish


def confirmed(since_id: int) -> float:
    """Seconds until every purge written after `since_id` is confirmed (its row gone)."""
    began = time.monotonic()
    while CachePurge.objects.filter(pk__gt=since_id, due_at__lte=timezone.now()).exists():
        if time.monotonic() - began > CONFIRM_TIMEOUT:
            rows = list(CachePurge.objects.values("tags", "attempts", "last_error"))
            pytest.fail(f"Purges not confirmed within {CONFIRM_TIMEOUT}s: {rows}")
        time.sleep(0.005)
    return time.monotonic() - began


def last_purge_id() -> int:
    return CachePurge.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def test_every_change_is_purged_within_a_second_and_never_read_stale(site, transactional_db):
    summary = SummaryFactory(live=True, tldr="First words.")
    page = summary.video.get_absolute_url()
    title = summary.video.title
    assert get(site, page).status == 200
    assert from_cache(get(site, page)), "an anonymous page comes from the cache"
    get(site, "/")
    assert from_cache(get(site, "/"))

    # An edit going live: no stale read once its purge is confirmed.
    before = last_purge_id()
    publish_edit(summary, tldr="Second words.")
    confirmed(before)
    fresh = get(site, page)
    assert b"Second words." in fresh.body and b"First words." not in fresh.body

    # Unpublish and publish again, CHANGES times: the page and the home page follow each.
    latencies = []
    for n in range(CHANGES):
        get(site, page), get(site, "/")  # cached before the change
        before = last_purge_id()
        summary.refresh_from_db()
        if n % 2 == 0:
            workflow.unpublish_summary(summary=summary)
        else:
            workflow.publish_summary(summary=summary)
        latencies.append(confirmed(before))
        live = n % 2 == 1
        assert get(site, page).status == (200 if live else 404)
        assert (title.encode() in get(site, "/").body) is live
    latencies.sort()
    p99 = latencies[max(0, int(len(latencies) * 0.99) - 1)]
    print(f"purge confirmed: median {statistics.median(latencies):.3f}s, p99 {p99:.3f}s")
    assert p99 < 1.0, latencies


def test_a_scheduled_summary_is_read_as_soon_as_it_goes_live(site, transactional_db):
    summary = SummaryFactory(tldr="Scheduled words.")
    page = summary.video.get_absolute_url()
    at = timezone.now() + datetime.timedelta(seconds=3)
    workflow.publish_summary(summary=summary, at=at)
    missing_page = get(site, page)
    assert missing_page.status == 404
    # Kept no longer than until it goes live.
    assert int(missing_page.getheader("Age", "0")) <= 3
    time.sleep(max(0.0, (at - timezone.now()).total_seconds()))
    confirmed(0)  # the purge due when it goes live
    live = get(site, page)
    assert live.status == 200 and b"Scheduled words." in live.body


def test_editors_pages_never_come_from_the_cache(site, transactional_db):
    summary = SummaryFactory(live=True)
    editor = UserFactory(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(editor)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    for path in (
        summary.video.get_absolute_url(),
        "/",
        "/admin/",
        f"/preview/{summary.video.slug}/",
    ):
        get(site, path)  # anonymous, to tempt the cache
        for _ in range(2):
            answer = get(site, path, Cookie=cookie)
            assert not from_cache(answer), path
            assert answer.getheader("Age") == "0", path
            assert "private" in answer.getheader("Cache-Control", "") or answer.status >= 300


def test_a_purge_from_an_address_not_allowed_is_refused(live_server, transactional_db):
    host, port = live_server.thread.host, live_server.thread.port
    strict = start_varnish(host, port, purgers=("192.0.2.1",), log_dir=ARTIFACTS)
    try:
        assert purge(strict, "all") == 403
    finally:
        strict.stop()


class _Slow(BaseHTTPRequestHandler):
    """A site whose page may be kept one second; /healthz says whether it is up."""

    def do_GET(self):  # noqa: N802 - the handler's API
        body = b"page"
        self.send_response(200)
        self.send_header("Cache-Control", "public, max-age=0, s-maxage=1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_stale_page_is_served_while_the_site_is_down():
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    varnish = start_varnish("127.0.0.1", server.server_address[1], log_dir=ARTIFACTS)
    try:
        assert get(varnish, "/page").body == b"page"
        server.shutdown()
        server.server_close()
        time.sleep(6)  # expired, and the probe has marked the site sick
        stale = get(varnish, "/page")
        assert stale.status == 200 and stale.body == b"page"
        assert int(stale.getheader("Age")) >= 5
    finally:
        varnish.stop()
        server.server_close()
