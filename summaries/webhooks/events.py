"""What endpoints are told, written in the transaction of the change it tells of.

Only what readers can see is told: a summary that is live (published, its time reached,
not a working copy). Drafts, summaries in review, scheduled ones and working copies never
make an event; a scheduled summary makes its "summary.published" when it goes live (a
task the sweeper queued ahead with that time as its ETA; failing that, the next sweep).
A source's state or a citation's verdict is told when it changes from a known value (not
on a first check) and a live summary cites it. A pin's status is told when it changes on a
live summary (its changes or a new transcript went live), for parts it had before and has
after.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.models import (
    Caveat,
    Chapter,
    Citation,
    Correction,
    KeyPoint,
    Source,
    Summary,
    Takeaway,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventType,
)

DELIVER_TASK = "summaries.tasks.deliver_webhook"
ANNOUNCE_TASK = "summaries.tasks.announce_publication"
# Scheduled summaries that went live this long ago or less are told by the sweeper (one
# missed for longer, with the workers down, is not told late).
ANNOUNCE_WINDOW = timedelta(hours=1)
# An announcement that runs this much before its summary goes live waits for it.
ANNOUNCE_EARLY = timedelta(seconds=5)
UNCHECKED_STATES = frozenset({Source.State.UNCHECKED, ""})
UNCHECKED_VERDICTS = frozenset({Citation.Verdict.UNCHECKED, ""})


def subscribers(event_type: str) -> list[WebhookEndpoint]:
    """The active endpoints that asked for this event type (few: filtered here, which
    works the same on SQLite and PostgreSQL)."""
    return [e for e in WebhookEndpoint.objects.filter(is_active=True) if e.wants(event_type)]


def emit(
    event_type: str,
    data: dict,
    *,
    key: str | None = None,
    now: datetime | None = None,
    endpoints: list[WebhookEndpoint] | None = None,
) -> WebhookEvent | None:
    """Record an event and a delivery to each endpoint that wants it, sent after commit.

    Nothing is written when no endpoint wants it. With `key`, an event already recorded
    under it is not recorded again (returns None).
    """
    endpoints = subscribers(event_type) if endpoints is None else endpoints
    if not endpoints:
        return None
    now = now or timezone.now()
    event_id = uuid.uuid4()
    body = json.dumps(
        {"id": str(event_id), "type": event_type, "created_at": _iso(now), "data": data},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    event, created = (
        WebhookEvent.objects.get_or_create(
            key=key,
            defaults={"id": event_id, "type": event_type, "body": body, "created_at": now},
        )
        if key
        else (
            WebhookEvent.objects.create(id=event_id, type=event_type, body=body, created_at=now),
            True,
        )
    )
    if not created:
        return None
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(event=event, endpoint=e, next_attempt_at=now, created_at=now)
        for e in endpoints
    )
    for delivery in deliveries:
        queue_after_commit(DELIVER_TASK, delivery.pk)
    return event


# --- Summaries ---------------------------------------------------------------------------


def summary_published(summary: Summary, *, now: datetime | None = None) -> None:
    """Tell of a summary that is live now (once per publication: keyed by its time)."""
    now = now or timezone.now()
    if summary.is_working_copy or not summary.is_live(now):
        return
    key = f"summary.published:{summary.pk}:{summary.publish_at.timestamp():.6f}"
    emit(WebhookEventType.SUMMARY_PUBLISHED, {"summary": summary_data(summary)}, key=key, now=now)


def summary_updated(summary: Summary, *, now: datetime | None = None) -> None:
    """Tell of changes that went live on a live summary."""
    now = now or timezone.now()
    if summary.is_working_copy or not summary.is_live(now):
        return
    emit(WebhookEventType.SUMMARY_UPDATED, {"summary": summary_data(summary)}, now=now)


def summary_unpublished(summary: Summary, *, was_live: bool) -> None:
    """Tell of a summary taken down, if readers could see it (not when only scheduled)."""
    if was_live and not summary.is_working_copy:
        emit(WebhookEventType.SUMMARY_UNPUBLISHED, {"summary": summary_data(summary)})


def summary_corrected(
    summary: Summary, correction: Correction, *, now: datetime | None = None
) -> None:
    """Tell of a correction published on a live summary, or of its withdrawal (each once:
    keyed by the correction and whether it is withdrawn)."""
    now = now or timezone.now()
    if summary.is_working_copy or not summary.is_live(now):
        return
    state = "withdrawn" if correction.is_withdrawn else "published"
    emit(
        WebhookEventType.SUMMARY_CORRECTED,
        {"summary": summary_data(summary), "correction": correction_data(correction)},
        key=f"summary.corrected:{correction.pk}:{state}",
        now=now,
    )


def correction_data(correction: Correction) -> dict:
    """A correction (or update) as events tell of it; `url` is its summary's reader page."""
    return {
        "id": correction.pk,
        "kind": correction.kind,
        "note": correction.note,
        "published_at": _iso(correction.published_at),
        "url": site_url(correction.summary.get_absolute_url()),
        "withdrawn": correction.is_withdrawn,
        "withdrawn_at": _iso(correction.withdrawn_at) if correction.withdrawn_at else None,
        "withdrawal_note": correction.withdrawal_note,
    }


