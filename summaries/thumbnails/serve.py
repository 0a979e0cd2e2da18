"""Serving stored thumbnails when they are files on this machine (the default storage).

WhiteNoise cannot serve them: it serves the files it found at start-up (static files),
and thumbnails arrive while the site runs. So a small view streams them from the storage's
folder, in development and in the zero-configuration set-up alike (a few kB each, and
browsers keep them: the names are content hashes, so a name never gets other bytes).
A storage elsewhere (any django-storages backend) serves its own files, at its own
address: then no route is added, and pages only ever use storage.url().
"""

from django.conf import settings
from django.core.files.storage import FileSystemStorage, storages
from django.urls import path
from django.views.decorators.http import require_safe
from django.views.static import serve

from summaries.models import THUMBNAIL_STORAGE

from .store import FOLDER

IMMUTABLE = "public, max-age=31536000, immutable"


@require_safe
def serve_thumbnail(request, name: str):
    """One stored file (404 for anything else), cached by browsers for a year."""
    storage = storages[THUMBNAIL_STORAGE]
    response = serve(request, f"{FOLDER}/{name}", document_root=storage.location)
    response["Cache-Control"] = IMMUTABLE
    return response


def media_urlpatterns() -> list:
    """The route for serve_thumbnail when the storage is this machine's disk and MEDIA_URL
    a path of this site; none otherwise."""
    storage = storages[THUMBNAIL_STORAGE]
    prefix = settings.MEDIA_URL
    if not isinstance(storage, FileSystemStorage) or not prefix.startswith("/"):
        return []
    route = f"{prefix.lstrip('/')}{FOLDER}/<str:name>"
    return [path(route, serve_thumbnail, name="thumbnail-file")]
