"""Archived copies: captures asked of a web archive, copies checked before readers see them.

Against `tests/archive_stub.py`, a loopback archive (127.0.0.2) and cited site (127.0.0.3),
both allowed through FETCH_ALLOWED_NETWORKS; 10.0.0.0/8 and 127.0.0.1 stand for internal
addresses that are never sent to the archive. Services are called as the tasks call them;
what they queue after commit is collected and run by the test.
"""

import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from summaries import checking
from summaries.archive import captures, copies, pace
from summaries.linkcheck import archive as wayback
from summaries.models import (
    ArchiveCapture,
    ArchivedCopy,
    Citation,
    Source,
    WebhookEndpoint,
    WebhookEvent,
)
from summaries.reader import presentation
from tests.archive_stub import ArchiveStub, SiteServer, soft_404
from tests.conftest import NO_ARCHIVE
from tests.factories import ChapterFactory

pytestmark = pytest.mark.django_db

PHRASE = "2.5 times faster"
CLAIM = "It is 2.5 times faster than before"


# --- Fixtures and helpers (the loopback scenario uses them too) ----------------------------


@pytest.fixture
def archive_settings(settings):
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    settings.FETCH_DEADLINE = 3.0
    settings.ARCHIVE_DEADLINE = 3.0
    settings.ARCHIVE_POLL_SECONDS = 0.01
    settings.ARCHIVE_MAX_POLLS = 4
    settings.ARCHIVE_MAX_ATTEMPTS = 3
    settings.ARCHIVE_CAPTURE_RATE = "100/s"
    settings.ARCHIVE_ACCESS_KEY = "key"
    settings.ARCHIVE_SECRET_KEY = "secret"
    settings.ARCHIVE_OPT_OUT_HOSTS = []
    return settings


@pytest.fixture
def site():
    server = SiteServer("127.0.0.3").start()
    yield server
    server.stop()


@pytest.fixture
def stub(site, archive_settings):
    server = ArchiveStub("127.0.0.2", sites=[site]).start()
    archive_settings.ARCHIVE_ENDPOINT = server.base
    yield server
    server.stop()


@pytest.fixture
def queued(monkeypatch):
    """Tasks the archive services queue after commit, as (task name, argument)."""
    found: list[tuple[str, int | list]] = []
    record = lambda name, arg: found.append((name, arg))  # noqa: E731
    monkeypatch.setattr(copies, "queue_after_commit", record)
    monkeypatch.setattr(captures, "queue_after_commit", record)
    return found


def cite(*links: str, phrase: str = PHRASE):
    """A summary citing each link for CLAIM, with the key phrase; its citations."""
    body = " ".join(f"{CLAIM} [source]({link})." for link in links)
    chapter = ChapterFactory(body=body)
    from summaries.editing import derived

    derived.refresh_derived_data(summary=chapter.summary)
    cited = Citation.objects.filter(summary=chapter.summary)
    cited.update(key_phrase=phrase, key_phrase_edited=True)
    return chapter.summary, list(cited.order_by("position"))


def check_all() -> list[int]:
    """Check every source now, as a worker batch does (evidence kept when the vault is
    on); the ids recorded."""
    Source.objects.update(next_check_at=None)
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=100_000)
    return checking.check_source_batch(source_ids=ids, token=token).recorded


def drive_captures(ids, *, within: float = 30.0) -> None:
    """Advance captures as their tasks would, each when its delay has passed."""
    due = {capture_id: 0.0 for capture_id in ids}
    give_up = time.monotonic() + within
    while due and time.monotonic() < give_up:
        now = time.monotonic()
        for capture_id, at in sorted(due.items(), key=lambda item: item[1]):
            if at > now:
                continue
            delay = captures.advance_capture(capture_id=capture_id)
            if delay is None:
                del due[capture_id]
            else:
                due[capture_id] = time.monotonic() + delay
        if due:
            time.sleep(max(0.0, min(min(due.values()) - time.monotonic(), 0.05)))
    assert not due, f"captures not finished: {due}"


