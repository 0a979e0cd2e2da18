"""Reading through the API: representations, filters, search, ordering, cursor pages,
related videos, conditional GET and query counts."""

import datetime

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from summaries.editing import derived
from summaries.models import Caveat, Source
from summaries.pagecache.generation import checks_recorded, content_changed

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    OrganisationFactory,
    PersonFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def client():
    return APIClient()


def rich_summary(title="Rich summary", **video):
    """A live summary with every kind of part, a person, a topic and a cited source."""
    summary = SummaryFactory(live=True, video__title=title, **video)
    AppearanceFactory(video=summary.video, organisation=OrganisationFactory())
    summary.video.topics.add(TopicFactory())
    KeyPointFactory(summary=summary)
    takeaway = TakeawayFactory(summary=summary)
    chapter = ChapterFactory(
        summary=summary, body="[Source](https://example.org/page) says it is 2 times faster."
    )
    Caveat.objects.create(summary=summary, chapter=chapter, text="Careful.", position=1)
    Caveat.objects.create(summary=summary, takeaway=takeaway, text="Also.", position=2)
    derived.refresh_derived_data(summary=summary)
    return summary


# --- Representations --------------------------------------------------------------------


def test_channel_representation(client):
    ChannelFactory(name="Alpha", slug="alpha", description="About.", site_url="https://a.example")
    response = client.get("/api/v1/channels/alpha/")
    body = response.json()
    assert body == {
        "slug": "alpha",
        "name": "Alpha",
        "description": "About.",
        "site_url": "https://a.example",
        "url": "http://testserver/api/v1/channels/alpha/",
        "html_url": "http://testserver/channels/alpha/",
        "updated_at": body["updated_at"],
    }


def test_summary_detail_nests_every_part(client):
    summary = rich_summary()
    Source.objects.update(state="ok", status_code=200, title="The page")
    body = client.get(f"/api/v1/summaries/{summary.video.slug}/").json()
    assert list(body) == [
        "slug",
        "url",
        "html_url",
        "status",
        "unpublished_changes",
        "review_note",
        "reviewer",
        "publish_at",
        "first_published_at",
        "lock_version",
        "tldr",
        "video",
        "key_points",
        "takeaways",
        "chapters",
        "caveats",
        "citations",
        "created_at",
        "updated_at",
    ]
    assert body["slug"] == summary.video.slug
    assert body["chapters"][0]["body"].startswith("[Source]")
    assert '<a href="https://example.org/page"' in body["chapters"][0]["body_html"]
    assert body["chapters"][0]["anchor"] == "chapter-" + str(body["chapters"][0]["position"])
    assert [(c["chapter"], c["takeaway"]) for c in body["caveats"]] == [
        (body["chapters"][0]["position"], None),
        (None, body["takeaways"][0]["position"]),
    ]
    (citation,) = body["citations"]
    assert citation["chapter"] == body["chapters"][0]["position"]
    assert citation["key_phrase"] == "2 times faster"
    assert citation["source"] == {
        "url": "https://example.org/page",
        "host": "example.org",
        "state": "ok",
        "status_code": 200,
        "final_url": "",
        "title": "The page",
        "content_type": "",
        "response_ms": None,
        "redirect_chain": [],
        "error_class": "",
        "last_checked_at": None,
    }
    assert citation["verdict"] == "unchecked"
    assert citation["verdict_excerpt"] == ""
    person = body["video"]["people"][0]
    assert set(person) == {"person", "organisation"}
    assert person["organisation"]["url"].startswith("http://testserver/api/v1/organisations/")


def test_markdown_html_is_sanitised(client):
    summary = SummaryFactory(live=True)
    ChapterFactory(
        summary=summary, body='Hi <script>alert(1)</script> <a href="javascript:x">y</a>'
    )
    body = client.get(f"/api/v1/summaries/{summary.video.slug}/").json()
    html = body["chapters"][0]["body_html"]
    assert "<script" not in html and "javascript:" not in html


def test_related_videos_with_reasons(client):
    person = PersonFactory(name="Ada")
    main = SummaryFactory(live=True, video__title="Main")
    other = SummaryFactory(live=True, video__title="Other")
    hidden = SummaryFactory(video__title="Draft twin")
    for summary in (main, other, hidden):
        AppearanceFactory(video=summary.video, person=person)
    response = client.get(f"/api/v1/videos/{main.video.slug}/related/")
    assert response.status_code == 200
    (item,) = response.json()
    assert item["video"]["slug"] == other.video.slug
    assert item["reasons"] == ["also features Ada"]
    assert client.get(f"/api/v1/videos/{hidden.video.slug}/related/").status_code == 404
    assert client.get(f"/api/v1/videos/{main.video.slug}/related/?limit=0").status_code == 400


# --- Filters, search, ordering, pages ---------------------------------------------------


def slugs(response):
    assert response.status_code == 200, response.json()
    return [item["slug"] for item in response.json()["results"]]


