"""The content generation: one number that every cached page and fragment is stored with.

Any change to what readers see calls `content_changed()`, which moves the number, so every
page and fragment stored before is stale at once (edits are rare, reads are many). A stored
value never outlives the next scheduled publication (`page_ttl`), so a scheduled summary
goes live on every page on time with no periodic job.

The number lives in the database (models.ContentGeneration, one row), not in the cache:
`content_changed()` moves it in the same transaction as the change, so it moves exactly
when the change commits, and a cache that restarts from an old snapshot (or loses writes)
can only bring back values stored under numbers the database has moved past. On
PostgreSQL each process keeps a copy that LISTEN/NOTIFY keeps current (listening.py), so a
request reads it from memory; otherwise reading it is one query by primary key, made once
per request (`remembered_per_request`).
"""

import contextlib
import logging
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from datetime import timedelta
from typing import Any, NamedTuple

from django.apps import apps as global_apps
from django.apps.registry import Apps
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, router, transaction
from django.utils import timezone

from summaries.models import ContentGeneration, Summary

from . import listening, tags
from .purge import purge_after_commit

logger = logging.getLogger(__name__)

PAGE_TTL = 300  # seconds; the generation makes stale pages unreachable anyway

_TABLE = ContentGeneration._meta.db_table
_ROW = ContentGeneration.ROW_ID


class Current(NamedTuple):
    """The row as a request sees it.

    `checks` moves whenever check results are recorded: API responses show every check's
    details (its time, response time, status), so they are stored with both numbers; reader
    pages show only labels, which move `content` when they change (checking/record.py).
    `changed_at` is when content last changed (time.time()): pages rendered close to it get
    no Last-Modified (summaries/pagecache/pages.py).
    """

    content: int
    checks: int
    changed_at: float


# The row as read by the current request, set while `remembered_per_request` is active.
_remembered: ContextVar[dict[str, "Current"] | None] = ContextVar(
    "content_generation", default=None
)


@contextlib.contextmanager
def remembered_per_request() -> Iterator[None]:
    """Read the row at most once inside this block (a request), unless content changes in it.

    Safe because a value stored under the number read at the start was computed from data
    read after that number was current, and any commit since would have moved it.
    """
    token = _remembered.set({})
    try:
        yield
    finally:
        _remembered.reset(token)


def current() -> Current:
    """The content and checks generations and the last change time, from the primary
    database (never a replica: a lagging one would confirm stale values), or from this
    process's copy of it while a listener keeps that current."""
    remembered = _remembered.get()
    if remembered:
        return remembered["current"]
    value = _as_current(listening.copy() or _read_row())
    if remembered is not None:
        remembered["current"] = value
    return value


def listened() -> Current | None:
    """The generations from this process's listener copy, or None when only a read of
    the row could tell them (see listening.copy)."""
    found = listening.copy()
    return None if found is None else _as_current(found)


def _as_current(found: tuple[Any, ...]) -> Current:
    return Current(int(found[0]), int(found[1]), float(found[2]))


def current_generation() -> int:
    return current().content


def _read_row() -> tuple[Any, ...]:
    """The row's columns (created first if it is missing)."""
    for _ in range(2):
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(listening.READ)
            found: tuple[Any, ...] | None = cursor.fetchone()
        if found is not None:
            return found
        _create_row()
    raise DatabaseError("The content generation row could not be created.")


def _new_number() -> int:
    """Where numbering starts (a new row): the clock in microseconds, so that a row created
    again (a database restored or emptied) never meets the numbers pages were stored with."""
    return time.time_ns() // 1000


def _create_row(
    model: type[ContentGeneration] = ContentGeneration, using: str = DEFAULT_DB_ALIAS
) -> None:
    """The row, if no process created it first. A new numbering is a change as far as
    dates go: what was served before it is unknown."""
    first = _new_number()
    model.objects.using(using).bulk_create(
        [model(id=_ROW, content=first, checks=first, changed_at=time.time())],
        ignore_conflicts=True,
    )


