"""Writes with rules: publishing, citation extraction, reordering, and editor warnings."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import reversion
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from .background import queue_after_commit
from .models import Caveat, Chapter, Citation, KeyPoint, Organisation, Source, Summary, Takeaway
from .text.citations import (
    attributed_organisation_names,
    extract_citations,
    find_figures,
    host_matches_domains,
)
from .text.durations import format_duration
from .text.markdown import markdown_to_text

# Reordering moves every item out of the way first; positions never get near this.
_REORDER_OFFSET = 10_000


# --- Workflow ---------------------------------------------------------------------------


def _record(summary: Summary, user, comment: str) -> None:
    """Save the summary's workflow fields inside a revision, so history shows who did it."""
    with reversion.create_revision():
        summary.updated_by = user if user and user.is_authenticated else None
        summary.save(update_fields=["status", "publish_at", "first_published_at", "updated_by"])
        if user and user.is_authenticated:
            reversion.set_user(user)
        reversion.set_comment(comment)


def _check_publishable(summary: Summary) -> None:
    if not summary.tldr.strip():
        raise ValidationError({"tldr": "A summary needs its 30-second text before publishing."})


@transaction.atomic
def publish_summary(*, summary: Summary, user=None, at: datetime | None = None) -> Summary:
    """Publish a summary now, or schedule it when `at` lies in the future.

    Visibility is decided when content is read (status published and publish time
    reached), so a scheduled summary goes live on time with no periodic job. Records a
    revision. Raises ValidationError when the summary is not ready to be read.
    """
    _check_publishable(summary)
    now = timezone.now()
    summary.status = Summary.Status.PUBLISHED
    summary.publish_at = at or now
    if summary.first_published_at is None:
        summary.first_published_at = summary.publish_at
    scheduled = summary.publish_at > now
    comment = f"Scheduled for {summary.publish_at:%Y-%m-%d %H:%M %Z}" if scheduled else "Published"
    _record(summary, user, comment)
    if not scheduled:  # a scheduled one is picked up by the beat refresh once live
        queue_after_commit("summaries.tasks.refresh_related_around", summary.video_id)
    return summary


@transaction.atomic
def unpublish_summary(*, summary: Summary, user=None) -> Summary:
    """Take a summary (live or scheduled) back to draft; its publish time is cleared."""
    summary.status = Summary.Status.DRAFT
    summary.publish_at = None
    _record(summary, user, "Unpublished")
    queue_after_commit("summaries.tasks.refresh_related_around", summary.video_id)
    return summary


@transaction.atomic
def submit_for_review(*, summary: Summary, user=None) -> Summary:
    """Mark a draft as ready for review. A published summary must be unpublished first."""
    if summary.status == Summary.Status.PUBLISHED:
        raise ValidationError({"status": "Unpublish the summary before sending it to review."})
    summary.status = Summary.Status.IN_REVIEW
    _record(summary, user, "Sent for review")
    return summary


# --- Ordered items ----------------------------------------------------------------------


def make_room_for_reorder(*, model, summary: Summary) -> None:
    """Shift a summary's items out of the 1..n range before saving their new positions.

    Positions are unique per summary in the database, so swapping two items row by row
    would collide; after this call any new numbering can be written in any order. The
    caller must then write a position for every item it keeps (see save_positions).
    """
    model.objects.filter(summary=summary).update(position=F("position") + _REORDER_OFFSET)


def save_positions(*, items) -> None:
    """Write the given items' positions (after make_room_for_reorder)."""
    for item in items:
        type(item).objects.filter(pk=item.pk).update(position=item.position)


def renumber(*, model, summary: Summary) -> None:
    """Number a summary's items 1..n in their current order, closing gaps left by deletes.

    Safe row by row: with distinct positive positions sorted ascending, the i-th item's
    position is at least i, so writing i never collides with an item not yet renumbered.
    """
    items = model.objects.filter(summary=summary).order_by("position", "id")
    for number, (pk, position) in enumerate(items.values_list("pk", "position"), start=1):
        if position != number:
            model.objects.filter(pk=pk).update(position=number)


# --- Citations --------------------------------------------------------------------------


