import datetime
import re

import pytest
from django.urls import reverse
from django.utils import timezone
from reversion.models import Version

from summaries.editing import restore
from summaries.models import Chapter, Citation, Source, Summary, Video

from .admin_forms import add_inline_row, form_fields
from .factories import (
    ChapterFactory,
    EditorFactory,
    OrganisationFactory,
    SummaryFactory,
    TakeawayFactory,
    VideoFactory,
)

pytestmark = pytest.mark.django_db

ANTHROPIC_CHAPTER = (
    "I have been using Fast Mode. [Anthropic says](https://www.anthropic.com/research/x) "
    "that this mode generates output 2.5 times faster than regular Opus 4.6."
)


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def open_form(client, summary):
    response = client.get(change_url(summary))
    assert response.status_code == 200
    return form_fields(response)


@pytest.mark.parametrize(
    "name", ["summary", "video", "channel", "organisation", "person", "topic", "source"]
)
def test_changelist_and_add_pages_open_for_editors(reviewer_client, name):
    SummaryFactory()
    assert reviewer_client.get(reverse(f"admin:summaries_{name}_changelist")).status_code == 200
    if name != "source":
        assert reviewer_client.get(reverse(f"admin:summaries_{name}_add")).status_code == 200


def test_changelist_search_finds_summary_by_video_title(reviewer_client):
    SummaryFactory(video__title="Kimi K3.1 Pro Tested")
    SummaryFactory(video__title="Something else")
    response = reviewer_client.get(reverse("admin:summaries_summary_changelist"), {"q": "kimi"})
    assert response.status_code == 200
    assert b"Kimi K3.1 Pro Tested" in response.content
    assert b"Something else" not in response.content


def test_create_edit_reorder_publish_flow(reviewer_client, reviewer):
    video = VideoFactory(title="Speed matters")
    # Create: a summary with two chapters, written on one page.
    data = form_fields(reviewer_client.get(reverse("admin:summaries_summary_add")))
    data.update({"video": str(video.pk), "tldr": "Speed matters alongside quality."})
    add_inline_row(
        data, "chapters", title="Why speed matters", body="Fast output helps agents.", position="1"
    )
    add_inline_row(data, "chapters", title="Faster releases", body=ANTHROPIC_CHAPTER, position="2")
    add_inline_row(data, "takeaways", text="Speed matters for agents.", position="1")
    response = reviewer_client.post(reverse("admin:summaries_summary_add"), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    summary = Summary.objects.get(video=video)
    assert summary.status == Summary.Status.DRAFT
    assert summary.created_by == reviewer
    assert list(summary.chapters.values_list("title", flat=True)) == [
        "Why speed matters",
        "Faster releases",
    ]
    # The citation was extracted on save.
    citation = Citation.objects.get(summary=summary)
    assert citation.link_text == "Anthropic says"
    assert "2.5 times faster" in citation.claim
    assert citation.source.url == "https://www.anthropic.com/research/x"

    # Edit and reorder: the drag-and-drop widget swaps the chapters' hidden positions.
    data = open_form(reviewer_client, summary)
    data["tldr"] = "Speed matters, especially for agents."
    data["chapters-0-position"], data["chapters-1-position"] = "2", "1"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    summary.refresh_from_db()
    assert summary.tldr == "Speed matters, especially for agents."
    assert list(summary.chapters.values_list("title", "position")) == [
        ("Faster releases", 1),
        ("Why speed matters", 2),
    ]

    # Publish from the change form.
    data = open_form(reviewer_client, summary)
    data["_publish"] = "Save and publish"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302
    summary.refresh_from_db()
    assert summary.is_live()
    assert Summary.objects.published().filter(pk=summary.pk).exists()
    reader = reviewer_client.get(video.get_absolute_url())
    assert reader.status_code == 200


def test_deleting_a_chapter_renumbers_the_rest(reviewer_client):
    summary = SummaryFactory()
    for title in ("One", "Two", "Three"):
        ChapterFactory(summary=summary, title=title)
    data = open_form(reviewer_client, summary)
    data["chapters-0-DELETE"] = "on"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302
    assert list(summary.chapters.values_list("title", "position")) == [("Two", 1), ("Three", 2)]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("chapters-0-body", "", "This field is required."),
        ("chapters-0-start_time", "-5", "Enter a length such as"),
        ("chapters-0-start_time", "soon", "Enter a length such as"),
    ],
)
def test_invalid_chapter_input_is_a_form_error(reviewer_client, field, value, message):
    summary = SummaryFactory()
    ChapterFactory(summary=summary, body="Kept text.")
    data = open_form(reviewer_client, summary)
    data[field] = value
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert summary.chapters.get().body == "Kept text."


