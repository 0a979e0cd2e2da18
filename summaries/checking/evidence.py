"""The evidence vault: what a cited page said, kept as a WARC record.

When a check reads a page and finds a citation's key phrase, the response (status, headers,
body; PDFs too) is kept as a WARC record in the "evidence" storage, once per payload digest,
and the citation gets two rows of `CitationEvidence`: "cited", what the page said when it
was first found to hold the claim (or when an editor confirmed it), kept until the citation
goes; and "latest", the latest check that read the page. A citation whose phrase is no
longer found, but which has evidence of when it was cited, gets its "latest" row too (with
no passage), so that editors can compare then and now.

Storing is best effort: a cap reached or a storage error is written on the evidence row
(`CitationEvidence.State`) and logged, and never fails the check, whose results are
recorded before (`keep_evidence` runs after `record_results` has committed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeAlias

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages
from django.db.models import Exists, OuterRef, Sum
from django.utils import timezone

from summaries import linkcheck
from summaries.linkcheck import CheckResult, find_phrase, warc
from summaries.models import Citation, CitationEvidence, EvidenceRecord

from .limiter import host_limiter
from .options import fetch_options

logger = logging.getLogger(__name__)

FOUND_VERDICTS = frozenset({Citation.Verdict.SUPPORTED, Citation.Verdict.CHANGED})
READABLE = frozenset({"ok", "redirected"})
State = CitationEvidence.State
Kind = CitationEvidence.Kind
# (source id, citation id, kind, passage): one evidence row to write.
Row: TypeAlias = tuple[int, int, str, str]


def evidence_storage() -> Storage:
    return storages["evidence"]


def record_name(digest: str) -> str:
    """Where a record is stored: fanned out by the digest's first characters."""
    return f"{digest[:2]}/{digest[2:4]}/{digest}.warc.gz"


@dataclass
class _Capture:
    """One response to keep, and what came of storing it."""

    source_id: int
    result: CheckResult
    digest: str
    record: EvidenceRecord | None = None
    state: str = State.STORED


class Allowance:
    """Bytes stored so far, in all and per source, kept up to date as records are written.

    Read when a first record is to be written (a recheck of unchanged pages reads
    nothing): the total once per allowance, which a check batch keeps for its whole run
    (summing a large vault for every chunk of results would cost more than the chunk),
    each source's bytes once. Other workers' writes during the batch are not seen, so a
    cap can be passed by at most what the batches running meanwhile store.
    """

    def __init__(self) -> None:
        self.total: int | None = None
        self.per_source: dict[int, int] = {}

    def _read(self, source_id: int) -> None:
        if self.total is None:
            self.total = EvidenceRecord.objects.aggregate(n=Sum("size"))["n"] or 0
        if source_id not in self.per_source:
            stored = EvidenceRecord.objects.filter(source_id=source_id).aggregate(n=Sum("size"))
            self.per_source[source_id] = stored["n"] or 0

    def refusal(self, source_id: int, size: int) -> str | None:
        """The cap a record of `size` bytes would pass, or None."""
        if size > settings.EVIDENCE_MAX_RECORD_BYTES:
            return State.OVER_RECORD_CAP
        self._read(source_id)
        if self.per_source[source_id] + size > settings.EVIDENCE_MAX_SOURCE_BYTES:
            return State.OVER_SOURCE_CAP
        if (self.total or 0) + size > settings.EVIDENCE_MAX_TOTAL_BYTES:
            return State.OVER_TOTAL_CAP
        return None

    def take(self, source_id: int, size: int) -> None:
        self.per_source[source_id] = self.per_source.get(source_id, 0) + size
        self.total = (self.total or 0) + size


