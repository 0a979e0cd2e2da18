"""Receipts on every road to readers: a statement the transcript does not support is not
published through the admin's buttons or bulk actions, the API, a schedule or a restore of
an old revision, and an unreviewed transcript never goes live with them. The services
themselves are tested in test_receipts.py."""

import datetime

import pytest
import time_machine
from django.contrib.messages import get_messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from reversion.models import Version

from summaries.editing import copies, pinning, receipts, restore, save, workflow
from summaries.models import Chapter, KeyPoint, Summary, Transcript

from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    KeyPointFactory,
    SummaryFactory,
)
from .receipts_factories import (
    CONTRADICTED_POINT,
    OPENING,
    SPEECH,
    VERBATIM_POINT,
    VERBATIM_QUOTE,
    let_through,
    pin_and_approve,
    pin_best,
    vtt,
)

pytestmark = pytest.mark.django_db

REFUSED = "Key point “Price” (at 0:06) is contradicted by the transcript"


def make_summary(editor, *, body=CONTRADICTED_POINT, time=6, **fields):
    """A draft with a transcript waiting for review, its key point pinned to it and its
    chapter pinned where the transcript says it (approved if a paraphrase)."""
    summary = SummaryFactory(tldr="The new model and its price.", **fields)
    summary.video.duration_seconds = 60
    summary.video.save()
    KeyPointFactory(summary=summary, position=1, title="Price", body=body, time=time)
    ChapterFactory(
        summary=summary, position=1, title="Release", body=f"{OPENING} “{VERBATIM_QUOTE}”."
    )
    pinning.import_transcript(video=summary.video, data=vtt(SPEECH), user=editor, filename="t.vtt")
    pin_best(summary, price(summary), editor)
    pin_and_approve(summary, editor)
    return summary


@pytest.fixture
def refused(editor):
    """A draft whose key point the transcript contradicts."""
    return make_summary(editor)


def price(summary) -> KeyPoint:
    return KeyPoint.objects.get(summary=summary, title="Price")


def override(summary, reviewer):
    pinning.override_pin(summary=summary, part=price(summary), note="Checked.", user=reviewer)


def assert_not_published(summary):
    summary.refresh_from_db()
    assert summary.status != Summary.Status.PUBLISHED
    assert not Transcript.objects.live().exists()


def said(response) -> str:
    return " ".join(str(message) for message in get_messages(response.wsgi_request))


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def admin_post(client, summary, **changes):
    data = form_fields(client.get(change_url(summary)))
    data.update(changes)
    return client.post(change_url(summary), data)


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def api_publish(client, summary, data=None):
    """POST publish with the If-Match of what it publishes: the summary, or its changes."""
    url = f"/api/v1/summaries/{summary.summarised_video.slug}/"
    changes = copies.working_copy_of(summary) is not None
    tag = client.get(f"{url}working-copy/" if changes else url)["ETag"]
    return client.post(f"{url}publish/", data or {}, format="json", HTTP_IF_MATCH=tag)


# --- The admin ----------------------------------------------------------------------------


def test_the_admins_publish_button_refuses_a_contradicted_statement(client, refused, reviewer):
    client.force_login(reviewer)
    response = admin_post(client, refused, _publish="Publish")
    assert response.status_code == 302
    assert REFUSED in said(response)
    assert_not_published(refused)


def test_the_admins_bulk_publish_refuses_a_contradicted_statement(client, refused, reviewer):
    client.force_login(reviewer)
    response = client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "publish_now", "_selected_action": [refused.pk]},
    )
    assert REFUSED in said(response)
    assert_not_published(refused)


def test_the_admins_bulk_schedule_refuses_a_contradicted_statement(client, refused, reviewer):
    client.force_login(reviewer)
    at = timezone.localtime(timezone.now() + datetime.timedelta(days=1))
    response = client.post(
        reverse("admin:summaries_summary_changelist"),
        {
            "action": "schedule",
            "_selected_action": [refused.pk],
            "apply": "1",
            "publish_at": f"{at:%Y-%m-%dT%H:%M}",
        },
    )
    assert REFUSED in said(response)
    assert_not_published(refused)


