"""If-Match on summary writes with a real Celery worker recording source checks between an
editor's GET and write: the check changes the read ETag but the write still succeeds; an
edit by someone else in between still makes it a 412.

The cited site is a loopback server on 127.0.0.2, which the worker may fetch because
FETCH_ALLOWED_NETWORKS is set in its environment (as in test_source_checks.py).
"""

import os
import threading
import time

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.models import Source, SourceCheck
from tests.factories import ReviewerFactory, SummaryFactory
from tests.test_linkcheck_fetch import Server, send, title_page

pytestmark = pytest.mark.integration

# Read by the worker process, which copies this environment when it starts.
os.environ["FETCH_ALLOWED_NETWORKS"] = "127.0.0.2/31"
os.environ.setdefault("FETCH_DEADLINE", "5")
TIMEOUT = 60


@pytest.fixture
def site():
    server = Server("127.0.0.2", "127.0.0.2")
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


def held_page(release: threading.Event, text: str):
    """A page answered only once `release` is set: the check lands when the test says."""

    def route(handler):
        release.wait(TIMEOUT)
        send(handler, 200, title_page("Source", text).encode(), "text/html; charset=utf-8")

    return route


def client_for(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def checks_of(url: str) -> int:
    return SourceCheck.objects.filter(source__url=url).count()


def wait_for_checks(url: str, count: int, worker) -> None:
    deadline = time.monotonic() + TIMEOUT
    while checks_of(url) < count:
        if time.monotonic() > deadline:
            pytest.fail(f"No check of {url} recorded within {TIMEOUT}s:\n{worker.log_tail()}")
        time.sleep(0.1)


def detail(summary, action=""):
    return f"/api/v1/summaries/{summary.video.slug}/{action + '/' if action else ''}"


def test_a_check_the_worker_records_between_read_and_write_leaves_if_match_valid(
    transactional_db, celery_worker, site, settings
):
    settings.FETCH_ALLOWED_NETWORKS = os.environ["FETCH_ALLOWED_NETWORKS"].split(",")
    release = threading.Event()
    site.routes["/claim"] = held_page(release, "It runs 2.5 times faster.")
    cited = f"http://127.0.0.2:{site.port}/claim"
    summary = SummaryFactory(tldr="Draft.")
    api = client_for(ReviewerFactory())

    # The edit that cites the source queues its check: the worker holds it at the site.
    chapter = {"title": "One", "body": f"[They say]({cited}) it runs 2.5 times faster."}
    tag = api.get(detail(summary))["ETag"]
    written = api.patch(detail(summary), {"chapters": [chapter]}, format="json", HTTP_IF_MATCH=tag)
    assert written.status_code == 200, written.json()
    read = api.get(detail(summary))
    assert read.json()["citations"][0]["source"]["last_checked_at"] is None
    assert checks_of(cited) == 0

    release.set()
    wait_for_checks(cited, 1, celery_worker)
    checked = api.get(detail(summary))
    assert checked.json()["citations"][0]["source"]["last_checked_at"] is not None
    assert checked["ETag"] != read["ETag"]  # reads show the check, caches see a new version

    response = api.patch(
        detail(summary),
        {"tldr": "Edited after the check."},
        format="json",
        HTTP_IF_MATCH=read["ETag"],
    )
    assert response.status_code == 200, response.json()
    assert checked["Edit-Version"] == read["Edit-Version"]  # what If-Match compared

    # A re-check recorded between a read and a workflow action: the action goes through.
    before = api.get(detail(summary))
    assert api.post(detail(summary, "recheck-sources")).status_code == 202
    wait_for_checks(cited, 2, celery_worker)
    assert api.get(detail(summary))["ETag"] != before["ETag"]
    review = api.post(detail(summary, "submit-for-review"), HTTP_IF_MATCH=before["ETag"])
    assert review.status_code == 200, review.json()
    assert review.json()["status"] == "review"


def test_an_edit_between_read_and_write_is_still_a_conflict_after_a_check(
    transactional_db, celery_worker, site, settings
):
    settings.FETCH_ALLOWED_NETWORKS = os.environ["FETCH_ALLOWED_NETWORKS"].split(",")
    release = threading.Event()
    release.set()
    site.routes["/claim"] = held_page(release, "It runs 2.5 times faster.")
    cited = f"http://127.0.0.2:{site.port}/claim"
    summary = SummaryFactory(tldr="Draft.")
    api, other = client_for(ReviewerFactory()), client_for(ReviewerFactory())
    chapter = {"title": "One", "body": f"[They say]({cited}) it runs 2.5 times faster."}
    tag = api.get(detail(summary))["ETag"]
    assert (
        api.patch(
            detail(summary), {"chapters": [chapter]}, format="json", HTTP_IF_MATCH=tag
        ).status_code
        == 200
    )
    wait_for_checks(cited, 1, celery_worker)

    read = api.get(detail(summary))
    theirs = other.patch(
        detail(summary), {"tldr": "Theirs."}, format="json", HTTP_IF_MATCH=read["ETag"]
    )
    assert theirs.status_code == 200
    assert other.post(detail(summary, "recheck-sources")).status_code == 202
    wait_for_checks(cited, 2, celery_worker)
    mine = api.patch(detail(summary), {"tldr": "Mine."}, format="json", HTTP_IF_MATCH=read["ETag"])
    assert mine.status_code == 412
    assert Source.objects.get(url=cited).last_checked_at is not None
    assert api.get(detail(summary)).json()["tldr"] == "Theirs."
