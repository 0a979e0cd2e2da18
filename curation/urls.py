"""Table of contents of the site: the editor admin, the client API and the reader pages."""

from django.contrib import admin
from django.contrib.sitemaps.views import sitemap
from django.urls import include, path

from summaries.admin import password_reset
from summaries.api.docs import docs_view, schema_view
from summaries.ops import views as ops
from summaries.ops.metrics import metrics_view
from summaries.pagecache import tags
from summaries.pagecache.middleware import cached_page
from summaries.reader import icons, oembed
from summaries.reader.sitemaps import SITEMAPS
from summaries.reader.views_seo import robots_txt
from summaries.thumbnails.serve import media_urlpatterns

admin.site.site_header = "Curation editor"
admin.site.site_title = "Curation"
admin.site.index_title = "Summaries and sources"

urlpatterns = [
    # "Forgot your password?" on the admin login page (before the admin's own URLs).
    path("admin/", include(password_reset.urlpatterns)),
    path("admin/", admin.site.urls),
    path("api/v1/", include("summaries.api.urls")),
    path("api/schema/", schema_view, name="api-schema"),
    path("api/docs/", docs_view, name="api-docs"),
    path(
        "sitemap.xml",
        cached_page(sitemap, tags=(tags.SITEMAPS,)),
        {"sitemaps": SITEMAPS},
        name="sitemap",
    ),
    path("robots.txt", robots_txt, name="robots-txt"),
    path("favicon.ico", icons.favicon_ico, name="favicon"),
    path("manifest.webmanifest", cached_page(icons.manifest), name="web-manifest"),
    path("oembed", oembed.oembed, name="oembed"),
    # Answered by summaries.ops.middleware.ProbeMiddleware first; named and listed here.
    path("healthz", ops.healthz, name="healthz"),
    path("readyz", ops.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    # Stored thumbnails, when they are files on this machine (summaries/thumbnails/serve.py).
    *media_urlpatterns(),
    path("", include("summaries.reader.urls")),
]

# Reader pages get Django's error pages; API paths the API's JSON error shape.
handler400 = "summaries.api.errors.bad_request"
handler500 = "summaries.api.errors.server_error"
