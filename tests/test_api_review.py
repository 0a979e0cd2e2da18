"""The API's review: what a summary's changes change, the conversation, the reviewer."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.editing import copies, save
from summaries.models import Chapter, ReviewMessage, Summary

from .factories import ChapterFactory, EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db


def client_for(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def url(summary, action=""):
    return f"/api/v1/summaries/{summary.video.slug}/{action + '/' if action else ''}"


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Speed matters.")
    ChapterFactory(summary=summary, position=1, title="One", body="The first chapter.")
    ChapterFactory(summary=summary, position=2, title="Two", body="The second chapter.")
    return summary


def change(live):
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    copy.tldr = "Speed matters a lot."
    one, two = Chapter.objects.filter(summary=copy).order_by("position")
    one.body = "The opening chapter."
    save.save_summary(summary=copy, parts={Chapter: [one]}, user=None)
    return copy


def test_the_diff_of_a_summarys_changes_against_the_live_summary(live):
    change(live)
    one, two = Chapter.objects.filter(summary=live).order_by("position")

    response = client_for(ReviewerFactory()).get(url(live, "working-copy/diff"))

    assert response.status_code == 200
    body = response.json()
    assert body["changed"] is True
    assert body["fields"] == [
        {
            "name": "tldr",
            "label": "In 30 seconds",
            "changed": True,
            "old": "Speed matters.",
            "new": "Speed matters a lot.",
            "old_segments": [
                {"text": "Speed ", "changed": False},
                {"text": "matters.", "changed": True},
            ],
            "new_segments": [
                {"text": "Speed ", "changed": False},
                {"text": "matters a lot.", "changed": True},
            ],
        }
    ]
    chapters = next(kind for kind in body["parts"] if kind["kind"] == "chapters")
    assert {k: chapters[k] for k in ("added", "removed", "moved", "edited", "unchanged")} == {
        "added": 0,
        "removed": 1,
        "moved": 0,
        "edited": 1,
        "unchanged": 0,
    }
    edited, removed = chapters["items"]
    assert edited["id"] == one.pk and edited["change"] == "edited"
    assert [f["name"] for f in edited["fields"]] == ["body"]
    assert edited["fields"][0]["new_segments"][1] == {"text": "opening", "changed": True}
    assert removed == {
        "id": two.pk,
        "label": "Chapter 2: Two",
        "change": "removed",
        "old_position": 2,
        "new_position": None,
        "moved": False,
        "fields": removed["fields"],
    }
    takeaways = next(kind for kind in body["parts"] if kind["kind"] == "takeaways")
    assert takeaways["items"] == []


def test_the_diff_is_for_editors_and_only_when_there_are_changes(live):
    assert client_for(EditorFactory()).get(url(live, "working-copy/diff")).status_code == 404
    change(live)
    assert APIClient().get(url(live, "working-copy/diff")).status_code == 404
    assert client_for(EditorFactory()).get(url(live, "working-copy/diff")).status_code == 200


def test_the_diff_is_in_the_schema(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/summaries/{slug}/working-copy/diff/"]["get"]
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    shape = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(shape["properties"]) == {"changed", "fields", "parts"}
    assert "/api/v1/summaries/{slug}/review-messages/" in schema["paths"]


def test_the_conversation_is_listed_and_replied_to(live):
    editor, reviewer = EditorFactory(username="ed"), ReviewerFactory(username="rita")
    change(live)
    ed, rita = client_for(editor), client_for(reviewer)
    tag = ed.get(url(live, "working-copy"))["ETag"]
    submitted = ed.post(
        url(live, "submit-for-review"), {"message": "Trimmed."}, format="json", HTTP_IF_MATCH=tag
    )
    assert submitted.status_code == 200, submitted.json()
    sent_back = rita.post(
        url(live, "send-back"),
        {"note": "Why drop two?"},
        format="json",
        HTTP_IF_MATCH=submitted["ETag"],
    )
    assert sent_back.status_code == 200
    reply = ed.post(
        url(live, "review-messages"), {"text": "It <b>repeated</b> one."}, format="json"
    )
    assert reply.status_code == 201, reply.json()
    assert reply.json()["kind"] == "reply" and reply.json()["author"] == "ed"

    listed = rita.get(url(live, "review-messages")).json()

    assert [(m["kind"], m["author"], m["text"]) for m in listed] == [
        ("submitted", "ed", "Trimmed."),
        ("sent_back", "rita", "Why drop two?"),
        ("reply", "ed", "It <b>repeated</b> one."),
    ]
    assert set(listed[0]) == {"id", "kind", "author", "text", "created_at"}
    assert set(ReviewMessage.objects.values_list("summary", flat=True)) == {live.pk}


def test_replies_are_for_editors_and_reviewers_and_need_text(live):
    assert APIClient().get(url(live, "review-messages")).status_code == 404
    assert APIClient().post(url(live, "review-messages"), {"text": "Hi"}).status_code in (401, 403)
    empty = client_for(EditorFactory()).post(url(live, "review-messages"), {"text": " "})
    assert empty.status_code == 400
    assert not ReviewMessage.objects.exists()


def test_a_reviewer_is_assigned_through_the_api(live):
    reviewer = ReviewerFactory(username="rita")
    editor = client_for(EditorFactory())
    response = editor.post(url(live, "assign-reviewer"), {"reviewer": "rita"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["reviewer"] == "rita"
    live.refresh_from_db()
    assert live.assigned_to == reviewer
    refused = editor.post(url(live, "assign-reviewer"), {"reviewer": "nobody"}, format="json")
    assert refused.status_code == 400
    cleared = editor.post(url(live, "assign-reviewer"), {"reviewer": None}, format="json")
    assert cleared.json()["reviewer"] is None
    assert APIClient().get(url(live)).json()["reviewer"] is None  # readers never see it
    assert Summary.objects.get(pk=live.pk).assigned_to is None


def test_the_diffs_query_count_does_not_grow_with_the_parts(live):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = client_for(ReviewerFactory())
    change(live)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url(live, "working-copy/diff")).status_code == 200
        return len(captured)

    queries()  # the first request also reads the token
    few = queries()
    copy = Summary.objects.get(working_copy_of=live)
    for position in range(2, 8):
        ChapterFactory(summary=copy, position=position, title=f"More {position}", body="More.")
    assert queries() == few
