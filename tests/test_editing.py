"""summaries.editing: workflow, citations and search text derived from the text, warnings."""

import datetime

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from reversion.models import Version

from summaries import tasks
from summaries.editing import derived, rules, save, workflow
from summaries.models import Caveat, Chapter, Citation, Source, Summary

from .factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    OrganisationFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
)

pytestmark = pytest.mark.django_db

CHAPTER_TWO = (
    "I have been using Claude Opus 4.6 Fast Mode and find it extremely fast. "
    "[Anthropic says](https://www.anthropic.com/research/measuring-agent-autonomy) that this "
    "mode generates output 2.5 times faster than regular Opus 4.6.\n\n"
    "OpenAI has also released GPT-5.3-Codex-Spark, which it says can generate more than 1,000 "
    "tokens per second on Cerebras hardware. Its [February 2026 announcement]"
    "(https://openai.com/index/introducing-gpt-5-3-codex-spark/) described a smaller coding "
    "model offered as a research preview, initially to ChatGPT Pro users."
)


def test_scheduled_summary_goes_live_at_its_time_without_any_job():
    summary = SummaryFactory()
    at = timezone.now() + datetime.timedelta(hours=3)
    workflow.publish_summary(summary=summary, user=ReviewerFactory(), at=at)
    assert not Summary.objects.published().filter(pk=summary.pk).exists()
    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert Summary.objects.published().filter(pk=summary.pk).exists()


def test_publish_unpublish_and_review_are_recorded_in_history():
    user = ReviewerFactory(username="bob")
    summary = SummaryFactory()
    workflow.submit_for_review(summary=summary, user=user)
    workflow.publish_summary(summary=summary, user=user)
    workflow.unpublish_summary(summary=summary, user=user)
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT
    assert summary.publish_at is None
    assert summary.first_published_at is not None
    comments = [v.revision.get_comment() for v in Version.objects.get_for_object(summary)]
    assert comments == ["Unpublished", "Published", "Sent for review"]
    assert all(v.revision.user == user for v in Version.objects.get_for_object(summary))


def test_publishing_needs_the_thirty_second_text():
    summary = SummaryFactory(tldr="  ")
    with pytest.raises(ValidationError) as error:
        workflow.publish_summary(summary=summary)
    assert "tldr" in error.value.message_dict
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT


def test_sync_citations_extracts_links_claims_and_shares_sources():
    first = SummaryFactory()
    ChapterFactory(summary=first, body=CHAPTER_TWO)
    second = SummaryFactory()
    ChapterFactory(
        summary=second,
        body="See [the post](https://WWW.anthropic.com:443/research/measuring-agent-autonomy#x).",
    )
    citations = derived.sync_citations(summary=first)
    derived.sync_citations(summary=second)
    assert [c.link_text for c in citations] == ["Anthropic says", "February 2026 announcement"]
    assert citations[0].claim == (
        "Anthropic says that this mode generates output 2.5 times faster than regular Opus 4.6."
    )
    assert citations[0].key_phrase == "2.5 times faster"
    assert Source.objects.count() == 2  # the second summary's link shares the first source
    assert Source.objects.get(host="www.anthropic.com").citations.count() == 2


def test_sync_citations_keeps_editor_phrases_and_drops_removed_links():
    summary = SummaryFactory()
    chapter = ChapterFactory(summary=summary, body=CHAPTER_TWO)
    derived.sync_citations(summary=summary)
    anthropic = Citation.objects.get(link_text="Anthropic says")
    anthropic.key_phrase, anthropic.key_phrase_edited = "2.5 times", True
    anthropic.save()

    chapter.body = CHAPTER_TWO.split("\n\n")[0]  # the OpenAI paragraph is removed
    chapter.save()
    derived.sync_citations(summary=summary)
    remaining = list(summary.citations.all())
    assert [c.pk for c in remaining] == [anthropic.pk]
    assert remaining[0].key_phrase == "2.5 times"
    # Running it again changes nothing.
    derived.sync_citations(summary=summary)
    assert list(summary.citations.values_list("pk", "position")) == [(anthropic.pk, 1)]


def test_citations_in_takeaways_and_key_points_are_found_too():
    summary = SummaryFactory()
    TakeawayFactory(summary=summary, text="[OpenAI reported](https://openai.com/x) 1,000 tok/s.")
    KeyPointFactory(summary=summary, body="See [this](https://example.org/a).")
    citations = derived.sync_citations(summary=summary)
    assert {c.url for c in citations} == {"https://openai.com/x", "https://example.org/a"}
    assert all(c.takeaway_id or c.key_point_id for c in citations)


