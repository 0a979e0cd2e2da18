"""Receipts through the API: a video's transcript (read live by anyone, as a draft by
editors; imported by editors) and the pins of a summary's statements (?expand=pins; set,
move, reject, approve, override, suggestions), for every kind of client."""

import re
import time
from pathlib import Path

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from reversion.models import Version

from summaries.editing import copies, pinning, save, workflow
from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway, Transcript, Video

from .factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
    UserFactory,
    reviewers_group,
)
from .receipts_factories import (
    PARAPHRASED_POINT,
    SPEECH,
    SPEECH_CORRECTED,
    UNSAID_POINT,
    VERBATIM_POINT,
    VERBATIM_QUOTE,
    cut_short_talk,
    make_transcript,
    pin_and_approve,
    pin_best,
    vtt,
)
from .transcript_files import one_cue_of_words

pytestmark = pytest.mark.django_db

FILES = Path(__file__).parent / "transcripts"
CAVEAT = "It does not replace a human reviewer."  # said at 0:14
CLIENTS = ["anonymous", "reader", "editor", "reviewer_only", "reviewer"]


def client_for(kind: str) -> APIClient:
    """A client as it reaches the API: with a token, or without (anonymous)."""
    client = APIClient()
    if kind == "anonymous":
        return client
    if kind == "reader":
        user = UserFactory()
    elif kind == "editor":
        user = EditorFactory()
    elif kind == "reviewer_only":
        user = UserFactory(is_staff=True)
        user.groups.add(reviewers_group())
    else:
        user = ReviewerFactory()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def build(*, publish: bool) -> Summary:
    """A summary of each kind of part, pinned against the video's transcript: the key point
    said word for word, the takeaway a paraphrase an editor approved, the chapter quoting
    the video, the caveat said word for word (each statement pinned: the gate publishes
    nothing unpinned)."""
    summary = SummaryFactory()
    KeyPointFactory(summary=summary, title="Pricing", body=VERBATIM_POINT, time=22)
    TakeawayFactory(summary=summary, text=PARAPHRASED_POINT, time=6)
    ChapterFactory(
        summary=summary, title="Weights", start_time=40, body=f"He said “{VERBATIM_QUOTE}”."
    )
    Caveat.objects.create(summary=summary, position=1, text=CAVEAT)
    make_transcript(summary.video, SPEECH)
    save.save_summary(summary=summary, parts={}, user=None)  # pins the quotation
    pin_best(summary, KeyPoint.objects.get(summary=summary))
    takeaway = Takeaway.objects.get(summary=summary)
    pin_best(summary, takeaway)
    ann = ReviewerFactory(username="ann")
    pinning.approve_pin(summary=summary, part=takeaway, user=ann)
    pin_and_approve(summary, ann)  # the chapter's start and the caveat
    if publish:
        workflow.publish_summary(summary=summary, user=None)
    summary.refresh_from_db()
    return summary


@pytest.fixture
def live():
    return build(publish=True)


@pytest.fixture
def draft():
    return build(publish=False)


def transcript_url(summary: Summary) -> str:
    return f"/api/v1/videos/{summary.video.slug}/transcript/"


def pin_url(summary: Summary, part, action: str = "") -> str:
    kind = {KeyPoint: "key-points", Takeaway: "takeaways", Chapter: "chapters", Caveat: "caveats"}
    tail = f"{action}/" if action else ""
    return f"/api/v1/summaries/{summary.video.slug}/{kind[type(part)]}/{part.pk}/pin/{tail}"


def version_of(client: APIClient, summary: Summary) -> str:
    """The Edit-Version a pin write must name: of the changes when the summary has them."""
    response = client.get(f"/api/v1/summaries/{summary.video.slug}/")
    copy = copies.working_copy_of(summary)
    if copy is not None:
        response = client.get(f"/api/v1/summaries/{summary.video.slug}/working-copy/")
    return response["Edit-Version"]


def refuse(summary: Summary) -> KeyPoint:
    """Rewrite the key point into something the video never says: its pin is refused."""
    summary.refresh_from_db()  # as read now: pin writes move its lock_version on
    point = point_of(summary)
    point.body = UNSAID_POINT
    save.save_summary(summary=summary, parts={KeyPoint: [point]}, user=None)
    point = point_of(summary)
    assert point.pin["status"] == "not_found"
    return point


def revisions() -> int:
    return Version.objects.count()


def point_of(summary: Summary) -> KeyPoint:
    return KeyPoint.objects.get(summary=summary)


