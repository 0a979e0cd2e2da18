"""What the endpoints below a summary's URL share (pins, chapter suggestions, corrections,
versions): the view set that finds the summary by its video's slug, and the API address of
a summary or of its unpublished changes."""

from __future__ import annotations

from django.urls import reverse

from summaries.models import Summary
from summaries.reader.absolute import site_url

from .views import ApiViewSet


class OfSummaryViewSet(ApiViewSet):
    """Endpoints below a summary's URL (/api/v1/summaries/<slug>/…): one summary, found by
    its video's slug; no filters, no pages."""

    lookup_field = "video__slug"
    lookup_url_kwarg = "slug"
    filter_backends: list = []
    pagination_class = None

    def get_queryset(self):
        return Summary.objects.originals()


def summary_url(request, summary: Summary | None) -> str | None:
    if summary is None:
        return None
    name = "api:summary-working-copy" if summary.is_working_copy else "api:summary-detail"
    url = reverse(name, kwargs={"slug": summary.summarised_video.slug})
    return site_url(url)
