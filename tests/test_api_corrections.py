"""Updates and corrections in the API: publishing with a kind and note, reading them,
withdrawing one, and no way to delete one."""

import datetime

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from summaries.editing import copies
from summaries.models import Correction

from .factories import ChapterFactory, SummaryFactory
from .test_api_working_copies import url

pytestmark = pytest.mark.django_db


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Live words.")
    ChapterFactory(summary=summary, position=1, title="One", body="First.")
    return summary


def change(client, live, tldr="Changed words."):
    tag = client.get(url(live))["ETag"]
    changed = client.patch(url(live), {"tldr": tldr}, format="json", HTTP_IF_MATCH=tag)
    assert changed.status_code == 200, changed.json()
    return changed["ETag"]


def publish(client, live, tag, **body):
    return client.post(url(live, "publish"), body, format="json", HTTP_IF_MATCH=tag)


def test_publishing_changes_as_a_correction_with_a_note(reviewer_api, live):
    response = publish(
        reviewer_api, live, change(reviewer_api, live), change_kind="correction", note="Was X."
    )
    assert response.status_code == 200, response.json()
    correction = Correction.objects.get()
    assert (correction.kind, correction.note) == ("correction", "Was X.")


def test_a_correction_without_a_note_is_a_400_naming_note_and_publishes_nothing(reviewer_api, live):
    response = publish(reviewer_api, live, change(reviewer_api, live), change_kind="correction")
    assert response.status_code == 400
    assert "note" in response.json()["error"]["fields"]
    assert APIClient().get(url(live)).json()["tldr"] == "Live words."
    assert not Correction.objects.exists()


def test_an_unknown_kind_is_a_400_naming_change_kind(reviewer_api, live):
    response = publish(reviewer_api, live, change(reviewer_api, live), change_kind="retraction")
    assert response.status_code == 400
    assert "change_kind" in response.json()["error"]["fields"]
    assert not Correction.objects.exists()


def test_an_editor_who_may_not_publish_is_refused(editor_api, live):
    response = publish(editor_api, live, change(editor_api, live), change_kind="update")
    assert response.status_code == 403
    assert not Correction.objects.exists()


def test_anyone_reads_updates_and_corrections_and_staff_also_typo_fixes(
    reviewer_api, editor_api, live
):
    publish(reviewer_api, live, change(reviewer_api, live), change_kind="correction", note="Was X.")
    publish(reviewer_api, live, change(reviewer_api, live, "Typo fixed."), change_kind="typo")
    anonymous = APIClient().get(url(live, "corrections"))
    assert anonymous.status_code == 200
    (shown,) = anonymous.json()
    assert shown["kind"] == "correction" and shown["note"] == "Was X."
    assert shown["withdrawn"] is False and shown["url"].endswith(f"#correction-{shown['id']}")
    assert shown["changes"][0]["label"] == "In 30 seconds"
    assert ["Live", True] in shown["changes"][0]["old"]
    kinds = [item["kind"] for item in editor_api.get(url(live, "corrections")).json()]
    assert kinds == ["typo", "correction"]


def test_the_detail_embeds_them_with_expand_corrections(reviewer_api, live):
    publish(reviewer_api, live, change(reviewer_api, live), change_kind="update", note="More.")
    plain = APIClient().get(url(live)).json()
    assert "corrections" not in plain
    expanded = APIClient().get(url(live) + "?expand=corrections").json()
    assert [item["note"] for item in expanded["corrections"]] == ["More."]


def test_a_draft_has_no_public_corrections(reviewer_api):
    draft = SummaryFactory()
    assert APIClient().get(url(draft, "corrections")).status_code == 404


def test_withdrawing_needs_a_note_and_the_publish_permission(reviewer_api, editor_api, live):
    publish(reviewer_api, live, change(reviewer_api, live), change_kind="correction", note="Was X.")
    correction = Correction.objects.get()
    withdraw = url(live, f"corrections/{correction.pk}/withdraw")
    assert editor_api.post(withdraw, {"note": "No."}, format="json").status_code == 403
    assert APIClient().post(withdraw, {"note": "No."}, format="json").status_code in (401, 403)
    empty = reviewer_api.post(withdraw, {"note": ""}, format="json")
    assert empty.status_code == 400 and "note" in empty.json()["error"]["fields"]
    done = reviewer_api.post(withdraw, {"note": "It was right."}, format="json")
    assert done.status_code == 200, done.json()
    assert done.json()["withdrawn"] is True and done.json()["withdrawal_note"] == "It was right."
    again = reviewer_api.post(withdraw, {"note": "Again."}, format="json")
    assert again.status_code == 400
    missing = url(live, f"corrections/{correction.pk + 100}/withdraw")
    assert reviewer_api.post(missing, {"note": "No."}, format="json").status_code == 404


def test_there_is_no_way_to_delete_one(reviewer_api, live):
    publish(reviewer_api, live, change(reviewer_api, live), change_kind="correction", note="Was X.")
    correction = Correction.objects.get()
    for path in (url(live, "corrections"), url(live, f"corrections/{correction.pk}/withdraw")):
        assert reviewer_api.delete(path).status_code in (404, 405)
    assert Correction.objects.filter(pk=correction.pk).exists()


def test_changes_scheduled_through_the_api_go_live_as_the_kind_given(reviewer_api, live):
    at = timezone.now() + datetime.timedelta(hours=1)
    tag = change(reviewer_api, live)
    response = publish(
        reviewer_api, live, tag, publish_at=at.isoformat(), change_kind="correction", note="Was X."
    )
    assert response.status_code == 200, response.json()
    assert not Correction.objects.exists()
    with time_machine.travel(at + datetime.timedelta(minutes=1)):
        assert copies.publish_due_changes() == [live.pk]
    correction = Correction.objects.get()
    assert (correction.kind, correction.note) == ("correction", "Was X.")