def test_video_form_errors_for_bad_url_negative_duration_and_duplicate_slug(reviewer_client):
    VideoFactory(slug="taken")
    video = VideoFactory()
    data = form_fields(
        reviewer_client.get(reverse("admin:summaries_video_change", args=[video.pk])),
        form_id="video_form",
    )
    data.update({"slug": "taken", "source_url": "not a url", "duration_seconds": "-3"})
    response = reviewer_client.post(reverse("admin:summaries_video_change", args=[video.pk]), data)
    assert response.status_code == 200
    content = response.content.decode()
    assert "Video with this Slug already exists." in content
    assert "Enter a valid URL." in content
    assert "Enter a length such as" in content
    video.refresh_from_db()
    assert video.slug != "taken"


def test_same_youtube_video_twice_is_a_form_error(reviewer_client):
    VideoFactory(title="Original", source_url="https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    video = VideoFactory()
    url = reverse("admin:summaries_video_change", args=[video.pk])
    data = form_fields(reviewer_client.get(url), form_id="video_form")
    data["source_url"] = "https://youtu.be/dQw4w9WgXcQ"
    response = reviewer_client.post(url, data)
    assert response.status_code == 200
    assert "already here as “Original”" in response.content.decode()


def test_absurd_chapter_time_is_a_form_error_not_a_database_error(reviewer_client):
    summary = SummaryFactory()
    ChapterFactory(summary=summary)
    data = open_form(reviewer_client, summary)
    data["chapters-0-start_time"] = "99999999999"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 200
    assert "longer than a week" in response.content.decode()


def test_video_duration_accepts_clock_format(reviewer_client):
    video = VideoFactory()
    url = reverse("admin:summaries_video_change", args=[video.pk])
    data = form_fields(reviewer_client.get(url), form_id="video_form")
    data["duration_seconds"] = "34:21"
    assert reviewer_client.post(url, data).status_code == 302
    video.refresh_from_db()
    assert video.duration_seconds == 2061


def test_concurrent_edit_is_refused_and_keeps_the_second_editors_input(reviewer_client):
    summary = SummaryFactory(tldr="Original.")
    first = open_form(reviewer_client, summary)
    second = open_form(reviewer_client, summary)
    first["tldr"] = "First editor's text."
    assert reviewer_client.post(change_url(summary), first).status_code == 302

    second["tldr"] = "Second editor's text."
    response = reviewer_client.post(change_url(summary), second)
    assert response.status_code == 200
    content = response.content.decode()
    assert "after you opened it" in content
    assert "Second editor&#x27;s text." in content  # their input is still in the form
    summary.refresh_from_db()
    assert summary.tldr == "First editor's text."


def test_warnings_are_shown_but_do_not_block_saving(reviewer_client):
    OrganisationFactory(name="Anthropic", domains="anthropic.com")
    summary = SummaryFactory(video__duration_seconds=600)
    ChapterFactory(summary=summary, start_time=300, title="Late")
    ChapterFactory(summary=summary, start_time=100, title="Early")
    ChapterFactory(
        summary=summary,
        title="Claims",
        body="[Anthropic says](https://example.com/post) it is 2.5 times faster.",
    )
    TakeawayFactory(summary=summary, text="It reached 1,000 tokens per second.")
    data = open_form(reviewer_client, summary)
    response = reviewer_client.post(change_url(summary), data, follow=True)
    assert response.status_code == 200
    messages = [str(m) for m in response.context["messages"]]
    assert "3 other things to check — see Things to check." in messages
    text = reviewer_client.get(change_url(summary)).content.decode()  # details: "Things to check"
    assert "1,000 tokens per second" in text
    assert "attributed to Anthropic" in text
    summary.refresh_from_db()
    assert summary.lock_version == 2  # saved despite the warnings


def test_revision_history_records_who_and_restores_an_old_version(reviewer_client, reviewer):
    summary = SummaryFactory(tldr="Version one.")
    ChapterFactory(summary=summary, title="First title")
    data = open_form(reviewer_client, summary)
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    data = open_form(reviewer_client, summary)
    data["tldr"] = "Version two."
    data["chapters-0-title"] = "Second title"
    assert reviewer_client.post(change_url(summary), data).status_code == 302

    versions = Version.objects.get_for_object(summary)
    assert versions.count() == 2
    assert versions[0].revision.user == reviewer
    # What changed, in words: the admin's change message becomes the revision comment.
    assert versions[0].revision.get_comment() == (
        "Changed In 30 seconds. Changed Title for chapter “Second title”."
    )
    history = reviewer_client.get(reverse("admin:summaries_summary_history", args=[summary.pk]))
    assert history.status_code == 200
    assert b"rita" in history.content

    oldest = versions.last()
    revert_url = reverse("admin:summaries_summary_revision", args=[summary.pk, oldest.pk])
    form = reviewer_client.get(revert_url)
    assert form.status_code == 200
    assert "Restore this version" in form.content.decode()
    assert reviewer_client.post(revert_url, form_fields(form)).status_code == 302
    summary.refresh_from_db()
    assert summary.tldr == "Version one."
    assert summary.chapters.get().title == "First title"
    # The restore is itself a revision: nothing is lost.
    assert Version.objects.get_for_object(summary).count() == 3


def test_schedule_action_sets_a_future_publish_time(reviewer_client):
    summary = SummaryFactory()
    when = timezone.now() + datetime.timedelta(days=2)
    response = reviewer_client.post(
        reverse("admin:summaries_summary_changelist"),
        {
            "action": "schedule",
            "_selected_action": [summary.pk],
            "apply": "Schedule",
            "publish_at_0": when.strftime("%Y-%m-%d"),
            "publish_at_1": when.strftime("%H:%M:%S"),
            "publish_at": when.strftime("%Y-%m-%d %H:%M:%S"),
        },
    )
    assert response.status_code == 302
    summary.refresh_from_db()
    assert summary.status == Summary.Status.PUBLISHED
    assert summary.is_scheduled()
    assert not Summary.objects.published().filter(pk=summary.pk).exists()


def test_unpublish_and_publish_actions(reviewer_client):
    live = SummaryFactory(live=True)
    response = reviewer_client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "unpublish", "_selected_action": [live.pk]},
    )
    assert response.status_code == 302
    live.refresh_from_db()
    assert live.status == Summary.Status.DRAFT
    reviewer_client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "publish_now", "_selected_action": [live.pk]},
    )
    live.refresh_from_db()
    assert live.is_live()


