"""Whole reader pages served from the cache to anonymous readers.

Views opt in with `CachedPageMixin` or `cached_page`; `PageCacheMiddleware`, placed right
after static files and CORS (before SecurityMiddleware, whose headers a page is stored
with), answers anonymous readers from the cache before the rest of the middleware
stack, URL resolution and the view run: a stored page is served only if it was stored
under the current content generation (generation.py; on PostgreSQL a copy in memory that
LISTEN/NOTIFY keeps current, else one query). Each process also keeps copies of the pages
it served lately (`PAGE_CACHE_LOCAL_BYTES`), so that a hit on one costs no cache round
trip; otherwise the page is one round trip to the shared cache. A page is stored only under the
query string and host spelling the view served, so made-up parameters add nothing to the
cache.

Each page is stored twice, as sent with and without gzip (summaries/pagecache/pages.py:
encodings, ETag and Last-Modified, lifetimes, BREACH), compressed once when rendered; a
hit reads only the one its client accepts, and a conditional request for a page in the
cache is answered 304 from it, with no rendering and no query but the generation's.
Keys carry the release's static files (`release`): pages stored by a release whose
stylesheets and scripts had other hashed names are not served by the next one.
"""

import functools
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import urlencode

import cachetools
from django.conf import settings
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.exceptions import SuspiciousOperation
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.http.request import split_domain_port
from django.http.response import HttpResponseBase

from summaries.ops import metrics

from . import edge, listening, pages, tokens
from .generation import (
    current,
    read,
    remembered_per_request,
    seconds_until_next_publication,
    ttl_until,
    write_many,
)

logger = logging.getLogger(__name__)

# Set on a response by a view that allows the page cache to keep it: the query string,
# in canonical_query's spelling, of the page the view served ("" for none).
CACHEABLE_ATTRIBUTE = "curation_page_cache"

# Set in the environ of a request whose page was looked up before Django (front.py) and
# is not in the cache.
LOOKED_UP = "curation.page_cache_missed"

# What a page is stored with: the content generation (reader pages), or it and the checks
# generation (API responses).
Generation: TypeAlias = int | tuple[int, int]
# What a page is stored as, under its key of each encoding: (generation, content, headers,
# expires at, etag, last modified).
Stored: TypeAlias = tuple[Generation, bytes, pages.Headers, float, str, int | None]
_STORED_LENGTH = 6
View: TypeAlias = Callable[..., HttpResponseBase]


def canonical_query(pairs: Iterable[tuple[str, str]]) -> str:
    """One spelling of a query string: pairs with a value, sorted, percent-encoded."""
    return urlencode(sorted((name, value) for name, value in pairs if value))


def request_query(request: HttpRequest) -> str | None:
    """The request's query string in canonical_query's spelling; None if unreadable.

    Empty values are dropped and the order does not matter, so a filter form sent with
    empty fields shares the page of the same filters sent by a link.
    """
    if not request.META.get("QUERY_STRING"):
        return ""
    try:
        return canonical_query(
            (name, value) for name, values in request.GET.lists() for value in values
        )
    except SuspiciousOperation:  # too many parameters: the view answers 400
        return None


def _is_canonical_host(request: HttpRequest, host: str) -> bool:
    """Whether the Host header (`host`, as get_host() gives it) is spelled as pages link
    to it: lower case, no trailing dot, no port or the port the request came in on. Other
    spellings pass ALLOWED_HOSTS (which ignores case, the trailing dot and the port) but
    would each be a cache key."""
    port = split_domain_port(host)[1]
    name = host[: -len(port) - 1] if port else host
    return host == host.lower() and not name.endswith(".") and port in ("", request.get_port())


def page_key(
    request: HttpRequest, query: str | None = None, encoding: str | None = None
) -> str | None:
    """The cache key of the page a request asks for, or None when it may not be cached.

    The key is the release (`release`), the scheme, the host, the path and the canonical
    query string, and the content coding the request accepts (by default). Pages build
    their absolute links from SITE_URL (reader/absolute.py), not from the scheme or the
    host; these stay in the key so that whatever else an answer might take from them
    (behind a TLS proxy the scheme is what SECURE_PROXY_SSL_HEADER says) is never served
    under another.
    """
    if query is None:
        query = request_query(request)
    if query is None:
        return None
    host = request.get_host()
    if not _is_canonical_host(request, host):
        return None
    address = f"{release()} {request.scheme}://{host}{request.path}?{query}"
    encoding = encoding or pages.preferred_encoding(request)
    return f"page:{hashlib.sha256(address.encode()).hexdigest()}:{encoding}"


