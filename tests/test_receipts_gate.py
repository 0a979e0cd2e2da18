"""The publish gate's one rule, on every road: a summary whose video has a transcript goes
live only when each statement is pinned and each pin is verbatim, a paraphrase a named
editor approved, or overridden by a named reviewer with a note. Pins are set here with the
status a test is about (the judge's verdicts are tested in test_pins_text.py and
test_receipts.py), so that each test breaks one rule and sees every road refuse it, naming
the statement and linking to it."""

import datetime

import pytest
import reversion
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.contrib.messages import get_messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.editing import copies, pinning, receipts, restore, workflow
from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway, Transcript

from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    KeyPointFactory,
    SummaryFactory,
)
from .receipts_factories import (
    OPENING,
    VERBATIM_POINT,
    VERBATIM_QUOTE,
    make_transcript,
    pin_best,
)

pytestmark = pytest.mark.django_db

REASONS = {
    "not_found": "nothing in the transcript says this",
    "contradicted": "the transcript says $20, the statement says $50",
    "mis_timed": "said at 0:22, not at 0:40",
    "paraphrase": "a paraphrase, for an editor to approve",
}
SAYS = {
    "not_found": "is not in the transcript",
    "contradicted": "is contradicted by the transcript",
    "mis_timed": "is not said when the summary says",
    "paraphrase": "is not word for word and no editor approved it as a paraphrase",
}


@pytest.fixture
def draft(editor):
    """A draft with a transcript waiting for review: a key point, a chapter whose start
    and quotation are pinned, every pin verbatim (publishable as it is)."""
    summary = SummaryFactory(tldr="Pricing.")
    summary.video.duration_seconds = 60
    summary.video.save()
    make_transcript(summary.video)
    KeyPointFactory(summary=summary, position=1, title="Price", body=VERBATIM_POINT, time=22)
    ChapterFactory(
        summary=summary,
        position=1,
        title="Release",
        start_time=0,
        body=f"{OPENING} They said: “{VERBATIM_QUOTE}”.",
    )
    receipts.refresh_pins(summary=summary)  # the quotation is pinned where it is said
    pin_at(summary, price(summary), 0, 4, editor)
    pin_at(summary, chapter(summary), 0, 4, editor)
    for part in (price(summary), chapter(summary)):
        force(part, "verbatim")
    force(chapter(summary), "verbatim", quote=0)
    receipts.check_publishable(summary)  # nothing refused yet
    return summary


def pin_at(summary, part, first, end, user):
    pinning.set_pin(summary=summary, part=part, first=first, end=end, user=user)


def price(summary) -> KeyPoint:
    return KeyPoint.objects.get(summary=summary, title="Price")


def chapter(summary) -> Chapter:
    return Chapter.objects.get(summary=summary)


def force(part, status, *, quote=None, **extra):
    """Give the stored pin of `part` (or of its quotation `quote`) the verdict `status`, as
    the judge would (the statement, its time and the transcript unchanged: it stays fresh,
    so publishing does not verify it again)."""
    reason = "" if status == "verbatim" else REASONS[status]
    changes = {"status": status, "reason": reason, "approved": None, "override": None, **extra}
    if quote is None:
        type(part).objects.filter(pk=part.pk).update(pin={**part.pin, **changes})
    else:
        pins = list(Chapter.objects.get(pk=part.pk).quote_pins)
        pins[quote] = {**pins[quote], **changes}
        Chapter.objects.filter(pk=part.pk).update(quote_pins=pins)


def refused_messages(summary) -> list[str]:
    with pytest.raises(ValidationError) as refused:
        receipts.check_publishable(summary)
    return refused.value.messages


def assert_not_published(summary):
    summary.refresh_from_db()
    assert summary.status != Summary.Status.PUBLISHED
    assert not Transcript.objects.live().exists()


def said(response) -> str:
    return " ".join(str(message) for message in get_messages(response.wsgi_request))


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def link(summary, anchor) -> str:
    return f'<a href="{change_url(summary)}#{anchor}">'


