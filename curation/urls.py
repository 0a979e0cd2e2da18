"""Table of contents of the site: the editor admin and the reader pages."""

from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Curation editor"
admin.site.site_title = "Curation"
admin.site.index_title = "Summaries and sources"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("summaries.urls")),
]