# --- Reading the transcript ------------------------------------------------------------


@pytest.mark.parametrize("kind", CLIENTS)
def test_anyone_reads_the_live_transcript_once_the_summary_is_live(live, kind):
    response = client_for(kind).get(transcript_url(live))
    assert response.status_code == 200
    data = response.json()
    assert data["video"] == live.video.slug and data["state"] == "live"
    assert (data["language"], data["format"], data["length"], data["duration"]) == (
        "en",
        "vtt",
        60.0,
        "1:00",
    )
    assert data["word_count"] == sum(len(text.split()) for _, _, text in SPEECH)
    assert [s["text"] for s in data["segments"]] == [text for _, _, text in SPEECH]
    firsts = [s["first_word"] for s in data["segments"]]
    assert firsts[0] == 0 and firsts[1] == len(SPEECH[0][2].split())
    assert data["words"] == data["word_count"]
    assert data["url"].endswith(transcript_url(live))


@pytest.mark.parametrize("kind", CLIENTS)
def test_a_draft_transcript_is_shown_to_editors_only(live, kind):
    pinning.import_transcript(video=live.video, data=vtt(SPEECH_CORRECTED), user=None)
    response = client_for(kind).get(transcript_url(live) + "?state=draft")
    if kind in ("anonymous", "reader"):
        assert response.status_code == 404
        assert "four" not in response.content.decode()
        return
    assert response.status_code == 200
    assert response.json()["state"] == "draft"
    assert "four times faster" in response.json()["segments"][1]["text"]
    # The live one is unchanged until a reviewer publishes the changes.
    live_text = client_for(kind).get(transcript_url(live)).json()["segments"][1]["text"]
    assert "two and a half" in live_text


@pytest.mark.parametrize("kind", CLIENTS)
def test_the_transcript_of_a_summary_not_live_is_a_404_to_readers(draft, kind):
    Transcript.objects.filter(video=draft.video).update(state=Transcript.State.LIVE)
    response = client_for(kind).get(transcript_url(draft))
    assert response.status_code == (404 if kind in ("anonymous", "reader") else 200)


def test_no_transcript_is_a_404(live):
    Transcript.objects.all().delete()
    assert APIClient().get(transcript_url(live)).status_code == 404
    assert APIClient().get("/api/v1/videos/nothing-here/transcript/").status_code == 404


@pytest.mark.parametrize(
    ("query", "field"), [("state=secret", "state"), ("language=zz-top", "language")]
)
def test_a_bad_state_or_language_is_a_400_naming_it(live, query, field):
    response = APIClient().get(transcript_url(live) + "?" + query)
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == [field]


