"""Nothing unreviewed reaches readers, by any road: each road an Editors-only user might take
to change what readers see of a published summary, tried as an attacker would.

Every write to a published summary, whichever face it comes through, must land in its
unpublished changes (a working copy) and go live only when a reviewer publishes them.
"""

import ast
import datetime
from pathlib import Path

import pytest
import reversion
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient
from reversion.models import Version

from summaries.editing import copies, derived, restore, save, workflow
from summaries.models import Citation, Summary, Video, WebhookEvent

from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    SummaryFactory,
    TopicFactory,
)
from .test_api_working_copies import client_for, url

pytestmark = pytest.mark.django_db

CITED = "Fast, [Anthropic says](https://example.com/fast) it is 2.5 times faster."


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Live words.")
    summary.video.duration_seconds = 600
    summary.video.title = "Live title"
    summary.video.save()
    ChapterFactory(summary=summary, position=1, title="One", body=CITED, start_time=60)
    derived.refresh_derived_data(summary=summary)
    return summary


def reader_sees(summary) -> str:
    return APIClient().get(summary.get_absolute_url()).content.decode()


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def admin_edit(client, summary, **changes):
    data = form_fields(client.get(change_url(summary)))
    data.update(changes)
    return client.post(change_url(summary), data)


# --- Restore ----------------------------------------------------------------------------


def test_an_editor_restoring_an_old_version_of_a_live_summary_puts_nothing_live(
    client, live, editor, reviewer
):
    with reversion.create_revision():  # the live version, as history keeps it
        reversion.add_to_revision(live)
    client.force_login(reviewer)
    assert admin_edit(client, live, tldr="Reviewed words.", _publish="Publish").status_code == 302
    live.refresh_from_db()
    assert live.tldr == "Reviewed words."
    old = [v for v in restore.history_versions(live) if v.field_dict["tldr"] == "Live words."]
    events = WebhookEvent.objects.count()

    client.force_login(editor)
    revision_url = reverse("admin:summaries_summary_revision", args=[live.pk, old[-1].pk])
    assert client.post(revision_url).status_code == 302

    live.refresh_from_db()
    assert live.tldr == "Reviewed words." and live.is_live()
    assert "Reviewed words." in reader_sees(live) and "Live words." not in reader_sees(live)
    assert Summary.objects.get(working_copy_of=live).tldr == "Live words."
    assert WebhookEvent.objects.count() == events  # nothing was published


def test_the_restore_service_never_writes_a_published_summary_itself(live, editor):
    version = restore.history_versions(live).first()
    if version is None:  # a revision of the live summary as it is
        workflow.publish_summary(summary=live, user=None)
        version = restore.history_versions(live).first()
    target, _made = restore.restore_revision(summary=live, version=version, user=editor)
    assert target.pk == live.pk or target.is_working_copy


def test_django_reversions_recovery_of_deleted_summaries_is_closed(client, reviewer):
    client.force_login(reviewer)
    assert client.get(reverse("admin:summaries_summary_recoverlist")).status_code == 404
    assert client.get(reverse("admin:summaries_summary_recover", args=[1])).status_code == 404


# --- Scheduled changes are frozen ---------------------------------------------------------


def _scheduled(live, editor, reviewer):
    copy, _ids, _made = copies.edit_target(summary=live, user=editor)
    save.update_summary(summary=copy, data={"tldr": "Reviewed."}, user=editor, partial=True)
    at = timezone.now() + datetime.timedelta(hours=1)
    workflow.submit_for_review(summary=live, user=editor)
    workflow.publish_summary(summary=live, user=reviewer, at=at)
    return Summary.objects.get(working_copy_of=live), at


def test_scheduled_changes_go_live_as_the_reviewer_scheduled_them(live, editor, reviewer):
    _copy, at = _scheduled(live, editor, reviewer)
    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == [live.pk]
    live.refresh_from_db()
    assert live.tldr == "Reviewed."


def test_an_edit_after_scheduling_does_not_go_live_at_the_scheduled_time(live, editor, reviewer):
    copy, at = _scheduled(live, editor, reviewer)
    save.update_summary(summary=copy, data={"tldr": "Sneaked in."}, user=editor, partial=True)

    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == []
    live.refresh_from_db()
    assert live.tldr == "Live words."
    copy.refresh_from_db()
    assert copy.tldr == "Sneaked in." and copy.publish_at is None  # waits for a reviewer


