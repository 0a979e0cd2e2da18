"""A loopback scenario of archived copies: 300 cited pages on 6 hosts, captured by a web
archive stub at a configured pace; later some die, drift or redirect elsewhere.

Every dead or drifted source whose capture at the archive is good gets that copy (fetched
and found to be the page as cited: its evidence's payload); none gets a copy of an error
page, of a redirect, or of a capture that failed; untouched pages get none; the archive
never saw more capture requests than the pace allows. Services run as their tasks run
them (tests/test_archive.py).
"""

import pytest

from summaries.models import ArchiveCapture, ArchivedCopy, Citation
from tests.archive_stub import ArchiveStub, SiteServer
from tests.test_archive import (  # noqa: F401 - fixtures
    archive_settings,
    check_all,
    cite,
    queued,
    review_and_run,
    vault,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

HOSTS = 6
PAGES = 300
RATE = 60  # capture requests per second


def text(n: int) -> str:
    return f"Our model {n} is 2.5 times faster than before."


@pytest.fixture
def sites():
    servers = [SiteServer("127.0.0.3").start() for _ in range(HOSTS)]
    yield servers
    for server in servers:
        server.stop()


@pytest.fixture
def stub(sites, archive_settings):  # noqa: F811
    server = ArchiveStub("127.0.0.2", sites=sites).start()
    archive_settings.ARCHIVE_ENDPOINT = server.base
    archive_settings.ARCHIVE_CAPTURE_RATE = f"{RATE}/s"
    archive_settings.ARCHIVE_POLL_SECONDS = 0.05
    yield server
    server.stop()


def fate(n: int) -> tuple[str, str]:
    """(what happens to page n later, how the archive captures it)."""
    later = ("dies", "drifts", "redirects", "stays")[n % 4]
    capture = {0: "ok", 1: "ok", 2: "ok", 3: "error_page", 4: "redirect", 5: "fail"}[n % 6]
    return later, capture


def test_dead_and_drifted_sources_get_only_good_verified_copies(
    sites,
    stub,
    queued,  # noqa: F811
    vault,  # noqa: F811 - the first check keeps what each page said when cited
):
    links = []
    for n in range(PAGES):
        site = sites[n % HOSTS]
        link = site.set(f"/page/{n}", text(n))
        links.append(link)
        stub.behaviour[link] = fate(n)[1]
    for start in range(0, PAGES, 25):
        chunk = links[start : start + 25]
        for n, link in enumerate(chunk, start=start):
            cite(link, phrase=f"model {n} is 2.5 times faster")

    review_and_run(check_all(), queued)
    captured = ArchiveCapture.objects.filter(state="success").count()
    assert captured == sum(fate(n)[1] != "fail" for n in range(PAGES))
    assert ArchiveCapture.objects.filter(state="failed").count() == PAGES - captured

    for n in range(PAGES):
        site, path = sites[n % HOSTS], f"/page/{n}"
        later = fate(n)[0]
        if later == "dies":
            site.set(path, status=404)
        elif later == "drifts":
            site.set(path, "This page now talks about something else.")
        elif later == "redirects":
            site.set(f"/elsewhere/{n}", "An unrelated landing page.")
            site.set(path, status=301, location=site.url(f"/elsewhere/{n}"))
    review_and_run(check_all(), queued)

    copies = {c.citation.url: c for c in ArchivedCopy.objects.select_related("citation")}
    wrong = []
    for n, link in enumerate(links):
        later, capture = fate(n)
        copy = copies.get(link)
        snapshot = ArchiveCapture.objects.filter(source__url=link).latest("created_at")
        if later == "stays":
            ok = copy is None
        elif capture == "ok":
            ok = copy is not None and copy.shown and copy.verified
            ok = ok and copy.url == snapshot.snapshot_url
        else:
            ok = copy is None or (not copy.shown and copy.url == "")
        if not ok:
            wrong.append((n, later, capture, copy and copy.url))
    assert not wrong, wrong[:10]
    verdicts = set(
        Citation.objects.filter(url__in=[links[n] for n in range(1, PAGES, 4)]).values_list(
            "verdict", flat=True
        )
    )
    assert verdicts == {"not_found"}  # drifted pages lost their claim
    assert stub.most_in_window(1.0) <= RATE
    assert len(stub.save_times()) == PAGES