def test_the_transcript_answers_304_to_its_etag(live):
    client = APIClient()
    first = client.get(transcript_url(live))
    again = client.get(transcript_url(live), HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert first["Last-Modified"]


def test_reading_a_transcript_takes_a_fixed_number_of_queries(live, django_assert_num_queries):
    client = client_for("editor")
    client.get(transcript_url(live))
    # Token and user, the user's groups' permissions, the video, the transcript.
    with django_assert_num_queries(5):
        assert client.get(transcript_url(live)).status_code == 200


# --- Importing a transcript ------------------------------------------------------------


def put_vtt(client, summary, data: bytes, **headers):
    return client.generic("PUT", transcript_url(summary), data, content_type="text/vtt", **headers)


def test_an_editor_imports_a_webvtt_body_and_the_drafts_pins_are_verified(editor_api, draft):
    before = point_of(draft).pin
    Transcript.objects.all().delete()
    Video.objects.filter(pk=draft.video_id).update(duration_seconds=60)  # as long as SPEECH
    response = put_vtt(editor_api, draft, vtt(SPEECH_CORRECTED))
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["state"] == "draft" and data["format"] == "vtt"
    assert data["summary"].endswith(f"/api/v1/summaries/{draft.video.slug}/")
    assert response["Location"].endswith(transcript_url(draft) + "?state=draft")
    assert data["warnings"] == []
    after = point_of(draft).pin
    assert after["transcript"] != before["transcript"] and after["status"] == "contradicted"


def test_a_transcript_cut_short_is_imported_with_the_warning_in_the_answer(editor_api, draft):
    Transcript.objects.all().delete()
    data, length = cut_short_talk()
    Video.objects.filter(pk=draft.video_id).update(duration_seconds=length)
    response = put_vtt(editor_api, draft, data)
    assert response.status_code == 201, response.json()
    [warning] = response.json()["warnings"]
    assert re.fullmatch(
        r"the transcript ends at 5:1\d of a 16:23 video \(32 %\): it may be cut short", warning
    )
    assert Transcript.objects.get(video=draft.video).warnings == [warning]
    again = editor_api.get(transcript_url(draft), {"state": "draft"})
    assert again.json()["warnings"] == [warning]


def test_a_multipart_form_file_keeps_its_name(editor_api, draft):
    Transcript.objects.all().delete()
    upload = SimpleUploadedFile("lecture.srt", (FILES / "lecture.srt").read_bytes())
    response = editor_api.put(transcript_url(draft), {"file": upload}, format="multipart")
    assert response.status_code == 201, response.json()
    assert response.json()["format"] == "srt"
    assert Transcript.objects.get(video=draft.video).original_name == "lecture.srt"


def test_a_json_transcript_over_the_api_body_cap_is_accepted_up_to_its_own(
    editor_api, draft, settings
):
    Transcript.objects.all().delete()
    data = (FILES / "whisper.json").read_bytes()
    settings.API_MAX_BODY_BYTES = 1000
    assert len(data) > settings.API_MAX_BODY_BYTES
    response = editor_api.generic(
        "PUT", transcript_url(draft), data, content_type="application/json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["format"] == "whisper"
    # Other bodies keep the general cap.
    slug = draft.video.slug
    big = editor_api.patch(
        f"/api/v1/summaries/{slug}/", {"tldr": "x" * 2000}, format="json", HTTP_IF_MATCH="*"
    )
    assert big.status_code == 413


@pytest.mark.parametrize("how", ["body", "declared", "form"])
def test_a_file_over_transcript_max_bytes_is_a_413_and_nothing_is_written(
    editor_api, draft, settings, how
):
    Transcript.objects.all().delete()
    settings.TRANSCRIPT_MAX_BYTES = 2000
    data = vtt(SPEECH * 6)
    assert len(data) > 2000
    if how == "form":
        upload = SimpleUploadedFile("big.vtt", data)
        response = editor_api.put(transcript_url(draft), {"file": upload}, format="multipart")
    elif how == "declared":
        response = put_vtt(editor_api, draft, data[:100], CONTENT_LENGTH="5000000")
    else:
        response = put_vtt(editor_api, draft, data)
    assert response.status_code == 413
    assert "2000" in response.json()["error"]["message"]
    assert not Transcript.objects.exists()


def test_a_file_of_millions_of_words_is_a_400_naming_the_file_and_nothing_is_written(
    editor_api, draft
):
    Transcript.objects.all().delete()
    pins = revisions()
    data = one_cue_of_words(9_500_000)  # 19 MB, under TRANSCRIPT_MAX_BYTES
    started = time.monotonic()
    response = put_vtt(editor_api, draft, data)
    # Answered long before gunicorn's worker timeout (30 s by default) would kill the
    # worker; reading the file is linear (tests/test_transcript_parsing.py).
    assert time.monotonic() - started < 15
    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == ["file"]
    assert "9,500,004 words" in error["fields"]["file"][0]
    assert "more than the 250,000 words a transcript may have" in error["fields"]["file"][0]
    assert not Transcript.objects.exists() and revisions() == pins


def test_a_file_that_cannot_be_read_is_a_400_naming_the_line(editor_api, draft):
    Transcript.objects.all().delete()
    pins = revisions()
    broken = b"WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nHello.\n\n00:00:04.000 -> 50%\nBye.\n"
    response = put_vtt(editor_api, draft, broken)
    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == ["file"]
    assert "line 6" in error["fields"]["file"][0]
    assert error["message"].startswith("file: ")
    assert not Transcript.objects.exists() and revisions() == pins


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [(b"", "text/vtt", 400), (b"\x89PNG", "image/png", 415), (b"{}", "application/json", 400)],
)
def test_an_empty_body_or_another_media_type_is_refused(
    editor_api, draft, body, content_type, status
):
    Transcript.objects.all().delete()
    response = editor_api.generic("PUT", transcript_url(draft), body, content_type=content_type)
    assert response.status_code == status
    if status == 400:
        assert list(response.json()["error"]["fields"]) == ["file"]
    assert not Transcript.objects.exists()


def test_a_form_without_its_file_names_the_field(editor_api, draft):
    response = editor_api.put(transcript_url(draft), {"other": "x"}, format="multipart")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["file"]


def test_a_bad_language_is_a_400_naming_it(editor_api, draft):
    response = put_vtt(editor_api, draft, vtt(SPEECH))
    response = editor_api.generic(
        "PUT", transcript_url(draft) + "?language=xx-nope", vtt(SPEECH), content_type="text/vtt"
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["language"]


def test_replacing_a_draft_needs_its_etag(editor_api, draft):
    current = editor_api.get(transcript_url(draft) + "?state=draft")["ETag"]
    assert put_vtt(editor_api, draft, vtt(SPEECH_CORRECTED)).status_code == 428
    assert (
        put_vtt(editor_api, draft, vtt(SPEECH_CORRECTED), HTTP_IF_MATCH='"1-2-x"').status_code
        == 412
    )
    assert Transcript.objects.get(video=draft.video).digest == point_of(draft).pin["transcript"]
    response = put_vtt(editor_api, draft, vtt(SPEECH_CORRECTED), HTTP_IF_MATCH=current)
    assert response.status_code == 200
    assert response["ETag"] != current


def test_an_import_for_a_live_summary_goes_to_its_changes(editor_api, live):
    response = put_vtt(editor_api, live, vtt(SPEECH_CORRECTED))
    assert response.status_code == 201
    assert response.json()["summary"].endswith(f"/api/v1/summaries/{live.video.slug}/working-copy/")
    copy = copies.working_copy_of(live)
    assert point_of(copy).pin["status"] == "contradicted"
    assert point_of(live).pin["status"] == "verbatim"
    assert APIClient().get(transcript_url(live)).json()["state"] == "live"


@pytest.mark.parametrize(
    ("kind", "status"),
    [("anonymous", 401), ("reader", 403), ("editor", 201), ("reviewer_only", 201)],
)
def test_who_may_import_a_transcript(draft, kind, status):
    Transcript.objects.all().delete()
    response = put_vtt(client_for(kind), draft, vtt(SPEECH))
    assert response.status_code == status
    assert Transcript.objects.exists() is (status == 201)


def test_post_imports_as_put_does(editor_api, draft):
    Transcript.objects.all().delete()
    response = editor_api.generic(
        "POST", transcript_url(draft), vtt(SPEECH), content_type="text/vtt"
    )
    assert response.status_code == 201


# --- Pins in the summary ---------------------------------------------------------------


def test_without_expand_parts_have_no_pins(live):
    data = APIClient().get(f"/api/v1/summaries/{live.video.slug}/").json()
    for name in ("key_points", "takeaways", "chapters", "caveats"):
        for part in data[name]:
            assert "pin" not in part and "quote_pins" not in part


@pytest.mark.parametrize("kind", ["anonymous", "editor"])
def test_expand_pins_shows_each_parts_pin_and_each_chapters_quotations(live, kind):
    response = client_for(kind).get(f"/api/v1/summaries/{live.video.slug}/?expand=pins")
    assert response.status_code == 200
    data = response.json()
    (point,) = data["key_points"]
    pin = point["pin"]
    assert pin["status"] == "verbatim" and pin["words"].startswith("Pricing starts at twenty")
    assert pin["start"] == 22.0 and pin["stop"] > pin["start"]
    assert pin["reason"] and not pin["approved"] and not pin["overridden"]
    (takeaway,) = data["takeaways"]
    assert takeaway["pin"]["status"] == "paraphrase" and takeaway["pin"]["approved"]
    approval = takeaway["pin"]["approval"]
    if kind == "editor":
        assert approval["by"] == "ann"
    else:
        assert approval is None  # editors' names are not shown to readers
    (chapter,) = data["chapters"]
    (quote,) = chapter["quote_pins"]
    assert (quote["index"], quote["quote"], quote["status"]) == (0, VERBATIM_QUOTE, "verbatim")
    assert "open weights will matter more than benchmarks" in quote["words"].lower()
    (caveat,) = data["caveats"]
    assert caveat["pin"]["status"] == "verbatim"
    assert caveat["pin"]["words"].startswith("It does not replace a human reviewer")


def test_a_draft_is_still_a_404_with_pins_expanded(draft):
    response = APIClient().get(f"/api/v1/summaries/{draft.video.slug}/?expand=pins")
    assert response.status_code == 404


def test_expanding_pins_costs_no_query(live, django_assert_num_queries):
    """Pins are stored on their parts with the words they quote: no transcript is read."""
    client = client_for("editor")
    url = f"/api/v1/summaries/{live.video.slug}/"
    client.get(url)  # permissions and content types read once per process
    with CaptureQueriesContext(connection) as plain:
        client.get(url)
    with django_assert_num_queries(len(plain)):
        client.get(url + "?expand=pins")


def test_a_list_does_not_expand_pins(live):
    response = APIClient().get("/api/v1/summaries/?expand=pins")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["expand"]


# --- Writing pins ----------------------------------------------------------------------


def suggestion(client, summary, part) -> dict:
    response = client.get(pin_url(summary, part, "suggestions"))
    assert response.status_code == 200, response.json()
    return response.json()[0]


def test_an_editor_moves_a_pin_to_a_suggestion(editor_api, draft):
    point = point_of(draft)
    best = suggestion(editor_api, draft, point)
    assert best["words"].startswith("Pricing starts at twenty") and best["score"] > 0
    before = revisions()
    body = {"first": 0, "end": 5}
    response = editor_api.put(
        pin_url(draft, point), body, format="json", HTTP_IF_MATCH=version_of(editor_api, draft)
    )
    assert response.status_code == 200, response.json()
    data = response.json()
    assert data["pin"]["words"] == "Welcome back to the channel,"
    assert (
        data["pin"]["status"] == "paraphrase" and "outside the pinned span" in data["pin"]["reason"]
    )
    assert data["part"] == {
        "type": "key_point",
        "id": point.pk,
        "position": point.position,
        "text": "Pricing",
    }
    assert revisions() > before
    body = {"first": best["first"], "end": best["end"]}
    response = editor_api.put(
        pin_url(draft, point), body, format="json", HTTP_IF_MATCH=version_of(editor_api, draft)
    )
    assert response.json()["pin"]["status"] == "verbatim" and response.json()["problems"] == []
    assert point_of(draft).pin["status"] == "verbatim"


def test_a_pin_write_needs_if_match(editor_api, draft):
    point = point_of(draft)
    body = {"first": 0, "end": 5}
    assert editor_api.put(pin_url(draft, point), body, format="json").status_code == 428
    old = version_of(editor_api, draft)
    save.save_summary(summary=draft, parts={}, user=None)  # someone edits the text
    response = editor_api.put(pin_url(draft, point), body, format="json", HTTP_IF_MATCH=old)
    assert response.status_code == 412
    assert point_of(draft).pin["status"] == "verbatim"


def test_a_pin_write_moves_the_edit_version_so_a_second_writer_is_stopped(editor_api, draft):
    # Two editors read the same version; the first moves the pin, the second (who has not
    # seen that) must not approve or move it over the first one's change.
    point = point_of(draft)
    read = version_of(editor_api, draft)
    first = editor_api.put(
        pin_url(draft, point), {"first": 0, "end": 5}, format="json", HTTP_IF_MATCH=read
    )
    assert first.status_code == 200, first.json()
    assert first["Edit-Version"] != read
    assert first["Edit-Version"] == version_of(editor_api, draft)
    second = editor_api.post(pin_url(draft, point, "approve"), {}, HTTP_IF_MATCH=read)
    assert second.status_code == 412
    assert point_of(draft).pin.get("approved") is None
    again = editor_api.post(
        pin_url(draft, point, "approve"), {}, HTTP_IF_MATCH=first["Edit-Version"]
    )
    assert again.status_code == 200, again.json()


def test_a_pin_of_a_live_summary_is_changed_in_its_changes(editor_api, live):
    point = point_of(live)
    response = editor_api.delete(pin_url(live, point), HTTP_IF_MATCH=version_of(editor_api, live))
    assert response.status_code == 200, response.json()
    data = response.json()
    copy = copies.working_copy_of(live)
    assert data["summary"].endswith(f"/api/v1/summaries/{live.video.slug}/working-copy/")
    assert data["part"]["id"] == point_of(copy).pk != point.pk and data["pin"] is None
    assert response["Edit-Version"] == f'"{copy.lock_version}-{copy.pk}"'
    assert point_of(copy).pin is None and point_of(live).pin["status"] == "verbatim"
    # The live part's id still reaches its copy in the changes.
    best = suggestion(editor_api, live, point)
    body = {"first": best["first"], "end": best["end"]}
    response = editor_api.put(
        pin_url(live, point), body, format="json", HTTP_IF_MATCH=response["Edit-Version"]
    )
    assert response.status_code == 200 and response.json()["pin"]["status"] == "verbatim"
    assert point_of(copy).pin["status"] == "verbatim"
    changes = editor_api.get(f"/api/v1/summaries/{live.video.slug}/working-copy/?expand=pins")
    assert changes.json()["key_points"][0]["pin"]["status"] == "verbatim"
    assert changes.json()["key_points"][0]["id"] == point_of(copy).pk


def test_an_editor_approves_a_paraphrase_and_nothing_else(editor_api, draft):
    takeaway = Takeaway.objects.get(summary=draft)
    best = suggestion(editor_api, draft, takeaway)
    version = version_of(editor_api, draft)
    body = {"first": best["first"], "end": best["end"]}
    moved = editor_api.put(pin_url(draft, takeaway), body, format="json", HTTP_IF_MATCH=version)
    assert not Takeaway.objects.get(pk=takeaway.pk).pin["approved"]
    version = moved["Edit-Version"]
    response = editor_api.post(pin_url(draft, takeaway, "approve"), {}, HTTP_IF_MATCH=version)
    assert response.status_code == 200 and response.json()["pin"]["approved"]
    assert response.json()["pin"]["approval"]["by"]
    version = response["Edit-Version"]
    before = revisions()
    point = point_of(draft)
    response = editor_api.post(pin_url(draft, point, "approve"), {}, HTTP_IF_MATCH=version)
    assert response.status_code == 400
    assert "paraphrase" in response.json()["error"]["message"]
    assert revisions() == before and not point_of(draft).pin["approved"]


def test_a_reviewer_overrides_a_refused_pin_with_a_note(reviewer_api, draft):
    point = refuse(draft)
    version = version_of(reviewer_api, draft)
    problems = reviewer_api.post(pin_url(draft, point, "approve"), {}, HTTP_IF_MATCH=version)
    assert problems.status_code == 400  # not a paraphrase: nothing for an editor to approve
    url = pin_url(draft, point, "override")
    for note in ("", "   "):
        response = reviewer_api.post(url, {"note": note}, format="json", HTTP_IF_MATCH=version)
        assert response.status_code == 400
        assert list(response.json()["error"]["fields"]) == ["note"]
    assert not point_of(draft).pin["override"]
    response = reviewer_api.post(
        url, {"note": "Said off camera."}, format="json", HTTP_IF_MATCH=version
    )
    assert response.status_code == 200, response.json()
    pin = response.json()["pin"]
    assert pin["overridden"] and pin["override"]["note"] == "Said off camera."
    assert response.json()["problems"] == []


def test_overriding_a_pin_that_refuses_nothing_is_a_400(reviewer_api, draft):
    point = point_of(draft)
    url = pin_url(draft, point, "override")
    response = reviewer_api.post(
        url, {"note": "Why not."}, format="json", HTTP_IF_MATCH=version_of(reviewer_api, draft)
    )
    assert response.status_code == 400 and not point_of(draft).pin["override"]


def test_a_quotation_is_addressed_by_its_index(editor_api, draft):
    chapter = Chapter.objects.get(summary=draft)
    version = version_of(editor_api, draft)
    response = editor_api.put(
        pin_url(draft, chapter),
        {"first": 0, "end": 4, "quote": 0},
        format="json",
        HTTP_IF_MATCH=version,
    )
    assert response.status_code == 200, response.json()
    data = response.json()
    assert data["quote"] == 0 and data["pin"]["quote"] == VERBATIM_QUOTE
    assert (data["pin"]["index"], data["pin"]["first"], data["pin"]["end"]) == (0, 0, 4)
    assert data["pin"]["words"] == "Welcome back to the"
    assert Chapter.objects.get(pk=chapter.pk).quote_pins[0]["first"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "first"),
        ({"first": -1, "end": 3}, "first"),
        ({"first": "three", "end": 3}, "first"),
        ({"first": 5, "end": 5}, "end"),
        ({"first": 0, "end": 99999}, "end"),
        ({"first": 0, "end": 3, "quote": 7}, "quote"),
        ({"first": 0, "end": 3, "quote": -1}, "quote"),
        ({"first": 0, "end": 3, "status": "verbatim"}, "status"),
        ([1, 2], "non_field_errors"),
    ],
)
def test_bad_pin_input_is_a_400_naming_the_field_and_writes_nothing(editor_api, live, body, field):
    point = point_of(live)
    before = revisions()
    response = editor_api.put(
        pin_url(live, point), body, format="json", HTTP_IF_MATCH=version_of(editor_api, live)
    )
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert revisions() == before
    assert copies.working_copy_of(live) is None  # no changes made behind the error


