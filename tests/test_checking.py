"""summaries.checking and its tasks against a real loopback server.

The test server listens on 127.0.0.2 (allowed through FETCH_ALLOWED_NETWORKS); 127.0.0.1
plays the internal address that must never be reached. Tasks are called directly; commit
hooks are captured with django_capture_on_commit_callbacks.
"""

import os
import threading
import time
import uuid
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from summaries import checking, tasks
from summaries.checking import limiter as checking_limiter
from summaries.checking import record
from summaries.checking import tasks as checking_tasks
from summaries.checking.limiter import RedisHostLimiter, get_host_limiter
from summaries.editing import derived, workflow
from summaries.linkcheck import CheckResult, InProcessHostLimiter, State
from summaries.linkcheck.limits import INCREASE_AFTER
from summaries.models import Citation, Source, SourceCheck
from summaries.pagecache.generation import current_generation
from tests.admin_forms import form_fields
from tests.factories import ChapterFactory
from tests.pdf_files import make_pdf
from tests.test_linkcheck_fetch import Server, page, redirect, title_page

PAPER = make_pdf([["Opus is 2.5\u00d7 faster."]], title="A study of speed")

pytestmark = pytest.mark.django_db

FETCH_SETTINGS = {
    "FETCH_ALLOWED_NETWORKS": ["127.0.0.2/31"],
    "FETCH_DEADLINE": 3.0,
}


@pytest.fixture(autouse=True)
def fetch_settings(settings):
    for name, value in FETCH_SETTINGS.items():
        setattr(settings, name, value)
    return settings


def start_server(host: str) -> Server:
    server = Server(host, host)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


@pytest.fixture
def site():
    server = start_server("127.0.0.2")
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def internal():
    server = start_server("127.0.0.1")
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


def url(server: Server, path: str) -> str:
    return f"http://{server.server_address[0]}:{server.port}{path}"


def cite(*links: tuple[str, str], phrases: dict[str, str] | None = None):
    """A summary whose chapter cites each (claim text, url); returns (summary, citations)."""
    body = " ".join(f"{claim} [source]({link})." for claim, link in links)
    chapter = ChapterFactory(body=body)
    summary = chapter.summary
    derived.refresh_derived_data(summary=summary)
    for link, phrase in (phrases or {}).items():
        Citation.objects.filter(summary=summary, url=link).update(
            key_phrase=phrase, key_phrase_edited=True
        )
    return summary, list(Citation.objects.filter(summary=summary).order_by("position"))


def queued(callbacks) -> list[tuple]:
    """The (source_ids, token, ...) of each check_source_batch queued on commit."""
    return [
        callback.args
        for callback in callbacks
        if getattr(getattr(callback, "task", None), "name", "") == tasks.check_source_batch.name
    ]


def run_batches(callbacks) -> None:
    for args in queued(callbacks):
        tasks.check_source_batch(*args)


# --- Queueing on save -------------------------------------------------------------------


def test_a_save_queues_one_check_per_source_after_commit(site, django_capture_on_commit_callbacks):
    link = url(site, "/a")
    summary, _ = cite(("It is fast", link), ("It is cheap", link))
    with django_capture_on_commit_callbacks() as callbacks:
        claimed = checking.queue_checks_for_summary(summary=summary)
    batches = queued(callbacks)
    assert len(batches) == 1
    ids, token = batches[0]
    source = Source.objects.get(url=link)
    assert claimed == ids == [source.pk]
    assert source.check_token == token and source.claimed_until > timezone.now()
    assert site.hits["/a"] == 0  # nothing is fetched before the worker runs


def test_a_second_save_or_racing_dispatch_queues_nothing_twice(
    site, django_capture_on_commit_callbacks
):
    summary, _ = cite(("It is fast", url(site, "/a")))
    with django_capture_on_commit_callbacks() as callbacks:
        checking.queue_checks_for_summary(summary=summary)
        checking.queue_checks_for_summary(summary=summary)
        checking.dispatch_due_checks()
    assert len(queued(callbacks)) == 1