def admin_post(client, summary, **changes):
    data = form_fields(client.get(change_url(summary)))
    data.update(changes)
    return client.post(change_url(summary), data)


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def api_publish(client, summary, data=None):
    url = f"/api/v1/summaries/{summary.summarised_video.slug}/"
    changes = copies.working_copy_of(summary) is not None
    tag = client.get(f"{url}working-copy/" if changes else url)["ETag"]
    return client.post(f"{url}publish/", data or {}, format="json", HTTP_IF_MATCH=tag)


def live_with_changes(draft, editor, reviewer):
    """`draft` published, and its unpublished changes made (a copy of every part)."""
    workflow.publish_summary(summary=draft, user=reviewer)
    copy, _ = copies.start_working_copy(summary=draft, user=editor)
    return copy


# --- Each status that blocks ----------------------------------------------------------------


@pytest.mark.parametrize("status", ["not_found", "contradicted", "mis_timed", "paraphrase"])
def test_a_key_point_that_is_not_verbatim_or_approved_is_refused(draft, reviewer, status):
    force(price(draft), status)

    messages = refused_messages(draft)

    assert messages == [f"Key point “Price” (at 0:22) {SAYS[status]}: {REASONS[status]}."]
    with pytest.raises(ValidationError):
        workflow.publish_summary(summary=draft, user=reviewer)
    assert_not_published(draft)


def test_an_unapproved_paraphrase_of_a_chapter_start_is_refused(draft):
    force(chapter(draft), "paraphrase")
    assert refused_messages(draft) == [
        f"Chapter “Release” (at 0:00) {SAYS['paraphrase']}: {REASONS['paraphrase']}."
    ]


def test_an_unapproved_paraphrase_of_a_quotation_is_refused(draft):
    force(chapter(draft), "paraphrase", quote=0)
    [message] = refused_messages(draft)
    assert message.startswith(f"The quotation “{VERBATIM_QUOTE}” in chapter “Release”")
    assert SAYS["paraphrase"] in message


def test_the_refusal_names_each_statement_as_a_value_of_its_part(draft):
    force(price(draft), "contradicted")
    force(chapter(draft), "mis_timed", quote=0)

    with pytest.raises(receipts.PublicationRefused) as refused:
        receipts.check_publishable(draft)

    assert [(p.kind, p.part_id, p.quote) for p in refused.value.problems] == [
        ("key_point", price(draft).pk, None),
        ("chapter", chapter(draft).pk, 0),
    ]
    assert list(refused.value.message_dict) == ["key_points", "chapters"]


@pytest.mark.parametrize("quote", [None, 0])
def test_a_paraphrase_a_named_editor_approved_is_published(draft, editor, reviewer, quote):
    force(chapter(draft), "paraphrase", quote=quote)
    pin = pinning.approve_pin(summary=draft, part=chapter(draft), user=editor, quote=quote)
    assert pin["approved"]["by"] == "eve"

    workflow.publish_summary(summary=draft, user=reviewer)

    draft.refresh_from_db()
    assert draft.is_live()


@pytest.mark.parametrize("status", ["not_found", "contradicted", "mis_timed", "paraphrase"])
def test_a_named_reviewers_override_with_a_note_lets_any_refused_pin_through(
    draft, reviewer, status
):
    force(price(draft), status)
    pinning.override_pin(summary=draft, part=price(draft), note="Heard it.", user=reviewer)

    workflow.publish_summary(summary=draft, user=reviewer)

    draft.refresh_from_db()
    assert draft.is_live()


# --- Nothing approved or overridden by "system" ----------------------------------------------


@pytest.mark.parametrize("user", [None, AnonymousUser()], ids=["system", "anonymous"])
def test_the_system_or_an_anonymous_user_may_not_approve_a_paraphrase(draft, user):
    force(price(draft), "paraphrase")
    with pytest.raises(PermissionDenied, match="Only a named editor may approve a paraphrase"):
        pinning.approve_pin(summary=draft, part=price(draft), user=user)
    assert price(draft).pin["approved"] is None
    with pytest.raises(ValidationError, match="no editor approved it"):
        receipts.check_publishable(draft)


@pytest.mark.parametrize("user", [None, AnonymousUser()], ids=["system", "anonymous"])
def test_the_system_or_an_anonymous_user_may_not_override_a_pin(draft, user):
    force(price(draft), "not_found")
    with pytest.raises(PermissionDenied, match="Only a named editor may override a pin"):
        pinning.override_pin(summary=draft, part=price(draft), note="Fine.", user=user)
    assert price(draft).pin["override"] is None