def test_a_body_that_is_not_json_is_a_400(editor_api, draft):
    response = editor_api.generic(
        "PUT",
        pin_url(draft, point_of(draft)),
        b"{first: 1",
        content_type="application/json",
        HTTP_IF_MATCH=version_of(editor_api, draft),
    )
    assert response.status_code == 400


def test_unknown_parts_and_summaries_are_404(editor_api, draft, live):
    version = version_of(editor_api, draft)
    other = point_of(live)
    body = {"first": 0, "end": 3}
    url = pin_url(draft, other)  # a part of another summary
    assert editor_api.put(url, body, format="json", HTTP_IF_MATCH=version).status_code == 404
    url = f"/api/v1/summaries/{draft.video.slug}/key-points/999999/pin/"
    assert editor_api.put(url, body, format="json", HTTP_IF_MATCH=version).status_code == 404
    url = "/api/v1/summaries/no-such/key-points/1/pin/"
    assert editor_api.put(url, body, format="json", HTTP_IF_MATCH=version).status_code == 404
    url = f"/api/v1/summaries/{draft.video.slug}/sources/1/pin/"
    assert editor_api.put(url, body, format="json", HTTP_IF_MATCH=version).status_code == 404


def test_a_pin_without_a_transcript_is_a_400(editor_api, draft):
    Transcript.objects.all().delete()
    response = editor_api.put(
        pin_url(draft, point_of(draft)),
        {"first": 0, "end": 3},
        format="json",
        HTTP_IF_MATCH=version_of(editor_api, draft),
    )
    assert response.status_code == 400
    assert "no transcript" in response.json()["error"]["message"]


