"""Corrections in the admin: the kind asked when publishing changes, read-only records,
withdrawal with a reason, and no road that deletes one."""

import pytest
from django.urls import reverse

from summaries.editing import copies, save, workflow
from summaries.models import Correction, Summary

from .admin_forms import form_fields
from .factories import EditorFactory, SummaryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def live():
    return SummaryFactory(live=True, tldr="Live words.")


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def edit(client, summary, **changes):
    data = form_fields(client.get(change_url(summary)))
    data.update(changes)
    return data


def correction_of(live, *, note="Wrong before.") -> Correction:
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    copy.tldr = "Edited words."
    save.save_summary(summary=copy, parts={}, user=None)
    workflow.publish_summary(summary=live, user=None, change_kind="correction", note=note)
    return Correction.objects.get()


def test_publishing_changes_asks_their_kind_and_records_a_correction(
    reviewer_client, reviewer, live
):
    reviewer_client.post(change_url(live), edit(reviewer_client, live, tldr="Edited words."))
    form = reviewer_client.get(change_url(live)).content.decode()
    assert 'name="change_kind" value="update" checked' in form
    data = edit(
        reviewer_client,
        live,
        _publish="Publish",
        change_kind="correction",
        change_note="It said X; it is Y.",
    )
    response = reviewer_client.post(change_url(live), data)
    assert response.status_code == 302
    live.refresh_from_db()
    assert live.tldr == "Edited words."
    correction = Correction.objects.get()
    assert (correction.kind, correction.note) == ("correction", "It said X; it is Y.")
    assert correction.published_by == reviewer


def test_a_correction_without_a_note_is_a_form_error_and_nothing_is_published(
    reviewer_client, live
):
    data = edit(
        reviewer_client, live, tldr="Edited words.", _publish="Publish", change_kind="correction"
    )
    response = reviewer_client.post(change_url(live), data)
    assert response.status_code == 200
    assert "A correction needs a public note" in response.content.decode()
    live.refresh_from_db()
    assert live.tldr == "Live words." and not Correction.objects.exists()
    assert not Summary.objects.filter(working_copy_of=live).exists()


def test_a_first_publication_asks_no_kind(reviewer_client):
    draft = SummaryFactory(tldr="Draft words.")
    assert 'name="change_kind"' not in reviewer_client.get(change_url(draft)).content.decode()
    response = reviewer_client.post(
        change_url(draft), edit(reviewer_client, draft, _publish="Publish")
    )
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.is_live() and not Correction.objects.exists()


def test_corrections_are_listed_and_shown_read_only(reviewer_client, live):
    correction = correction_of(live)
    listing = reviewer_client.get(reverse("admin:summaries_correction_changelist"))
    assert listing.status_code == 200 and "Wrong before." in listing.content.decode()
    SummaryFactory(live=True).corrections.create(
        kind="update", note="Elsewhere.", published_at=correction.published_at
    )
    own = f"?summary__id__exact={live.pk}"
    assert own in listing.content.decode()
    per_summary = reviewer_client.get(reverse("admin:summaries_correction_changelist") + own)
    assert per_summary.status_code == 200
    assert "Wrong before." in per_summary.content.decode()
    assert "Elsewhere." not in per_summary.content.decode()
    page = reviewer_client.get(reverse("admin:summaries_correction_change", args=[correction.pk]))
    content = page.content.decode()
    assert page.status_code == 200 and "<del>Live</del>" in content and "Withdraw…" in content
    assert 'name="note"' not in content  # read-only
    assert reviewer_client.get(reverse("admin:summaries_correction_add")).status_code == 403


def test_no_admin_road_deletes_a_correction(reviewer_client, live):
    correction = correction_of(live)
    delete = reverse("admin:summaries_correction_delete", args=[correction.pk])
    assert reviewer_client.get(delete).status_code == 403
    assert reviewer_client.post(delete, {"post": "yes"}).status_code == 403
    listing = reverse("admin:summaries_correction_changelist")
    bulk = {"action": "delete_selected", "_selected_action": [correction.pk], "post": "yes"}
    reviewer_client.post(listing, bulk)
    assert "delete_selected" not in reviewer_client.get(listing).content.decode()
    assert Correction.objects.filter(pk=correction.pk).exists()


