"""Writing the catalogue through the API: channels, people, topics and organisations are
created (POST) and changed (PUT/PATCH with If-Match) by editors, with revision history;
a summary like the example can then be written on an empty instance through the API alone."""

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient
from reversion.models import Version

from summaries.demo import data as demo_data
from summaries.models import Channel, Organisation, Person, Summary, Topic, Video

from .clients import token_client
from .factories import (
    ChannelFactory,
    OrganisationFactory,
    PersonFactory,
    TopicFactory,
    UserFactory,
)
from .test_api_write import example_payload

pytestmark = pytest.mark.django_db

KINDS = {
    "channels": (
        Channel,
        ChannelFactory,
        {
            "name": "Two Minute Papers",
            "slug": "two-minute-papers",
            "description": "Research papers, briefly.",
            "site_url": "https://www.youtube.com/@TwoMinutePapers",
        },
    ),
    "people": (Person, PersonFactory, {"name": "Ada Lovelace", "slug": "ada-lovelace"}),
    "topics": (Topic, TopicFactory, {"name": "Benchmarks", "slug": "benchmarks"}),
    "organisations": (
        Organisation,
        OrganisationFactory,
        {"name": "Anthropic", "slug": "anthropic", "domains": ["anthropic.com", "claude.ai"]},
    ),
}


def list_url(kind):
    return f"/api/v1/{kind}/"


def detail_url(kind, slug):
    return f"/api/v1/{kind}/{slug}/"


def error_of(response):
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"status", "code", "message", "fields"}
    return body["error"]


