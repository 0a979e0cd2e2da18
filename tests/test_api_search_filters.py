"""The API's summary list filters with the search page's FilterSet: each filter means the
same on both, bad values answer 400 naming the field, drafts never appear, the schema
documents every parameter."""

import datetime

import pytest
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.models import Summary
from summaries.reader.search_filters import FILTER_NAMES, SearchFilter, filter_choices

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    EditorFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
)
from .test_search import HOSTILE

pytestmark = pytest.mark.django_db

LIST = "/api/v1/summaries/"


@pytest.fixture
def api():
    return APIClient()


def slugs(response) -> set[str]:
    assert response.status_code == 200, response.json()
    return {item["slug"] for item in response.json()["results"]}


def summary(channel=None, person=None, topic=None, **video):
    """A live summary with the video, person and topic given (the factory's otherwise)."""
    made = SummaryFactory(live=True, **({"video__channel": channel} if channel else {}), **video)
    AppearanceFactory(video=made.video, **({"person": person} if person else {}))
    if topic is not None:
        made.video.topics.add(topic)
    return made


@pytest.fixture
def catalogue():
    """Live summaries differing in each filter, and drafts and a scheduled summary that
    match every filter."""
    channel, person, topic = ChannelFactory(slug="lab"), PersonFactory(slug="ada"), TopicFactory()
    made = {
        "channel": summary(channel=channel, video__published_on=datetime.date(2026, 1, 10)),
        "person": summary(person=person, video__published_on=datetime.date(2026, 3, 10)),
        "topic": summary(topic=topic, video__published_on=datetime.date(2026, 5, 10)),
        "language": summary(video__language="fr", video__published_on=datetime.date(2026, 7, 1)),
    }
    everything = {
        "video__channel": channel,
        "video__language": "fr",
        "video__published_on": datetime.date(2026, 3, 10),
    }
    hidden = [
        SummaryFactory(**everything),  # a draft
        SummaryFactory(status=Summary.Status.IN_REVIEW, **everything),
        SummaryFactory(
            status=Summary.Status.PUBLISHED,
            publish_at=timezone.now() + datetime.timedelta(days=1),
            **everything,
        ),
    ]
    for draft in hidden:
        AppearanceFactory(video=draft.video, person=person)
        draft.video.topics.add(topic)
    return made, topic, hidden


def search_page_finds(params: dict) -> set[str]:
    """What the search page's FilterSet finds for `params` (the page lists these)."""
    found = SearchFilter(params, queryset=Summary.objects.published(), choices=filter_choices())
    assert found.is_valid(), found.errors
    return set(found.qs.values_list("video__slug", flat=True))


def test_each_filter_narrows_the_list_as_on_the_search_page(api, catalogue):
    made, topic, _ = catalogue
    cases = {
        "channel": ({"channel": "lab"}, {"channel"}),
        "person": ({"person": "ada"}, {"person"}),
        "topic": ({"topic": topic.slug}, {"topic"}),
        "language": ({"language": "fr"}, {"language"}),
        "published_after": ({"published_after": "2026-05-10"}, {"topic", "language"}),
        "published_before": ({"published_before": "2026-03-10"}, {"channel", "person"}),
        "both dates": (
            {"published_after": "2026-02-01", "published_before": "2026-06-01"},
            {"person", "topic"},
        ),
        "together": ({"person": "ada", "published_after": "2026-03-10"}, {"person"}),
    }
    for name, (params, expected) in cases.items():
        wanted = {made[key].video.slug for key in expected}
        assert slugs(api.get(LIST, params)) == wanted, name
        assert search_page_finds(params) == wanted, name


def test_drafts_and_scheduled_summaries_never_appear(api, catalogue):
    made, topic, hidden = catalogue
    hidden_slugs = {draft.video.slug for draft in hidden}
    for params in (
        {},
        {"channel": "lab"},
        {"person": "ada"},
        {"topic": topic.slug},
        {"language": "fr"},
        {"published_after": "2026-03-10", "published_before": "2026-03-10"},
    ):
        assert not slugs(api.get(LIST, params)) & hidden_slugs, params