def test_the_admin_publishes_once_a_reviewer_overrode_the_pin(client, refused, reviewer):
    override(refused, reviewer)
    client.force_login(reviewer)
    response = admin_post(client, refused, _publish="Publish")
    assert "Published" in said(response)
    refused.refresh_from_db()
    assert refused.is_live() and Transcript.objects.get().state == Transcript.State.LIVE


def test_an_admin_save_verifies_the_changed_statement_again(client, editor):
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    assert price(summary).pin["status"] == "verbatim"
    client.force_login(editor)
    fields = form_fields(client.get(change_url(summary)))
    body = next(name for name, value in fields.items() if value == VERBATIM_POINT)

    response = admin_post(client, summary, **{body: "Pricing starts at $50 a month."})

    assert response.status_code == 302
    assert price(summary).pin["status"] == "contradicted"


def test_the_admin_refuses_the_changes_of_a_live_summary_it_no_longer_supports(
    client, editor, reviewer
):
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    workflow.publish_summary(summary=summary, user=reviewer)
    client.force_login(editor)
    fields = form_fields(client.get(change_url(summary)))
    body = next(name for name, value in fields.items() if value == VERBATIM_POINT)
    admin_post(client, summary, **{body: "Pricing starts at $50 a month."})
    copy = copies.working_copy_of(summary)
    assert copy is not None and price(copy).pin["status"] == "contradicted"

    client.force_login(reviewer)
    response = admin_post(client, summary, _publish="Publish")

    assert "Key point “Price” (at 0:22) is contradicted" in said(response)
    assert price(summary).body == VERBATIM_POINT  # readers: unchanged


# --- The API ------------------------------------------------------------------------------


def test_the_apis_publish_refuses_a_contradicted_statement(refused, reviewer):
    response = api_publish(api_for(reviewer), refused)
    assert response.status_code == 400
    assert REFUSED in str(response.json()["error"]["fields"])
    assert_not_published(refused)


def test_the_apis_schedule_refuses_a_contradicted_statement(refused, reviewer):
    at = (timezone.now() + datetime.timedelta(days=1)).isoformat()
    response = api_publish(api_for(reviewer), refused, {"publish_at": at})
    assert response.status_code == 400
    assert_not_published(refused)


def test_the_api_publishes_once_a_reviewer_overrode_the_pin(refused, reviewer):
    override(refused, reviewer)
    assert api_publish(api_for(reviewer), refused).status_code == 200
    assert Transcript.objects.get().state == Transcript.State.LIVE


def test_an_api_write_verifies_the_changed_statement_again(editor):
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    client = api_for(editor)
    url = f"/api/v1/summaries/{summary.video.slug}/"
    point = price(summary)
    item = {"id": point.pk, "title": "Price", "body": "Pricing starts at $50 a month.", "time": 22}

    response = client.patch(
        url, {"key_points": [item]}, format="json", HTTP_IF_MATCH=client.get(url)["ETag"]
    )

    assert response.status_code == 200, response.json()
    assert price(summary).pin["status"] == "contradicted"


# --- Who may override ---------------------------------------------------------------------


@pytest.mark.parametrize("quote", [None, 0])
def test_an_editor_may_not_override_whatever_they_call(refused, editor, quote):
    chapter = Chapter.objects.get(summary=refused)
    part = price(refused) if quote is None else chapter
    with pytest.raises(PermissionDenied):
        pinning.override_pin(summary=refused, part=part, note="Mine.", user=editor, quote=quote)
    with pytest.raises(ValidationError):
        workflow.publish_summary(summary=refused, user=None)  # still refused, even to the system


def test_the_override_and_its_note_are_in_the_summarys_history(client, refused, reviewer):
    pinning.override_pin(
        summary=refused, part=price(refused), note="Said on screen at 0:07.", user=reviewer
    )
    client.force_login(reviewer)
    page = client.get(reverse("admin:summaries_summary_history", args=[refused.pk]))
    assert "Overrode the refused pin (Said on screen at 0:07.) of “Price”" in page.content.decode()


def test_an_editor_may_not_override_through_the_api(refused, editor):
    client = api_for(editor)
    url = f"/api/v1/summaries/{refused.video.slug}/"
    tag = client.get(url)["Edit-Version"]
    point = price(refused)
    response = client.post(
        f"{url}key-points/{point.pk}/pin/override/",
        {"note": "Mine."},
        format="json",
        HTTP_IF_MATCH=tag,
    )
    assert response.status_code == 403
    assert price(refused).pin == point.pin


