"""Cached reader pages answered before Django's handler (summaries/pagecache/front.py):
the same answer PageCacheMiddleware gives, to exactly the requests it may give it to.

The listener's copy of the content generation (PostgreSQL) is played by reading the row:
a test's transaction keeps the real copy unused (tests/test_generation_listening.py runs
the real listener against the front).
"""

import io
import logging

import pytest
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from summaries.editing import workflow
from summaries.ops import logs
from summaries.pagecache import front, generation, listening, middleware

from .factories import SummaryFactory
from .test_ops_logs import logged_request
from .test_ops_metrics import value

pytestmark = pytest.mark.django_db

HOST = "testserver"


def environ_for(path: str, **extra) -> dict:
    query = ""
    if "?" in path:
        path, query = path.split("?", 1)
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": HOST,
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": HOST,
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": io.StringIO(),
        **extra,
    }


class Django:
    """Django's WSGI handler, counting the requests it is given. The signals that check
    database connections are off, as the test client turns them off: the test's
    transaction must survive the request."""

    def __init__(self):
        self.handler = WSGIHandler()
        self.calls = 0

    def __call__(self, environ, start_response):
        self.calls += 1
        return self.handler(environ, start_response)


def call(application, path: str, **extra) -> tuple[str, dict, bytes]:
    started = {}

    def start_response(status, headers, exc_info=None):
        started["status"], started["headers"] = status, headers

    body = application(environ_for(path, **extra), start_response)
    try:
        content = b"".join(body)
    finally:
        if hasattr(body, "close"):
            body.close()
    return started["status"], dict(started["headers"]), content


@pytest.fixture
def site(settings, monkeypatch):
    """(the front, the Django behind it), with the listener's copy confirmed."""
    settings.PAGE_CACHE_LOCAL_BYTES = 1024 * 1024
    monkeypatch.setattr(listening, "listen", lambda: None)
    monkeypatch.setattr(listening, "copy", generation._read_row)
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    cache.clear()
    django = Django()
    try:
        yield front.CachedPagesApplication(django), django
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def without_request_id(headers: dict) -> dict:
    return {name: v for name, v in headers.items() if name != logs.REQUEST_ID_HEADER}


@pytest.mark.parametrize("encoding", ["gzip", ""])
def test_a_cached_page_is_answered_before_django_as_django_answers_it(site, encoding):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    first = call(application, url, HTTP_ACCEPT_ENCODING=encoding)  # rendered and stored
    assert (first[0], django.calls) == ("200 OK", 1)
    by_django = call(django, url, HTTP_ACCEPT_ENCODING=encoding)  # the middleware's copy
    assert django.calls == 2

    status, headers, body = call(application, url, HTTP_ACCEPT_ENCODING=encoding)

    assert django.calls == 2
    assert (status, body) == (by_django[0], by_django[2])
    assert without_request_id(headers) == without_request_id(by_django[1])
    assert ("Content-Encoding" in headers) == (encoding == "gzip")
    assert "s-maxage=" in headers["Cache-Control"]
    assert f"s{SummaryFactory._meta.model.objects.get().pk}" in headers["xkey"].split()


def test_a_conditional_request_gets_a_304_before_django(site):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    _, headers, _ = call(application, url)
    status, again, body = call(application, url, HTTP_IF_NONE_MATCH=headers["ETag"])
    assert (status, body, django.calls) == ("304 Not Modified", b"", 1)
    assert again["ETag"] == headers["ETag"]


def test_an_answer_before_django_is_logged_counted_and_given_the_client_s_id(site, caplog):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    call(application, url)
    caplog.set_level(logging.INFO, logger="curation.request")
    hits = value("curation_page_cache_requests_total", result="hit")
    counted = value("curation_http_requests_total", view="summaries:summary-detail", status="200")

    caplog.clear()
    _, headers, _ = call(application, url, HTTP_X_REQUEST_ID="front-1")

    assert django.calls == 1
    assert headers[logs.REQUEST_ID_HEADER] == "front-1"
    assert value("curation_page_cache_requests_total", result="hit") == hits + 1
    assert (
        value("curation_http_requests_total", view="summaries:summary-detail", status="200")
        == counted + 1
    )
    assert logged_request(caplog) == ("summaries:summary-detail", url, 200, "front-1")


@pytest.mark.parametrize(
    "extra",
    [
        {"REQUEST_METHOD": "POST"},
        {"HTTP_COOKIE": "sessionid=abc"},
        {"HTTP_AUTHORIZATION": "Token abc"},
        {"HTTP_ACCEPT_DATETIME": "Thu, 01 Jan 2026 00:00:00 GMT"},
        {"HTTP_HOST": "evil.example"},
        {"HTTP_HOST": "TESTSERVER"},
    ],
    ids=["post", "session", "authorization", "accept-datetime", "host-not-allowed", "host-case"],
)
def test_requests_that_may_not_share_the_cached_page_go_to_django(site, extra):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    call(application, url)
    call(application, url, **extra)
    assert django.calls == 2


