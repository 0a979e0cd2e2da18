"""Parts of pages that are costly and shared by many of them, kept as fresh as pages.

The setting PAGE_CACHE_FRAGMENTS (curation/settings.py, default True) turns the fragment
cache off when False: every fragment is computed afresh, as on the first request after an
edit. For measuring a page with no cache at all (bench/render_uncached.py, the "cold" runs
of bench/run_pages.py).
"""

import logging
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings

from .generation import current_generation, page_ttl, read, write

logger = logging.getLogger(__name__)

T = TypeVar("T")


def cached_fragment(name: str, compute: Callable[[], T]) -> T:
    """`compute()`, or what it returned before if no content has changed since.

    For parts of pages that are costly and shared by many of them (a channel's filter
    choices, the number of videos in a list). Kept like a page: with the generation it was
    computed at, never past the next scheduled publication, so it is as fresh as the page
    cache. A value computed while content changes carries the old generation, so it is
    recomputed on the next read.
    """
    if not settings.PAGE_CACHE_FRAGMENTS:
        return compute()
    key = f"fragment:{name}"
    generation = current_generation()
    try:
        stored = read(key, generation)
    except Exception:  # noqa: BLE001 - the cache is down: compute, keep nothing
        logger.warning("Cache unreachable: fragment %s computed afresh", name, exc_info=True)
        return compute()
    if stored is not None:
        kept: T = stored[1]
        return kept
    value = compute()
    write(key, (generation, value), page_ttl())
    return value