def review_and_run(ids, queued) -> None:
    """The review after a recorded batch, then the look-ups and captures it queued."""
    queued.clear()
    copies.review_sources(source_ids=ids)
    for name, arg in list(queued):
        if name == copies.FIND_TASK:
            copies.find_copy(citation_id=arg)
    drive_captures([arg for name, arg in queued if name == captures.ADVANCE_TASK])


def capture_of(source: Source) -> ArchiveCapture:
    return ArchiveCapture.objects.filter(source=source).latest("created_at")


# --- Tests never reach the internet ------------------------------------------------------


def test_the_archive_endpoint_is_never_the_internet_in_tests():
    assert settings.ARCHIVE_ENDPOINT == NO_ARCHIVE
    assert NO_ARCHIVE.startswith("http://127.0.0.1:")


# --- Captures ---------------------------------------------------------------------------


def test_a_found_claim_is_captured_and_the_archives_snapshot_recorded(site, stub, queued):
    link = site.set("/a", "It is 2.5 times faster.")
    cite(link)
    ids = check_all()
    review_and_run(ids, queued)

    capture = capture_of(Source.objects.get(url=link))
    assert capture.state == "success"
    assert capture.snapshot_url.startswith(f"{stub.base}/web/") and capture.snapshot_url.endswith(
        "/" + link
    )
    assert capture.captured_at is not None
    post = next(seen for seen in stub.requests if seen.method == "POST")
    assert post.headers["Authorization"] == "LOW key:secret"
    assert parse_qs(post.body) == {"url": [link]}
    # A second check within ARCHIVE_RECAPTURE_DAYS asks nothing again.
    review_and_run(check_all(), queued)
    assert len(stub.save_times()) == 1


def test_a_failed_capture_records_no_snapshot(site, stub, queued):
    link = site.set("/a", "It is 2.5 times faster.")
    stub.behaviour[link] = "fail"
    cite(link)
    review_and_run(check_all(), queued)

    capture = capture_of(Source.objects.get(url=link))
    assert capture.state == "failed" and capture.snapshot_url == ""
    assert "service-unavailable" in capture.error


def test_a_capture_that_never_finishes_times_out_without_a_snapshot(site, stub, queued):
    link = site.set("/a", "It is 2.5 times faster.")
    stub.behaviour[link] = "pending_forever"
    cite(link)
    review_and_run(check_all(), queued)

    capture = capture_of(Source.objects.get(url=link))
    assert capture.state == "timed_out" and capture.snapshot_url == ""
    assert capture.polls == settings.ARCHIVE_MAX_POLLS


def test_a_rate_limited_archive_is_left_alone_for_its_retry_after(site, stub, queued):
    link = site.set("/a", "It is 2.5 times faster.")
    other = site.set("/b", "It is 2.5 times faster.")
    stub.behaviour[link] = "rate_limited"
    stub.retry_after = "1"
    cite(link, other)
    review_and_run(check_all(), queued)

    limited = capture_of(Source.objects.get(url=link))
    assert limited.state == "failed" and limited.attempts == settings.ARCHIVE_MAX_ATTEMPTS
    assert limited.snapshot_url == ""
    posts = [(seen.at, parse_qs(seen.body)["url"][0]) for seen in stub.requests if seen.body]
    # After each 429 nothing at all was sent for the second the archive asked for.
    gaps = [
        later - at for (at, url), (later, _) in zip(posts, posts[1:], strict=False) if url == link
    ]
    assert len(gaps) == settings.ARCHIVE_MAX_ATTEMPTS - 1
    assert min(gaps) >= 0.95, gaps
    assert capture_of(Source.objects.get(url=other)).state == "success"


def test_server_errors_are_retried_then_the_capture_fails(site, stub, queued):
    link = site.set("/a", "It is 2.5 times faster.")
    stub.behaviour[link] = "server_error"
    cite(link)
    review_and_run(check_all(), queued)
    capture = capture_of(Source.objects.get(url=link))
    assert capture.state == "failed" and capture.attempts == settings.ARCHIVE_MAX_ATTEMPTS


