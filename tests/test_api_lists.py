"""Lean summary lists: what a card needs by default, parts on
?expand=, an optional total with ?count=true, in a fixed number of queries."""

import json

import pytest
from rest_framework.test import APIClient

from summaries.editing import derived
from summaries.models import Caveat
from summaries.pagecache.generation import content_changed

from .factories import (
    AppearanceFactory,
    ChapterFactory,
    KeyPointFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db

PARTS = ["key_points", "takeaways", "chapters", "caveats", "citations"]
WORDS = "Opus is faster on long tasks, and the benchmark shows where it is not. "


@pytest.fixture
def client():
    return APIClient()


def example_like(n: int):
    """A live summary the size of the example: 30 seconds of text, 3 people, 3 topics,
    8 key points, 5 takeaways, 12 chapters of edited transcript citing 36 sources."""
    summary = SummaryFactory(live=True, video__title=f"Summary {n}", tldr=WORDS * 6)
    for _ in range(3):
        AppearanceFactory(video=summary.video)
        summary.video.topics.add(TopicFactory())
    for position in range(1, 9):
        KeyPointFactory(summary=summary, position=position, body=WORDS * 2)
    takeaways = [TakeawayFactory(summary=summary, position=p, text=WORDS) for p in range(1, 6)]
    for position in range(1, 13):
        links = " ".join(
            f"[source {k}](https://site{n}-{position}-{k}.example/page)" for k in range(3)
        )
        ChapterFactory(summary=summary, position=position, body=(WORDS * 12) + links)
    Caveat.objects.create(summary=summary, takeaway=takeaways[0], text=WORDS, position=1)
    derived.refresh_derived_data(summary=summary)
    return summary


def test_a_list_item_is_lean_by_default(client):
    summary = example_like(0)
    item = client.get("/api/v1/summaries/").json()["results"][0]
    for part in PARTS:
        assert part not in item
    assert item["counts"] == {
        "key_points": 8,
        "takeaways": 5,
        "chapters": 12,
        "caveats": 1,
        "citations": 36,
    }
    assert item["slug"] == summary.video.slug and item["tldr"] == summary.tldr
    assert item["video"]["channel"]["slug"] == summary.video.channel.slug
    assert len(item["video"]["people"]) == 3
    assert item["publish_at"] and item["html_url"].endswith(summary.video.get_absolute_url())


def test_a_default_page_of_20_summaries_stays_under_50_kb(client):
    for n in range(20):
        example_like(n)
    lean = client.get("/api/v1/summaries/")
    assert len(lean.json()["results"]) == 20
    assert len(lean.content) < 50_000
    whole = client.get("/api/v1/summaries/", {"expand": ",".join(PARTS)})
    assert len(whole.content) > 5 * len(lean.content)  # what the parts weigh


def test_expand_brings_the_parts_named_as_the_detail_shows_them(client):
    summary = example_like(0)
    item = client.get("/api/v1/summaries/", {"expand": "chapters, citations"}).json()["results"][0]
    detail = client.get(f"/api/v1/summaries/{summary.video.slug}/").json()
    assert item["chapters"] == detail["chapters"]
    assert item["citations"] == detail["citations"]
    assert "key_points" not in item and "caveats" not in item


@pytest.mark.parametrize("value", ["body", "chapters,nope", "all"])
def test_an_unknown_part_is_a_400_naming_expand(client, value):
    example_like(0)
    response = client.get("/api/v1/summaries/", {"expand": value})
    assert response.status_code == 400
    assert "expand" in response.json()["error"]["fields"]


def test_count_is_there_only_when_asked(client):
    for n in range(3):
        SummaryFactory(live=True, video__title=f"S{n}")
    SummaryFactory()  # a draft: not counted for the public
    assert "count" not in client.get("/api/v1/summaries/").json()
    page = client.get("/api/v1/summaries/", {"count": "true", "page_size": 2}).json()
    assert page["count"] == 3 and len(page["results"]) == 2
    assert client.get("/api/v1/channels/", {"count": "true"}).json()["count"] == 4
    assert client.get("/api/v1/summaries/", {"count": "yes"}).status_code == 400


@pytest.mark.parametrize("expand", ["", ",".join(PARTS)])
def test_lists_take_a_fixed_number_of_queries_whatever_they_expand(
    client, django_assert_num_queries, expand
):
    for n in range(2):
        example_like(n)
    # The content generation; the page's ids, their rows with counts, people, topics; each
    # part expanded; when the next scheduled summary goes live (the page cache stores the
    # answer until then at most).
    expected = 1 + 4 + (5 if expand else 0) + 1
    with django_assert_num_queries(expected):
        first = client.get("/api/v1/summaries/", {"expand": expand})
    for n in range(2, 5):
        example_like(n)
    content_changed()  # what publishing does
    with django_assert_num_queries(expected):
        second = client.get("/api/v1/summaries/", {"expand": expand})
    assert len(second.json()["results"]) == 5 > len(first.json()["results"])


def test_the_schema_documents_expand_count_and_the_lean_item(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/summaries/"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"]}
    assert {"expand", "count", "page_size", "cursor"} <= names
    text = json.dumps(schema["components"]["schemas"])
    assert "SummaryListItem" in text and "SummaryCounts" in text


@pytest.mark.parametrize("path", ["/api/v1/summaries/", "/api/v1/videos/"])
def test_a_list_named_no_filter_is_the_list_its_empty_filters_give(client, path, monkeypatch):
    """No filter set is built for a request that names none of its filters (api/filters.py
    FilterBackend); the list is the one the filter set gives with every filter empty, and
    a filter named still filters."""
    from django.core.cache import cache
    from django_filters import FilterSet

    from summaries.pagecache.middleware import forget_local_pages

    SummaryFactory.create_batch(3, live=True)
    other = SummaryFactory(live=True)
    built = []
    original = FilterSet.__init__
    monkeypatch.setattr(
        FilterSet, "__init__", lambda self, *a, **k: built.append(1) or original(self, *a, **k)
    )
    plain = client.get(path).json()["results"]
    assert built == []
    # The same page to the page cache, which drops empty parameters: forget it.
    cache.clear()
    forget_local_pages()
    empty = client.get(path, {"channel": "", "language": ""}).json()["results"]
    assert built
    assert plain == empty and len(plain) == 4
    channel = other.video.channel.slug
    named = client.get(path, {"channel": channel}).json()["results"]
    assert 1 <= len(named) < 4