def test_summary_filters(client):
    channel, person, topic = ChannelFactory(slug="c1"), PersonFactory(slug="p1"), TopicFactory()
    a = SummaryFactory(live=True, video__channel=channel, video__language="fr")
    b = SummaryFactory(live=True)
    AppearanceFactory(video=b.video, person=person)
    b.video.topics.add(topic)
    old = SummaryFactory(
        status="published", publish_at=timezone.now() - datetime.timedelta(days=30)
    )
    assert slugs(client.get("/api/v1/summaries/?channel=c1")) == [a.video.slug]
    assert slugs(client.get("/api/v1/summaries/?person=p1")) == [b.video.slug]
    assert slugs(client.get(f"/api/v1/summaries/?topic={topic.slug}")) == [b.video.slug]
    assert slugs(client.get("/api/v1/summaries/?language=fr")) == [a.video.slug]
    week_ago = (timezone.now() - datetime.timedelta(days=7)).isoformat()
    assert old.video.slug not in slugs(
        client.get("/api/v1/summaries/", {"published_after": week_ago})
    )
    assert slugs(client.get("/api/v1/summaries/", {"published_before": week_ago})) == [
        old.video.slug
    ]
    assert slugs(client.get("/api/v1/summaries/?person=nobody")) == []
    response = client.get("/api/v1/summaries/?language=xx")
    assert response.status_code == 400
    assert "language" in response.json()["error"]["fields"]


def test_updated_since_returns_what_changed(client):
    first = SummaryFactory(live=True)
    second = SummaryFactory(live=True)
    mark = timezone.now()
    first.tldr = "Changed."
    first.save()
    assert slugs(client.get("/api/v1/summaries/", {"updated_since": mark.isoformat()})) == [
        first.video.slug
    ]
    assert second.video.slug in slugs(client.get("/api/v1/summaries/"))
    assert client.get("/api/v1/summaries/?updated_since=yesterday").status_code == 400


def test_search_finds_live_summaries_only(client):
    found = rich_summary(title="Quantum tunnelling explained")
    SummaryFactory(video__title="Quantum draft")
    for summary in (found,):
        derived.refresh_derived_data(summary=summary)
    draft = SummaryFactory(video__title="Quantum secrets")
    derived.refresh_derived_data(summary=draft)
    assert slugs(client.get("/api/v1/summaries/?search=quantum")) == [found.video.slug]
    assert slugs(client.get("/api/v1/summaries/?search=%00")) != []


def test_video_search_and_filters(client):
    a = SummaryFactory(
        live=True, video__title="Robots at work", video__published_on=datetime.date(2026, 1, 5)
    )
    SummaryFactory(live=True, video__title="Cooking", video__published_on=datetime.date(2026, 3, 1))
    assert slugs(client.get("/api/v1/videos/?search=robots")) == [a.video.slug]
    assert slugs(client.get("/api/v1/videos/?published_before=2026-02-01")) == [a.video.slug]


def test_ordering_choices(client):
    older = SummaryFactory(
        status="published", publish_at=timezone.now() - datetime.timedelta(days=2)
    )
    newer = SummaryFactory(live=True)
    assert slugs(client.get("/api/v1/summaries/")) == [newer.video.slug, older.video.slug]
    assert slugs(client.get("/api/v1/summaries/?ordering=publish_at")) == [
        older.video.slug,
        newer.video.slug,
    ]
    response = client.get("/api/v1/summaries/?ordering=tldr")
    assert response.status_code == 400
    assert "ordering" in response.json()["error"]["fields"]


def test_cursor_pages_are_stable_under_inserts(client):
    base = timezone.now() - datetime.timedelta(days=1)
    made = [
        SummaryFactory(status="published", publish_at=base - datetime.timedelta(minutes=n))
        for n in range(5)
    ]
    page = client.get("/api/v1/summaries/?page_size=2").json()
    seen = [item["slug"] for item in page["results"]]
    # A newer summary published meanwhile must not shift the next pages.
    SummaryFactory(live=True)
    while page["next"]:
        page = client.get(page["next"]).json()
        seen += [item["slug"] for item in page["results"]]
    assert seen == [s.video.slug for s in made]
    assert page["previous"] is not None


@pytest.mark.parametrize("cursor", ["zzz", "cD1ub3QtYS1kYXRl", "cD0lMDA=", "cj14"])
def test_bad_cursors_are_400(client, cursor):
    SummaryFactory(live=True)
    response = client.get("/api/v1/summaries/", {"cursor": cursor})
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"cursor": ["Invalid cursor."]}


@pytest.mark.parametrize(
    "value", ["2026-01-01T00:00:00+20:00", "0001-01-01T00:00:00+20:00", "9999-12-31T23:00-20:00"]
)
def test_times_with_any_offset_are_compared_in_utc(client, value):
    SummaryFactory(live=True)
    for url in ("/api/v1/summaries/", "/api/v1/videos/", "/api/v1/channels/"):
        response = client.get(url, {"updated_since": value})
        assert response.status_code in (200, 400), response.json()
    response = client.get("/api/v1/summaries/", {"updated_since": "2026-01-01T00:00:00+20:00"})
    assert response.status_code == 200


