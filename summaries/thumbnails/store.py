"""Fetching a video's thumbnail, storing its WebP variants and recording the outcome.

The one place that writes the thumbnail fields of a video. Network I/O goes
through the source checker's fetcher (summaries.linkcheck: address policy, redirects,
deadline, body cap); files go through Django's storage API (the "thumbnails" storage), so
any django-storages backend works; pages only ever call storage.url().

A fetch that fails for a while (timeout, 5xx) is tried again by the task, then by the
periodic sweep (sweep.py) once `thumbnail_retry_at` has passed; each failure in a row
doubles the wait. Queueing a fetch also sets `thumbnail_retry_at` (a claim), so a video
is not queued again while its fetch waits in the queue.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import transaction
from django.db.models import Case, CharField, F, Q, QuerySet, Value, When
from django.db.models.functions import Concat
from django.utils import timezone

from summaries import linkcheck
from summaries.background import queue_after_commit
from summaries.checking.options import fetch_options
from summaries.linkcheck import CheckResult, ErrorClass, State
from summaries.models import THUMBNAIL_STORAGE, Video
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.generation import content_changed

from . import cleanup, images

logger = logging.getLogger(__name__)

MAX_BYTES = 5 * 1024 * 1024  # a platform thumbnail is 20-200 kB
ACCEPT = "image/webp,image/png,image/jpeg,image/gif;q=0.9"
FOLDER = "thumbnails"
# Worth trying again later: the network or the server may recover.
TRANSIENT_ERRORS = frozenset(
    {ErrorClass.TIMEOUT, ErrorClass.RESET, ErrorClass.REFUSED, ErrorClass.DNS, ErrorClass.NO_SLOT}
)

STORED, UNCHANGED, CLEARED, FAILED = "stored", "unchanged", "cleared", "failed"

# A YouTube video's own thumbnail ("hqdefault", 480x360): prefix + video id + suffix.
YOUTUBE_THUMBNAIL = ("https://i.ytimg.com/vi/", "/hqdefault.jpg")
# How long a queued fetch keeps the sweep away: longer than the task's tries take (4 of
# at most 90 s, under 4 minutes of backoff between them), so a fetch lost with a worker or
# a broker is queued again after it, and one still queued or running is not.
CLAIM = timedelta(minutes=30)
# The wait after the n-th transient failure in a row: RETRY_FIRST doubled n-1 times, at
# most RETRY_MAX (a task's four tries count as four: 10 min, 20, 40, 80; then about a day).
RETRY_FIRST = timedelta(minutes=10)
RETRY_MAX = timedelta(days=1)


class TransientFetchError(Exception):
    """The thumbnail could not be fetched this time (timeout, 5xx, 429): retry later."""


def wanted_source(video: Video) -> str:
    """Where the video's thumbnail comes from: the editor's thumbnail URL, else the
    platform's own (YouTube's "hqdefault", 480x360), else nowhere ("")."""
    if video.thumbnail_url:
        return video.thumbnail_url
    if video.platform == Video.Platform.YOUTUBE and video.platform_video_id:
        prefix, suffix = YOUTUBE_THUMBNAIL
        return f"{prefix}{video.platform_video_id}{suffix}"
    return ""


def needs_fetch(video: Video) -> bool:
    """Whether the stored thumbnail (or the last attempt) is not of the wanted address."""
    return wanted_source(video) != video.thumbnail_source


def videos_needing_fetch() -> QuerySet[Video]:
    """The videos for which needs_fetch() is true, selected by the database: never
    fetched, address changed, or last fetch failed transiently (a permanent failure is
    recorded under the address it failed for, and so is not needed again)."""
    prefix, suffix = YOUTUBE_THUMBNAIL
    youtube = Q(platform=Video.Platform.YOUTUBE) & ~Q(platform_video_id="")
    wanted = Case(
        When(~Q(thumbnail_url=""), then=F("thumbnail_url")),
        When(youtube, then=Concat(Value(prefix), F("platform_video_id"), Value(suffix))),
        default=Value(""),
        output_field=CharField(),
    )
    return Video.objects.alias(wanted_source=wanted).exclude(thumbnail_source=F("wanted_source"))


def retry_due(now: datetime) -> Q:
    """Videos whose wait (after a failure, or while a queued fetch is pending) is over."""
    return Q(thumbnail_retry_at__isnull=True) | Q(thumbnail_retry_at__lte=now)


def queue_thumbnail(*, video: Video, due_only: bool = False, now: datetime | None = None) -> bool:
    """Queue fetch_thumbnail for `video` once the transaction commits, when it needs one
    (new video, changed thumbnail or source URL, a fetch that failed for a while).

    The video is claimed for CLAIM (`thumbnail_retry_at`), so the sweep leaves it alone
    while the fetch is queued or running. `due_only` (the sweep) queues only a video
    whose wait is over, with a conditional UPDATE, so that concurrent sweeps never both
    queue it; an editor's save queues it whatever the wait. Returns whether it was queued.
    """
    if not needs_fetch(video):
        return False
    now = now or timezone.now()
    claim = Video.objects.filter(pk=video.pk)
    if due_only:
        claim = claim.filter(retry_due(now))
    if not claim.update(thumbnail_retry_at=now + CLAIM):
        return False
    video.thumbnail_retry_at = now + CLAIM  # a later save() of `video` keeps the claim
    queue_after_commit("summaries.tasks.fetch_thumbnail", video.pk)
    return True


def retry_delay(failures: int) -> timedelta:
    """The wait before the sweep queues a fetch again after `failures` in a row (>= 1)."""
    return min(RETRY_MAX, RETRY_FIRST * 2 ** min(max(failures, 1) - 1, 20))


def _problem(result: CheckResult) -> tuple[str, bool] | None:
    """(why nothing can be stored, whether trying again later may help); None if usable."""
    if result.state is State.BLOCKED:
        return f"refused: {result.error}", False
    if result.state is State.ERROR:
        return result.error or str(result.error_class), result.error_class in TRANSIENT_ERRORS
    if result.state in (State.BROKEN, State.UNVERIFIABLE):
        status = result.status or 0
        return result.error or f"HTTP {status}", status == 429 or status >= 500
    if result.content_type not in images.MEDIA_TYPES:
        return f"not an image ({result.content_type or 'no content type'})", False
    if result.body is None:
        return "no body", False
    return None


def _save_variants(variants: list[images.Variant]) -> list[list]:
    """Each variant saved under a content-hashed name: [[name, width, height], ...]."""
    storage = storages[THUMBNAIL_STORAGE]
    files = []
    for variant in variants:
        name = f"{FOLDER}/{images.digest(variant.data)}-{variant.width}.webp"
        if not storage.exists(name):  # the same picture again: already there
            name = storage.save(name, ContentFile(variant.data))
        files.append([name, variant.width, variant.height])
    return files


def _record(video: Video, source: str, **fields) -> bool:
    """Write the thumbnail fields, unless the video's addresses changed meanwhile (a newer
    fetch is then queued); keeps `video` in step. Returns whether anything was written.

    Ends any waiting for a retry. Files the video showed and shows no more are deleted
    once this is committed, unless another video shows them (cleanup.discard_files).
    """
    fields = {
        "thumbnail_source": source,
        "thumbnail_fetched_at": timezone.now(),
        "thumbnail_failures": 0,
        "thumbnail_retry_at": None,
        **fields,
    }
    current = Video.objects.filter(
        pk=video.pk, thumbnail_url=video.thumbnail_url, source_url=video.source_url
    )
    with transaction.atomic():
        # The files shown until now, read under the row's lock: another fetch of the same
        # video may have replaced the ones `video` was read with.
        shown = current.select_for_update().values_list("thumbnail_files", flat=True).first()
        if shown is None:
            return False
        current.update(**fields)
        if "thumbnail_files" in fields:
            kept = {name for name, _, _ in fields["thumbnail_files"]}
            cleanup.discard_files([name for name, _, _ in shown if name not in kept])
    for name, value in fields.items():
        setattr(video, name, value)
    video.__dict__.pop("thumbnail", None)  # the cached URLs
    return True


def _record_transient_failure(video: Video, error: str) -> None:
    """Record a failure worth trying again later, and when the sweep may try it."""
    failures = video.thumbnail_failures + 1
    retry_at = timezone.now() + retry_delay(failures)
    Video.objects.filter(pk=video.pk).update(
        thumbnail_error=error,
        thumbnail_failures=F("thumbnail_failures") + 1,
        thumbnail_retry_at=retry_at,
    )
    video.thumbnail_error, video.thumbnail_failures = error, failures
    video.thumbnail_retry_at = retry_at


def store_image(*, video: Video, data: bytes, source: str) -> list[list]:
    """Store the image in `data` as the video's thumbnail, recorded as fetched from
    `source`; cached pages are made stale when it differs from the one shown.
    Raises images.NotAnImage. Returns the files ([name, width, height] each)."""
    files = _save_variants(images.make_variants(data))
    shown = video.thumbnail_files
    if _record(video, source, thumbnail_files=files, thumbnail_error="") and files != shown:
        content_changed(purge=cache_tags.of_videos([video.pk]))
    return files


def fetch_thumbnail(*, video: Video, force: bool = False, **fetch_overrides) -> str:
    """Fetch the video's thumbnail and store it as WebP variants, unless it is stored.

    Idempotent: when the wanted address (`wanted_source`) is the one last fetched, nothing
    is fetched (`force` fetches again); a changed address is fetched and replaces it; no
    address clears it. The fetch follows the source checker's rules (`fetch_options`,
    `fetch_overrides` for tests) with a MAX_BYTES cap, accepts only JPEG, PNG, WebP or GIF
    (by content type and by decoding), and never stores the fetched bytes (images).

    Side effects: files in the thumbnails storage (content-hashed names; the files it
    showed before are deleted after the commit unless another video shows them), the
    video's thumbnail fields, and a content_changed() when what pages show changes.
    Returns STORED, UNCHANGED, CLEARED or FAILED. A permanent failure (4xx, refused
    address, too large, not an image) is recorded and returned as FAILED, with no image
    shown; a transient one (timeout, reset, 5xx, 429) is recorded in thumbnail_error with
    the time the sweep may try again (retry_delay), keeps what is stored and raises
    TransientFetchError for the task to retry.
    """
    url = wanted_source(video)
    if not url:
        if not (video.thumbnail_source or video.thumbnail_files):
            return UNCHANGED
        shown = bool(video.thumbnail_files)
        if _record(video, "", thumbnail_files=[], thumbnail_error="") and shown:
            content_changed(purge=cache_tags.of_videos([video.pk]))
        return CLEARED
    if url == video.thumbnail_source and not force:
        return UNCHANGED

    options = {**fetch_options(), "max_body": MAX_BYTES, **fetch_overrides}
    result = linkcheck.fetch(url, need_body=True, keep_body=True, accept=ACCEPT, **options)
    problem = _problem(result)
    if problem is None:
        try:
            store_image(video=video, data=result.body, source=url)
        except images.NotAnImage as error:
            problem = (str(error), False)
        else:
            logger.info("thumbnail of video %s stored from %s", video.pk, url)
            return STORED
    error, transient = problem
    logger.info("thumbnail of video %s not stored from %s: %s", video.pk, url, error)
    if transient:
        _record_transient_failure(video, error[:300])
        raise TransientFetchError(error)
    shown = bool(video.thumbnail_files)
    if _record(video, url, thumbnail_files=[], thumbnail_error=error[:300]) and shown:
        content_changed(purge=cache_tags.of_videos([video.pk]))
    return FAILED
