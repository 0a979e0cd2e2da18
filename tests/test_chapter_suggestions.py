"""Suggested chapters: a summary without chapters whose video has a transcript is offered
chapter starts where the subject changes (editing.chapter_suggestions); an editor keeps,
edits or drops them and adds them through the save path, in the admin's Receipts panel and
through the API, on a draft or in a published summary's unpublished changes."""

import jsonschema
import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from reversion.models import Version

from summaries.editing import chapter_suggestions as suggesting
from summaries.editing import copies, workflow
from summaries.models import Chapter, Summary, Transcript

from .clients import logged_in
from .factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
    UserFactory,
    reviewers_group,
)
from .pins_corpus import segments
from .receipts_factories import SPEECH, make_transcript, pin_and_approve
from .test_api_receipts import _as_json_schema

pytestmark = pytest.mark.django_db

# Three talks one after the other: the subject changes where each begins.
TALKS = ("speed", "local_ai", "kimi")


def talks() -> tuple[list[tuple[float, float, str]], list[float]]:
    """The talks' caption lines (start, end, text), and when each talk begins."""
    said, joins, clock = [], [], 0.0
    for talk in TALKS:
        part = segments(talk, offset=clock)
        joins.append(part[0].start)
        said += part
        clock = part[-1].end + 2.0
    return [(s.start, s.end, s.text) for s in said], joins


LINES, JOINS = talks()


def summary_with_transcript(**kwargs) -> Summary:
    summary = SummaryFactory(video__duration_seconds=900, **kwargs)
    KeyPointFactory(summary=summary, title="Speed", body="Speed matters as much as quality.")
    make_transcript(summary.video, LINES)
    return summary


@pytest.fixture
def draft() -> Summary:
    return summary_with_transcript()


@pytest.fixture
def live() -> Summary:
    summary = summary_with_transcript()
    pin_and_approve(summary, EditorFactory(username="pia"))  # the gate publishes no unpinned
    workflow.publish_summary(summary=summary, user=None)  # the transcript goes live with it
    summary.refresh_from_db()
    assert Transcript.objects.get(video=summary.video).state == Transcript.State.LIVE
    return summary


@pytest.fixture
def outsider():
    """Staff who may read summaries in the admin but change none (the Reviewers group
    without its part permissions is not it: this one has no permission at all)."""
    user = UserFactory(username="olga", is_staff=True)
    user.save()
    return user


def chosen(summary: Summary) -> list[tuple[int, str]]:
    return [(s.start, s.title) for s in suggesting.chapter_suggestions(summary)]


def chapters_of(summary: Summary) -> list[tuple[int | None, str]]:
    return list(
        Chapter.objects.filter(summary=summary)
        .order_by("position")
        .values_list("start_time", "title")
    )


def revisions() -> int:
    return Version.objects.count()


# --- The editing layer: what is suggested -----------------------------------------------


def test_a_summary_without_chapters_is_offered_chapters_where_the_subject_changes(draft):
    found = suggesting.chapter_suggestions(draft)
    starts = [s.start for s in found]
    assert starts[0] == 0
    for join in JOINS[1:]:
        assert min(abs(join - start) for start in starts) <= 5, (join, starts)
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert all(s.title and len(s.title) <= suggesting.TITLE_MAX for s in found)
    # The words said where each starts, for the editor to judge it by.
    assert found[0].said.startswith("so i feel vindicated")
    assert found[0].time == "0:00"


def test_nothing_is_suggested_once_the_summary_has_chapters(draft):
    ChapterFactory(summary=draft, start_time=0, title="Mine")
    assert suggesting.chapter_suggestions(draft) == []


def test_nothing_is_suggested_without_a_transcript():
    summary = SummaryFactory()
    assert suggesting.chapter_suggestions(summary) == []


def test_a_published_summary_is_offered_chapters_from_the_transcript_its_changes_go_live_with(
    live,
):
    # A shorter talk waits for review: the changes go live with it, so it decides.
    make_transcript(live.video, SPEECH, state=Transcript.State.DRAFT)
    assert [s.start for s in suggesting.chapter_suggestions(live)] == [0]
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    assert [s.start for s in suggesting.chapter_suggestions(copy)] == [0]
    ChapterFactory(summary=copy, start_time=0, title="In the changes")
    assert suggesting.chapter_suggestions(live) == []


