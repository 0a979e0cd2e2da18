"""What follows each moment of a summary's life, written once: the services of
`workflow` and `copies` make the change and call the event here, which makes cached pages
stale (and purges the HTTP caches of what they showed), records the version readers see,
refreshes related lists, sends webhooks and tells people.

Each runs inside the caller's transaction; what leaves the process (purges, tasks,
webhooks) goes after it commits.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from summaries import notifications
from summaries.background import queue_after_commit
from summaries.models import Summary
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.generation import content_changed
from summaries.pagecache.purge import purge_after_commit
from summaries.webhooks import events as webhook_events

from . import gate, versions

RELATED_TASK = "summaries.tasks.refresh_related_around"


def workflow_moved(summary: Summary) -> None:
    """A summary's workflow fields changed (sent to review, published, taken offline):
    pages showing it are stale now, and again when a scheduled publication comes."""
    shown = cache_tags.of_summary_change(summary)
    content_changed(purge=shown)
    if summary.publish_at is not None and summary.publish_at > timezone.now():
        # Scheduled: its pages and lists change again when it goes live, with no write.
        purge_after_commit(shown, at=summary.publish_at)


def published(summary: Summary, *, by: gate.Actor, now: datetime) -> None:
    """A summary was published, now or for later (`summary.publish_at`)."""
    workflow_moved(summary)
    versions.record_live_version(summary=summary, now=now)
    if summary.publish_at is not None and summary.publish_at <= now:
        # A scheduled one is picked up by the beat's refresh once live.
        queue_after_commit(RELATED_TASK, summary.video_id)
        webhook_events.summary_published(summary, now=now)
    notifications.summary_published(summary=summary, by=by)


def unpublished(summary: Summary, *, was_live: bool) -> None:
    """A summary went back to draft (live or scheduled before)."""
    workflow_moved(summary)
    versions.forget_versions_never_live(summary=summary, now=timezone.now())
    queue_after_commit(RELATED_TASK, summary.video_id)
    webhook_events.summary_unpublished(summary, was_live=was_live)


def changes_published(
    live: Summary, *, shown_before: set[str], pins_before: dict[int, str] | None, now: datetime
) -> None:
    """A live summary's changes went live: `shown_before` are the cache tags of what its
    pages showed before (lists it left as well as those it joins), `pins_before` its pins
    as webhooks last told them."""
    versions.record_live_version(summary=live, now=now)
    content_changed(purge=shown_before | cache_tags.of_summary_change(live))
    queue_after_commit(RELATED_TASK, live.video_id)
    webhook_events.summary_updated(live, now=now)
    webhook_events.pins_changed(live, pins_before, now=now)
