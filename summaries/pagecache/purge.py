"""Purging the HTTP caches in front of the site by tag, after every change.

`purge_after_commit(tags)` writes a `CachePurge` row in the transaction of the change (an
outbox: a purge survives a broker or worker that dies) and queues `send_cache_purge` with its
id once the transaction commits; `send` posts the tags to the configured backend and deletes
the row only once every cache confirmed it. A purge that fails is retried by its task (with
backoff), and `sweep` queues again every row left behind. Purging is idempotent: sending one
twice costs a little cache, never a stale page.

Backends (HTTP_CACHE_PURGE_BACKEND): "" none (no rows are written), "varnish" (VarnishXkey),
or the dotted path of a class with the `PurgeBackend` interface (docs/deploy.md says how a
CDN would plug in).
"""

import logging
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from summaries.models import CachePurge

from .tags import header_value

logger = logging.getLogger(__name__)

SEND_TASK = "summaries.tasks.send_cache_purge"
# A row younger than this is left to the task queued with it; older ones are swept.
SWEEP_AFTER = timedelta(seconds=10)
SWEEP_BATCH = 500
# Tags per request: keeps each header well under the caches' header size limits (8 KB).
TAGS_PER_REQUEST = 200


class PurgeFailed(Exception):
    """A cache did not confirm a purge (unreachable, timed out, or not a 200): try again."""


class PurgeBackend(Protocol):
    def purge(self, tags: list[str]) -> None:
        """Drop every cached answer carrying any of `tags`; raise PurgeFailed unless every
        cache confirmed it."""


class VarnishXkey:
    """PURGE / with an `xkey-purge` header to each Varnish of HTTP_CACHE_PURGE_URLS, as
    deploy/varnish/curation.vcl expects; confirmed by a 200 from each."""

    method = "PURGE"

    def __init__(self, urls: list[str] | None = None, timeout: float | None = None):
        self.urls = list(settings.HTTP_CACHE_PURGE_URLS if urls is None else urls)
        self.timeout = settings.HTTP_CACHE_PURGE_TIMEOUT if timeout is None else timeout

    def purge(self, tags: list[str]) -> None:
        failures = []
        for url in self.urls:
            try:
                self._purge_one(url, tags)
            except PurgeFailed as exc:
                failures.append(str(exc))
        if failures:
            raise PurgeFailed("; ".join(failures))

    def _purge_one(self, url: str, tags: list[str]) -> None:
        if urlsplit(url).scheme not in ("http", "https"):
            raise PurgeFailed(f"{url}: not an http(s) address")
        request = urllib.request.Request(  # noqa: S310 - scheme checked above
            url, method=self.method, headers={"xkey-purge": header_value(tags)}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        except (OSError, ValueError) as exc:  # refused, timed out, reset, bad address
            raise PurgeFailed(f"{url}: {exc}") from exc
        if status != 200:
            raise PurgeFailed(f"{url}: answered {status}")


BACKENDS = {"varnish": VarnishXkey}


def backend() -> PurgeBackend | None:
    """The configured backend, or None when purges go nowhere."""
    name = settings.HTTP_CACHE_PURGE_BACKEND
    if not name:
        return None
    cls = BACKENDS.get(name) or import_string(name)
    return cls()


def enabled() -> bool:
    return bool(settings.HTTP_CACHE_PURGE_BACKEND)


def _queue(purge_id: int, at: datetime | None = None) -> None:
    options: dict[str, Any] = {"args": (purge_id,)}
    if settings.HTTP_CACHE_PURGE_QUEUE:
        options["queue"] = settings.HTTP_CACHE_PURGE_QUEUE
    if at is not None:
        options["eta"] = at
    current_app.tasks[SEND_TASK].apply_async(**options)


def _queue_on_commit(purge_id: int, at: datetime | None = None) -> None:
    def send() -> None:
        _queue(purge_id, at)

    send.__qualname__ = f"{SEND_TASK}.delay"
    # Robust: a broker down at commit time must not fail the change; the sweeper sends it.
    transaction.on_commit(send, robust=True)


def purge_after_commit(tags: set[str] | frozenset[str], *, at: datetime | None = None) -> None:
    """Purge `tags` from the HTTP caches once the current transaction commits (at `at`, a
    scheduled publication, if given). A no-op without a backend."""
    if not enabled() or not tags:
        return
    purge = CachePurge.objects.create(tags=header_value(tags), due_at=at or timezone.now())
    _queue_on_commit(purge.pk, at)


def send(purge_id: int) -> bool:
    """Send one purge; delete its row once confirmed. False if there was nothing to do
    (the row is gone: sent already, or not due yet). Raises PurgeFailed to be retried."""
    purge = CachePurge.objects.filter(pk=purge_id, due_at__lte=timezone.now()).first()
    if purge is None:
        return False
    target = backend()
    if target is None:  # purges were turned off since: nothing will ever send it
        CachePurge.objects.filter(pk=purge_id).delete()
        return False
    tags = purge.tags.split()
    try:
        for start in range(0, len(tags), TAGS_PER_REQUEST):
            target.purge(tags[start : start + TAGS_PER_REQUEST])
    except PurgeFailed as exc:
        CachePurge.objects.filter(pk=purge_id).update(
            attempts=purge.attempts + 1, last_error=str(exc)[:2000]
        )
        raise
    CachePurge.objects.filter(pk=purge_id).delete()
    return True


def sweep() -> int:
    """Queue again every due purge left behind (a lost task, retries used up); how many."""
    if not enabled():
        return 0
    now = timezone.now()
    left = CachePurge.objects.filter(due_at__lte=now - SWEEP_AFTER).values_list("pk", flat=True)
    ids = list(left[:SWEEP_BATCH])
    for purge_id in ids:
        _queue(purge_id)
    if ids:
        logger.warning("Sent %d cache purges again", len(ids))
    return len(ids)
