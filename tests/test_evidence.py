"""The evidence vault (summaries/checking/evidence.py) against a real loopback server.

Checks run as the worker runs them (request_checks, then the batch task); the vault writes
to a folder of the test's own. The server listens on 127.0.0.2, allowed through
FETCH_ALLOWED_NETWORKS.
"""

import gzip
import io
from datetime import timedelta

import pytest
from django.core.files.storage import FileSystemStorage, storages
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from summaries import checking, tasks
from summaries.checking import evidence
from summaries.linkcheck import CheckResult, State, warc
from summaries.models import Citation, CitationEvidence, EvidenceRecord, Source, SourceCheck
from tests.pdf_files import make_pdf
from tests.test_checking import cite, run_batches, start_server, url
from tests.test_linkcheck_fetch import page, title_page

pytestmark = pytest.mark.django_db

CLAIM_PAGE = title_page("Speed", "Our tests show Opus is 2.5x faster than before.")


@pytest.fixture(autouse=True)
def vault(settings, tmp_path):
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    settings.FETCH_DEADLINE = 3.0
    settings.EVIDENCE_ENABLED = True
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "evidence")},
        },
    }
    return tmp_path / "evidence"


@pytest.fixture
def site():
    server = start_server("127.0.0.2")
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


def check(sources, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        checking.request_checks(sources=sources)
    run_batches(callbacks)


def cited_page(site, path, body=CLAIM_PAGE, phrase="2.5x faster", **route):
    """A summary citing `path` on the site for the key phrase; its citation."""
    site.routes[path] = page(body=body, **route)
    link = url(site, path)
    _, [citation] = cite((f"It is {phrase}", link), phrases={link: phrase})
    return citation


def evidence_of(citation, kind="cited"):
    return CitationEvidence.objects.filter(citation=citation, kind=kind).first()


# --- Capture --------------------------------------------------------------------------------


def test_a_found_claim_keeps_the_exact_response_as_a_verified_warc_record(
    site, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a", X_Served_By="loopback")
    check([citation.source], django_capture_on_commit_callbacks)

    cited = evidence_of(citation)
    assert cited.state == "stored"
    assert "2.5x faster" in cited.passage
    assert cited.passage == Citation.objects.get(pk=citation.pk).verdict_excerpt
    record = cited.record
    response = evidence.stored_response(record)  # verified against its digest
    assert response.status == 200
    assert response.body == CLAIM_PAGE.encode()
    assert ("X-Served-By", "loopback") in response.headers
    assert response.url == citation.source.url
    assert record.digest == cited.digest == warc.payload_digest(CLAIM_PAGE.encode())
    assert evidence_of(citation, "latest").record == record
    # The check itself was recorded as always.
    assert Source.objects.get(pk=citation.source_id).state == "ok"


def test_a_pdf_source_is_kept_too(site, django_capture_on_commit_callbacks):
    paper = make_pdf([["Opus is 2.5\u00d7 faster."]], title="A study")
    citation = cited_page(site, "/paper.pdf", body=paper, content_type="application/pdf")
    check([citation.source], django_capture_on_commit_callbacks)

    cited = evidence_of(citation)
    assert cited.state == "stored"
    assert evidence.stored_response(cited.record).body == paper
    assert "faster" in evidence.page_text(cited.record)


def test_nothing_is_kept_when_the_claim_is_not_found(site, django_capture_on_commit_callbacks):
    citation = cited_page(site, "/a", body=title_page("Speed", "Nothing to see."))
    check([citation.source], django_capture_on_commit_callbacks)

    assert Citation.objects.get(pk=citation.pk).verdict == "not_found"
    assert not CitationEvidence.objects.exists()
    assert not EvidenceRecord.objects.exists()


def test_the_same_payload_is_stored_once(site, vault, django_capture_on_commit_callbacks):
    first = cited_page(site, "/a")
    second = cited_page(site, "/b")  # another URL with the very same body
    check([first.source, second.source], django_capture_on_commit_callbacks)
    check([first.source, second.source], django_capture_on_commit_callbacks)  # again

    assert EvidenceRecord.objects.count() == 1
    assert len([p for p in vault.rglob("*.warc.gz")]) == 1
    assert evidence_of(first).record == evidence_of(second).record


def test_cited_evidence_stays_while_latest_follows_the_page(
    site, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    site.routes["/a"] = page(body=title_page("Speed", "Opus is 2.5x faster, they said."))
    check([citation.source], django_capture_on_commit_callbacks)

    cited, latest = evidence_of(citation), evidence_of(citation, "latest")
    assert "Our tests show" in cited.passage
    assert "they said" in latest.passage
    assert cited.record != latest.record
    assert EvidenceRecord.objects.count() == 2


def test_a_page_that_lost_the_phrase_is_kept_as_now_beside_then(
    site, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    site.routes["/a"] = page(body=title_page("Speed", "Opus is slower now."))
    check([citation.source], django_capture_on_commit_callbacks)

    latest = evidence_of(citation, "latest")
    assert latest.passage == "" and latest.state == "stored"
    assert b"slower" in evidence.stored_response(latest.record).body
    assert "2.5x faster" in evidence_of(citation).passage


def test_a_recheck_of_an_unchanged_page_writes_nothing_new_in_four_queries(
    site, vault, django_capture_on_commit_callbacks, django_assert_num_queries
):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    checked = Citation.objects.get(pk=citation.pk)
    again = CheckResult(
        url=citation.source.url,
        state=State.OK,
        status=200,
        final_url=citation.source.url,
        body=CLAIM_PAGE.encode(),
        headers=[("Content-Type", "text/html")],
        checked_at=checked.verdict_checked_at,
    )
    files = sorted(vault.rglob("*.warc.gz"))
    # The citation's rows, the record by digest, its last use, the "latest" row: no sum of
    # the vault's sizes, no file.
    with django_assert_num_queries(4):
        assert evidence.keep_evidence(results={citation.source_id: again}) == 1
    assert sorted(vault.rglob("*.warc.gz")) == files


# --- Caps and failures ----------------------------------------------------------------------


def test_a_record_over_its_cap_is_not_stored_and_says_so(
    site, settings, django_capture_on_commit_callbacks
):
    settings.EVIDENCE_MAX_RECORD_BYTES = 100
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)

    cited = evidence_of(citation)
    assert cited.state == "over_record_cap" and cited.record is None
    assert "2.5x faster" in cited.passage and cited.digest  # the passage is kept
    assert not EvidenceRecord.objects.exists()
    assert Citation.objects.get(pk=citation.pk).verdict == "supported"


def test_a_source_over_its_allowance_keeps_its_first_records_only(
    site, settings, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    settings.EVIDENCE_MAX_SOURCE_BYTES = EvidenceRecord.objects.get().size + 10
    site.routes["/a"] = page(body=title_page("Speed", "Opus is 2.5x faster, still."))
    check([citation.source], django_capture_on_commit_callbacks)

    assert evidence_of(citation).state == "stored"
    latest = evidence_of(citation, "latest")
    assert latest.state == "over_source_cap" and latest.record is None
    assert "still" in latest.passage
    assert EvidenceRecord.objects.count() == 1


def test_a_full_vault_stores_nothing_more(site, settings, django_capture_on_commit_callbacks):
    first = cited_page(site, "/a")
    check([first.source], django_capture_on_commit_callbacks)
    settings.EVIDENCE_MAX_TOTAL_BYTES = EvidenceRecord.objects.get().size + 10
    second = cited_page(site, "/b", body=title_page("Other", "It is 2.5x faster here."))
    check([second.source], django_capture_on_commit_callbacks)

    assert evidence_of(second).state == "over_total_cap"
    assert EvidenceRecord.objects.count() == 1


class BrokenStorage(FileSystemStorage):
    def _save(self, name, content):
        raise OSError("disk full")


def test_a_storage_that_fails_never_fails_the_check(
    site, settings, django_capture_on_commit_callbacks
):
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {"BACKEND": "tests.test_evidence.BrokenStorage"},
    }
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)

    source = Source.objects.get(pk=citation.source_id)
    assert source.state == "ok" and source.check_token == ""
    assert SourceCheck.objects.filter(source=source).count() == 1
    assert Citation.objects.get(pk=citation.pk).verdict == "supported"
    cited = evidence_of(citation)
    assert cited.state == "write_failed" and cited.record is None
    assert "2.5x faster" in cited.passage


def test_an_error_in_the_vault_itself_never_fails_the_check(
    site, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(evidence, "_store", broken)
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)

    assert Source.objects.get(pk=citation.source_id).state == "ok"
    assert Citation.objects.get(pk=citation.pk).verdict == "supported"


# --- Verifying and retention ----------------------------------------------------------------


def test_verify_evidence_reports_a_corrupted_record(
    site, vault, capsys, django_capture_on_commit_callbacks
):
    first = cited_page(site, "/a")
    second = cited_page(site, "/b", body=title_page("Other", "It is 2.5x faster here."))
    check([first.source, second.source], django_capture_on_commit_callbacks)
    call_command("verify_evidence")
    assert "Verified 2 records: 0 failed." in capsys.readouterr().out

    record = evidence_of(second).record
    path = vault / record.name
    altered = gzip.decompress(path.read_bytes()).replace(b"2.5x", b"9.9x")
    path.write_bytes(gzip.compress(altered))
    with pytest.raises(CommandError):
        call_command("verify_evidence")
    output = capsys.readouterr()
    assert f"FAILED {record.name}" in output.err
    assert evidence_of(first).record.name not in output.err


def test_verify_evidence_reports_a_missing_file(
    site, vault, capsys, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    (vault / evidence_of(citation).record.name).unlink()
    with pytest.raises(CommandError):
        call_command("verify_evidence")
    assert "FAILED" in capsys.readouterr().err


def test_a_payload_that_does_not_match_its_digest_fails_even_when_the_warc_is_consistent():
    body = b"<p>It is 2.5x faster.</p>"
    data = warc.build_record(
        url="http://a.test/",
        status=200,
        headers=[],
        body=body,
        captured_at=timezone.now(),
    )
    assert warc.verify_record(data, warc.payload_digest(body)).body == body
    with pytest.raises(warc.UnreadableRecord):
        warc.verify_record(data, warc.payload_digest(b"something else"))
    with pytest.raises(warc.UnreadableRecord):
        warc.verify_record(b"not a warc file", warc.payload_digest(body))


def test_retention_keeps_what_citations_rely_on_and_deletes_the_rest(
    site, settings, vault, django_capture_on_commit_callbacks
):
    settings.EVIDENCE_RETENTION_DAYS = 30
    kept = cited_page(site, "/a")
    dropped = cited_page(site, "/b", body=title_page("Other", "It is 2.5x faster here."))
    check([kept.source, dropped.source], django_capture_on_commit_callbacks)
    dropped_record = evidence_of(dropped).record
    Citation.objects.filter(pk=dropped.pk).delete()  # its summary no longer cites it

    later = timezone.now() + timedelta(days=10)
    assert evidence.sweep_evidence(now=later) == (2, 0)  # rows gone, record in its grace
    assert (vault / dropped_record.name).exists()

    much_later = timezone.now() + timedelta(days=31)
    assert evidence.sweep_evidence(now=much_later) == (0, 1)
    assert not (vault / dropped_record.name).exists()
    assert list(EvidenceRecord.objects.all()) == [evidence_of(kept).record]
    assert (vault / evidence_of(kept).record.name).exists()


def test_the_sweep_task_is_scheduled_daily(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-evidence"]
    assert entry["task"] == tasks.sweep_evidence.name
    assert entry["schedule"] == 24 * 3600


# --- Editors confirm ------------------------------------------------------------------------


def test_confirming_pins_the_latest_capture_as_what_was_cited(
    site, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    site.routes["/a"] = page(body=title_page("Speed", "Opus is 2.5x faster, they said."))
    check([citation.source], django_capture_on_commit_callbacks)
    citation = Citation.objects.select_related("source").get(pk=citation.pk)
    assert citation.verdict == "supported"  # never confirmed: no "changed" yet

    with django_capture_on_commit_callbacks() as callbacks:
        checking.confirm_citation(citation=citation, user=None)
    # Nothing to fetch: the latest capture is of the page as confirmed.
    assert not [c for c in callbacks if getattr(c, "task", None) is not None]
    assert "they said" in evidence_of(citation).passage
    assert evidence_of(citation).record == evidence_of(citation, "latest").record


def test_confirming_without_a_capture_fetches_the_page_after_commit(
    site, settings, django_capture_on_commit_callbacks
):
    settings.EVIDENCE_ENABLED = False
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    settings.EVIDENCE_ENABLED = True
    citation = Citation.objects.select_related("source").get(pk=citation.pk)

    with django_capture_on_commit_callbacks() as callbacks:
        checking.confirm_citation(citation=citation, user=None)
    [callback] = [c for c in callbacks if getattr(c, "task", None) is not None]
    assert callback.task.name == tasks.capture_cited_evidence.name
    assert not CitationEvidence.objects.exists()
    tasks.capture_cited_evidence(*callback.args)
    tasks.capture_cited_evidence(*callback.args)  # idempotent

    cited = evidence_of(citation)
    assert cited.state == "stored" and "2.5x faster" in cited.passage
    assert EvidenceRecord.objects.count() == 1


# --- The admin: then and now ----------------------------------------------------------------


HOSTILE_PAGE = (
    "<title>Speed</title><script>alert('then')</script>"
    "<p>Our tests show Opus is 2.5x faster than before.</p>"
    "<p>Written by &lt;script&gt;alert(1)&lt;/script&gt; the team.</p>"
    "<img src=x onerror=alert(2)>"
)


def test_the_admin_shows_then_and_now_as_sanitised_text_with_differences_marked(
    site, editor_client, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a", body=HOSTILE_PAGE)
    check([citation.source], django_capture_on_commit_callbacks)
    site.routes["/a"] = page(body=title_page("Speed", "Opus is slower than before."))
    check([citation.source], django_capture_on_commit_callbacks)

    source_page = editor_client.get(
        reverse("admin:summaries_source_change", args=[citation.source_id])
    )
    link = reverse("admin:summaries_source_evidence", args=[citation.source_id, citation.pk])
    assert link in source_page.content.decode()
    answer = editor_client.get(link)
    assert answer.status_code == 200
    html = answer.content.decode()
    assert "What the page said when you cited it" in html
    assert "Our tests show Opus is 2.5x faster than before." in html  # the passage
    assert "The key phrase is no longer on the page." in html
    assert "<del>" in html and "<ins>slower</ins>" in html
    # The stored page's markup is never rendered: its scripts and handlers are not in the
    # answer, and text that looks like markup is escaped.
    assert "<script>alert" not in html and "onerror" not in html
    assert "alert('then')" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_admin_says_when_the_page_died(site, editor_client, django_capture_on_commit_callbacks):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    site.routes["/a"] = page(status=404, body="<title>Gone</title>")
    check([citation.source], django_capture_on_commit_callbacks)

    link = reverse("admin:summaries_source_evidence", args=[citation.source_id, citation.pk])
    html = editor_client.get(link).content.decode()
    assert "Our tests show Opus is 2.5x faster than before." in html
    assert "could not be read at the latest check: Broken (HTTP 404)" in html


def test_the_evidence_page_needs_a_staff_user(client, site, django_capture_on_commit_callbacks):
    citation = cited_page(site, "/a")
    link = reverse("admin:summaries_source_evidence", args=[citation.source_id, citation.pk])
    assert client.get(link).status_code == 302  # to the login page
    assert storages["evidence"]  # configured


def test_an_unknown_citation_answers_404(editor_client, site):
    citation = cited_page(site, "/a")
    link = reverse("admin:summaries_source_evidence", args=[citation.source_id, 999999])
    assert editor_client.get(link).status_code == 404


# --- The API --------------------------------------------------------------------------------


def test_the_api_shows_a_citations_evidence(
    site, editor_client, django_capture_on_commit_callbacks
):
    citation = cited_page(site, "/a")
    check([citation.source], django_capture_on_commit_callbacks)
    answer = editor_client.get(f"/api/v1/summaries/{citation.summary.video.slug}/")
    assert answer.status_code == 200, answer.content
    [shown] = answer.json()["citations"]
    cited = evidence_of(citation)
    assert shown["evidence"] == {
        "passage": cited.passage,
        "captured_at": cited.captured_at.isoformat().replace("+00:00", "Z"),
        "digest": cited.digest,
        "stored": True,
    }


def test_the_api_shows_null_evidence_before_any_capture(site, editor_client):
    citation = cited_page(site, "/a")
    answer = editor_client.get(f"/api/v1/summaries/{citation.summary.video.slug}/")
    assert answer.json()["citations"][0]["evidence"] is None


def test_the_schema_documents_the_evidence(client):
    schema = client.get("/api/schema/?format=json").json()
    evidence_schema = schema["components"]["schemas"]["CitationEvidence"]
    assert set(evidence_schema["properties"]) == {"passage", "captured_at", "digest", "stored"}
    citation_schema = schema["components"]["schemas"]["Citation"]["properties"]["evidence"]
    assert citation_schema.get("nullable") or "oneOf" in citation_schema


def test_a_warc_record_reads_back_with_warcio_as_a_plain_response():
    from warcio.archiveiterator import ArchiveIterator

    data = warc.build_record(
        url="http://a.test/",
        status=200,
        headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
        body=b"<p>x</p>",
        captured_at=timezone.now(),
        address="127.0.0.2",
    )
    records = []
    for record in ArchiveIterator(io.BytesIO(data)):  # each record is read as it is reached
        records.append(record.rec_type)
        assert record.http_headers.get_header("Content-Encoding") is None
        assert record.http_headers.get_header("X-Archive-Orig-Content-Encoding") == "gzip"
        assert record.content_stream().read() == b"<p>x</p>"
        assert record.rec_headers.get_header("WARC-IP-Address") == "127.0.0.2"
    assert records == ["response"]