# --- The editing layer: accepting ---------------------------------------------------------


def test_accepting_adds_the_chapters_as_given_with_their_words_and_pins(draft, editor):
    kept = chosen(draft)
    before = revisions()
    accepted = suggesting.accept_chapter_suggestions(summary=draft, user=editor, chosen=kept)
    assert accepted.summary.pk == draft.pk
    assert chapters_of(draft) == kept
    stored = list(Chapter.objects.filter(summary=draft).order_by("position"))
    # Each chapter's text is what is said until the next one starts, its start pinned.
    assert stored[0].body.startswith("so i feel vindicated um i have been a speed maxi")
    assert "hey everyone" not in stored[0].body and stored[1].body.startswith("hey everyone")
    assert all(c.pin and c.pin["status"] == "verbatim" for c in stored)
    assert all(c.pin["stated_time"] == c.start_time for c in stored)
    # One revision, by the editor, saying what was done.
    assert revisions() > before
    version = Version.objects.get_for_object(draft).first()
    assert version.revision.user == editor
    assert version.revision.comment == f"Added {len(kept)} suggested chapters"


def test_an_editor_changes_titles_and_times_and_drops_some(draft, editor):
    first, second, *_rest, last = chosen(draft)
    kept = [(last[0] + 10, "Kimi, tested"), (first[0], "  Why   speed matters "), (215, "Local")]
    suggesting.accept_chapter_suggestions(summary=draft, user=editor, chosen=kept)
    # In time order, titles with their spaces tidied; a dropped one is not added.
    assert chapters_of(draft) == [
        (0, "Why speed matters"),
        (215, "Local"),
        (last[0] + 10, "Kimi, tested"),
    ]
    assert second[0] not in [start for start, _ in chapters_of(draft)]
    local = Chapter.objects.get(summary=draft, title="Local")
    said = [w.text for w in Transcript.objects.get(video=draft.video).words() if w.start >= 215]
    assert local.body.split()[:12] == said[:12]


def test_markup_in_the_transcript_is_shown_as_said(editor):
    summary = SummaryFactory(video__duration_seconds=900)
    make_transcript(
        summary.video,
        [(0, 5, "[Music] see [this](javascript:alert(1)) *now*"), (5, 9, "# not a heading")],
    )
    suggesting.accept_chapter_suggestions(summary=summary, user=editor, chosen=[(0, "Start")])
    chapter = Chapter.objects.get(summary=summary)
    assert "<a" not in chapter.body_html and "<em>" not in chapter.body_html
    assert "<h1" not in chapter.body_html and "[Music]" in chapter.body_html
    assert summary.citations.count() == 0


def test_accepting_on_a_published_summary_goes_to_its_changes_and_readers_see_nothing(live, editor):
    kept = chosen(live)
    accepted = suggesting.accept_chapter_suggestions(summary=live, user=editor, chosen=kept)
    copy = copies.working_copy_of(live)
    assert accepted.summary.pk == copy.pk
    assert chapters_of(copy) == kept and chapters_of(live) == []
    title = chapters_of(copy)[1][1]
    # Readers: the page and the API show the summary as it was.
    page = Client().get(live.get_absolute_url())
    assert page.status_code == 200 and title not in page.content.decode()
    data = APIClient().get(f"/api/v1/summaries/{live.video.slug}/").json()
    assert data["chapters"] == []
    # Once a reviewer publishes the changes, they do.
    copies.publish_changes(summary=live, user=ReviewerFactory())
    assert [t for _s, t in chapters_of(live)][1] == title
    data = APIClient().get(f"/api/v1/summaries/{live.video.slug}/").json()
    assert [c["title"] for c in data["chapters"]][1] == title


