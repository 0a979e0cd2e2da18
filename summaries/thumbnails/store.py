"""Fetching a video's thumbnail, storing its WebP variants and recording the outcome.

The one place that writes the thumbnail fields of a video (issue 14 §1). Network I/O goes
through the source checker's fetcher (summaries.linkcheck: address policy, redirects,
deadline, body cap); files go through Django's storage API (the "thumbnails" storage), so
any django-storages backend works; pages only ever call storage.url().
"""

from __future__ import annotations

import logging

from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.utils import timezone

from summaries import linkcheck
from summaries.background import queue_after_commit
from summaries.checking.options import fetch_options
from summaries.linkcheck import CheckResult, ErrorClass, State
from summaries.models import THUMBNAIL_STORAGE, Video
from summaries.pagecache.generation import content_changed

from . import images

logger = logging.getLogger(__name__)

MAX_BYTES = 5 * 1024 * 1024  # a platform thumbnail is 20-200 kB
ACCEPT = "image/webp,image/png,image/jpeg,image/gif;q=0.9"
FOLDER = "thumbnails"
# Worth trying again later: the network or the server may recover.
TRANSIENT_ERRORS = frozenset(
    {ErrorClass.TIMEOUT, ErrorClass.RESET, ErrorClass.REFUSED, ErrorClass.DNS, ErrorClass.NO_SLOT}
)

STORED, UNCHANGED, CLEARED, FAILED = "stored", "unchanged", "cleared", "failed"


class TransientFetchError(Exception):
    """The thumbnail could not be fetched this time (timeout, 5xx, 429): retry later."""


def wanted_source(video: Video) -> str:
    """Where the video's thumbnail comes from: the editor's thumbnail URL, else the
    platform's own (YouTube's "hqdefault", 480x360), else nowhere ("")."""
    if video.thumbnail_url:
        return video.thumbnail_url
    if video.platform == Video.Platform.YOUTUBE and video.platform_video_id:
        return f"https://i.ytimg.com/vi/{video.platform_video_id}/hqdefault.jpg"
    return ""


def needs_fetch(video: Video) -> bool:
    """Whether the stored thumbnail (or the last attempt) is not of the wanted address."""
    return wanted_source(video) != video.thumbnail_source


def queue_thumbnail(*, video: Video) -> bool:
    """Queue fetch_thumbnail for `video` once the transaction commits, when it needs one
    (new video, changed thumbnail or source URL). Returns whether it was queued."""
    if not needs_fetch(video):
        return False
    queue_after_commit("summaries.tasks.fetch_thumbnail", video.pk)
    return True


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
    fetch is then queued); keeps `video` in step. Returns whether anything was written."""
    fields = {"thumbnail_source": source, "thumbnail_fetched_at": timezone.now(), **fields}
    written = Video.objects.filter(
        pk=video.pk, thumbnail_url=video.thumbnail_url, source_url=video.source_url
    ).update(**fields)
    if written:
        for name, value in fields.items():
            setattr(video, name, value)
        video.__dict__.pop("thumbnail", None)  # the cached URLs
    return bool(written)


def store_image(*, video: Video, data: bytes, source: str) -> list[list]:
    """Store the image in `data` as the video's thumbnail, recorded as fetched from
    `source`; cached pages are made stale when it differs from the one shown.
    Raises images.NotAnImage. Returns the files ([name, width, height] each)."""
    files = _save_variants(images.make_variants(data))
    shown = video.thumbnail_files
    if _record(video, source, thumbnail_files=files, thumbnail_error="") and files != shown:
        content_changed()
    return files


def fetch_thumbnail(*, video: Video, force: bool = False, **fetch_overrides) -> str:
    """Fetch the video's thumbnail and store it as WebP variants, unless it is stored.

    Idempotent: when the wanted address (`wanted_source`) is the one last fetched, nothing
    is fetched (`force` fetches again); a changed address is fetched and replaces it; no
    address clears it. The fetch follows the source checker's rules (`fetch_options`,
    `fetch_overrides` for tests) with a MAX_BYTES cap, accepts only JPEG, PNG, WebP or GIF
    (by content type and by decoding), and never stores the fetched bytes (images).

    Side effects: files in the thumbnails storage (content-hashed names; earlier files are
    left in place, since pages cached elsewhere may still show them), the video's
    thumbnail fields, and a content_changed() when what pages show changes.
    Returns STORED, UNCHANGED, CLEARED or FAILED. A permanent failure (4xx, refused
    address, too large, not an image) is recorded and returned as FAILED, with no image
    shown; a transient one (timeout, reset, 5xx, 429) is recorded in thumbnail_error, keeps
    what is stored and raises TransientFetchError for the task to retry.
    """
    url = wanted_source(video)
    if not url:
        if not (video.thumbnail_source or video.thumbnail_files):
            return UNCHANGED
        shown = bool(video.thumbnail_files)
        if _record(video, "", thumbnail_files=[], thumbnail_error="") and shown:
            content_changed()
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
        Video.objects.filter(pk=video.pk).update(thumbnail_error=error[:300])
        video.thumbnail_error = error[:300]
        raise TransientFetchError(error)
    shown = bool(video.thumbnail_files)
    if _record(video, url, thumbnail_files=[], thumbnail_error=error[:300]) and shown:
        content_changed()
    return FAILED
