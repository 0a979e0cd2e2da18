"""Metrics an operator scrapes, in Prometheus's text format (prometheus-client).

What is counted where:

- requests by URL name and status (`count_request`, called by the request middleware of
  summaries/ops/logs.py): label values are URL names, never paths, so made-up addresses
  all land under `<unmatched>` and the series stay as few as the site's URL patterns;
- page cache hits and misses (summaries/pagecache/middleware.py): a miss is a page the
  cache keeps that had to be rendered; requests the cache never keeps count neither;
- check results by state (`count_checks`, in checking.record.record_results) and the
  duration of each check batch (`CHECK_BATCH_SECONDS`, in the check task);
- read when scraped, never kept: the broker's queue length and the age of the most overdue
  source (`ScrapeTimeCollector`).

Processes. gunicorn runs several workers and a scrape reaches one of them, so each process
writes its counts to files in PROMETHEUS_MULTIPROC_DIR (prometheus-client's multiprocess
mode) and a scrape sums them; gunicorn.conf.py gives the web a folder of its own and
removes dead workers' live files. Without the variable (runserver, manage.py, tests) the
process's own counts are reported. The Celery worker counts check results in its pool
processes: with METRICS_WORKER_PORT set it serves their sum on that port (`worker_ready`);
its pool processes write to the worker's PROMETHEUS_MULTIPROC_DIR, which must be set.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import logging
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from celery import current_app, signals
from django.conf import settings
from django.http import Http404, HttpResponse
from django.urls import Resolver404, resolve
from django.utils import timezone
from django.views.decorators.cache import never_cache
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily

logger = logging.getLogger(__name__)

UNMATCHED = "<unmatched>"  # the label of every path that matches no URL pattern
STATIC = "static"  # files WhiteNoise answers before URL resolution

REQUESTS = Counter(
    "curation_http_requests",
    "Requests answered, by URL name ('<unmatched>': no URL pattern; 'static': static "
    "files) and status code.",
    ["view", "status"],
)
PAGE_CACHE = Counter(
    "curation_page_cache_requests",
    "Reader pages the page cache answered (hit) or had rendered and kept (miss).",
    ["result"],
)
PAGE_CACHE_HITS = PAGE_CACHE.labels(result="hit")
PAGE_CACHE_MISSES = PAGE_CACHE.labels(result="miss")
CHECKS = Counter("curation_source_checks", "Source check results recorded, by state.", ["state"])
# A batch stops starting fetches before its soft limit (150 s, hard limit 180 s).
CHECK_BATCH_SECONDS = Histogram(
    "curation_check_batch_duration_seconds",
    "Seconds one check task spent checking and recording its batch.",
    buckets=(0.5, 1, 2.5, 5, 10, 20, 30, 60, 90, 120, 150, 180),
)


# --- Counting ----------------------------------------------------------------------------


def count_checks(states: Iterable[str]) -> None:
    for state in states:
        CHECKS.labels(state=state).inc()


@functools.lru_cache(maxsize=2048)
def _url_name(path: str) -> str:
    """The URL name of a path, resolved once per path and process (at most 2048 kept)."""
    try:
        return resolve(path).view_name
    except Resolver404:
        return UNMATCHED


@functools.cache
def _static_prefix() -> str:
    return settings.STATIC_URL or "/static/"


def view_label(request, status: int) -> str:
    """The URL name a request was answered by, from a small set of values.

    Answers given before URL resolution (cached pages, probes, HTTPS redirects) are named
    by resolving their path, once per path; a 404 that nothing resolved is `<unmatched>`
    at once, so made-up paths cost nothing more and fill nothing.
    """
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return match.view_name
    path = request.path_info
    if path.startswith(_static_prefix()):
        return STATIC
    if status == 404:
        return UNMATCHED
    return _url_name(path)


# The counter of each (view, status) met so far: `labels()` takes a lock and checks its
# values on every call, this is one dictionary look-up. As few entries as label values.
_request_counters: dict[tuple[str, int], Counter] = {}


def count(view: str, status: int) -> None:
    """Count a request answered by `view` (a label of view_label's) with `status`."""
    counter = _request_counters.get((view, status))
    if counter is None:
        counter = _request_counters[view, status] = REQUESTS.labels(view, str(status))
    counter.inc()


def count_request(request, status: int) -> str:
    """Count an answered request; returns its label (the log line names it too)."""
    view = view_label(request, status)
    count(view, status)
    return view


# --- Read at scrape time -----------------------------------------------------------------

# kombu's Redis transport keeps a queue's messages of priority p > 0 in "<queue>\x06\x16p".
_REDIS_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


@functools.lru_cache(maxsize=4)
def _redis(url: str):
    import redis

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def queue_length(queue: str) -> int:
    """Messages waiting in the broker's queue `queue`: LLEN on Redis (every priority),
    the number of message files with the file-system broker."""
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem"):
        folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        suffix = f".{queue}.msg"
        with os.scandir(folder) as entries:
            return sum(1 for entry in entries if entry.name.endswith(suffix))
    pipe = _redis(url).pipeline(transaction=False)
    for suffix in _REDIS_PRIORITY_SUFFIXES:
        pipe.llen(f"{queue}{suffix}")
    return sum(pipe.execute())


def oldest_due_age(now: datetime) -> float:
    """Seconds since the most overdue source that is not ignored became due (0: none).

    Due: past its next check, or never checked (then since it was created). One query of
    two scalar subqueries, each read from the (ignored, next_check_at) index.
    """
    from django.db.models import Subquery

    from summaries.models import Source

    active = Source.objects.filter(ignored=False).order_by()
    overdue = active.filter(next_check_at__lte=now).order_by("next_check_at")
    never = active.filter(next_check_at__isnull=True).order_by("created_at")
    row = list(
        Source.objects.order_by()
        .annotate(
            overdue=Subquery(overdue.values("next_check_at")[:1]),
            never=Subquery(never.values("created_at")[:1]),
        )
        .values_list("overdue", "never")[:1]
    )
    since = [moment for moment in (row[0] if row else ()) if moment is not None]
    return max([0.0] + [(now - moment).total_seconds() for moment in since])


class ScrapeTimeCollector:
    """Gauges read from the broker and the database when scraped. A source that fails is
    left out of the answer (and logged), so the rest still reaches the operator."""

    def collect(self):
        queue = current_app.conf.task_default_queue
        try:
            length = GaugeMetricFamily(
                "curation_task_queue_length",
                "Tasks waiting in the broker's queue.",
                labels=["queue"],
            )
            length.add_metric([queue], queue_length(queue))
            yield length
        except Exception:  # noqa: BLE001 - the broker is down: report the rest
            logger.warning("metrics: queue length of %s unreadable", queue, exc_info=True)
        try:
            yield GaugeMetricFamily(
                "curation_oldest_due_source_age_seconds",
                "Seconds since the most overdue source became due for a check (0: none).",
                value=oldest_due_age(timezone.now()),
            )
        except Exception:  # noqa: BLE001 - the database is down: report the rest
            logger.warning("metrics: oldest due source unreadable", exc_info=True)


_SCRAPE_TIME = CollectorRegistry(auto_describe=False)
_SCRAPE_TIME.register(ScrapeTimeCollector())


def _counted() -> CollectorRegistry:
    """Every process's counts in multiprocess mode, else this process's."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


def exposition(*, scrape_time: bool = True) -> bytes:
    text = generate_latest(_counted())
    if scrape_time:
        text += generate_latest(_SCRAPE_TIME)
    return text


# --- The web endpoint --------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _networks(cidrs: tuple[str, ...]):
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def may_scrape(request) -> bool:
    """The bearer token METRICS_TOKEN, or a peer address in METRICS_ALLOWED_NETWORKS.

    The peer is REMOTE_ADDR: behind a proxy that is the proxy, so there use the token.
    """
    token = settings.METRICS_TOKEN
    scheme, _, offered = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if token and scheme.lower() == "bearer":
        if hmac.compare_digest(offered.strip().encode(), token.encode()):
            return True
    networks = _networks(tuple(settings.METRICS_ALLOWED_NETWORKS))
    if not networks:
        return False
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(peer in network for network in networks)


@never_cache
def metrics_view(request):
    """/metrics: the counts of every web process and the scrape-time gauges. Anyone else
    gets the site's 404, as for an address that does not exist."""
    if not may_scrape(request):
        raise Http404
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)


