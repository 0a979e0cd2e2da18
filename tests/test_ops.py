"""Health and readiness probes, and 503s while a backing service is down.

`/healthz` says the process answers and touches nothing else; `/readyz` checks the
database, the cache and the broker, each with a short timeout, and names each check ok or
failed, never where or what they are. Both answer probes over plain HTTP and whatever the
Host header (orchestrators probe the pod's address), and are never kept by a cache. A view
that finds the database (or the cache's Redis) unreachable answers 503 with Retry-After:
an HTML page for readers, the API's JSON error for /api/ paths, never a traceback.
"""

import json
import socket
import time

import psycopg
import pytest
import redis
from django.core.cache.backends.base import BaseCache
from django.core.management import CommandError, call_command
from django.db import IntegrityError, InterfaceError, OperationalError
from django.db.backends.signals import connection_created
from django.db.utils import ConnectionHandler

from curation.celery import app as celery_app
from summaries.ops.outage import is_outage
from tests import ops_urls
from tests.test_settings import PRODUCTION, manage

PROBES = ["/healthz", "/readyz"]
CHECKS = {"database", "cache", "broker"}


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class UnreachableCache(BaseCache):
    """A cache whose every call fails as Redis's client does when Redis is down."""

    def __init__(self, location, params):
        super().__init__(params)

    def _fail(self, *args, **kwargs):
        raise redis.ConnectionError("Error 111 connecting to 10.9.8.7:6379. Connection refused.")

    add = get = set = touch = delete = get_many = set_many = delete_many = incr = _fail
    has_key = _fail

    def clear(self):
        pass


UNREACHABLE_CACHE = {"default": {"BACKEND": "tests.test_ops.UnreachableCache"}}


@pytest.fixture
def broker(monkeypatch):
    """The readiness check's broker: in memory, unless the test points it elsewhere."""
    monkeypatch.setitem(celery_app.conf, "broker_url", "memory://")
    return celery_app.conf


def body(response) -> dict:
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content)


def assert_never_stored(response) -> None:
    assert "no-store" in response["Cache-Control"]
    assert "public" not in response["Cache-Control"]


# --- /healthz -------------------------------------------------------------------------------


def test_healthz_answers_with_neither_the_database_nor_the_cache(client, settings):
    """No database access is allowed in this test, and every cache call would fail."""
    settings.CACHES = UNREACHABLE_CACHE

    response = client.get("/healthz")

    assert response.status_code == 200
    assert body(response) == {"status": "ok"}
    assert_never_stored(response)


def test_probes_answer_get_and_head_only(client):
    assert client.head("/healthz").status_code == 200
    response = client.post("/healthz")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert client.delete("/readyz").status_code == 405


@pytest.mark.django_db
@pytest.mark.parametrize("path", PROBES)
def test_probes_answer_plain_http_and_any_host(client, settings, broker, path):
    """Production settings redirect to HTTPS and allow only the site's name; a load
    balancer's probe over plain HTTP to the pod's address still gets its answer."""
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["curation.example.com"]

    response = client.get(path, HTTP_HOST="10.42.0.17:8000")

    assert response.status_code == 200
    assert body(response)["status"] == "ok"
    # A reader page with the same Host is still refused, and plain HTTP still redirected.
    assert client.get("/", HTTP_HOST="10.42.0.17:8000").status_code == 400
    assert client.get("/", HTTP_HOST="curation.example.com").status_code == 301


# --- /readyz --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_readyz_names_each_check(client, broker):
    response = client.get("/readyz")

    assert response.status_code == 200
    assert body(response) == {"status": "ok", "checks": dict.fromkeys(CHECKS, "ok")}
    assert_never_stored(response)


@pytest.mark.django_db
def test_readyz_checks_the_database_on_the_connection_requests_use(client, broker):
    """Probes come every few seconds from each load balancer: each opening a database
    session of its own (PostgreSQL forks a process for it) would cost more than the
    pages."""
    opened = []

    def count(sender, connection, **kwargs):
        opened.append(connection)

    connection_created.connect(count)
    try:
        answers = [client.get("/readyz") for _ in range(200)]
    finally:
        connection_created.disconnect(count)

    assert {answer.status_code for answer in answers} == {200}
    assert opened == []


@pytest.mark.django_db
def test_readyz_fails_when_the_broker_cannot_be_reached(client, broker):
    port = closed_port()
    broker["broker_url"] = f"redis://:s3cret-password@127.0.0.1:{port}/0"

    started = time.monotonic()
    response = client.get("/readyz")

    assert time.monotonic() - started < 5
    assert response.status_code == 503
    assert body(response) == {
        "status": "unavailable",
        "checks": {"database": "ok", "cache": "ok", "broker": "failed"},
    }
    assert_never_stored(response)
    text = response.content.decode()
    for secret in ("127.0.0.1", str(port), "s3cret", "redis", "Error"):
        assert secret not in text


