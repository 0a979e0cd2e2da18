"""The `citation.archived_copy_changed` webhook: told when readers of a live summary start
or stop being shown an archived copy beside a citation (or are shown another one)."""

from __future__ import annotations

from datetime import datetime

from summaries.models import ArchivedCopy, Citation, Summary, WebhookEventType
from summaries.webhooks import events as webhook_events


def copy_data(copy: ArchivedCopy | None) -> dict | None:
    """An archived copy as the API and webhooks show it; None when there is none."""
    if copy is None:
        return None
    return copy_values(copy.url, copy.captured_at, copy.verified_at, copy.shown, copy.matched_by)


def copy_values(
    url: str | None,
    captured_at: datetime | None,
    verified_at: datetime | None,
    shown: bool,
    matched_by: str,
) -> dict | None:
    """copy_data from the copy's values (a values() row); None when there is no copy."""
    if not url:
        return None
    return {
        "url": url,
        "captured_at": _iso(captured_at),
        # Verified: fetched, and found to be the page as cited (archive.matching).
        "verified": verified_at is not None and bool(matched_by),
        "verified_at": _iso(verified_at),
        "shown": shown,
    }


def archived_copy_changed(*, citation: Citation, copy: ArchivedCopy, now: datetime) -> None:
    """Record the event for endpoints that want it, if the citing summary is live (one
    query when no endpoint wants it)."""
    endpoints = webhook_events.subscribers(WebhookEventType.CITATION_ARCHIVED_COPY_CHANGED)
    if not endpoints:
        return
    summary = (
        Summary.objects.published(now)
        .originals()
        .select_related("video__channel")
        .filter(pk=citation.summary_id)
        .first()
    )
    if summary is None:
        return
    source = citation.source
    data = {
        "citation": {
            "id": citation.pk,
            "url": citation.url,
            "link_text": citation.link_text,
            "claim": citation.claim,
            "key_phrase": citation.key_phrase,
            "verdict": citation.verdict,
        },
        "archived_copy": copy_data(copy),
        "shown": copy.shown,
        "source": {
            "url": source.url,
            "state": source.state,
            "status_code": source.status_code,
            "checked_at": _iso(source.last_checked_at),
        },
        "summary": webhook_events.summary_data(summary),
    }
    webhook_events.emit(
        WebhookEventType.CITATION_ARCHIVED_COPY_CHANGED, data, now=now, endpoints=endpoints
    )


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
