"""Updates and corrections: the kind of each published change, its note, its withdrawal."""

import datetime
import json

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from summaries.editing import copies, corrections, save, workflow
from summaries.models import Correction, Summary, WebhookEndpoint, WebhookEvent

from .factories import ChapterFactory, EditorFactory, SummaryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="The model is fast on every benchmark.")
    ChapterFactory(summary=summary, position=1, title="One", body="First chapter.")
    return summary


@pytest.fixture
def endpoint(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    settings.SITE_URL = "https://curation.example"
    return WebhookEndpoint.objects.create(url="http://127.0.0.2:9/", events=["summary.corrected"])


def edit(live, tldr="The model is fast on most benchmarks."):
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    copy.tldr = tldr
    save.save_summary(summary=copy, parts={}, user=None)
    return copy


def corrected_events() -> list[dict]:
    found = WebhookEvent.objects.filter(type="summary.corrected").order_by("created_at")
    return [json.loads(event.body) for event in found]


def test_a_correction_is_recorded_with_its_note_and_what_changed_word_by_word(live, reviewer):
    edit(live)
    workflow.publish_summary(
        summary=live, user=reviewer, change_kind="correction", note="It is not fast on all."
    )
    correction = Correction.objects.get()
    assert correction.kind == "correction" and correction.note == "It is not fast on all."
    assert correction.summary == live and correction.published_by == reviewer
    (change,) = correction.changes
    assert change["label"] == "In 30 seconds"
    assert change["old"] == [
        ["The model is fast on ", False],
        ["every", True],
        [" ", False],
        ["benchmark.", True],
    ]
    assert change["new"] == [
        ["The model is fast on ", False],
        ["most", True],
        [" ", False],
        ["benchmarks.", True],
    ]


def test_a_correction_without_a_note_is_refused_and_nothing_is_published(live, reviewer):
    edit(live)
    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=live, user=reviewer, change_kind="correction", note=" ")
    assert "note" in refused.value.message_dict
    live.refresh_from_db()
    assert live.tldr == "The model is fast on every benchmark."
    assert copies.working_copy_of(live) is not None and not Correction.objects.exists()


def test_an_unknown_kind_is_refused_naming_the_field(live, reviewer):
    edit(live)
    with pytest.raises(ValidationError) as refused:
        copies.publish_changes(summary=live, user=reviewer, change_kind="retraction")
    assert "change_kind" in refused.value.message_dict
    assert copies.working_copy_of(live) is not None


def test_changes_are_an_update_unless_said_otherwise_and_a_typo_fix_is_not_public(live, reviewer):
    edit(live)
    workflow.publish_summary(summary=live, user=reviewer)
    edit(live, tldr="The model is fast on most benchmarks!")
    workflow.publish_summary(summary=live, user=reviewer, change_kind="typo")
    kinds = list(Correction.objects.order_by("id").values_list("kind", flat=True))
    assert kinds == ["update", "typo"]
    assert [c.kind for c in corrections.public_corrections(live)] == ["update"]


def test_a_first_publication_is_not_a_change(reviewer):
    summary = SummaryFactory()
    workflow.publish_summary(summary=summary, user=reviewer, change_kind="correction")
    assert summary.is_live() and not Correction.objects.exists()


def test_scheduled_changes_keep_their_kind_and_note(live, reviewer):
    edit(live)
    at = timezone.now() + datetime.timedelta(hours=1)
    copies.publish_changes(
        summary=live, user=reviewer, at=at, change_kind="correction", note="Most, not all."
    )
    assert not Correction.objects.exists()
    with time_machine.travel(at + datetime.timedelta(minutes=1)):
        assert copies.publish_due_changes() == [live.pk]
    correction = Correction.objects.get()
    assert (correction.kind, correction.note) == ("correction", "Most, not all.")
    assert correction.published_by == reviewer and correction.changes


def test_an_editor_who_may_not_publish_can_neither_publish_nor_withdraw(live, reviewer):
    editor = EditorFactory(username="eve")
    edit(live)
    with pytest.raises(PermissionDenied):
        workflow.publish_summary(summary=live, user=editor, change_kind="update")
    workflow.publish_summary(summary=live, user=reviewer, change_kind="correction", note="Fixed.")
    correction = Correction.objects.get()
    with pytest.raises(PermissionDenied):
        corrections.withdraw_correction(correction=correction, user=editor, note="Wrong.")
    correction.refresh_from_db()
    assert not correction.is_withdrawn


def test_withdrawing_is_recorded_with_its_reason_and_needs_one(live, reviewer):
    edit(live)
    workflow.publish_summary(summary=live, user=reviewer, change_kind="correction", note="Fixed.")
    correction = Correction.objects.get()
    with pytest.raises(ValidationError) as refused:
        corrections.withdraw_correction(correction=correction, user=reviewer, note="")
    assert "note" in refused.value.message_dict
    corrections.withdraw_correction(correction=correction, user=reviewer, note="It was right.")
    correction.refresh_from_db()
    assert correction.withdrawn_by == reviewer and correction.withdrawal_note == "It was right."
    assert correction.withdrawn_at is not None and correction.note == "Fixed."
    with pytest.raises(ValidationError):
        corrections.withdraw_correction(correction=correction, user=reviewer, note="Again.")


def test_a_correction_and_its_withdrawal_are_each_told_once(
    live, reviewer, endpoint, django_capture_on_commit_callbacks
):
    edit(live)
    with django_capture_on_commit_callbacks(execute=False):
        workflow.publish_summary(
            summary=live, user=reviewer, change_kind="correction", note="Most, not all."
        )
    (told,) = corrected_events()
    data = told["data"]["correction"]
    assert data["kind"] == "correction" and data["note"] == "Most, not all."
    assert data["withdrawn"] is False
    assert data["url"] == f"https://curation.example{live.get_absolute_url()}"
    correction = Correction.objects.get()
    corrections.withdraw_correction(correction=correction, user=reviewer, note="It was right.")
    first, second = corrected_events()
    assert second["data"]["correction"]["withdrawn"] is True
    assert second["data"]["correction"]["withdrawal_note"] == "It was right."
    from summaries.webhooks import events

    events.summary_corrected(live, correction)  # told already: not again
    assert len(corrected_events()) == 2


def test_an_update_is_told_with_its_kind_and_a_typo_fix_is_not_told(live, reviewer, endpoint):
    edit(live)
    workflow.publish_summary(summary=live, user=reviewer, change_kind="update", note="More.")
    edit(live, tldr="Changed again.")
    workflow.publish_summary(summary=live, user=reviewer, change_kind="typo")
    (told,) = corrected_events()
    assert told["data"]["correction"]["kind"] == "update"
    assert told["data"]["correction"]["note"] == "More."


def test_the_database_refuses_a_correction_without_a_note(live):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        Correction.objects.create(summary=live, kind="correction", published_at=timezone.now())
    assert Summary.objects.filter(pk=live.pk).exists()