def test_a_broker_down_at_commit_does_not_break_the_save(
    site, django_capture_on_commit_callbacks, monkeypatch
):
    def broker_down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.check_source_batch, "delay", broker_down)
    summary, _ = cite(("It is fast", url(site, "/a")))
    with django_capture_on_commit_callbacks(execute=True):
        checking.queue_checks_for_summary(summary=summary)  # no exception
    source = Source.objects.get()
    assert source.check_token  # claimed: the sweeper takes it once the claim lapses
    later = timezone.now() + timedelta(seconds=settings.CHECK_CLAIM_SECONDS + 1)
    with django_capture_on_commit_callbacks() as callbacks:
        assert checking.dispatch_due_checks(now=later) == [source.pk]
    assert len(queued(callbacks)) == 1


# --- The check task ---------------------------------------------------------------------


def test_the_task_records_results_verdicts_and_history(
    site, internal, django_capture_on_commit_callbacks
):
    ok, missing, gone, sneaky = (url(site, p) for p in ("/ok", "/missing", "/gone", "/sneaky"))
    site.routes["/ok"] = page(body=title_page("Fast &amp; cheap", "It is 2.5× faster than before."))
    site.routes["/missing"] = page(body=title_page("Other", "Nothing about speed."))
    site.routes["/sneaky"] = redirect(302, url(internal, "/secret"))
    internal.routes["/secret"] = page(body="secret")
    summary, _ = cite(
        ("It is 2.5 times faster", ok),
        ("It is 2.5 times faster", missing),
        ("It went", gone),
        ("It hides", sneaky),
        phrases={ok: "2.5 times faster", missing: "2.5 times faster"},
    )
    with django_capture_on_commit_callbacks() as callbacks:
        checking.queue_checks_for_summary(summary=summary)
    run_batches(callbacks)

    sources = {s.url: s for s in Source.objects.all()}
    assert sources[ok].state == "ok"
    assert sources[ok].title == "Fast & cheap"
    assert sources[ok].status_code == 200 and sources[ok].fingerprint
    assert sources[gone].state == "broken" and sources[gone].status_code == 404
    assert sources[sneaky].state == "blocked" and sources[sneaky].error_class == "blocked"
    assert internal.hits["/secret"] == 0
    for source in sources.values():
        assert source.last_checked_at and not source.check_token and not source.claimed_until
    assert SourceCheck.objects.count() == 4

    verdicts = {c.url: c for c in Citation.objects.filter(summary=summary)}
    assert verdicts[ok].verdict == "supported"
    assert "2.5× faster" in verdicts[ok].verdict_excerpt
    assert verdicts[missing].verdict == "not_found"
    assert verdicts[gone].verdict in ("unavailable", "no_phrase")

    # Healthy sources come back after the healthy interval, problems sooner.
    healthy = sources[ok].next_check_at - sources[ok].last_checked_at
    assert healthy > timedelta(days=6)
    for problem in (missing, gone):
        assert sources[problem].next_check_at - sources[problem].last_checked_at < timedelta(days=2)


def test_every_html_source_gets_its_title_and_description_claim_or_not(
    site, django_capture_on_commit_callbacks
):
    head = (
        "<title>Claude Opus 4.5</title>"
        '<meta name="description" content="Anthropic&#39;s newest model, announced today.">'
    )
    site.routes["/plain"] = page(body=f"<html><head>{head}</head><body><p>x</p></body></html>")
    site.routes["/paper.pdf"] = page(body=PAPER, content_type="application/pdf")
    plain, paper = url(site, "/plain"), url(site, "/paper.pdf")
    summary, _ = cite(("Opus 4.5 is out", plain), ("A study", paper))  # no key phrases
    with django_capture_on_commit_callbacks() as callbacks:
        checking.queue_checks_for_summary(summary=summary)
    run_batches(callbacks)

    source = Source.objects.get(url=plain)
    assert (source.state, source.title) == ("ok", "Claude Opus 4.5")
    assert source.description == "Anthropic's newest model, announced today."
    assert SourceCheck.objects.get(source=source).description == source.description
    assert Source.objects.get(url=paper).title == "A study of speed"
    assert site.methods("/plain") == ["GET"]  # one request, no HEAD first