def test_a_working_copy_passed_itself_is_written_to(live, editor):
    copy, _ids, _made = copies.edit_target(summary=live, user=editor)
    accepted = suggesting.accept_chapter_suggestions(summary=copy, user=editor, chosen=[(0, "A")])
    assert accepted.summary.pk == copy.pk and chapters_of(copy) == [(0, "A")]


def test_accepting_twice_adds_the_chapters_once(draft, editor):
    kept = chosen(draft)
    suggesting.accept_chapter_suggestions(summary=draft, user=editor, chosen=kept)
    before = revisions()
    with pytest.raises(ValidationError) as refused:
        suggesting.accept_chapter_suggestions(summary=draft, user=editor, chosen=kept)
    assert "has chapters already" in refused.value.message_dict["chapters"][0]
    assert len(chapters_of(draft)) == len(kept) and revisions() == before


def test_a_summary_with_chapters_is_refused(draft, editor):
    ChapterFactory(summary=draft, start_time=0, title="Mine")
    with pytest.raises(ValidationError) as refused:
        suggesting.accept_chapter_suggestions(summary=draft, user=editor, chosen=[(30, "X")])
    assert list(refused.value.message_dict) == ["chapters"]
    assert chapters_of(draft) == [(0, "Mine")]


def test_a_video_without_transcript_is_refused(editor):
    summary = SummaryFactory()
    with pytest.raises(ValidationError) as refused:
        suggesting.accept_chapter_suggestions(summary=summary, user=editor, chosen=[(0, "X")])
    assert "no transcript" in refused.value.message_dict["chapters"][0]


BAD_CHOICES = [
    ([(0, "A"), (99_999, "B")], "chapters[1].start", "not in the transcript"),
    ([(-5, "A")], "chapters[0].start", "not in the transcript"),
    ([(0, "A"), ("soon", "B")], "chapters[1].start", "in seconds"),
    ([(0, "A"), (float("nan"), "B")], "chapters[1].start", "in seconds"),
    ([(0, "A"), (0, "B")], "chapters[1].start", "Chapter 1 starts at 0:00 too"),
    ([(0, "A"), (0.4, "B")], "chapters[1].start", "too"),
    ([(0, "A"), (30, "   ")], "chapters[1].title", "Give the chapter a title"),
    ([(0, None)], "chapters[0].title", "Give the chapter a title"),
    ([(0, "x" * 201)], "chapters[0].title", "at most 200 characters"),
    ([(0, "\u200b\u200b")], "chapters[0].title", ""),
    ([], "chapters", "at least one"),
    ([(s, f"T{s}") for s in range(0, 201 * 3, 3)], "chapters", "at most 200"),
]


@pytest.mark.parametrize(("kept", "field", "words"), BAD_CHOICES)
def test_a_wrong_chapter_is_refused_naming_its_field_and_nothing_is_written(
    live, editor, kept, field, words
):
    before = revisions()
    with pytest.raises(ValidationError) as refused:
        suggesting.accept_chapter_suggestions(summary=live, user=editor, chosen=kept)
    errors = refused.value.message_dict
    assert field in errors, errors
    assert words in " ".join(errors[field])
    # No chapter, no working copy, no revision.
    assert copies.working_copy_of(live) is None and chapters_of(live) == []
    assert revisions() == before


def test_a_start_after_the_videos_end_is_refused(editor):
    summary = SummaryFactory(video__duration_seconds=300)
    make_transcript(summary.video, LINES)  # runs past the video's end
    with pytest.raises(ValidationError) as refused:
        suggesting.accept_chapter_suggestions(
            summary=summary, user=editor, chosen=[(0, "A"), (400, "B")]
        )
    assert "after the video ends" in refused.value.message_dict["chapters[1].start"][0]
    assert chapters_of(summary) == []


def test_a_start_with_nothing_said_before_the_next_is_refused(editor):
    summary = SummaryFactory(video__duration_seconds=900)
    make_transcript(summary.video, [(0, 5, "one two three"), (60, 65, "four five six")])
    with pytest.raises(ValidationError) as refused:
        suggesting.accept_chapter_suggestions(
            summary=summary, user=editor, chosen=[(0, "A"), (10, "B"), (50, "C")]
        )
    assert (
        "Nothing is said between 0:10 and 0:50"
        in (refused.value.message_dict["chapters[1].start"][0])
    )


