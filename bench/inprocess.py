"""Pages rendered in-process, through the whole Django stack, for the bench scripts.

Call `setup_django()` before importing anything from Django or the project.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def setup_django() -> None:
    """Make the project importable and set Django up (curation.settings unless set)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
    import django

    django.setup()


def uncached_get(client, path: str, tag: str):
    """GET `path` with a query string no other request used, so that it misses the page
    cache and the page is rendered. Any answer but 200 ends the script."""
    separator = "&" if "?" in path else "?"
    response = client.get(f"{path}{separator}nocache={tag}-{time.time_ns()}")
    if response.status_code != 200:
        raise SystemExit(f"{path} answered {response.status_code}")
    return response


def warm_client(path: str, requests: int):
    """A django.test.Client for HOST that has rendered `path` `requests` times already
    (database connections, templates, imports)."""
    from django.test import Client

    client = Client(HTTP_HOST=HOST)
    for n in range(requests):
        uncached_get(client, path, f"warm{n}")
    return client


def timed_get(client, path: str, tag: str):
    """`uncached_get`, timed: (milliseconds, the queries it ran, the response)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        response = uncached_get(client, path, tag)
        elapsed = (time.perf_counter() - started) * 1000
    return elapsed, captured.captured_queries, response