def test_a_redelivered_batch_fetches_and_writes_nothing_again(
    site, django_capture_on_commit_callbacks
):
    site.routes["/a"] = page(body=title_page("A"))
    summary, _ = cite(("It is", url(site, "/a")))
    with django_capture_on_commit_callbacks() as callbacks:
        checking.queue_checks_for_summary(summary=summary)
    run_batches(callbacks)
    hits = site.hits["/a"]
    run_batches(callbacks)  # a late ack or a redelivery
    assert site.hits["/a"] == hits
    assert SourceCheck.objects.count() == 1


def test_recording_the_same_batch_twice_keeps_one_history_row(site):
    source = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)
    result = checking.run_checks({source.url: False})[source.url]
    assert checking.record_results(token=token, results={source.pk: result}) == ids
    Source.objects.filter(pk=source.pk).update(check_token=token)  # as if not yet recorded
    checking.record_results(token=token, results={source.pk: result})
    assert SourceCheck.objects.filter(source=source).count() == 1


def test_history_is_bounded_per_source(site, settings):
    settings.CHECK_HISTORY_PER_SOURCE = 2
    site.routes["/a"] = page(body=title_page("A"))
    site.routes["/b"] = page(body=title_page("B"))
    first = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    second = Source.objects.create(url=url(site, "/b"), host="127.0.0.2")
    tokens = []
    for _ in range(3):
        Source.objects.update(next_check_at=None)
        token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)
        assert checking.check_source_batch(source_ids=ids, token=token).recorded == ids
        tokens.append(token)
    for source in (first, second):  # each keeps its own two newest checks
        kept = SourceCheck.objects.filter(source=source).values_list("token", flat=True)
        assert sorted(kept) == sorted(tokens[1:])


def test_a_batch_keeps_no_page_text_once_recorded(site):
    # Memory stays flat however large a batch is: texts are dropped as results are written.
    links = [url(site, f"/p{n}") for n in range(25)]
    for n in range(25):
        site.routes[f"/p{n}"] = page(body=title_page(f"P{n}", "It is 2.5x faster." * 500))
    summary, _ = cite(*((f"Claim {n}", link) for n, link in enumerate(links)))
    Citation.objects.filter(summary=summary).update(key_phrase="2.5x faster")
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=100)
    seen = []
    checking.check_source_batch(
        source_ids=ids, token=token, on_result=lambda source, result: seen.append(result)
    )
    assert len(seen) == 25 and all(result.text is None for result in seen)
    verdicts = set(Citation.objects.filter(summary=summary).values_list("verdict", flat=True))
    assert verdicts == {"supported"}  # read before the text was dropped


def test_sources_slow_last_time_start_first(site, monkeypatch):
    fast = Source.objects.create(url=url(site, "/fast"), host="127.0.0.2", response_ms=80)
    hung = Source.objects.create(
        url=url(site, "/hung"), host="127.0.0.2", error_class="timeout", state="error"
    )
    slow = Source.objects.create(url=url(site, "/slow"), host="127.0.0.2", response_ms=4000)
    asked = []

    def run_checks(needs, **kwargs):
        asked.extend(needs)
        return {}

    monkeypatch.setattr(record, "run_checks", run_checks)
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)
    checking.check_source_batch(source_ids=ids, token=token)
    assert asked == [hung.url, slow.url, fast.url]


def test_a_batch_out_of_time_is_continued_then_given_up(
    site, monkeypatch, django_capture_on_commit_callbacks
):
    source = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)
    monkeypatch.setattr(checking_tasks, "_time_budget", lambda: 0.0)
    with django_capture_on_commit_callbacks() as callbacks:
        tasks.check_source_batch(ids, token)
    assert queued(callbacks) == [(ids, token, 2)]
    assert site.hits["/a"] == 0
    tasks.check_source_batch(ids, token, checking_tasks.CHECK_MAX_ATTEMPTS)
    source.refresh_from_db()
    assert source.state == "error" and source.error_class == "timeout"
    assert not source.check_token


def test_a_batch_for_a_deleted_or_reclaimed_source_does_nothing(site):
    source = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    outcome = checking.check_source_batch(source_ids=[source.pk, 999999], token="not-ours")
    assert outcome.skipped == [source.pk, 999999] and not outcome.recorded
    assert site.hits["/a"] == 0