def keep_evidence(
    *,
    results: dict[int, CheckResult],
    allowance: Allowance | None = None,
    now: datetime | None = None,
) -> int:
    """Keep the evidence of recorded checks (source id -> result); the rows written.

    `allowance` is what the caps are counted against (a check batch passes one for its
    whole run). Never raises: a failure is logged and the checks stand as recorded.
    """
    if not settings.EVIDENCE_ENABLED:
        return 0
    try:
        return _keep_evidence(results, allowance or Allowance(), now or timezone.now())
    except Exception:
        logger.exception("evidence not kept for %d source(s)", len(results))
        return 0


def _readable(results: dict[int, CheckResult]) -> dict[int, CheckResult]:
    return {
        source_id: result
        for source_id, result in results.items()
        if result.body is not None and str(result.state) in READABLE and result.status
    }


def _keep_evidence(results: dict[int, CheckResult], allowance: Allowance, now: datetime) -> int:
    readable = _readable(results)
    if not readable:
        return 0
    rows = _evidence_rows(readable)
    if not rows:
        return 0
    needed = {source_id for source_id, *_ in rows}
    captures = {
        source_id: _Capture(
            source_id, readable[source_id], warc.payload_digest(readable[source_id].body or b"")
        )
        for source_id in needed
    }
    _store(captures, allowance, now)
    return _write_rows(rows, captures)


def _evidence_rows(readable: dict[int, CheckResult]) -> list[Row]:
    """(source id, citation id, kind, passage) of each evidence row these results give.

    A citation whose phrase the check found (its verdict of this very check) gets "latest"
    and, when it has none, "cited"; one whose phrase is gone gets "latest" (no passage)
    only when it has "cited" evidence to compare with.
    """
    has_cited = CitationEvidence.objects.filter(citation=OuterRef("pk"), kind=Kind.CITED)
    citations = (
        Citation.objects.filter(source_id__in=list(readable))
        .exclude(key_phrase="")
        .annotate(has_cited=Exists(has_cited))
        .values_list(
            "pk", "source_id", "verdict", "verdict_excerpt", "verdict_checked_at", "has_cited"
        )
    )
    rows: list[Row] = []
    for pk, source_id, verdict, excerpt, checked_at, has_cited_row in citations:
        if checked_at != readable[source_id].checked_at:
            continue  # the phrase changed since: this check says nothing of it
        if verdict in FOUND_VERDICTS:
            rows.append((source_id, pk, Kind.LATEST, excerpt))
            if not has_cited_row:
                rows.append((source_id, pk, Kind.CITED, excerpt))
        elif has_cited_row:
            rows.append((source_id, pk, Kind.LATEST, ""))
    return rows


def _store(captures: dict[int, _Capture], allowance: Allowance, now: datetime) -> None:
    """Find or write each capture's record, within the caps."""
    digests = {capture.digest for capture in captures.values()}
    known = {r.digest: r for r in EvidenceRecord.objects.filter(digest__in=digests)}
    if known:
        EvidenceRecord.objects.filter(pk__in=[r.pk for r in known.values()]).update(
            last_used_at=now
        )
    for capture in captures.values():
        capture.record = known.get(capture.digest)
        if capture.record is None:
            capture.record = _write_record(capture, allowance, now)
            if capture.record is not None:
                known[capture.digest] = capture.record


def _write_record(capture: _Capture, allowance: Allowance, now: datetime) -> EvidenceRecord | None:
    result = capture.result
    data = warc.build_record(
        url=result.final_url or result.url,
        status=result.status or 0,
        headers=result.headers or [],
        body=result.body or b"",
        captured_at=result.checked_at,
        address=result.address,
    )
    refusal = allowance.refusal(capture.source_id, len(data))
    if refusal is not None:
        capture.state = refusal
        logger.warning("evidence of %s not stored: %s", result.url, refusal)
        return None
    storage = evidence_storage()
    try:
        name = storage.save(record_name(capture.digest), ContentFile(data))
    except Exception:
        capture.state = State.WRITE_FAILED
        logger.exception("evidence of %s not stored: the storage failed", result.url)
        return None
    record, created = EvidenceRecord.objects.get_or_create(
        digest=capture.digest,
        defaults={
            "name": name,
            "size": len(data),
            "url": (result.final_url or result.url)[:2000],
            "status_code": result.status or 0,
            "content_type": result.content_type[:200],
            "source_id": capture.source_id,
            "captured_at": result.checked_at,
            "last_used_at": now,
        },
    )
    if created:
        allowance.take(capture.source_id, len(data))
    elif record.name != name:
        storage.delete(name)  # another worker stored the same payload meanwhile
    return record