@pytest.mark.django_db
def test_readyz_is_never_served_from_a_cache(client, broker):
    """Ready, then the broker goes: the next probe says so at once."""
    assert client.get("/readyz").status_code == 200
    broker["broker_url"] = f"redis://127.0.0.1:{closed_port()}/0"
    assert client.get("/readyz").status_code == 503


@pytest.mark.django_db
def test_readyz_fails_when_the_cache_cannot_be_reached(client, settings, broker):
    port = closed_port()
    settings.CACHES = {
        "default": {
            "BACKEND": "summaries.pagecache.backend.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
        }
    }

    response = client.get("/readyz")

    assert response.status_code == 503
    assert body(response)["checks"] == {"database": "ok", "cache": "failed", "broker": "ok"}
    assert str(port) not in response.content.decode()


@pytest.mark.django_db
def test_readyz_fails_when_the_cache_answers_errors(client, settings, broker):
    settings.CACHES = UNREACHABLE_CACHE
    response = client.get("/readyz")
    assert response.status_code == 503
    assert body(response)["checks"]["cache"] == "failed"
    assert "10.9.8.7" not in response.content.decode()


# --- Which errors mean a backing service is down ----------------------------------------


def _database_error(django_db_blocker, engine: str, sql: str | None = None, **database):
    """The exception Django raises connecting to `database` (then running `sql`)."""
    handler = ConnectionHandler({"default": {"ENGINE": engine, **database}})
    wrapper = handler["default"]
    with django_db_blocker.unblock():
        try:
            with wrapper.cursor() as cursor:
                cursor.execute(sql or "SELECT 1")
        except Exception as exc:  # noqa: BLE001 - the exception is what is wanted
            return exc
        finally:
            wrapper.close()
    pytest.fail("no error was raised")


def _wrapped(driver_error: Exception) -> Exception:
    """A driver error as Django's DB layer raises it (a Django exception from it)."""
    handler = ConnectionHandler({"default": {"ENGINE": "django.db.backends.postgresql"}})
    try:
        with handler["default"].wrap_database_errors:
            raise driver_error
    except Exception as exc:  # noqa: BLE001
        return exc


@pytest.fixture
def postgresql_refused(django_db_blocker):
    return _database_error(
        django_db_blocker,
        "django.db.backends.postgresql",
        HOST="127.0.0.1",
        PORT=closed_port(),
        NAME="curation",
        USER="curation",
    )


def test_outages_are_unreachable_services_not_failed_queries(
    django_db_blocker, postgresql_refused, tmp_path
):
    refused = postgresql_refused
    assert isinstance(refused, OperationalError)
    sqlite = "django.db.backends.sqlite3"
    cannot_open = _database_error(django_db_blocker, sqlite, NAME=str(tmp_path / "no" / "db"))
    no_table = _database_error(django_db_blocker, sqlite, "SELECT * FROM nothing", NAME=":memory:")
    assert isinstance(no_table, OperationalError)

    assert is_outage(refused)
    assert is_outage(cannot_open)
    assert is_outage(_wrapped(psycopg.errors.AdminShutdown("terminating connection")))
    assert is_outage(_wrapped(psycopg.errors.CannotConnectNow("the database is starting up")))
    assert is_outage(_wrapped(psycopg.errors.TooManyConnections("too many clients")))
    assert is_outage(_wrapped(psycopg.OperationalError("server closed the connection")))
    assert is_outage(InterfaceError("connection already closed"))
    assert is_outage(redis.ConnectionError("Connection refused."))
    assert is_outage(redis.TimeoutError("Timeout reading from socket"))

    assert not is_outage(no_table)
    assert not is_outage(_wrapped(psycopg.errors.QueryCanceled("statement timeout")))
    assert not is_outage(_wrapped(psycopg.errors.DeadlockDetected("deadlock detected")))
    assert not is_outage(IntegrityError("duplicate key"))
    assert not is_outage(ValueError("no"))


# --- 503 pages ------------------------------------------------------------------------------


@pytest.fixture
def raising(monkeypatch, settings, db):
    """Views of tests/ops_urls.py raise what the test sets; Django's 500 is not re-raised.

    With the database: the page cache reads the content generation before any view runs.
    """
    settings.ROOT_URLCONF = "tests.ops_urls"
    monkeypatch.setattr(ops_urls, "RAISE", [])
    return ops_urls.RAISE


def test_a_reader_page_answers_503_while_the_database_is_down(client, raising, postgresql_refused):
    raising.append(postgresql_refused)

    response = client.get("/page/")

    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert int(response["Retry-After"]) > 0
    assert_never_stored(response)
    text = response.content.decode()
    assert "<h1>" in text and "Traceback" not in text
    assert "127.0.0.1" not in text and "connection" not in text.lower()


def test_an_api_path_answers_503_in_the_api_error_shape(client, raising, postgresql_refused):
    raising.append(postgresql_refused)

    response = client.get("/api/v1/thing/")

    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert_never_stored(response)
    error = body(response)["error"]
    assert error["status"] == 503 and error["code"] == "unavailable" and error["fields"] == {}
    assert "127.0.0.1" not in error["message"]


