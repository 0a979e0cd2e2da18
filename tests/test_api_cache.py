"""Anonymous API reads from the page cache: as fast as pages, stale on
the same events (publish, unpublish, edits going live) and on every recorded check, with
the API's own ETag, Last-Modified and Cache-Control."""

import base64
import gzip
from urllib.parse import urlencode

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries import checking
from summaries.api.summary_serializers import EXPANDABLE
from summaries.editing import derived, workflow
from summaries.linkcheck import CheckResult, State
from summaries.models import Source
from summaries.pagecache import tokens

from .factories import ChapterFactory, EditorFactory, ReviewerFactory, SummaryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def client():
    return APIClient()


def cited_summary():
    summary = SummaryFactory(live=True, tldr="Live words.")
    ChapterFactory(summary=summary, body="[Source](https://example.org/page) says so.")
    derived.refresh_derived_data(summary=summary)
    return summary


def detail(summary) -> str:
    return f"/api/v1/summaries/{summary.video.slug}/"


def test_a_repeated_anonymous_read_costs_one_query_and_keeps_its_headers(
    client, django_assert_num_queries
):
    summary = cited_summary()
    first = client.get(detail(summary))
    with django_assert_num_queries(2):  # the content generation, once per request
        again = client.get(detail(summary))
        not_modified = client.get(detail(summary), HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.json() == first.json()
    for header in ("ETag", "Last-Modified", "Cache-Control", "Content-Type"):
        assert again[header] == first[header], header
    assert not_modified.status_code == 304 and not_modified["ETag"] == first["ETag"]


def test_a_compressed_read_from_the_cache(client):
    summary = cited_summary()
    plain = client.get(detail(summary))
    packed = client.get(detail(summary), HTTP_ACCEPT_ENCODING="gzip")
    assert packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content


@pytest.mark.parametrize("change", ["unpublish", "edit goes live"])
def test_publishing_events_make_cached_reads_stale(client, change):
    summary = cited_summary()
    editor = ReviewerFactory()
    assert client.get(detail(summary)).status_code == 200
    listed = client.get("/api/v1/summaries/").json()["results"]
    assert [item["tldr"] for item in listed] == ["Live words."]
    if change == "unpublish":
        workflow.unpublish_summary(summary=summary, user=editor)
        assert client.get(detail(summary)).status_code == 404
        assert client.get("/api/v1/summaries/").json()["results"] == []
    else:
        from summaries.editing import copies

        copy, _ = copies.start_working_copy(summary=summary, user=editor)
        copy.tldr = "New words."
        copy.save()
        workflow.publish_summary(summary=summary, user=editor)
        assert client.get(detail(summary)).json()["tldr"] == "New words."
        listed = client.get("/api/v1/summaries/").json()["results"]
        assert [item["tldr"] for item in listed] == ["New words."]


def record(source, **found):
    token, _ = checking.claim_sources(queryset=Source.objects.filter(pk=source.pk), limit=1)
    result = CheckResult(url=source.url, final_url=source.url, **found)
    checking.record_results(token=token, results={source.pk: result})


def test_every_recorded_check_shows_at_once(client):
    # A check that finds the page as before changes nothing readers see (pages stay
    # cached), but the API shows its time and response time: its cached reads go stale.
    summary = cited_summary()
    source = Source.objects.get()
    record(source, state=State.OK, status=200, response_ms=100)
    before = client.get(detail(summary)).json()["citations"][0]["source"]
    assert (before["state"], before["response_ms"]) == ("ok", 100)
    record(source, state=State.OK, status=200, response_ms=250)
    after = client.get(detail(summary)).json()["citations"][0]["source"]
    assert (after["state"], after["response_ms"]) == ("ok", 250)
    assert after["last_checked_at"] != before["last_checked_at"]


def test_signed_in_clients_are_never_served_a_cached_read(client):
    summary = cited_summary()
    draft = SummaryFactory()
    assert client.get("/api/v1/summaries/").status_code == 200  # cached for anonymous
    editor = APIClient()
    editor.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=EditorFactory())}")
    response = editor.get("/api/v1/summaries/")
    slugs = {item["slug"] for item in response.json()["results"]}
    assert slugs == {summary.video.slug, draft.video.slug}
    assert "private" in response["Cache-Control"]


