"""/metrics under gunicorn with two workers: whichever worker answers a scrape reports the
counts of both (prometheus-client's multiprocess mode, set up by gunicorn.conf.py), and a
worker that dies keeps its counts in the sums.

Reuses the zero-configuration site and gunicorn runner of test_defaults_multiprocess.
"""

import collections
import os
import signal
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .test_defaults_multiprocess import PAGE, Site, gunicorn, prepared_site, site  # noqa: F401

pytestmark = pytest.mark.integration

TOKEN = "integration-scrape-token-0123456789abcdef"


def _counts(text: str) -> dict[tuple, float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _scrape(server) -> tuple[dict, str]:
    answer = server.request("GET", "/metrics", {"Authorization": f"Bearer {TOKEN}"})
    assert answer.status == 200, answer.body[:500]
    return _counts(answer.body.decode()), answer.probe


def test_every_scrape_reports_what_all_workers_counted(site: Site):  # noqa: F811
    site.env["METRICS_TOKEN"] = TOKEN
    site.env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with gunicorn(site, workers=2) as server:
        assert server.request("GET", "/metrics").status == 404  # no token
        answers = server.warm(PAGE)  # both workers rendered and served it from the cache
        served = collections.Counter(a.pid for a in answers if a.status == 200)
        assert len(served) == 2
        ok = sum(served.values())

        request_key = (
            "curation_http_requests_total",
            (("status", "200"), ("view", "summaries:summary-detail")),
        )
        hits = ("curation_page_cache_requests_total", (("result", "hit"),))
        misses = ("curation_page_cache_requests_total", (("result", "miss"),))
        scrapes = []
        for _ in range(6):  # each answered by one worker or the other
            counts, probe = _scrape(server)
            scrapes.append((probe, counts))
        for _, counts in scrapes:
            assert counts[request_key] == ok
            assert counts[hits] + counts[misses] == ok
            assert counts[misses] >= 1 and counts[hits] >= 2

        # A worker killed: gunicorn starts another; what the dead one counted stays.
        victim = int(next(iter(served)).strip("<>"))
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if server.request("GET", PAGE).status == 200:
                break
            time.sleep(0.2)
        for _ in range(4):
            counts, _ = _scrape(server)
            assert counts[request_key] >= ok + 1