def _write_rows(rows: list[Row], captures: dict[int, _Capture]) -> int:
    """Insert or replace the evidence rows ("cited" rows are never replaced here)."""
    built: dict[str, list[CitationEvidence]] = {Kind.LATEST: [], Kind.CITED: []}
    for source_id, citation_id, kind, passage in rows:
        capture = captures[source_id]
        result = capture.result
        built[kind].append(
            CitationEvidence(
                citation_id=citation_id,
                kind=kind,
                state=capture.state if capture.record is None else State.STORED,
                record=capture.record,
                passage=passage,
                digest=capture.digest,
                fingerprint=result.fingerprint or "",
                url=(result.final_url or result.url)[:2000],
                captured_at=result.checked_at,
            )
        )
    CitationEvidence.objects.bulk_create(built[Kind.CITED], ignore_conflicts=True)
    CitationEvidence.objects.bulk_create(
        built[Kind.LATEST],
        update_conflicts=True,
        unique_fields=["citation", "kind"],
        update_fields=[
            "state",
            "record",
            "passage",
            "digest",
            "fingerprint",
            "url",
            "captured_at",
        ],
    )
    return len(rows)


# --- Editors ----------------------------------------------------------------------------


def pin_cited_evidence(*, citation: Citation) -> bool:
    """An editor confirmed the citation: its latest evidence becomes what it was cited on.

    Only when the latest evidence is of the page as confirmed (the same fingerprint) and
    held the phrase; whether it was pinned.
    """
    latest = (
        CitationEvidence.objects.filter(citation=citation, kind=Kind.LATEST)
        .exclude(passage="")
        .first()
    )
    if latest is None or latest.fingerprint != citation.confirmed_fingerprint:
        return False
    CitationEvidence.objects.update_or_create(
        citation=citation,
        kind=Kind.CITED,
        defaults={
            "state": latest.state,
            "record": latest.record,
            "passage": latest.passage,
            "digest": latest.digest,
            "fingerprint": latest.fingerprint,
            "url": latest.url,
            "captured_at": latest.captured_at,
        },
    )
    return True


def capture_cited_evidence(*, citation_id: int) -> bool:
    """Fetch a confirmed citation's page and keep it as what the citation was cited on,
    when the phrase is found there; whether evidence was written. Idempotent: it replaces
    the citation's "cited" evidence with the page as it is now."""
    citation = Citation.objects.filter(pk=citation_id).select_related("source").first()
    if citation is None or not citation.key_phrase:
        return False
    result = linkcheck.fetch(
        citation.source.url,
        need_body=True,
        keep_body=True,
        limiter=host_limiter(),
        **fetch_options(),
    )
    return keep_cited(citation=citation, result=result)


def keep_cited(*, citation: Citation, result: CheckResult) -> bool:
    """Keep `result` as what the citation was cited on, if it holds the key phrase."""
    if result.body is None or str(result.state) not in READABLE:
        return False
    passage = find_phrase(result.text, citation.key_phrase)
    if passage is None:
        return False
    capture = _Capture(citation.source_id, result, warc.payload_digest(result.body))
    _store({citation.source_id: capture}, Allowance(), timezone.now())
    CitationEvidence.objects.filter(citation=citation, kind=Kind.CITED).delete()
    rows: list[Row] = [(citation.source_id, citation.pk, Kind.CITED, passage)]
    _write_rows(rows, {citation.source_id: capture})
    return True


# --- Reading, verifying, retention --------------------------------------------------------


