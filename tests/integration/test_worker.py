"""A real Celery worker process consumes real tasks from the configured broker."""

import os
import time
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache, caches
from django.db import connection

from curation.celery import app as celery_app
from summaries import tasks
from summaries.models import Chapter
from tests.factories import ChapterFactory

pytestmark = pytest.mark.integration

TASK_TIMEOUT = 60
EXPECTED_BROKER = "redis" if os.environ.get("REDIS_URL") else "filesystem"


def test_worker_uses_the_configured_broker(celery_worker):
    with celery_app.connection_for_write() as conn:
        assert conn.transport.driver_type == EXPECTED_BROKER
    stats = celery_app.control.inspect([celery_worker.hostname], timeout=5).stats()
    assert stats, f"no stats from the worker:\n{celery_worker.log_tail()}"
    assert stats[celery_worker.hostname]["broker"]["transport"] == EXPECTED_BROKER


def test_worker_rerenders_a_summary_sent_through_the_broker(transactional_db, celery_worker):
    chapter = ChapterFactory(body="Speed **matters** for [agents](https://example.com/agents).")
    rendered = Chapter.objects.get(pk=chapter.pk).body_html
    assert "<strong>matters</strong>" in rendered
    Chapter.objects.filter(pk=chapter.pk).update(body_html="stale")

    tasks.rerender_summary.delay(chapter.summary_id)

    deadline = time.monotonic() + TASK_TIMEOUT
    body_html = "stale"
    while time.monotonic() < deadline:
        body_html = Chapter.objects.values_list("body_html", flat=True).get(pk=chapter.pk)
        if body_html != "stale":
            break
        time.sleep(0.2)
    assert body_html == rendered, (
        f"the worker did not re-render the chapter within {TASK_TIMEOUT}s:\n"
        f"{celery_worker.log_tail()}"
    )


@pytest.mark.skipif(not os.environ.get("DATABASE_URL"), reason="DATABASE_URL is not set")
def test_database_is_the_one_database_url_names(db):
    scheme = urlsplit(os.environ["DATABASE_URL"]).scheme
    expected = "sqlite" if scheme == "sqlite" else "postgresql"
    assert connection.vendor == expected
    if expected == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("select version()")
            assert cursor.fetchone()[0].startswith("PostgreSQL")


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set")
def test_cache_is_redis_when_redis_url_is_set():
    assert type(caches["default"]).__name__ == "RedisCache"  # summaries.pagecache.backend
    cache.set("curation-integration-check", "ok", 30)
    assert cache.get("curation-integration-check") == "ok"
    cache.delete("curation-integration-check")
    # One client object per pool, not one per call (see summaries/pagecache/backend.py).
    client = caches["default"]._cache.get_client()
    assert caches["default"]._cache.get_client(write=True) is client


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set")
def test_an_edit_reaches_every_process_keeping_local_copies(db, settings):
    from django.test import Client

    from summaries.pagecache.generation import content_changed
    from tests.factories import SummaryFactory

    settings.PAGE_CACHE_LOCAL_BYTES = 1024 * 1024
    summary = SummaryFactory(live=True, tldr="Before the edit.")
    url = summary.get_absolute_url()
    # Two clients, two middleware instances: each keeps its own copies, as two workers do.
    first, second = Client(), Client()
    for reader in (first, second, first, second):
        assert "Before the edit." in reader.get(url).content.decode()
    summary.tldr = "After the edit."
    summary.save()
    content_changed()  # as every write path does: bumps the generation in Redis
    for reader in (second, first):
        assert "After the edit." in reader.get(url).content.decode()