def create_row_after_migrate(
    *, using: str = DEFAULT_DB_ALIAS, apps: Apps | None = None, **kwargs: object
) -> None:
    """Receiver of post_migrate: the row exists once the database is migrated, and again
    after a flush (which sends post_migrate too, without `apps`), so that requests never
    create it."""
    try:
        model = (apps or global_apps).get_model("summaries", "ContentGeneration")
    except LookupError:  # migrated back to before the table existed
        return
    if router.allow_migrate_model(using, model):
        _create_row(model, using)
        if using == DEFAULT_DB_ALIAS:
            listening.refresh()


def _move(column: str, *, dated: bool) -> None:
    """Move `column` past its value and the clock, in the current transaction (one
    statement, creating the row if it is missing).

    Past the clock too, so that a number taken by a transaction that was rolled back is
    not taken again by the next one (values may have been stored under it meanwhile).
    """
    connection = transaction.get_connection(DEFAULT_DB_ALIAS)
    greatest = "MAX" if connection.vendor == "sqlite" else "GREATEST"
    moved = f"{column} = {greatest}({_TABLE}.{column} + 1, excluded.{column})"
    if dated:
        moved += ", changed_at = excluded.changed_at"
    number = _new_number()
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_TABLE} (id, content, checks, changed_at) VALUES (%s, %s, %s, %s) "  # noqa: S608 - names are constants
            f"ON CONFLICT (id) DO UPDATE SET {moved}",
            [_ROW, number, number, time.time()],
        )
    remembered = _remembered.get()
    if remembered:
        remembered.clear()
    if not dated:
        transaction.on_commit(listening.refresh)


def _date_change() -> None:
    """Set the change time to the commit's: a page rendered just after the commit must not
    share a Last-Modified second with one rendered just before it."""
    try:
        ContentGeneration.objects.filter(id=_ROW).update(changed_at=time.time())
    except DatabaseError:
        logger.warning("Could not record when content changed", exc_info=True)
    listening.refresh()


def content_changed(purge: Iterable[str] | None = None) -> None:
    """Make every cached page and fragment stale once the current transaction commits, and
    purge the HTTP caches in front of the site (purge.py) of the answers tagged `purge`
    (tags.py), or of every answer when the caller names none.

    Every write path calls it, in the transaction that changes anything a reader or an
    anonymous API client may see (editing services, check results, related lists, bulk
    loads). The number moves in that transaction, so readers see the old number exactly as
    long as they see the old data. Costs one write, and holds the row's lock until the
    transaction ends (changes to content are serialised from that point); one more (the
    purge's outbox row) when a purge backend is configured.
    """
    _move("content", dated=True)
    transaction.on_commit(_date_change)
    purge_after_commit(frozenset(purge) if purge is not None else frozenset({tags.EVERY}))


def checks_recorded() -> None:
    """Make cached API responses stale with the transaction that recorded check results;
    reader pages are left alone."""
    _move("checks", dated=False)


def seconds_until_next_publication() -> float | None:
    """Seconds until the next scheduled summary goes live (one query); None if none is."""
    upcoming = (
        Summary.objects.scheduled().order_by("publish_at").values_list("publish_at", flat=True)
    )
    at = upcoming.first()
    if at is None:
        return None
    return (at - timezone.now()) / timedelta(seconds=1)


def page_ttl() -> int:
    return ttl_until(seconds_until_next_publication())


def ttl_until(until_next: float | None) -> int:
    """How long a value may be kept: PAGE_TTL, or until a scheduled summary goes live."""
    if until_next is None:
        return PAGE_TTL
    return min(PAGE_TTL, max(1, int(until_next) + 1))


def read(key: str, generation: object) -> tuple[Any, ...] | None:
    """What `key` holds if it was stored at `generation`, else None (one cache round trip)."""
    stored: tuple[Any, ...] | None = cache.get(key)
    if stored is None or stored[0] != generation:
        return None
    return stored


def write(key: str, value: object, ttl: int) -> bool:
    """Store in the shared cache; a full or unreachable cache never fails a page."""
    return write_many({key: value}, ttl)


def write_many(values: dict[str, Any], ttl: int) -> bool:
    """Store several values in one round trip (Redis); as `write` otherwise."""
    try:
        failed = cache.set_many(values, ttl)
    except Exception:  # noqa: BLE001 - Redis out of memory or down, a full disk: log it
        logger.warning("Could not store %s in the cache", ", ".join(values), exc_info=True)
        return False
    return not failed