def announce_due_publications(*, now: datetime | None = None) -> int:
    """Tell of summaries that went live in the last ANNOUNCE_WINDOW and were not told of
    yet (scheduled ones). Returns how many were told. Idempotent (keyed events)."""
    now = now or timezone.now()
    if not subscribers(WebhookEventType.SUMMARY_PUBLISHED):
        return 0
    due = (
        Summary.objects.published(now)
        .originals()
        .filter(publish_at__gt=now - ANNOUNCE_WINDOW)
        .select_related("video__channel")
    )
    told = set(
        WebhookEvent.objects.filter(type=WebhookEventType.SUMMARY_PUBLISHED)
        .filter(created_at__gt=now - 2 * ANNOUNCE_WINDOW)
        .values_list("key", flat=True)
    )
    count = 0
    for summary in due:
        if f"summary.published:{summary.pk}:{summary.publish_at.timestamp():.6f}" not in told:
            summary_published(summary, now=now)
            count += 1
    return count


def upcoming_publications(*, now: datetime, within: timedelta) -> list[tuple[int, datetime]]:
    """(id, publish time) of the scheduled summaries going live after `now` and no later
    than `now + within`; none when no endpoint wants "summary.published"."""
    if not subscribers(WebhookEventType.SUMMARY_PUBLISHED):
        return []
    return list(
        Summary.objects.scheduled(now)
        .originals()
        .filter(publish_at__lte=now + within)
        .order_by("publish_at")
        .values_list("pk", "publish_at")
    )


@transaction.atomic  # the event and its deliveries together
def announce_publication(*, summary_id: int, now: datetime | None = None) -> float | None:
    """Tell of one scheduled summary if it is live now and was not told of yet (keyed, so
    the sweeper and a duplicate task tell of it once).

    Returns the seconds until it goes live when that is a moment away (ANNOUNCE_EARLY: a
    task run by its ETA can start a little before the publish time), for the caller to
    try again then; else None. One rescheduled further, unpublished or deleted meanwhile is
    left to the sweeper.
    """
    now = now or timezone.now()
    summary = (
        Summary.objects.originals().select_related("video__channel").filter(pk=summary_id).first()
    )
    if summary is None or summary.is_working_copy:
        return None
    if summary.is_live(now):
        summary_published(summary, now=now)
        return None
    if summary.is_scheduled(now) and summary.publish_at - now <= ANNOUNCE_EARLY:
        return (summary.publish_at - now).total_seconds() + 0.05
    return None


def ping_data(endpoint: WebhookEndpoint) -> dict:
    """The body's data of a test event: which endpoint it was sent to, and that nothing
    happened."""
    return {
        "endpoint": {"id": endpoint.pk, "url": endpoint.url},
        "message": "A test event, sent on request: nothing happened.",
    }