# --- The worker's endpoint ---------------------------------------------------------------


def _worker_port() -> int:
    return settings.METRICS_WORKER_PORT


@signals.worker_init.connect(dispatch_uid="curation-worker-metrics-folder")
def _empty_worker_folder(**kwargs) -> None:
    """Before the pool starts: drop the counts of an earlier run of this worker."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if _worker_port() and folder:
        for stale in Path(folder).glob("*.db"):
            stale.unlink(missing_ok=True)


def start_worker_endpoint(port: int, addr: str) -> bool:
    """Serve the sum of the worker's pool processes' counts on `port` (plain HTTP, no
    token: bind it to a private address). Needs PROMETHEUS_MULTIPROC_DIR."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        logger.error(
            "METRICS_WORKER_PORT is set but PROMETHEUS_MULTIPROC_DIR is not: the worker's "
            "pool processes could not be summed, so no metrics endpoint was started."
        )
        return False
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    start_http_server(port, addr=addr, registry=registry)
    logger.info("worker metrics on http://%s:%s/metrics", addr, port)
    return True


@signals.worker_ready.connect(dispatch_uid="curation-worker-metrics")
def _worker_endpoint(**kwargs) -> None:
    if _worker_port():
        start_worker_endpoint(_worker_port(), settings.METRICS_WORKER_ADDR)