def test_an_editor_may_not_override_through_the_admin(client, refused, editor):
    client.force_login(editor)
    point = price(refused)
    response = client.post(
        reverse("admin:summaries_summary_pin", args=[refused.pk]),
        {"part": f"keypoint-{point.pk}", "action": "override", "note": "Mine."},
    )
    assert response.status_code == 403
    assert price(refused).pin == point.pin


def test_an_editor_who_made_themselves_no_reviewer_cannot_publish_an_override(refused, editor):
    """An override with an editor's name forged into the row does not hold once the
    statement changes; and the gate refuses the change as ever."""
    pin = price(refused).pin
    forged = {**pin, "override": {"by": "eve", "at": "now", "note": "x"}, "statement": "0"}
    KeyPoint.objects.filter(pk=price(refused).pk).update(pin=forged)
    with pytest.raises(ValidationError, match="contradicted"):
        receipts.check_publishable(refused)


# --- Schedules ----------------------------------------------------------------------------


def test_a_transcript_imported_after_scheduling_never_goes_live_unreviewed(
    client, editor, reviewer
):
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    workflow.publish_summary(summary=summary, user=reviewer)
    copy, _ = copies.start_working_copy(summary=summary, user=editor)
    pin_best(copy, Chapter.objects.get(summary=copy), editor)
    let_through(copy, editor=editor)  # the chapter start's paraphrase approved
    workflow.submit_for_review(summary=summary, user=editor)
    at = timezone.now() + datetime.timedelta(hours=1)
    assert api_publish(api_for(reviewer), summary, {"publish_at": at.isoformat()}).status_code == (
        200
    )

    client.force_login(editor)  # through the admin's import, as an editor would
    lines = [(0, 6, "Something nobody reviewed.")]
    pinning.import_transcript(video=summary.video, data=vtt(lines), user=editor, filename="x.vtt")

    with time_machine.travel(at + datetime.timedelta(minutes=1)):
        assert copies.publish_due_changes() == []
    assert Transcript.objects.get(state=Transcript.State.LIVE).original_name == "t.vtt"
    assert Transcript.objects.get(state=Transcript.State.DRAFT).original_name == "x.vtt"


def test_a_scheduled_first_publication_takes_the_reviewed_transcript_with_it(editor, reviewer):
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    at = timezone.now() + datetime.timedelta(hours=1)
    workflow.publish_summary(summary=summary, user=reviewer, at=at)
    pinning.import_transcript(
        video=summary.video, data=vtt([(0, 3, "Later words.")]), user=editor, filename="late.vtt"
    )

    summary.refresh_from_db()
    assert summary.is_scheduled()
    # The one reviewed went with the schedule; the later import waits in the changes.
    assert Transcript.objects.get(state=Transcript.State.LIVE).original_name == "t.vtt"
    assert receipts.transcript_for(summary).original_name == "t.vtt"
    copy = copies.working_copy_of(summary)
    assert copy is not None and receipts.transcript_for(copy).original_name == "late.vtt"


# --- Restoring an old revision --------------------------------------------------------------


def _published_with_an_override_then_corrected(editor, reviewer, refused):
    """Live with an overridden pin (revision kept), then a new transcript and a corrected
    statement published by a reviewer."""
    override(refused, reviewer)
    workflow.publish_summary(summary=refused, user=reviewer)
    with_override = restore.history_versions(refused).first()
    assert with_override is not None
    pinning.import_transcript(
        video=refused.video, data=vtt([*SPEECH, (60, 62, "Bye.")]), user=editor, filename="2.vtt"
    )
    copy = copies.working_copy_of(refused)
    points = list(KeyPoint.objects.filter(summary=copy))
    points[0].body, points[0].time = VERBATIM_POINT, 22
    save.save_summary(summary=copy, parts={KeyPoint: points}, user=editor)
    pin_best(copy, price(copy), editor)
    pin_and_approve(copy, editor)  # an approval holds for one transcript: given again
    workflow.publish_summary(summary=refused, user=reviewer)
    assert price(refused).pin["status"] == "verbatim"
    return with_override