def summary_data(summary: Summary) -> dict:
    video = summary.summarised_video
    channel = video.channel
    return {
        "id": summary.pk,
        "slug": video.slug,
        "title": video.title,
        "url": site_url(video.get_absolute_url()),
        "api_url": site_url(reverse("api:summary-detail", kwargs={"slug": video.slug})),
        "channel": {"slug": channel.slug, "name": channel.name},
        "published_at": _iso(summary.publish_at),
        "updated_at": _iso(summary.updated_at),
    }


# --- Pins --------------------------------------------------------------------------------

# The parts that are pinned, as events name them.
PINNED_PARTS = (
    ("key_point", KeyPoint),
    ("takeaway", Takeaway),
    ("chapter", Chapter),
    ("caveat", Caveat),
)
PART_TEXT_CHARS = 60
PinKey = tuple[str, int, str]  # (part type, part id, quotation or "" for the part's own pin)


def pins_before_change(summary: Summary, *, now: datetime | None = None) -> dict | None:
    """The pin statuses of a live summary whose changes are about to go live, to compare
    with `pins_changed` afterwards; None (nothing to compare, no query spent on pins) when
    the summary is not live or no endpoint wants "pin.status_changed"."""
    now = now or timezone.now()
    if summary.is_working_copy or not summary.is_live(now):
        return None
    if not subscribers(WebhookEventType.PIN_STATUS_CHANGED):
        return None
    return pin_statuses(summary)


def pins_changed(summary: Summary, before: dict | None, *, now: datetime | None = None) -> int:
    """Tell of each pin of a live summary whose status differs from `before`: one event per
    pin (a part's own pin, or a quotation of a chapter) the summary had before and has now,
    also when the part was pinned or its pin rejected (a null status). Keyed by the
    summary's version, so a change is told once however often this runs. Returns how many
    were told."""
    if before is None:
        return 0
    now = now or timezone.now()
    endpoints = subscribers(WebhookEventType.PIN_STATUS_CHANGED)
    told = 0
    for key, after in pin_statuses(summary).items():
        was = before.get(key)
        if was is None or was["status"] == after["status"]:
            continue
        data = {
            "summary": summary_data(summary),
            "part": after["part"],
            "quote": after["quote"],
            "previous_status": was["status"],
            "status": after["status"],
            "pin": after["pin"],
        }
        quote = hashlib.sha256(key[2].encode()).hexdigest()[:12] if key[2] else "-"
        event_key = (
            f"pin.status_changed:{summary.pk}:{summary.lock_version}:{key[0]}:{key[1]}:{quote}"
        )
        if emit(
            WebhookEventType.PIN_STATUS_CHANGED, data, key=event_key, now=now, endpoints=endpoints
        ):
            told += 1
    return told


def pin_statuses(summary: Summary) -> dict[PinKey, dict]:
    """Every part of `summary` with its pin's status (None when not pinned) and each
    quotation of a chapter with its pin's."""
    found: dict[PinKey, dict] = {}
    for kind, model in PINNED_PARTS:
        for part in model.objects.filter(summary=summary).order_by("position"):
            text = " ".join(str(part).split())
            if len(text) > PART_TEXT_CHARS:
                text = text[: PART_TEXT_CHARS - 1] + "…"
            ref = {"type": kind, "id": part.pk, "position": part.position, "text": text}
            found[(kind, part.pk, "")] = _pin_state(ref, part.pin, None)
            for pin in getattr(part, "quote_pins", None) or []:
                found[(kind, part.pk, pin["quote"])] = _pin_state(ref, pin, pin["quote"])
    return found


def _pin_state(ref: dict, pin: dict | None, quote: str | None) -> dict:
    shown = None
    if pin is not None:
        shown = {name: pin.get(name) for name in ("start", "stop", "score", "reason")}
    return {
        "part": ref,
        "quote": quote,
        "status": pin["status"] if pin is not None else None,
        "pin": shown,
    }


# --- Checks ------------------------------------------------------------------------------


