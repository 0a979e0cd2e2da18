"""Recording check results while editors change the same summaries, on PostgreSQL.

A worker's `record_results` and an editor's transaction (publishing changes, saving a
summary and its key phrases) lock some of the same rows: the sources' citations, the
summary and the content generation row; two editors' transactions (saving the changes of
a summary while another publishes or discards them, a scheduled publication while a
reviewer publishes) lock the summary, its changes and their citations. Each test runs
the two in two threads (two database connections) and stops the first transaction at the
point where, taking those locks in another order, the two waited for each other until
PostgreSQL broke the deadlock by failing one of them. Both must complete instead.

SQLite has no row locks (a writer locks the whole database), so these run on PostgreSQL
only.
"""

import threading
import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries import checking, notifications
from summaries.background import OnCommitTask
from summaries.editing import copies, derived, save
from summaries.linkcheck import CheckResult, State
from summaries.models import Chapter, Citation, NotificationEvent, Source, Summary
from tests.admin_forms import form_fields
from tests.factories import ChapterFactory, EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),  # each thread commits on its own connection
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's row locks"),
]

FAST = "https://fast.example/study"
SLOW = "https://slow.example/paper"
OTHER = "https://other.example/notes"
WAIT = 30  # seconds; a step that takes longer is stuck


@pytest.fixture(autouse=True)
def nothing_sent(monkeypatch):
    """Tasks queued on commit (checks, e-mails, webhooks) are not sent to a broker."""
    monkeypatch.setattr(OnCommitTask, "delay_on_commit", lambda self, *args, **kwargs: None)


class Interleaving:
    """Runs `first` in one thread up to its call of `pause()`, then `second` in another
    until it finishes or waits for a lock, then lets `first` go on; both to their end."""

    def __init__(self) -> None:
        self.paused = threading.Event()
        self.go_on = threading.Event()
        self.second_done = threading.Event()
        self.second_pid: int | None = None
        self.errors: list[BaseException] = []

    def pause(self) -> None:
        self.paused.set()
        assert self.go_on.wait(WAIT), "the second transaction never finished nor waited"

    def _thread(self, target: Callable[[], object], done: threading.Event | None = None):
        def run() -> None:
            try:
                if done is not None:
                    with connection.cursor() as cursor:
                        cursor.execute("SELECT pg_backend_pid()")
                        self.second_pid = cursor.fetchone()[0]
                target()
            except BaseException as error:  # noqa: BLE001 - reported by run()
                self.errors.append(error)
            finally:
                if done is not None:
                    done.set()
                self.paused.set()  # a first transaction that failed before its pause
                connection.close()

        return threading.Thread(target=run)

    def _second_waits_for_a_lock(self) -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [self.second_pid]
            )
            row = cursor.fetchone()
        return row is not None and row[0] == "Lock"

    def run(self, *, first: Callable[[], object], second: Callable[[], object]) -> None:
        first_thread = self._thread(first)
        second_thread = self._thread(second, done=self.second_done)
        first_thread.start()
        assert self.paused.wait(WAIT)
        second_thread.start()
        deadline = time.monotonic() + WAIT
        while not self.second_done.is_set() and time.monotonic() < deadline:
            if self.second_pid is not None and self._second_waits_for_a_lock():
                break
            time.sleep(0.01)
        self.go_on.set()
        first_thread.join(WAIT)
        second_thread.join(WAIT)
        assert not first_thread.is_alive() and not second_thread.is_alive()
        assert not self.errors, "\n".join(f"{type(e).__name__}: {e}" for e in self.errors)


def cite(summary: Summary, *links: str) -> Chapter:
    body = " ".join(f"Claim {n} [source {n}]({link})." for n, link in enumerate(links, 1))
    chapter = ChapterFactory(summary=summary, position=1, body=body)
    derived.refresh_derived_data(summary=summary)
    return chapter


def claim(*urls: str) -> tuple[str, list[int]]:
    token, ids = checking.claim_sources(queryset=Source.objects.filter(url__in=urls), limit=10)
    assert len(ids) == len(urls)
    return token, ids


