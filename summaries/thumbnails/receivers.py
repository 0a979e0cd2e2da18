"""What a video's deletion or restoration means for its stored thumbnail files.

Receivers rather than services: videos are deleted by the admin (one or a selection), by
the demo's reset and by django-reversion (a revert that deletes what came later), and
restored by django-reversion (revert, recover), none of which passes through a service of
ours; a receiver sees each of them, cascades included. Connected when this package is
imported (summaries.tasks imports it in every process, from SummariesConfig.ready).
"""

from __future__ import annotations

from django.core.files.storage import storages
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from summaries.models import THUMBNAIL_STORAGE, Video

from .cleanup import discard_files
from .store import queue_thumbnail


@receiver(post_delete, sender=Video, dispatch_uid="thumbnails-deleted-video")
def discard_deleted_videos_files(sender, instance: Video, **kwargs) -> None:
    """A deleted video's files are deleted once that is committed, unless shared."""
    discard_files(name for name, _, _ in instance.thumbnail_files or [])


@receiver(post_save, sender=Video, dispatch_uid="thumbnails-restored-video")
def refetch_restored_thumbnail(sender, instance: Video, raw: bool, **kwargs) -> None:
    """A video restored from its history (a raw save) may name files deleted since it was
    recorded there: then it shows none, and its thumbnail is fetched again."""
    files = instance.thumbnail_files or []
    if not raw or not files:
        return
    storage = storages[THUMBNAIL_STORAGE]
    if all(storage.exists(name) for name, _, _ in files):
        return
    Video.objects.filter(pk=instance.pk).update(thumbnail_files=[], thumbnail_source="")
    instance.thumbnail_files, instance.thumbnail_source = [], ""
    queue_thumbnail(video=instance)
