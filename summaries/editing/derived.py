"""What is derived from a summary's text on every save: citations and the search text."""

import operator
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeAlias
from urllib.parse import urlsplit

import reversion
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.db.models import F, QuerySet

from summaries import checking
from summaries.models import (
    Caveat,
    Chapter,
    Citation,
    KeyPoint,
    Source,
    Summary,
    Takeaway,
)
from summaries.models.base import max_length
from summaries.models.rows import insert_rows, insert_written_rows
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.generation import content_changed
from summaries.text.apostrophes import searchable
from summaries.text.citations import (
    FoundCitation,
    extract_citations,
)
from summaries.text.markdown import markdown_to_text

from . import gate

# Where a link is: {"key_point": ...}, {"takeaway": ...} or {"chapter": ...}, as the
# keyword argument of Citation naming its part.
Location: TypeAlias = dict[str, KeyPoint | Takeaway | Chapter]
# The parts of a citation that identify it across saves (see sync_citations).
CitationKey: TypeAlias = tuple[int | None, int | None, int | None, int, str]


@dataclass(frozen=True)
class WrittenCitations:
    """A summary's citations as sync_citations left them, in reading order (without their
    sources), and the sources it inserted, as written, by id (when it claimed them)."""

    citations: list[Citation]
    new_sources: dict[int, Source]


# Within recording_citations(): what sync_citations wrote for each summary, by its id.
_recorded: ContextVar[dict[int, WrittenCitations] | None] = ContextVar(
    "recorded_citations", default=None
)


@contextmanager
def recording_citations() -> Iterator[dict[int, WrittenCitations]]:
    """Within the block, `sync_citations` records what it writes for each summary, by
    summary id: for an answer that shows the rows without reading them back. Only what
    sync_citations wrote is recorded: a block must change no citation nor new source
    after the sync it shows."""
    recorded: dict[int, WrittenCitations] = {}
    token = _recorded.set(recorded)
    try:
        yield recorded
    finally:
        _recorded.reset(token)


def _found_citations(summary: Summary) -> Iterator[tuple[Location, FoundCitation]]:
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


def _source_ids(
    urls: set[str], *, claim_new: bool = False
) -> tuple[dict[str, int], dict[int, Source]]:
    """The id of the Source row of each normalised URL, created when new (one per URL,
    shared). Only ids are read: a citation needs no more, and a text may cite thousands.

    With `claim_new`, new sources are inserted claimed for a check, queued on commit
    (checking.claims_for_new_sources): what checking.queue_checks_for_summary would do
    with them, without an UPDATE of every new row; the sources inserted come back as
    written, by id (the second item, otherwise empty).
    """
    existing = _existing_source_ids(urls)
    # Sorted: saves that create the same sources meanwhile insert them in the same order.
    missing = sorted(urls - set(existing))
    columns = {"url": missing, "host": [urlsplit(url).hostname or "" for url in missing]}
    # A source another save created meanwhile is "updated" to itself: its id comes back
    # with the others, with no second query.
    if not (claim_new and missing):
        created = insert_rows(Source, columns, unique="url")
        return existing | dict(zip(missing, created, strict=True)), {}
    claims = checking.claims_for_new_sources(len(missing))
    columns["check_token"] = claims.tokens
    # The tokens are new: a source another save created keeps its own (and its claim).
    written = insert_written_rows(
        Source, columns, same={"claimed_until": claims.until}, unique="url", mark="check_token"
    )
    new_sources = {pk: source for pk, source in written if source is not None}
    checking.queue_new_sources(
        claims=claims, ids=[pk if pk in new_sources else None for pk, _ in written]
    )
    ids = [pk for pk, _source in written]
    return existing | dict(zip(missing, ids, strict=True)), new_sources


def _existing_source_ids(urls: set[str]) -> dict[str, int]:
    return dict(Source.objects.filter(url__in=urls).values_list("url", "id"))


_URL_MAX = max_length(Source, "url")


def _field_max(name: str) -> int:
    return max_length(Citation, name)


_PART_NAMES = ("chapter", "key_point", "takeaway")
# What a save writes again on a citation that stays (a kept row otherwise keeps its
# verdicts, confirmations and an edited key phrase): where it is and what it says.
_REWRITTEN = (
    "chapter_id",
    "key_point_id",
    "takeaway_id",
    "position",
    "url",
    "link_text",
    "claim",
    "key_phrase",
)
_written = operator.attrgetter(*_REWRITTEN)