def checks_recorded(
    *,
    sources: list[Source],
    states_before: dict[int, str],
    citations: list[Citation],
    verdicts_before: dict[int, str],
    now: datetime | None = None,
) -> None:
    """Tell of sources whose state changed and citations whose verdict changed in a batch
    of recorded checks, where a live summary cites them. Costs no query when nothing
    changed, one when no endpoint wants these events."""
    moved = [
        s
        for s in sources
        if states_before[s.pk] not in UNCHECKED_STATES and states_before[s.pk] != s.state
    ]
    turned = [
        c
        for c in citations
        if verdicts_before[c.pk] not in UNCHECKED_VERDICTS and verdicts_before[c.pk] != c.verdict
    ]
    if not moved and not turned:
        return
    now = now or timezone.now()
    endpoints = list(WebhookEndpoint.objects.filter(is_active=True))
    for_states = [e for e in endpoints if e.wants(WebhookEventType.SOURCE_STATE_CHANGED)]
    for_verdicts = [e for e in endpoints if e.wants(WebhookEventType.CITATION_VERDICT_CHANGED)]
    if not (moved and for_states) and not (turned and for_verdicts):
        return
    live = _live_citing(
        [s.pk for s in moved] if for_states else [],
        {c.summary_id for c in turned} if for_verdicts else set(),
        now,
    )
    if for_states:
        for source in moved:
            if live.by_source[source.pk]:
                data = {
                    "source": {**_source_data(source), "previous_state": states_before[source.pk]},
                    "summaries": [summary_data(s) for s in live.by_source[source.pk]],
                }
                emit(WebhookEventType.SOURCE_STATE_CHANGED, data, now=now, endpoints=for_states)
    if for_verdicts:
        by_id = {s.pk: s for s in sources}
        for citation in turned:
            summary = live.summaries.get(citation.summary_id)
            if summary is not None:
                data = {
                    "citation": _citation_data(citation, verdicts_before[citation.pk]),
                    "source": _source_data(by_id[citation.source_id]),
                    "summary": summary_data(summary),
                }
                emit(
                    WebhookEventType.CITATION_VERDICT_CHANGED,
                    data,
                    now=now,
                    endpoints=for_verdicts,
                )


class _LiveCiting:
    def __init__(self) -> None:
        self.summaries: dict[int, Summary] = {}
        self.by_source: dict[int, list[Summary]] = defaultdict(list)


def _live_citing(source_ids: list[int], summary_ids: set[int], now: datetime) -> _LiveCiting:
    """The live summaries citing these sources, and those of these ids that are live."""
    found = _LiveCiting()
    live = Summary.objects.published(now).originals().select_related("video__channel")
    if source_ids:
        pairs = Citation.objects.filter(
            source_id__in=source_ids, summary__in=live.values("pk")
        ).values_list("source_id", "summary_id")
        citing: dict[int, set[int]] = defaultdict(set)
        for source_id, summary_id in pairs:
            citing[source_id].add(summary_id)
        summary_ids = summary_ids | {pk for pks in citing.values() for pk in pks}
    else:
        citing = {}
    if summary_ids:
        found.summaries = {s.pk: s for s in live.filter(pk__in=summary_ids)}
    for source_id, pks in citing.items():
        found.by_source[source_id] = [found.summaries[pk] for pk in sorted(pks)]
    return found


def _source_data(source: Source) -> dict:
    return {
        "url": source.url,
        "state": source.state,
        "status_code": source.status_code,
        "final_url": source.final_url,
        "title": source.title,
        "checked_at": _iso(source.last_checked_at),
    }


def _citation_data(citation: Citation, previous: str) -> dict:
    return {
        "id": citation.pk,
        "url": citation.url,
        "link_text": citation.link_text,
        "claim": citation.claim,
        "key_phrase": citation.key_phrase,
        "verdict": citation.verdict,
        "previous_verdict": previous,
        "excerpt": citation.verdict_excerpt,
        "checked_at": _iso(citation.verdict_checked_at),
    }


def site_url(path: str) -> str:
    return settings.SITE_URL + path


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
