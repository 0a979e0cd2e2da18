"""Summary pages. Only live summaries are public; editors preview anything at /preview/."""

from dataclasses import replace

from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.generic import DetailView

from summaries.editing import video_changes
from summaries.models import Summary, Transcript
from summaries.models.access import can_see_unpublished
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.middleware import CachedPageMixin

from . import article, cards, corrections, memento, oembed, page_rows, presentation, related, seo
from .compiled import CompiledQuery
from .navigation import SectionMixin, breadcrumbs, section_crumb

RELATED_COUNT = 10


def live_transcript_digest():
    """The digest of the live transcript of a summary's video in its language, as a
    subquery: the page learns whether there is one (and which) without reading it."""
    return Subquery(
        Transcript.objects.live()
        .filter(video=OuterRef("video"), language=OuterRef("video__language"))
        .values("digest")[:1]
    )


def summary_page_query(summaries):
    """What a summary page reads of its summary: the video and channel, the stored article,
    the digest of the live transcript; not the search document (the whole text again, for
    search only) nor any transcript's text."""
    return (
        summaries.defer("search_document")
        .select_related("video", "video__channel", "page")
        .annotate(transcript_digest=live_transcript_digest())
    )


_LIVE_SUMMARY = CompiledQuery(
    Summary,
    lambda slug, now: summary_page_query(Summary.objects.published(now)).filter(video__slug=slug),
    texts=("slug",),
    now=True,
)


class SummaryDetailView(SectionMixin, CachedPageMixin, DetailView):
    """A summary page; a summary that is not live answers 404."""

    template_name = "summaries/summary_detail.html"
    context_object_name = "summary"
    section = "channels"  # the breadcrumbs lead through the channel
    # The page is its own Memento TimeGate and names its TimeMap (reader/memento.py).
    answers_memento = True

    def get(self, request, *args, **kwargs):
        if not self.answers_memento:
            return super().get(request, *args, **kwargs)
        response: HttpResponse
        try:
            wanted = memento.accept_datetime(request)
        except memento.BadDatetime:
            response = HttpResponseBadRequest(
                "Accept-Datetime: not an HTTP date; send one such as "
                '"Tue, 11 Sep 2001 20:35:00 GMT".',
                content_type="text/plain; charset=utf-8",
            )
        else:
            if wanted is not None:
                response = self.timegate(wanted)
            else:
                response = super().get(request, *args, **kwargs)
                response["Link"] = ", ".join(memento.original_links(request, self.slug()))
        patch_vary_headers(response, ("Accept-Datetime",))
        return response

    def slug(self) -> str:
        return self.kwargs[self.slug_url_kwarg]

    def timegate(self, wanted) -> HttpResponse:
        """302 to the version of the live summary that readers saw at `wanted`."""
        summary = self.find_summary()
        times = memento.live_times(summary.pk)
        chosen = memento.select(times, wanted)
        if chosen is None:
            raise Http404("This summary has no published versions.")
        slug = self.slug()
        response = HttpResponseRedirect(memento.memento_url(self.request, slug, chosen))
        response["Link"] = ", ".join(memento.timegate_links(self.request, slug, times, chosen))
        return response

    def find_summary(self):
        """The live summary of the video at this address; 404 if there is none."""
        found = _LIVE_SUMMARY.run(slug=self.kwargs[self.slug_url_kwarg])
        if not found:
            raise Http404("No live summary at this address.")
        return found[0]

    def get_object(self, queryset=None):
        summary = self.find_summary()
        # The video's people and topics, shown whatever version of the summary the page is.
        self.people = page_rows.people(summary.video_id)
        self.topics = page_rows.topics(summary.video_id)
        return summary

    def page_citations(self) -> list:
        """The citations of the page's summary, each with its source's latest check."""
        return page_rows.citations(self.object.pk)

    def summary_article(self) -> article.Article:
        return article.page_article(self.object)

    def has_live_transcript(self) -> bool:
        return bool(article.transcript_digest(self.object))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        video = self.object.video
        transcript_url = ""
        if self.has_live_transcript():
            transcript_url = reverse("summaries:summary-transcript", args=[video.slug])
        context["transcript_url"] = transcript_url
        context["video"] = video
        more = cards.more_from_channel(video)
        context["more_from_channel"] = more
        page_article = self.summary_article()
        context["people"] = self.people
        context["topics"] = self.topics
        citations = self.page_citations()
        presentation.label_sources(citations)
        context["cited_sources"] = presentation.cited_sources_html(citations)
        # The stored article's cited links get what can change without an edit: the
        # archived copy shown and the date cited (Robust Links, as in the list above).
        linked = presentation.robust_text_links(page_article.html, citations)
        context["article"] = replace(page_article, html=linked)
        # Cards show no topics; the reasons beside them are stored text. A video shown
        # under "More from this channel" is not shown twice.
        context["related"] = related.related_for_page(
            video,
            limit=RELATED_COUNT,
            topics=False,
            cards=True,
            exclude=[other["pk"] for other in more],
        )
        # The people of every card, in one query.
        cards.add_people([*more, *(item.video for item in context["related"])])
        context["breadcrumbs"] = breadcrumbs(
            section_crumb("channels"),
            (video.channel.name, video.channel.get_absolute_url()),
            (video.title, video.get_absolute_url()),
        )
        self.shown_videos = [card["pk"] for card in (*more, *(i.video for i in context["related"]))]
        changes = corrections.for_page(self.object)
        context["corrections"] = changes.shown
        context["social"] = seo.social_meta(self.object, self.request)
        context["oembed_url"] = oembed.oembed_url(context["social"]["canonical_url"], self.request)
        context["jsonld"] = seo.json_ld_script(
            seo.video_object_jsonld(
                self.object,
                self.request,
                chapters=page_article.timed_chapters,
                appearances=self.people,
                transcript_url=transcript_url,
                changes=changes,
            )
        )
        return context

    def cache_tags(self):
        """The summary, its video and channel, and every video whose card the page shows
        (unpublished, it must leave the page). People and topics are named by their
        renames, which purge every answer (tags.py)."""
        video = self.object.video
        return (
            cache_tags.summary(self.object.pk),
            cache_tags.video(video.pk),
            cache_tags.channel(video.channel_id),
            *(cache_tags.video(pk) for pk in getattr(self, "shown_videos", ())),
        )