def test_a_batch_renews_its_claim_when_it_starts_so_no_one_else_fetches_its_sources(
    site, monkeypatch
):
    """A batch that waited in the queue almost as long as the lease: while it fetches, the
    sweeper must not hand its sources to another batch, which would fetch them again."""
    source = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    lease = timedelta(seconds=settings.CHECK_CLAIM_SECONDS)
    claimed_at = timezone.now() - lease + timedelta(seconds=1)
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10, now=claimed_at)
    swept = []
    fetch = record.run_checks

    def sweep_then_fetch(needs, **kwargs):
        # The first claim has lapsed by now: the sweeper runs while the batch fetches.
        swept.extend(checking.sweep_sources(now=claimed_at + lease + timedelta(seconds=2)))
        return fetch(needs, **kwargs)

    monkeypatch.setattr(record, "run_checks", sweep_then_fetch)
    outcome = checking.check_source_batch(source_ids=ids, token=token)
    assert swept == []
    assert outcome.recorded == [source.pk] and site.hits["/a"] == 1


class SlowSlots(InProcessHostLimiter):
    """A host slot comes free only after 1.5 s (another worker holds them meanwhile)."""

    def acquire(self, host, *, timeout=None):
        time.sleep(1.5)
        return True


def test_a_batch_sends_nothing_after_its_claim_ends(site, monkeypatch, fetch_settings):
    """A batch still running when its lease ends (its worker was cut off for longer than
    the lease, say) may have had its sources swept to another batch: it sends no more
    requests, and leaves what it did not send, still claimed, for a later attempt."""
    site.routes["/a"] = page(body=title_page("A"))
    source = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    fetch_settings.CHECK_CLAIM_SECONDS = 1
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)
    monkeypatch.setattr(record, "host_limiter", lambda: SlowSlots(2))
    outcome = checking.check_source_batch(source_ids=ids, token=token)
    assert outcome.recorded == [] and outcome.remaining == [source.pk]
    assert site.hits["/a"] == 0


# --- Dispatch and sweep -----------------------------------------------------------------


def test_dispatch_claims_due_sources_in_batches(settings, django_capture_on_commit_callbacks):
    settings.FETCH_BATCH_SIZE = 2
    now = timezone.now()
    never = [Source.objects.create(url=f"https://e.test/{i}", host="e.test") for i in range(3)]
    overdue = Source.objects.create(
        url="https://e.test/old", host="e.test", next_check_at=now - timedelta(hours=1)
    )
    Source.objects.create(
        url="https://e.test/fresh", host="e.test", next_check_at=now + timedelta(hours=1)
    )
    Source.objects.create(url="https://e.test/ignored", host="e.test", ignored=True)
    with django_capture_on_commit_callbacks() as callbacks:
        claimed = checking.dispatch_due_checks(now=now)
    assert sorted(claimed) == sorted([s.pk for s in never] + [overdue.pk])
    assert [len(args[0]) for args in queued(callbacks)] == [2, 2]
    with django_capture_on_commit_callbacks() as callbacks:
        assert checking.dispatch_due_checks(now=now) == []  # a duplicate beat tick
    assert queued(callbacks) == []


def test_the_dispatch_task_queues_batches(django_capture_on_commit_callbacks):
    Source.objects.create(url="https://e.test/a", host="e.test")
    with django_capture_on_commit_callbacks() as callbacks:
        tasks.dispatch_source_checks()
    assert len(queued(callbacks)) == 1


def test_the_sweeper_reclaims_sources_whose_batch_was_lost():
    source = Source.objects.create(url="https://e.test/a", host="e.test")
    now = timezone.now()
    first, _ = checking.claim_sources(queryset=Source.objects.all(), limit=10, now=now)
    assert checking.sweep_sources(now=now + timedelta(minutes=1)) == []
    lapsed = now + timedelta(seconds=settings.CHECK_CLAIM_SECONDS + 1)
    assert checking.sweep_sources(now=lapsed) == [source.pk]
    source.refresh_from_db()
    assert source.check_token != first


