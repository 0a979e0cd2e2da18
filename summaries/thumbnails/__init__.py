"""Video thumbnails: fetched by a worker, re-encoded as WebP, stored, served from this site.

- `images`: bytes into WebP variants with Pillow (no Django, no network);
- `store`: the service: fetch (through summaries.linkcheck), store, record, queue;
- `serve`: the view serving the files when they are on this machine's disk.
"""

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
    wanted_source,
)

__all__ = [
    "CLEARED",
    "FAILED",
    "STORED",
    "UNCHANGED",
    "NotAnImage",
    "TransientFetchError",
    "fetch_thumbnail",
    "needs_fetch",
    "queue_thumbnail",
    "store_image",
    "wanted_source",
]
