"""Static files are answered ahead of most of the middleware (summaries/ops/static.py):
with the request log's id, count and line, SecurityMiddleware's headers, and its redirect
to HTTPS."""

import io
import logging

import pytest
from django.test import Client

from summaries.ops.static import StaticFilesApplication, security_headers

from .test_ops_logs import logged_request
from .test_ops_metrics import value

pytestmark = pytest.mark.django_db

CSS = "/static/site-test.css"


@pytest.fixture
def static_client(settings, tmp_path):
    """A client of a site whose STATIC_ROOT holds one stylesheet (a new client builds the
    middleware again, so WhiteNoise reads that folder)."""
    (tmp_path / "site-test.css").write_text("body { color: black; }\n" * 20)
    settings.STATIC_ROOT = tmp_path
    return lambda **kwargs: Client(**kwargs)


def test_a_static_file_carries_the_headers_securitymiddleware_gives_a_page(static_client):
    client = static_client()
    page = client.get("/no-such-page/")
    css = client.get(CSS)
    assert css.status_code == 200
    assert b"".join(css.streaming_content).startswith(b"body")
    for name in ("X-Content-Type-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy"):
        assert css[name] == page[name], name
    assert css["X-Content-Type-Options"] == "nosniff"


def test_security_headers_include_hsts_when_it_is_on(settings):
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = False
    settings.SECURE_HSTS_PRELOAD = False
    assert ("Strict-Transport-Security", "max-age=3600") in security_headers()
    settings.SECURE_HSTS_SECONDS = 0
    assert "Strict-Transport-Security" not in dict(security_headers())


def test_a_static_file_is_logged_counted_and_given_a_request_id(static_client, caplog):
    caplog.set_level(logging.INFO, logger="curation.request")
    before = value("curation_http_requests_total", view="static", status="200")
    response = static_client().get(CSS, HTTP_X_REQUEST_ID="static-req-1")
    assert response.status_code == 200
    assert response["X-Request-ID"] == "static-req-1"
    assert value("curation_http_requests_total", view="static", status="200") == before + 1
    assert logged_request(caplog) == ("static", CSS, 200, "static-req-1")


def test_plain_http_is_redirected_to_https_when_the_site_says_so(static_client, settings):
    settings.SECURE_SSL_REDIRECT = True
    response = static_client().get(CSS)
    assert response.status_code == 301
    assert response["Location"] == f"https://testserver{CSS}"
    secure = static_client().get(CSS, secure=True)
    assert secure.status_code == 200
    assert secure["X-Content-Type-Options"] == "nosniff"


# --- Before Django: the WSGI application (curation/wsgi.py) --------------------------------


def wsgi_get(application, path, **environ):
    """Call a WSGI application as a server would; (status, headers, body)."""
    request = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": io.StringIO(),
        **environ,
    }
    started = {}

    def start_response(status, headers, exc_info=None):
        started["status"], started["headers"] = status, headers

    body = b"".join(application(request, start_response))
    return started["status"], dict(started["headers"]), body


@pytest.fixture
def site_static(settings, tmp_path):
    (tmp_path / "site-test.css").write_text("body { color: black; }\n" * 20)
    settings.STATIC_ROOT = tmp_path
    return tmp_path


def test_the_site_s_wsgi_application_answers_static_files_before_django():
    from curation import wsgi

    assert isinstance(wsgi.application, StaticFilesApplication)


def test_a_static_file_is_answered_without_calling_django(site_static, caplog):
    caplog.set_level(logging.INFO, logger="curation.request")
    django_calls = []
    application = StaticFilesApplication(lambda environ, start: django_calls.append(environ))
    before = value("curation_http_requests_total", view="static", status="200")
    status, headers, body = wsgi_get(application, CSS, HTTP_X_REQUEST_ID="wsgi-req-1")
    assert (status, django_calls) == ("200 OK", [])
    assert body.startswith(b"body")
    assert headers["X-Request-ID"] == "wsgi-req-1"
    for name, header_value in security_headers():
        assert headers[name] == header_value, name
    assert value("curation_http_requests_total", view="static", status="200") == before + 1
    assert logged_request(caplog) == ("static", CSS, 200, "wsgi-req-1")


def test_the_wsgi_static_answer_has_a_new_id_when_the_client_s_is_malformed(site_static):
    application = StaticFilesApplication(lambda environ, start: [])
    _, headers, _ = wsgi_get(application, CSS, HTTP_X_REQUEST_ID="bad id\n")
    assert len(headers["X-Request-ID"]) == 32


def test_the_wsgi_static_answer_is_conditional_and_refuses_writes(site_static):
    application = StaticFilesApplication(lambda environ, start: [])
    _, headers, _ = wsgi_get(application, CSS)
    status, _, body = wsgi_get(application, CSS, HTTP_IF_NONE_MATCH=headers["ETag"])
    assert (status, body) == ("304 Not Modified", b"")
    status, _, _ = wsgi_get(application, CSS, REQUEST_METHOD="POST")
    assert status == "405 Method Not Allowed"


def test_other_paths_and_plain_http_under_ssl_redirect_go_to_django(site_static, settings):
    def django(environ, start_response):
        start_response("299 Django", [])
        return [b"django"]

    application = StaticFilesApplication(django)
    assert wsgi_get(application, "/videos/")[0] == "299 Django"
    settings.SECURE_SSL_REDIRECT = True
    application = StaticFilesApplication(django)
    assert wsgi_get(application, CSS)[0] == "299 Django"  # SecurityMiddleware redirects it
    assert wsgi_get(application, CSS, **{"wsgi.url_scheme": "https"})[0] == "200 OK"
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    forwarded = {"HTTP_X_FORWARDED_PROTO": "https, http"}
    assert wsgi_get(application, CSS, **forwarded)[0] == "200 OK"
    assert wsgi_get(application, CSS, HTTP_X_FORWARDED_PROTO="http")[0] == "299 Django"