def test_staff_without_publish_permission_cannot_publish(client):
    user = EditorFactory(username="intern")
    user.groups.clear()
    from django.contrib.auth.models import Permission

    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["change_summary", "view_summary"])
    )
    client.force_login(user)
    summary = SummaryFactory()
    response = client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "publish_now", "_selected_action": [summary.pk]},
    )
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT
    assert response.status_code in (200, 302)


def test_citations_are_listed_read_only_on_the_summary_page(reviewer_client):
    summary = SummaryFactory()
    ChapterFactory(summary=summary, body=ANTHROPIC_CHAPTER)
    from summaries.editing.derived import sync_citations

    sync_citations(summary=summary)
    response = reviewer_client.get(change_url(summary))
    content = response.content.decode()
    assert "Citations found in the text" in content
    assert "Anthropic says" in content
    assert "Not checked yet" in content
    assert Source.objects.count() == 1
    assert Chapter.objects.count() == 1
    assert Video.objects.count() == 1


def test_changelist_shows_live_and_scheduled_states(reviewer_client):
    SummaryFactory(live=True, video__title="Live one")
    SummaryFactory(
        video__title="Later one",
        status="published",
        publish_at=timezone.now() + datetime.timedelta(days=1),
    )
    response = reviewer_client.get(reverse("admin:summaries_summary_changelist"))
    content = response.content.decode()
    assert response.status_code == 200
    # The state in a word: the publish time is the next column.
    assert '<td class="field-list_state"><span class="nowrap">Live</span>' in content
    assert '<td class="field-list_state"><span class="nowrap">Scheduled</span>' in content