def test_several_wrong_fields_are_all_named(draft, editor):
    with pytest.raises(ValidationError) as refused:
        suggesting.accept_chapter_suggestions(
            summary=draft, user=editor, chosen=[(0, ""), (99_999, "B"), (0, "C")]
        )
    assert set(refused.value.message_dict) == {
        "chapters[0].title",
        "chapters[1].start",
        "chapters[2].start",
    }


def test_who_may_not_change_summaries_is_refused(draft, live, outsider):
    for summary in (draft, live):
        with pytest.raises(PermissionDenied):
            suggesting.accept_chapter_suggestions(summary=summary, user=outsider, chosen=[(0, "A")])
    assert chapters_of(draft) == [] and copies.working_copy_of(live) is None


def test_reviewers_and_another_editor_may_add_chapters(editor):
    """Drafts belong to no one editor: anyone who may change summaries may add chapters,
    as they may make every other edit."""
    for user in (EditorFactory(), ReviewerFactory(), reviewer_only()):
        summary = summary_with_transcript()
        Summary.objects.filter(pk=summary.pk).update(created_by=editor, updated_by=editor)
        suggesting.accept_chapter_suggestions(summary=summary, user=user, chosen=[(0, "A")])
        assert chapters_of(summary) == [(0, "A")]


def reviewer_only():
    user = UserFactory(is_staff=True)
    user.groups.add(reviewers_group())
    return user


# --- The admin ----------------------------------------------------------------------------


def change_url(summary: Summary) -> str:
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def suggestions_url(summary: Summary) -> str:
    return reverse("admin:summaries_summary_chapter_suggestions", args=[summary.pk])


def form_data(summary: Summary, **changes) -> dict[str, str]:
    """The panel's form as posted with every suggestion kept; `changes` sets fields by
    name ("suggested-1-title")."""
    found = suggesting.chapter_suggestions(summary)
    data = {
        "suggested-TOTAL_FORMS": str(len(found)),
        "suggested-INITIAL_FORMS": str(len(found)),
        "suggested-MIN_NUM_FORMS": "0",
        "suggested-MAX_NUM_FORMS": "200",
    }
    for index, suggestion in enumerate(found):
        data[f"suggested-{index}-keep"] = "on"
        data[f"suggested-{index}-start"] = suggestion.time
        data[f"suggested-{index}-title"] = suggestion.title
    for name, value in changes.items():
        name = name.replace("_", "-")
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    return data


def test_the_panel_offers_the_suggested_chapters_as_a_form_with_a_label_for_each_input(
    draft, editor
):
    response = logged_in(editor).get(change_url(draft))
    assert response.status_code == 200
    html = response.content.decode()
    panel = html[html.index('id="receipts"') :]
    assert 'id="chapter-suggestions"' in panel and "Add these chapters" in panel
    assert f'action="{suggestions_url(draft)}"' in panel
    found = suggesting.chapter_suggestions(draft)
    for index, suggestion in enumerate(found):
        for name in ("keep", "start", "title"):
            field_id = f"id_suggested-{index}-{name}"
            assert f'id="{field_id}"' in panel and f'for="{field_id}"' in panel
        assert f'value="{suggestion.title}"' in panel
    assert f"Title of chapter {len(found)}" in panel
    # Outside the admin's .module styles, and no id clashes with the chapter rows.
    section = panel[: panel.index("</section>")]
    assert "module" not in section
    assert html.count('id="id_suggested-0-title"') == 1


def test_the_panel_offers_nothing_once_there_are_chapters_or_to_who_may_not_change(
    draft, editor, outsider
):
    assert "Add these chapters" not in logged_in(outsider).get(change_url(draft)).content.decode()
    ChapterFactory(summary=draft, start_time=0, title="Mine")
    assert "Add these chapters" not in logged_in(editor).get(change_url(draft)).content.decode()