def test_opted_out_hosts_and_internal_addresses_are_never_sent(site, stub, queued, settings):
    settings.ARCHIVE_OPT_OUT_HOSTS = ["127.0.0.3"]
    link = site.set("/a", "It is 2.5 times faster.")
    internal = Source.objects.create(url="http://10.1.2.3/private", host="10.1.2.3")
    loopback = Source.objects.create(url="http://127.0.0.1/admin", host="127.0.0.1")
    cite(link)
    review_and_run(check_all(), queued)
    skipped = [
        ArchiveCapture.objects.create(source=source, created_at=timezone.now())
        for source in (internal, loopback)
    ]
    drive_captures([capture.pk for capture in skipped])

    assert capture_of(Source.objects.get(url=link)).state == "skipped"
    for capture in skipped:
        capture.refresh_from_db()
        assert capture.state == "skipped" and capture.attempts == 0
    assert stub.save_times() == []


def test_the_archive_never_sees_more_captures_than_the_pace(site, stub, queued, settings):
    settings.ARCHIVE_CAPTURE_RATE = "5/s"
    links = [site.set(f"/p{n}", "It is 2.5 times faster.") for n in range(14)]
    cite(*links)
    review_and_run(check_all(), queued)

    assert ArchiveCapture.objects.filter(state="success").count() == 14
    assert len(stub.save_times()) == 14
    assert stub.most_in_window(1.0) <= 5


