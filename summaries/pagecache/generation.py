"""The content generation: one number that every cached page and fragment is stored with.

Any change to what readers see calls `content_changed()`, which bumps the number, so every
page and fragment stored before is stale at once (edits are rare, reads are many). A stored
value never outlives the next scheduled publication (`page_ttl`), so a scheduled summary
goes live on every page on time with no periodic job.
"""

import logging
import time
from datetime import timedelta

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from summaries.models import Summary

logger = logging.getLogger(__name__)

GENERATION_KEY = "content-generation"
# Moves whenever check results are recorded. API responses show every check's details
# (its time, response time, status), so they are stored with both numbers; reader pages
# show only labels, which move the content generation when they change (checking/record.py).
CHECKS_GENERATION_KEY = "checks-generation"
# When content last changed (time.time() of the last bump): pages rendered close to it get
# no Last-Modified (summaries/pagecache/pages.py).
CHANGED_AT_KEY = "content-changed-at"
PAGE_TTL = 300  # seconds; the generation makes stale pages unreachable anyway


def _first_generation() -> int:
    """Where numbering starts when the generation is missing (a new or restarted cache).

    The clock in microseconds, not 1: a process's copies of pages from before a restart
    must never match the new numbering by chance.
    """
    return time.time_ns() // 1000


def current_generation() -> int:
    generation = cache.get(GENERATION_KEY)
    if generation is None:
        first = _first_generation()
        if cache.add(GENERATION_KEY, first, timeout=None):
            # A new numbering is a change as far as dates go: what was served before it
            # is unknown.
            cache.set(CHANGED_AT_KEY, time.time(), timeout=None)
        generation = cache.get(GENERATION_KEY, first)
    return generation


def _increment(key: str = GENERATION_KEY) -> None:
    try:
        cache.incr(key)
    except ValueError:  # the key is gone (evicted or never set): start again
        # add, not set: another process may have started again and bumped meanwhile, and
        # overwriting its number could bring back one that pages were stored with.
        if not cache.add(key, _first_generation(), timeout=None):
            cache.incr(key)


def _bump() -> None:
    try:
        _increment()
        cache.set(CHANGED_AT_KEY, time.time(), timeout=None)
    except Exception:  # noqa: BLE001 - the cache is down: the write that got here stands
        logger.warning(
            "Could not mark cached pages stale (cache unreachable); they expire within %s s",
            PAGE_TTL,
            exc_info=True,
        )


def content_changed() -> None:
    """Make every cached page and fragment stale: now, and again once the change is committed.

    Every write path calls it after changing anything a reader or an anonymous API client
    may see (editing services, check results, related lists, bulk loads).

    The second bump drops pages that a reader cached from the old data while the
    transaction was still open.
    """
    _bump()
    transaction.on_commit(_bump)


def checks_recorded() -> None:
    """Make cached API responses stale after check results were written (now and on
    commit, as content_changed); reader pages are left alone."""

    def bump() -> None:
        try:
            _increment(CHECKS_GENERATION_KEY)
        except Exception:  # noqa: BLE001 - the cache is down: they expire within PAGE_TTL
            logger.warning("Could not mark cached API responses stale", exc_info=True)

    bump()
    transaction.on_commit(bump)


def _checks_generation(found: dict):
    value = found.get(CHECKS_GENERATION_KEY)
    if value is None:
        first = _first_generation()
        cache.add(CHECKS_GENERATION_KEY, first, timeout=None)
        value = cache.get(CHECKS_GENERATION_KEY, first)
    return value


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


def read(key: str) -> tuple[int, tuple | None]:
    """(current generation, what `key` holds if it was stored at that generation).

    One cache round trip: what is stored under a key starts with its generation.
    """
    found = cache.get_many([GENERATION_KEY, key])
    generation = found.get(GENERATION_KEY)
    if generation is None:
        return current_generation(), None
    stored = found.get(key)
    if stored is None or stored[0] != generation:
        return generation, None
    return generation, stored


def read_with_change_time(
    key: str, *, with_checks: bool = False
) -> tuple[int | tuple, float | None, tuple | None]:
    """As `read`, with the time content last changed, in the same round trip.

    With `with_checks` (API responses) the generation is the pair (content generation,
    checks generation).

    The time is None when the numbering has just started again. When it was evicted, or
    stored by no earlier release, it is counted from now.
    """
    keys = [GENERATION_KEY, CHANGED_AT_KEY, key]
    if with_checks:
        keys.append(CHECKS_GENERATION_KEY)
    found = cache.get_many(keys)
    generation = found.get(GENERATION_KEY)
    if generation is None:
        generation = current_generation()
        if with_checks:
            generation = (generation, _checks_generation(found))
        return generation, None, None
    if with_checks:
        generation = (generation, _checks_generation(found))
    changed_at = found.get(CHANGED_AT_KEY)
    if changed_at is None:
        changed_at = time.time()
        cache.add(CHANGED_AT_KEY, changed_at, timeout=None)
    stored = found.get(key)
    if stored is None or stored[0] != generation:
        stored = None
    return generation, changed_at, stored


def write(key: str, value, ttl: int) -> bool:
    """Store in the shared cache; a full or unreachable cache never fails a page."""
    return write_many({key: value}, ttl)


def write_many(values: dict, ttl: int) -> bool:
    """Store several values in one round trip (Redis); as `write` otherwise."""
    try:
        failed = cache.set_many(values, ttl)
    except Exception:  # noqa: BLE001 - Redis out of memory or down, a full disk: log it
        logger.warning("Could not store %s in the cache", ", ".join(values), exc_info=True)
        return False
    return not failed
