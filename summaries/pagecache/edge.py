"""What shared HTTP caches in front of the site (Varnish, a CDN) may keep, and for how long.

`finish` runs on every answer that passes the page cache middleware (everything but static
files):

- A public answer (Cache-Control `public`: reader pages, feeds, sitemaps, oEmbed,
  anonymous API reads and those of read-only tokens, which are the same, their 404s) to a
  GET or HEAD with no session cookie, that sets no cookie, gets `s-maxage`
  (HTTP_CACHE_S_MAXAGE, less when a scheduled publication comes sooner, so that a shared
  cache does not outlive it) and its cache tags (tags.py) in HTTP_CACHE_TAG_HEADER, `all` among
  them.
- Anything else (signed-in users, previews, the admin, forms with a CSRF cookie, answers
  that set a cookie, POSTs, and answers the page cache would not store under the request's
  address: made-up parameters, API reads asking for another rendering, `keep_private`) is
  made `private` with no tags: a shared cache never keeps it.
"""

import threading
import time
from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import patch_cache_control

from . import tags
from .generation import current

_PUBLIC_STATUSES = frozenset({200, 203, 204, 300, 304, 404, 410})
_MISSING_STATUSES = frozenset({404, 410})
_SHARED_DIRECTIVES = ("public", "s-maxage")
API_PREFIX = "/api/"


# Set on an answer that is public to browsers but must not be kept by a shared cache for
# everyone (middleware.shared_caches_may_keep).
PRIVATE_ATTRIBUTE = "curation_not_shared"


def keep_private(response: HttpResponseBase) -> HttpResponseBase:
    """Make `finish` give this answer to its client only (Cache-Control private)."""
    setattr(response, PRIVATE_ATTRIBUTE, True)
    return response


def tag(response: HttpResponseBase, names: Iterable[str]) -> HttpResponseBase:
    """Name what a public answer shows, for purges by tag (tags.py)."""
    response[settings.HTTP_CACHE_TAG_HEADER] = tags.header_value(names)
    return response


def _directives(response: HttpResponseBase) -> list[str]:
    return [d.strip() for d in response.get("Cache-Control", "").split(",") if d.strip()]


def _names(directives: list[str]) -> set[str]:
    return {d.split("=", 1)[0].strip().lower() for d in directives}


def _is_private_request(request: HttpRequest) -> bool:
    return request.method not in ("GET", "HEAD") or settings.SESSION_COOKIE_NAME in request.COOKIES


def is_public(request: HttpRequest, response: HttpResponseBase, names: set[str]) -> bool:
    """Whether a shared cache may keep this answer for every anonymous reader."""
    return (
        "public" in names
        and not names & {"private", "no-store", "no-cache"}
        and response.status_code in _PUBLIC_STATUSES
        and not response.cookies
        and not response.has_header("Set-Cookie")
        and not _is_private_request(request)
        and not getattr(response, PRIVATE_ATTRIBUTE, False)
    )


class _NextPublication:
    """When the next scheduled summary goes live, as the page cache last read it (it does
    whenever it stores a page), for the content generation it read it at."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.known: tuple[int, float | None] | None = None

    def remember(self, generation: int, until: float | None) -> None:
        """Keep what the page cache read at `generation`: seconds until the next one."""
        with self.lock:
            self.known = (generation, None if until is None else time.time() + until)

    def seconds(self) -> float | None:
        """Seconds until the next scheduled publication, if known at the current generation
        and still ahead; None otherwise (none scheduled, or not known: reading it would
        cost a query on answers the page cache does not keep)."""
        with self.lock:
            known = self.known
        if known is None or known[1] is None or known[0] != current().content:
            return None
        until = known[1] - time.time()
        return until if until > 0 else None


next_publication = _NextPublication()


def shared_lifetime() -> int:
    """Seconds a shared cache may keep an answer from now: HTTP_CACHE_S_MAXAGE, or less when
    a scheduled publication comes sooner (where known). A publication is purged when it
    goes live anyway (purge.py); this keeps a cache with no purges from outliving it."""
    longest = int(settings.HTTP_CACHE_S_MAXAGE)
    until = next_publication.seconds()
    if until is None:
        return longest
    return max(0, min(longest, int(until)))


def _make_private(response: HttpResponseBase, directives: list[str]) -> None:
    kept = [d for d in directives if d.split("=", 1)[0].strip().lower() not in _SHARED_DIRECTIVES]
    if "private" not in _names(kept) and "no-store" not in _names(kept):
        kept.insert(0, "private")
    response["Cache-Control"] = ", ".join(kept)


def finish(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """Give a public answer its shared lifetime and tags; make any other one private."""
    header = settings.HTTP_CACHE_TAG_HEADER
    directives = _directives(response)
    names = _names(directives)
    if not is_public(request, response, names):
        if response.has_header(header):
            del response[header]
        _make_private(response, directives)
        return response
    if "immutable" not in names:
        lifetime = shared_lifetime()
        if request.path.startswith(API_PREFIX):
            # API answers show every check's time and result, which change with no purge
            # (only labels on pages are purged): kept as long as browsers keep them.
            lifetime = min(lifetime, settings.API_CACHE_MAX_AGE)
        patch_cache_control(response, s_maxage=lifetime)
    shown = response.get(header, "").split()
    if not shown:
        shown = [tags.MISSING if response.status_code in _MISSING_STATUSES else tags.OTHER]
    if tags.EVERY not in shown:
        tag(response, [*shown, tags.EVERY])
    return response
