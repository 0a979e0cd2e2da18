"""Cached reader pages and API reads answered before Django's handler, at the WSGI layer.

A page in the page cache is the same bytes for every anonymous reader; serving it needs
the cache's key, the content generation and the stored answer, nothing of Django's
request cycle (its signals, which check database connections, the middleware chain, the
URL configuration). `CachedPagesApplication` wraps the site's WSGI application
(curation/wsgi.py) and answers such a request itself when all of this holds:

- the page cache's own rules let the request share cached pages (`may_serve_cached`: a
  GET or HEAD with no session cookie, no Authorization on pages and no Accept-Datetime;
  API reads that accept JSON), and an API read carries neither a token nor an Origin
  (CORS headers, which depend on it, are CorsMiddleware's: without one it adds only
  `Vary: origin`, which is added here too);
- it needs no redirect to HTTPS, and its Host is allowed and spelled as pages link to it
  (`page_key`);
- the content generation is known without a query: the listener keeps this process's
  copy current (listening.py, PostgreSQL). Reading the row would need a database
  connection, which only Django's request cycle opens, checks and closes;
- the page is stored at that generation (this process's copy, else one cache round trip).

It answers exactly as PageCacheMiddleware would (the same stored answer, 304 to a
conditional request, the shared cache's lifetime and tags from edge.py), with the request
log's id, count and line. Anything else goes to Django unchanged; a page looked up here
and not found is marked in the environ, so the middleware renders it without looking
it up again.
"""

import logging
import threading
import time
from collections.abc import Iterable
from typing import TypeAlias
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import cachetools
from corsheaders.middleware import CorsMiddleware
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest

from summaries.ops import logs, metrics
from summaries.ops.static import is_secure

from . import edge, listening
from .generation import listened, remembered_per_request
from .middleware import (
    LOOKED_UP,
    Stored,
    answer_stored,
    is_api,
    local_pages,
    lookup,
    may_serve_cached,
    page_key,
)

logger = logging.getLogger(__name__)


# The request headers that may turn an answer into a 304 or a 412.
CONDITIONAL = (
    "HTTP_IF_NONE_MATCH",
    "HTTP_IF_MODIFIED_SINCE",
    "HTTP_IF_MATCH",
    "HTTP_IF_UNMODIFIED_SINCE",
)
# (the stored page, the shared lifetime, status line, headers, body)
Answer: TypeAlias = tuple[Stored, int, str, list[tuple[str, str]], bytes]


def _answer_size(answer: Answer) -> int:
    return len(answer[4])


def _is_anonymous_api_read(request: WSGIRequest) -> bool:
    """An API read with neither a token (reading which may cost a query: tokens.py) nor an
    Origin (CORS headers that depend on it)."""
    return "HTTP_AUTHORIZATION" not in request.META and "HTTP_ORIGIN" not in request.META


class CachedPagesApplication:
    """WSGI application answering anonymous reads of cached pages before Django (module
    docstring), and handing every other request to `application`.

    The answer to a plain GET of a stored page is the same until the shared lifetime it
    carries changes (edge.py), so it is made once, as PageCacheMiddleware makes it, and
    kept with the page (`answers`, by the stored tuple this process holds); a conditional
    request gets its own.
    """

    def __init__(self, application: WSGIApplication):
        self.application = application
        self.redirect_to_https = settings.SECURE_SSL_REDIRECT
        # As many bytes of answers as of this process's copies of pages, least recent out:
        # an answer holds its stored page, which would otherwise outlive its eviction.
        self.kept_bytes = settings.PAGE_CACHE_LOCAL_BYTES
        self.answers: cachetools.LRUCache[int, Answer] = cachetools.LRUCache(
            maxsize=max(self.kept_bytes, 1), getsizeof=_answer_size
        )
        self.lock = threading.Lock()  # LRUCache is not thread-safe; runserver is threaded

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return self.application(environ, start_response)
        started = time.perf_counter()
        # A copy: WSGIRequest rewrites PATH_INFO and SCRIPT_NAME in the environ it is given
        # to their decoded form, which Django's handler could no longer decode.
        request = WSGIRequest(environ.copy())
        with remembered_per_request():
            stored = self.find(request)
            if stored is None:
                if LOOKED_UP in request.META:
                    environ[LOOKED_UP] = True
                return self.application(environ, start_response)
            if any(name in environ for name in CONDITIONAL):
                answer = self.make_answer(request, stored, 0)
            else:
                answer = self.kept_answer(request, stored)
        metrics.PAGE_CACHE_HITS.inc()
        return self.send(request, answer, started, start_response)

    def find(self, request: WSGIRequest) -> Stored | None:
        """The stored page this request may be answered with, or None."""
        if (
            not may_serve_cached(request)
            or (self.redirect_to_https and not is_secure(request.META))
            or (is_api(request) and not _is_anonymous_api_read(request))
        ):
            return None
        listening.listen()
        now = listened()
        if now is None:
            return None  # the generation would cost a query: Django answers
        try:
            key = page_key(request)
        except DisallowedHost:
            return None  # Django answers 400
        if key is None:
            return None
        request.META[LOOKED_UP] = True
        try:
            generation = (now.content, now.checks) if is_api(request) else now.content
            return lookup(key, local_pages(), generation)
        except Exception:  # noqa: BLE001 - the cache is down: Django serves the page uncached
            logger.warning("Cache unreachable: %s served uncached", request.path, exc_info=True)
            del request.META[LOOKED_UP]
            return None

    @staticmethod
    def make_answer(request: WSGIRequest, stored: Stored, lifetime: int) -> Answer:
        """The answer PageCacheMiddleware gives `request` from `stored`."""
        response = answer_stored(request, stored)
        edge.finish(request, response)
        if is_api(request):
            # CorsMiddleware's part, outside the page cache: `Vary: origin` (there is none).
            CorsMiddleware(lambda _: response).add_response_headers(request, response)
        status = f"{response.status_code} {response.reason_phrase}"
        return stored, lifetime, status, list(response.items()), response.content

    def kept_answer(self, request: WSGIRequest, stored: Stored) -> Answer:
        """The answer to a plain GET or HEAD of `stored`, made once per shared lifetime
        (where this process keeps copies of pages: otherwise each hit reads a new one)."""
        lifetime = edge.shared_lifetime()
        with self.lock:
            kept = self.answers.get(id(stored))
        if kept is not None and kept[0] is stored and kept[1] == lifetime:
            return kept
        answer = self.make_answer(request, stored, lifetime)
        if self.kept_bytes and _answer_size(answer) <= self.kept_bytes:
            with self.lock:
                self.answers[id(stored)] = answer
        return answer

    @staticmethod
    def send(
        request: WSGIRequest, answer: Answer, started: float, start_response: StartResponse
    ) -> list[bytes]:
        """The answer as Django's handler sends one, with the request log's id, count and
        line (summaries/ops/logs.py)."""
        _, _, status_line, headers, body = answer
        request_id = logs.request_id_for(request)
        start_response(status_line, [*headers, (logs.REQUEST_ID_HEADER, request_id)])
        status = int(status_line[:3])
        view = metrics.count_request(request, status)
        logs.log_request(request.method or "", view, request.path, status, started, request_id)
        return [body]