def test_the_cache_unreachable_in_a_view_is_a_503_too(client, raising):
    raising.append(redis.ConnectionError("Error 111 connecting to 10.9.8.7:6379."))
    response = client.get("/page/")
    assert response.status_code == 503
    assert "10.9.8.7" not in response.content.decode()


def test_other_database_errors_stay_500s(client, raising, django_db_blocker):
    client.raise_request_exception = False
    no_table = _database_error(
        django_db_blocker,
        "django.db.backends.sqlite3",
        "SELECT * FROM nothing",
        NAME=":memory:",
    )
    raising.append(no_table)
    assert client.get("/page/").status_code == 500
    response = client.get("/api/v1/thing/")
    assert response.status_code == 500
    assert body(response)["error"]["code"] == "server_error"


def test_the_real_site_answers_503_with_postgresql_unreachable(tmp_path):
    """The production settings with DATABASE_URL at a closed port, in a process of its
    own: reader pages, the API, the admin's login and /readyz answer 503 (no traceback,
    no address); /healthz still 200."""
    script = r"""
import json
from django.test import Client
client = Client(raise_request_exception=False)
answers = {}
for path in ["/", "/videos/some-video/", "/api/v1/summaries/", "/admin/login/", "/readyz",
             "/healthz"]:
    response = client.get(path, HTTP_X_FORWARDED_PROTO="https")
    answers[path] = [response.status_code, response.get("Retry-After"),
                     response.content.decode()]
print(json.dumps(answers))
"""
    port = closed_port()
    result = manage(
        "shell",
        "-c",
        script,
        **{**PRODUCTION, "ALLOWED_HOSTS": "testserver"},
        DATABASE_URL=f"postgres://curation:pw-s3cret@127.0.0.1:{port}/curation",
        REDIS_URL="",
        CACHE_URL="",
        CURATION_VAR_DIR=str(tmp_path),
        STATICFILES_BACKEND="django.contrib.staticfiles.storage.StaticFilesStorage",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answers = json.loads(result.stdout.strip().splitlines()[-1])

    assert answers["/admin/login/"][0] in (200, 503)  # needs no database without a session
    for path in ["/", "/videos/some-video/", "/api/v1/summaries/"]:
        status, retry_after, text = answers[path]
        assert (path, status) == (path, 503)
        assert retry_after and int(retry_after) > 0
        assert "Traceback" not in text and str(port) not in text and "s3cret" not in text
    assert json.loads(answers["/api/v1/summaries/"][2])["error"]["code"] == "unavailable"
    status, _, text = answers["/readyz"]
    assert status == 503
    assert json.loads(text)["checks"]["database"] == "failed"
    assert str(port) not in text
    assert answers["/healthz"][0] == 200


def test_readyz_gives_up_on_a_database_that_never_answers(tmp_path):
    """PostgreSQL's address accepts the connection and then says nothing (a server that
    hangs): the probe answers 503 within seconds rather than waiting for it."""
    script = "from django.test import Client; print(Client().get('/readyz').content.decode())"
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        started = time.monotonic()
        result = manage(
            "shell",
            "-c",
            script,
            **{**PRODUCTION, "ALLOWED_HOSTS": "testserver"},
            DATABASE_URL=f"postgres://curation@127.0.0.1:{port}/curation",
            REDIS_URL="",
            CACHE_URL="",
            CURATION_VAR_DIR=str(tmp_path),
        )
        took = time.monotonic() - started

    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["checks"]["database"] == "failed"
    assert took < 20


# --- worker_health --------------------------------------------------------------------------


def test_worker_health_fails_in_one_line_when_no_worker_answers(broker):
    with pytest.raises(CommandError) as failure:
        call_command("worker_health", "--hostname", "nobody@nowhere", "--timeout", "0.5")
    assert str(failure.value) == "nobody@nowhere did not answer a ping within 0.5 s"


@pytest.mark.parametrize(
    ("given", "pinged"),
    [
        (None, f"celery@{socket.gethostname()}"),  # the worker's own default name
        ("worker-7", "celery@worker-7"),
        ("web@%h", f"web@{socket.gethostname()}"),
    ],
)
def test_worker_health_pings_the_name_a_worker_gives_itself(broker, given, pinged):
    arguments = ["--timeout", "0.2"] + (["--hostname", given] if given else [])
    with pytest.raises(CommandError, match=f"^{pinged} did not answer"):
        call_command("worker_health", *arguments)


def test_worker_health_exits_1_in_one_line_when_the_broker_is_down(tmp_path):
    port = closed_port()
    started = time.monotonic()
    result = manage(
        "worker_health",
        "--timeout",
        "2",
        REDIS_URL=f"redis://:s3cret@127.0.0.1:{port}/0",
        CURATION_VAR_DIR=str(tmp_path),
    )
    assert time.monotonic() - started < 30
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("CommandError: the broker cannot be reached")
    assert "s3cret" not in line and "Traceback" not in result.stderr
    assert not result.stdout
