"""Archived copies of cited pages: found, checked against the key phrase, shown, withdrawn."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.checking.source_labels import needs_archived_copy
from summaries.linkcheck import archive as wayback
from summaries.linkcheck import normalise_phrase
from summaries.models import ArchiveCapture, ArchivedCopy, Citation
from summaries.pagecache.generation import content_changed

from . import events, matching
from .captures import request_captures
from .options import archive

logger = logging.getLogger(__name__)

FIND_TASK = "summaries.tasks.find_archived_copy"


class Accepted(NamedTuple):
    """The copy a look-up kept: its address, time, where it holds the phrase, and how it
    was found to be the page as cited (ArchivedCopy.Match)."""

    url: str
    captured_at: datetime | None
    excerpt: str
    matched_by: str


class ArchiveUnavailable(Exception):
    """The archive's index could not be read: worth trying again later."""


def needs_copy(citation: Citation) -> bool:
    """Whether the citation's live page fails it (dead, or without the claim)."""
    source = citation.source
    return needs_archived_copy(
        state=source.state, error_class=source.error_class, verdict=citation.verdict
    )


def _copy_of(citation: Citation) -> ArchivedCopy | None:
    try:
        return citation.archived_copy
    except ArchivedCopy.DoesNotExist:
        return None


def review_sources(*, source_ids: Iterable[int], now: datetime | None = None) -> dict:
    """After checks of these sources were recorded: show, withdraw or look up archived
    copies of their citations, and queue captures of pages whose claim was found.

    - A citation whose page fails it and that has a verified copy for its key phrase (found
      to be the page as cited: `matching`) gets it shown; without one, a look-up is queued
      (unless one found nothing within ARCHIVE_LOOKUP_AGAIN_DAYS for the same phrase). A
      copy kept without such a match is withdrawn and looked up again.
    - A shown copy of a citation whose live page holds the claim again is withdrawn.
    Each change is one `citation.archived_copy_changed` event, and pages are marked stale.
    Returns counts of what was done.
    """
    now = now or timezone.now()
    ids = list(source_ids)
    counts = {"shown": 0, "withdrawn": 0, "looked_up": 0, "captures": 0}
    with transaction.atomic():
        cited = (
            Citation.objects.filter(source_id__in=ids)
            .select_related("source", "archived_copy")
            .order_by("id")
        )
        again = now - timedelta(days=settings.ARCHIVE_LOOKUP_AGAIN_DAYS)
        for citation in cited:
            copy = _copy_of(citation)
            if not needs_copy(citation):
                if copy is not None and copy.shown:
                    _set_shown(copy, citation, False, now)
                    counts["withdrawn"] += 1
                continue
            same_phrase = copy is not None and copy.key_phrase == citation.key_phrase
            # A copy kept without being found to be the page as cited (only holding the
            # phrase): never shown, and looked up again.
            unmatched = copy is not None and bool(copy.url) and not copy.verified
            if copy is not None and copy.shown:
                if same_phrase and not unmatched:
                    continue
                # Checked against another key phrase, or never against the page as cited:
                # not shown until checked again.
                _set_shown(copy, citation, False, now)
                counts["withdrawn"] += 1
            if copy is not None and copy.verified and same_phrase:
                _set_shown(copy, citation, True, now)
                counts["shown"] += 1
            elif settings.ARCHIVE_LOOKUP and (
                copy is None or not same_phrase or unmatched or copy.looked_up_at < again
            ):
                queue_after_commit(FIND_TASK, citation.pk)
                counts["looked_up"] += 1
        if counts["shown"] or counts["withdrawn"]:
            content_changed()
        counts["captures"] = len(request_captures(source_ids=ids, now=now))
    return counts


def _set_shown(copy: ArchivedCopy, citation: Citation, shown: bool, now: datetime) -> None:
    copy.shown = shown
    copy.save(update_fields=["shown"])
    events.archived_copy_changed(citation=citation, copy=copy, now=now)