def results(ids: list[int], state: State, text: str | None = None) -> dict[int, CheckResult]:
    return {
        source.pk: CheckResult(
            url=source.url,
            state=state,
            final_url=source.url,
            status=404 if state == State.BROKEN else 200,
            text=text,
        )
        for source in Source.objects.filter(pk__in=ids)
    }


def test_changes_are_published_while_a_worker_records_checks_of_their_sources(monkeypatch):
    """The admin's Publish on a live summary with changes, while a worker records checks of
    the sources it cites (queued by the save of the changes just before) and finds them
    broken: the worker tells the summary's editors (a row pointing at the live summary)
    after writing the citations' verdicts; publishing locks the live summary, then
    replaces its citations."""
    live = SummaryFactory(live=True, tldr="Live words.")
    cite(live, FAST, SLOW)
    copy, _ids = copies.start_working_copy(summary=live)
    Summary.objects.filter(pk=copy.pk).update(tldr="Revised words.")
    token, ids = claim(FAST, SLOW)
    interleaving = Interleaving()
    published = notifications.summary_published

    def told_then_paused(**kwargs):
        told = published(**kwargs)
        interleaving.pause()  # the live summary is locked; its citations not touched yet
        return told

    monkeypatch.setattr(notifications, "summary_published", told_then_paused)

    interleaving.run(
        first=lambda: copies.publish_changes(summary=live, user=None),
        second=lambda: checking.record_results(token=token, results=results(ids, State.BROKEN)),
    )

    live.refresh_from_db()
    assert live.tldr == "Revised words."
    assert not Summary.objects.filter(working_copy_of=live).exists()
    assert set(Source.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"broken"}
    assert NotificationEvent.objects.filter(summary=live, kind="source_problem").count() == 2


def test_a_key_phrase_is_set_through_the_api_while_a_worker_records_checks(monkeypatch):
    """An editor's tool sets a key phrase of a live summary (on its unpublished changes)
    while a worker records checks of its sources and finds them broken: the request locks
    the live summary, then writes the copy's citation; the worker tells the summary's
    editors (a row pointing at the live summary) after writing the citations' verdicts."""
    live = SummaryFactory(live=True, tldr="Live words.")
    cite(live, FAST, SLOW)
    copies.start_working_copy(summary=live)
    citation = Citation.objects.filter(summary__working_copy_of=live).earliest("position")
    token, ids = claim(FAST, SLOW)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=EditorFactory()).key}")
    interleaving = Interleaving()
    edit_target = copies.edit_target

    def paused_then_targeted(**kwargs):
        interleaving.pause()  # the live summary is locked; no citation written yet
        return edit_target(**kwargs)

    monkeypatch.setattr(copies, "edit_target", paused_then_targeted)

    def set_key_phrase():
        url = f"/api/v1/summaries/{live.video.slug}/citations/{citation.pk}/"
        response = api.patch(url, {"key_phrase": "faster"}, format="json", HTTP_IF_MATCH="*")
        assert response.status_code == 200, response.content

    interleaving.run(
        first=set_key_phrase,
        second=lambda: checking.record_results(token=token, results=results(ids, State.BROKEN)),
    )

    citation.refresh_from_db()
    assert citation.key_phrase == "faster"
    assert NotificationEvent.objects.filter(summary=live, kind="source_problem").count() == 2


