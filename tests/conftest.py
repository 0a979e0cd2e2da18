"""Test settings and shared fixtures.

Unit tests need no Redis, PostgreSQL or network: MD5 hasher, plain static storage, a
local-memory cache and Celery tasks called directly (eager off). Tests marked `integration`
use the configured services as they are (DATABASE_URL, REDIS_URL), a real Celery worker
process and a real browser (tests/integration/).
"""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from curation.celery import app as celery_app
from tests.clients import logged_in, token_client
from tests.factories import EditorFactory, ReviewerFactory

# Playwright's sync API runs an event loop in the test thread; the ORM calls a test makes
# beside it are still synchronous. Test-only: never set this in the service.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
# Nothing reaches the internet: the web archive's default endpoint is replaced by a
# loopback address nothing listens on (the discard port), here and in the processes
# (workers, servers) tests start; tests of archived copies point it at their own stub.
NO_ARCHIVE = "http://127.0.0.1:9"
os.environ["ARCHIVE_ENDPOINT"] = NO_ARCHIVE
# Nor does any other request or DNS query: only the allowed (loopback) networks are
# contacted and names are looked up in /etc/hosts (a video's YouTube thumbnail, a cited
# public page, a webhook to a public name are refused), in the processes tests start too
# (this process's settings are already read: pytest_configure overrides them).
os.environ["FETCH_PUBLIC"] = "false"

# Tasks sent during tests go to their own queue, so that a development worker consuming the
# default queue on the same broker never takes them (and the test worker takes nothing else).
TEST_QUEUE = "curation-tests"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # No calls home: this machine has no network, and refused connections slow Chromium down.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

_CONFIGURED_CACHES = settings.CACHES
_LOCMEM_CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


def _integration_caches() -> dict:
    """The configured cache; without Redis, the file cache in a folder of the tests' own.

    As the test database is a file of its own: var/cache is shared by every process using
    this checkout, a development server too, whose pages and fragments (keyed by name, not
    by database) must not meet the tests'.
    """
    default = _CONFIGURED_CACHES["default"]
    if default["BACKEND"] != "summaries.pagecache.filecache.FileBasedCache":
        return _CONFIGURED_CACHES
    suffix = os.environ.get("PYTEST_XDIST_WORKER", "")
    location = settings.VAR_DIR / f"test-cache{'-' + suffix if suffix else ''}"
    return {"default": {**default, "LOCATION": str(location.absolute())}}


_INTEGRATION_CACHES = _integration_caches()


def pytest_configure(config):
    # override_settings (never disabled) also resets what Django cached from the old values.
    override_settings(
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        # The manifest storage fails on {% static %} for files that were never collected.
        STORAGES={
            **settings.STORAGES,
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        },
        CACHES=_LOCMEM_CACHES,
        # No listener thread holding a connection to the test database (which must be
        # dropped at the end): tests that listen start and stop one of their own
        # (tests/test_generation_listening.py). Servers the tests start listen as usual.
        PAGE_CACHE_LISTEN=False,
        ARCHIVE_ENDPOINT=NO_ARCHIVE,
        FETCH_PUBLIC=False,
        # Checks keep no evidence unless a test turns the vault on with a storage of its own
        # (tests/test_evidence.py: the `vault` fixture), so nothing is written under var/.
        EVIDENCE_ENABLED=False,
        # Absolute links start with SITE_URL: the test client's own address.
        SITE_URL="http://testserver",
    ).enable()
    # WhiteNoise warns about a missing STATIC_ROOT; tests serve static files from the finders.
    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
    # Celery reads its configuration once; change it on the app, not in settings.
    celery_app.conf.task_always_eager = False
    celery_app.conf.task_eager_propagates = True
    celery_app.conf.task_default_queue = TEST_QUEUE


def _is_integration(node) -> bool:
    return node.get_closest_marker("integration") is not None


@pytest.fixture(autouse=True)
def _cache_per_test(request):
    """Unit tests get a fresh local-memory cache; integration tests the configured one
    (without Redis, an empty file cache of their own: `_integration_caches`). Every test
    starts with no copy of a page in this process (summaries/pagecache/middleware.py)."""
    from summaries.pagecache.middleware import forget_local_pages

    forget_local_pages()
    if _is_integration(request.node):
        override = request.getfixturevalue("settings")
        override.CACHES = _INTEGRATION_CACHES
        if _INTEGRATION_CACHES is not _CONFIGURED_CACHES:
            from django.core.cache import cache

            cache.clear()  # the tests' own folder: empty, as a new process's memory was
        yield
        return
    yield
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, request):
    """On SQLite, use a test database file when integration tests run.

    pytest-django's default SQLite test database lives in memory, which a Celery worker
    process cannot see; a file under var/ can be shared with it.
    """
    database = settings.DATABASES["default"]
    if not database["ENGINE"].endswith("sqlite3"):
        return
    if not any(_is_integration(item) for item in request.session.items):
        return
    suffix = os.environ.get("PYTEST_XDIST_WORKER", "")
    name = settings.VAR_DIR / f"test-db{'-' + suffix if suffix else ''}.sqlite3"
    name.parent.mkdir(parents=True, exist_ok=True)
    database.setdefault("TEST", {})["NAME"] = str(name)


@pytest.fixture
def celery_eager():
    """Run tasks in-process when they are sent (`.delay()` returns after the task ran)."""
    celery_app.conf.task_always_eager = True
    yield celery_app
    celery_app.conf.task_always_eager = False


@pytest.fixture
def editor(db):
    """In the Editors group: writes summaries and sends them to review, never publishes."""
    return EditorFactory(username="eve")


@pytest.fixture
def reviewer(db):
    """In the Editors and the Reviewers groups: publishes, schedules, sends back."""
    return ReviewerFactory(username="rita")


@pytest.fixture
def editor_client(editor):
    """A test client signed in as `editor` (the admin, the site)."""
    return logged_in(editor)


@pytest.fixture
def reviewer_client(reviewer):
    """A test client signed in as `reviewer`."""
    return logged_in(reviewer)


@pytest.fixture
def editor_api(editor):
    """An API client sending `editor`'s token."""
    return token_client(editor)


@pytest.fixture
def reviewer_api(reviewer):
    """An API client sending `reviewer`'s token."""
    return token_client(reviewer)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium; Playwright never downloads a browser here."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


def _transactional(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("django_db")
    if marker is not None and (
        marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")
    ):
        return True
    return bool({"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ())))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Transactional tests run after all others, as Django orders them.

    pytest-django sorts them last, but pytest then regroups tests by session-scoped
    parametrised fixtures (Playwright's browser name), which put browser tests in the
    middle. A transactional test ends with the database flushed (the data migrations'
    groups gone, restored only at the start of the next serialized_rollback test), so a
    test after it saw an empty database.
    """
    items.sort(key=_transactional)
