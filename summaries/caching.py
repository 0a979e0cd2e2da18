"""Whole-page caching for reader pages, invalidated by a content generation number.

Every cached page's key includes the current generation; any save or delete of content
bumps it, so all pages are rebuilt on their next request (edits are rare, reads are many).
A page's lifetime never reaches past the next scheduled publish time, so a scheduled
summary appears on every page when it goes live, with no periodic job.
"""

import functools
import hashlib
from datetime import timedelta

from django.core.cache import cache
from django.db import transaction
from django.http import HttpResponse
from django.utils import timezone
from django.utils.cache import patch_cache_control

GENERATION_KEY = "content-generation"
PAGE_TTL = 300  # seconds; the generation makes stale pages unreachable anyway
BROWSER_TTL = 60  # what browsers and proxies may keep without asking again


def current_generation() -> int:
    generation = cache.get(GENERATION_KEY)
    if generation is None:
        cache.add(GENERATION_KEY, 1, timeout=None)
        generation = cache.get(GENERATION_KEY, 1)
    return generation


def _bump() -> None:
    try:
        cache.incr(GENERATION_KEY)
    except ValueError:  # the key is gone (evicted or never set): start again
        cache.set(GENERATION_KEY, 2, timeout=None)


def bump_generation() -> None:
    """Make every cached page stale: now, and again once the change is committed.

    The second bump drops pages that a reader cached from the old data while the
    transaction was still open.
    """
    _bump()
    transaction.on_commit(_bump)


def _seconds_until_next_publication() -> int | None:
    from .models import Summary

    upcoming = (
        Summary.objects.scheduled().order_by("publish_at").values_list("publish_at", flat=True)
    )
    at = upcoming.first()
    if at is None:
        return None
    return max(1, int((at - timezone.now()) / timedelta(seconds=1)) + 1)


def page_ttl() -> int:
    until_next = _seconds_until_next_publication()
    return PAGE_TTL if until_next is None else min(PAGE_TTL, until_next)


def serve_cached(request, render):
    """The response of `render()` for this request, from the cache when possible.

    Only anonymous GET/HEAD requests are cached (staff see previews and admin links), and
    only 200 responses are stored.
    """
    if request.method not in ("GET", "HEAD") or request.user.is_authenticated:
        return render()
    # The host is part of the key: pages carry absolute canonical URLs.
    address = f"{request.get_host()}{request.get_full_path()}"
    key = f"page:{current_generation()}:{hashlib.sha256(address.encode()).hexdigest()}"
    cached = cache.get(key)
    if cached is not None:
        content, content_type = cached
        response = HttpResponse(content, content_type=content_type)
    else:
        response = render()
        if response.status_code != 200:
            return response
        if hasattr(response, "render"):
            response.render()
        cache.set(key, (response.content, response["Content-Type"]), page_ttl())
    patch_cache_control(response, public=True, max_age=BROWSER_TTL)
    return response


def cached_page(view):
    """Decorate a function view (or a feed) with serve_cached."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        return serve_cached(request, lambda: view(request, *args, **kwargs))

    return wrapper


class CachedPageMixin:
    """Serve a class-based reader view through serve_cached."""

    def dispatch(self, request, *args, **kwargs):
        parent = super().dispatch
        return serve_cached(request, lambda: parent(request, *args, **kwargs))