def test_the_pace_is_shared_and_never_exceeded(settings):
    settings.ARCHIVE_CAPTURE_RATE = "3/m"
    assert [pace.take_turn(now=1000.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert pace.take_turn(now=1000.5) > 50  # the next turn once a slot lapses
    pace.pause(30, now=1000.0)
    assert pace.take_turn(now=1010.0) == pytest.approx(20.0)


# --- Archived copies --------------------------------------------------------------------


def confirm_all(summary, at: datetime, excerpt: str = "It is 2.5 times faster") -> None:
    """Record the summary's citations as confirmed at `at`, their phrase found in `excerpt`
    (what a copy must hold: summaries/archive/matching.py)."""
    Citation.objects.filter(summary=summary).update(confirmed_at=at, confirmed_excerpt=excerpt)


def test_a_dead_source_gets_the_closest_good_copy_before_confirmation(site, stub, queued):
    link = site.set("/a", "It is 2.5 times faster.")
    summary, _ = cite(link)
    confirmed = timezone.now() - timedelta(days=10)
    confirm_all(summary, confirmed)
    good = stub.add_capture(link, confirmed - timedelta(days=3), body=page("It is 2.5x faster"))
    stub.add_capture(link, confirmed - timedelta(days=1), body=soft_404("2.5x faster"))
    stub.add_capture(link, confirmed - timedelta(hours=1), status=302, location=link + "x")
    stub.add_capture(link, confirmed + timedelta(days=1), body=page("It is 2.5x faster."))
    site.set("/a", status=404)

    review_and_run(check_all(), queued)

    copy = ArchivedCopy.objects.get(citation__url=link)
    assert copy.shown and copy.verified
    assert copy.url == f"{stub.base}/web/{good}/{link}"
    assert copy.captured_at == datetime.strptime(good, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    assert "2.5x faster" in copy.excerpt
    # Each copy tried was fetched raw, through the fetcher.
    fetched = [s.path for s in stub.requests if s.path.startswith("/web/")]
    assert fetched and all("id_/" in path for path in fetched)


def test_error_and_redirect_captures_are_never_accepted(site, stub, queued):
    link = site.set("/a", "It is 2.5 times faster.")
    summary, _ = cite(link)
    days = [timezone.now() - timedelta(days=n) for n in range(7)]
    stub.add_capture(link, days[6], body=soft_404("It is 2.5x faster"))
    # Listed as 200 by the index, answered otherwise with the words: the archive's trouble.
    stub.add_capture(link, days[5], status=503, listed=200, body=page("2.5x faster"))
    stub.add_capture(link, days[4], status=203, listed=200, body=page("2.5x faster"))
    stub.add_capture(link, days[3], body=page("Nothing said here"))
    # Our own capture of the page was a redirect, to a copy elsewhere that holds the words.
    stub.behaviour[link] = "redirect"
    review_and_run(check_all(), queued)
    assert capture_of(Source.objects.get(url=link)).state == "success"
    site.set("/a", "The page was rewritten.")

    review_and_run(check_all(), queued)

    copy = ArchivedCopy.objects.get(citation__url=link)
    assert copy.url == "" and not copy.shown and copy.verified_at is None
    # Not looked up again at the next check (ARCHIVE_LOOKUP_AGAIN_DAYS).
    before = len(stub.requests)
    review_and_run(check_all(), queued)
    assert not [s for s in stub.requests[before:] if "/cdx/" in s.path]


def test_a_copy_of_an_error_page_answered_200_with_the_phrase_is_refused():
    from summaries.linkcheck import CheckResult, State

    soft = CheckResult(
        url="u", state=State.OK, status=200, title="Page not found", text="It is 2.5x faster"
    )
    assert wayback.copy_problem(soft, PHRASE)[0].startswith("the copy is an error page")
    good = CheckResult(url="u", state=State.OK, status=200, title="Speed", text="2.5x faster")
    assert wayback.copy_problem(good, PHRASE)[0] == ""


def page(text: str) -> str:
    return f"<html><head><title>Speed</title></head><body><p>{text}</p></body></html>"


def test_readers_see_the_copy_and_robust_links_and_the_label_goes_back(
    site, stub, queued, client, settings
):
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example.org/in",
        events=["citation.archived_copy_changed"],
    )
    link = site.set("/a", "It is 2.5 times faster.")
    summary, _ = cite(link)
    confirmed = timezone.now() - timedelta(days=30)
    confirm_all(summary, confirmed)
    from summaries.editing import workflow

    workflow.publish_summary(summary=summary, user=None)
    taken = stub.add_capture(
        link, timezone.now() - timedelta(days=400), body=page("It is 2.5x faster")
    )
    before = client.get(summary.get_absolute_url()).text  # cached, with no copy to show
    assert "data-versionurl" not in before and 'data-originalurl="' in before
    site.set("/a", "Moved on to other things.")
    review_and_run(check_all(), queued)

    article = client.get(summary.get_absolute_url()).text
    assert "Archived copy, " in article
    version = f"{stub.base}/web/{taken}/{link}"
    # Robust Links on the link in the text and in the list of cited sources: the address,
    # the archived copy, and the date the source was cited (not the copy's).
    robust = (
        f'data-originalurl="{link}" data-versionurl="{version}"'
        f' data-versiondate="{timezone.localdate(confirmed):%Y-%m-%d}"'
    )
    assert article.count(robust) == 2
    text, sources = article.split('<h2 id="sources">')
    assert robust in text and robust in sources
    events = WebhookEvent.objects.filter(type="citation.archived_copy_changed")
    assert events.count() == 1 and '"shown":true' in events.get().body
    api = client.get(reverse("api:summary-detail", args=[summary.video.slug])).json()
    assert api["citations"][0]["archived_copy"]["url"] == version
    assert api["citations"][0]["archived_copy"]["verified"] is True

    site.set("/a", "It is 2.5 times faster, again.")
    review_and_run(check_all(), queued)

    article = client.get(summary.get_absolute_url()).text
    assert "Archived copy, " not in article and "data-versionurl" not in article
    # The live page holds the claim again: both links keep the address and date cited.
    robust = (
        f'data-originalurl="{link}" data-versiondate="{timezone.localdate(confirmed):%Y-%m-%d}"'
    )
    assert article.count(robust) == 2
    assert not ArchivedCopy.objects.get().shown
    assert events.count() == 2 and endpoint.pk


def test_a_shown_copy_is_dropped_as_soon_as_a_check_finds_the_page_again(site, stub):
    # The reader needs no review to have run: the label follows the latest check.
    link = site.set("/a", "It is 2.5 times faster.")
    _, [citation] = cite(link)
    check_all()
    citation.refresh_from_db()
    citation.archived_url = "http://127.0.0.2/web/20261203000000/" + link
    citation.archived_at = datetime(2026, 12, 3, tzinfo=UTC)
    presentation.label_sources([citation])
    assert citation.source_label.modifier == "checked"
    site.set("/a", status=404)
    check_all()
    citation.refresh_from_db()
    citation.archived_url = "http://127.0.0.2/web/20261203000000/" + link
    citation.archived_at = datetime(2026, 12, 3, 12, tzinfo=UTC)
    presentation.label_sources([citation])
    assert citation.source_label.label == "Archived copy, 3 Dec 2026"


# --- Tasks, the admin -------------------------------------------------------------------


def test_recorded_checks_queue_the_review_after_commit(
    site, stub, django_capture_on_commit_callbacks
):
    link = site.set("/a", "It is 2.5 times faster.")
    cite(link)
    with django_capture_on_commit_callbacks() as callbacks:
        ids = check_all()
    reviews = [c.args for c in callbacks if getattr(c, "task", None) is not None]
    names = [c.task.name for c in callbacks if getattr(c, "task", None) is not None]
    assert ("summaries.tasks.review_archived_copies" in names) and ([ids] in map(list, reviews))


def test_the_tasks_take_ids_and_call_their_service(site, stub, django_capture_on_commit_callbacks):
    from summaries import tasks

    link = site.set("/a", "It is 2.5 times faster.")
    _, [citation] = cite(link)
    ids = check_all()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        tasks.review_archived_copies(ids)
    [capture] = ArchiveCapture.objects.all()
    assert [c.args for c in callbacks] == [(capture.pk,)]
    tasks.find_archived_copy(citation.pk)  # its page holds the claim: nothing to do
    tasks.find_archived_copy(10**9)  # gone: nothing to do
    assert not ArchivedCopy.objects.exists()


def test_an_unreadable_index_is_retried_by_the_task(site, stub, settings):
    from summaries import tasks

    link = site.set("/a", "It is 2.5 times faster.")
    summary, [citation] = cite(link)
    confirm_all(summary, timezone.now())
    site.set("/a", status=404)
    check_all()
    settings.ARCHIVE_ENDPOINT = NO_ARCHIVE.replace("127.0.0.1", "127.0.0.2")  # nobody there
    with pytest.raises(copies.ArchiveUnavailable):
        copies.find_copy(citation_id=citation.pk)
    assert copies.ArchiveUnavailable in tasks.find_archived_copy.autoretry_for
    assert not ArchivedCopy.objects.exists()


def test_editors_see_which_citations_rely_on_an_archived_copy(site, stub, queued, admin_client):
    link = site.set("/a", "It is 2.5 times faster.")
    summary, _ = cite(link)
    confirm_all(summary, timezone.now())
    stub.add_capture(link, timezone.now() - timedelta(days=2), body=page("It is 2.5x faster"))
    site.set("/a", status=404)
    review_and_run(check_all(), queued)
    copy = ArchivedCopy.objects.get()
    assert copy.shown

    listing = admin_client.get(reverse("admin:summaries_archivedcopy_changelist") + "?shown=1")
    assert listing.status_code == 200 and copy.url in listing.text
    sources = admin_client.get(reverse("admin:summaries_source_changelist") + "?archived=shown")
    assert sources.status_code == 200 and link in sources.text
    captures_page = admin_client.get(reverse("admin:summaries_archivecapture_changelist"))
    assert captures_page.status_code == 200
    detail = admin_client.get(reverse("admin:summaries_archivedcopy_change", args=[copy.pk]))
    assert detail.status_code == 200


def test_an_archive_at_a_refused_address_fails_at_once(site, stub, settings):
    settings.ARCHIVE_ENDPOINT = "http://127.0.0.1:9"  # internal: refused by the policy
    link = site.set("/a", "It is 2.5 times faster.")
    cite(link)
    check_all()
    capture = ArchiveCapture.objects.create(
        source=Source.objects.get(url=link), created_at=timezone.now()
    )
    drive_captures([capture.pk], within=5)
    capture.refresh_from_db()
    assert capture.state == "failed" and capture.attempts == 1


def test_a_shown_copy_is_withdrawn_when_the_key_phrase_changes_until_checked_again(
    site, stub, queued
):
    link = site.set("/a", "It is 2.5 times faster and 3 times cheaper.")
    summary, [citation] = cite(link)
    confirm_all(summary, timezone.now())
    stub.add_capture(link, timezone.now() - timedelta(days=2), body=page("It is 2.5x faster"))
    site.set("/a", status=404)
    review_and_run(check_all(), queued)
    assert ArchivedCopy.objects.get().shown

    Citation.objects.filter(pk=citation.pk).update(key_phrase="3 times cheaper")
    review_and_run(check_all(), queued)

    copy = ArchivedCopy.objects.get()
    # Looked up again: what was confirmed does not hold the new phrase, so no copy can match.
    assert not copy.shown and copy.url == ""
    assert copy.key_phrase == "3 times cheaper"


# --- What a copy must match: the page as it was cited -------------------------------------

ORIGINAL = "Our benchmark shows it is 2.5 times faster than before on every workload we ran."
WITHDRAWN = "Withdrawn: we said it is 2.5 times faster than before. We no longer stand by it."


@pytest.fixture
def vault(settings, tmp_path):
    """The evidence vault on, in a folder of the test's own."""
    settings.EVIDENCE_ENABLED = True
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "evidence")},
        },
    }


