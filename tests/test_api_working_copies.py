"""The API follows the admin: writes to a published summary go to its working copy."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.models import Summary

from .factories import ChapterFactory, SummaryFactory

pytestmark = pytest.mark.django_db


def client_for(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Live words.")
    ChapterFactory(summary=summary, position=1, title="One", body="First.")
    return summary


def url(summary, action=""):
    return f"/api/v1/summaries/{summary.video.slug}/{action + '/' if action else ''}"


def test_a_write_to_a_published_summary_goes_to_its_working_copy(reviewer_api, live):
    tag = reviewer_api.get(url(live))["ETag"]
    response = reviewer_api.patch(url(live), {"tldr": "Changed."}, format="json", HTTP_IF_MATCH=tag)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["tldr"] == "Changed." and body["status"] == "draft"
    assert body["url"].endswith(url(live, "working-copy"))
    assert APIClient().get(url(live)).json()["tldr"] == "Live words."  # readers: unchanged
    detail = reviewer_api.get(url(live)).json()
    assert detail["tldr"] == "Live words."
    assert detail["unpublished_changes"].endswith(url(live, "working-copy"))
    changes = reviewer_api.get(url(live, "working-copy"))
    assert changes.status_code == 200 and changes.json()["tldr"] == "Changed."
    assert changes["ETag"] == response["ETag"]


def test_the_working_copy_is_edited_with_its_own_etag(reviewer_api, live):
    tag = reviewer_api.get(url(live))["ETag"]
    first = reviewer_api.patch(url(live), {"tldr": "First."}, format="json", HTTP_IF_MATCH=tag)
    stale = reviewer_api.patch(url(live), {"tldr": "Second."}, format="json", HTTP_IF_MATCH=tag)
    assert stale.status_code == 412  # the live summary's tag, not the changes'
    second = reviewer_api.patch(
        url(live), {"tldr": "Second."}, format="json", HTTP_IF_MATCH=first["ETag"]
    )
    assert second.status_code == 200
    assert Summary.objects.filter(working_copy_of=live).count() == 1


def test_publishing_makes_the_changes_live(reviewer_api, live):
    tag = reviewer_api.get(url(live))["ETag"]
    changed = reviewer_api.patch(url(live), {"tldr": "Changed."}, format="json", HTTP_IF_MATCH=tag)
    response = reviewer_api.post(
        url(live, "publish"), {}, format="json", HTTP_IF_MATCH=changed["ETag"]
    )
    assert response.status_code == 200, response.json()
    assert response.json()["tldr"] == "Changed." and response.json()["status"] == "published"
    assert APIClient().get(url(live)).json()["tldr"] == "Changed."
    assert reviewer_api.get(url(live, "working-copy")).status_code == 404
    assert reviewer_api.get(url(live)).json()["unpublished_changes"] is None


def test_discarding_the_changes(reviewer_api, live):
    tag = reviewer_api.get(url(live))["ETag"]
    changed = reviewer_api.patch(url(live), {"tldr": "Changed."}, format="json", HTTP_IF_MATCH=tag)
    response = reviewer_api.post(url(live, "discard-changes"), HTTP_IF_MATCH=changed["ETag"])
    assert response.status_code == 200 and response.json()["tldr"] == "Live words."
    again = reviewer_api.post(url(live, "discard-changes"), HTTP_IF_MATCH=response["ETag"])
    assert again.status_code == 404


def test_a_reviewer_sends_back_with_a_note_editors_read(reviewer_api, editor_api, live):
    tag = editor_api.get(url(live))["ETag"]
    changed = editor_api.patch(url(live), {"tldr": "Changed."}, format="json", HTTP_IF_MATCH=tag)
    review = editor_api.post(url(live, "submit-for-review"), HTTP_IF_MATCH=changed["ETag"])
    assert review.status_code == 200 and review.json()["status"] == "review"
    assert editor_api.post(url(live, "publish"), HTTP_IF_MATCH=review["ETag"]).status_code == 403
    sent = reviewer_api.post(
        url(live, "send-back"), {"note": "Say who measured it."}, HTTP_IF_MATCH=review["ETag"]
    )
    assert sent.status_code == 200, sent.json()
    assert sent.json()["status"] == "draft"
    assert sent.json()["review_note"] == "Say who measured it."
    assert editor_api.get(url(live, "working-copy")).json()["review_note"] == "Say who measured it."
    empty = reviewer_api.post(url(live, "send-back"), {"note": ""}, HTTP_IF_MATCH=sent["ETag"])
    assert empty.status_code == 400 and "note" in empty.json()["error"]["fields"]


def test_unpublished_changes_are_never_shown_to_the_public(live, reviewer_api):
    tag = reviewer_api.get(url(live))["ETag"]
    reviewer_api.patch(url(live), {"tldr": "Changed."}, format="json", HTTP_IF_MATCH=tag)
    anonymous = APIClient()
    assert anonymous.get(url(live, "working-copy")).status_code == 404
    public = anonymous.get(url(live)).json()
    assert public["unpublished_changes"] is None and public["tldr"] == "Live words."
    listed = anonymous.get("/api/v1/summaries/").json()["results"]
    assert [item["tldr"] for item in listed] == ["Live words."]
    assert len(reviewer_api.get("/api/v1/summaries/").json()["results"]) == 1  # no copy listed


def test_the_schema_documents_working_copies_and_review():
    schema = APIClient().get("/api/schema/?format=json").json()
    paths = schema["paths"]
    for action in ("working-copy", "discard-changes", "send-back"):
        assert f"/api/v1/summaries/{{slug}}/{action}/" in paths
    publish = paths["/api/v1/summaries/{slug}/publish/"]["post"]
    assert any(p["name"] == "If-Match" and p["required"] for p in publish["parameters"])
