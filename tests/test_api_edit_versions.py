"""What If-Match guards on summary writes: what editors wrote (content and workflow), not
what link checks found. A check recorded between a GET and a write leaves the write's
If-Match valid; an edit in between makes it stale. Reads keep a strong ETag that moves
with every change shown, checks included, for caching."""

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries import checking
from summaries.editing import derived
from summaries.linkcheck import CheckResult, State
from summaries.models import Citation, Source, Summary

from .factories import ChapterFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db

CHAPTER = "[Anthropic says](https://www.anthropic.com/research/x) that it runs 2.5 times faster."


def client_for(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def other():
    """A second editor's tool, editing the same summaries."""
    return client_for(ReviewerFactory())


def cited(**kwargs):
    summary = SummaryFactory(**kwargs)
    ChapterFactory(summary=summary, position=1, title="One", body=CHAPTER)
    derived.refresh_derived_data(summary=summary)
    return summary


def url(summary, action=""):
    return f"/api/v1/summaries/{summary.video.slug}/{action + '/' if action else ''}"


def record_check(response_ms):
    """A worker's check of every cited source, recorded as workers record them."""
    for source in Source.objects.all():
        # A write queues a batch for its new sources (claimed at once, run after commit).
        token = source.check_token
        if not token:
            token, _ = checking.claim_sources(queryset=Source.objects.filter(pk=source.pk), limit=1)
        result = CheckResult(
            url=source.url,
            final_url=source.url,
            state=State.OK,
            status=200,
            response_ms=response_ms,
            text="It runs 2.5 times faster.",
        )
        assert checking.record_results(token=token, results={source.pk: result}) == [source.pk]


def patch(client, summary, tag, tldr, path=""):
    return client.patch(url(summary, path), {"tldr": tldr}, format="json", HTTP_IF_MATCH=tag)


# --- Summaries ---------------------------------------------------------------------------


def test_a_check_recorded_after_the_read_does_not_make_its_etag_stale(reviewer_api):
    summary = cited()
    read = reviewer_api.get(url(summary))
    record_check(response_ms=120)
    again = reviewer_api.get(url(summary))
    # Reads show the check: their strong ETag (for caching) moves with it.
    assert again.json()["citations"][0]["source"]["response_ms"] == 120
    assert again["ETag"] != read["ETag"] and not again["ETag"].startswith("W/")
    response = patch(reviewer_api, summary, read["ETag"], "Edited after the check.")
    assert response.status_code == 200, response.json()
    assert Summary.objects.get(pk=summary.pk).tldr == "Edited after the check."


def test_an_edit_after_the_read_makes_its_etag_stale_whatever_checks_follow(reviewer_api, other):
    summary = cited()
    read = reviewer_api.get(url(summary))
    assert patch(other, summary, read["ETag"], "Theirs.").status_code == 200
    record_check(response_ms=80)
    response = patch(reviewer_api, summary, read["ETag"], "Mine.")
    assert response.status_code == 412
    assert response.json()["error"]["code"] == "precondition_failed"
    assert Summary.objects.get(pk=summary.pk).tldr == "Theirs."


def test_the_edit_version_header_names_what_if_match_guards(reviewer_api, other):
    summary = cited()
    read = reviewer_api.get(url(summary))
    version = read["Edit-Version"]
    assert version.startswith('"') and version.endswith('"')
    # The read ETag starts with the edit version (so sending either back works).
    assert read["ETag"].startswith(version[:-1] + "-")
    record_check(response_ms=90)
    checked = reviewer_api.get(url(summary))
    assert checked["Edit-Version"] == version and checked["ETag"] != read["ETag"]
    not_modified = reviewer_api.get(url(summary), HTTP_IF_NONE_MATCH=checked["ETag"])
    assert not_modified.status_code == 304
    assert not_modified["Edit-Version"] == version
    written = patch(reviewer_api, summary, version, "With the edit version.")
    assert written.status_code == 200
    assert written["Edit-Version"] != version
    assert written["Edit-Version"] == reviewer_api.get(url(summary))["Edit-Version"]
    assert patch(other, summary, version, "Stale.").status_code == 412


def test_an_edit_of_the_video_fields_through_the_summary_makes_the_etag_stale(reviewer_api, other):
    summary = cited()
    read = reviewer_api.get(url(summary))
    edit = {"video": {"title": "A better title"}}
    assert (
        other.patch(url(summary), edit, format="json", HTTP_IF_MATCH=read["ETag"]).status_code
        == 200
    )
    assert patch(reviewer_api, summary, read["ETag"], "Mine.").status_code == 412


def test_a_key_phrase_edit_makes_the_etag_stale(reviewer_api, other):
    summary = cited()
    citation = Citation.objects.get(summary=summary)
    read = reviewer_api.get(url(summary))
    phrase = other.patch(
        url(summary, f"citations/{citation.pk}"),
        {"key_phrase": "2.5 times"},
        format="json",
        HTTP_IF_MATCH=read["ETag"],
    )
    assert phrase.status_code == 200
    assert patch(reviewer_api, summary, read["ETag"], "Mine.").status_code == 412


def test_a_key_phrase_edit_keeps_its_etag_valid_across_a_recorded_check(reviewer_api):
    summary = cited()
    citation = Citation.objects.get(summary=summary)
    read = reviewer_api.get(url(summary))
    record_check(response_ms=70)
    response = reviewer_api.patch(
        url(summary, f"citations/{citation.pk}"),
        {"key_phrase": "2.5 times"},
        format="json",
        HTTP_IF_MATCH=read["ETag"],
    )
    assert response.status_code == 200, response.json()


def test_a_tag_of_another_summary_at_the_same_version_does_not_match(reviewer_api):
    first, second = cited(), cited()
    assert first.lock_version == second.lock_version
    tag = reviewer_api.get(url(first))["ETag"]
    assert patch(reviewer_api, second, tag, "Not this one.").status_code == 412


# --- Working copies ----------------------------------------------------------------------


def test_the_working_copys_etag_survives_a_recorded_check(reviewer_api, other):
    live = cited(live=True)
    first = patch(reviewer_api, live, reviewer_api.get(url(live))["ETag"], "Changed.")
    assert first.status_code == 200
    read = reviewer_api.get(url(live, "working-copy"))
    record_check(response_ms=110)
    assert reviewer_api.get(url(live, "working-copy"))["ETag"] != read["ETag"]
    response = patch(reviewer_api, live, read["ETag"], "Changed after the check.")
    assert response.status_code == 200, response.json()
    # Another edit of the changes in between is still a conflict.
    assert patch(other, live, read["ETag"], "Stale.").status_code == 412


def test_a_discarded_copys_tag_does_not_match_the_next_copy(reviewer_api, other):
    live = cited(live=True)
    assert (
        patch(reviewer_api, live, reviewer_api.get(url(live))["ETag"], "First changes.").status_code
        == 200
    )
    old = reviewer_api.get(url(live, "working-copy"))
    discarded = other.post(url(live, "discard-changes"), HTTP_IF_MATCH=old["ETag"])
    assert discarded.status_code == 200
    assert patch(other, live, discarded["ETag"], "Other changes.").status_code == 200
    new = other.get(url(live, "working-copy"))
    # Both copies started from the live summary: the same lock version, another copy.
    assert new.json()["lock_version"] == old.json()["lock_version"]
    assert patch(reviewer_api, live, old["ETag"], "Mine.").status_code == 412
    assert Summary.objects.get(working_copy_of=live).tldr == "Other changes."


def test_a_video_edit_through_a_published_summary_makes_its_copys_tag_stale(reviewer_api, other):
    live = cited(live=True)
    assert (
        patch(reviewer_api, live, reviewer_api.get(url(live))["ETag"], "Changed.").status_code
        == 200
    )
    read = reviewer_api.get(url(live, "working-copy"))
    edit = {"video": {"title": "A better title"}}
    assert (
        other.patch(url(live), edit, format="json", HTTP_IF_MATCH=read["ETag"]).status_code == 200
    )
    assert patch(reviewer_api, live, read["ETag"], "Mine.").status_code == 412


def test_a_key_phrase_edit_of_a_published_summary_makes_its_copys_tag_stale(reviewer_api, other):
    live = cited(live=True)
    assert (
        patch(reviewer_api, live, reviewer_api.get(url(live))["ETag"], "Changed.").status_code
        == 200
    )
    citation = Citation.objects.get(summary=live)
    read = reviewer_api.get(url(live, "working-copy"))
    edit = other.patch(
        url(live, f"citations/{citation.pk}"),
        {"key_phrase": "2.5 times"},
        format="json",
        HTTP_IF_MATCH=read["ETag"],
    )
    assert edit.status_code == 200, edit.json()
    assert patch(reviewer_api, live, read["ETag"], "Mine.").status_code == 412


# --- Workflow actions --------------------------------------------------------------------


def _ready(action):
    """A summary the action applies to, and the read whose ETag the action expects."""
    if action in ("submit-for-review", "publish"):
        return cited(), ""
    if action == "send-back":
        return cited(status=Summary.Status.IN_REVIEW), ""
    if action == "unpublish":
        return cited(live=True), ""
    live = cited(live=True)  # discard-changes: a published summary with changes
    client = client_for(ReviewerFactory())
    assert patch(client, live, client.get(url(live))["ETag"], "Changes.").status_code == 200
    return live, "working-copy"


ACTIONS = ["submit-for-review", "publish", "send-back", "unpublish", "discard-changes"]


@pytest.mark.parametrize("action", ACTIONS)
def test_a_workflow_action_after_a_recorded_check_succeeds(reviewer_api, action):
    summary, read_path = _ready(action)
    read = reviewer_api.get(url(summary, read_path))
    record_check(response_ms=60)
    response = reviewer_api.post(
        url(summary, action),
        {"note": "Say who measured it."},
        format="json",
        HTTP_IF_MATCH=read["ETag"],
    )
    assert response.status_code == 200, response.json()


@pytest.mark.parametrize("action", ACTIONS)
def test_a_workflow_action_after_an_edit_is_412(reviewer_api, other, action):
    summary, read_path = _ready(action)
    read = reviewer_api.get(url(summary, read_path))
    assert patch(other, summary, read["ETag"], "Theirs.").status_code == 200
    record_check(response_ms=60)
    before = Summary.objects.get(pk=summary.pk).status
    response = reviewer_api.post(
        url(summary, action),
        {"note": "Say who measured it."},
        format="json",
        HTTP_IF_MATCH=read["ETag"],
    )
    assert response.status_code == 412
    assert Summary.objects.get(pk=summary.pk).status == before


# --- The contract ------------------------------------------------------------------------


def test_the_schema_says_what_if_match_guards():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = schema["paths"]
    operations = [
        paths["/api/v1/summaries/{slug}/"]["patch"],
        paths["/api/v1/summaries/{slug}/"]["put"],
        paths["/api/v1/summaries/{slug}/publish/"]["post"],
        paths["/api/v1/summaries/{slug}/citations/{citation_id}/"]["patch"],
    ]
    for operation in operations:
        (if_match,) = [p for p in operation["parameters"] if p["name"] == "If-Match"]
        assert "Edit-Version" in if_match["description"]
        assert "check" in if_match["description"]