def test_parameters_the_api_does_not_read_are_never_stored(client, django_assert_num_queries):
    cited_summary()
    client.get("/api/v1/summaries/", {"made_up": "1"})
    with django_assert_num_queries(5):  # rendered again (and not stored)
        client.get("/api/v1/summaries/", {"made_up": "1"})
    client.get("/api/v1/summaries/", {"count": "true"})
    with django_assert_num_queries(1):  # a parameter it reads: kept
        client.get("/api/v1/summaries/", {"count": "true"})


def test_a_client_that_does_not_accept_json_still_gets_a_406(client):
    summary = cited_summary()
    assert client.get(detail(summary)).status_code == 200
    assert client.get(detail(summary), HTTP_ACCEPT="application/xml").status_code == 406


def test_reads_from_a_read_replica_are_not_kept(client, settings, monkeypatch):
    # A lagging replica's answer, cached after a change, would outlive it.
    summary = cited_summary()
    monkeypatch.setitem(settings.DATABASES, "replica", settings.DATABASES["default"])
    client.get(detail(summary))
    with CaptureQueriesContext(connection) as queries:
        response = client.get(detail(summary))
    assert response.status_code == 200
    assert len(queries) > 0  # rendered again, not served from the page cache


# --- Read-only tokens: read like anonymous GETs --------------------------------------------


@pytest.fixture
def reader():
    """A client with the token of a user who is no editor: it reads what everyone reads."""
    tokens.forget_all()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=UserFactory())}")
    yield client
    tokens.forget_all()


def test_a_read_only_token_is_served_the_cached_read(client, reader, django_assert_num_queries):
    summary = cited_summary()
    anonymous = client.get(detail(summary))
    # Which user the token is (once per process), and the content generation.
    with django_assert_num_queries(2):
        first = reader.get(detail(summary))
    with django_assert_num_queries(1):
        again = reader.get(detail(summary))
    assert first.content == again.content == anonymous.content
    assert "public" in again["Cache-Control"] and again["ETag"] == anonymous["ETag"]


def test_a_read_only_tokens_read_is_kept_for_everyone(client, reader, django_assert_num_queries):
    summary = cited_summary()
    SummaryFactory()  # a draft: nobody here may see it
    fresh = reader.get("/api/v1/summaries/")
    assert [item["slug"] for item in fresh.json()["results"]] == [summary.video.slug]
    assert "public" in fresh["Cache-Control"]
    with django_assert_num_queries(1):  # the content generation
        assert client.get("/api/v1/summaries/").content == fresh.content


def test_an_editors_token_read_is_never_kept_or_served_from_the_cache(client, reader):
    summary = cited_summary()
    draft = SummaryFactory()
    editor = APIClient()
    editor.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=EditorFactory())}")
    for _ in range(2):
        response = editor.get("/api/v1/summaries/")
        slugs = {item["slug"] for item in response.json()["results"]}
        assert slugs == {summary.video.slug, draft.video.slug}
        assert "private" in response["Cache-Control"]
    for other in (client, reader):
        slugs = [item["slug"] for item in other.get("/api/v1/summaries/").json()["results"]]
        assert slugs == [summary.video.slug]


@pytest.mark.parametrize("token", ["no-such-token", "inactive"])
def test_a_bad_token_is_refused_even_when_the_read_is_cached(client, token):
    summary = cited_summary()
    tokens.forget_all()
    assert client.get(detail(summary)).status_code == 200  # cached now
    if token == "inactive":
        token = Token.objects.create(user=UserFactory(is_active=False)).key
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    for _ in range(2):
        assert stranger.get(detail(summary)).status_code == 401