@pytest.mark.parametrize("by", ["system", "System", "", None])
def test_an_approval_stored_in_nobodys_name_does_not_count(draft, by):
    """An approval an older version wrote as "system" (or a row edited by hand) is no
    approval: the summary is refused, and the panel offers the approval again."""
    force(price(draft), "paraphrase", approved={"by": by, "at": "2026-01-01T00:00:00Z"})
    assert receipts.blocks(price(draft).pin)
    with pytest.raises(ValidationError, match="no editor approved it"):
        receipts.check_publishable(draft)


@pytest.mark.parametrize(
    "override",
    [{"by": "system", "note": "Fine."}, {"by": "rita", "note": "  "}, {"by": None, "note": "x"}],
    ids=["by-system", "without-a-note", "by-nobody"],
)
def test_an_override_stored_in_nobodys_name_or_without_a_note_does_not_count(draft, override):
    force(price(draft), "contradicted", override={**override, "at": "2026-01-01T00:00:00Z"})
    with pytest.raises(ValidationError, match="is contradicted"):
        receipts.check_publishable(draft)


def test_the_panel_shows_who_approved_and_offers_a_system_approval_again(client, draft, editor):
    force(price(draft), "paraphrase", approved={"by": "system", "at": "2026-01-01T00:00:00Z"})
    client.force_login(editor)
    html = client.get(change_url(draft)).content.decode()
    assert "approved by system" not in html
    assert f'value="approve pin-keypoint-{price(draft).pk}"' in html

    pinning.approve_pin(summary=draft, part=price(draft), user=editor)
    html = client.get(change_url(draft)).content.decode()
    assert '<span class="pin-approved">approved by eve</span>' in html


# --- Every road ---------------------------------------------------------------------------------


def test_the_admins_publish_button_refuses_with_a_link_to_the_statement(client, draft, reviewer):
    force(price(draft), "mis_timed")
    client.force_login(reviewer)

    response = admin_post(client, draft, _publish="Publish")

    message = said(response)
    assert "Publishing is refused" in message
    assert link(draft, f"pin-keypoint-{price(draft).pk}") in message
    assert "Key point “Price” (at 0:22) is not said when the summary says" in message
    assert_not_published(draft)
    # The summary page's "Things to check" links the same row, which the panel has.
    html = client.get(change_url(draft)).content.decode()
    assert f'<a href="#pin-keypoint-{price(draft).pk}">' in html
    assert f'id="pin-keypoint-{price(draft).pk}"' in html


def test_the_admins_bulk_action_refuses_with_a_link_to_the_statement(client, draft, reviewer):
    force(chapter(draft), "paraphrase", quote=0)
    client.force_login(reviewer)

    response = client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "publish_now", "_selected_action": [draft.pk]},
    )

    message = said(response)
    assert message.startswith(f"{draft}: Publishing is refused")
    assert link(draft, f"pin-chapter-{chapter(draft).pk}-quote-1") in message
    assert_not_published(draft)


def test_publishing_the_changes_of_a_live_summary_is_refused(client, draft, editor, reviewer):
    copy = live_with_changes(draft, editor, reviewer)
    force(price(copy), "not_found")
    client.force_login(reviewer)

    response = admin_post(client, draft, _publish="Publish")

    message = said(response)
    assert link(draft, f"pin-keypoint-{price(copy).pk}") in message  # the row on the page
    assert "Key point “Price” (at 0:22) is not in the transcript" in message
    assert copies.working_copy_of(draft) is not None  # the changes still wait
    with pytest.raises(ValidationError, match="is not in the transcript"):
        copies.publish_changes(summary=draft, user=reviewer)


def test_the_schedulers_publication_is_refused_and_taken_off_the_schedule(draft, editor, reviewer):
    copy = live_with_changes(draft, editor, reviewer)
    at = timezone.now() + datetime.timedelta(hours=1)
    copies.publish_changes(summary=draft, user=reviewer, at=at)
    # A verdict changed after scheduling, with the schedule untouched (as a new judge, or a
    # row written behind the services, would leave it).
    force(price(copy), "contradicted")

    with time_machine.travel(at + datetime.timedelta(minutes=1)):
        assert copies.publish_due_changes() == []

    copy.refresh_from_db()
    assert copy.publish_at is None and copies.working_copy_of(draft) == copy


