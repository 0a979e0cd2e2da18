"""What a shared reader page is sent as: its encodings, its validators and its lifetime.

A page a view marked as shared (summaries/pagecache/middleware.py) is made, once per
rendering, into one representation per content coding: identity and gzip. The page cache
stores both, so a hit costs no compression, and answers conditional requests from the
stored validators, so a revalidation costs no query. RFC 9110 is followed throughout:

- `ETag` is strong and depends only on the bytes sent: a hash of the page, with `-gzip`
  added for the gzip representation (its bytes are fixed by the page: level and mtime are
  fixed). Any change to what readers see changes the hash; content that came out the same
  after an unrelated edit keeps its tag, which is right and lets browsers keep their copy.
- `Last-Modified` is when the page was rendered, to the second. Only sent when no content
  change (a bump of the content generation, or a scheduled publication) is within
  DATE_MARGIN seconds of the rendering: two renderings of different content in the same
  second would share a date, and a client revalidating with `If-Modified-Since` alone
  would be told its old copy is fresh. Assumes the web machines' clocks agree to within
  the margin (NTP).
- `Vary: Accept-Encoding` on both representations, for every cache between us and readers.

Compression and BREACH: only pages that views mark as the same for every anonymous reader
are compressed, and only for requests with no cookie or Authorization header (the page
cache's own rule); they carry no CSRF token, session or other secret, so there is nothing
for a chosen-input compression attack to recover. Pages for signed-in people, forms with
CSRF tokens and search results (which reflect the query) are never compressed here.
"""

import gzip
import hashlib
import re
from collections.abc import Iterable
from typing import TypeAlias, TypeVar

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date, parse_http_date_safe

IDENTITY = "identity"
GZIP = "gzip"

Headers: TypeAlias = list[tuple[str, str]]
# One stored representation of a page: (content, headers, ETag, Last-Modified timestamp).
Representation: TypeAlias = tuple[bytes, Headers, str, int | None]
R = TypeVar("R", bound=HttpResponseBase)

# Browsers revalidate every time (max-age=0, must-revalidate): a revalidation is a page
# cache hit answered 304 with no query, and an unpublished page is gone from readers'
# browsers at their next visit. Shared caches (a CDN) may serve a page SHARED_TTL seconds
# without asking: an unpublished page is still served from them for at most that long,
# which is the price of letting them absorb bursts. Nothing may be served stale.
SHARED_TTL = 60
PAGE_CACHE_CONTROL = {"public": True, "max_age": 0, "must_revalidate": True, "s_maxage": SHARED_TTL}
# A 404 or 410 (an unpublished page, a mistyped address) is kept no longer than a page, so
# a page published or republished at that address is seen as soon as a page would be.
ERROR_CACHE_CONTROL = PAGE_CACHE_CONTROL

DATE_MARGIN = 2.0  # seconds, see Last-Modified above
MIN_COMPRESSED_LENGTH = 200  # below this, gzip's header and trailer eat the gain
GZIP_LEVEL = 6  # level 9 takes about twice as long for ~1% less; pages are compressed on a miss
_COMPRESSIBLE_TYPE = re.compile(r"^(text/|application/(\S*\+)?(xml|json|javascript)\b)", re.I)
# Headers of the rendered page that the representations set themselves, or that belong to
# one response only.
_REPLACED_HEADERS = frozenset(
    {"set-cookie", "date", "content-length", "content-encoding", "etag", "last-modified"}
)


def _q_value(parameters: str) -> float:
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value.strip())
            except ValueError:
                return 0.0
    return 1.0


def preferred_encoding(request: HttpRequest) -> str:
    """GZIP when the request's Accept-Encoding accepts gzip (by name or `*`, with q > 0),
    else IDENTITY (RFC 9110 §12.5.3). A missing header accepts only identity here: that is
    always allowed, and clients that can decompress say so."""
    header = request.META.get("HTTP_ACCEPT_ENCODING", "")
    if not header:
        return IDENTITY
    named = star = None
    for item in header.split(","):
        coding, _, parameters = item.partition(";")
        coding = coding.strip().lower()
        if coding in ("gzip", "x-gzip"):
            named = _q_value(parameters)
        elif coding == "*":
            star = _q_value(parameters)
    accepted = named if named is not None else star
    return GZIP if accepted else IDENTITY


