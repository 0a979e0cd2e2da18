"""The evidence vault through a real broker and Celery worker: 300 cited pages on six sites.

Six loopback sites (127.0.0.2 and 127.0.0.3, three ports each) serve 300 cited pages:
unique pages holding the claim, one page syndicated everywhere (the same bytes), PDFs,
permanent redirects to the claim, and pages that never held it. The worker checks them all
and keeps evidence; then some pages die and some drift, and they are checked again.
"""

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from summaries import checking
from summaries.checking import evidence
from summaries.editing import derived
from summaries.models import Citation, CitationEvidence, EvidenceRecord, Source
from tests.factories import ChapterFactory
from tests.integration.conftest import Worker
from tests.pdf_files import make_pdf
from tests.test_linkcheck_fetch import Server, page, redirect, title_page

pytestmark = pytest.mark.integration

# Read by the worker processes, which copy this process's environment when they start (see
# test_source_checks.py): the session worker keeps evidence in a folder of this run's own.
VAULT = Path(tempfile.gettempdir()) / f"curation-evidence-{os.getpid()}"
os.environ["EVIDENCE_ENABLED"] = "true"
os.environ["EVIDENCE_STORAGE_OPTIONS"] = f'{{"location": "{VAULT}"}}'
os.environ["FETCH_ALLOWED_NETWORKS"] = "127.0.0.2/31"
os.environ.setdefault("FETCH_DEADLINE", "5")
TIMEOUT = 120
BATCH_FINISHED = "0 left (attempt 1)"  # the line a batch logs as it ends (checking/tasks.py)
PAGES_PER_SITE = 50
PHRASE = "2.5x faster"
SYNDICATED = title_page("Wire story", f"The agency says the model is {PHRASE} than before.")


def start_server(host: str) -> Server:
    server = Server(host, host)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


@pytest.fixture
def sites():
    started = [start_server(host) for host in ("127.0.0.2", "127.0.0.3") for _ in range(3)]
    yield started
    for server in started:
        server.stopping.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def vault(settings):
    shutil.rmtree(VAULT, ignore_errors=True)
    settings.EVIDENCE_ENABLED = True
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(VAULT)},
        },
    }
    yield VAULT
    shutil.rmtree(VAULT, ignore_errors=True)


def url(server: Server, path: str) -> str:
    return f"http://{server.server_address[0]}:{server.port}{path}"


def serve_pages(sites: list[Server]) -> dict[str, str]:
    """Route every cited page; url -> what it is (unique, syndicated, pdf, moved, absent)."""
    kinds = {}
    for number, site in enumerate(sites):
        for index in range(PAGES_PER_SITE):
            path = f"/p{index}"
            kind = ("unique",) * 6 + ("syndicated", "pdf", "absent", "moved")
            kinds[url(site, path)] = kind[index % 10]
            if kind[index % 10] == "unique":
                text = f"Site {number}, page {index}: the model is {PHRASE} than before."
                site.routes[path] = page(body=title_page(f"Page {index}", text))
            elif kind[index % 10] == "syndicated":
                site.routes[path] = page(body=SYNDICATED)
            elif kind[index % 10] == "pdf":
                pdf = make_pdf([[f"Report {number}-{index}: it is 2.5\u00d7 faster."]])
                site.routes[path] = page(body=pdf, content_type="application/pdf")
            elif kind[index % 10] == "absent":
                site.routes[path] = page(body=title_page("Other", "Nothing about speed."))
            else:
                site.routes[path] = redirect(301, f"/moved{index}")
                text = f"Moved page {number}-{index}: it is {PHRASE}."
                site.routes[f"/moved{index}"] = page(body=title_page("Moved", text))
    return kinds


def cite_all(urls: list[str], per_summary: int = 30) -> None:
    for start in range(0, len(urls), per_summary):
        links = urls[start : start + per_summary]
        body = " ".join(f"It is {PHRASE} [source]({link})." for link in links)
        chapter = ChapterFactory(body=body)
        derived.refresh_derived_data(summary=chapter.summary)
    Citation.objects.update(key_phrase=PHRASE, key_phrase_edited=True)