def test_suggestions_take_a_bounded_limit(editor_api, draft):
    url = pin_url(draft, point_of(draft), "suggestions")
    assert len(editor_api.get(url + "?limit=1").json()) == 1
    response = editor_api.get(url + "?limit=0")
    assert response.status_code == 400 and list(response.json()["error"]["fields"]) == ["limit"]


# Who may do what: every endpoint, every kind of client.
WRITES = {
    # endpoint: statuses of (anonymous, reader, editor, reviewer_only, reviewer)
    "set": (401, 403, 200, 200, 200),
    "reject": (401, 403, 200, 200, 200),
    "approve": (401, 403, 200, 200, 200),
    "override": (401, 403, 403, 200, 200),
    "suggestions": (404, 404, 200, 200, 200),
}


def call(client, summary, endpoint):
    """One request of `endpoint` on the summary's parts, as a client that read it."""
    point, takeaway = point_of(summary), Takeaway.objects.get(summary=summary)
    tag = version_of(client_for("reviewer"), summary)
    if endpoint == "suggestions":
        return client.get(pin_url(summary, point, "suggestions"))
    if endpoint == "set":
        return client.put(
            pin_url(summary, point), {"first": 0, "end": 5}, format="json", HTTP_IF_MATCH=tag
        )
    if endpoint == "reject":
        return client.delete(pin_url(summary, point), HTTP_IF_MATCH=tag)
    if endpoint == "approve":
        pinning.set_pin(
            summary=summary,
            part=takeaway,
            first=takeaway.pin["first"],
            end=takeaway.pin["end"],
            user=None,
        )
        tag = version_of(client_for("reviewer"), summary)
        return client.post(pin_url(summary, takeaway, "approve"), {}, HTTP_IF_MATCH=tag)
    point = refuse(summary)
    tag = version_of(client_for("reviewer"), summary)
    body = {"note": "Checked."}
    return client.post(pin_url(summary, point, "override"), body, format="json", HTTP_IF_MATCH=tag)