def last_modified(
    rendered_at: float, changed_at: float | None, next_change_at: float | None
) -> int | None:
    """The Last-Modified of a page rendered at `rendered_at` (a timestamp), or None when a
    content change was, or will be, too close to it for a date to the second to tell the
    versions apart: `changed_at` the last bump (None: unknown), `next_change_at` the next
    scheduled publication."""
    if changed_at is None or rendered_at - changed_at < DATE_MARGIN:
        return None
    if next_change_at is not None and next_change_at - rendered_at < DATE_MARGIN:
        return None
    return int(rendered_at)


def _compressible(response: HttpResponse) -> bool:
    return (
        len(response.content) >= MIN_COMPRESSED_LENGTH
        and not response.has_header("Content-Encoding")
        and bool(_COMPRESSIBLE_TYPE.match(response.get("Content-Type", "")))
    )


def compress(content: bytes) -> bytes:
    """gzip with a fixed level and mtime: the same page always gives the same bytes."""
    return gzip.compress(content, compresslevel=GZIP_LEVEL, mtime=0)


# Set on a response whose own ETag and Last-Modified are kept (the API's: they name the
# version a client may send back in If-Match).
OWN_VALIDATORS_ATTRIBUTE = "curation_own_validators"


def _own_validators(response: HttpResponseBase) -> tuple[str | None, int | None]:
    if not getattr(response, OWN_VALIDATORS_ATTRIBUTE, False) or not response.has_header("ETag"):
        return None, None
    tag = response["ETag"].removeprefix("W/").strip('"')
    return tag, parse_http_date_safe(response.get("Last-Modified", ""))


def representations(
    response: HttpResponse, encodings: Iterable[str], modified: int | None
) -> dict[str, Representation]:
    """{encoding: (content, headers, etag, last modified)} of a rendered page, for each of
    `encodings`. The gzip one is the identity one when compressing would not pay."""
    content = response.content
    own_tag, own_modified = _own_validators(response)
    if own_tag is not None:
        modified = own_modified
    tag = own_tag or hashlib.blake2b(content, digest_size=16).hexdigest()
    patch_vary_headers(response, ("Accept-Encoding",))
    headers = [(k, v) for k, v in response.items() if k.lower() not in _REPLACED_HEADERS]
    if modified is not None:
        headers.append(("Last-Modified", http_date(modified)))
    identity: Representation = (content, [*headers, ("ETag", f'"{tag}"')], f'"{tag}"', modified)
    result: dict[str, Representation] = {}
    for encoding in encodings:
        if encoding == GZIP and _compressible(response):
            compressed = compress(content)
            if len(compressed) < len(content):
                gzip_headers = [*headers, ("Content-Encoding", "gzip"), ("ETag", f'"{tag}-gzip"')]
                result[GZIP] = (compressed, gzip_headers, f'"{tag}-gzip"', modified)
                continue
        result[encoding] = identity
    return result


def build_response(content: bytes, headers: Iterable[tuple[str, str]]) -> HttpResponse:
    response = HttpResponse(content)
    for name, value in headers:
        response[name] = value
    response["Content-Length"] = str(len(content))
    return response


def answer(
    request: HttpRequest,
    content: bytes,
    headers: Iterable[tuple[str, str]],
    etag: str,
    modified: int | None,
) -> HttpResponse:
    """The response to `request` for one representation: a 304 when the request's
    If-None-Match (or, without it, If-Modified-Since) shows the client has it already."""
    response = build_response(content, headers)
    conditional = get_conditional_response(
        request, etag=etag, last_modified=modified, response=response
    )
    # Never None when given a response; django-stubs types it Optional all the same.
    return conditional if conditional is not None else response


def mark_shared(response: HttpResponseBase) -> None:
    """The lifetime of a page that is the same for every anonymous reader."""
    patch_cache_control(response, **PAGE_CACHE_CONTROL)


def limit_error_lifetime(response: R) -> R:
    """Give a 404/410 without a lifetime of its own the lifetime of a page."""
    if response.status_code in (404, 410) and not response.has_header("Cache-Control"):
        patch_cache_control(response, **ERROR_CACHE_CONTROL)
    return response