def test_warnings_for_times_figures_and_attribution():
    OrganisationFactory(name="Anthropic", domains="anthropic.com")
    summary = SummaryFactory(video__duration_seconds=120)
    ChapterFactory(summary=summary, title="A", start_time=60)
    ChapterFactory(summary=summary, title="B", start_time=30)
    ChapterFactory(summary=summary, title="C", start_time=500)
    ChapterFactory(
        summary=summary,
        title="D",
        body="[Anthropic says](https://blog.example.com/p) it is 2.5 times faster.",
    )
    TakeawayFactory(summary=summary, text="It is 2.5 times faster.")
    TakeawayFactory(summary=summary, text="It costs $3 billion.")
    derived.sync_citations(summary=summary)
    messages = [str(w) for w in rules.summary_warnings(summary=summary)]
    assert any("“B”" in m and "not after the chapter before it" in m for m in messages)
    assert not any("“C”" in m for m in messages)  # after the video's end: an error, not this
    assert any("$3 billion" in m for m in messages)
    assert not any("2.5 times faster” has no cited source" in m for m in messages)
    assert any("attributed to Anthropic" in m and "blog.example.com" in m for m in messages)


def test_no_warnings_for_a_clean_summary():
    OrganisationFactory(name="Anthropic", domains="anthropic.com")
    OrganisationFactory(name="OpenAI", domains="openai.com")
    summary = SummaryFactory()
    ChapterFactory(summary=summary, body=CHAPTER_TWO, start_time=10)
    TakeawayFactory(
        summary=summary,
        text="OpenAI reported more than 1,000 tokens per second for GPT-5.3-Codex-Spark.",
    )
    derived.sync_citations(summary=summary)
    assert rules.summary_warnings(summary=summary) == []


def test_figure_warnings_read_a_paragraph_of_many_links_once(monkeypatch):
    summary = SummaryFactory()
    links = " ".join(f"[source {i}](https://example.org/{i})" for i in range(200))
    ChapterFactory(summary=summary, body=f"It is 2.5 times faster: {links}")
    TakeawayFactory(summary=summary, text="It costs $3 billion.")
    derived.sync_citations(summary=summary)
    read = []
    normalise = rules._normalise_text
    monkeypatch.setattr(rules, "_normalise_text", lambda text: read.append(text) or normalise(text))

    messages = [str(w) for w in rules.summary_warnings(summary=summary)]

    assert any("$3 billion" in m for m in messages)
    assert len([text for text in read if "source 199" in text]) == 1


def _cited(summary, body, **source_fields):
    """A chapter citing one source, the source's latest check as given."""
    ChapterFactory(summary=summary, body=body)
    citation = derived.sync_citations(summary=summary)[-1]
    Source.objects.filter(pk=citation.source_id).update(**source_fields)
    return citation


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"state": Source.State.BROKEN, "status_code": 404},
            "https://example.org/gone is broken (HTTP 404)",
        ),
        (
            {"state": Source.State.BROKEN, "error": "connection refused", "status_code": None},
            "https://example.org/gone is broken (connection refused)",
        ),
        (
            {"state": Source.State.UNVERIFIABLE, "status_code": 403},
            "https://example.org/gone could not be verified: it answers with a bot wall (HTTP 403)",
        ),
        (
            {"state": Source.State.BLOCKED, "error": "a private address"},
            "https://example.org/gone may not be fetched (a private address)",
        ),
        (
            {"state": Source.State.ERROR, "error": "timed out after 20 s"},
            "https://example.org/gone could not be checked (timed out after 20 s)",
        ),
    ],
)
def test_a_cited_source_that_fails_its_check_is_a_warning(fields, expected):
    summary = SummaryFactory()
    checked = datetime.datetime(2026, 11, 2, 8, 30, tzinfo=datetime.UTC)
    _cited(
        summary,
        "Old numbers [in this post](https://example.org/gone).",
        last_checked_at=checked,
        **fields,
    )
    messages = [str(w) for w in rules.summary_warnings(summary=summary)]
    assert messages == [f"Link “in this post”: {expected}, in the check of 2026-11-02."]


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        (
            Citation.Verdict.NOT_FOUND,
            "the key phrase “2.5 times faster” was not found on https://example.org/post, "
            "in the check of 2026-11-02: check the claim, or change the key phrase.",
        ),
        (
            Citation.Verdict.CHANGED,
            "https://example.org/post has changed since the citation was confirmed, "
            "in the check of 2026-11-02: check the claim still holds, then confirm it again.",
        ),
    ],
)
def test_a_claim_not_found_or_changed_on_its_source_is_a_warning(verdict, expected):
    summary = SummaryFactory()
    citation = _cited(
        summary,
        "It is [2.5 times faster](https://example.org/post) now.",
        state=Source.State.OK,
        status_code=200,
    )
    Citation.objects.filter(pk=citation.pk).update(
        key_phrase="2.5 times faster",
        verdict=verdict,
        verdict_checked_at=datetime.datetime(2026, 11, 2, 8, 30, tzinfo=datetime.UTC),
    )
    messages = [str(w) for w in rules.summary_warnings(summary=summary)]
    assert messages == [f"Link “2.5 times faster”: {expected}"]


