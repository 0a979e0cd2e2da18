"""Video thumbnails: fetched by a worker, re-encoded as WebP, stored, served from this site.

- `images`: bytes into WebP variants with Pillow (no Django, no network);
- `store`: the service: fetch (through summaries.linkcheck), store, record, queue;
- `sweep`: the periodic sweep queueing the fetches still needed (failed for a while, lost);
- `cleanup`: deleting stored files no video shows any more (replaced, video deleted);
- `receivers`: a deleted video's files deleted, a restored one's fetched again if gone;
- `serve`: the view serving the files when they are on this machine's disk.
"""

from . import receivers  # noqa: F401 - connects the receivers
from .cleanup import discard_files
from .images import NotAnImage
from .store import (
    CLEARED,
    FAILED,
    STORED,
    UNCHANGED,
    TransientFetchError,
    fetch_thumbnail,
    needs_fetch,
    queue_thumbnail,
    store_image,
    videos_needing_fetch,
    wanted_source,
)
from .sweep import sweep_thumbnails

__all__ = [
    "CLEARED",
    "FAILED",
    "STORED",
    "UNCHANGED",
    "NotAnImage",
    "TransientFetchError",
    "discard_files",
    "fetch_thumbnail",
    "needs_fetch",
    "queue_thumbnail",
    "store_image",
    "sweep_thumbnails",
    "videos_needing_fetch",
    "wanted_source",
]
