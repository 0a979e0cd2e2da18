"""The TimeMap and the past versions of a live summary (Memento, reader/memento.py), and
the rendering of each version's article as it goes live."""

from django.db.models.signals import post_save
from django.dispatch import receiver
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_safe

from summaries.models import PublishedVersion, Summary
from summaries.pagecache.middleware import cached_page

from . import article, memento
from .views_summary import summary_page_query

ROBOTS = "noindex, nofollow"


@receiver(post_save, sender=PublishedVersion, dispatch_uid="curation-render-published-version")
def render_version(sender, instance: PublishedVersion, raw: bool = False, **kwargs) -> None:
    """Store a version's article as the live page shows it, when it is recorded: the
    summary's content does not change until its next version is recorded."""
    if raw or instance.html:
        return
    summary = summary_page_query(Summary.objects.filter(pk=instance.summary_id)).get()
    shown = article.page_article(summary)
    instance.html, instance.reading_time = str(shown.html), shown.reading_time
    PublishedVersion.objects.filter(pk=instance.pk).update(
        html=instance.html, reading_time=instance.reading_time
    )


@require_safe
def timemap(request: HttpRequest, slug: str) -> HttpResponse:
    """The TimeMap of a live summary: its published versions; 404 when it has none."""
    times = memento.live_times_at(slug)
    if not times:
        raise Http404("This address has no published versions.")
    body = memento.timemap(request, slug, times)
    return HttpResponse(body, content_type=memento.LINK_FORMAT)


@require_safe
def summary_version(request: HttpRequest, slug: str, moment: str) -> HttpResponse:
    """A live summary as readers saw it from `moment` on: its article then, under a banner
    saying so, kept out of search engines, with the Memento headers."""
    when = memento.parse_version_slug(moment)
    version = (
        PublishedVersion.objects.live()
        .filter(summary__video__slug=slug, live_from=when)
        .select_related("summary__video__channel")
        .defer("summary__search_document")
        .first()
        if when is not None
        else None
    )
    if version is None:
        raise Http404("No published version of this summary at that time.")
    times = memento.live_times(version.summary_id)
    video = version.summary.summarised_video  # a live summary's own
    response = TemplateResponse(
        request,
        "summaries/summary_version.html",
        {
            "version": version,
            "video": video,
            "original_url": video.get_absolute_url(),
            "timemap_url": memento.timemap_url(request, slug),
            "robots": ROBOTS,
        },
    )
    response["Memento-Datetime"] = memento.httpdate(version.live_from)
    response["Link"] = ", ".join(
        [
            *memento.original_links(request, slug),
            *memento.neighbour_links(request, slug, times, version.live_from),
        ]
    )
    response["X-Robots-Tag"] = ROBOTS
    return response


timemap_view = cached_page(timemap)
summary_version_view = cached_page(summary_version)