@pytest.mark.parametrize("endpoint", list(WRITES))
@pytest.mark.parametrize("kind", CLIENTS)
def test_who_may_change_pins(draft, endpoint, kind):
    expected = WRITES[endpoint][CLIENTS.index(kind)]
    before = point_of(draft).pin
    response = call(client_for(kind), draft, endpoint)
    assert response.status_code == expected, (endpoint, kind, response.content)
    if expected != 200 and endpoint in ("set", "reject"):
        assert point_of(draft).pin == before


@pytest.mark.parametrize("endpoint", ["set", "reject", "approve"])
def test_an_editor_changes_pins_of_another_editors_draft(endpoint):
    """Drafts belong to no one editor: the API's rule for every edit."""
    author = EditorFactory()
    summary = build(publish=False)
    Summary.objects.filter(pk=summary.pk).update(created_by=author, updated_by=author)
    response = call(client_for("editor"), summary, endpoint)
    assert response.status_code == 200


@pytest.mark.parametrize("kind", ["anonymous", "reader", "editor"])
def test_a_live_summary_is_not_changed_by_a_refused_override(live, kind):
    url = pin_url(live, point_of(live), "override")
    tag = version_of(client_for("reviewer"), live)
    response = client_for(kind).post(url, {"note": "No."}, format="json", HTTP_IF_MATCH=tag)
    assert response.status_code in (401, 403)
    assert copies.working_copy_of(live) is None


