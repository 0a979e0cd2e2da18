"""Text an editor did not change is not recorded as changed: browsers send a textarea's
line breaks as CRLF, the stored text has LF, and neither History, the reviewer's "What
changed", a correction's "What changed" nor /corrections/ may call that an edit."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from reversion.models import Version

from summaries.editing import copies, save
from summaries.editing.revisions import compare_live_and_changes, compare_revisions
from summaries.models import Chapter, Correction, Summary, Video
from summaries.text.line_endings import normalised_text

from .admin_forms import form_fields
from .factories import ChapterFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db

BODY = "First paragraph of the chapter.\n\nSecond paragraph, with more words in it."
SYNOPSIS = "Two sentences.\nOn two lines."
TLDR = "What the video says.\n\nIn two paragraphs."


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def as_a_browser_sends(data: dict) -> dict:
    """The form as a browser submits it: every line break of a textarea as CRLF."""
    return {
        key: value.replace("\n", "\r\n") if isinstance(value, str) else value
        for key, value in data.items()
    }


def browser_form(client, summary) -> dict:
    response = client.get(change_url(summary))
    assert response.status_code == 200
    return as_a_browser_sends(form_fields(response))


def _summary(**kwargs):
    summary = SummaryFactory(tldr=TLDR, **kwargs)
    ChapterFactory(summary=summary, position=1, title="Opening", body=BODY, synopsis=SYNOPSIS)
    ChapterFactory(summary=summary, position=2, title="Closing", body="One line.")
    return summary


def test_text_is_stored_with_lf_line_breaks_and_no_trailing_space_at_its_end():
    assert normalised_text("a\r\nb\rc\n") == "a\nb\nc"
    assert normalised_text("line one  \nline two") == "line one  \nline two"  # a <br>
    assert normalised_text("    indented code\n\n") == "    indented code"
    assert normalised_text("") == ""


def test_a_browser_save_of_unchanged_text_records_no_edit_of_it(reviewer_client, reviewer):
    summary = _summary()
    save.save_summary(summary=summary, parts={}, user=reviewer, comment="First save")
    data = browser_form(reviewer_client, summary)
    assert "\r\n" in data["chapters-0-body"]  # what the test is about
    data["tldr"] = "What the video says.\r\n\r\nIn two short paragraphs."
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:2000]

    chapter = Chapter.objects.get(summary=summary, position=1)
    assert (chapter.body, chapter.synopsis) == (BODY, SYNOPSIS)
    summary.refresh_from_db()
    assert summary.tldr == "What the video says.\n\nIn two short paragraphs."
    older, newer = Version.objects.get_for_object(summary).order_by("pk")
    assert "chapter" not in newer.revision.get_comment().lower()  # History's line
    comparison = compare_revisions(older, newer)
    assert [c.name for c in comparison.changed_fields] == ["tldr"]
    assert not any(kind.changed for kind in comparison.parts)
    compare = reviewer_client.get(
        reverse("admin:summaries_summary_compare", args=[summary.pk]),
        {"from": older.pk, "to": newer.pk},
    )
    assert "0 edited, 2 unchanged" in compare.content.decode()
    assert '<span class="badge">Edited</span>' not in compare.content.decode()


def test_a_browser_save_of_a_live_summary_that_changes_nothing_leaves_no_changes(reviewer_client):
    live = _summary(live=True)
    response = reviewer_client.post(change_url(live), browser_form(reviewer_client, live))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not Summary.objects.filter(working_copy_of=live).exists()


def test_a_published_correction_lists_only_the_text_that_changed(reviewer_client):
    live = _summary(live=True)
    data = browser_form(reviewer_client, live)
    data["tldr"] = "What the video says.\r\n\r\nIn two corrected paragraphs."
    assert reviewer_client.post(change_url(live), data).status_code == 302
    copy = copies.working_copy_of(live)
    assert Chapter.objects.get(summary=copy, position=1).body == BODY

    changes = reviewer_client.get(reverse("admin:summaries_summary_changes", args=[live.pk]))
    content = changes.content.decode()  # the reviewer's "What changed"
    assert "0 edited, 2 unchanged" in content
    assert '<span class="badge">Edited</span>' not in content

    data = browser_form(reviewer_client, live)  # the page now shows the changes
    data.update({"_publish": "1", "change_kind": "correction", "change_note": "Fixed it."})
    response = reviewer_client.post(change_url(live), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    correction = Correction.objects.get(summary=live)
    assert [item["label"] for item in correction.changes] == ["In 30 seconds"]
    page = reviewer_client.get(reverse("summaries:corrections")).content.decode()
    assert "Fixed it." in page and "Opening" not in page
    reader = reviewer_client.get(live.get_absolute_url()).content.decode()
    assert "Chapter 1" not in reader.split("What changed", 1)[-1]


def test_text_stored_with_crlf_before_is_not_shown_as_changed():
    live = _summary(live=True)
    Chapter.objects.filter(summary=live, position=1).update(body=BODY.replace("\n", "\r\n"))
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    copy.tldr = "A new thirty seconds."
    chapters = list(Chapter.objects.filter(summary=copy).order_by("position"))
    save.save_summary(summary=copy, parts={Chapter: chapters}, user=None)
    comparison = compare_live_and_changes(live)
    assert [c.name for c in comparison.changed_fields] == ["tldr"]
    assert not any(kind.changed for kind in comparison.parts)


def _api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_an_api_write_with_crlf_line_breaks_changes_only_what_changed():
    live = _summary(live=True)
    api = _api(ReviewerFactory())
    url = f"/api/v1/summaries/{live.video.slug}/"
    tldr = {"tldr": "A new thirty seconds.\r\nOn two lines."}
    response = api.patch(url, tldr, format="json", HTTP_IF_MATCH=api.get(url)["ETag"])
    assert response.status_code == 200, response.json()
    copy = copies.working_copy_of(live)
    assert copy.tldr == "A new thirty seconds.\nOn two lines."

    changes = api.get(url + "working-copy/")
    chapters = [
        {key: c[key] for key in ("id", "title", "start_time", "synopsis", "body")}
        for c in changes.json()["chapters"]
    ]
    for chapter in chapters:
        chapter["body"] = chapter["body"].replace("\n", "\r\n")
        chapter["synopsis"] = chapter["synopsis"].replace("\n", "\r\n")
    response = api.patch(url, {"chapters": chapters}, format="json", HTTP_IF_MATCH=changes["ETag"])
    assert response.status_code == 200, response.json()
    assert Chapter.objects.get(summary=copy, position=1).body == BODY
    diff = api.get(url + "working-copy/diff/").json()
    assert "Opening" not in str(diff)

    # The live text again, CRLF and all: the changes change nothing, and are dropped.
    tag = api.get(url + "working-copy/")["ETag"]
    response = api.patch(
        url, {"tldr": TLDR.replace("\n", "\r\n")}, format="json", HTTP_IF_MATCH=tag
    )
    assert response.status_code == 200, response.json()
    assert copies.working_copy_of(live) is None


def test_a_video_blurb_sent_with_crlf_is_no_change_of_the_video():
    live = _summary(live=True)
    Video.objects.filter(pk=live.video_id).update(blurb="A talk.\n\nIn two parts.")
    video = Video.objects.get(pk=live.video_id)
    video.blurb = "A talk.\r\n\r\nIn two parts.\r\n"
    edited = save.edit_video(
        summary=live, video=video, people=None, topics=None, user=ReviewerFactory()
    )
    assert edited == live
    assert copies.working_copy_of(live) is None


def test_corrections_recorded_before_lose_the_items_that_changed_nothing():
    from importlib import import_module

    from django.apps import apps

    migration = import_module("summaries.migrations.0042_corrections_without_line_break_changes")
    live = _summary(live=True)
    crlf_only = {
        "label": "Chapter 1: Opening — body",
        "old": [["First paragraph.", False], ["\r\n\r\n", True], ["Second.", False]],
        "new": [["First paragraph.", False], ["\n\n", True], ["Second.", False]],
    }
    real = {
        "label": "In 30 seconds",
        "old": [["It is ", False], ["fast", True], [".", False]],
        "new": [["It is ", False], ["slow", True], [".", False]],
    }
    added = {"label": "Chapter 3: New — body", "old": [], "new": [["New text.", True]]}
    correction = Correction.objects.create(
        summary=live,
        kind=Correction.Kind.CORRECTION,
        note="Fixed.",
        published_at=live.publish_at,
        changes=[crlf_only, real, added],
    )
    migration.drop_items_that_changed_nothing(apps, None)
    correction.refresh_from_db()
    assert correction.changes == [real, added]