@functools.cache
def release() -> str:
    """What tells this release's pages from another's: the hash of the static files'
    manifest (their hashed names, which pages link to), "" where there is none (DEBUG).
    Read once per process: collectstatic runs before a release starts."""
    return str(getattr(staticfiles_storage, "manifest_hash", "") or "")


def _other_encoding_key(key: str, encoding: str) -> str:
    return f"{key.rsplit(':', 1)[0]}:{encoding}"


API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    """An API response: stored with the checks generation too (generation.py)."""
    return request.path.startswith(API_PREFIX)


def _accepts_json(request: HttpRequest) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    return not accept or any(kind in accept for kind in ("json", "*/*", "application/*"))


def _names_media_type_parameters(request: HttpRequest) -> bool:
    """Whether Accept gives a media type a parameter other than q (`indent=8`, `version=2`):
    the renderer may follow it, so the answer is not the one every client gets."""
    for item in request.META.get("HTTP_ACCEPT", "").split(","):
        for parameter in item.split(";")[1:]:
            if parameter.split("=", 1)[0].strip().lower() != "q":
                return True
    return False


def may_serve_cached(request: HttpRequest) -> bool:
    """Only anonymous GET/HEAD requests, and API reads with a read-only token, share
    cached pages.

    Anyone with a session cookie may be logged in (staff see previews and admin links);
    telling would cost a session read, so they are always served fresh. An API token of a
    user who cannot see unpublished work reads what anonymous clients read (tokens.py).
    The API answers only JSON: a request that does not accept it goes to the view (a 406),
    and so does one whose Accept names a media type parameter (it is never stored either).
    """
    if request.method not in ("GET", "HEAD") or settings.SESSION_COOKIE_NAME in request.COOKIES:
        return False
    if not is_api(request):
        # Accept-Datetime asks a summary page for its past (reader/memento.py): a redirect
        # made for that date, not the page every reader shares.
        return "HTTP_AUTHORIZATION" not in request.META and (
            "HTTP_ACCEPT_DATETIME" not in request.META
        )
    authorization = request.META.get("HTTP_AUTHORIZATION")
    if authorization is not None and not tokens.is_reader_token(authorization):
        return False
    return _accepts_json(request) and not _names_media_type_parameters(request)


def shared_caches_may_keep(request: HttpRequest, response: HttpResponseBase) -> bool:
    """Whether shared caches may keep this answer under the request's address, as far as
    the page cache can tell: never when the view served another query string than the one
    asked (made-up parameters, values it does not serve as written), nor an API read with
    an Accept the page cache never shares (a media type parameter, or no JSON). Such an
    answer is made private, so that a cache in front agrees with this one."""
    if is_api(request) and (not _accepts_json(request) or _names_media_type_parameters(request)):
        return False
    served = getattr(response, CACHEABLE_ATTRIBUTE, None)
    return served is None or served == request_query(request)


class LocalPages:
    """This process's copies of pages, at most `size` bytes of content, least recent out.

    A copy is served only while the database's generation equals its own and until the
    expiry stored with it (the next scheduled publication), so it is exactly as fresh as
    the shared cache; what it saves is moving tens of KB of page from Redis on every hit.
    """

    def __init__(self, size: int):
        self.size = size
        self.pages: cachetools.LRUCache[str, Stored] = cachetools.LRUCache(
            maxsize=max(size, 1), getsizeof=self._size
        )
        self.lock = threading.Lock()  # LRUCache is not thread-safe; runserver is threaded

    @staticmethod
    def _size(stored: Stored) -> int:
        return len(stored[1])

    def get(self, key: str) -> Stored | None:
        if not self.size:
            return None
        with self.lock:
            stored = self.pages.get(key)
        if stored is not None and stored[3] <= time.time():
            return None
        return stored

    def keep(self, key: str, stored: Stored) -> None:
        if self._size(stored) > self.size:
            return
        with self.lock:
            self.pages[key] = stored