def _citation_key(location: Location, source_id: int, link_text: str) -> CitationKey:
    return (
        getattr(location.get("chapter"), "pk", None),
        getattr(location.get("key_point"), "pk", None),
        getattr(location.get("takeaway"), "pk", None),
        source_id,
        link_text,
    )


def _locked_in_order(citations: QuerySet[Citation]) -> QuerySet[Citation]:
    """These citations in id order, their rows locked as they are read (PostgreSQL;
    SQLite has no row locks: a writer holds the whole database)."""
    citations = citations.order_by("id")
    return citations.select_for_update() if connection.features.has_select_for_update else citations


def lock_citations(*, summary_ids: Iterable[int]) -> None:
    """Lock the citations of these summaries until the transaction ends, in id order.

    The order in which a transaction that writes citations locks rows: the summary's (the
    live summary, then its working copy), then its citations, all at once and in id order,
    before it writes any citation or the content generation row (`content_changed`), then
    that row. A worker recording checks (checking.record_results) locks the citations of
    its sources in id order before that row too, so neither ever holds a row the other
    waits for while it waits for one the other holds (PostgreSQL would end that deadlock
    by failing one of them). A deleted part takes its citations with it, so a save locks
    them before it writes any part.
    """
    ids = list(summary_ids)
    if ids and connection.features.has_select_for_update:
        list(_locked_in_order(Citation.objects.filter(summary_id__in=ids)).values_list("pk"))


# A citation as it is matched: its part (chapter, key point, takeaway ids), source, link
# text and claim.
MatchKey: TypeAlias = tuple[int | None, int | None, int | None, int, str, str]


class CitationMatcher:
    """Finds a summary's citations again for the links of a text, so that each link keeps
    the row it had (and the evidence, archived copy, confirmation and key phrase on it).

    A link takes, in this order: the row of the same part, source and link text; else one
    of the same source and link text anywhere in the summary (the link moved, or its part
    was written again); else one of the same source and claim (its link text changed too).
    Every exact match is made before any looser one, so a link that stayed where it was
    never loses its row to one that moved.
    """

    def __init__(self, citations: Iterable[Citation]) -> None:
        self._rows = list(citations)
        self._taken: set[int] = set()
        self._pools: tuple[defaultdict[tuple[Any, ...], list[Citation]], ...] = (
            defaultdict(list),
            defaultdict(list),
            defaultdict(list),
        )
        for citation in self._rows:
            for pool, key in zip(self._pools, self._keys(_key_of(citation)), strict=True):
                pool[key].append(citation)

    @staticmethod
    def _keys(key: MatchKey) -> tuple[tuple[Any, ...], ...]:
        chapter, key_point, takeaway, source, link_text, claim = key
        return (
            (chapter, key_point, takeaway, source, link_text),
            (source, link_text),
            (
                source,
                claim,
            ),
        )

    def match(self, keys: list[MatchKey]) -> list[Citation | None]:
        """The row each key takes (None: a new link), rows given out once each."""
        found: list[Citation | None] = [None] * len(keys)
        for level, pool in enumerate(self._pools):
            for index, key in enumerate(keys):
                if found[index] is None:
                    found[index] = self._take(pool, self._keys(key)[level])
        return found

    def _take(
        self, pool: defaultdict[tuple[Any, ...], list[Citation]], key: tuple[Any, ...]
    ) -> Citation | None:
        for citation in pool.get(key, ()):
            if citation.pk not in self._taken:
                self._taken.add(citation.pk)
                return citation
        return None

    def unmatched(self) -> list[Citation]:
        return [c for c in self._rows if c.pk not in self._taken]


def _key_of(citation: Citation) -> MatchKey:
    return (
        citation.chapter_id,
        citation.key_point_id,
        citation.takeaway_id,
        citation.source_id,
        citation.link_text,
        citation.claim,
    )