def test_editors_filter_drafts_by_a_channel_no_live_summary_has(api):
    """The search page offers live channels only; the API takes any slug."""
    draft = SummaryFactory(video__channel=ChannelFactory(slug="new-channel"))
    assert slugs(api.get(LIST, {"channel": "new-channel"})) == set()
    # Signed in as editors' tools are (a token): the page cache never answers them.
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=EditorFactory())}")
    assert slugs(api.get(LIST, {"channel": "new-channel"})) == {draft.video.slug}


def test_a_slug_that_names_nothing_finds_nothing(api, catalogue):
    for name in ("channel", "person", "topic"):
        assert slugs(api.get(LIST, {name: "nobody"})) == set()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"channel": "x" * 201}, "channel"),
        ({"person": "x" * 201}, "person"),
        ({"topic": "x" * 201}, "topic"),
        ({"language": "xx"}, "language"),
        ({"published_after": "someday"}, "published_after"),
        ({"published_before": "2026-13-01"}, "published_before"),
        ({"published_after": "2026-02-30"}, "published_after"),
        ({"published_after": "0001-01-01T00:00:00+20:00"}, "published_after"),  # UTC: year 0
        ({"published_after": "2026-05-01", "published_before": "2026-04-01"}, "published_before"),
        (
            {"published_after": "2026-05-01T00:00Z", "published_before": "2026-04-01T00:00Z"},
            "published_before",
        ),
    ],
)
def test_a_bad_value_answers_400_naming_the_field(api, params, field):
    SummaryFactory(live=True)
    response = api.get(LIST, params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == [field]
    assert error["fields"][field][0]


def test_a_day_and_a_time_together_are_not_compared(api):
    """A day bounds the video's publication, a time the summary's: both apply."""
    summary(video__published_on=datetime.date(2026, 1, 10))
    response = api.get(
        LIST, {"published_after": "2026-01-01", "published_before": "2020-01-01T00:00Z"}
    )
    assert slugs(response) == set()


def test_a_time_still_bounds_the_summarys_publish_time(api):
    """Clients of v1 sent times before the filters were shared: they mean what they did."""
    now = timezone.now()
    old_video_new_summary = summary(video__published_on=datetime.date(2020, 1, 1))
    new_video_old_summary = SummaryFactory(
        status=Summary.Status.PUBLISHED,
        publish_at=now - datetime.timedelta(days=30),
        video__published_on=datetime.date(2026, 10, 1),
    )
    week_ago = (now - datetime.timedelta(days=7)).isoformat()
    assert slugs(api.get(LIST, {"published_after": week_ago})) == {old_video_new_summary.video.slug}
    assert slugs(api.get(LIST, {"published_after": "2026-01-01"})) == {
        new_video_old_summary.video.slug
    }


def test_the_schema_documents_every_filter():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    parameters = {
        parameter["name"]: parameter
        for parameter in schema["paths"]["/api/v1/summaries/"]["get"]["parameters"]
    }
    assert set(FILTER_NAMES) <= set(parameters)
    for name in FILTER_NAMES:
        assert parameters[name]["in"] == "query" and parameters[name]["description"], name
    for name in ("channel", "person", "topic"):
        assert parameters[name]["schema"] == {"type": "string"}, name
    assert "fr" in parameters["language"]["schema"]["enum"]
    assert {"type": "string", "format": "date"} in parameters["published_after"]["schema"]["oneOf"]
    assert "updated_since" in parameters and "status" in parameters


def test_the_search_page_still_offers_live_values_only_after_the_schema_is_built(client, catalogue):
    """Building the schema makes the shared filters' form fields; the page's own choices
    must still apply."""
    SchemaGenerator().get_schema(request=None, public=True)
    assert client.get("/search/", {"language": "de"}).status_code == 400
    assert client.get("/search/", {"channel": "nope"}).status_code == 400
    assert client.get("/search/", {"language": "fr"}).status_code == 200


@pytest.mark.parametrize("query", HOSTILE)
def test_search_answers_any_query_with_a_list(api, query):
    SummaryFactory(live=True, tldr="Robotics news.")

    response = api.get(LIST, {"search": query})

    assert response.status_code == 200, response.content[:200]
    assert isinstance(response.json()["results"], list)
