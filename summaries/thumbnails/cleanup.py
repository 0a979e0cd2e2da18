"""Deleting stored thumbnail files that no video shows any more.

A file is deleted only after the change that stopped showing it is committed (a rolled
back change still shows it), and only when no video's `thumbnail_files` names it: the names
are content hashes, so two videos with the same picture share their files. A storage that
fails to delete is logged; the save or delete that led here has already succeeded.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial, reduce
from operator import or_

from django.core.files.storage import storages
from django.db import transaction
from django.db.models import Q

from summaries.models import THUMBNAIL_STORAGE, Video

logger = logging.getLogger(__name__)


def discard_files(names: Iterable[str]) -> None:
    """Delete the stored files `names` once the current transaction commits, those that no
    video shows by then (delete_unshown_files)."""
    names = sorted(set(names))
    if names:
        transaction.on_commit(partial(delete_unshown_files, names), robust=True)


def shown_files(names: list[str]) -> set[str]:
    """Those of `names` that some video's thumbnail_files names (one query).

    The JSON is matched as text (portable to SQLite), then read exactly here.
    """
    if not names:
        return set()
    matches = reduce(or_, (Q(thumbnail_files__icontains=name) for name in names))
    wanted = set(names)
    return {
        entry[0]
        for files in Video.objects.filter(matches).values_list("thumbnail_files", flat=True)
        for entry in files
        if entry and entry[0] in wanted
    }


def delete_unshown_files(names: list[str]) -> list[str]:
    """Delete those of the stored files `names` that no video shows. Returns the deleted.

    A storage error is logged (warning) and the file left in place.
    """
    storage = storages[THUMBNAIL_STORAGE]
    deleted = []
    for name in sorted(set(names) - shown_files(names)):
        try:
            storage.delete(name)
        except Exception as error:  # noqa: BLE001 - any backend's error: log, never raise
            logger.warning("thumbnail file %s not deleted: %s", name, error, exc_info=True)
        else:
            deleted.append(name)
    if deleted:
        logger.info("thumbnail files no video shows deleted: %s", ", ".join(deleted))
    return deleted
