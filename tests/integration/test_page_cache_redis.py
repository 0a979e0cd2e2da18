"""The page cache on a real Redis under a reader flood.

Each test runs its own redis-server on a free port, with a small memory limit, so that a
flood can fill it; the shared Redis is left alone.
"""

import os
import random
import shutil
import socket
import subprocess
import time

import pytest
import redis
from celery import Celery
from django.urls import reverse

from tests.factories import SummaryFactory

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="REDIS_URL is not set"),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server is not installed"),
]

MAXMEMORY = 4 * 1024 * 1024


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def small_redis():
    """A redis-server of 4 MB that evicts only keys with a time to live (the README's
    advice for one Redis shared by the broker and the cache); yields its URL."""
    port = _free_port()
    command = [shutil.which("redis-server"), "--bind", "127.0.0.1", "--port", str(port)]
    command += ["--save", "", "--appendonly", "no", "--maxmemory", str(MAXMEMORY)]
    command += ["--maxmemory-policy", "volatile-lru"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
    client = redis.Redis(port=port, socket_connect_timeout=0.5)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline:
                    pytest.fail("redis-server did not start")
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0", client
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def cache_on(settings):
    def use(url: str) -> None:
        settings.CACHES = {
            "default": {
                "BACKEND": "summaries.pagecache.backend.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "curation",
                "TIMEOUT": 300,
            }
        }

    return use


def cache_keys(client: redis.Redis) -> int:
    return sum(1 for _ in client.scan_iter(match="curation:*", count=1000))


def test_random_query_strings_add_no_keys_to_redis(transactional_db, client, small_redis, cache_on):
    url, redis_client = small_redis
    cache_on(url)
    summary = SummaryFactory(live=True)
    pages = [summary.get_absolute_url(), reverse("summaries:home")]
    pages.append(summary.video.channel.get_absolute_url())
    for page in pages:
        assert client.get(page).status_code == 200
    before = cache_keys(redis_client)
    rng = random.Random(3)
    for number in range(500):
        response = client.get(pages[number % len(pages)], {"x": rng.randrange(10**12)})
        assert response.status_code == 200
    assert cache_keys(redis_client) - before <= 3


def test_one_redis_for_broker_and_cache_survives_a_flood_of_real_pages(
    transactional_db, client, small_redis, cache_on
):
    """With maxmemory and volatile-lru, cached pages (which all expire) make room for
    each other, and queued tasks (which never expire) are neither evicted nor refused."""
    url, redis_client = small_redis
    cache_on(url)
    # Not the current app: tasks queued by later tests must still go to the test broker.
    broker = Celery("flooded-broker", broker=url, set_as_current=False)
    broker.send_task("summaries.tasks.check_source_batch", args=[[1], "queued-before"], queue="q")
    padding = "Words that make a page long. " * 1500  # about 45 KB per page
    summaries = [SummaryFactory(live=True, tldr=padding) for _ in range(150)]
    for summary in summaries:  # about 7 MB of distinct, legitimate pages
        assert client.get(summary.get_absolute_url()).status_code == 200
    info = redis_client.info()
    assert info["evicted_keys"] > 0, "the flood did not fill the cache"
    assert info["used_memory"] <= MAXMEMORY * 1.1
    assert redis_client.llen("q") == 1  # the task queued before the flood is still there
    broker.send_task("summaries.tasks.check_source_batch", args=[[2], "queued-after"], queue="q")
    assert redis_client.llen("q") == 2  # and the broker still takes new ones
    # Every cache entry expires, so volatile-lru may evict any of them; what pages are
    # checked against (the content generation) is in the database.
    ttls = [redis_client.ttl(key) for key in redis_client.scan_iter(match="curation:*")]
    assert ttls and -1 not in ttls  # -1: no expiry (-2: evicted since the scan)
    broker.close()