@method_decorator([staff_member_required, never_cache], name="dispatch")
class SummaryPreviewView(SummaryDetailView):
    """Exactly the reader page, for any state, never cached, for those who may see
    unpublished work (access.can_see_unpublished: staff who may view summaries).

    Signed out or not staff: the admin's login page. Other staff: 403, before the address
    is looked up, so that every address answers the same and none tells a draft exists.
    """

    page_cache = False
    answers_memento = False

    def dispatch(self, request, *args, **kwargs):
        if not can_see_unpublished(request.user):
            raise PermissionDenied("Previews are for those who may view summaries.")
        return super().dispatch(request, *args, **kwargs)

    def find_summary(self):
        """The summary of the video at this address, in any state."""
        return get_object_or_404(
            summary_page_query(Summary.objects.all()), video__slug=self.kwargs[self.slug_url_kwarg]
        )

    def get_object(self, queryset=None):
        """The summary, or the unpublished changes to it when it has a working copy."""
        summary = super().get_object(queryset)
        copy = Summary.objects.filter(working_copy_of=summary).defer("search_document").first()
        if copy is None:
            self.set_transcript(summary)
            return summary
        # In memory only, for this page: the copy is about its summary's video, as its
        # changes would make it.
        copy.video = summary.video
        if copy.video_changes:
            copy.video = video_changes.pending_video(summary.video, copy.video_changes)
        copy.working_copy_of = summary
        self.set_transcript(copy)
        return copy

    def set_transcript(self, summary) -> None:
        """Show the pins as they will be published: verified against the transcript
        waiting for review if there is one (it goes live with the summary), else the live
        one; a live summary's against the live one (editing.receipts.transcript_for)."""
        video = summary.video
        found = dict(
            Transcript.objects.filter(video_id=video.pk, language=video.language).values_list(
                "state", "digest"
            )
        )
        live = found.get(Transcript.State.LIVE, "")
        self.live_transcript = bool(live)
        if summary.status == Summary.Status.PUBLISHED and not summary.is_working_copy:
            summary.transcript_digest = live
        else:
            summary.transcript_digest = found.get(Transcript.State.DRAFT) or live

    def has_live_transcript(self) -> bool:
        return self.live_transcript

    def summary_article(self) -> article.Article:
        # Any state, exactly as it is now: never the stored article, never stored.
        return article.fresh_article(self.object)

    def page_citations(self) -> list:
        # The version shown (a working copy's own citations), loaded with its article.
        return list(self.object.citations.all())

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["preview"] = True
        return context
