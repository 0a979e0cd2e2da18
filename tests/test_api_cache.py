"""Anonymous API reads from the page cache: as fast as pages, stale on
the same events (publish, unpublish, edits going live) and on every recorded check, with
the API's own ETag, Last-Modified and Cache-Control."""

import gzip

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries import checking
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
    with django_assert_num_queries(4):  # rendered again (and not stored)
        client.get("/api/v1/summaries/", {"made_up": "1"})
    client.get("/api/v1/summaries/", {"search": "words"})
    with django_assert_num_queries(1):  # a parameter it reads: kept
        client.get("/api/v1/summaries/", {"search": "words"})


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
