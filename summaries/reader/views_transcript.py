"""A live summary's transcript page and its chapters track (WebVTT)."""

from django.db.models import Value
from django.http import Http404, HttpResponse
from django.views.generic import TemplateView

from summaries.models import KeyPoint, Summary, Takeaway, Transcript
from summaries.pagecache.middleware import CachedPageMixin

from . import receipts, search
from .absolute import site_url
from .navigation import SectionMixin, breadcrumbs, section_crumb


def live_summary_of(slug: str) -> Summary:
    """The live summary of the video at this address, with its video and channel; 404."""
    summary = (
        Summary.objects.published()
        .filter(video__slug=slug)
        .defer("search_document")
        .select_related("video", "video__channel")
        .first()
    )
    if summary is None:
        raise Http404("No live summary at this address.")
    return summary


def page_chapters(summary) -> list:
    """The summary's chapters as the transcript page and the chapters file need them."""
    return list(summary.chapters.only("summary", "position", "title", "start_time", "pin"))


def statement_pins(summary) -> list[tuple[str, int, object]]:
    """(kind, position, pin) of the summary's key points and takeaways, in one query."""
    points = KeyPoint.objects.filter(summary=summary).order_by().annotate(kind=Value("key_point"))
    takeaways = Takeaway.objects.filter(summary=summary).order_by().annotate(kind=Value("takeaway"))
    fields = ("kind", "position", "pin")
    return list(points.values_list(*fields).union(takeaways.values_list(*fields), all=True))


class TranscriptView(SectionMixin, CachedPageMixin, TemplateView):
    """The live transcript of a live summary's video, by chapter, in paragraphs (by speaker
    and pause: `text.paragraphs`), each with a time link and the key points and takeaways
    its words support; `?q=` shows only the paragraphs holding every word, marked
    (transcript.js filters as the reader types). 404 when the summary is not live or the
    video has no live transcript. A filtered page is not cached: every query would be a
    page of its own."""

    template_name = "summaries/transcript.html"
    section = "channels"

    def get(self, request, *args, **kwargs):
        self.query = search.clean_query(request.GET.get("q", ""))
        return super().get(request, *args, **kwargs)

    def cache_query(self) -> str | None:
        return None if self.query else ""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        summary = live_summary_of(self.kwargs["slug"])
        video = summary.summarised_video  # a live summary's own
        transcript = (
            Transcript.objects.live()
            .filter(video=video, language=video.language)
            .only("video_id", "language", "state", "segments", "digest")
            .first()
        )
        if transcript is None:
            raise Http404("This video has no published transcript.")
        chapters = page_chapters(summary)
        starts = receipts.chapter_starts(chapters, transcript.digest)
        marked = receipts.statements(
            statement_pins(summary), transcript.digest, video.get_absolute_url()
        )
        sections = receipts.sections(transcript.segment_list(), starts, video, marked)
        words = receipts.query_words(self.query)
        matching = receipts.filter_passages(sections, words)
        context.update(
            summary=summary,
            video=video,
            query=self.query,
            sections=sections,
            transcript_html=receipts.transcript_html(sections, words),
            paragraph_count=sum(len(section.passages) for section in sections),
            matching=matching,
            has_chapters=bool(starts),
            canonical_url=site_url(self.request.path),
            breadcrumbs=breadcrumbs(
                section_crumb("channels"),
                (video.channel.name, video.channel.get_absolute_url()),
                (video.title, video.get_absolute_url()),
                ("Transcript", self.request.path),
            ),
        )
        return context


def chapters_vtt(request, slug: str) -> HttpResponse:
    """The video's chapters as a WebVTT chapters track (text/vtt): each from its start
    (verified against the live transcript where pinned) to the next one's, the last to the
    end of the video. 404 when the summary is not live or no chapter has a start."""
    summary = live_summary_of(slug)
    video = summary.summarised_video  # a live summary's own
    digest = (
        Transcript.objects.live()
        .filter(video=video, language=video.language)
        .values_list("digest", flat=True)
        .first()
    )
    starts = receipts.chapter_starts(page_chapters(summary), digest or "")
    text = receipts.chapters_vtt(starts, video.duration_seconds)
    if text is None:
        raise Http404("This video has no timed chapters.")
    return HttpResponse(text, content_type="text/vtt; charset=utf-8")