def served(site: SiteServer, path: str) -> str:
    """The body the site serves at `path` now, byte for byte."""
    return site.serve(path)[1]


def test_a_withdrawal_notice_quoting_the_claim_is_never_the_copy(site, stub, queued, vault):
    link = site.set("/a", ORIGINAL)
    original = served(site, "/a")
    _, [citation] = cite(link)
    check_all()  # found: the vault keeps the page as cited, a week ago
    cited_at = timezone.now() - timedelta(days=7)
    citation.evidence.filter(kind="cited").update(captured_at=cited_at)
    before = stub.add_capture(link, cited_at - timedelta(days=30), body=original)
    # Retracted: the page quotes the claim only to withdraw it, and is captured so.
    site.set("/a", WITHDRAWN)
    stub.add_capture(link, cited_at + timedelta(days=2), body=served(site, "/a"))
    check_all()
    site.set("/a", status=404)

    review_and_run(check_all(), queued)

    copy = ArchivedCopy.objects.get(citation=citation)
    assert copy.shown and copy.url == f"{stub.base}/web/{before}/{link}"
    assert "Our benchmark shows" in copy.excerpt


def test_without_evidence_a_copy_must_hold_the_passage_confirmed(site, stub, queued):
    link = site.set("/a", ORIGINAL)
    _, [citation] = cite(link)
    check_all()
    confirmed = timezone.now()
    checking.confirm_citation(citation=Citation.objects.get(pk=citation.pk), now=confirmed)
    good = stub.add_capture(link, confirmed - timedelta(days=9), body=page(ORIGINAL))
    # Newer, and holding the phrase, but in other words: not the claim as cited.
    stub.add_capture(link, confirmed - timedelta(days=2), body=page(WITHDRAWN))
    site.set("/a", status=404)

    review_and_run(check_all(), queued)

    copy = ArchivedCopy.objects.get(citation=citation)
    assert copy.shown and copy.url == f"{stub.base}/web/{good}/{link}"