@pytest.mark.parametrize("kind", CLIENTS)
def test_options_describe_the_endpoints_to_every_client(live, kind):
    client = client_for(kind)
    for url in (
        transcript_url(live),
        pin_url(live, point_of(live)),
        pin_url(live, point_of(live), "override"),
        "/api/v1/summaries/nothing/key-points/1/pin/",
    ):
        assert client.options(url).status_code == 200, url


# --- The schema ------------------------------------------------------------------------


def test_the_schema_documents_transcripts_and_pins():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = schema["paths"]
    transcript = paths["/api/v1/videos/{slug}/transcript/"]
    assert set(transcript) >= {"get", "put", "post"}
    body = transcript["put"]["requestBody"]["content"]
    assert {"text/vtt", "application/x-subrip", "application/json", "multipart/form-data"} <= set(
        body
    )
    assert {"400", "413", "201", "200"} <= set(transcript["put"]["responses"])
    base = "/api/v1/summaries/{slug}/{kind}/{part_id}/pin/"
    for path, methods in (
        (base, ("put", "delete")),
        (base + "approve/", ("post",)),
        (base + "override/", ("post",)),
    ):
        for method in methods:
            parameters = paths[path][method]["parameters"]
            assert any(p["name"] == "If-Match" and p.get("required") for p in parameters)
    assert "404" in paths[base + "suggestions/"]["get"]["responses"]  # to all but editors
    assert {} in transcript["get"]["security"]
    detail = paths["/api/v1/summaries/{slug}/"]["get"]["parameters"]
    assert any(p["name"] == "expand" for p in detail)
    key_point = schema["components"]["schemas"]["KeyPoint"]
    assert "pin" in key_point["properties"] and "pin" not in key_point.get("required", [])


