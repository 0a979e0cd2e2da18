"""PATCH /api/v1/summaries/<slug>/citations/<id>/: an editor's tool sets a citation's key
phrase (what its source page must still say), as the admin's editors can."""

import pytest
from drf_spectacular.generators import SchemaGenerator
from reversion.models import Version

from summaries.editing import derived
from summaries.models import Citation, Source
from summaries.pagecache.generation import current_generation

from .clients import token_client
from .factories import ChapterFactory, SummaryFactory, UserFactory

pytestmark = pytest.mark.django_db

CHAPTER = (
    "[Anthropic says](https://www.anthropic.com/research/x) that this mode generates "
    "output 2.5 times faster than regular Opus 4.6."
)


@pytest.fixture
def cited():
    """A summary with one chapter citing one source; its citation as extracted."""
    summary = SummaryFactory()
    ChapterFactory(summary=summary, body=CHAPTER)
    (citation,) = derived.sync_citations(summary=summary)
    return citation


def summary_url(citation):
    return f"/api/v1/summaries/{citation.summary.video.slug}/"


def citation_url(citation):
    return f"{summary_url(citation)}citations/{citation.pk}/"


def etag(api, citation):
    response = api.get(summary_url(citation))
    assert response.status_code == 200
    return response["ETag"]


def set_phrase(api, citation, phrase, **headers):
    if "HTTP_IF_MATCH" not in headers:
        headers["HTTP_IF_MATCH"] = etag(api, citation)
    return api.patch(citation_url(citation), {"key_phrase": phrase}, format="json", **headers)


def error_fields(response):
    return response.json()["error"]["fields"]


def test_an_editor_sets_the_key_phrase(editor_api, cited, editor):
    assert cited.key_phrase != "2.5 times"
    before = etag(editor_api, cited)

    response = set_phrase(editor_api, cited, "  2.5   times ", HTTP_IF_MATCH=before)

    assert response.status_code == 200, response.json()
    body = response.json()
    (shown,) = body["citations"]
    assert shown["id"] == cited.pk
    assert shown["key_phrase"] == "2.5 times"
    assert shown["key_phrase_edited"] is True
    assert "warnings" in body
    assert response["ETag"] != before
    assert response["ETag"] == etag(editor_api, cited)
    cited.refresh_from_db()
    assert (cited.key_phrase, cited.key_phrase_edited) == ("2.5 times", True)


def test_the_summary_read_lists_each_citation_with_its_id(editor_api, cited):
    (shown,) = editor_api.get(summary_url(cited)).json()["citations"]
    assert shown["id"] == cited.pk
    assert shown["key_phrase_edited"] is False


def test_the_change_is_a_revision_and_makes_pages_stale(editor_api, cited, editor):
    generation = current_generation()
    assert set_phrase(editor_api, cited, "2.5 times").status_code == 200
    assert current_generation() != generation
    latest = Version.objects.get_for_object(cited.summary).first()
    assert latest.revision.user == editor
    assert "Anthropic says" in latest.revision.get_comment()
    assert "2.5 times" in latest.revision.get_comment()


def test_the_edited_phrase_survives_a_later_edit_of_the_text(editor_api, cited):
    set_phrase(editor_api, cited, "2.5 times")
    summary = cited.summary
    tag = etag(editor_api, cited)
    chapter = summary.chapters.get()
    response = editor_api.patch(
        summary_url(cited),
        {"chapters": [{"id": chapter.pk, "title": chapter.title, "body": CHAPTER + " Fast."}]},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert response.status_code == 200, response.json()
    (shown,) = response.json()["citations"]
    assert (shown["key_phrase"], shown["key_phrase_edited"]) == ("2.5 times", True)


def test_an_empty_phrase_goes_back_to_the_extracted_one(editor_api, cited):
    extracted = cited.key_phrase
    set_phrase(editor_api, cited, "2.5 times")

    response = set_phrase(editor_api, cited, "")

    assert response.status_code == 200
    (shown,) = response.json()["citations"]
    assert (shown["key_phrase"], shown["key_phrase_edited"]) == (extracted, False)


def test_a_new_phrase_waits_for_the_next_check_which_is_queued(editor_api, cited, monkeypatch):
    Source.objects.filter(pk=cited.source_id).update(state="ok", fingerprint="f")
    Citation.objects.filter(pk=cited.pk).update(
        verdict=Citation.Verdict.NOT_FOUND, verdict_excerpt="old"
    )
    queued = []
    monkeypatch.setattr(
        "summaries.checking.request_checks", lambda *, sources: queued.extend(sources) or []
    )

    (shown,) = set_phrase(editor_api, cited, "2.5 times").json()["citations"]

    assert shown["verdict"] == Citation.Verdict.UNCHECKED
    assert shown["verdict_excerpt"] == ""
    assert [source.pk for source in queued] == [cited.source_id]


def test_the_same_phrase_again_changes_nothing(editor_api, cited):
    set_phrase(editor_api, cited, "2.5 times")
    revisions = Version.objects.get_for_object(cited.summary).count()
    tag = etag(editor_api, cited)
    response = set_phrase(editor_api, cited, "2.5 times", HTTP_IF_MATCH=tag)
    assert response.status_code == 200
    assert response["ETag"] == tag
    assert Version.objects.get_for_object(cited.summary).count() == revisions


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"key_phrase": "x" * 201}, "200"),
        ({"key_phrase": None}, "null"),
        ({"key_phrase": ["2.5"]}, "string"),
    ],
)
def test_a_bad_phrase_is_a_400_naming_the_field(editor_api, cited, payload, message):
    response = editor_api.patch(
        citation_url(cited), payload, format="json", HTTP_IF_MATCH=etag(editor_api, cited)
    )
    assert response.status_code == 400
    assert message in " ".join(error_fields(response)["key_phrase"])
    cited.refresh_from_db()
    assert not cited.key_phrase_edited


