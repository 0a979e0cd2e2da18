"""Static files are answered ahead of most of the middleware (summaries/ops/static.py):
with the request log's id, count and line, SecurityMiddleware's headers, and its redirect
to HTTPS."""

import logging

import pytest
from django.test import Client

from summaries.ops.static import security_headers

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
    (line,) = [r for r in caplog.records if r.name == "curation.request"]
    assert (line.view, line.path, line.status, line.request_id) == (
        "static",
        CSS,
        200,
        "static-req-1",
    )


def test_plain_http_is_redirected_to_https_when_the_site_says_so(static_client, settings):
    settings.SECURE_SSL_REDIRECT = True
    response = static_client().get(CSS)
    assert response.status_code == 301
    assert response["Location"] == f"https://testserver{CSS}"
    secure = static_client().get(CSS, secure=True)
    assert secure.status_code == 200
    assert secure["X-Content-Type-Options"] == "nosniff"