def test_restoring_an_overridden_pin_onto_a_new_transcript_needs_a_reviewer_again(
    editor, reviewer, refused
):
    old = _published_with_an_override_then_corrected(editor, reviewer, refused)

    target, made = restore.restore_revision(summary=refused, version=old, user=editor)

    assert made and target.is_working_copy
    pin = price(target).pin
    assert pin["status"] == "contradicted" and pin["override"] is None
    with pytest.raises(ValidationError, match="is contradicted"):
        workflow.publish_summary(summary=refused, user=reviewer)
    assert price(refused).body == VERBATIM_POINT


def test_restoring_through_the_admin_does_not_bring_an_override_back_either(
    client, editor, reviewer, refused
):
    old = _published_with_an_override_then_corrected(editor, reviewer, refused)
    client.force_login(editor)

    url = reverse("admin:summaries_summary_revision", args=[refused.pk, old.pk])
    assert client.post(url).status_code == 302

    copy = copies.working_copy_of(refused)
    assert copy is not None and price(copy).pin["override"] is None
    client.force_login(reviewer)
    assert REFUSED in said(admin_post(client, refused, _publish="Publish"))


def test_restoring_a_revision_brings_its_pins_back(editor):
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    pinned = price(summary).pin
    version = restore.history_versions(summary).first()
    pinning.set_pin(summary=summary, part=price(summary), first=None, end=None, user=editor)
    assert price(summary).pin is None

    restore.restore_revision(summary=summary, version=version, user=editor)

    assert price(summary).pin == pinned
    assert Chapter.objects.get(summary=summary).quote_pins[0]["status"] == "verbatim"


# --- The transcripts' own history ---------------------------------------------------------


def test_no_one_reverts_a_transcript_to_an_old_import_behind_review(client, editor, reviewer):
    """Reverting the transcript waiting for review to an earlier import, or recovering a
    transcript dropped with discarded changes, would change what goes live with nobody
    seeing it in the summary's changes: the transcript's history is read-only."""
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    pinning.import_transcript(
        video=summary.video, data=vtt([(0, 3, "Second.")]), user=editor, filename="2.vtt"
    )
    transcript = Transcript.objects.get()
    first = Version.objects.get_for_object(transcript).last()
    client.force_login(reviewer)

    revert = reverse("admin:summaries_transcript_revision", args=[transcript.pk, first.pk])
    recover = reverse("admin:summaries_transcript_recover", args=[first.pk])
    for url in (revert, recover):
        assert client.post(url).status_code == 403

    assert Transcript.objects.get().original_name == "2.vtt"


# --- Imports and publications one at a time --------------------------------------------------


@pytest.mark.skipif(
    not connection.features.has_select_for_update, reason="row locks: PostgreSQL only"
)
@pytest.mark.parametrize("publish", [False, True])
def test_an_import_and_a_publication_lock_the_summary_before_anything_else(
    editor, reviewer, publish
):
    """Both take the summary's row lock first, so an import waits for a publication being
    committed (and the other way round): the transcript published is always the one the
    gate judged the pins on."""
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    with CaptureQueriesContext(connection) as queries:
        if publish:
            workflow.publish_summary(summary=summary, user=reviewer)
        else:
            pinning.import_transcript(
                video=summary.video, data=vtt(SPEECH), user=editor, filename="again.vtt"
            )
    writes = ("UPDATE", "INSERT", "DELETE")
    first_write_or_lock = next(
        q["sql"] for q in queries if "FOR UPDATE" in q["sql"] or q["sql"].startswith(writes)
    )
    assert "FOR UPDATE" in first_write_or_lock and '"summaries_summary"' in first_write_or_lock


def test_a_refused_paste_quoting_a_percent_sign_is_answered_with_its_line(client, editor):
    summary = make_summary(editor, body=VERBATIM_POINT, time=22)
    client.force_login(editor)
    broken = "1\n00:00:01,000 --> 00:00:02,000\nhi\n\n2\n50% faster\nhi\n"
    response = client.post(
        reverse("admin:summaries_summary_transcript_import", args=[summary.pk]),
        {"pasted": broken, "language": "en"},
    )
    assert response.status_code == 200
    [error] = response.context["form"].errors["pasted"]
    assert "line 6" in error and "50% faster" in error
