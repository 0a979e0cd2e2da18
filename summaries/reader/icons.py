"""The site's icon at /favicon.ico and its web app manifest at /manifest.webmanifest.

The icons are static files in static/summaries/icons/: icon.svg is the source; the PNGs
were rendered from it by headless Chromium (`--screenshot` of an <img> at each size, the
apple-touch icon from a copy without the rounded corners, since iOS rounds them itself),
and favicon.ico holds the 16 and 32 px PNGs. Pages link them from base.html's <head>.
"""

import functools
import json

from django.contrib.staticfiles import finders
from django.http import Http404, HttpResponse
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

ICON_DIR = "summaries/icons"
# The colours of static/summaries/css/site.css (light scheme): the accent and the page.
THEME_COLOR = "#0b57d0"
BACKGROUND_COLOR = "#fdfdfb"


@functools.cache
def _favicon_bytes() -> bytes | None:
    path = finders.find(f"{ICON_DIR}/favicon.ico")
    if path is None:
        return None
    with open(path, "rb") as file:
        return file.read()


# Browsers ask for /favicon.ico on their own (old ones, feed readers, bookmarks); served
# here rather than redirected to the hashed static address, which changes with each icon.
@require_safe
@cache_control(public=True, max_age=86400)
def favicon_ico(request):
    content = _favicon_bytes()
    if content is None:
        raise Http404("No favicon.ico among the static files.")
    return HttpResponse(content, content_type="image/x-icon")


@require_safe
def manifest(request):
    """The web app manifest: names, colours and icons for an installed or pinned site.

    Served through the page cache (curation/urls.py), like a page: it names the icons by
    their hashed static addresses, which change with a deploy.
    """
    data = {
        "name": "Curation: curated summaries of AI videos",
        "short_name": "Curation",
        "description": "Curated summaries of AI videos, every cited source checked.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "theme_color": THEME_COLOR,
        "background_color": BACKGROUND_COLOR,
        "icons": [
            {"src": static(f"{ICON_DIR}/icon.svg"), "sizes": "any", "type": "image/svg+xml"},
            {"src": static(f"{ICON_DIR}/icon-192.png"), "sizes": "192x192", "type": "image/png"},
            {"src": static(f"{ICON_DIR}/icon-512.png"), "sizes": "512x512", "type": "image/png"},
        ],
    }
    return HttpResponse(
        json.dumps(data, indent=2), content_type="application/manifest+json; charset=utf-8"
    )
