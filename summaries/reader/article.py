"""The article of a summary page, rendered once per version of the summary and stored.

The 30 seconds, key points, takeaways, chapters (with their caveats and the hosts of cited
links) and the remaining caveats change only when an editor changes the summary. Loading
their four lists and rendering them cost more than half of a summary page that misses the
page cache, so the article is stored as HTML (SummaryPage) with what the page reads beside
it, and rendered again only when what it was made from changed. What can change without an
edit stays per request: people and topics, the sources' check results, related videos.

A stored article is shown only while its key is the one the summary would be rendered under:
the summary's `page_version` (moved by editing.derived.page_changed on every save of its
parts and every key-phrase change), the video's address (time links point into the video),
the digest of the video's live transcript (the times where statements are said are shown
only for pins verified against it: reader/receipts.py) and RENDER_VERSION. An article
rendered from parts read just before an edit carries the old page_version, so it is never
shown after the edit, whichever request stores it last.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Prefetch, prefetch_related_objects
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from summaries.models import Caveat, Chapter, KeyPoint, SummaryPage, Takeaway
from summaries.models.summary import page_citations_prefetch

from . import presentation, receipts

# Move it on when includes/summary_article.html, or anything it prints, changes: every
# stored article is then rendered again when its page is next read.
RENDER_VERSION = 5  # 5: key points and takeaways have ids (the transcript page links them)

# The parts the article is made of, without the Markdown sources (it prints the HTML), and
# the citations (with their sources) that chapters and caveats show beside their claims.
PART_PREFETCHES = (
    Prefetch("key_points", queryset=KeyPoint.objects.defer("body")),
    Prefetch("takeaways", queryset=Takeaway.objects.defer("text")),
    Prefetch("chapters", queryset=Chapter.objects.defer("body")),
    Prefetch("caveats", queryset=Caveat.objects.defer("text").order_by("position")),
    page_citations_prefetch(),
)


# Words a reader gets through in a minute of attentive reading (technical prose).
WORDS_PER_MINUTE = 230


def _words(text: str) -> int:
    # Spaces and line breaks, not a tag-stripping parse: ~0.3 ms for an hour's transcript
    # against ~4 ms, and the one attribute space of each link hardly moves a minute.
    return text.count(" ") + text.count("\n") + 1 if text else 0


def reading_time(summary):
    """Reading time, "8 min read": the words of the 30-second text, key points, takeaways,
    chapters and caveats at WORDS_PER_MINUTE, at least a minute.

    Reads the parts from what the caller prefetched: no query when they are.
    """
    words = _words(summary.tldr)
    for point in summary.key_points.all():
        words += _words(point.title) + _words(point.body_html)
    for takeaway in summary.takeaways.all():
        words += _words(takeaway.text_html)
    for chapter in summary.chapters.all():
        words += _words(chapter.title) + _words(chapter.synopsis) + _words(chapter.body_html)
    for caveat in summary.caveats.all():
        words += _words(caveat.text_html)
    return f"{max(1, round(words / WORDS_PER_MINUTE))} min read"


@dataclass(frozen=True)
class Article:
    html: SafeString
    reading_time: str  # "8 min read"
    # (title, start second, position) of the chapters that are key moments of the video:
    # the page's JSON-LD Clips (receipts.key_moments).
    timed_chapters: list[tuple[str, int, int]]


def transcript_digest(summary) -> str:
    """The digest of the live transcript the summary's pins are shown against ("" for
    none): annotated by the page's query (views.summary_page_query), or set by the preview."""
    return getattr(summary, "transcript_digest", None) or ""


def article_key(summary) -> str:
    """What the article of `summary` (its video loaded) is rendered from."""
    video = summary.video
    return ":".join(
        str(part)
        for part in (
            RENDER_VERSION,
            summary.page_version,
            video.platform,
            video.platform_video_id,
            video.source_url,
            transcript_digest(summary),
        )
    )


def render_article(summary) -> Article:
    """The article of `summary`, its parts and citations loaded (PART_PREFETCHES)."""
    digest = transcript_digest(summary)
    receipts.mark_moments(summary, digest)
    presentation.annotate_part_links(summary)
    html = render_to_string(
        "includes/summary_article.html",
        {
            "summary": summary,
            "video": summary.video,
            "chapters": presentation.chapters_for_page(summary, digest),
        },
    )
    moments = receipts.key_moments(summary.chapters.all(), digest)
    return Article(mark_safe(html), reading_time(summary), moments)  # noqa: S308 - a template's output


def stored_article(summary) -> Article | None:
    """The stored article of `summary` (loaded with select_related("page")), if current."""
    try:
        page = summary.page
    except SummaryPage.DoesNotExist:
        return None
    if page.key != article_key(summary):
        return None
    data = page.data
    return Article(
        mark_safe(page.html),  # noqa: S308 - rendered by render_article
        data["reading_time"],
        [tuple(chapter) for chapter in data["timed_chapters"]],
    )


def store(summary, article: Article) -> None:
    """Keep the article for the next requests; a concurrent request storing it too is fine."""
    values = {
        "key": article_key(summary),
        "html": str(article.html),
        "data": {"reading_time": article.reading_time, "timed_chapters": article.timed_chapters},
    }
    if SummaryPage.objects.filter(summary_id=summary.pk).update(**values):
        return
    try:
        with transaction.atomic():
            SummaryPage.objects.create(summary_id=summary.pk, **values)
    except IntegrityError:  # another request created the row first; either copy will do
        pass


def page_article(summary) -> Article:
    """The article of a live summary's page: stored, or rendered (four more queries) and
    stored when its key moved on."""
    article = stored_article(summary)
    if article is None:
        prefetch_related_objects([summary], *PART_PREFETCHES)
        article = render_article(summary)
        store(summary, article)
    return article


def fresh_article(summary) -> Article:
    """The article rendered from the summary as it is now, not stored (previews)."""
    prefetch_related_objects([summary], *PART_PREFETCHES)
    return render_article(summary)