@pytest.mark.parametrize("road", ["delete page", "bulk delete"])
def test_a_summary_with_corrections_cannot_be_deleted_with_them(admin_client, live, road):
    """Deleting the summary would take its corrections from /corrections/ and the feeds
    without a trace: refused on every road (unpublishing stays open)."""
    correction_of(live)
    if road == "delete page":
        url = reverse("admin:summaries_summary_delete", args=[live.pk])
        page = admin_client.post(url, {"post": "yes"})
    else:
        url = reverse("admin:summaries_summary_changelist")
        bulk = {"action": "delete_selected", "_selected_action": [live.pk], "post": "yes"}
        page = admin_client.post(url, bulk)
    assert page.status_code in (200, 403)
    assert Summary.objects.filter(pk=live.pk).exists()
    assert Correction.objects.filter(summary=live).count() == 1


def test_the_database_keeps_corrections_from_being_deleted_with_their_summary(live):
    from django.db.models import ProtectedError

    correction_of(live)
    with pytest.raises(ProtectedError):
        live.delete()


def test_not_even_a_superuser_adds_changes_or_deletes_a_correction(admin_client, live):
    correction = correction_of(live)
    change = reverse("admin:summaries_correction_change", args=[correction.pk])
    delete = reverse("admin:summaries_correction_delete", args=[correction.pk])
    assert admin_client.get(reverse("admin:summaries_correction_add")).status_code == 403
    assert admin_client.post(change, {"note": "Rewritten."}).status_code == 403
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    correction.refresh_from_db()
    assert correction.note == "Wrong before."
    index = admin_client.get(reverse("admin:index")).content.decode()
    assert reverse("admin:summaries_correction_changelist") in index
    assert reverse("admin:summaries_correction_add") not in index


def test_withdrawing_asks_a_reason_and_records_it(reviewer_client, reviewer, live):
    correction = correction_of(live)
    url = reverse("admin:summaries_correction_withdraw", args=[correction.pk])
    asked = reviewer_client.get(url)
    assert asked.status_code == 200 and "Withdraw this correction?" in asked.content.decode()
    refused = reviewer_client.post(url, {"reason": ""})
    assert refused.status_code == 200
    correction.refresh_from_db()
    assert not correction.is_withdrawn
    assert reviewer_client.post(url, {"reason": "It was right."}).status_code == 302
    correction.refresh_from_db()
    assert correction.withdrawal_note == "It was right." and correction.withdrawn_by == reviewer


def test_an_editor_who_may_not_publish_cannot_withdraw(client, live):
    correction = correction_of(live)
    client.force_login(EditorFactory(username="eve"))
    page = client.get(reverse("admin:summaries_correction_change", args=[correction.pk]))
    assert page.status_code == 200 and "Withdraw…" not in page.content.decode()
    url = reverse("admin:summaries_correction_withdraw", args=[correction.pk])
    client.post(url, {"reason": "Not mine to say."})
    correction.refresh_from_db()
    assert not correction.is_withdrawn


@pytest.mark.parametrize("action", ["publish_now", "schedule"])
def test_the_list_s_publish_actions_never_publish_changes_without_their_kind(
    reviewer_client, live, action
):
    """The list's actions cannot ask what kind changes are, so they leave them waiting and
    say where to publish them; a first publication in the same selection goes ahead."""
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    copy.tldr = "Edited words."
    save.save_summary(summary=copy, parts={}, user=None)
    draft = SummaryFactory()
    data = {"action": action, "_selected_action": [live.pk, draft.pk]}
    if action == "schedule":
        data.update(apply="1", publish_at="2030-01-01T10:00")
    response = reviewer_client.post(
        reverse("admin:summaries_summary_changelist"), data, follow=True
    )

    page = response.content.decode()
    assert "where you say what kind of change they are" in page
    assert Correction.objects.count() == 0
    live.refresh_from_db()
    assert live.tldr == "Live words."
    assert copies.working_copy_of(live) is not None  # still waiting
    draft.refresh_from_db()
    assert draft.status == Summary.Status.PUBLISHED
