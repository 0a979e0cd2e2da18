"""Absolute links on SITE_URL, the site's public address.

Canonical and Open Graph URLs, JSON-LD, feeds, oEmbed, sitemaps, Link headers and the API's
absolute URLs are kept by shared caches and by whoever reads them, so they never come from
the request's scheme or Host (`build_absolute_uri`): one client sending `X-Forwarded-Proto`
or another Host would choose them for every reader.
"""

from urllib.parse import urljoin, urlsplit

from django.conf import settings


def site_url(path: str = "/") -> str:
    """`path` made absolute on SITE_URL; a URL that is absolute already (a thumbnail on a
    media host) is returned as it is."""
    return urljoin(settings.SITE_URL + "/", path)


def site_host() -> str:
    """SITE_URL's host (and port, if it names one)."""
    return urlsplit(settings.SITE_URL).netloc


def site_is_secure() -> bool:
    """Whether SITE_URL is https."""
    return urlsplit(settings.SITE_URL).scheme == "https"