def _found_citations(summary: Summary):
    """(location, FoundCitation) for every link in the summary's parts, in reading order."""
    for key_point in summary.key_points.all():
        for found in extract_citations(key_point.body):
            yield {"key_point": key_point}, found
    for takeaway in summary.takeaways.all():
        for found in extract_citations(takeaway.text):
            yield {"takeaway": takeaway}, found
    for chapter in summary.chapters.all():
        for found in extract_citations(chapter.body):
            yield {"chapter": chapter}, found


def _sources_for(urls: set[str]) -> dict[str, Source]:
    """The Source row of each normalised URL, created when new (one per URL, shared)."""
    existing = Source.objects.in_bulk(urls, field_name="url")
    missing = [Source(url=url, host=urlsplit(url).hostname or "") for url in urls - set(existing)]
    Source.objects.bulk_create(missing, ignore_conflicts=True)
    return Source.objects.in_bulk(urls, field_name="url") if missing else existing


_URL_MAX = Source._meta.get_field("url").max_length


def _field_max(name: str) -> int:
    return Citation._meta.get_field(name).max_length


def _citation_key(location: dict, source_id: int, link_text: str) -> tuple:
    return (
        getattr(location.get("chapter"), "pk", None),
        getattr(location.get("key_point"), "pk", None),
        getattr(location.get("takeaway"), "pk", None),
        source_id,
        link_text,
    )


@transaction.atomic
def sync_citations(*, summary: Summary) -> list[Citation]:
    """Make the summary's citations match the links in its text.

    A citation that is still in the text keeps its row (and so an editor's key phrase and,
    later, confirmations); new links get new rows, removed links lose theirs. Sources are
    shared by normalised URL and never deleted here (other summaries may cite them).
    """
    # A URL too long to store cannot be checked either; it is left out.
    found = [
        (location, item)
        for location, item in _found_citations(summary)
        if len(item.normalised_url) <= _URL_MAX and len(item.url) <= _URL_MAX
    ]
    sources = _sources_for({item.normalised_url for _, item in found})
    previous = defaultdict(list)
    for citation in summary.citations.all():
        key = (
            citation.chapter_id,
            citation.key_point_id,
            citation.takeaway_id,
            citation.source_id,
            citation.link_text,
        )
        previous[key].append(citation)

    kept, created = [], []
    for position, (location, item) in enumerate(found, start=1):
        source = sources[item.normalised_url]
        key = _citation_key(location, source.pk, item.link_text[: _field_max("link_text")])
        matches = previous.get(key)
        citation = (
            matches.pop(0) if matches else Citation(summary=summary, source=source, **location)
        )
        citation.position = position
        citation.url = item.url
        citation.link_text = item.link_text[: _field_max("link_text")]
        citation.claim = item.claim
        if not citation.key_phrase_edited:
            citation.key_phrase = item.key_phrase[: _field_max("key_phrase")]
        (kept if citation.pk else created).append(citation)

    stale = [c.pk for rows in previous.values() for c in rows]
    Citation.objects.filter(pk__in=stale).delete()
    Citation.objects.bulk_update(kept, ["position", "url", "link_text", "claim", "key_phrase"])
    Citation.objects.bulk_create(created)
    return sorted(kept + created, key=lambda c: c.position)


def update_search_document(*, summary: Summary) -> Summary:
    """Store the summary's searchable plain text: title, 30 seconds, takeaways, chapters."""
    parts = [summary.video.title, summary.tldr]
    parts += [f"{k.title} {markdown_to_text(k.body)}" for k in summary.key_points.all()]
    parts += [markdown_to_text(t.text) for t in summary.takeaways.all()]
    for chapter in summary.chapters.all():
        parts += [chapter.title, chapter.synopsis, markdown_to_text(chapter.body)]
    summary.search_document = "\n".join(p for p in parts if p)
    Summary.objects.filter(pk=summary.pk).update(search_document=summary.search_document)
    return summary


@transaction.atomic
def refresh_derived_data(*, summary: Summary) -> Summary:
    """After a summary or its parts were saved: rebuild its citations and search text."""
    sync_citations(summary=summary)
    update_search_document(summary=summary)
    return summary