def stored_response(record: EvidenceRecord) -> warc.StoredResponse:
    """The response a record holds, verified against its digest (UnreadableRecord, or the
    storage's own error for a missing file)."""
    with evidence_storage().open(record.name, "rb") as stored:
        data = stored.read()
    return warc.verify_record(data, record.digest)


@dataclass(frozen=True)
class Failure:
    record: EvidenceRecord
    reason: str


def verify_records(*, records: Iterable[EvidenceRecord] | None = None) -> tuple[int, list[Failure]]:
    """Read every stored record back and check it against its digest: (checked, failures)."""
    failures = []
    checked = 0
    for record in records if records is not None else EvidenceRecord.objects.order_by("pk"):
        checked += 1
        try:
            stored_response(record)
        except Exception as error:  # noqa: BLE001 - every failure is reported, none stops
            failures.append(Failure(record, f"{type(error).__name__}: {error}"))
    return checked, failures


def sweep_evidence(*, now: datetime | None = None) -> tuple[int, int]:
    """Retention: forget evidence of citations that are gone, and delete the records no
    evidence uses whose last use is over EVIDENCE_RETENTION_DAYS ago, with their files.
    Returns (evidence rows deleted, records deleted)."""
    now = now or timezone.now()
    orphans = CitationEvidence.objects.exclude(
        Exists(Citation.objects.filter(pk=OuterRef("citation_id")))
    )
    rows_deleted = orphans.delete()[0]
    cutoff = now - timedelta(days=settings.EVIDENCE_RETENTION_DAYS)
    stale = EvidenceRecord.objects.filter(last_used_at__lt=cutoff).exclude(
        Exists(CitationEvidence.objects.filter(record=OuterRef("pk")))
    )
    storage = evidence_storage()
    records_deleted = 0
    for record in stale.iterator():
        try:
            storage.delete(record.name)
        except Exception:
            logger.exception("evidence file %s not deleted; kept for the next sweep", record.name)
            continue
        record.delete()
        records_deleted += 1
    return rows_deleted, records_deleted


# --- Then and now, for editors ------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """What a page said at one capture: the passage and the page's text (plain text,
    extracted from the stored record; None when it could not be read)."""

    evidence: CitationEvidence
    text: str | None
    problem: str = ""


@dataclass(frozen=True)
class Comparison:
    then: Side | None  # None: nothing was kept when the citation was cited
    now: Side | None  # None: the page could not be read at the latest check
    source_state: str
    source_error: str


def page_text(record: EvidenceRecord) -> str:
    """The main text of a stored page (scripts, styles and markup left out), as the
    checker reads pages; raises like `stored_response`."""
    response = stored_response(record)
    page = linkcheck.read_page(response.body, warc.response_content_type(response))
    return page.text or ""


def _side(row: CitationEvidence | None) -> Side | None:
    if row is None:
        return None
    if row.record is None:
        return Side(row, None, row.get_state_display())
    try:
        return Side(row, page_text(row.record))
    except Exception as error:  # noqa: BLE001 - shown to the editor, not raised
        logger.warning("evidence record %s unreadable: %s", row.record.name, error)
        return Side(row, None, "The stored record could not be read or failed its digest.")


def compare_evidence(*, citation: Citation) -> Comparison:
    """What the citation's page said when it was cited, and what it says now."""
    rows = {
        row.kind: row
        for row in CitationEvidence.objects.filter(citation=citation).select_related("record")
    }
    source = citation.source
    latest = rows.get(Kind.LATEST)
    readable_now = source.state in READABLE and latest is not None
    if readable_now and latest is not None and source.last_checked_at:
        # The latest row may be older than the latest check when that check failed.
        readable_now = latest.captured_at >= source.last_checked_at
    return Comparison(
        then=_side(rows.get(Kind.CITED)),
        now=_side(latest) if readable_now else None,
        source_state=source.get_state_display(),
        source_error=source.error,
    )