def test_an_unknown_field_is_a_400_naming_it_and_no_field_changes_nothing(editor_api, cited):
    tag = etag(editor_api, cited)
    response = editor_api.patch(
        citation_url(cited), {"keyphrase": "x"}, format="json", HTTP_IF_MATCH=tag
    )
    assert response.status_code == 400
    assert error_fields(response) == {"keyphrase": ["Unknown field."]}
    response = editor_api.patch(citation_url(cited), {}, format="json", HTTP_IF_MATCH=tag)
    assert response.status_code == 200
    assert response["ETag"] == tag


def test_a_phrase_of_200_characters_is_accepted(editor_api, cited):
    assert set_phrase(editor_api, cited, "x" * 200).status_code == 200


def test_without_if_match_it_is_428_and_with_a_stale_one_412(editor_api, cited):
    old = etag(editor_api, cited)
    response = editor_api.patch(citation_url(cited), {"key_phrase": "2.5 times"}, format="json")
    assert response.status_code == 428
    assert set_phrase(editor_api, cited, "faster").status_code == 200
    assert set_phrase(editor_api, cited, "2.5 times", HTTP_IF_MATCH=old).status_code == 412
    cited.refresh_from_db()
    assert cited.key_phrase == "faster"


def test_a_citation_of_another_summary_or_none_is_a_404(editor_api, cited):
    other = SummaryFactory()
    url = f"/api/v1/summaries/{other.video.slug}/citations/{cited.pk}/"
    response = editor_api.patch(url, {"key_phrase": "x"}, format="json", HTTP_IF_MATCH="*")
    assert response.status_code == 404
    missing = f"{summary_url(cited)}citations/999999/"
    response = editor_api.patch(missing, {"key_phrase": "x"}, format="json", HTTP_IF_MATCH="*")
    assert response.status_code == 404


@pytest.mark.parametrize("who", ["anonymous", "reader", "staff without permission"])
def test_only_editors_may_change_a_key_phrase(cited, who):
    user = {
        "anonymous": lambda: None,
        "reader": lambda: UserFactory(),
        "staff without permission": lambda: UserFactory(is_staff=True),
    }[who]()
    client = token_client(user)
    response = client.patch(
        citation_url(cited), {"key_phrase": "x"}, format="json", HTTP_IF_MATCH="*"
    )
    assert response.status_code in (401, 403, 404)
    cited.refresh_from_db()
    assert not cited.key_phrase_edited


def test_other_methods_are_not_allowed(editor_api, cited):
    assert editor_api.get(citation_url(cited)).status_code == 405
    assert editor_api.delete(citation_url(cited), HTTP_IF_MATCH="*").status_code == 405


def test_a_broken_source_is_among_the_warnings_of_the_answer(editor_api, cited):
    Source.objects.filter(pk=cited.source_id).update(state="broken", status_code=404)
    response = set_phrase(editor_api, cited, "2.5 times")
    (warning,) = [w for w in response.json()["warnings"] if "Anthropic says" in w["where"]]
    assert "is broken (HTTP 404)" in warning["message"]


def test_the_schema_documents_the_operation():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/v1/summaries/{slug}/citations/{citation_id}/"]["patch"]
    assert {"200", "400", "404", "412", "428"} <= set(operation["responses"])
    assert any(p["name"] == "If-Match" and p["required"] for p in operation["parameters"])
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    request = schema["components"]["schemas"][body.rsplit("/", 1)[1]]
    assert request["properties"]["key_phrase"]["maxLength"] == 200
    assert "extracted" in request["properties"]["key_phrase"]["description"]