def _as_json_schema(node):
    """OpenAPI 3.0's `nullable` as JSON Schema's null type, everywhere in `node`; `oneOf`
    as `anyOf` (formats, such as an empty URL or a URL, are not checked here)."""
    if isinstance(node, list):
        return [_as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {
        "anyOf" if key == "oneOf" else key: _as_json_schema(value) for key, value in node.items()
    }
    if converted.pop("nullable", False):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


def test_the_answers_match_the_schema(live, draft):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = _as_json_schema(schema["components"])

    def check(response, path, method):
        answer = schema["paths"][path][method]["responses"][str(response.status_code)]
        body = _as_json_schema(answer["content"]["application/json"]["schema"])
        jsonschema.validate(response.json(), {**body, "components": components})

    editor, reviewer = client_for("editor"), client_for("reviewer")
    check(APIClient().get(transcript_url(live)), "/api/v1/videos/{slug}/transcript/", "get")
    detail = editor.get(f"/api/v1/summaries/{live.video.slug}/?expand=pins")
    check(detail, "/api/v1/summaries/{slug}/", "get")
    base = "/api/v1/summaries/{slug}/{kind}/{part_id}/pin/"
    point = point_of(draft)
    check(editor.get(pin_url(draft, point, "suggestions")), base + "suggestions/", "get")
    tag = version_of(editor, draft)
    chapter = Chapter.objects.get(summary=draft)
    body = {"first": 0, "end": 4, "quote": 0}
    check(editor.put(pin_url(draft, chapter), body, format="json", HTTP_IF_MATCH=tag), base, "put")
    refuse(draft)
    tag = version_of(editor, draft)
    note = {"note": "Checked."}
    answer = reviewer.post(
        pin_url(draft, point, "override"), note, format="json", HTTP_IF_MATCH=tag
    )
    check(answer, base + "override/", "post")
    tag = answer["Edit-Version"]
    check(editor.delete(pin_url(draft, point), HTTP_IF_MATCH=tag), base, "delete")
    imported = put_vtt(editor, live, vtt(SPEECH_CORRECTED))
    check(imported, "/api/v1/videos/{slug}/transcript/", "put")