def test_no_record_of_what_was_cited_means_no_copy(site, stub, queued):
    # Never confirmed, no evidence kept: nothing to tell a copy of the claim from a page
    # that merely repeats the phrase.
    link = site.set("/a", ORIGINAL)
    _, [citation] = cite(link)
    stub.add_capture(link, timezone.now() - timedelta(days=3), body=page(WITHDRAWN))
    site.set("/a", status=404)

    review_and_run(check_all(), queued)

    assert ArchivedCopy.objects.get(citation=citation).url == ""


def test_our_capture_after_confirmation_is_used_when_it_matches(site, stub, queued, vault):
    link = site.set("/a", ORIGINAL)
    _, [citation] = cite(link)
    check_all()
    confirmed = timezone.now()
    checking.confirm_citation(citation=Citation.objects.get(pk=citation.pk), now=confirmed)
    stub._last = datetime.now(UTC)  # captured after the confirmation
    review_and_run(check_all(), queued)
    capture = capture_of(Source.objects.get(url=link))
    assert capture.state == "success" and capture.captured_at > confirmed
    site.set("/a", status=404)

    review_and_run(check_all(), queued)

    copy = ArchivedCopy.objects.get(citation=citation)
    assert copy.shown and copy.url == capture.snapshot_url


def test_a_copy_shown_without_matching_the_cited_page_is_withdrawn_and_looked_up_again(
    site, stub, queued
):
    # A copy kept before copies had to match the page as cited: it only held the phrase.
    link = site.set("/a", status=404)
    summary, [citation] = cite(link)
    confirm_all(summary, timezone.now() - timedelta(days=3), excerpt=ORIGINAL)
    withdrawn = stub.add_capture(link, timezone.now() - timedelta(days=1), body=page(WITHDRAWN))
    ArchivedCopy.objects.create(
        citation=citation,
        url=f"{stub.base}/web/{withdrawn}/{link}",
        key_phrase=PHRASE,
        verified_at=timezone.now(),
        looked_up_at=timezone.now(),
        shown=True,
    )

    review_and_run(check_all(), queued)

    copy = ArchivedCopy.objects.get(citation=citation)
    assert not copy.shown and copy.url == ""
    assert (copies.FIND_TASK, citation.pk) in queued