def test_check_now_claims_sources_that_are_not_due(django_capture_on_commit_callbacks):
    later = timezone.now() + timedelta(days=3)
    source = Source.objects.create(url="https://e.test/a", host="e.test", next_check_at=later)
    with django_capture_on_commit_callbacks() as callbacks:
        assert checking.request_checks(sources=[source]) == [source.pk]
        assert checking.request_checks(sources=[source]) == []  # already being checked
    assert len(queued(callbacks)) == 1


def test_ignored_sources_are_never_claimed():
    source = Source.objects.create(url="https://e.test/a", host="e.test")
    checking.ignore_source(source=source)
    assert checking.request_checks(sources=[source]) == []
    assert checking.dispatch_due_checks() == []
    checking.ignore_source(source=source, ignored=False)
    assert checking.dispatch_due_checks() == [source.pk]


# --- Editors confirm --------------------------------------------------------------------


def test_confirm_records_the_fingerprint_and_later_changes_are_reported(
    site, django_capture_on_commit_callbacks, django_user_model
):
    link = url(site, "/a")
    site.routes["/a"] = page(body=title_page("A", "It is 2.5x faster."))
    summary, [citation] = cite(("It is 2.5 times faster", link), phrases={link: "2.5x faster"})
    editor = django_user_model.objects.create(username="ed", is_staff=True)

    with pytest.raises(ValidationError):
        checking.confirm_citation(citation=citation, user=editor)  # not checked yet

    def check():
        with django_capture_on_commit_callbacks() as callbacks:
            checking.request_checks(sources=[citation.source])
        run_batches(callbacks)
        return Citation.objects.select_related("source").get(pk=citation.pk)

    citation = check()
    assert citation.verdict == "supported"
    checking.confirm_citation(citation=citation, user=editor)
    citation.refresh_from_db()
    assert citation.confirmed_fingerprint == citation.source.fingerprint
    assert "2.5x faster" in citation.confirmed_excerpt
    assert citation.confirmed_by == editor

    site.routes["/a"] = page(body=title_page("A", "It is 2.5x faster, they said. Not now."))
    citation = check()
    assert citation.verdict == "changed"
    checking.confirm_citation(citation=citation, user=editor)
    citation.refresh_from_db()
    assert citation.verdict == "supported"
    assert citation.confirmed_fingerprint == citation.source.fingerprint


# --- Admin ------------------------------------------------------------------------------


def test_sources_report_opens_with_filters_and_search(editor_client):
    summary, [citation] = cite(("It is fast", "https://e.test/a"))
    Source.objects.create(url="https://e.test/b", host="e.test", state="broken")
    changelist = reverse("admin:summaries_source_changelist")
    channel = summary.video.channel_id
    for query in ("", "?state=broken", f"?channel={channel}", "?q=e.test", "?ignored__exact=1"):
        response = editor_client.get(changelist + query)
        assert response.status_code == 200, query
    response = editor_client.get(f"{changelist}?channel={channel}")
    assert list(response.context["cl"].result_list) == [citation.source]
    response = editor_client.get(f"{changelist}?last_checked_at__isnull=True")
    assert response.status_code == 200
    change = reverse("admin:summaries_source_change", args=[citation.source_id])
    assert editor_client.get(change).status_code == 200


def test_check_now_and_ignore_actions(editor_client, django_capture_on_commit_callbacks):
    source = Source.objects.create(url="https://e.test/a", host="e.test")
    changelist = reverse("admin:summaries_source_changelist")
    with django_capture_on_commit_callbacks() as callbacks:
        response = editor_client.post(
            changelist, {"action": "check_now", "_selected_action": [source.pk]}, follow=True
        )
    assert response.status_code == 200
    assert queued(callbacks) == [([source.pk], Source.objects.get().check_token)]
    response = editor_client.post(
        changelist, {"action": "ignore", "_selected_action": [source.pk]}, follow=True
    )
    assert Source.objects.get().ignored
    editor_client.post(changelist, {"action": "stop_ignoring", "_selected_action": [source.pk]})
    assert not Source.objects.get().ignored