@transaction.atomic
def sync_citations(*, summary: Summary, claim_new_sources: bool = False) -> list[Citation]:
    """Make the summary's citations match the links in its text.

    A citation that is still in the text keeps its row (and so an editor's key phrase,
    confirmations, evidence and archived copy), in its part or moved to another
    (CitationMatcher); new links get new rows, removed links lose theirs. Sources are
    shared by normalised URL and never deleted here (other summaries may cite them); with
    `claim_new_sources`, the new ones are claimed and their checks queued on commit. The
    summary's citations are locked as they are read (`lock_citations`).
    """
    # A URL too long to store cannot be checked either; it is left out.
    found = [
        (location, item)
        for location, item in _found_citations(summary)
        if len(item.normalised_url) <= _URL_MAX and len(item.url) <= _URL_MAX
    ]
    previous = CitationMatcher(_locked_in_order(Citation.objects.filter(summary=summary)))
    source_ids, new_sources = _source_ids(
        {item.normalised_url for _, item in found}, claim_new=claim_new_sources
    )

    link_text_max, key_phrase_max = _field_max("link_text"), _field_max("key_phrase")
    links = [
        (location, item, source_ids[item.normalised_url], item.link_text[:link_text_max])
        for location, item in found
    ]
    matches = previous.match(
        [
            _citation_key(location, source_id, link_text) + (item.claim,)
            for location, item, source_id, link_text in links
        ]
    )
    kept: list[Citation] = []
    created: list[Citation] = []
    changed: list[Citation] = []
    for position, ((location, item, source_id, link_text), citation) in enumerate(
        zip(links, matches, strict=True), start=1
    ):
        parts: dict[str, int | None] = {f"{name}_id": None for name in _PART_NAMES}
        parts.update({f"{name}_id": part.pk for name, part in location.items()})
        if citation is not None:
            before = _written(citation)
            for name, value in parts.items():
                setattr(citation, name, value)
        else:
            # Ids rather than objects: a text may cite thousands of links.
            citation = Citation(summary_id=summary.pk, source_id=source_id, **parts)
            before = None
        citation.position = position
        citation.url = item.url
        citation.link_text = link_text
        citation.claim = item.claim
        if not citation.key_phrase_edited:
            citation.key_phrase = item.key_phrase[:key_phrase_max]
        if before is None:
            created.append(citation)
        else:
            kept.append(citation)
            if _written(citation) != before:
                changed.append(citation)

    stale = [c.pk for c in previous.unmatched()]
    Citation.objects.filter(pk__in=stale).delete()
    Citation.objects.bulk_update(changed, _REWRITTEN)
    _insert_citations(summary, created)
    citations = sorted(kept + created, key=lambda c: c.position)
    recorded = _recorded.get()
    if recorded is not None:
        recorded[summary.pk] = WrittenCitations(citations, new_sources)
    return citations


# What differs between new citations: the rest is the same in all (defaults, the summary).
_INSERTED = ("source_id", *_REWRITTEN)


def _insert_citations(summary: Summary, citations: list[Citation]) -> None:
    """Insert new citations (built with their defaults), giving each its id."""
    columns = {name: [getattr(c, name) for c in citations] for name in _INSERTED}
    ids = insert_rows(Citation, columns, same={"summary_id": summary.pk})
    for citation, pk in zip(citations, ids, strict=True):
        citation.pk = pk
        citation._state.adding, citation._state.db = False, connection.alias


def _extracted_key_phrase(citation: Citation) -> str:
    """The phrase extraction finds for the citation's link in its part's text."""
    if citation.chapter is not None:
        text = citation.chapter.body
    elif citation.key_point is not None:
        text = citation.key_point.body
    elif citation.takeaway is not None:
        text = citation.takeaway.text
    else:
        return ""
    limit = _field_max("link_text")
    for item in extract_citations(text):
        if item.normalised_url == citation.source.url and item.link_text[:limit] == (
            citation.link_text
        ):
            return item.key_phrase[: _field_max("key_phrase")]
    return ""


def _apply_key_phrase(citation: Citation, phrase: str, edited: bool) -> bool:
    """Set one citation's phrase (its extracted one when not `edited`); whether it changed.

    A changed phrase clears the claim verdict, which was about the old phrase.
    """
    if not edited:
        phrase = _extracted_key_phrase(citation)
    if (citation.key_phrase, citation.key_phrase_edited) == (phrase, edited):
        return False
    fields = ["key_phrase", "key_phrase_edited"]
    if phrase != citation.key_phrase:
        citation.verdict = Citation.Verdict.UNCHECKED
        citation.verdict_excerpt, citation.verdict_checked_at = "", None
        fields += ["verdict", "verdict_excerpt", "verdict_checked_at"]
    citation.key_phrase, citation.key_phrase_edited = phrase, edited
    citation.save(update_fields=fields)
    return True


