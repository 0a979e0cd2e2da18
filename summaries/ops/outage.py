"""503, not 500, while the database or the cache's Redis cannot be reached.

`is_outage` tells an unreachable backing service (PostgreSQL down, restarting or refusing
connections, an SQLite file that cannot be opened or stays locked, Redis unreachable)
from a query that failed (a missing table, a deadlock, a statement timeout), which stays
a 500. `OutageMiddleware` answers reader pages and the admin with a 503 page and
Retry-After; the API's exception handler (summaries/api/errors.py) answers its views in
the API's JSON error shape, with the same test and Retry-After. Cached pages are still
served meanwhile (the page cache answers before any view runs), and pages are served
uncached while only the cache is down (summaries/pagecache/middleware.py).
"""

import logging
import sqlite3

import redis
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template import loader
from django.utils.cache import add_never_cache_headers

logger = logging.getLogger(__name__)

# Seconds a client is asked to wait before trying again.
RETRY_AFTER = 30

# PostgreSQL error classes (SQLSTATE) that mean the server cannot serve this connection:
# 08 connection exception, 53 insufficient resources (too many connections, disk full),
# 57P operator intervention (shutting down, crashed, starting up).
_UNAVAILABLE_SQLSTATES = ("08", "53", "57P")
_SQLITE_UNAVAILABLE = {"SQLITE_CANTOPEN", "SQLITE_BUSY"}


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` says a database or Redis cannot be reached, rather than that a query
    failed."""
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return True
    if isinstance(exc, InterfaceError):  # the connection is closed or broken
        return True
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    if isinstance(cause, sqlite3.OperationalError):
        return getattr(cause, "sqlite_errorname", "") in _SQLITE_UNAVAILABLE
    if not type(cause).__module__.startswith("psycopg"):
        return False
    sqlstate = getattr(cause, "sqlstate", None)
    # No SQLSTATE: no answer from the server (refused, timed out, closed under us).
    return sqlstate is None or sqlstate.startswith(_UNAVAILABLE_SQLSTATES)


def log_outage(exc: BaseException, path: str) -> None:
    logger.warning("Backing service unreachable: %s answered 503", path, exc_info=exc)


def unavailable_page() -> HttpResponse:
    """The reader's 503: no detail of what failed, never stored, come back shortly."""
    response = HttpResponse(loader.render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER)
    add_never_cache_headers(response)
    return response


class OutageMiddleware:
    """Answer a view that found a backing service unreachable with a 503 page.

    API paths are left to the API's exception handler, which answers in its own shape.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if request.path_info.startswith("/api/") or not is_outage(exception):
            return None
        log_outage(exception, request.path)
        return unavailable_page()