def test_saving_a_summary_queues_checks_and_confirm_button_confirms(
    editor_client, editor, site, django_capture_on_commit_callbacks
):
    link = url(site, "/a")
    site.routes["/a"] = page(body=title_page("A", "It is 2.5x faster."))
    summary, [citation] = cite(("It is 2.5 times faster", link), phrases={link: "2.5x faster"})
    change = reverse("admin:summaries_summary_change", args=[summary.pk])
    response = editor_client.get(change)
    data = form_fields(response)
    assert "Not checked yet" in response.content.decode()
    with django_capture_on_commit_callbacks() as callbacks:
        response = editor_client.post(change, data)
    assert response.status_code == 302
    run_batches(callbacks)

    response = editor_client.get(change)
    content = response.content.decode()
    assert "claim-verdict-supported" in content and "source-state-ok" in content
    assert f'name="_confirm_citation" value="{citation.pk}"' in content
    data = {**form_fields(response), "_confirm_citation": str(citation.pk)}
    response = editor_client.post(change, data)
    assert response.status_code == 302 and response.url == change  # stays on the page
    citation.refresh_from_db()
    assert citation.confirmed_by == editor
    assert citation.confirmed_fingerprint == Source.objects.get().fingerprint


# --- The Redis host limiter -------------------------------------------------------------

REDIS_URL = os.environ.get("REDIS_URL", "")
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="REDIS_URL is not set")


def redis_limiter(per_host=2, slot_ttl=5.0, url=REDIS_URL):
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    prefix = f"curation-test:{uuid.uuid4().hex}"
    return RedisHostLimiter(client, per_host, slot_ttl=slot_ttl, prefix=prefix)


@needs_redis
def test_redis_limiter_holds_the_per_host_limit_across_processes():
    first = redis_limiter()
    second = RedisHostLimiter(first.client, 2, slot_ttl=5.0, prefix=first.prefix)  # another process
    assert first.acquire("a.test", timeout=0)
    assert second.acquire("a.test", timeout=0)
    assert not first.acquire("a.test", timeout=0.05)
    assert not second.acquire("a.test", timeout=0)
    assert second.acquire("b.test", timeout=0)  # other hosts are not affected
    first.release("a.test")
    assert second.acquire("a.test", timeout=0)
    assert first.in_flight("a.test") == 2


@needs_redis
def test_a_released_slot_wakes_a_waiter_in_another_process_at_once(monkeypatch):
    # Polling alone would find the free slot only after POLL (made 2 s here): the release
    # wakes the waiter instead, so requests to a busy host follow each other closely.
    monkeypatch.setattr(checking_limiter, "POLL", 2.0)
    first = redis_limiter(per_host=1)
    second = RedisHostLimiter(first.client, 1, slot_ttl=5.0, prefix=first.prefix)
    assert first.acquire("a.test", timeout=0)
    got = []
    waiter = threading.Thread(
        target=lambda: got.append((second.acquire("a.test", timeout=5), time.monotonic()))
    )
    waiter.start()
    time.sleep(0.2)  # the waiter is blocked on the full host
    released_at = time.monotonic()
    first.release("a.test")
    waiter.join(5)
    assert got and got[0][0]
    assert got[0][1] - released_at < 0.5


@needs_redis
def test_redis_limiter_slots_of_a_killed_worker_lapse():
    dead = redis_limiter(per_host=1, slot_ttl=0.2)
    assert dead.acquire("a.test", timeout=0)  # never released: the worker was killed
    alive = RedisHostLimiter(dead.client, 1, slot_ttl=0.2, prefix=dead.prefix)
    assert not alive.acquire("a.test", timeout=0)
    assert alive.acquire("a.test", timeout=2)


@needs_redis
def test_redis_limiter_shares_pauses():
    first = redis_limiter()
    second = RedisHostLimiter(first.client, 2, prefix=first.prefix)
    first.pause("a.test", 0.3)
    assert 0 < second.wait_time("a.test") <= 0.3
    second.pause("a.test", 0.01)  # a shorter pause does not shorten it
    assert second.wait_time("a.test") > 0.1
    assert not second.acquire("a.test", timeout=0.05)
    assert second.acquire("a.test", timeout=2)