# --- New and reordered rows: positions never block a save -------------------------------

# (inline prefix, the fields of a new row, the field that tells rows apart)
NEW_ROWS = {
    "chapters": ({"body": "Text."}, "title"),
    "key_points": ({"body": "Point."}, "title"),
    "takeaways": ({}, "text"),
    "caveats": ({}, "text"),
}


def add_rows(data, prefix, names, positions):
    extra, label = NEW_ROWS[prefix]
    for name, position in zip(names, positions, strict=True):
        add_inline_row(data, prefix, **{**extra, label: name, "position": position})
    return data


def labels(summary, prefix):
    _, label = NEW_ROWS[prefix]
    items = getattr(summary, prefix).order_by("position")
    return list(items.values_list(label, "position"))


@pytest.mark.parametrize("prefix", list(NEW_ROWS))
@pytest.mark.parametrize("positions", [("", ""), ("0", "0"), ("0", "1"), ("1", "1"), ("7", "7")])
def test_several_new_rows_are_saved_together_in_the_order_shown(reviewer_client, prefix, positions):
    data = form_fields(reviewer_client.get(reverse("admin:summaries_summary_add")))
    data.update({"video": str(VideoFactory().pk), "tldr": "Thirty seconds."})
    add_rows(data, prefix, ["First", "Second"], positions)
    response = reviewer_client.post(reverse("admin:summaries_summary_add"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    summary = Summary.objects.get()
    expected = [("First", 1), ("Second", 2)]
    if positions == ("0", "1"):  # a row placed at 1 comes before a row with no place
        expected = [("Second", 1), ("First", 2)]
    assert labels(summary, prefix) == expected


@pytest.mark.parametrize("prefix", list(NEW_ROWS))
def test_new_rows_go_after_the_existing_ones(reviewer_client, prefix):
    summary = SummaryFactory()
    add_rows(data := open_form(reviewer_client, summary), prefix, ["Old one", "Old two"], ["", ""])
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    data = open_form(reviewer_client, summary)
    add_rows(data, prefix, ["New one", "New two"], ["0", "0"])
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert labels(summary, prefix) == [
        ("Old one", 1),
        ("Old two", 2),
        ("New one", 3),
        ("New two", 4),
    ]


def test_any_positions_posted_for_existing_rows_save_or_explain(reviewer_client):
    summary = SummaryFactory()
    for title in ("One", "Two", "Three"):
        ChapterFactory(summary=summary, title=title)
    for positions in (("1", "1", "1"), ("3", "2", "1"), ("0", "-4", "99999"), ("", "x", "2")):
        data = open_form(reviewer_client, summary)
        for index, position in enumerate(positions):
            data[f"chapters-{index}-position"] = position
        response = reviewer_client.post(change_url(summary), data)
        assert response.status_code in (200, 302), positions
        numbers = list(summary.chapters.values_list("position", flat=True))
        assert sorted(numbers) == [1, 2, 3], (positions, numbers)


# --- Restoring a revision brings back content, never publication -------------------------


def test_restoring_an_old_version_of_a_live_summary_makes_unpublished_changes(reviewer_client):
    summary = SummaryFactory(tldr="Draft words.")
    ChapterFactory(summary=summary, title="Draft chapter")
    assert (
        reviewer_client.post(change_url(summary), open_form(reviewer_client, summary)).status_code
        == 302
    )
    draft_version = Version.objects.get_for_object(summary).first()
    data = open_form(reviewer_client, summary)
    data["tldr"] = "Published words."
    data["_publish"] = "Save and publish"
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    summary.refresh_from_db()
    live_since = summary.publish_at
    assert summary.is_live()

    revert_url = reverse("admin:summaries_summary_revision", args=[summary.pk, draft_version.pk])
    confirm = reviewer_client.get(revert_url).content.decode()
    assert "unpublished changes" in confirm and "Readers see no change" in confirm
    response = reviewer_client.post(
        revert_url, form_fields(reviewer_client.get(revert_url)), follow=True
    )

    summary.refresh_from_db()
    assert summary.tldr == "Published words."  # readers see no change
    assert summary.is_live() and summary.publish_at == live_since
    assert "Published words." in reviewer_client.get(summary.get_absolute_url()).content.decode()
    copy = Summary.objects.get(working_copy_of=summary)
    assert copy.tldr == "Draft words."
    assert list(copy.chapters.values_list("title", flat=True)) == ["Draft chapter"]
    messages = [str(m) for m in response.context["messages"]]
    assert any("as unpublished changes" in m for m in messages), messages
    history = [v.revision.get_comment() for v in restore.history_versions(summary)]
    assert history[0].startswith("Restored the content of the version")


def test_restoring_a_published_version_keeps_a_draft_a_draft(reviewer_client):
    summary = SummaryFactory(tldr="First words.")
    data = open_form(reviewer_client, summary)
    data["_publish"] = "Save and publish"
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    published_version = Version.objects.get_for_object(summary).first()
    data = open_form(reviewer_client, summary)
    data["tldr"] = "Second words."
    data["_unpublish"] = "Save and unpublish"
    assert reviewer_client.post(change_url(summary), data).status_code == 302

    revert_url = reverse(
        "admin:summaries_summary_revision", args=[summary.pk, published_version.pk]
    )
    form = form_fields(reviewer_client.get(revert_url))
    response = reviewer_client.post(revert_url, form, follow=True)
    summary.refresh_from_db()
    assert summary.tldr == "First words."
    assert summary.status == Summary.Status.DRAFT and summary.publish_at is None
    messages = " ".join(str(m) for m in response.context["messages"])
    assert "still draft" in messages


# --- Workflow buttons may keep the editor on the page -----------------------------------


@pytest.mark.parametrize("button", ["_publish", "_review"])
def test_workflow_buttons_can_stay_on_the_page(reviewer_client, button):
    summary = SummaryFactory()
    data = open_form(reviewer_client, summary)
    data[button] = "go"
    data["_stay"] = "1"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302
    assert response["Location"] == change_url(summary)
    del data["_stay"]
    data = {**open_form(reviewer_client, summary), button: "go"}
    response = reviewer_client.post(change_url(summary), data)
    assert response["Location"] != change_url(summary)  # the list, as before


def test_the_change_form_offers_staying(reviewer_client):
    content = reviewer_client.get(change_url(SummaryFactory())).content.decode()
    assert 'name="_stay"' in content


# --- One rule for times, as in the API -----------------------------------------------------


def test_a_time_after_the_video_ends_is_a_form_error(reviewer_client):
    summary = SummaryFactory(video__duration_seconds=600)
    ChapterFactory(summary=summary, title="Kept", start_time=60)
    data = open_form(reviewer_client, summary)
    data["chapters-0-start_time"] = "10:00"
    add_inline_row(data, "key_points", title="Late point", body="Text.", time="12:00")
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 200
    content = response.content.decode()
    assert "Chapter “Kept”: 10:00 is after the video ends (10:00)." in content
    assert "Key point “Late point”: 12:00 is after the video ends (10:00)." in content
    assert summary.chapters.get().start_time == 60 and not summary.key_points.exists()


def test_shortening_a_video_past_its_summary_times_is_a_form_error(reviewer_client):
    summary = SummaryFactory(video__duration_seconds=3600)
    ChapterFactory(summary=summary, position=1, start_time=1900)
    url = reverse("admin:summaries_video_change", args=[summary.video.pk])
    data = form_fields(reviewer_client.get(url), form_id="video_form")
    data["duration_seconds"] = "30:00"
    response = reviewer_client.post(url, data)
    assert response.status_code == 200
    assert "Chapter 1: 31:40 is after the video ends (30:00)." in response.content.decode()
    summary.video.refresh_from_db()
    assert summary.video.duration_seconds == 3600


# --- Sources editors can act on -----------------------------------------------------------


def cited_summary():
    summary = SummaryFactory()
    ChapterFactory(
        summary=summary,
        position=1,
        title="Speed",
        body="It is 2.5 times faster [fast](https://example.com/fast).",
    )
    assert summary.citations.count() == 0
    return summary


def test_an_editor_sets_a_citations_key_phrase_in_the_admin(reviewer_client):
    summary = cited_summary()
    reviewer_client.post(
        change_url(summary), open_form(reviewer_client, summary)
    )  # citations found on save
    citation = summary.citations.get()
    data = open_form(reviewer_client, summary)
    data["citations-0-key_phrase"] = "250% faster"
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    citation.refresh_from_db()
    assert citation.key_phrase == "250% faster" and citation.key_phrase_edited
    data = open_form(reviewer_client, summary)
    data["citations-0-key_phrase"] = "x" * 201
    assert reviewer_client.post(change_url(summary), data).status_code == 200  # a form error


def test_check_now_queues_checks_of_the_summarys_sources(
    reviewer_client, django_capture_on_commit_callbacks
):
    summary = cited_summary()
    reviewer_client.post(change_url(summary), open_form(reviewer_client, summary))
    checked = timezone.now()  # the save's checks finished; the next one is not due yet
    Source.objects.update(
        check_token="",
        claimed_until=None,
        last_checked_at=checked,
        next_check_at=checked + datetime.timedelta(days=7),
    )
    Citation.objects.update(verdict=Citation.Verdict.SUPPORTED)
    data = {**open_form(reviewer_client, summary), "_check_now": "Check the sources now"}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = reviewer_client.post(change_url(summary), data, follow=True)
    messages = " ".join(str(m) for m in response.context["messages"])
    assert "Queued a check of 1 source" in messages
    assert Source.objects.exclude(check_token="").count() == 1
    assert any("check_source_batch" in getattr(c, "__qualname__", "") for c in callbacks)


def test_each_citation_links_to_its_sources_check_history(reviewer_client):
    summary = cited_summary()
    reviewer_client.post(change_url(summary), open_form(reviewer_client, summary))
    source = Source.objects.get()
    page = reviewer_client.get(change_url(summary)).content.decode()
    assert reverse("admin:summaries_source_change", args=[source.pk]) in page


def test_the_summary_list_counts_failing_sources(reviewer_client):
    summary = cited_summary()
    reviewer_client.post(change_url(summary), open_form(reviewer_client, summary))
    Source.objects.update(state=Source.State.BROKEN)
    page = reviewer_client.get(reverse("admin:summaries_summary_changelist")).content.decode()
    assert "1 failing" in page


def test_the_caveat_chooser_names_takeaways_briefly(reviewer_client):
    summary = SummaryFactory()
    TakeawayFactory(summary=summary, position=1, text="A very long takeaway " * 20)
    page = reviewer_client.get(change_url(summary)).content.decode()
    assert re.search(r"Takeaway 1: A very long takeaway A very l\w*…<", page)


def test_the_language_filter_offers_the_languages_in_use(reviewer_client):
    SummaryFactory(video__language="de")
    SummaryFactory(video__language="en")
    page = reviewer_client.get(reverse("admin:summaries_summary_changelist")).content.decode()
    assert "?language=de" in page and "?language=en" in page
    assert "Afrikaans" not in page
    german = reviewer_client.get(reverse("admin:summaries_summary_changelist"), {"language": "de"})
    assert german.context["cl"].result_count == 1