def test_adding_the_chapters_in_the_admin_goes_back_with_a_message(draft, editor):
    client = logged_in(editor)
    data = form_data(draft, suggested_1_title="Local AI, who it is for", suggested_2_keep=None)
    response = client.post(suggestions_url(draft), data)
    assert response.status_code == 302
    assert response["Location"] == change_url(draft) + "#receipts"
    found = suggesting._suggested(Transcript.objects.get(video=draft.video))
    expected = [(s.start, s.title) for s in found]
    expected[1] = (expected[1][0], "Local AI, who it is for")
    del expected[2]
    assert chapters_of(draft) == expected
    page = client.get(response["Location"]).content.decode()
    assert f"Added {len(expected)} chapters from the transcript" in page
    assert "Add these chapters" not in page


def test_posting_the_form_twice_adds_the_chapters_once(draft, editor):
    client = logged_in(editor)
    data = form_data(draft)
    assert client.post(suggestions_url(draft), data).status_code == 302
    count = len(chapters_of(draft))
    again = client.post(suggestions_url(draft), data, follow=True)
    assert again.status_code == 200
    assert "has chapters already" in again.content.decode()
    assert len(chapters_of(draft)) == count


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"suggested_1_title": ""}, "suggested-1-title", "Give the chapter a title"),
        ({"suggested_1_title": "x" * 201}, "suggested-1-title", "at most 200 characters"),
        ({"suggested_1_start": "soon"}, "suggested-1-start", "34:21"),
        ({"suggested_1_start": "0:00"}, "suggested-1-start", "starts at 0:00 too"),
        ({"suggested_1_start": "9:59:00"}, "suggested-1-start", "not in the transcript"),
    ],
)
def test_a_wrong_field_is_shown_beside_it_and_nothing_is_written(
    draft, editor, changes, field, message
):
    response = logged_in(editor).post(suggestions_url(draft), form_data(draft, **changes))
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html
    # The message sits in the row of the field it is about, before the next row.
    row = html[html.index(f'id="id_{field}"') :]
    row = row[: row.index("</li>")]
    assert message in row
    assert "no chapter was added" in html
    assert chapters_of(draft) == []


def test_a_dropped_row_is_not_read(draft, editor):
    data = form_data(draft, suggested_1_keep=None, suggested_1_start="soon", suggested_1_title="")
    assert logged_in(editor).post(suggestions_url(draft), data).status_code == 302
    assert len(chapters_of(draft)) == len(suggesting._suggested(draft.video.transcripts.get())) - 1


def test_a_form_without_its_management_fields_is_an_error_not_a_500(draft, editor):
    response = logged_in(editor).post(suggestions_url(draft), {"suggested-0-title": "A"})
    assert response.status_code == 200
    assert "errornote" in response.content.decode()
    assert chapters_of(draft) == []


def test_keeping_none_is_an_error(draft, editor):
    data = form_data(draft)
    for name in [key for key in data if key.endswith("-keep")]:
        del data[name]
    response = logged_in(editor).post(suggestions_url(draft), data)
    assert response.status_code == 200 and "Keep at least one chapter" in response.content.decode()


def test_the_form_has_a_page_of_its_own(draft, editor):
    response = logged_in(editor).get(suggestions_url(draft))
    assert response.status_code == 200 and "Add these chapters" in response.content.decode()


def test_in_the_admin_a_published_summarys_chapters_go_to_its_changes(live, editor):
    client = logged_in(editor)
    response = client.post(suggestions_url(live), form_data(live))
    assert response.status_code == 302
    copy = copies.working_copy_of(live)
    assert copy is not None and chapters_of(copy) and chapters_of(live) == []
    page = client.get(change_url(live)).content.decode()
    assert "to the unpublished changes" in page