def test_healthy_unchecked_redirected_and_ignored_sources_are_no_warning():
    summary = SummaryFactory()
    _cited(summary, "[a](https://example.org/a)")  # not checked yet
    _cited(summary, "[b](https://example.org/b)", state=Source.State.OK, status_code=200)
    _cited(summary, "[c](https://example.org/c)", state=Source.State.REDIRECTED)
    ignored = _cited(summary, "[d](https://example.org/d)", state=Source.State.BROKEN, ignored=True)
    Citation.objects.filter(pk=ignored.pk).update(verdict=Citation.Verdict.NOT_FOUND)
    for verdict in (Citation.Verdict.SUPPORTED, Citation.Verdict.UNAVAILABLE):
        Citation.objects.exclude(pk=ignored.pk).update(verdict=verdict)
        assert rules.summary_warnings(summary=summary) == []


def test_source_warnings_take_one_query_for_any_number_of_citations(django_assert_num_queries):
    summary = SummaryFactory()
    for n in range(5):
        _cited(summary, f"[page {n}](https://example.org/{n})", state=Source.State.BROKEN)
    citations = list(summary.citations.all())
    with django_assert_num_queries(1):
        warnings = rules.source_warnings(citations)
    assert [w.where for w in warnings] == [f"Link “page {n}”" for n in range(5)]


def test_source_warnings_read_no_source_again_when_the_citations_came_with_them(
    django_assert_num_queries,
):
    summary = SummaryFactory()
    for n in range(5):
        _cited(summary, f"[page {n}](https://example.org/{n})", state=Source.State.BROKEN)
    citations = list(summary.citations.select_related("source"))
    with django_assert_num_queries(0):
        warnings = rules.source_warnings(citations)
    assert [w.where for w in warnings] == [f"Link “page {n}”" for n in range(5)]


def test_a_source_created_by_another_save_meanwhile_is_used_not_duplicated(monkeypatch):
    """Sources are read, then the missing ones inserted: a source another save inserted in
    between is taken as it is."""
    raced = Source.objects.create(url="https://example.org/raced", host="example.org")
    monkeypatch.setattr(derived, "_existing_source_ids", lambda urls: {})

    ids, _ = derived._source_ids({"https://example.org/raced", "https://example.org/new"})

    assert ids["https://example.org/raced"] == raced.pk
    assert ids["https://example.org/new"] == Source.objects.get(url="https://example.org/new").pk
    assert Source.objects.count() == 2


def test_new_sources_inserted_claimed_leave_a_source_another_save_created_alone(
    monkeypatch, django_capture_on_commit_callbacks
):
    """A raced source keeps its own claim (none here): queue_checks_for_summary claims it
    like any existing source; only the rows this save inserted are claimed by it."""
    raced = Source.objects.create(url="https://example.org/raced", host="example.org")
    monkeypatch.setattr(derived, "_existing_source_ids", lambda urls: {})

    with django_capture_on_commit_callbacks() as callbacks:
        ids, written = derived._source_ids(
            {"https://example.org/raced", "https://example.org/new"}, claim_new=True
        )

    ((queued, token),) = [callback.args for callback in callbacks]
    new = Source.objects.get(url="https://example.org/new")
    assert queued == [new.pk] and ids["https://example.org/raced"] == raced.pk
    assert (new.check_token, new.claimed_until > timezone.now()) == (token, True)
    assert list(written) == [new.pk]  # as written: the raced row is not
    raced.refresh_from_db()
    assert (raced.check_token, raced.claimed_until) == ("", None)


def test_a_save_that_changes_no_citation_writes_none():
    summary = SummaryFactory()
    ChapterFactory(summary=summary, body=CHAPTER_TWO)
    derived.sync_citations(summary=summary)

    with CaptureQueriesContext(connection) as queries:
        derived.sync_citations(summary=summary)

    writes = [
        q["sql"] for q in queries if not q["sql"].startswith(("SELECT", "SAVEPOINT", "RELEASE"))
    ]
    assert writes == []


