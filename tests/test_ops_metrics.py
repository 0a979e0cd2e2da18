"""Metrics an operator scrapes at /metrics (summaries/ops/metrics.py): what moves them, who
may read them, and that their label values stay few whatever readers ask for."""

import os
import runpy
import subprocess
import sys
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from summaries import checking
from summaries.checking import tasks as checking_tasks
from summaries.linkcheck import CheckResult, State
from summaries.models import Source
from summaries.ops import metrics

from .factories import SummaryFactory

pytestmark = pytest.mark.django_db


def answering(result: CheckResult):
    """A stand-in for record.run_checks: every URL gets `result`, no network."""

    def run_checks(needs, *, on_result=None, **options):
        for url in needs:
            if on_result is not None:
                on_result(url, result)
        return dict.fromkeys(needs, result)

    return run_checks


TOKEN = "scrape-token-for-tests-0123456789"


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def value(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def label_values(name: str, label: str) -> set[str]:
    return {
        sample.labels[label]
        for family in REGISTRY.collect()
        for sample in family.samples
        if sample.name == name
    }


# --- Requests and the page cache ---------------------------------------------------------


def test_a_page_served_counts_a_miss_then_a_hit_under_its_url_name(client):
    summary = SummaryFactory(live=True)
    view = "summaries:summary-detail"
    before = {
        "hit": value("curation_page_cache_requests_total", result="hit"),
        "miss": value("curation_page_cache_requests_total", result="miss"),
        "ok": value("curation_http_requests_total", view=view, status="200"),
    }

    assert client.get(summary.get_absolute_url()).status_code == 200  # rendered and stored
    assert value("curation_page_cache_requests_total", result="miss") == before["miss"] + 1
    assert value("curation_page_cache_requests_total", result="hit") == before["hit"]

    assert client.get(summary.get_absolute_url()).status_code == 200  # from the cache
    assert value("curation_page_cache_requests_total", result="hit") == before["hit"] + 1
    assert value("curation_page_cache_requests_total", result="miss") == before["miss"] + 1
    # Both requests counted under the URL name, the cached one too.
    assert value("curation_http_requests_total", view=view, status="200") == before["ok"] + 2


def test_requests_that_the_page_cache_does_not_keep_count_neither_hit_nor_miss(client):
    before = (
        value("curation_page_cache_requests_total", result="hit"),
        value("curation_page_cache_requests_total", result="miss"),
    )
    client.get("/no-such-page/")
    client.get("/api/v1/summaries/", {"made_up": "1"})  # a parameter the API does not read
    after = (
        value("curation_page_cache_requests_total", result="hit"),
        value("curation_page_cache_requests_total", result="miss"),
    )
    assert after == before


def test_random_paths_share_one_label_value(client):
    before = value("curation_http_requests_total", view="<unmatched>", status="404")
    views_before = label_values("curation_http_requests_total", "view")
    for _ in range(20):
        client.get(f"/{uuid.uuid4().hex}/{uuid.uuid4().hex}")
        client.get(f"/videos/{uuid.uuid4().hex}/")  # a URL name, but a missing video
    assert value("curation_http_requests_total", view="<unmatched>", status="404") == before + 20
    new = label_values("curation_http_requests_total", "view") - views_before
    assert new <= {"<unmatched>", "summaries:summary-detail"}
    for sample_view in label_values("curation_http_requests_total", "view"):
        assert "/" not in sample_view  # never a raw path


def test_a_request_counts_its_status():
    before = value("curation_http_requests_total", view="summaries:home", status="405")
    from django.test import Client

    Client().post("/")  # the home page answers GET only
    assert value("curation_http_requests_total", view="summaries:home", status="405") == before + 1


# --- Checks ------------------------------------------------------------------------------


def _claimed(*urls: str) -> tuple[str, list[Source]]:
    sources = [Source.objects.create(url=url, host="example.com") for url in urls]
    token, ids = checking.claim_sources(
        queryset=Source.objects.filter(pk__in=[s.pk for s in sources]), limit=len(sources)
    )
    assert len(ids) == len(sources)
    return token, sources


def test_recorded_results_count_checks_by_state():
    token, (ok, broken) = _claimed("https://example.com/ok", "https://example.com/gone")
    before_ok = value("curation_source_checks_total", state="ok")
    before_broken = value("curation_source_checks_total", state="broken")
    checking.record_results(
        token=token,
        results={
            ok.pk: CheckResult(url=ok.url, state=State.OK, final_url=ok.url, status=200),
            broken.pk: CheckResult(url=broken.url, state=State.BROKEN, status=404),
        },
    )
    assert value("curation_source_checks_total", state="ok") == before_ok + 1
    assert value("curation_source_checks_total", state="broken") == before_broken + 1
    # A batch recorded again (a redelivery) writes nothing and counts nothing.
    checking.record_results(
        token=token,
        results={ok.pk: CheckResult(url=ok.url, state=State.OK, final_url=ok.url, status=200)},
    )
    assert value("curation_source_checks_total", state="ok") == before_ok + 1


def test_a_check_batch_observes_its_duration(monkeypatch):
    token, (source,) = _claimed("https://example.com/timed")
    result = CheckResult(url=source.url, state=State.OK, final_url=source.url, status=200)
    monkeypatch.setattr(checking_tasks.record, "run_checks", answering(result))
    before = value("curation_check_batch_duration_seconds_count")
    checking_tasks.check_source_batch([source.pk], token)
    assert value("curation_check_batch_duration_seconds_count") == before + 1
    assert value("curation_check_batch_duration_seconds_sum") > 0


# --- Read at scrape time -----------------------------------------------------------------


def test_queue_length_of_the_file_system_broker_counts_its_message_files(settings, tmp_path):
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(tmp_path)}
    for n in range(3):
        (tmp_path / f"{n}_{uuid.uuid4()}.celery.msg").write_text("{}")
    (tmp_path / f"9_{uuid.uuid4()}.other.msg").write_text("{}")  # another queue
    assert metrics.queue_length("celery") == 3
    assert metrics.queue_length("other") == 1


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL")
def test_queue_length_of_the_redis_broker_is_the_list_length(settings):
    import redis

    settings.CELERY_BROKER_URL = os.environ["REDIS_URL"]
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queue = f"metrics-test-{uuid.uuid4().hex}"
    try:
        client.rpush(queue, "a", "b")
        client.rpush(f"{queue}\x06\x163", "c")  # the same queue at priority 3
        assert metrics.queue_length(queue) == 3
    finally:
        client.delete(queue, f"{queue}\x06\x163")


