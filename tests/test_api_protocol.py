"""HTTP behaviour of the API: one error shape, body limits, throttling, CORS, the schema."""

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.core.exceptions import DisallowedRedirect, RequestDataTooBig, TooManyFilesSent
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from rest_framework.settings import api_settings
from rest_framework.test import APIClient

from summaries.api.errors import exception_handler, flatten_fields
from summaries.api.parsers import json_depth_exceeds

from .factories import EditorFactory, SummaryFactory

pytestmark = pytest.mark.django_db


def error_of(response, status):
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"]
    assert list(body["error"]) == ["status", "code", "message", "fields"]
    assert body["error"]["status"] == status
    return body["error"]


# --- The error shape --------------------------------------------------------------------


def test_unknown_endpoint_is_a_json_404():
    error = error_of(APIClient().get("/api/v1/nothing/here/"), 404)
    assert error["code"] == "not_found"


def test_hidden_summary_is_a_json_404():
    draft = SummaryFactory()
    error = error_of(APIClient().get(f"/api/v1/summaries/{draft.video.slug}/"), 404)
    assert error == {"status": 404, "code": "not_found", "message": error["message"], "fields": {}}


def test_unsupported_method_is_405():
    error = error_of(APIClient().put("/api/v1/channels/"), 405)
    assert error["code"] == "method_not_allowed"


def test_non_json_body_is_415(editor_api):
    response = editor_api.post("/api/v1/summaries/", "tldr=x", content_type="text/plain")
    assert error_of(response, 415)["code"] == "unsupported_media_type"


def test_malformed_json_is_400(editor_api):
    response = editor_api.post("/api/v1/summaries/", "{", content_type="application/json")
    assert error_of(response, 400)["code"] == "parse_error"
    response = editor_api.post(
        "/api/v1/summaries/", '{"tldr": NaN}', content_type="application/json"
    )
    assert error_of(response, 400)["code"] == "parse_error"


@pytest.mark.parametrize("depth", [30, 100_000])
def test_deeply_nested_json_is_400_not_500(editor_api, depth):
    body = "[" * depth + "]" * depth
    response = editor_api.post("/api/v1/summaries/", body, content_type="application/json")
    error = error_of(response, 400)
    assert error["code"] == "parse_error" and "nested" in error["message"]


def test_lone_surrogates_are_400(editor_api):
    response = editor_api.post(
        "/api/v1/summaries/", '{"tldr": "\\ud800"}', content_type="application/json"
    )
    assert error_of(response, 400)["code"] == "parse_error"


@override_settings(API_MAX_BODY_BYTES=1000)
def test_oversized_body_is_413(editor_api):
    body = json.dumps({"tldr": "x" * 2000})
    response = editor_api.post("/api/v1/summaries/", body, content_type="application/json")
    assert error_of(response, 413)["code"] == "payload_too_large"