def test_set_key_phrase_is_kept_by_extraction_until_emptied():
    summary = SummaryFactory()
    chapter = ChapterFactory(summary=summary, body=CHAPTER_TWO)
    anthropic = derived.sync_citations(summary=summary)[0]
    extracted = anthropic.key_phrase
    editor = EditorFactory(username="dora")

    derived.set_key_phrase(citation=anthropic, phrase=" 2.5\n times ", user=editor)
    chapter.body = CHAPTER_TWO.replace("Fast Mode", "Fast mode")
    chapter.save()
    derived.sync_citations(summary=summary)
    anthropic.refresh_from_db()
    assert (anthropic.key_phrase, anthropic.key_phrase_edited) == ("2.5 times", True)
    comment = Version.objects.get_for_object(summary).first().revision.get_comment()
    assert comment == "Key phrase of “Anthropic says” set to “2.5 times”"

    derived.set_key_phrase(citation=anthropic, phrase="", user=editor)
    anthropic.refresh_from_db()
    assert (anthropic.key_phrase, anthropic.key_phrase_edited) == (extracted, False)

    with pytest.raises(ValidationError) as error:
        derived.set_key_phrase(citation=anthropic, phrase="x" * 201, user=editor)
    assert "key_phrase" in error.value.message_dict


def test_a_key_phrase_set_on_a_live_summary_survives_publishing_its_pending_changes():
    from summaries.editing import copies

    summary = SummaryFactory(live=True)
    ChapterFactory(summary=summary, body=CHAPTER_TWO)
    derived.sync_citations(summary=summary)
    copies.start_working_copy(summary=summary)
    anthropic = summary.citations.get(link_text="Anthropic says")

    with pytest.raises(PermissionDenied):  # never on the live summary itself
        derived.set_key_phrase(citation=anthropic, phrase="2.5 times", user=None)
    copies.set_key_phrase(
        summary=summary, citation_id=anthropic.pk, phrase="2.5 times", user=EditorFactory()
    )
    assert summary.citations.get(link_text="Anthropic says").key_phrase != "2.5 times"
    copies.publish_changes(summary=summary)

    published = summary.citations.get(link_text="Anthropic says")
    assert (published.key_phrase, published.key_phrase_edited) == ("2.5 times", True)


def test_rerender_task_restores_html_and_is_idempotent():
    summary = SummaryFactory()
    chapter = ChapterFactory(summary=summary, body="*x* [a](https://example.org/)")
    Chapter.objects.filter(pk=chapter.pk).update(body_html="stale")
    tasks.rerender_summary(summary.pk)
    tasks.rerender_summary(summary.pk)
    chapter.refresh_from_db()
    assert chapter.body_html.startswith("<p><em>x</em>")
    assert summary.citations.count() == 1
    tasks.rerender_summary(999_999)  # a deleted summary is not an error


def test_a_time_after_the_video_ends_is_named_with_both_times():
    assert rules.time_after_end(600, 600) == "10:00 is after the video ends (10:00)."
    assert rules.time_after_end(599, 600) is None
    assert rules.time_after_end(None, 600) is None


def test_parts_after_end_lists_what_a_shorter_video_would_cut():
    summary = SummaryFactory(video__duration_seconds=3600)
    ChapterFactory(summary=summary, position=1, start_time=100)
    ChapterFactory(summary=summary, position=2, start_time=1900, title="Late")
    TakeawayFactory(summary=summary, position=1, text="Late too.", time=2000)
    assert rules.parts_after_end(summary, 1800) == [
        "Takeaway 1: 33:20 is after the video ends (30:00).",
        "Chapter 2: 31:40 is after the video ends (30:00).",
    ]


def test_built_caveats_are_numbered_in_reading_order_whatever_they_qualify():
    summary = SummaryFactory()
    chapters = [ChapterFactory(summary=summary, position=n) for n in (1, 2)]
    items = [
        {"text": "On the second chapter.", "chapter": 2},
        {"text": "On the summary."},
        {"text": "On the first chapter.", "chapter": 1},
    ]
    existing = {"caveats": [], "chapters": chapters, "key_points": [], "takeaways": []}
    targets = {"chapters": chapters, "key_points": [], "takeaways": []}

    built = save._build_items("caveats", Caveat, items, summary, existing, targets)

    assert [caveat.position for caveat in built] == [1, 2, 3]
    assert [caveat.chapter for caveat in built] == [chapters[1], None, chapters[0]]