def _candidates(citation: Citation, cited: matching.Cited, now: datetime) -> list[tuple[str, str]]:
    """Captures to try, as (timestamp, original URL), in the order of `matching`: the
    archive's captures with status 200 taken at or before the citation was first cited,
    newest first, then those taken after it until the page stopped being as cited, oldest
    first; the captures we asked for ourselves join them by their time, whenever made."""
    url = citation.source.url
    limit = max(1, settings.ARCHIVE_LOOKUP_CANDIDATES)
    cited_at = wayback.format_timestamp(cited.at)
    earlier = _index(url, before=cited.at, limit=limit)
    end = matching.claim_lost_at(source_id=citation.source_id, cited=cited, now=now)
    later = (
        [c for c in _index(url, before=end, limit=limit) if c[0] > cited_at]
        if end > cited.at
        else []
    )
    ours = ArchiveCapture.objects.filter(
        source_id=citation.source_id,
        state=ArchiveCapture.State.SUCCESS,
        captured_at__isnull=False,
    ).values_list("captured_at", flat=True)
    own = [(wayback.format_timestamp(at), url) for at in ours if at is not None]
    before = sorted({*earlier, *(c for c in own if c[0] <= cited_at)}, reverse=True)[:limit]
    after = sorted({*later, *(c for c in own if c[0] > cited_at)})[:limit]
    return list(dict.fromkeys([*before, *after]))


def _index(url: str, *, before: datetime, limit: int) -> list[tuple[str, str]]:
    found = wayback.closest_captures(url, before=before, archive=archive(), limit=limit)
    if found is None:
        raise ArchiveUnavailable(f"the archive's index did not answer for {url}")
    return found


def find_copy(*, citation_id: int, now: datetime | None = None) -> ArchivedCopy | None:
    """Look up an archived copy for a citation whose live page fails it, and keep the first
    that passes: fetched through the address-safe fetcher, answered 200 without a
    redirect, not an error page, holding the key phrase (`linkcheck.archive.copy_problem`)
    and the page as it was cited (`matching`: the cited evidence's payload digest, or the
    passage recorded around the phrase). Candidates are the captures of `matching`'s
    window, closest to the citation first. A citation with no record of what it was cited
    on gets no copy, and the archive is not asked.

    The copy is shown when the live page still fails the citation. A look-up that finds
    nothing is recorded too (no copy), so it is not repeated before
    ARCHIVE_LOOKUP_AGAIN_DAYS. Raises ArchiveUnavailable when the index cannot be read
    (the task tries again). Returns the ArchivedCopy row, or None when there was nothing
    to do (the citation is gone, has no key phrase, or its page recovered).
    """
    now = now or timezone.now()
    citation = Citation.objects.select_related("source").filter(pk=citation_id).first()
    if citation is None or not normalise_phrase(citation.key_phrase) or not needs_copy(citation):
        return None
    phrase = citation.key_phrase
    cited = matching.what_was_cited(citation)
    accepted: Accepted | None = None
    for timestamp, original in _candidates(citation, cited, now) if cited else []:
        result = wayback.read_copy(
            timestamp,
            original,
            archive=archive(),
            max_body=settings.FETCH_MAX_BODY,
            keep_body=True,  # for the payload digest (matching.match)
        )
        problem, excerpt = wayback.copy_problem(result, phrase)
        matched = matching.match(result, cited) if cited is not None and not problem else ""
        if not problem and not matched:
            problem = "the copy is not the page as cited"
        if problem:
            logger.info("archived copy %s of %s refused: %s", timestamp, original, problem)
            continue
        url = archive().snapshot_url(timestamp, original)
        accepted = Accepted(url, wayback.parse_timestamp(timestamp), excerpt, matched)
        break
    if cited is None:
        logger.info("no archived copy for citation %s: no record of what it cited", citation.pk)
    return _record_copy(citation_id=citation.pk, phrase=phrase, accepted=accepted, now=now)


@transaction.atomic
def _record_copy(
    *,
    citation_id: int,
    phrase: str,
    accepted: Accepted | None,
    now: datetime,
) -> ArchivedCopy | None:
    """Store what a look-up found, as the citation is now (re-read under a lock)."""
    citation = (
        Citation.objects.select_for_update(of=("self",))
        .select_related("source")
        .filter(pk=citation_id)
        .first()
    )
    if citation is None or citation.key_phrase != phrase:
        return None  # gone, or its phrase changed meanwhile: the next check looks again
    copy = ArchivedCopy.objects.select_for_update().filter(citation=citation).first()
    was_shown, was_url = (copy.shown, copy.url) if copy else (False, "")
    copy = copy or ArchivedCopy(citation=citation)
    kept = accepted or Accepted("", None, "", "")
    copy.url, copy.captured_at, copy.excerpt = kept.url, kept.captured_at, kept.excerpt
    copy.matched_by = kept.matched_by
    copy.key_phrase = phrase
    copy.verified_at = now if accepted else None
    copy.looked_up_at = now
    copy.shown = bool(accepted) and needs_copy(citation)
    copy.save()
    if copy.shown != was_shown or (copy.shown and copy.url != was_url):
        content_changed()
        events.archived_copy_changed(citation=citation, copy=copy, now=now)
    return copy
