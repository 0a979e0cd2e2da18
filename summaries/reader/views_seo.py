"""robots.txt: crawl the reader site, not the editor admin, staff previews or the API."""

from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from .absolute import site_url

DISALLOWED = ("/admin/", "/preview/", "/api/")


@require_GET
def robots_txt(request):
    lines = ["User-agent: *", *(f"Disallow: {path}" for path in DISALLOWED), ""]
    lines.append(f"Sitemap: {site_url(reverse('sitemap'))}")
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