@needs_redis
def test_redis_limiter_shares_a_slow_down_and_its_recovery():
    first = redis_limiter(per_host=2)
    second = RedisHostLimiter(first.client, 2, slot_ttl=5.0, prefix=first.prefix)
    first.slow_down("a.test")  # a 429 seen by one process
    assert second.limit("a.test") == 1 and first.limit("b.test") == 2
    assert second.acquire("a.test", timeout=0)
    assert not first.acquire("a.test", timeout=0.05)  # one at a time, for everyone
    second.release("a.test")
    for _ in range(INCREASE_AFTER):
        second.speed_up("a.test")
    assert first.limit("a.test") == 2
    assert first.acquire("a.test", timeout=0) and second.acquire("a.test", timeout=0)
    assert first.wait_time("a.test") == 0.0  # slowed down, never paused


def test_redis_limiter_sends_nothing_while_redis_is_down():
    # Each process going ahead on its own count would put (processes x per_host) requests
    # on a site during a Redis restart: a request waits for Redis, then is not sent.
    limiter = redis_limiter(per_host=1, url="redis://127.0.0.1:1/0")
    assert not limiter.acquire("a.test", timeout=0)
    assert not limiter.acquire("a.test", timeout=0.3)
    limiter.release("a.test")  # nothing held: nothing to release
    limiter.pause("a.test", 0.2)  # pauses are still kept in this process
    assert limiter.wait_time("a.test") > 0


def test_redis_limiter_takes_a_shared_slot_once_redis_is_back(monkeypatch):
    limiter = redis_limiter(per_host=1, url="redis://127.0.0.1:1/0")
    answers = [redis.ConnectionError("down"), redis.ConnectionError("down"), 1]

    def acquire_script(**kwargs):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(limiter, "_acquire", acquire_script)
    assert limiter.acquire("a.test", timeout=5)
    assert answers == []  # it waited for Redis rather than counting on its own


def test_the_limiter_is_per_process_without_redis(settings):
    settings.REDIS_URL = ""
    assert isinstance(get_host_limiter(2), InProcessHostLimiter)
    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    assert isinstance(get_host_limiter(2), RedisHostLimiter)


def _record(source: Source, state: State, status: int | None) -> None:
    token, ids = checking.claim_sources(queryset=Source.objects.filter(pk=source.pk), limit=1)
    assert ids == [source.pk]
    result = CheckResult(url=source.url, state=state, final_url=source.url, status=status)
    checking.record_results(token=token, results={source.pk: result})


def test_a_recorded_check_result_reaches_the_cached_summary_page(client):
    """Results are written in bulk (no save signals); the page must still show them."""
    summary, citations = cite(("It is fast", "https://example.com/fast"))
    workflow.publish_summary(summary=summary)
    page_url = summary.get_absolute_url()
    assert "source-label--pending" in client.get(page_url).content.decode()  # now cached

    _record(citations[0].source, State.BROKEN, 404)

    assert "source-label--unavailable" in client.get(page_url).content.decode()


def test_a_check_that_changes_nothing_shown_keeps_cached_pages(client):
    """Most checks find a source as it was: they must not empty the page cache each time."""
    summary, citations = cite(("It is fast", "https://example.com/fast"))
    workflow.publish_summary(summary=summary)
    source = citations[0].source
    _record(source, State.OK, 200)
    generation = current_generation()
    _record(source, State.OK, 200)
    assert current_generation() == generation


class FullHost(InProcessHostLimiter):
    """Every slot of every host is held (by a killed worker's batch, say) and never freed."""

    def acquire(self, host, *, timeout=None):
        return False


def test_a_source_whose_host_has_no_free_slot_is_left_for_later_not_failed(
    site, monkeypatch, fetch_settings
):
    """No request was sent, so there is nothing to record: the batch continues it later."""
    site.routes["/a"] = page(body=title_page("A"))
    source = Source.objects.create(url=url(site, "/a"), host="127.0.0.2")
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=10)
    monkeypatch.setattr(record, "host_limiter", lambda: FullHost(2))
    fetch_settings.FETCH_DEADLINE = 0.3
    outcome = checking.check_source_batch(source_ids=ids, token=token)
    assert outcome.recorded == [] and outcome.remaining == [source.pk]
    source.refresh_from_db()
    assert source.check_token == token and source.last_checked_at is None
    assert not SourceCheck.objects.exists()
    assert site.hits["/a"] == 0
