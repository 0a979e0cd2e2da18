"""Reads of anonymous API clients from a PostgreSQL read replica (`DATABASE_REPLICA_URL`).

Only anonymous GET/HEAD requests to the API read from the replica: they are the bulk of
read traffic, and nobody waits there to see their own write. Everything else reads the
primary: editors (who must see what they just saved), reader pages (the page cache keeps a
page until content changes, so a page rendered from a lagging replica would stay stale),
Celery tasks and commands. Within a request that may use the replica, any write, and any
read inside a transaction, sends every later read of that request to the primary: a request
never reads from the replica data it has just written.
"""

from contextvars import ContextVar

from django.conf import settings
from django.db import connections

REPLICA = "replica"
PRIMARY = "default"

# Whether this request may read from the replica, and whether it has written.
_replica_allowed: ContextVar[bool] = ContextVar("replica_allowed", default=False)
_wrote: ContextVar[bool] = ContextVar("wrote", default=False)


class ReplicaRouter:
    """Send a request's reads to the replica while the request allows it (see module)."""

    def db_for_read(self, model, **hints):
        if not _replica_allowed.get() or _wrote.get():
            return PRIMARY
        if connections[PRIMARY].in_atomic_block:
            return PRIMARY  # a transaction reads what it writes
        return REPLICA

    def db_for_write(self, model, **hints):
        _wrote.set(True)
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the same data on both databases

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == PRIMARY  # the replica follows the primary


def may_read_replica(request) -> bool:
    """Anonymous reads of the API: no session cookie, no Authorization header."""
    return (
        request.method in ("GET", "HEAD")
        and request.path_info.startswith("/api/")
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "HTTP_AUTHORIZATION" not in request.META
    )


class ReplicaMiddleware:
    """Decide, per request, whether its reads may go to the replica."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        allowed = _replica_allowed.set(may_read_replica(request))
        wrote = _wrote.set(False)
        try:
            return self.get_response(request)
        finally:
            _replica_allowed.reset(allowed)
            _wrote.reset(wrote)
