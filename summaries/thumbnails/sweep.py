"""The periodic sweep: thumbnails still missing are queued again (celery beat).

Catches what the write path's queueing cannot: a fetch that failed for a while past the
task's retries (a host down for an hour), and a fetch that was never queued or was lost
(the broker down at save time, a worker killed).
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from .store import queue_thumbnail, retry_due, videos_needing_fetch


def sweep_thumbnails(*, limit: int, now: datetime | None = None) -> list[int]:
    """Queue the fetch of at most `limit` videos that need one and whose wait is over.

    Never-tried videos first, then the longest waiting. A video is waiting after each
    transient failure (store.retry_delay, growing with each failure in a row) and while a
    queued fetch is pending (store.CLAIM), so a second sweep queues nothing twice and a
    broken host is not hammered. Permanent failures (4xx, not an image, too large) are not
    needed again until their address changes. Queues through queue_thumbnail, as the
    write path does, after the commit. Returns the ids queued.
    """
    now = now or timezone.now()
    candidates = (
        videos_needing_fetch()
        .filter(retry_due(now))
        .order_by(F("thumbnail_retry_at").asc(nulls_first=True), "pk")
    )
    with transaction.atomic():
        if connection.features.has_select_for_update_skip_locked:
            # A concurrent sweep skips these rows rather than waiting for them.
            candidates = candidates.select_for_update(skip_locked=True, of=("self",))
        videos = list(candidates[:limit])
        return [
            video.pk for video in videos if queue_thumbnail(video=video, due_only=True, now=now)
        ]