# --- What is stored: canonical answers only ------------------------------------------------
# Anyone can vary a query string; only answers to a bounded set of canonical queries may be
# kept, or each variation would add an entry (an expanded list is hundreds of KB).


def stored_answers() -> int:
    return sum(1 for key in cache._cache if ":page:" in key)


def expanded_summaries(count: int = 3):
    for _ in range(count):
        cited_summary()


def test_search_answers_are_served_but_never_stored(client):
    expanded_summaries()
    before = stored_answers()
    for number in range(20):
        response = client.get("/api/v1/summaries/", {"search": f"zz{number}"})
        assert response.status_code == 200
    assert stored_answers() == before


def test_only_the_default_and_the_largest_page_size_are_stored(client, settings):
    expanded_summaries()
    client.get("/api/v1/summaries/", {"expand": ",".join(EXPANDABLE)})
    before = stored_answers()
    for size in range(2, 52):
        response = client.get(
            "/api/v1/summaries/", {"expand": ",".join(EXPANDABLE), "page_size": size}
        )
        assert response.status_code == 200
    assert stored_answers() == before
    largest = {"expand": ",".join(EXPANDABLE), "page_size": settings.API_MAX_PAGE_SIZE}
    client.get("/api/v1/summaries/", largest)
    assert stored_answers() == before + 2  # with and without gzip


def test_parts_to_expand_are_stored_in_one_spelling(client):
    expanded_summaries()
    client.get("/api/v1/summaries/", {"expand": "key_points,chapters"})
    before = stored_answers()
    for spelling in (
        "chapters,key_points",
        "key_points,chapters,key_points",
        "key_points, chapters",
    ):
        assert client.get("/api/v1/summaries/", {"expand": spelling}).status_code == 200
    assert stored_answers() == before


def test_a_cursor_from_a_next_link_is_stored_and_a_made_up_one_is_not(client, settings):
    settings.API_MAX_PAGE_SIZE = 1  # pages of the largest size are kept
    for _ in range(3):
        SummaryFactory(live=True)
    first = client.get("/api/v1/summaries/", {"page_size": 1}).json()
    before = stored_answers()
    for minute in range(20):
        made_up = {"p": f"2026-01-01T00:{minute:02d}:00+00:00"}
        cursor = base64.b64encode(urlencode(made_up).encode()).decode()
        response = client.get("/api/v1/summaries/", {"page_size": 1, "cursor": cursor})
        assert response.status_code == 200
    assert stored_answers() == before
    following = client.get(first["next"])
    assert following.status_code == 200
    assert stored_answers() == before + 2


@pytest.mark.parametrize(
    "query",
    [
        {"updated_since": "2026-01-01T00:00:01Z"},
        {"published_after": "2026-01-02"},
        {"channel": "no-such-channel"},
    ],
)
def test_filters_with_unbounded_values_are_served_but_not_stored(client, query):
    expanded_summaries()
    before = stored_answers()
    assert client.get("/api/v1/summaries/", query).status_code == 200
    assert stored_answers() == before


def test_a_filter_naming_a_channel_with_summaries_is_stored(client):
    summary = cited_summary()
    before = stored_answers()
    client.get("/api/v1/summaries/", {"channel": summary.video.channel.slug})
    assert stored_answers() == before + 2


def test_a_representation_chosen_by_a_media_type_parameter_is_never_stored(client):
    summary = cited_summary()
    indented = client.get(detail(summary), HTTP_ACCEPT="application/json; indent=8")
    assert indented.status_code == 200 and b'\n        "' in indented.content
    plain = client.get(detail(summary))
    assert b"\n" not in plain.content
    again = client.get(detail(summary), HTTP_ACCEPT="application/json; indent=8")
    assert b'\n        "' in again.content  # not the stored compact one either