def test_a_draft_and_its_key_phrase_are_saved_while_a_worker_records_checks():
    """The admin's save of a draft, in one transaction: the summary with its parts (which
    makes cached pages stale: the content generation row), then a key phrase typed in the
    citation table; meanwhile a worker records a check of that citation's source (its
    verdict, then the checks generation on the same row). The verdict is about the phrase
    the editor saved."""
    draft = SummaryFactory(tldr="Draft words.")
    cite(draft, FAST)
    citation = Citation.objects.get(summary=draft)
    token, ids = claim(FAST)
    interleaving = Interleaving()

    def save_then_set_key_phrase():
        with transaction.atomic():
            save.save_summary(summary=draft, parts={}, user=None)
            interleaving.pause()
            derived.set_key_phrase(citation=citation, phrase="2.5 times faster", user=None)

    interleaving.run(
        first=save_then_set_key_phrase,
        second=lambda: checking.record_results(
            token=token, results=results(ids, State.OK, text="Opus is 2.5 times faster.")
        ),
    )

    citation.refresh_from_db()
    assert citation.key_phrase == "2.5 times faster"
    assert citation.verdict == Citation.Verdict.SUPPORTED
    assert Source.objects.get(pk=ids[0]).state == "ok"


def test_a_link_to_a_source_being_checked_is_added_while_its_check_is_recorded(monkeypatch):
    """An editor adds a link to a source whose check is being recorded, before a link the
    summary had (which moves down: its citation is written again); the worker records the
    checks of both sources. The new citation points at the new link's source row, which
    the worker holds."""
    other = SummaryFactory()
    cite(other, OTHER)  # the source exists, cited elsewhere
    draft = SummaryFactory(tldr="Draft words.")
    chapter = cite(draft, FAST)
    token, ids = claim(FAST, OTHER)
    chapter.body = f"New claim [notes]({OTHER}). {chapter.body}"
    interleaving = Interleaving()
    create = Citation.objects.bulk_create

    def paused_then_created(objs, *args, **kwargs):
        interleaving.pause()  # the kept citation is written; the new one not yet
        return create(objs, *args, **kwargs)

    monkeypatch.setattr(Citation.objects, "bulk_create", paused_then_created)

    interleaving.run(
        first=lambda: save.save_summary(summary=draft, parts={Chapter: [chapter]}, user=None),
        second=lambda: checking.record_results(token=token, results=results(ids, State.OK)),
    )

    assert list(
        Citation.objects.filter(summary=draft).order_by("position").values_list("url", flat=True)
    ) == [OTHER, FAST]
    assert set(Source.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"ok"}


def test_a_chapter_is_deleted_while_a_worker_records_checks_of_the_summarys_sources(monkeypatch):
    """An editor deletes a chapter, whose citations are deleted with it, and keeps one
    citing another source; the worker records checks of both sources."""
    draft = SummaryFactory(tldr="Draft words.")
    kept = ChapterFactory(summary=draft, position=1, body=f"Claim [one]({FAST}).")
    ChapterFactory(summary=draft, position=2, body=f"Claim [two]({SLOW}).")
    derived.refresh_derived_data(summary=draft)
    token, ids = claim(FAST, SLOW)
    interleaving = Interleaving()
    sync = derived.sync_citations

    def paused_then_synced(**kwargs):
        interleaving.pause()  # the chapter and its citation are deleted
        return sync(**kwargs)

    monkeypatch.setattr(derived, "sync_citations", paused_then_synced)

    interleaving.run(
        first=lambda: save.save_summary(summary=draft, parts={Chapter: [kept]}, user=None),
        second=lambda: checking.record_results(token=token, results=results(ids, State.OK)),
    )

    assert list(Citation.objects.filter(summary=draft).values_list("url", flat=True)) == [FAST]
    assert set(Source.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"ok"}


def test_citations_are_rebuilt_while_a_worker_records_checks_of_their_sources(monkeypatch):
    """`rerender_summary` (run after the Markdown rules change) rebuilds the citations from
    the text as stored: one link is gone (its citation deleted), another's claim reads
    differently (its citation written again, after the deletion)."""
    draft = SummaryFactory(tldr="Draft words.")
    chapter = cite(draft, FAST, SLOW)
    Chapter.objects.filter(pk=chapter.pk).update(body=f"Another claim [source 1]({FAST}).")
    token, ids = claim(FAST, SLOW)
    interleaving = Interleaving()
    update = Citation.objects.bulk_update

    def paused_then_updated(objs, *args, **kwargs):
        interleaving.pause()  # the removed link's citation is deleted
        return update(objs, *args, **kwargs)

    monkeypatch.setattr(Citation.objects, "bulk_update", paused_then_updated)

    interleaving.run(
        first=lambda: derived.rerender_summary(summary=draft),
        second=lambda: checking.record_results(token=token, results=results(ids, State.OK)),
    )

    claims = Citation.objects.filter(summary=draft).values_list("claim", flat=True)
    assert [claim.split(" source")[0] for claim in claims] == ["Another claim"]
    assert set(Source.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"ok"}