def check_all_and_wait(worker: Worker) -> None:
    """Check every source now and wait until the worker's batch has ended (its evidence is
    kept after its results are recorded)."""
    finished = worker.log_text().count(BATCH_FINISHED)
    checking.request_checks(sources=Source.objects.all())  # sent to the worker at once
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if worker.log_text().count(BATCH_FINISHED) > finished:
            assert not Source.objects.exclude(check_token="").exists()
            return
        time.sleep(0.2)
    pytest.fail(f"the worker did not check every source:\n{worker.log_tail()}")


def site_of(sites: list[Server], link: str) -> tuple[Server, str]:
    """The site serving a cited URL, and the URL's path."""
    for site in sites:
        origin = url(site, "")
        if link.startswith(origin + "/"):
            return site, link.removeprefix(origin)
    raise LookupError(link)


def evidence_rows(kind: str) -> dict[int, CitationEvidence]:
    rows = CitationEvidence.objects.filter(kind=kind).select_related("record")
    return {row.citation_id: row for row in rows}


def test_every_found_claim_keeps_a_record_that_verifies_through_deaths_and_drift(
    transactional_db, celery_worker, sites, vault, capsys
):
    kinds = serve_pages(sites)
    cite_all(list(kinds))
    assert Citation.objects.count() == 300

    check_all_and_wait(celery_worker)

    verdicts = dict(Citation.objects.values_list("url", "verdict"))
    found = {link for link, kind in kinds.items() if kind != "absent"}
    assert {link for link, v in verdicts.items() if v == "supported"} == found
    cited = evidence_rows("cited")
    by_url = {c.url: c.pk for c in Citation.objects.all()}
    assert {by_url[link] for link in found} == set(cited)
    for row in cited.values():
        assert row.state == "stored" and PHRASE.split()[1] in row.passage
        response = evidence.stored_response(row.record)  # read back, digest verified
        assert response.status == 200
    # One record per distinct payload: the syndicated page is stored once for all six sites.
    syndicated = {cited[by_url[link]].record_id for link in found if kinds[link] == "syndicated"}
    assert len(syndicated) == 1
    assert (
        EvidenceRecord.objects.count()
        == len(found) - len([link for link in found if kinds[link] == "syndicated"]) + 1
    )
    assert len(list(vault.rglob("*.warc.gz"))) == EvidenceRecord.objects.count()
    # A moved page's evidence is the page it moved to.
    moved = next(link for link in found if kinds[link] == "moved")
    assert "/moved" in cited[by_url[moved]].url

    # Later, pages die and others drift; what was cited stays, verified.
    unique = [link for link in found if kinds[link] == "unique"]
    dead, drifted = unique[:20], unique[20:40]
    for link in dead:
        site, path = site_of(sites, link)
        site.routes[path] = page(404, "<title>Gone</title>")
    for link in drifted:
        site, path = site_of(sites, link)
        site.routes[path] = page(body=title_page("Rewritten", "It is about as fast as before."))
    before = {pk: row.record_id for pk, row in cited.items()}

    check_all_and_wait(celery_worker)

    verdicts = dict(Citation.objects.values_list("url", "verdict"))
    assert all(verdicts[link] == "unavailable" for link in dead)
    assert all(verdicts[link] == "not_found" for link in drifted)
    assert {pk: row.record_id for pk, row in evidence_rows("cited").items()} == before
    latest = evidence_rows("latest")
    for link in drifted:
        now = latest[by_url[link]]
        assert (
            now.passage == "" and b"as fast as before" in evidence.stored_response(now.record).body
        )
    call_command("verify_evidence")
    assert (
        f"Verified {EvidenceRecord.objects.count()} records: 0 failed." in capsys.readouterr().out
    )

    # A record altered on disk is found by the verifying command.
    victim = cited[by_url[unique[-1]]].record
    (vault / victim.name).write_bytes(b"not a warc file")
    with pytest.raises(CommandError):
        call_command("verify_evidence")
    assert f"FAILED {victim.name}" in capsys.readouterr().err