@pytest.mark.parametrize("position", ["2026-01-01 00:00:00+20:00", "0001-01-01 00:00:00+20:00"])
def test_cursor_times_with_any_offset(client, position):
    import base64
    from urllib.parse import urlencode

    SummaryFactory(live=True)
    cursor = base64.b64encode(urlencode({"p": position}).encode()).decode()
    response = client.get("/api/v1/summaries/", {"cursor": cursor})
    assert response.status_code in (200, 400)


def test_page_size_is_capped(client):
    for _ in range(3):
        ChannelFactory()
    assert len(client.get("/api/v1/channels/?page_size=2").json()["results"]) == 2
    assert len(client.get("/api/v1/channels/?page_size=100000").json()["results"]) == 3


@pytest.mark.parametrize("value", ["abc", "0", "-1", "1.5", "2; drop"])
def test_a_page_size_that_is_no_whole_number_is_a_400_naming_it(client, value):
    ChannelFactory()
    assert client.get("/api/v1/channels/", {"page_size": ""}).status_code == 200  # default
    response = client.get("/api/v1/channels/", {"page_size": value})
    assert response.status_code == 400
    assert "page_size" in response.json()["error"]["fields"]


# --- Conditional GET and caching --------------------------------------------------------


def test_conditional_get_with_etag_and_last_modified(client):
    summary = rich_summary()
    url = f"/api/v1/summaries/{summary.video.slug}/"
    first = client.get(url)
    assert first["Cache-Control"] == "public, max-age=60, s-maxage=60"
    assert first["ETag"].startswith(f'"{summary.lock_version}-')
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    not_modified = client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert not_modified.status_code == 304
    assert not_modified["ETag"] == first["ETag"]
    assert not_modified.content == b""

    # A source's check result is part of the representation: a new ETag.
    Source.objects.update(state="broken", status_code=404, updated_at=timezone.now())
    checks_recorded()  # what recording a check does: cached API responses are stale
    changed = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200
    assert changed["ETag"] != first["ETag"]


def test_lists_have_etags_too(client):
    SummaryFactory(live=True)
    first = client.get("/api/v1/summaries/")
    assert client.get("/api/v1/summaries/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    SummaryFactory(live=True)
    content_changed()  # what publishing does
    assert client.get("/api/v1/summaries/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200


def test_signed_in_reads_are_private(client):
    client.force_authenticate(EditorFactory())
    response = client.get("/api/v1/summaries/")
    assert "private" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
    assert "Authorization" in response["Vary"]


def test_errors_are_not_cached(client):
    response = client.get("/api/v1/summaries/nope/")
    assert response.status_code == 404
    assert "no-store" in response["Cache-Control"]


# --- Query counts -----------------------------------------------------------------------

# An anonymous read reads the content generation (the page cache's, one query), and when it
# misses the page cache also looks up when the next scheduled summary goes live (how long it
# may be kept): two queries more than the list itself.
GENERATION = 1
STORE = GENERATION + 1
LIST_QUERIES = {
    # lean items: the page's ids, their rows with counts, people, topics
    "/api/v1/summaries/": 4,
    "/api/v1/videos/": 3,
    "/api/v1/channels/": 1,
    "/api/v1/people/": 1,
    "/api/v1/topics/": 1,
    "/api/v1/organisations/": 1,
}


def make_content(count):
    for n in range(count):
        rich_summary(title=f"Summary {n}")


@pytest.mark.parametrize("url", list(LIST_QUERIES))
@pytest.mark.parametrize("size", [1, 6])
def test_lists_use_a_fixed_number_of_queries(client, django_assert_num_queries, url, size):
    make_content(size)
    with django_assert_num_queries(LIST_QUERIES[url] + STORE):
        response = client.get(url)
    assert len(response.json()["results"]) == size
    with django_assert_num_queries(GENERATION):  # the same list again: from the page cache
        assert client.get(url).json() == response.json()


@pytest.mark.parametrize("size", [1, 6])
def test_editor_lists_use_a_fixed_number_of_queries(django_assert_num_queries, size):
    make_content(size)
    SummaryFactory()  # a draft, seen by editors
    client = APIClient()
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=EditorFactory())
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    # Token and user (for the page cache, which serves read-only tokens, once per process
    # and minute; then for the API), the user's and its groups' permissions, then the list.
    with django_assert_num_queries(4 + LIST_QUERIES["/api/v1/summaries/"]):
        response = client.get("/api/v1/summaries/")
    assert len(response.json()["results"]) == size + 1


def test_detail_query_count(client, django_assert_num_queries):
    summary = rich_summary()
    with django_assert_num_queries(8 + STORE):
        client.get(f"/api/v1/summaries/{summary.video.slug}/")


def test_related_queries_do_not_grow_with_the_results(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    summary = rich_summary()
    counts = []
    for n in range(2):
        for m in range(2 * n + 1):
            other = rich_summary(title=f"Other {n}.{m}")
            other.video.topics.add(*summary.video.topics.all())
        content_changed()  # what the write paths do: the cached answer is stale
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/api/v1/videos/{summary.video.slug}/related/")
        assert response.status_code == 200
        counts.append((len(response.json()), len(queries)))
    assert counts[0][0] < counts[1][0]
    assert counts[0][1] == counts[1][1]