_local_pages: LocalPages | None = None


def local_pages() -> LocalPages:
    """This process's copies of pages, shared by PageCacheMiddleware and the answers given
    before Django (front.py); made again when PAGE_CACHE_LOCAL_BYTES changes (tests)."""
    global _local_pages  # noqa: PLW0603 - one per process
    size = settings.PAGE_CACHE_LOCAL_BYTES
    found = _local_pages
    if found is None or found.size != size:
        found = _local_pages = LocalPages(size)
    return found


def forget_local_pages() -> None:
    """Drop this process's copies of pages (tests: generation numbers come back when a
    test's transaction is rolled back, which they never do in production)."""
    global _local_pages  # noqa: PLW0603 - one per process
    _local_pages = None


def lookup(key: str, local: LocalPages, generation: Generation) -> Stored | None:
    """The page stored under `key` at `generation` (the database's, read for this request),
    or None: this process's copy, else the shared cache's (one round trip)."""
    copy = local.get(key)
    if copy is not None and copy[0] == generation:
        return copy
    found = read(key, generation)
    # A tuple of another length was stored by an earlier release.
    if found is None or len(found) != _STORED_LENGTH or found[3] <= time.time():
        return None
    stored: Stored = found  # six items: the length was checked above
    local.keep(key, stored)
    return stored


def answer_stored(request: HttpRequest, stored: Stored) -> HttpResponse:
    _, content, headers, _, etag, modified = stored
    return pages.answer(request, content, headers, etag, modified)


def store(
    key: str,
    generation: Generation,
    changed_at: float,
    rendered_at: float,
    response: HttpResponse,
    local: LocalPages,
) -> Stored:
    """Store both encodings of a page rendered for `key` (in one write); the one of `key`.

    `changed_at` is when content last changed and `rendered_at` when the rendering began,
    for Last-Modified.
    """
    until_next = seconds_until_next_publication()
    edge.next_publication.remember(current().content, until_next)
    ttl = ttl_until(until_next)
    now = time.time()
    modified = pages.last_modified(
        rendered_at, changed_at, None if until_next is None else now + until_next
    )
    encoded = pages.representations(response, (pages.IDENTITY, pages.GZIP), modified)
    stored: dict[str, Stored] = {
        _other_encoding_key(key, encoding): (generation, body, headers, now + ttl, etag, modified)
        for encoding, (body, headers, etag, modified) in encoded.items()
    }
    if write_many(stored, ttl):
        local.keep(key, stored[key])
    return stored[key]


def is_shared(request: HttpRequest, response: HttpResponseBase) -> bool:
    """A 200 an anonymous reader got, of a page a view marked as the same for all of them."""
    return (
        getattr(response, CACHEABLE_ATTRIBUTE, None) is not None
        and response.status_code == 200
        and not response.streaming
        and not response.cookies
        and (
            # A read-only token's user is signed in, and the view judged its answer public.
            "HTTP_AUTHORIZATION" in request.META
            or not getattr(getattr(request, "user", None), "is_authenticated", False)
        )
    )


def is_storable(request: HttpRequest, response: HttpResponseBase, query: str | None) -> bool:
    """A shared page, of exactly the page the view served for this query."""
    served: str | None = getattr(response, CACHEABLE_ATTRIBUTE, None)
    return is_shared(request, response) and served is not None and served == query