def test_a_scheduled_first_publication_is_refused_when_it_is_asked(draft, reviewer):
    force(price(draft), "paraphrase")
    at = timezone.now() + datetime.timedelta(hours=1)
    with pytest.raises(ValidationError, match="no editor approved it"):
        workflow.publish_summary(summary=draft, user=reviewer, at=at)
    assert_not_published(draft)


def test_restoring_an_unapproved_revision_then_publishing_is_refused(draft, editor, reviewer):
    force(price(draft), "paraphrase")
    with reversion.create_revision():
        reversion.add_to_revision(draft)
        for part in receipts.parts_of(draft):
            reversion.add_to_revision(part)
        reversion.set_comment("Before the approval")
    pinning.approve_pin(summary=draft, part=price(draft), user=editor)
    receipts.check_publishable(draft)  # approved: publishable
    old = next(
        v for v in restore.history_versions(draft) if v.revision.comment == "Before the approval"
    )

    restore.restore_revision(summary=draft, version=old, user=editor)

    assert price(draft).pin["status"] == "paraphrase" and price(draft).pin["approved"] is None
    with pytest.raises(ValidationError, match="no editor approved it"):
        workflow.publish_summary(summary=draft, user=reviewer)
    assert_not_published(draft)


def test_the_apis_publish_answers_each_statement_with_its_part(draft, reviewer):
    force(price(draft), "contradicted")
    force(chapter(draft), "paraphrase")

    response = api_publish(api_for(reviewer), draft)

    assert response.status_code == 400
    error = response.json()["error"]
    point_says = f"Key point “Price” (at 0:22) {SAYS['contradicted']}: {REASONS['contradicted']}."
    chapter_says = f"Chapter “Release” (at 0:00) {SAYS['paraphrase']}: {REASONS['paraphrase']}."
    assert error["fields"] == {"key_points": [point_says], "chapters": [chapter_says]}
    assert error["problems"] == [
        {"kind": "key_point", "id": price(draft).pk, "quote": None, "message": point_says},
        {"kind": "chapter", "id": chapter(draft).pk, "quote": None, "message": chapter_says},
    ]
    assert error["message"] == f"Publishing is refused: {point_says} {chapter_says}"
    assert_not_published(draft)


def test_the_apis_publish_of_changes_answers_each_statement_with_its_part(draft, editor, reviewer):
    copy = live_with_changes(draft, editor, reviewer)
    force(chapter(copy), "not_found", quote=0)

    response = api_publish(api_for(reviewer), draft, {"change_kind": "update"})

    assert response.status_code == 400
    [problem] = response.json()["error"]["problems"]
    assert (problem["kind"], problem["id"], problem["quote"]) == ("chapter", chapter(copy).pk, 0)
    assert "is not in the transcript" in problem["message"]
    assert copies.working_copy_of(draft) is not None


def test_the_apis_pin_answers_list_the_problems_as_values(draft, editor):
    force(price(draft), "paraphrase")
    client = api_for(editor)
    url = f"/api/v1/summaries/{draft.video.slug}/"
    tag = client.get(url)["Edit-Version"]
    point = price(draft)

    response = client.post(
        f"{url}chapters/{chapter(draft).pk}/pin/approve/", {}, format="json", HTTP_IF_MATCH=tag
    )

    assert response.status_code == 400  # the chapter's start is verbatim: nothing to approve
    tag = client.get(url)["Edit-Version"]
    response = client.post(
        f"{url}key-points/{point.pk}/pin/approve/", {}, format="json", HTTP_IF_MATCH=tag
    )
    assert response.status_code == 200, response.json()
    assert response.json()["problems"] == []
    assert price(draft).pin["approved"]["by"] == "eve"


# --- Nothing unpinned goes live ------------------------------------------------------------

UNPINNED = "Key point “Price” (at 0:22) is not pinned to the transcript yet"


def unpin(summary, part, user):
    """An editor rejects the pin of `part`: the statement is left with none."""
    pinning.set_pin(summary=summary, part=part, first=None, end=None, user=user)
    assert type(part).objects.get(pk=part.pk).pin is None


