"""oEmbed (https://oembed.com/, section 2): a rich card of a published summary.

`GET /oembed?url=<a summary page>&format=json[&maxwidth=N&maxheight=N]` answers the card
of a live summary; any other URL (another page of the site, a draft, a scheduled or
unpublished summary, another site) is a 404, as the specification asks. Only JSON is
served: `format=xml` is a 501. Summary pages name this endpoint in a
`<link rel="alternate" type="application/json+oembed">`, so that consumers discover it.
The card's HTML is a quotation of the summary with a link to the page: no script, no
iframe, nothing from any other site.

The page cache keeps a card only for the discovery link's own query (the page's address as
the site writes it, and `format`): cards for other spellings of the address or sized by
maxwidth/maxheight are answered (one query) and never stored, so a consumer cannot fill the
cache by varying them. Answers that are not from the cache count against a per-address
rate (`OEmbedThrottle`), as anonymous API reads do.
"""

from __future__ import annotations

import logging
import math
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import JsonResponse
from django.http.request import split_domain_port, validate_host
from django.urls import Resolver404, resolve, reverse
from django.utils.html import format_html
from django.utils.text import Truncator
from django.views.decorators.http import require_safe
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle

from summaries.models import Summary
from summaries.pagecache.middleware import canonical_query, mark_cacheable
from summaries.pagecache.pages import SHARED_TTL

from .absolute import site_host, site_url
from .seo import SITE_NAME

logger = logging.getLogger(__name__)

DEFAULT_WIDTH = 600
MIN_WIDTH = 200
CARD_TEXT_CHARS = 280
MAX_URL_CHARS = 2000


class OEmbedThrottle(AnonRateThrottle):
    """Anonymous oEmbed requests per address (API_NUM_PROXIES decides which address): at
    the `oembed` rate of REST_FRAMEWORK's DEFAULT_THROTTLE_RATES, else the anonymous API
    rate (API_THROTTLE_ANON), read when used. While the cache that holds the counts cannot
    be reached, requests are let through."""

    scope = "oembed"

    def get_rate(self):
        rates = api_settings.DEFAULT_THROTTLE_RATES
        return rates.get(self.scope) or rates.get("anon")

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except Exception:  # noqa: BLE001 - the cache is down: count nothing, refuse nobody
            logger.warning("Cache unreachable: %s not throttled", request.path, exc_info=True)
            return True


def _throttled(request) -> JsonResponse | None:
    """A 429 with Retry-After when this address has asked too often, else None."""
    throttle = OEmbedThrottle()
    if throttle.allow_request(request, None):
        return None
    response = JsonResponse({"detail": "Too many requests: try again later."}, status=429)
    response["Retry-After"] = str(max(1, math.ceil(throttle.wait() or 1)))
    return response


class OEmbedError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def oembed_url(page_url: str, request) -> str:
    """The discovery link of a summary page."""
    query = urlencode({"url": page_url, "format": "json"})
    return site_url(reverse("oembed")) + "?" + query


def _dimension(request, name: str) -> int | None:
    value = request.GET.get(name)
    if value in (None, ""):
        return None
    if not value.isdigit() or not 0 < int(value) <= 10_000:
        raise OEmbedError(400, f"{name} must be a whole number of pixels from 1 to 10000.")
    return int(value)


def _summary_for(url: str) -> Summary:
    """The live summary whose page `url` is, or OEmbedError(404)."""
    not_found = OEmbedError(404, "No published summary has this URL.")
    if not url or len(url) > MAX_URL_CHARS:
        raise not_found
    try:
        parts = urlsplit(url)
    except ValueError:
        raise not_found from None
    host = split_domain_port(parts.netloc.lower())[0]
    known = host == split_domain_port(site_host())[0] or validate_host(host, settings.ALLOWED_HOSTS)
    if parts.scheme not in ("http", "https") or not known:
        raise not_found
    try:
        match = resolve(parts.path)
    except Resolver404:
        raise not_found from None
    if match.view_name != "summaries:summary-detail":
        raise not_found
    summary = (
        Summary.objects.published()
        .filter(video__slug=match.kwargs["slug"])
        .select_related("video", "video__channel")
        .first()
    )
    if summary is None:
        raise not_found
    return summary


def card(summary: Summary, request, *, maxwidth: int | None, maxheight: int | None) -> dict:
    """The oEmbed "rich" response for a summary."""
    video = summary.video
    channel = video.channel
    page = site_url(video.get_absolute_url())
    width = max(MIN_WIDTH, min(DEFAULT_WIDTH, maxwidth or DEFAULT_WIDTH))
    text = Truncator(" ".join(summary.tldr.split())).chars(CARD_TEXT_CHARS)
    html = format_html(
        '<blockquote class="curation-summary" cite="{page}" style="max-width:{width}px">'
        '<p><a href="{page}">{title}</a> — {channel}</p><p>{text}</p>'
        '<footer>Summary on <a href="{home}">{site}</a></footer></blockquote>',
        page=page,
        width=width,
        title=video.title,
        channel=channel.name,
        text=text,
        home=site_url("/"),
        site=SITE_NAME,
    )
    data = {
        "version": "1.0",
        "type": "rich",
        "title": video.title,
        "author_name": channel.name,
        "author_url": site_url(channel.get_absolute_url()),
        "provider_name": SITE_NAME,
        "provider_url": site_url("/"),
        # As long as a CDN may keep the summary's page: an unpublished summary's card
        # leaves consumers' caches when its page leaves shared caches.
        "cache_age": SHARED_TTL,
        "html": str(html),
        "width": width,
        "height": None,  # the card's height follows its text
    }
    thumbnail = video.thumbnail
    if thumbnail is not None and (maxwidth is None or thumbnail.width <= maxwidth):
        if maxheight is None or thumbnail.height <= maxheight:
            data["thumbnail_url"] = site_url(thumbnail.src)
            data["thumbnail_width"] = thumbnail.width
            data["thumbnail_height"] = thumbnail.height
    return data


@require_safe
def oembed(request):
    refused = _throttled(request)
    if refused is not None:
        return refused
    try:
        response_format = request.GET.get("format", "json")
        if response_format != "json":
            raise OEmbedError(501, "Only format=json is served.")
        maxwidth, maxheight = _dimension(request, "maxwidth"), _dimension(request, "maxheight")
        url = request.GET.get("url", "")
        summary = _summary_for(url)
    except OEmbedError as error:
        return JsonResponse({"detail": error.detail}, status=error.status)
    response = JsonResponse(card(summary, request, maxwidth=maxwidth, maxheight=maxheight))
    video = summary.video
    if video is not None and not request.user.is_authenticated:
        # The query kept: the page's own address, without maxwidth or maxheight; a request
        # spelled otherwise is answered and not stored.
        page = site_url(video.get_absolute_url())
        mark_cacheable(response, canonical_query([("url", page), ("format", response_format)]))
    return response