@pytest.fixture
def viewer():
    """Staff who may read summaries in the admin, and nothing more."""
    user = UserFactory(username="vera", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_summary"))
    user.save()
    return user


def test_who_may_only_read_the_summary_sees_no_form_and_is_refused(draft, viewer):
    client = logged_in(viewer)
    page = client.get(change_url(draft))
    assert page.status_code == 200 and "Add these chapters" not in page.content.decode()
    assert client.get(suggestions_url(draft)).status_code == 403
    assert client.post(suggestions_url(draft), form_data(draft)).status_code == 403
    assert chapters_of(draft) == []


def test_who_may_not_change_summaries_is_refused_in_the_admin(draft, outsider):
    client = logged_in(outsider)
    assert client.get(suggestions_url(draft)).status_code == 403
    assert client.post(suggestions_url(draft), form_data(draft)).status_code == 403
    assert chapters_of(draft) == []


def test_the_admin_form_needs_its_csrf_token(draft, editor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    assert client.post(suggestions_url(draft), form_data(draft)).status_code == 403
    assert chapters_of(draft) == []


# --- The API ------------------------------------------------------------------------------

CLIENTS = ["anonymous", "reader", "outsider", "editor", "reviewer"]


def client_for(kind: str) -> APIClient:
    client = APIClient()
    if kind == "anonymous":
        return client
    user = {
        "reader": UserFactory,
        "outsider": lambda: UserFactory(is_staff=True),
        "editor": EditorFactory,
        "reviewer": ReviewerFactory,
    }[kind]()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def api_url(summary: Summary) -> str:
    return f"/api/v1/summaries/{summary.video.slug}/chapter-suggestions/"


def body(summary: Summary) -> dict:
    return {"chapters": [{"start": start, "title": title} for start, title in chosen(summary)]}


def test_editors_read_the_suggestions(draft):
    response = client_for("editor").get(api_url(draft))
    assert response.status_code == 200
    found = response.json()["chapters"]
    assert [c["start"] for c in found] == [s.start for s in suggesting.chapter_suggestions(draft)]
    assert set(found[0]) == {"start", "time", "title", "said"} and found[0]["time"] == "0:00"


@pytest.mark.parametrize(
    ("kind", "read", "write"),
    [
        ("anonymous", 404, 401),
        ("reader", 404, 403),
        ("outsider", 404, 403),
        ("editor", 200, 201),
        ("reviewer", 200, 201),
    ],
)
def test_who_may_read_and_add_suggested_chapters(draft, kind, read, write):
    client = client_for(kind)
    assert client.get(api_url(draft)).status_code == read
    payload = body(draft)
    response = client.post(api_url(draft), payload, format="json")
    assert response.status_code == write, response.content
    assert bool(chapters_of(draft)) == (write == 201)


def test_adding_chapters_through_the_api(draft):
    payload = body(draft)
    payload["chapters"][1]["title"] = "Local AI"
    payload["chapters"][2]["start"] = "5:50"
    response = client_for("editor").post(api_url(draft), payload, format="json")
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["summary"].endswith(f"/api/v1/summaries/{draft.video.slug}/")
    assert [(c["start"], c["title"]) for c in data["chapters"]] == chapters_of(draft)
    assert chapters_of(draft)[1][1] == "Local AI" and chapters_of(draft)[2][0] == 350
    assert all(c["pin"] == "verbatim" for c in data["chapters"])
    # What keeps it from being published is the key point nobody pinned yet, not a chapter.
    [problem] = data["problems"]
    assert problem["kind"] == "key_point" and "not pinned to the transcript" in problem["message"]
    draft.refresh_from_db()
    assert response["Edit-Version"] == f'"{draft.lock_version}-{draft.pk}"'
    # Nothing left to suggest, and the same request again adds nothing.
    assert client_for("editor").get(api_url(draft)).json() == {"chapters": []}
    again = client_for("editor").post(api_url(draft), payload, format="json")
    assert again.status_code == 400 and "chapters" in again.json()["error"]["fields"]
    assert len(chapters_of(draft)) == len(payload["chapters"])


def test_through_the_api_a_published_summarys_chapters_go_to_its_changes(live):
    response = client_for("editor").post(api_url(live), body(live), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["summary"].endswith(f"/api/v1/summaries/{live.video.slug}/working-copy/")
    copy = copies.working_copy_of(live)
    assert [c["id"] for c in response.json()["chapters"]] == list(
        Chapter.objects.filter(summary=copy).order_by("position").values_list("pk", flat=True)
    )
    assert APIClient().get(f"/api/v1/summaries/{live.video.slug}/").json()["chapters"] == []
    assert (
        client_for("reader").get(f"/api/v1/summaries/{live.video.slug}/").json()["chapters"] == []
    )


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"chapters": [{"start": 0, "title": ""}]}, "chapters[0].title"),
        ({"chapters": [{"start": 0, "title": "x" * 201}]}, "chapters[0].title"),
        ({"chapters": [{"start": "soon", "title": "A"}]}, "chapters[0].start"),
        ({"chapters": [{"start": -3, "title": "A"}]}, "chapters[0].start"),
        (
            {"chapters": [{"start": 0, "title": "A"}, {"start": 99999, "title": "B"}]},
            "chapters[1].start",
        ),
        (
            {"chapters": [{"start": 0, "title": "A"}, {"start": "0:00", "title": "B"}]},
            "chapters[1].start",
        ),
        ({"chapters": [{"title": "A"}]}, "chapters[0].start"),
        ({"chapters": [{"start": 0, "title": "A", "body": "B"}]}, "chapters[0].body"),
        ({"chapters": []}, "chapters"),
        ({"chapters": "all"}, "chapters"),
        ({}, "chapters"),
        ({"chapters": [{"start": 0, "title": "A"}], "extra": 1}, "extra"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(live, payload, field):
    before = revisions()
    response = client_for("editor").post(api_url(live), payload, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"], response.json()
    assert copies.working_copy_of(live) is None and revisions() == before


def test_a_body_that_is_not_a_json_object_is_a_400(draft):
    client = client_for("editor")
    response = client.post(api_url(draft), "[1, 2]", content_type="application/json")
    assert response.status_code == 400
    response = client.post(api_url(draft), "{", content_type="application/json")
    assert response.status_code == 400
    assert chapters_of(draft) == []


def test_if_match_names_the_version_read(draft):
    client = client_for("editor")
    stale = '"0-1"'
    response = client.post(api_url(draft), body(draft), format="json", HTTP_IF_MATCH=stale)
    assert response.status_code == 412 and chapters_of(draft) == []
    current = client.get(f"/api/v1/summaries/{draft.video.slug}/")["ETag"]
    response = client.post(api_url(draft), body(draft), format="json", HTTP_IF_MATCH=current)
    assert response.status_code == 201


def test_an_unknown_summary_is_a_404():
    client = client_for("editor")
    assert client.get("/api/v1/summaries/nothing/chapter-suggestions/").status_code == 404
    payload = {"chapters": [{"start": 0, "title": "A"}]}
    response = client.post("/api/v1/summaries/nothing/chapter-suggestions/", payload, format="json")
    assert response.status_code == 404


def test_the_schema_documents_chapter_suggestions():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = schema["paths"]["/api/v1/summaries/{slug}/chapter-suggestions/"]
    assert {"get", "post"} <= set(operations)
    assert {"201", "400"} <= set(operations["post"]["responses"])
    request = operations["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert request["$ref"].endswith("/ChosenChaptersInputRequest")
    chosen_input = schema["components"]["schemas"]["ChosenChaptersInputRequest"]
    assert chosen_input["properties"]["chapters"]["maxItems"] == suggesting.MAX_CHOSEN
    assert any(p["name"] == "If-Match" for p in operations["post"]["parameters"])


def test_the_answers_match_the_schema(draft):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = _as_json_schema(schema["components"])
    operations = schema["paths"]["/api/v1/summaries/{slug}/chapter-suggestions/"]

    def check(response, method):
        answer = operations[method]["responses"][str(response.status_code)]
        shape = _as_json_schema(answer["content"]["application/json"]["schema"])
        jsonschema.validate(response.json(), {**shape, "components": components})

    client = client_for("editor")
    check(client.get(api_url(draft)), "get")
    payload = body(draft)
    check(client.post(api_url(draft), payload, format="json"), "post")
    check(client.post(api_url(draft), payload, format="json"), "post")  # the 400


@pytest.mark.parametrize("kind", CLIENTS)
def test_options_describe_the_endpoint_to_every_client(draft, kind):
    assert client_for(kind).options(api_url(draft)).status_code == 200
