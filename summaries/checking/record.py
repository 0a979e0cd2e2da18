"""Checking claimed sources and recording what was found: results, history, verdicts."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F, Field, Model, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from summaries import background, linkcheck, notifications
from summaries.background import queue_after_commit
from summaries.linkcheck import CheckResult, State
from summaries.linkcheck.batch import not_started
from summaries.models import Citation, Source, SourceCheck
from summaries.ops import metrics
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.generation import checks_recorded, content_changed
from summaries.webhooks import events as webhook_events

from . import evidence
from .dispatch import extend_claim, lease
from .limiter import host_limiter
from .options import fetch_options
from .source_labels import SourceLabel, label_of

logger = logging.getLogger(__name__)

# States that are checked again sooner (CHECK_INTERVAL_PROBLEM), as are changed claims.
PROBLEM_STATES = frozenset({State.BROKEN, State.UNVERIFIABLE, State.ERROR})
READABLE_STATES = frozenset({State.OK, State.REDIRECTED})
PROBLEM_VERDICTS = frozenset({Citation.Verdict.NOT_FOUND, Citation.Verdict.CHANGED})
# Archived copies are reviewed after each recorded batch (summaries/archive/copies.py).
ARCHIVE_REVIEW_TASK = "summaries.tasks.review_archived_copies"
# Results are written in chunks of this size while a batch runs, so that a worker killed
# mid-batch loses at most one chunk of work (which is redone).
RECORD_EVERY = 10


def run_checks(
    needs: dict[str, bool],
    *,
    on_result: Callable[[str, CheckResult], None] | None = None,
    time_budget: float | None = None,
    stop_requested: Callable[[], bool] | None = None,
    send_until: float | None = None,
    keep_body: bool = False,
) -> dict[str, CheckResult]:
    """Fetch URLs (url -> need_body) with the configured policy, limits and deadline.

    The one network path of workers and the `check_sources` command. URLs not started
    within `time_budget` seconds, or once `stop_requested()` is true, are missing from
    the result; no request is sent once time.monotonic() reaches `send_until`. With
    `keep_body`, pages read for a claim keep their response (body and headers) for the
    evidence vault.
    """
    per_host = settings.FETCH_PER_HOST
    return linkcheck.check_many(
        needs,
        max_in_flight=settings.FETCH_MAX_IN_FLIGHT,
        per_host=per_host,
        host_limiter=host_limiter(),
        on_result=on_result,
        time_budget=time_budget,
        should_stop=stop_requested,
        send_until=send_until,
        keep_body=keep_body,
        **fetch_options(),
    )


@dataclass
class BatchOutcome:
    recorded: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # not (or no longer) claimed by us
    remaining: list[int] = field(default_factory=list)  # not started within the budget
    # Some were left because a stop was asked for (the worker is shutting down), so the
    # remaining ones are handed back rather than counted as an attempt that ran out of time.
    stopped: bool = False


def _needs_body(source_ids: list[int]) -> set[int]:
    return set(
        Citation.objects.filter(source_id__in=source_ids)
        .exclude(key_phrase="")
        .values_list("source_id", flat=True)
    )


def check_source_batch(
    *,
    source_ids: list[int],
    token: str,
    time_budget: float | None = None,
    on_result: Callable[[Source, CheckResult], None] | None = None,
    stop_requested: Callable[[], bool] | None = None,
) -> BatchOutcome:
    """Check the sources this batch claimed and record the results (workers and command).

    Sources no longer claimed with `token` (already recorded by an earlier delivery of the
    same batch, re-claimed after the lease lapsed, or ignored) are skipped: redelivering a
    batch is harmless. The others' lease is renewed as the batch starts, and no request is
    sent after it ends. Results are written every RECORD_EVERY sources. URLs not started
    within `time_budget`, or not sent because their host had no free slot in time, are
    returned as `remaining`, still claimed, for the caller to queue. Once
    `stop_requested()` is true no new fetch starts: the fetches in flight end (by their
    deadline at the latest) and are recorded, the others are `remaining` and the outcome is
    `stopped`.
    """
    outcome = BatchOutcome()
    # The lease counted from the claim, and the batch may have waited in the queue for most
    # of it: renewed now, it lasts the batch (CHECK_CLAIM_SECONDS outlasts the task's hard
    # time limit), so the sweeper does not hand its sources to another batch meanwhile.
    # Should the batch outlast it (a worker cut off from the network for longer), it sends
    # no request after the lease ends: by then the sources may be another batch's.
    send_until = time.monotonic() + lease().total_seconds()
    extend_claim(source_ids=source_ids, token=token)
    sources = list(Source.objects.filter(pk__in=source_ids, check_token=token).order_by("id"))
    outcome.skipped = sorted(set(source_ids) - {s.pk for s in sources})
    if not sources:
        return outcome
    with_body = _needs_body([s.pk for s in sources])
    by_url: dict[str, list[Source]] = defaultdict(list)
    for source in sources:
        by_url[source.url].append(source)
    pending: dict[int, CheckResult] = {}
    allowance = evidence.Allowance()  # the vault's caps, counted over the whole batch

    def flush() -> None:
        if pending:
            # Sources whose page was not read for a phrase: none of their citations had
            # one when the batch started.
            unread = {pk for pk in pending if pk not in with_body}
            recorded = record_results(token=token, results=dict(pending), unread=unread)
            outcome.recorded += recorded
            # Evidence is kept once the results are committed: it can never lose them.
            kept = {pk: pending[pk] for pk in recorded}
            evidence.keep_evidence(results=kept, allowance=allowance)
            for result in pending.values():  # recorded: a batch holds no page texts
                result.text = result.body = result.headers = None
            pending.clear()

    def collect(url: str, result: CheckResult) -> None:
        if not_started(result):
            return
        for source in by_url[url]:
            pending[source.pk] = result
            if on_result is not None:
                on_result(source, result)
        if len(pending) >= RECORD_EVERY:
            flush()

    # Sources that were slow last time start first: a fetch that runs into its deadline
    # then overlaps the rest of the batch instead of ending it late.
    slow_first = sorted(sources, key=lambda s: (s.error_class != "timeout", -(s.response_ms or 0)))
    needs = {s.url: s.pk in with_body for s in slow_first}
    results = run_checks(
        needs,
        on_result=collect,
        time_budget=time_budget,
        stop_requested=stop_requested,
        send_until=send_until,
        keep_body=settings.EVIDENCE_ENABLED,
    )
    flush()
    outcome.remaining = sorted(
        s.pk for s in sources if s.url not in results or not_started(results[s.url])
    )
    outcome.stopped = bool(outcome.remaining) and stop_requested is not None and stop_requested()
    return outcome


def _citation_verdict(citation: Citation, result: CheckResult) -> tuple[str, str]:
    if not linkcheck.normalise_phrase(citation.key_phrase):
        return Citation.Verdict.NO_PHRASE, ""
    if result.state not in READABLE_STATES or result.text is None:
        return Citation.Verdict.UNAVAILABLE, ""
    found, excerpt = linkcheck.claim_verdict(
        result.text, citation.key_phrase, citation.confirmed_fingerprint, result.fingerprint
    )
    return found, excerpt or ""


def _clip(value: str | None, model: type[Model], name: str) -> str:
    field, _ = _concrete_field(model, name)
    return (value or "")[: field.max_length]


def _concrete_field(model: type[Model], name: str) -> tuple[Field[Any, Any], str]:
    """The field `name` of `model` and its column (a reverse relation has none: a bug)."""
    found = model._meta.get_field(name)
    if not isinstance(found, Field) or not found.column:
        raise TypeError(f"{model.__name__}.{name} is not a column")
    return found, found.column


@transaction.atomic
def record_results(
    *,
    token: str,
    results: dict[int, CheckResult],
    now: datetime | None = None,
    unread: Collection[int] = (),
) -> list[int]:
    """Write check results of sources claimed with `token`, in bulk; return the ids written.

    Per source: the latest result on the Source (its claim released and its next check
    scheduled: CHECK_INTERVAL_PROBLEM for broken, unverifiable and erring sources and for
    sources with a citation not found or changed, CHECK_INTERVAL_HEALTHY otherwise), one
    SourceCheck row (unique per source and token: idempotent), history trimmed to
    CHECK_HISTORY_PER_SOURCE rows, and a verdict on each of its citations. Sources no longer
    claimed with `token` are left alone. A source in `unread` (its page was not read for a
    phrase) whose citation has a phrase now (set while it was checked) leaves that citation
    unchecked and is due again at once.
    """
    now = now or timezone.now()
    sources, citations = _lock_claimed(results, token)
    if not sources:
        return []
    shown_before = _shown_on_pages(sources, citations)
    states_before = {source.pk: source.state for source in sources}
    verdicts_before = {c.pk: c.verdict for cited in citations.values() for c in cited}
    changed_citations: list[Citation] = []
    checks = []
    for source in sources:
        result = results[source.pk]
        judged = _apply_result(source, result, citations[source.pk], source.pk in unread, now)
        changed_citations += judged
        checks.append(_history_row(source, result, token))
    _update_rows(sources, SOURCE_RESULT_FIELDS)
    SourceCheck.objects.bulk_create(checks, ignore_conflicts=True)
    _update_rows(changed_citations, ["verdict", "verdict_excerpt", "verdict_checked_at"])
    _trim_history([s.pk for s in sources])
    metrics.count_checks(s.state for s in sources)
    logger.info("check batch %s: %d results recorded", token, len(sources))
    _checks_recorded(
        sources=sources,
        citations=citations,
        changed_citations=changed_citations,
        before=(shown_before, states_before, verdicts_before),
        now=now,
    )
    return [s.pk for s in sources]


# What a result writes on its Source (beside the history row).
SOURCE_RESULT_FIELDS = [
    "state",
    "status_code",
    "final_url",
    "redirect_chain",
    "title",
    "description",
    "content_type",
    "response_ms",
    "fingerprint",
    "error_class",
    "error",
    "last_checked_at",
    "next_check_at",
    "check_token",
    "claimed_until",
    "updated_at",
]


def _lock_claimed(
    results: dict[int, CheckResult], token: str
) -> tuple[list[Source], dict[int, list[Citation]]]:
    """The sources of `results` still claimed with `token`, and their citations, locked.

    Rows are locked in the order editors' transactions lock them too
    (editing.derived.lock_citations): the sources, then their citations in id order, then
    the content generation row (checks_recorded). So this never holds a row an editor's
    transaction waits for while waiting for one that transaction holds. The sources are
    locked FOR NO KEY UPDATE: a save may add a citation of one of them (a row pointing at
    it) meanwhile. Citations are locked as they are read, so that a verdict is about the
    key phrase as it is now (an editor changing it meanwhile is waited for).
    """
    row_locks = connection.features.has_select_for_update
    locked = Source.objects.filter(pk__in=list(results), check_token=token)
    if row_locks:
        locked = locked.select_for_update(no_key=True)
    sources = list(locked.order_by("id"))
    citations: dict[int, list[Citation]] = defaultdict(list)
    if not sources:
        return sources, citations
    cited = Citation.objects.filter(source__in=sources).order_by("id")
    for citation in cited.select_for_update() if row_locks else cited:
        citations[citation.source_id].append(citation)
    return sources, citations


def _apply_result(
    source: Source,
    result: CheckResult,
    citations: list[Citation],
    unread: bool,
    now: datetime,
) -> list[Citation]:
    """Set `result` on `source` (claim released, next check scheduled) and a verdict on
    each of its citations; return the citations judged. With `unread` (the page was not
    read for a phrase) a citation that has a phrase is left unchecked and the source is
    due again at once."""
    source.state = str(result.state)
    source.status_code = result.status
    source.final_url = _clip(result.final_url, Source, "final_url")
    source.redirect_chain = [[url, status] for url, status in result.redirect_chain]
    source.title = _clip(result.title, Source, "title")
    source.description = _clip(result.description, Source, "description")
    source.content_type = _clip(result.content_type, Source, "content_type")
    source.response_ms = result.response_ms
    source.fingerprint = result.fingerprint or ""
    source.error_class = str(result.error_class or "")
    source.error = _clip(result.error, Source, "error")
    source.last_checked_at = result.checked_at
    source.check_token, source.claimed_until = "", None
    trouble = result.state in PROBLEM_STATES
    again = False
    judged = []
    for citation in citations:
        if unread and linkcheck.normalise_phrase(citation.key_phrase):
            again = True
            continue
        citation.verdict, citation.verdict_excerpt = _citation_verdict(citation, result)
        citation.verdict_checked_at = result.checked_at
        judged.append(citation)
        trouble = trouble or citation.verdict in PROBLEM_VERDICTS
    interval = settings.CHECK_INTERVAL_PROBLEM if trouble else settings.CHECK_INTERVAL_HEALTHY
    source.next_check_at = now if again else now + timedelta(seconds=interval)
    source.updated_at = now
    return judged


def _history_row(source: Source, result: CheckResult, token: str) -> SourceCheck:
    """The SourceCheck row of this result (unique per source and token)."""
    return SourceCheck(
        source=source,
        token=token,
        checked_at=result.checked_at,
        state=source.state,
        status_code=result.status,
        final_url=source.final_url,
        redirect_chain=source.redirect_chain,
        title=source.title,
        description=source.description,
        content_type=source.content_type,
        response_ms=result.response_ms,
        fingerprint=source.fingerprint,
        error_class=source.error_class,
        error=source.error,
        attempts=min(result.attempts, 32767),
    )


def _checks_recorded(
    *,
    sources: list[Source],
    citations: dict[int, list[Citation]],
    changed_citations: list[Citation],
    before: tuple[Any, dict[int, str], dict[int, str]],
    now: datetime,
) -> None:
    """Everything that follows a batch of results: cached API answers and (when a label
    changed) pages made stale, webhooks, editors told of sources that went bad, archive
    copies looked for. `before` is what pages showed, the sources' states and the
    citations' verdicts before the batch."""
    shown_before, states_before, verdicts_before = before
    checks_recorded()  # API responses show every check's details
    if _shown_on_pages(sources, citations) != shown_before:
        # Written in bulk, so no save signal tells the page cache; most checks find a
        # source as it was and leave cached pages alone. Labels show on the pages of the
        # summaries citing the sources only.
        cited_by = {c.summary_id for cited in citations.values() for c in cited}
        content_changed(purge=cache_tags.of_checked_summaries(cited_by))
    webhook_events.checks_recorded(
        sources=sources,
        states_before=states_before,
        citations=changed_citations,
        verdicts_before=verdicts_before,
        now=now,
    )
    # Editors of live summaries citing a source that went bad are told (no query otherwise).
    notifications.source_problem(
        sources=sources,
        states_before=states_before,
        citations=changed_citations,
        verdicts_before=verdicts_before,
        problem_states=PROBLEM_STATES,
        problem_verdicts=PROBLEM_VERDICTS,
        now=now,
    )
    if settings.ARCHIVE_CAPTURE or settings.ARCHIVE_LOOKUP:
        queue_after_commit(ARCHIVE_REVIEW_TASK, [s.pk for s in sources])