# --- Two editors --------------------------------------------------------------------------


def admin_save(summary: Summary, **changes: str) -> Callable[[], None]:
    """A reviewer's save of the summary's admin page with these changes (the page read
    now, posted when called)."""
    client = Client()
    client.force_login(ReviewerFactory())
    url = reverse("admin:summaries_summary_change", args=[summary.pk])
    data = {**form_fields(client.get(url)), **changes}

    def post() -> None:
        response = client.post(url, data)
        assert response.status_code == 302, response.content.decode()[:3000]

    return post


@pytest.fixture
def changed():
    """A live summary with unpublished changes."""
    live = SummaryFactory(live=True, tldr="Live words.")
    cite(live, FAST, SLOW)
    copy, _ids = copies.start_working_copy(summary=live)
    Summary.objects.filter(pk=copy.pk).update(tldr="Revised words.")
    return live


def pause_before_saving(monkeypatch, interleaving: Interleaving) -> None:
    """The admin's save stops once its form was checked (which locks the summary it
    saves, the working copy) and before anything is written."""
    save_summary = save.save_summary

    def paused_then_saved(**kwargs):
        interleaving.pause()
        return save_summary(**kwargs)

    monkeypatch.setattr(save, "save_summary", paused_then_saved)


def test_changes_are_published_while_another_editor_saves_them(monkeypatch, changed):
    """The save locks the changes (its form's check against a save meanwhile), then their
    citations; publishing locks the live summary and the changes before their citations
    too, and publishes them as saved."""
    save_them = admin_save(changed, tldr="Saved again.")
    interleaving = Interleaving()
    pause_before_saving(monkeypatch, interleaving)

    interleaving.run(
        first=save_them, second=lambda: copies.publish_changes(summary=changed, user=None)
    )

    changed.refresh_from_db()
    assert changed.tldr == "Saved again."  # published as saved
    assert not Summary.objects.filter(working_copy_of=changed).exists()


def test_changes_are_discarded_while_another_editor_saves_them(monkeypatch, changed):
    """Discarding locks the changes before their citations, as the save does."""
    save_them = admin_save(changed, tldr="Saved again.")
    interleaving = Interleaving()
    pause_before_saving(monkeypatch, interleaving)

    interleaving.run(
        first=save_them, second=lambda: copies.discard_changes(summary=changed, user=None)
    )

    changed.refresh_from_db()
    assert changed.tldr == "Live words."
    assert not Summary.objects.filter(working_copy_of=changed).exists()


def test_scheduled_changes_go_live_while_a_reviewer_publishes_them(monkeypatch, changed):
    """Celery beat publishes the changes when their time comes, as a reviewer presses
    Publish: both lock the live summary, then the changes. They go live once."""
    copy = Summary.objects.get(working_copy_of=changed)
    at = timezone.now() + timedelta(minutes=1)
    copies.publish_changes(summary=changed, at=at)
    interleaving = Interleaving()
    lock_live = copies._lock_live

    def paused_then_locked(pk):
        if not interleaving.paused.is_set():  # the scheduled publication's, not the other
            interleaving.pause()
        return lock_live(pk)

    monkeypatch.setattr(copies, "_lock_live", paused_then_locked)

    interleaving.run(
        first=lambda: copies.publish_due_changes(now=at + timedelta(seconds=1)),
        second=lambda: copies.publish_changes(summary=changed, user=None),
    )

    changed.refresh_from_db()
    assert changed.tldr == "Revised words."
    assert not Summary.objects.filter(pk=copy.pk).exists()