# --- Create -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_editor_creates_each_kind(editor_api, kind):
    model, _, payload = KINDS[kind]
    response = editor_api.post(list_url(kind), payload, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert response["Location"].endswith(detail_url(kind, payload["slug"]))
    for name, value in payload.items():
        assert body[name] == value
    row = model.objects.get(slug=payload["slug"])
    assert row.name == payload["name"]
    # The ETag answered is the one a GET answers, so it can be sent back in If-Match.
    assert editor_api.get(detail_url(kind, payload["slug"]))["ETag"] == response["ETag"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("slug", [123, 1.5, True, ["a"], {"a": 1}])
def test_a_slug_that_is_not_text_is_refused_by_name(editor_api, kind, slug):
    model, _, payload = KINDS[kind]
    response = editor_api.post(list_url(kind), {**payload, "slug": slug}, format="json")
    assert response.status_code == 400
    message = error_of(response)["fields"]["slug"][0]
    assert message.startswith("A slug is text")
    assert not model.objects.exists()


def test_references_by_slug_must_be_text_too(editor_api):
    ChannelFactory(slug="123")  # a number would have found this channel
    payload = example_payload()
    payload["video"]["channel"] = 123
    response = editor_api.post("/api/v1/summaries/", payload, format="json")
    assert response.status_code == 400
    assert "A slug is text" in str(error_of(response)["fields"])
    assert not Video.objects.exists()


@pytest.mark.parametrize(
    "place",
    ["channel", "topics", "person"],
)
def test_a_reference_with_a_nul_character_is_a_400_not_a_500(editor_api, place):
    # PostgreSQL text cannot hold NUL: looking the slug up failed with a DataError (a 500),
    # found by the schema fuzzer.
    payload = example_payload()
    if place == "channel":
        payload["video"]["channel"] = "two\x00minute"
    elif place == "topics":
        payload["video"]["topics"] = ["bench\x00marks"]
    else:
        payload["video"]["people"] = [{"person": "ada\x00lovelace"}]
    response = editor_api.post("/api/v1/summaries/", payload, format="json")
    assert response.status_code == 400
    assert "Null characters are not allowed" in str(error_of(response)["fields"])
    assert not Video.objects.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_slug_with_a_nul_character_is_refused_by_name(editor_api, kind):
    model, _, payload = KINDS[kind]
    response = editor_api.post(list_url(kind), {**payload, "slug": "a\x00b"}, format="json")
    assert response.status_code == 400
    assert "Null characters are not allowed" in error_of(response)["fields"]["slug"][0]
    assert not model.objects.exists()


def test_optional_fields_default_to_empty(editor_api):
    response = editor_api.post(
        list_url("channels"), {"name": "Bare", "slug": "bare"}, format="json"
    )
    assert response.status_code == 201, response.json()
    channel = Channel.objects.get(slug="bare")
    assert channel.description == "" and channel.site_url == ""
    response = editor_api.post(
        list_url("organisations"), {"name": "Org", "slug": "org"}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["domains"] == []


def test_organisation_domains_are_stored_one_per_line_lower_case(editor_api):
    payload = {"name": "OpenAI", "slug": "openai", "domains": ["OpenAI.com", "openai.com", "x.ai"]}
    response = editor_api.post(list_url("organisations"), payload, format="json")
    assert response.status_code == 201, response.json()
    assert Organisation.objects.get().domains == "openai.com\nx.ai"
    assert response.json()["domains"] == ["openai.com", "x.ai"]


# --- Update -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_patch_with_if_match_changes_the_fields_sent(editor_api, kind):
    model, factory, _ = KINDS[kind]
    row = factory(name="Old name", slug="old")
    etag = editor_api.get(detail_url(kind, "old"))["ETag"]
    response = editor_api.patch(
        detail_url(kind, "old"), {"name": "New name"}, format="json", HTTP_IF_MATCH=etag
    )
    assert response.status_code == 200, response.json()
    assert response.json()["name"] == "New name"
    assert response["ETag"] != etag
    row.refresh_from_db()
    assert (row.name, row.slug) == ("New name", "old")


def test_put_replaces_the_whole_channel(editor_api):
    ChannelFactory(slug="chan", description="Old", site_url="https://old.example/")
    etag = editor_api.get(detail_url("channels", "chan"))["ETag"]
    response = editor_api.put(
        detail_url("channels", "chan"),
        {"name": "Renamed", "slug": "chan"},
        format="json",
        HTTP_IF_MATCH=etag,
    )
    assert response.status_code == 200, response.json()
    channel = Channel.objects.get(slug="chan")
    assert (channel.name, channel.description, channel.site_url) == ("Renamed", "", "")


def test_put_replaces_organisation_domains(editor_api):
    OrganisationFactory(slug="org", domains="old.example")
    etag = editor_api.get(detail_url("organisations", "org"))["ETag"]
    response = editor_api.put(
        detail_url("organisations", "org"),
        {"name": "Org", "slug": "org", "domains": ["new.example"]},
        format="json",
        HTTP_IF_MATCH=etag,
    )
    assert response.status_code == 200, response.json()
    assert Organisation.objects.get().domains == "new.example"


def test_slug_can_change_to_a_free_one(editor_api):
    TopicFactory(slug="old")
    etag = editor_api.get(detail_url("topics", "old"))["ETag"]
    response = editor_api.patch(
        detail_url("topics", "old"), {"slug": "new"}, format="json", HTTP_IF_MATCH=etag
    )
    assert response.status_code == 200
    assert response.json()["url"].endswith(detail_url("topics", "new"))
    assert list(Topic.objects.values_list("slug", flat=True)) == ["new"]


def test_update_without_if_match_is_428(editor_api):
    PersonFactory(slug="someone", name="Someone")
    response = editor_api.patch(detail_url("people", "someone"), {"name": "Other"}, format="json")
    assert response.status_code == 428
    assert error_of(response)["code"] == "precondition_required"
    assert Person.objects.get().name == "Someone"


def test_update_with_a_stale_etag_is_412(editor_api):
    PersonFactory(slug="someone", name="Someone")
    etag = editor_api.get(detail_url("people", "someone"))["ETag"]
    first = editor_api.patch(
        detail_url("people", "someone"), {"name": "First"}, format="json", HTTP_IF_MATCH=etag
    )
    assert first.status_code == 200
    second = editor_api.patch(
        detail_url("people", "someone"), {"name": "Second"}, format="json", HTTP_IF_MATCH=etag
    )
    assert second.status_code == 412
    assert error_of(second)["code"] == "precondition_failed"
    assert Person.objects.get().name == "First"


def test_update_of_an_unknown_slug_is_404(editor_api):
    response = editor_api.patch(
        detail_url("topics", "nothing"), {"name": "X"}, format="json", HTTP_IF_MATCH="*"
    )
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


@pytest.mark.parametrize("kind", KINDS)
def test_delete_is_not_allowed(editor_api, kind):
    _, factory, _ = KINDS[kind]
    factory(slug="keep")
    response = editor_api.delete(detail_url(kind, "keep"))
    assert response.status_code == 405
    assert error_of(response)["status"] == 405
    assert KINDS[kind][0].objects.filter(slug="keep").exists()


# --- Permissions ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_anonymous_cannot_write(kind):
    model, factory, payload = KINDS[kind]
    client = APIClient()
    response = client.post(list_url(kind), payload, format="json")
    assert response.status_code in (401, 403)
    assert error_of(response)["status"] == response.status_code
    factory(slug="existing")
    response = client.patch(
        detail_url(kind, "existing"), {"name": "X"}, format="json", HTTP_IF_MATCH="*"
    )
    assert response.status_code in (401, 403)
    assert not model.objects.filter(slug=payload["slug"]).exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_non_editor_cannot_write(kind):
    model, factory, payload = KINDS[kind]
    for user in (UserFactory(), UserFactory(is_staff=True)):
        client = token_client(user)
        response = client.post(list_url(kind), payload, format="json")
        assert response.status_code == 403
        assert error_of(response)["code"] == "permission_denied"
    row = factory(slug="existing", name="Kept")
    response = client.patch(
        detail_url(kind, "existing"), {"name": "X"}, format="json", HTTP_IF_MATCH="*"
    )
    assert response.status_code == 403
    row.refresh_from_db()
    assert row.name == "Kept"
    assert not model.objects.filter(slug=payload["slug"]).exists()


# --- Validation -------------------------------------------------------------------------


def test_missing_and_invalid_fields_are_named(editor_api):
    response = editor_api.post(
        list_url("channels"),
        {"slug": "not a slug", "site_url": "ftp://example.org/"},
        format="json",
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {"name", "slug", "site_url"}
    assert not Channel.objects.exists()


def test_unknown_and_read_only_fields_are_rejected_by_name(editor_api):
    response = editor_api.post(
        list_url("people"),
        {"name": "A", "slug": "a", "nickname": "x", "updated_at": "2025-01-01T00:00:00Z"},
        format="json",
    )
    assert response.status_code == 400
    fields = error_of(response)["fields"]
    assert fields["nickname"] == ["Unknown field."]
    assert fields["updated_at"] == ["Read-only: leave it out."]
    assert not Person.objects.exists()


def test_topic_caps_are_the_models(editor_api):
    response = editor_api.post(list_url("topics"), {"name": "x" * 101, "slug": "t"}, format="json")
    assert response.status_code == 400
    assert set(error_of(response)["fields"]) == {"name"}


@pytest.mark.parametrize(
    "domain", ["https://anthropic.com", "anthropic.com/news", "a.com b.com", "localhost", ""]
)
def test_organisation_domains_must_be_bare_domains(editor_api, domain):
    payload = {"name": "Org", "slug": "org", "domains": ["ok.example", domain]}
    response = editor_api.post(list_url("organisations"), payload, format="json")
    assert response.status_code == 400
    assert set(error_of(response)["fields"]) == {"domains[1]"}
    assert not Organisation.objects.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_duplicate_slug_is_named(editor_api, kind):
    model, factory, payload = KINDS[kind]
    factory(slug=payload["slug"])
    response = editor_api.post(list_url(kind), payload, format="json")
    assert response.status_code == 400
    assert set(error_of(response)["fields"]) == {"slug"}
    assert model.objects.count() == 1


def test_changing_to_a_taken_slug_is_named(editor_api):
    PersonFactory(slug="one")
    PersonFactory(slug="two")
    etag = editor_api.get(detail_url("people", "two"))["ETag"]
    response = editor_api.patch(
        detail_url("people", "two"), {"slug": "one"}, format="json", HTTP_IF_MATCH=etag
    )
    assert response.status_code == 400
    assert set(error_of(response)["fields"]) == {"slug"}


# --- History ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_every_write_is_a_revision(editor_api, editor, kind):
    model, _, payload = KINDS[kind]
    response = editor_api.post(list_url(kind), payload, format="json")
    assert response.status_code == 201
    row = model.objects.get(slug=payload["slug"])
    editor_api.patch(
        detail_url(kind, row.slug),
        {"name": "Renamed"},
        format="json",
        HTTP_IF_MATCH=response["ETag"],
    )
    versions = Version.objects.get_for_object(row)
    assert versions.count() == 2
    newest, oldest = versions  # newest first
    assert oldest.revision.user == editor and newest.revision.user == editor
    assert oldest.revision.get_comment() == "Created through the API."
    assert newest.revision.get_comment() == "Changed through the API (name)."
    assert oldest.field_dict["name"] == payload["name"]
    assert newest.field_dict["name"] == "Renamed"


def test_a_refused_write_records_no_revision(editor_api):
    ChannelFactory(slug="taken")
    editor_api.post(list_url("channels"), {"name": "X", "slug": "taken"}, format="json")
    assert not Version.objects.exists()


# --- End to end -------------------------------------------------------------------------


def test_the_example_summary_through_the_api_alone_on_an_empty_instance(reviewer_api):
    """Only the Editors group (a migration's) and one editor's token exist at the start
    (a reviewer's: it writes and publishes)."""
    assert Group.objects.filter(name="Editors").exists()
    for model in (Channel, Organisation, Person, Topic, Video, Summary):
        assert not model.objects.exists()

    channel = demo_data.CHANNEL
    response = reviewer_api.post(
        list_url("channels"),
        {key: channel[key] for key in ("name", "slug", "description", "site_url")},
        format="json",
    )
    assert response.status_code == 201, response.json()
    for organisation in demo_data.ORGANISATIONS:
        payload = {**organisation, "domains": organisation["domains"].split()}
        response = reviewer_api.post(list_url("organisations"), payload, format="json")
        assert response.status_code == 201, response.json()
    for person in demo_data.PEOPLE:
        assert reviewer_api.post(list_url("people"), person, format="json").status_code == 201
    for topic in demo_data.TOPICS:
        assert reviewer_api.post(list_url("topics"), topic, format="json").status_code == 201

    response = reviewer_api.post("/api/v1/summaries/", example_payload(), format="json")
    assert response.status_code == 201, response.json()
    slug = response.json()["slug"]
    tag = reviewer_api.get(f"/api/v1/summaries/{slug}/")["ETag"]
    response = reviewer_api.post(
        f"/api/v1/summaries/{slug}/publish/", {}, format="json", HTTP_IF_MATCH=tag
    )
    assert response.status_code == 200, response.json()

    anonymous = APIClient()
    response = anonymous.get(f"/api/v1/summaries/{slug}/")
    assert response.status_code == 200
    body = response.json()
    assert body["tldr"] == demo_data.MAIN_SUMMARY["tldr"]
    assert body["video"]["channel"]["slug"] == channel["slug"]
    assert body["video"]["people"][0]["organisation"]["slug"] == "forward-future"
    assert sorted(t["slug"] for t in body["video"]["topics"]) == sorted(
        demo_data.MAIN_VIDEO["topics"]
    )
    assert anonymous.get(f"/api/v1/channels/{channel['slug']}/").status_code == 200
    assert anonymous.get("/api/v1/videos/").json()["results"][0]["slug"] == slug