def new_part(summary, kind):
    """A part of `kind` saying a line of the talk word for word, not pinned."""
    if kind == "takeaway":
        return Takeaway.objects.create(summary=summary, position=1, text=VERBATIM_POINT, time=22)
    if kind == "caveat":
        return Caveat.objects.create(summary=summary, position=1, text=VERBATIM_POINT)
    return KeyPointFactory(summary=summary, position=2, title="Again", body=VERBATIM_POINT, time=22)


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("key_point", "Key point “Again” (at 0:22)"),
        ("takeaway", "Takeaway “Pricing starts at $20 a month.” (at 0:22)"),
        ("caveat", "Caveat “Pricing starts at $20 a month.”"),
    ],
)
def test_a_statement_of_any_kind_with_no_pin_is_refused_until_it_is_pinned(
    draft, editor, reviewer, kind, says
):
    part = new_part(draft, kind)

    with pytest.raises(receipts.PublicationRefused) as refused:
        workflow.publish_summary(summary=draft, user=reviewer)

    [problem] = refused.value.problems
    assert (problem.kind, problem.part_id, problem.quote) == (kind, part.pk, None)
    assert problem.message == (
        f"{says} is not pinned to the transcript yet: pin it to the words that say it."
    )
    assert_not_published(draft)
    pin_best(draft, part, editor)  # pinned where it is said, word for word
    workflow.publish_summary(summary=draft, user=reviewer)
    draft.refresh_from_db()
    assert draft.is_live()


def test_a_chapter_start_with_no_pin_is_refused(draft, editor):
    unpin(draft, chapter(draft), editor)
    assert refused_messages(draft) == [
        "Chapter “Release” (at 0:00) is not pinned to the transcript yet: pin it to the words "
        "that say it."
    ]


def test_a_quotation_stored_with_no_pin_is_named_and_pinned_at_publication(draft, reviewer):
    """Quotations are pinned on every save (an editor cannot unpin one); one stored
    without a pin (a row written behind the services) is named among the problems, and
    the gate pins it where it is said before it judges."""
    Chapter.objects.filter(pk=chapter(draft).pk).update(quote_pins=[])

    [problem] = receipts.publication_problems(draft)

    assert (problem.kind, problem.quote) == ("chapter", 0)
    assert problem.message.startswith(
        f"The quotation “{VERBATIM_QUOTE}” in chapter “Release” (at 0:00) is not pinned"
    )
    workflow.publish_summary(summary=draft, user=reviewer)
    assert chapter(draft).quote_pins[0]["status"] == "verbatim"


def test_without_a_transcript_statements_with_no_pin_are_published(reviewer):
    summary = SummaryFactory(tldr="Pricing.")
    KeyPointFactory(summary=summary, title="Price", body=VERBATIM_POINT, time=22)
    assert receipts.publication_problems(summary) == []
    workflow.publish_summary(summary=summary, user=reviewer)
    summary.refresh_from_db()
    assert summary.is_live()


def test_the_admins_publish_button_refuses_a_statement_with_no_pin(client, draft, editor, reviewer):
    unpin(draft, price(draft), editor)
    client.force_login(reviewer)

    response = admin_post(client, draft, _publish="Publish")

    message = said(response)
    assert "Publishing is refused" in message and UNPINNED in message
    assert link(draft, f"pin-keypoint-{price(draft).pk}") in message
    assert_not_published(draft)
    html = client.get(change_url(draft)).content.decode()
    assert f'<a href="#pin-keypoint-{price(draft).pk}">' in html  # Things to check
    assert f'id="pin-keypoint-{price(draft).pk}"' in html  # its row in the panel


def test_the_admins_bulk_action_refuses_a_statement_with_no_pin(client, draft, editor, reviewer):
    unpin(draft, price(draft), editor)
    client.force_login(reviewer)

    response = client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "publish_now", "_selected_action": [draft.pk]},
    )

    message = said(response)
    assert message.startswith(f"{draft}: Publishing is refused") and UNPINNED in message
    assert_not_published(draft)