@pytest.mark.parametrize("encoding", ["gzip", ""])
def test_an_anonymous_api_read_is_answered_before_django_as_django_answers_it(site, encoding):
    application, django = site
    SummaryFactory(live=True)
    url = "/api/v1/summaries/"
    assert call(application, url, HTTP_ACCEPT_ENCODING=encoding)[0] == "200 OK"  # stored
    by_django = call(django, url, HTTP_ACCEPT_ENCODING=encoding)
    assert django.calls == 2

    status, headers, body = call(application, url, HTTP_ACCEPT_ENCODING=encoding)

    assert django.calls == 2
    assert (status, body) == (by_django[0], by_django[2])
    assert without_request_id(headers) == without_request_id(by_django[1])
    assert "origin" in headers["Vary"].lower()


@pytest.mark.parametrize(
    "extra",
    [{"HTTP_ORIGIN": "https://reader.example"}, {"HTTP_AUTHORIZATION": "Token abc"}],
    ids=["origin", "token"],
)
def test_api_reads_with_an_origin_or_a_token_go_to_django(site, extra):
    application, django = site
    SummaryFactory(live=True)
    assert call(application, "/api/v1/summaries/")[0] == "200 OK"  # stored
    call(application, "/api/v1/summaries/", **extra)
    assert django.calls == 2


def test_plain_http_goes_to_django_to_be_redirected_when_the_site_says_so(site, settings):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    call(application, url, **{"wsgi.url_scheme": "https"})
    settings.SECURE_SSL_REDIRECT = True
    django = Django()  # middleware built again, with the redirect on
    application = front.CachedPagesApplication(django)
    assert call(application, url)[0] == "301 Moved Permanently"
    assert django.calls == 1
    assert call(application, url, **{"wsgi.url_scheme": "https"})[0] == "200 OK"
    assert django.calls == 1


def test_without_the_listener_s_copy_django_answers(site, monkeypatch):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    call(application, url)
    monkeypatch.setattr(listening, "copy", lambda: None)
    assert call(application, url)[0] == "200 OK"
    assert django.calls == 2


def test_a_page_missed_before_django_is_rendered_without_a_second_look_up(site, monkeypatch):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    looked_up = []
    original = middleware.lookup
    monkeypatch.setattr(front, "lookup", lambda *a: looked_up.append(a) or original(*a))
    monkeypatch.setattr(middleware, "lookup", lambda *a: looked_up.append(a) or original(*a))
    assert call(application, url)[0] == "200 OK"
    assert (django.calls, len(looked_up)) == (1, 1)


def test_a_change_is_never_hidden_by_the_page_answered_before_django(site):
    application, django = site
    summary = SummaryFactory(live=True)
    url = summary.get_absolute_url()
    assert call(application, url)[0] == "200 OK"
    workflow.unpublish_summary(summary=summary)
    assert call(application, url)[0] == "404 Not Found"
    assert django.calls == 2


def test_with_the_cache_down_django_serves_the_page(site, monkeypatch):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    call(application, url)

    def unreachable(*args):
        raise ConnectionError("cache down")

    monkeypatch.setattr(front, "lookup", unreachable)
    monkeypatch.setattr(middleware, "lookup", unreachable)
    assert call(application, url)[0] == "200 OK"
    assert django.calls == 2


def test_the_answer_kept_with_a_page_follows_the_shared_lifetime(site, settings):
    application, django = site
    url = SummaryFactory(live=True).get_absolute_url()
    settings.HTTP_CACHE_S_MAXAGE = 60
    call(application, url)
    assert "s-maxage=60" in call(application, url)[1]["Cache-Control"]
    settings.HTTP_CACHE_S_MAXAGE = 30
    assert "s-maxage=30" in call(application, url)[1]["Cache-Control"]
    assert django.calls == 1


def test_each_answer_before_django_has_its_own_request_id(site):
    application, _ = site
    url = SummaryFactory(live=True).get_absolute_url()
    call(application, url)
    ids = {call(application, url)[1][logs.REQUEST_ID_HEADER] for _ in range(3)}
    assert len(ids) == 3


def test_answers_kept_with_pages_stay_within_the_local_copies_budget(site, settings):
    """A kept answer holds its stored page: the answers are bounded by bytes as this
    process's copies of pages are, so an evicted page does not live on in them."""
    application, django = site
    urls = [SummaryFactory(live=True).get_absolute_url() for _ in range(3)]
    for url in urls:
        call(application, url)
    one_page = len(call(application, urls[0])[2])
    settings.PAGE_CACHE_LOCAL_BYTES = one_page * 3 // 2
    application = front.CachedPagesApplication(django)
    for url in urls:
        call(application, url)
        call(application, url)
    assert 0 < sum(len(answer[4]) for answer in application.answers.values()) <= one_page * 3 // 2
    assert len(application.answers) == 1


def test_a_path_outside_ascii_reaches_django_as_the_server_sent_it(site):
    """A WSGI server passes the path's UTF-8 bytes as Latin-1 characters (PEP 3333); the
    front must hand Django the environ as it came, or Django cannot decode the path."""
    application, django = site
    sent = "/channels/\u0100/".encode().decode("latin-1")
    assert call(application, sent)[0] == call(django, sent)[0] == "404 Not Found"
    assert django.calls == 2