def test_changes_sent_back_after_scheduling_do_not_go_live(live, editor, reviewer):
    _copy, at = _scheduled(live, editor, reviewer)
    workflow.send_back(summary=live, user=reviewer, note="Not yet.")

    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == []
    live.refresh_from_db()
    assert live.tldr == "Live words."


def test_a_schedule_changed_behind_the_gate_is_not_published(live, editor, reviewer):
    copy, at = _scheduled(live, editor, reviewer)
    # A write that bypasses the services (a shell, a bug) moves lock_version on.
    copy.tldr = "Written around the services."
    copy.save()
    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == []


# --- Video fields -------------------------------------------------------------------------


def test_an_editors_api_change_to_the_video_waits_for_review(live, editor, reviewer):
    api = client_for(editor)
    topic = TopicFactory(name="Speed")
    tag = api.get(url(live))["ETag"]
    response = api.patch(
        url(live),
        {"video": {"title": "Sneaky title", "blurb": "Sneaky blurb", "topics": [topic.slug]}},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert response.status_code == 200, response.json()
    assert response.json()["video"]["title"] == "Sneaky title"  # the changes show it

    video = Video.objects.get(pk=live.video_id)
    assert (video.title, video.blurb) == ("Live title", live.video.blurb)
    assert not video.topics.exists()
    assert "Sneaky" not in reader_sees(live)
    assert APIClient().get(url(live)).json()["video"]["title"] == "Live title"
    assert api.get(url(live, "working-copy")).json()["video"]["title"] == "Sneaky title"

    workflow.publish_summary(summary=live, user=reviewer)
    video.refresh_from_db()
    assert (video.title, video.blurb) == ("Sneaky title", "Sneaky blurb")
    assert list(video.topics.all()) == [topic]
    assert "Sneaky title" in reader_sees(live)


def test_an_editors_change_on_the_video_page_waits_for_review(client, live, editor, reviewer):
    client.force_login(editor)
    video_url = reverse("admin:summaries_video_change", args=[live.video_id])
    data = form_fields(client.get(video_url), "video_form")
    data.update(title="Sneaky title", blurb="Sneaky blurb")
    response = client.post(video_url, data)
    assert response.status_code == 302, response.content.decode()[:2000]

    video = Video.objects.get(pk=live.video_id)
    assert video.title == "Live title"
    assert "Sneaky" not in reader_sees(live)
    copy = Summary.objects.get(working_copy_of=live)
    assert copy.video_changes["title"] == "Sneaky title"
    # The page shows the pending value, so a second edit keeps the first.
    assert "Sneaky title" in client.get(video_url).content.decode()

    client.force_login(reviewer)
    assert admin_edit(client, live, _publish="Publish").status_code == 302
    video.refresh_from_db()
    assert (video.title, video.blurb) == ("Sneaky title", "Sneaky blurb")


def test_an_old_version_of_a_live_summarys_video_is_not_restored_around_review(
    client, live, editor
):
    with reversion.create_revision():
        live.video.title = "Older title"
        live.video.save()
    older = Version.objects.get_for_object(live.video).first()
    Video.objects.filter(pk=live.video_id).update(title="Live title")
    client.force_login(editor)
    revision_url = reverse("admin:summaries_video_revision", args=[live.video_id, older.pk])
    client.post(revision_url, form_fields(client.get(revision_url), "video_form"))
    assert Video.objects.get(pk=live.video_id).title == "Live title"


# --- Key phrases --------------------------------------------------------------------------


def test_an_editors_key_phrase_on_a_live_summary_waits_for_review(live, editor):
    api = client_for(editor)
    citation = live.citations.get()
    before = citation.key_phrase
    tag = api.get(url(live))["ETag"]
    response = api.patch(
        url(live, f"citations/{citation.pk}"),
        {"key_phrase": "something else"},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert response.status_code == 200, response.json()

    citation.refresh_from_db()
    assert citation.key_phrase == before
    copy = Summary.objects.get(working_copy_of=live)
    assert copy.citations.get().key_phrase == "something else"
    assert "something else" not in reader_sees(live)


# --- Times after the video's end ----------------------------------------------------------


def test_a_time_after_the_videos_end_is_refused_on_a_live_summarys_changes(client, live, editor):
    client.force_login(editor)
    response = admin_edit(client, live, **{"chapters-0-start_time": "11:40"})
    assert response.status_code == 200
    assert "after the end" in response.content.decode() or "10:00" in response.content.decode()
    assert not Summary.objects.filter(working_copy_of=live).exists()


def test_changes_with_a_time_after_the_videos_end_are_not_published(live, editor, reviewer):
    copy, _ids, _made = copies.edit_target(summary=live, user=editor)
    copy.chapters.update(start_time=700)  # however it got there: the video lasts 600 s
    with pytest.raises(ValidationError):
        workflow.publish_summary(summary=live, user=reviewer)
    live.refresh_from_db()
    assert live.chapters.get().start_time == 60


# --- Empty changes ------------------------------------------------------------------------


def test_saving_a_live_summary_with_no_change_makes_no_unpublished_changes(client, live, editor):
    client.force_login(editor)
    assert admin_edit(client, live).status_code == 302
    assert admin_edit(client, live, _check_now="Check").status_code == 302
    assert not Summary.objects.filter(working_copy_of=live).exists()


def test_an_api_write_that_changes_nothing_makes_no_unpublished_changes(live, editor):
    api = client_for(editor)
    tag = api.get(url(live))["ETag"]
    response = api.patch(url(live), {"tldr": "Live words."}, format="json", HTTP_IF_MATCH=tag)
    assert response.status_code == 200
    assert not Summary.objects.filter(working_copy_of=live).exists()


# --- Deleting, bulk actions, the services themselves --------------------------------------


def test_an_editor_cannot_delete_a_published_summary(client, live, editor):
    client.force_login(editor)
    delete = reverse("admin:summaries_summary_delete", args=[live.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert Summary.objects.filter(pk=live.pk).exists()


def test_a_bulk_publish_posted_by_an_editor_publishes_nothing(client, editor):
    draft = SummaryFactory()
    client.force_login(editor)
    client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "publish_now", "_selected_action": [draft.pk]},
    )
    draft.refresh_from_db()
    assert draft.status == Summary.Status.DRAFT


@pytest.mark.parametrize(
    "service",
    [workflow.publish_summary, workflow.unpublish_summary, copies.publish_changes],
)
def test_the_publishing_services_refuse_an_editor_whoever_calls_them(live, editor, service):
    copies.edit_target(summary=live, user=editor)
    with pytest.raises(PermissionDenied):
        service(summary=live, user=editor)


def test_saving_a_published_summary_itself_is_refused_by_the_service(live, reviewer):
    live.tldr = "Straight to readers."
    with pytest.raises(PermissionDenied):
        save.save_summary(summary=live, parts={}, user=reviewer)


def test_the_key_phrase_service_refuses_a_live_citation(live, reviewer):
    with pytest.raises(PermissionDenied):
        derived.set_key_phrase(citation=live.citations.get(), phrase="x", user=reviewer)
    assert Citation.objects.get(summary=live).key_phrase != "x"


# --- The faces never decide publication themselves ----------------------------------------

FACES = ("summaries/admin", "summaries/api")
PUBLICATION_FIELDS = {"status", "publish_at", "first_published_at", "scheduled_version"}
EDITING_MODULES = {"workflow", "copies", "save", "restore", "derived"}


def _face_sources():
    root = Path(__file__).resolve().parent.parent
    for face in FACES:
        for path in sorted((root / face).glob("*.py")):
            yield path, ast.parse(path.read_text())


def test_the_admin_and_the_api_never_set_publication_fields():
    found = []
    for path, tree in _face_sources():
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for each in ast.walk(target):
                    if isinstance(each, ast.Attribute) and each.attr in PUBLICATION_FIELDS:
                        found.append(f"{path.name}:{node.lineno} sets .{each.attr}")
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "update":
                names = {k.arg for k in node.keywords}
                if names & PUBLICATION_FIELDS:
                    found.append(f"{path.name}:{node.lineno} updates {names & PUBLICATION_FIELDS}")
    assert found == []


def test_the_faces_call_the_editing_services_with_the_signed_in_user():
    unnamed = []
    for path, tree in _face_sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner = node.func.value
            if not (isinstance(owner, ast.Name) and owner.id in EDITING_MODULES):
                continue
            keywords = {k.arg: k.value for k in node.keywords}
            if node.func.attr.startswith(("publish", "unpublish", "submit", "send", "discard")):
                user = keywords.get("user")
                if user is None or isinstance(user, ast.Constant):
                    unnamed.append(f"{path.name}:{node.lineno} {owner.id}.{node.func.attr}")
    assert unnamed == []