def test_oldest_due_source_age_is_read_in_one_query(django_assert_num_queries):
    now = timezone.now()
    assert metrics.oldest_due_age(now) == 0
    Source.objects.create(
        url="https://example.com/a", host="example.com", next_check_at=now - timedelta(minutes=5)
    )
    Source.objects.create(
        url="https://example.com/b", host="example.com", next_check_at=now + timedelta(days=1)
    )  # not due
    Source.objects.create(
        url="https://example.com/c",
        host="example.com",
        ignored=True,
        next_check_at=now - timedelta(days=9),
    )  # ignored: never due
    with django_assert_num_queries(1):
        age = metrics.oldest_due_age(now)
    assert age == pytest.approx(300, abs=1)
    # A source never checked is due since it was created.
    never = Source.objects.create(url="https://example.com/new", host="example.com")
    Source.objects.filter(pk=never.pk).update(created_at=now - timedelta(hours=1))
    with django_assert_num_queries(1):
        assert metrics.oldest_due_age(now) == pytest.approx(3600, abs=1)


# --- The endpoint ------------------------------------------------------------------------


@pytest.fixture
def scrape_settings(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED_NETWORKS = []
    return settings


def scrape(client, **headers):
    return client.get("/metrics", **headers)


def test_the_endpoint_is_not_found_without_the_token(client, scrape_settings):
    assert scrape(client).status_code == 404
    assert scrape(client, HTTP_AUTHORIZATION="Bearer wrong-token").status_code == 404
    assert scrape(client, HTTP_AUTHORIZATION=f"Token {TOKEN}").status_code == 404
    scrape_settings.METRICS_TOKEN = ""
    assert scrape(client, HTTP_AUTHORIZATION="Bearer ").status_code == 404  # no token: closed


def test_the_endpoint_answers_with_the_token_and_is_never_cached(client, scrape_settings):
    response = scrape(client, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert "no-store" in response["Cache-Control"]
    names = {f.name for f in text_string_to_metric_families(response.content.decode())}
    assert {
        "curation_http_requests",
        "curation_page_cache_requests",
        "curation_source_checks",
        "curation_check_batch_duration_seconds",
        "curation_task_queue_length",
        "curation_oldest_due_source_age_seconds",
    } <= names
    assert TOKEN not in response.content.decode()
    assert scrape(client).status_code == 404  # nothing was kept for the next caller


def test_the_endpoint_answers_allowed_networks(client, scrape_settings):
    scrape_settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    assert scrape(client).status_code == 404  # the test client is 127.0.0.1
    scrape_settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8", "127.0.0.1/32"]
    assert scrape(client).status_code == 200


def test_multiprocess_mode_sums_the_counters_of_every_process(tmp_path):
    """With PROMETHEUS_MULTIPROC_DIR (gunicorn.conf.py sets one), a scrape answered by any
    worker reports what all of them counted."""
    script = (
        "import django; django.setup();"
        "from summaries.ops import metrics;"
        "metrics.PAGE_CACHE_HITS.inc(2)"
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for _ in range(2):
        subprocess.run(  # noqa: S603 - fixed arguments
            [sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, check=True
        )
    report = (
        "import django; django.setup();"
        "from summaries.ops import metrics;"
        "print(metrics.exposition(scrape_time=False).decode())"
    )
    out = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", report],
        cwd=settings.BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert 'curation_page_cache_requests_total{result="hit"} 4.0' in out


# --- gunicorn.conf.py --------------------------------------------------------------------


def _gunicorn_hooks() -> dict:
    return runpy.run_path(str(settings.BASE_DIR / "gunicorn.conf.py"))


def test_gunicorn_gives_its_workers_a_metrics_folder_and_removes_it(monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")  # restored after the test
    monkeypatch.setenv("CURATION_METRICS_DIR_MADE", "")
    hooks = _gunicorn_hooks()
    folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    assert folder.is_dir() and folder.name.startswith(f"curation-metrics-{os.getpid()}-")
    hooks["on_exit"](None)
    assert not folder.exists()


def test_gunicorn_hooks_keep_a_dead_workers_counts_and_clean_up(monkeypatch, tmp_path):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    hooks = _gunicorn_hooks()
    for name in ("counter_41.db", "histogram_41.db", "gauge_livesum_41.db"):
        (tmp_path / name).write_bytes(b"")
    hooks["child_exit"](None, SimpleNamespace(pid=41))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter_41.db", "histogram_41.db"]

    dead = subprocess.Popen([sys.executable, "-c", "pass"])  # noqa: S603 - fixed arguments
    dead.wait()
    left = Path(tempfile.mkdtemp(prefix=f"curation-metrics-{dead.pid}-"))
    hooks["on_starting"](None)  # a given folder is emptied; a dead master's folder removed
    assert list(tmp_path.iterdir()) == []
    assert not left.exists()
    hooks["on_exit"](None)
    assert tmp_path.exists()  # a given folder stays


def test_prometheus_scrapes_a_pod_by_address_over_plain_http(client, scrape_settings):
    """Prometheus scrapes each web process by its address (a Host not in ALLOWED_HOSTS) over
    plain HTTP: like the probes, /metrics answers before the Host check and the redirect."""
    scrape_settings.ALLOWED_HOSTS = ["curation.example.com"]
    scrape_settings.SECURE_SSL_REDIRECT = True
    pod = {"HTTP_HOST": "10.42.0.17:8000"}

    assert scrape(client, HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **pod).status_code == 200
    assert scrape(client, **pod).status_code == 404  # still closed without the token
    assert client.get("/", **pod).status_code == 400  # other paths keep both guards