def test_bad_token_is_401_with_the_scheme():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = client.get("/api/v1/summaries/")
    assert error_of(response, 401)["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Token"


def test_server_errors_use_the_shape(monkeypatch):
    from summaries.api import views

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(views.ChannelViewSet, "list", explode)
    client = APIClient()
    client.raise_request_exception = False
    error = error_of(client.get("/api/v1/channels/"), 500)
    assert error["code"] == "server_error" and "boom" not in error["message"]


# --- Requests Django refuses as suspicious: a 400 in the API's shape, never a 500 ------

TOO_MANY_PARAMETERS = "&".join(["a"] * 1001)  # DATA_UPLOAD_MAX_NUMBER_FIELDS is 1000


@pytest.mark.parametrize(
    "path", ["/api/v1/summaries/", "/api/v1/channels/", "/api/schema/", "/api/docs/"]
)
def test_too_many_query_parameters_is_a_json_400(path):
    client = APIClient(raise_request_exception=False)
    error = error_of(client.get(f"{path}?{TOO_MANY_PARAMETERS}"), 400)
    assert error["code"] == "too_many_parameters"
    assert "1000" in error["message"]


def test_too_many_query_parameters_on_a_write_is_a_json_400(editor_api):
    editor_api.raise_request_exception = False
    response = editor_api.post(f"/api/v1/summaries/?{TOO_MANY_PARAMETERS}", {}, format="json")
    assert error_of(response, 400)["code"] == "too_many_parameters"


def test_a_form_body_with_too_many_fields_is_not_parsed_at_all():
    """Session auth's CSRF check reads the body through the API's parsers: JSON only."""
    client = APIClient(raise_request_exception=False, enforce_csrf_checks=True)
    client.force_login(EditorFactory())
    client.cookies["csrftoken"] = "x" * 32
    response = client.post(
        "/api/v1/summaries/",
        TOO_MANY_PARAMETERS,
        content_type="application/x-www-form-urlencoded",
        HTTP_X_CSRFTOKEN="x" * 32,
    )
    assert error_of(response, 415)["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    ("exception", "status", "code"),
    [
        (RequestDataTooBig("big"), 413, "payload_too_large"),
        (TooManyFilesSent("files"), 400, "too_many_files"),
        (DisallowedRedirect("somewhere"), 400, "bad_request"),
    ],
)
def test_every_suspicious_operation_raised_in_a_view_is_a_4xx(exception, status, code):
    response = exception_handler(exception, {})
    assert response.status_code == status
    assert response.data["error"]["code"] == code


@pytest.mark.parametrize("path", ["/api/v1/summaries/", "/api/schema/", "/api/v1/nothing/"])
def test_a_host_header_not_allowed_is_a_json_400(path):
    client = APIClient(raise_request_exception=False)
    error = error_of(client.get(path, HTTP_HOST="evil.example"), 400)
    assert error["code"] == "bad_request"
    assert "evil.example" not in error["message"]  # nothing of the request echoed back


def test_reader_pages_keep_their_html_400(client):
    response = client.get(f"/?{TOO_MANY_PARAMETERS}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


def test_nested_field_paths():
    detail = {
        "video": {"duration": ["Bad."]},
        "chapters": [{}, {"title": ["Too long."]}],
        "topics": {2: ["Unknown."]},
        "non_field_errors": ["Whole."],
    }
    assert flatten_fields(detail) == {
        "video.duration": ["Bad."],
        "chapters[1].title": ["Too long."],
        "topics[2]": ["Unknown."],
        "non_field_errors": ["Whole."],
    }


def test_depth_check_is_iterative():
    deep = []
    for _ in range(50_000):
        deep = [deep]
    assert json_depth_exceeds(deep, 20)
    assert not json_depth_exceeds({"a": [{"b": 1}]}, 3)


# --- Throttling -------------------------------------------------------------------------


def rates(anon, user):
    return override_settings(
        REST_FRAMEWORK={
            **_rest_framework(),
            "DEFAULT_THROTTLE_RATES": {"anon": anon, "user": user},
        }
    )


def _rest_framework():
    from django.conf import settings

    return settings.REST_FRAMEWORK


def test_anonymous_clients_are_throttled_with_retry_after():
    with rates("3/minute", "1000/minute"):
        assert api_settings.DEFAULT_THROTTLE_RATES["anon"] == "3/minute"
        client = APIClient()
        # Different pages each time: a page the cache holds is answered before throttling
        # (it costs no query), so it takes requests that reach the API to be throttled.
        for n in range(3):
            assert client.get("/api/v1/channels/", {"search": f"x{n}"}).status_code == 200
        response = client.get("/api/v1/channels/", {"search": "x9"})
        error = error_of(response, 429)
        assert error["code"] == "throttled"
        assert 1 <= int(response["Retry-After"]) <= 60
        # Another address has its own allowance.
        assert (
            client.get("/api/v1/channels/", {"search": "y"}, REMOTE_ADDR="10.9.8.7").status_code
            == 200
        )


def test_an_anonymous_client_is_counted_by_the_anonymous_rate_alone():
    """The user rate is for signed-in clients: an anonymous one is not also counted by
    address against it (at 1/minute here, the second request would be refused)."""
    with rates("3/minute", "1/minute"):
        client = APIClient()
        for n in range(3):
            assert client.get("/api/v1/channels/", {"search": f"a{n}"}).status_code == 200
        error_of(client.get("/api/v1/channels/", {"search": "a9"}), 429)


def test_signed_in_clients_have_their_own_rate(editor_api):
    with rates("1/minute", "2/minute"):
        assert editor_api.get("/api/v1/channels/").status_code == 200
        assert editor_api.get("/api/v1/channels/").status_code == 200
        assert editor_api.get("/api/v1/channels/").status_code == 429


# --- CORS -------------------------------------------------------------------------------


@override_settings(CORS_ALLOWED_ORIGINS=["https://reader.example"])
def test_cors_allows_reads_from_configured_origins_only():
    client = APIClient()
    response = client.get("/api/v1/channels/", HTTP_ORIGIN="https://reader.example")
    assert response["Access-Control-Allow-Origin"] == "https://reader.example"
    assert "ETag" in response["Access-Control-Expose-Headers"]
    other = client.get("/api/v1/channels/", HTTP_ORIGIN="https://evil.example")
    assert "Access-Control-Allow-Origin" not in other
    preflight = client.options(
        "/api/v1/summaries/",
        HTTP_ORIGIN="https://reader.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
    )
    assert "POST" not in preflight.get("Access-Control-Allow-Methods", "")
    page = client.get("/", HTTP_ORIGIN="https://reader.example")
    assert "Access-Control-Allow-Origin" not in page


# --- Schema and docs --------------------------------------------------------------------


def test_the_schema_is_valid_openapi():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    operation = schema["paths"]["/api/v1/summaries/{slug}/"]["patch"]
    assert {"400", "404", "412", "428", "429"} <= set(operation["responses"])
    assert schema["paths"]["/api/v1/summaries/"]["get"]["responses"]["429"]


def test_the_schema_says_reads_need_no_credentials_and_writes_do():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, operations in schema["paths"].items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in operations.items():
            security = operation.get("security", [])
            editors_only = path.endswith("/working-copy/") or path.startswith("/api/v1/webhooks/")
            if method == "get" and not editors_only:
                assert {} in security, f"GET {path} does not say it is public"
            else:
                assert {} not in security and security, f"{method} {path} looks public"


def test_schema_and_docs_are_served():
    client = APIClient()
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    # Swagger UI comes from this site: the docs work offline and under our CSP.
    html = docs.content.decode()
    assert (
        "cdn.jsdelivr.net" not in html and "cdn.jsdelivr.net" not in docs["Content-Security-Policy"]
    )
    assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', html)
    assert any("swagger-ui-bundle" in asset for asset in assets)
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), asset
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and b"/api/schema/" in script.content