@transaction.atomic
def rerender_summary(*, summary: Summary) -> Summary:
    """Render every Markdown field of a summary again and rebuild its citations.

    Used after the Markdown rules change (HTML is stored at save time, never per request).
    Idempotent: running it twice gives the same HTML and the same citations.
    """
    for model in (KeyPoint, Takeaway, Chapter, Caveat):
        for item in model.objects.filter(summary=summary):
            item.save()
    refresh_derived_data(summary=summary)
    return summary


# --- Warnings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Warning:
    where: str
    message: str

    def __str__(self):
        return f"{self.where}: {self.message}"


def _time_warnings(summary: Summary, chapters: list[Chapter]) -> list[Warning]:
    duration = summary.video.duration_seconds
    warnings = []
    previous = None
    for chapter in chapters:
        if chapter.start_time is None:
            continue
        where = f"Chapter {chapter.position} “{chapter.title}”"
        if duration and chapter.start_time >= duration:
            warnings.append(
                Warning(
                    where,
                    f"starts at {format_duration(chapter.start_time)}, after the video "
                    f"ends ({format_duration(duration)}).",
                )
            )
        if previous is not None and chapter.start_time <= previous.start_time:
            warnings.append(
                Warning(
                    where,
                    f"starts at {format_duration(chapter.start_time)}, not after the "
                    f"chapter before it ({format_duration(previous.start_time)}).",
                )
            )
        previous = chapter
    items = [("Key point", k) for k in summary.key_points.all()]
    items += [("Takeaway", t) for t in summary.takeaways.all()]
    for label, item in items:
        if item.time is not None and duration and item.time >= duration:
            warnings.append(
                Warning(
                    f"{label} {item.position}",
                    f"time {format_duration(item.time)} is after "
                    f"the video ends ({format_duration(duration)}).",
                )
            )
    return warnings


def _normalise_text(text: str) -> str:
    return " ".join(text.lower().split())


def _figure_warnings(
    takeaways: list[Takeaway], citations: list[Citation], chapters
) -> list[Warning]:
    """A figure in a takeaway needs a source: its own link, or a cited paragraph stating it."""
    cited_paragraphs = []
    for chapter in chapters:
        for item in extract_citations(chapter.body):
            cited_paragraphs.append(_normalise_text(item.paragraph))
    cited_takeaways = {c.takeaway_id for c in citations if c.takeaway_id}
    warnings = []
    for takeaway in takeaways:
        if takeaway.pk in cited_takeaways:
            continue
        for figure in find_figures(takeaway.text):
            needle = _normalise_text(figure)
            if not any(needle in paragraph for paragraph in cited_paragraphs):
                warnings.append(
                    Warning(
                        f"Takeaway {takeaway.position}",
                        f"“{figure}” has no cited source "
                        "(link it here, or cite it in the chapter that states it).",
                    )
                )
    return warnings


def _attribution_warnings(citations: list[Citation]) -> list[Warning]:
    organisations = [o for o in Organisation.objects.exclude(domains="") if o.domain_list()]
    by_name = {o.name: o for o in organisations}
    warnings = []
    for citation in citations:
        for name in attributed_organisation_names(citation.claim, list(by_name)):
            domains = by_name[name].domain_list()
            if not host_matches_domains(citation.url, domains):
                host = urlsplit(citation.url).hostname
                warnings.append(
                    Warning(
                        f"Link “{citation.link_text}”",
                        f"the claim is attributed to {name}, "
                        f"but the link goes to {host}, not {', '.join(domains)}.",
                    )
                )
    return warnings


def summary_warnings(*, summary: Summary) -> list[Warning]:
    """Soft problems an editor should look at; none of them blocks saving or publishing.

    Chapter times out of order or past the video's end, a figure in a takeaway with no
    cited source, and an "X says" claim whose link is not on X's domains.
    """
    chapters = list(summary.chapters.all())
    takeaways = list(summary.takeaways.all())
    citations = list(summary.citations.all())
    return (
        _time_warnings(summary, chapters)
        + _figure_warnings(takeaways, citations, chapters)
        + _attribution_warnings(citations)
    )