def _shown_on_pages(
    sources: list[Source], citations: dict[int, list[Citation]]
) -> tuple[tuple[SourceLabel, ...], ...]:
    """What reader pages show of these sources' checks: the label beside each citation
    (state, claim verdict, where a source moved, what kind of failure), less its date.
    Each source's label with no verdict counts too, so a source that nothing cites yet
    is compared as before (by what its check found), not skipped.

    The "checked on" date is left out: nearly every check moves it, and emptying the page
    cache for it would empty it on almost every batch. So a cached page may show the date
    of an earlier check (with the same label) until it expires: the page cache keeps a page
    at most PAGE_TTL (300 s, summaries/pagecache/generation.py) and a shared cache such as
    a CDN SHARED_TTL (60 s, summaries/pagecache/pages.py) more, so the date shown is at most
    6 minutes behind the recorded check.
    """
    unchecked = Citation.Verdict.UNCHECKED
    return tuple(
        (
            label_of(source, unchecked, checked_at=None),
            *(label_of(source, c.verdict, checked_at=None) for c in citations[source.pk]),
        )
        for source in sources
    )


def _update_rows(objects: Sequence[Model], fields: list[str]) -> None:
    """Save these fields of each object in one statement run for every row (executemany).

    What bulk_update does, without its CASE WHEN per field and row: that SQL took Django
    ~3 ms a source to build, more than checking it (a worker records as fast as
    it fetches).
    """
    if not objects:
        return
    model = type(objects[0])
    columns = [_concrete_field(model, name) for name in fields]
    _, pk_column = _concrete_field(model, model._meta.pk.name)
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(column)} = %s" for _, column in columns)
    # Table and column names come from the model, quoted; every value is a parameter.
    sql = f"UPDATE {quote(model._meta.db_table)} SET {assignments} WHERE {quote(pk_column)} = %s"  # noqa: S608
    rows = [
        [field.get_db_prep_save(getattr(obj, field.attname), connection) for field, _ in columns]
        + [obj.pk]
        for obj in objects
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _trim_history(source_ids: list[int]) -> None:
    """Keep the newest CHECK_HISTORY_PER_SOURCE checks of each source (two queries)."""
    keep = settings.CHECK_HISTORY_PER_SOURCE
    ranked = SourceCheck.objects.filter(source_id__in=source_ids).annotate(
        rank=Window(
            RowNumber(),
            partition_by=[F("source_id")],
            order_by=[F("checked_at").desc(), F("id").desc()],
        )
    )
    stale = list(ranked.filter(rank__gt=keep).values_list("pk", flat=True))
    if stale:
        SourceCheck.objects.filter(pk__in=stale).delete()


def give_up_batch(*, source_ids: list[int], token: str, reason: str) -> list[int]:
    """Record sources a batch could not check after its last attempt as errors."""
    results = {
        pk: CheckResult(
            url=url,
            state=State.ERROR,
            final_url=url,
            error_class=linkcheck.ErrorClass.TIMEOUT,
            error=reason,
        )
        for pk, url in Source.objects.filter(pk__in=source_ids, check_token=token).values_list(
            "pk", "url"
        )
    }
    return record_results(token=token, results=results) if results else []


# --- Editors ----------------------------------------------------------------------------


@transaction.atomic
def confirm_citation(
    *, citation: Citation, user: User | None = None, now: datetime | None = None
) -> Citation:
    """An editor reviewed the citation against its source as it is now.

    Records the source's current fingerprint and the excerpt where the key phrase was last
    found; later checks report "changed" when the page's fingerprint differs. A "changed"
    verdict becomes "supported". The evidence of the latest check becomes what the citation
    was cited on (`evidence.pin_cited_evidence`); when there is none of the page as
    confirmed, the page is fetched again after the commit and kept if it holds the phrase.
    Raises ValidationError when the source has no readable check yet (nothing to confirm
    against).
    """
    source = citation.source
    if source.state not in READABLE_STATES or not source.fingerprint:
        raise ValidationError(
            f"{source.url} has no readable check yet; check it before confirming the citation."
        )
    citation.confirmed_fingerprint = source.fingerprint
    citation.confirmed_excerpt = citation.verdict_excerpt
    citation.confirmed_at = now or timezone.now()
    citation.confirmed_by = user if user is not None and user.is_authenticated else None
    if citation.verdict == Citation.Verdict.CHANGED:
        citation.verdict = Citation.Verdict.SUPPORTED
    citation.save(
        update_fields=[
            "confirmed_fingerprint",
            "confirmed_excerpt",
            "confirmed_at",
            "confirmed_by",
            "verdict",
        ]
    )
    content_changed()  # pages mark claims whose source changed
    if settings.EVIDENCE_ENABLED and not evidence.pin_cited_evidence(citation=citation):
        background.queue_after_commit("summaries.tasks.capture_cited_evidence", citation.pk)
    return citation