def test_robust_links_go_on_each_cited_link_of_the_text_and_nowhere_else():
    from summaries.reader.page_rows import PageCitation, PageSource

    source = PageSource("https://a.example.org/", "a.example.org", "ok", 200, "", "", False, None)
    dated = PageCitation(
        "https://a.example.org/", "a", "2.5 times faster", "", "supported", source,
        cited_at=datetime(2026, 5, 4, 23, 30, tzinfo=UTC),
    )  # fmt: skip
    undated = PageCitation("https://b.example.org/", "b", "", "", "unchecked", source)
    presentation.label_sources([dated, undated])
    fragment = presentation.annotate_links(
        '<p><a href="https://a.example.org/">a</a> <a href="https://b.example.org/">b</a>'
        ' <a href="https://c.example.org/">c</a></p>',
        {c.url: c for c in (dated, undated)},
    )

    shown = presentation.robust_text_links(fragment, [dated, undated])

    assert shown.count("data-originalurl") == 1
    assert (
        'a.example.org/#:~:text=2.5%20times%20faster" data-originalurl="https://a.example.org/"'
        ' data-versiondate="2026-05-04">a</a>' in shown
    )


def test_readers_are_never_shown_a_copy_not_matched_to_the_page_as_cited(site, stub, client):
    # Until its source's next check withdraws it, a copy kept only for holding the phrase
    # is not shown either.
    link = site.set("/a", status=404)
    summary, [citation] = cite(link)
    from summaries.editing import workflow

    workflow.publish_summary(summary=summary, user=None)
    check_all()
    fields = {"url": f"{stub.base}/web/20260101000000/{link}", "key_phrase": PHRASE}
    fields |= {"verified_at": timezone.now(), "looked_up_at": timezone.now(), "shown": True}
    copy = ArchivedCopy.objects.create(citation=citation, captured_at=timezone.now(), **fields)
    assert "Archived copy, " not in client.get(summary.get_absolute_url()).text

    ArchivedCopy.objects.filter(pk=copy.pk).update(matched_by="passage")
    from summaries.pagecache.generation import content_changed

    content_changed()
    assert "Archived copy, " in client.get(summary.get_absolute_url()).text


def test_the_api_and_the_admin_call_a_copy_verified_only_when_it_matched_the_page_as_cited(
    site, stub, client
):
    link = site.set("/a", status=404)
    summary, [citation] = cite(link)
    from summaries.editing import workflow

    workflow.publish_summary(summary=summary, user=None)
    fields = {"url": f"{stub.base}/web/20260101000000/{link}", "key_phrase": PHRASE}
    fields |= {"verified_at": timezone.now(), "looked_up_at": timezone.now()}
    copy = ArchivedCopy.objects.create(citation=citation, captured_at=timezone.now(), **fields)
    detail = reverse("api:summary-detail", args=[summary.video.slug])

    assert client.get(detail).json()["citations"][0]["archived_copy"]["verified"] is False
    from summaries.admin.archives import FoundListFilter

    found = FoundListFilter(None, {"found": ["yes"]}, ArchivedCopy, None)
    assert not found.queryset(None, ArchivedCopy.objects.all()).exists()

    ArchivedCopy.objects.filter(pk=copy.pk).update(matched_by="digest")
    from summaries.pagecache.generation import content_changed

    content_changed()
    assert client.get(detail).json()["citations"][0]["archived_copy"]["verified"] is True
    assert found.queryset(None, ArchivedCopy.objects.all()).get() == copy
