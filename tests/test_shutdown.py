"""A worker's warm shutdown ends a check batch early and hands the rest back.

The pieces, in one process: the shared flag (summaries/checking/shutdown.py) seen across a
fork, the worker importing it before its pool forks, check_many starting nothing once a
stop is asked for, and the task handing the unstarted sources back on Celery's
`worker_shutting_down` signal. tests/integration/test_graceful_shutdown.py SIGTERMs a real
worker.
"""

import multiprocessing
import subprocess
import sys
import threading
import time

import pytest
from celery.signals import worker_shutting_down
from django.conf import settings
from django.utils import timezone

from summaries import checking, tasks
from summaries.checking import shutdown
from summaries.checking import tasks as checking_tasks
from summaries.linkcheck import check_many
from summaries.models import Source, SourceCheck
from tests.test_checking import queued, site, url  # noqa: F401 - fixtures
from tests.test_linkcheck_fetch import FAST, page, send


@pytest.fixture(autouse=True)
def _no_stop_left_over():
    shutdown.clear()
    yield
    shutdown.clear()


def _wait_for_flag(timeout: float) -> None:
    """In a forked child: exit 0 once the parent's stop request is seen, 1 if never."""
    give_up_at = time.monotonic() + timeout
    while not shutdown.stop_requested():
        if time.monotonic() > give_up_at:
            sys.exit(1)
        time.sleep(0.05)
    sys.exit(0)


def test_a_stop_requested_in_the_parent_reaches_a_child_forked_before():
    child = multiprocessing.get_context("fork").Process(target=_wait_for_flag, args=(10,))
    child.start()
    shutdown.request_stop()
    child.join(15)
    assert child.exitcode == 0


def test_the_worker_creates_the_flag_before_it_forks_its_pool():
    """What the worker does in its main process before starting the pool: import every
    task module. The flag must exist by then, or each pool child would create its own."""
    probe = (
        "import sys\n"
        "from curation.celery import app\n"
        "app.loader.import_default_modules()\n"
        "print('summaries.checking.shutdown' in sys.modules)\n"
    )
    done = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", probe],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "True"


def test_check_many_starts_nothing_after_a_stop_and_finishes_what_is_in_flight(site):  # noqa: F811
    stop = threading.Event()

    def first(handler):
        stop.set()  # asked while this request is in flight
        send(handler, 200, b"<title>First</title>")

    site.routes["/0"] = first
    for i in range(1, 5):
        site.routes[f"/{i}"] = page(body="<title>Later</title>")
    urls = {site.url(f"/{i}"): False for i in range(5)}

    results = check_many(urls, per_host=1, retries=0, should_stop=stop.is_set, **FAST)

    assert list(results) == [site.url("/0")]
    assert results[site.url("/0")].state == "ok"
    assert sum(site.hits.values()) == 1


@pytest.mark.django_db
@pytest.mark.parametrize("attempt", [1, checking_tasks.CHECK_MAX_ATTEMPTS])
def test_a_shutdown_mid_batch_records_what_was_in_flight_and_hands_back_the_rest(
    site,  # noqa: F811
    settings,
    django_capture_on_commit_callbacks,
    attempt,
):
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    settings.FETCH_PER_HOST = 1  # one request at a time: the first is the one in flight

    def first(handler):
        # What the worker's main process does on SIGTERM, while this fetch is in flight.
        worker_shutting_down.send(sender="test@localhost", sig="SIGTERM", how="Warm", exitcode=0)
        send(handler, 200, b"<title>First</title>")

    site.routes["/0"] = first
    paths = [f"/{i}" for i in range(5)]
    for path in paths[1:]:
        site.routes[path] = page(body="<title>Later</title>")
    pks = [Source.objects.create(url=url(site, p), host="127.0.0.2").pk for p in paths]
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)
    before = timezone.now()

    with django_capture_on_commit_callbacks() as callbacks:
        tasks.check_source_batch(ids, token, attempt)

    assert sum(site.hits.values()) == 1
    assert list(SourceCheck.objects.values_list("source_id", "token")) == [(pks[0], token)]
    # Handed back under the same attempt, even the last one: a shutdown is no attempt.
    assert queued(callbacks) == [(pks[1:], token, attempt)]
    left = Source.objects.filter(pk__in=pks[1:])
    assert {(s.check_token, s.last_checked_at) for s in left} == {(token, None)}
    assert all(s.claimed_until > before for s in left)  # lease renewed


@pytest.mark.django_db
def test_a_batch_without_a_shutdown_is_not_stopped(site, settings):  # noqa: F811
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    site.routes["/a"] = page(body="<title>A</title>")
    Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)

    outcome = checking.check_source_batch(
        source_ids=ids, token=token, stop_requested=shutdown.stop_requested
    )

    assert outcome.recorded == ids and not outcome.remaining and not outcome.stopped