@transaction.atomic
def set_key_phrase(*, citation: Citation, phrase: str, user: gate.Actor) -> Citation:
    """Set what a citation's source page must still say, as an editor chose it.

    Runs of whitespace become one space. An empty phrase goes back to the one extracted
    from the claim; any other phrase is kept by later extraction (`sync_citations`). It
    need not be words of the claim: a source may state the claim's figure differently.
    When the phrase changes, the claim verdict (about the old phrase) is cleared and a
    check of the source is queued. The same link in the summary's unpublished changes (a
    working copy) gets the phrase too, unless its phrase was changed there, so publishing
    the changes keeps it. The summary records a revision by `user` and cached pages are
    made stale. Setting the phrase it has changes nothing. Raises ValidationError
    (key_phrase) for a phrase over the field's max_length.
    """
    summary = citation.summary
    if summary.status == Summary.Status.PUBLISHED and not summary.is_working_copy:
        raise PermissionDenied(
            "A published summary's key phrases change only through its unpublished changes."
        )
    gate.require(user, gate.CHANGE, "change summaries")
    phrase = " ".join(phrase.split())
    limit = _field_max("key_phrase")
    if len(phrase) > limit:
        raise ValidationError(
            {"key_phrase": f"At most {limit} characters (this phrase has {len(phrase)})."}
        )
    edited = bool(phrase)
    before = {"key_phrase": citation.key_phrase, "key_phrase_edited": citation.key_phrase_edited}
    if not _apply_key_phrase(citation, phrase, edited):
        return citation
    if citation.key_phrase != before["key_phrase"]:
        checking.request_checks(sources=[citation.source])
    twins = Citation.objects.filter(
        summary__working_copy_of=citation.summary_id,
        source_id=citation.source_id,
        link_text=citation.link_text,
        **before,
    ).select_related("source", "chapter", "key_point", "takeaway")
    for twin in twins:
        _apply_key_phrase(twin, phrase, edited)

    summary = citation.summary
    signed_in = user if user is not None and user.is_authenticated else None
    with reversion.create_revision():
        summary.updated_by = signed_in
        summary.save(update_fields=["updated_by"])
        if signed_in is not None:
            reversion.set_user(signed_in)
        if edited:
            comment = f"Key phrase of “{citation.link_text}” set to “{citation.key_phrase}”"
        else:
            comment = (
                f"Key phrase of “{citation.link_text}” back to the extracted "
                f"“{citation.key_phrase}”"
            )
        reversion.set_comment(comment)
    # The phrase is in the page's links to the source (a text fragment).
    page_changed(summary_id=citation.summary_id)
    content_changed(purge=cache_tags.of_checked_summaries([citation.summary_id]))
    return citation


def update_search_document(*, summary: Summary) -> Summary:
    """Store the summary's searchable plain text: title, 30 seconds, takeaways, chapters."""
    parts = [summary.summarised_video.title, summary.tldr]
    parts += [f"{k.title} {markdown_to_text(k.body)}" for k in summary.key_points.all()]
    parts += [markdown_to_text(t.text) for t in summary.takeaways.all()]
    for chapter in summary.chapters.all():
        parts += [chapter.title, chapter.synopsis, markdown_to_text(chapter.body)]
    # Apostrophes as PostgreSQL's parser splits words at them (text.apostrophes).
    summary.search_document = searchable("\n".join(p for p in parts if p))
    Summary.objects.filter(pk=summary.pk).update(search_document=summary.search_document)
    return summary


def page_changed(*, summary_id: int) -> None:
    """The summary's reader page must render its article again (SummaryPage): its parts or
    their citations changed."""
    Summary.objects.filter(pk=summary_id).update(page_version=F("page_version") + 1)


@transaction.atomic
def refresh_derived_data(*, summary: Summary, claim_new_sources: bool = False) -> Summary:
    """After a summary or its parts were saved: rebuild its citations and search text, and
    have its page's stored article rendered again. With `claim_new_sources`, sources cited
    for the first time are checked after the commit (sync_citations)."""
    sync_citations(summary=summary, claim_new_sources=claim_new_sources)
    update_search_document(summary=summary)
    page_changed(summary_id=summary.pk)
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
    content_changed(purge=cache_tags.of_checked_summaries([summary.pk]))
    return summary
