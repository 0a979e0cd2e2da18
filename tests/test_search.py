import datetime

import pytest
from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from summaries.editing import derived
from summaries.models import Summary
from summaries.reader import search
from summaries.reader.search import (
    MAX_QUERY_CHARS,
    SEARCH_CONFIG,
    StoredSearchVector,
    clean_query,
    search_summaries,
)

from .factories import ChapterFactory, SummaryFactory, TakeawayFactory

pytestmark = pytest.mark.django_db

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL full-text search only"
)


def indexed(summary):
    """The summary's search text, as the admin's save fills it."""
    return derived.update_search_document(summary=summary)


def found(query, **kwargs):
    return list(search_summaries(query, **kwargs))


def test_finds_by_title():
    summary = indexed(SummaryFactory(live=True, video__title="Inference chips compared"))
    indexed(SummaryFactory(live=True))

    assert found("inference chips") == [summary]


def test_finds_by_thirty_second_text():
    summary = indexed(SummaryFactory(live=True, tldr="Distillation makes small models useful."))

    assert found("distillation") == [summary]


def test_finds_by_takeaway_text():
    summary = SummaryFactory(live=True)
    TakeawayFactory(summary=summary, text="Quantisation halves **memory** use.")
    indexed(summary)

    assert found("quantisation memory") == [summary]


def test_finds_by_chapter_text():
    summary = SummaryFactory(live=True)
    ChapterFactory(summary=summary, body="The [tokenizer](https://example.com/t) is slow.")
    indexed(summary)

    assert found("tokenizer slow") == [summary]


def test_every_word_must_match():
    indexed(SummaryFactory(live=True, tldr="Distillation makes small models useful."))

    assert found("distillation zeppelin") == []


def test_never_finds_drafts_in_review_or_scheduled_summaries():
    tomorrow = timezone.now() + datetime.timedelta(days=1)
    for kwargs in (
        {},
        {"status": Summary.Status.IN_REVIEW},
        {"status": Summary.Status.PUBLISHED, "publish_at": tomorrow},
    ):
        indexed(SummaryFactory(tldr="Secret roadmap for robotics.", **kwargs))

    assert found("roadmap") == []
    assert len(found("roadmap", now=tomorrow + datetime.timedelta(seconds=1))) == 1


def test_newest_first_among_equal_matches():
    old = indexed(
        SummaryFactory(
            live=True,
            tldr="Robotics news.",
            publish_at=timezone.now() - datetime.timedelta(days=2),
        )
    )
    new = indexed(SummaryFactory(live=True, tldr="Robotics news."))

    assert found("robotics") == [new, old]


@on_postgresql
def test_title_match_ranks_above_body_only_match():
    title = indexed(
        SummaryFactory(
            live=True,
            video__title="Robotics in factories",
            publish_at=timezone.now() - datetime.timedelta(days=2),
        )
    )
    body = indexed(SummaryFactory(live=True, tldr="A short aside on robotics."))

    assert found("robotics") == [title, body]


@on_postgresql
def test_matching_can_use_the_gin_index():
    indexed(SummaryFactory(live=True, tldr="Robotics news."))
    matches = Summary.objects.alias(document=StoredSearchVector()).filter(
        document=SearchQuery("robotics", config=SEARCH_CONFIG, search_type="websearch")
    )
    with connection.cursor() as cursor:
        # Tiny tables are cheaper to scan; forbid that to see whether the index applies.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")

    plan = matches.explain()

    assert "Bitmap Index Scan on summary_search_vector_gin" in plan, plan


HOSTILE = [
    "",
    "   \t\n ",
    "x" * 10_000,
    "robotics " * 2_000,
    "'",
    '"',
    '"unclosed phrase',
    "\\",
    "\\\\'",
    "%",
    "_",
    "%_%",
    "'; DROP TABLE summaries_summary; --",
    "1' OR '1'='1",
    "robotics & | ! : * ( ) < >",
    "!!robotics",
    "robotics:*",
    "(robotics",
    "<->",
    "a <-> b",
    "-",
    "or",
    "the and of",
    "\x00",
    "robo\x00tics",
    "🤖 robotics 🦾",
    "日本語",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_harmless(query):
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    result = found(query)

    assert isinstance(result, list)
    assert all(summary.is_live() for summary in result)


@pytest.mark.parametrize("query", HOSTILE)
def test_search_page_answers_hostile_queries(client, query):
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    response = client.get(reverse("summaries:search"), {"q": query})

    assert response.status_code == 200


def test_long_queries_are_cut_and_nul_bytes_removed():
    assert len(clean_query("w" * 1_000)) == MAX_QUERY_CHARS
    assert clean_query("one two three four five six seven eight nine ten").split()[-1] == "eight"
    assert clean_query("  robo\x00tics \n ") == "robo tics"
    assert search_summaries("  ").count() == 0


def test_results_can_be_counted_for_pagination():
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    assert search_summaries("robotics").count() == 1


@on_postgresql
def test_only_the_newest_matches_are_ranked(monkeypatch):
    monkeypatch.setattr(search, "MAX_RANKED", 2)
    hour = datetime.timedelta(hours=1)
    oldest = indexed(
        SummaryFactory(live=True, video__title="Robotics", publish_at=timezone.now() - 3 * hour)
    )
    newer = [
        indexed(
            SummaryFactory(
                live=True, tldr="Aside on robotics.", publish_at=timezone.now() - n * hour
            )
        )
        for n in (2, 1)
    ]

    assert found("robotics") == newer[::-1]
    assert oldest not in found("robotics")


def test_results_take_one_query(django_assert_num_queries):
    for n in range(5):
        indexed(SummaryFactory(live=True, tldr=f"Robotics news number {n}."))

    with django_assert_num_queries(1):
        results = found("robotics")

    assert len(results) == 5


def test_views_can_add_related_objects_to_the_results(django_assert_num_queries):
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    with django_assert_num_queries(1):
        (result,) = search_summaries("robotics").select_related("video", "video__channel")
        assert result.video.channel.name