def test_publishing_changes_with_a_statement_with_no_pin_is_refused(
    client, draft, editor, reviewer
):
    copy = live_with_changes(draft, editor, reviewer)
    unpin(copy, price(copy), editor)
    client.force_login(reviewer)

    message = said(admin_post(client, draft, _publish="Publish"))

    assert UNPINNED in message
    assert link(draft, f"pin-keypoint-{price(copy).pk}") in message
    with pytest.raises(ValidationError, match="is not pinned to the transcript yet"):
        copies.publish_changes(summary=draft, user=reviewer)
    assert copies.working_copy_of(draft) is not None
    assert price(draft).pin is not None  # readers still see the pinned one


def test_the_scheduler_takes_changes_with_a_statement_with_no_pin_off_the_schedule(
    draft, editor, reviewer
):
    copy = live_with_changes(draft, editor, reviewer)
    at = timezone.now() + datetime.timedelta(hours=1)
    copies.publish_changes(summary=draft, user=reviewer, at=at)
    # The pin gone after scheduling, the schedule untouched (written behind the services).
    KeyPoint.objects.filter(pk=price(copy).pk).update(pin=None)

    with time_machine.travel(at + datetime.timedelta(minutes=1)):
        assert copies.publish_due_changes() == []

    copy.refresh_from_db()
    assert copy.publish_at is None and copies.working_copy_of(draft) == copy


def test_a_scheduled_first_publication_with_a_statement_with_no_pin_is_refused(
    draft, editor, reviewer
):
    unpin(draft, price(draft), editor)
    at = timezone.now() + datetime.timedelta(hours=1)
    with pytest.raises(ValidationError, match="is not pinned to the transcript yet"):
        workflow.publish_summary(summary=draft, user=reviewer, at=at)
    assert_not_published(draft)


def test_restoring_a_revision_from_before_the_pins_then_publishing_is_refused(
    draft, editor, reviewer
):
    with reversion.create_revision():
        reversion.add_to_revision(draft)
        KeyPoint.objects.filter(pk=price(draft).pk).update(pin=None)
        for part in receipts.parts_of(draft):
            reversion.add_to_revision(part)
        reversion.set_comment("Before the pin")
    pin_best(draft, price(draft), editor)
    receipts.check_publishable(draft)  # pinned: publishable
    old = next(v for v in restore.history_versions(draft) if v.revision.comment == "Before the pin")

    restore.restore_revision(summary=draft, version=old, user=editor)

    assert price(draft).pin is None
    with pytest.raises(ValidationError, match="is not pinned to the transcript yet"):
        workflow.publish_summary(summary=draft, user=reviewer)
    assert_not_published(draft)


def test_the_apis_publish_answers_a_statement_with_no_pin_with_its_part(draft, editor, reviewer):
    unpin(draft, price(draft), editor)

    response = api_publish(api_for(reviewer), draft)

    assert response.status_code == 400
    says = f"{UNPINNED}: pin it to the words that say it."
    error = response.json()["error"]
    assert error["fields"] == {"key_points": [says]}
    assert error["problems"] == [
        {"kind": "key_point", "id": price(draft).pk, "quote": None, "message": says}
    ]
    assert_not_published(draft)


def test_the_apis_publish_of_changes_answers_a_statement_with_no_pin(draft, editor, reviewer):
    copy = live_with_changes(draft, editor, reviewer)
    unpin(copy, price(copy), editor)

    response = api_publish(api_for(reviewer), draft, {"change_kind": "update"})

    assert response.status_code == 400
    [problem] = response.json()["error"]["problems"]
    assert (problem["kind"], problem["id"], problem["quote"]) == ("key_point", price(copy).pk, None)
    assert "is not pinned to the transcript yet" in problem["message"]
    assert copies.working_copy_of(draft) is not None


def test_the_apis_pin_answer_lists_a_statement_left_with_no_pin(draft, editor):
    client = api_for(editor)
    url = f"/api/v1/summaries/{draft.video.slug}/"
    tag = client.get(url)["Edit-Version"]

    response = client.delete(f"{url}key-points/{price(draft).pk}/pin/", HTTP_IF_MATCH=tag)

    assert response.status_code == 200, response.json()
    [problem] = response.json()["problems"]
    assert (problem["kind"], problem["id"]) == ("key_point", price(draft).pk)
    assert problem["message"].startswith(UNPINNED)