class PageCacheMiddleware:
    """Answer anonymous readers from the page cache; store pages that views marked."""

    def __init__(self, get_response: View):
        self.get_response = get_response
        self.redirect_to_https = settings.SECURE_SSL_REDIRECT

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        listening.listen()
        with remembered_per_request():
            response = self.respond(request)
            # Shared caches in front keep only public answers, with their tags (edge.py).
            return edge.finish(request, response)

    def respond(self, request: HttpRequest) -> HttpResponseBase:
        if not may_serve_cached(request) or (
            # Placed before SecurityMiddleware: it redirects this request to HTTPS.
            self.redirect_to_https and not request.is_secure()
        ):
            return self.render(request)
        query = request_query(request)
        key = page_key(request, query)
        generation: Generation = 0
        changed_at = 0.0
        if key is not None:
            try:
                now = current()
            except DatabaseError:
                # Only the database tells whether a stored page is current: without it the
                # view answers (503 while the database is down).
                key = None
            else:
                generation = (now.content, now.checks) if is_api(request) else now.content
                changed_at = now.changed_at
        # A page looked up before Django (front.py) and not found is rendered at once.
        if key is not None and LOOKED_UP not in request.META:
            try:
                stored = lookup(key, local_pages(), generation)
            except Exception:  # noqa: BLE001 - the cache is down: serve the page uncached
                logger.warning("Cache unreachable: %s served uncached", request.path, exc_info=True)
                key = None
            else:
                if stored is not None:
                    metrics.PAGE_CACHE_HITS.inc()
                    return answer_stored(request, stored)
        rendered_at = time.time()
        response = self.render(request)
        if not is_shared(request, response) or not isinstance(response, HttpResponse):
            return pages.limit_error_lifetime(response)
        if key is not None and is_storable(request, response, query):
            metrics.PAGE_CACHE_MISSES.inc()
            stored = store(key, generation, changed_at, rendered_at, response, local_pages())
            return answer_stored(request, stored)
        # Shared but not kept (another spelling of the address, the cache down): validators
        # and compression still, Last-Modified not (no change time to check it against).
        encoding = pages.preferred_encoding(request)
        content, headers, etag, _ = pages.representations(response, (encoding,), None)[encoding]
        answer = pages.answer(request, content, headers, etag, None)
        if getattr(response, edge.PRIVATE_ATTRIBUTE, False):
            edge.keep_private(answer)
        return answer

    def render(self, request: HttpRequest) -> HttpResponseBase:
        """The view's answer, kept from shared caches when this cache would not store it
        under the request's address (`shared_caches_may_keep`)."""
        response = self.get_response(request)
        if not shared_caches_may_keep(request, response):
            edge.keep_private(response)
        return response


def mark_cacheable(
    response: HttpResponseBase, query: str = "", *, own_headers: bool = False
) -> HttpResponseBase:
    """Let the page cache keep this response, and browsers and shared caches as long as
    pages.PAGE_CACHE_CONTROL says.

    `query` is the query string of the page served (canonical_query's spelling): a request
    with any other query string gets the page but never stores it, so parameters the view
    does not read, or values it does not serve as written, add nothing to the cache.
    With `own_headers` (API responses) the response keeps its own Cache-Control, ETag and
    Last-Modified, cached or not.
    """
    setattr(response, CACHEABLE_ATTRIBUTE, query)
    if own_headers:
        setattr(response, pages.OWN_VALIDATORS_ATTRIBUTE, True)
    else:
        pages.mark_shared(response)
    return response


def cached_page(view: View, tags: Iterable[str] = ()) -> View:
    """Decorate a function view (or a feed) that reads no query parameter so that its
    anonymous 200 responses are cached, with the cache `tags` of what it shows (edge.py;
    none: it may show anything)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not request.user.is_authenticated:
            mark_cacheable(response)
            if tags:
                edge.tag(response, tags)
        return response

    return wrapper


if TYPE_CHECKING:
    from django.views import View as _ViewBase
else:
    _ViewBase = object


class CachedPageMixin(_ViewBase):
    """Mark a class-based reader view's anonymous 200 responses as cacheable.

    Views that read query parameters say which page they served in `cache_query()`, or
    None when it should not be kept (a filter value that is not one of the choices).
    """

    page_cache = True

    def cache_query(self) -> str | None:
        return ""

    def cache_tags(self) -> Iterable[str]:
        """The cache tags of what the page shows (summaries/pagecache/tags.py); none: it
        may show anything, and every change purges it."""
        return ()

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = super().dispatch(request, *args, **kwargs)
        if self.page_cache and response.status_code == 200 and not request.user.is_authenticated:
            query = self.cache_query()
            if query is not None:
                mark_cacheable(response, query)
                shown = self.cache_tags()
                if shown:
                    edge.tag(response, shown)
        return response
