"""Background work. Tasks take ids, re-fetch, and call one service; they hold no rules.

Celery finds every task of the app through this module: the checking tasks live with
the checker (checking/tasks.py) and are imported here.
"""

import logging

from django.conf import settings

from . import thumbnails
from .archive.tasks import (
    advance_archive_capture,
    find_archived_copy,
    review_archived_copies,
    sweep_archive_captures,
)
from .background import TRANSIENT_ERRORS, background_task
from .checking.tasks import (
    capture_cited_evidence,
    check_source_batch,
    dispatch_source_checks,
    sweep_evidence,
)
from .editing import copies, derived
from .following.tasks import forget_unfollowed_addresses, send_digests, send_follow_confirmation
from .models import Summary, Video
from .notifications.tasks import (
    send_notification_email,
    send_password_reset,
    sweep_notifications,
)
from .pagecache import purge
from .reader import facets, related
from .webhooks.tasks import deliver_webhook, sweep_webhooks

logger = logging.getLogger(__name__)

__all__ = [
    "advance_archive_capture",
    "find_archived_copy",
    "review_archived_copies",
    "sweep_archive_captures",
    "capture_cited_evidence",
    "check_source_batch",
    "deliver_webhook",
    "dispatch_source_checks",
    "fetch_thumbnail",
    "forget_unfollowed_addresses",
    "publish_due_changes",
    "refresh_list_facets",
    "refresh_related_around",
    "refresh_stale_related",
    "rerender_summary",
    "send_cache_purge",
    "send_digests",
    "send_follow_confirmation",
    "send_notification_email",
    "send_password_reset",
    "sweep_evidence",
    "sweep_cache_purges",
    "sweep_notifications",
    "sweep_thumbnails",
    "sweep_webhooks",
]


@background_task(soft_time_limit=120)
def rerender_summary(summary_id: int) -> None:
    """Re-render a summary's Markdown and rebuild its citations (idempotent)."""
    summary = Summary.objects.filter(pk=summary_id).first()
    if summary is None:
        return
    derived.rerender_summary(summary=summary)


@background_task(soft_time_limit=60)
def refresh_list_facets(owners: list[list]) -> None:
    """Compute again the filter choices of list pages a save forgot: `owners` are
    [kind, owner id] pairs (idempotent: choices still stored are kept)."""
    facets.refresh(owners)


# --- Related videos -----------------------------------------------------------------------


@background_task(soft_time_limit=120)
def refresh_related_around(video_id: int) -> None:
    """Recompute the stored related videos of a video that went live or offline, and of
    its neighbours. Idempotent; a deleted video is skipped."""
    video = Video.objects.filter(pk=video_id).first()
    if video is None:
        return
    related.refresh_related_around(video=video)


@background_task(soft_time_limit=240, time_limit=300)
def refresh_stale_related() -> None:
    """Recompute a bounded batch of missing or old related lists (celery beat)."""
    related.refresh_stale_related(limit=settings.RELATED_REFRESH_BATCH)


@background_task(
    name="summaries.tasks.fetch_thumbnail",
    soft_time_limit=60,
    # Only a timeout, a reset connection, a 5xx or a 429 is tried again, minutes apart.
    autoretry_for=(*TRANSIENT_ERRORS, thumbnails.TransientFetchError),
    retry_backoff=30,
    retry_backoff_max=600,
    max_retries=3,
)
def fetch_thumbnail(video_id: int) -> None:
    """Fetch and store the video's thumbnail unless the stored one is of the wanted address
    (idempotent; a deleted video is skipped). Failures are recorded on the video."""
    video = Video.objects.filter(pk=video_id).first()
    if video is None:
        return
    thumbnails.fetch_thumbnail(video=video)


@background_task(name="summaries.tasks.sweep_thumbnails", soft_time_limit=60)
def sweep_thumbnails() -> None:
    """Queue the fetches of thumbnails still needed whose wait is over, a bounded batch
    (celery beat). Idempotent: a queued video waits, so a duplicate tick queues nothing."""
    thumbnails.sweep_thumbnails(limit=settings.THUMBNAIL_SWEEP_BATCH)


@background_task(soft_time_limit=120)
def publish_due_changes() -> None:
    """Publish the changes scheduled for now or earlier (celery beat, every minute).

    Idempotent: published changes are gone, so a duplicate tick publishes nothing.
    """
    copies.publish_due_changes()


# --- Purges of the HTTP caches in front ---------------------------------------------------


@background_task(
    name="summaries.tasks.send_cache_purge",
    soft_time_limit=60,
    # Tried again soon (within 1 s, 2 s, 4 s, with jitter): a purge is done only once every
    # cache confirmed it; after the last try the sweeper sends it again every half minute.
    autoretry_for=(*TRANSIENT_ERRORS, purge.PurgeFailed),
    retry_backoff=1,
)
def send_cache_purge(purge_id: int) -> None:
    """Send one purge of the HTTP caches (idempotent: a purge sent already is gone)."""
    purge.send(purge_id)


@background_task(name="summaries.tasks.sweep_cache_purges", soft_time_limit=60)
def sweep_cache_purges() -> None:
    """Queue again the purges not confirmed (celery beat). Sending one twice is harmless."""
    purge.sweep()
