"""The admin edits a published summary through its working copy."""

import pytest
from django.apps import apps
from django.urls import reverse
from reversion.models import Revision, Version

from summaries.editing import restore
from summaries.models import Chapter, Summary

from .admin_forms import add_inline_row, form_fields
from .factories import ChapterFactory, EditorFactory, SummaryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Live words.")
    ChapterFactory(summary=summary, position=1, title="One", body="First.")
    ChapterFactory(summary=summary, position=2, title="Two", body="Second.")
    return summary


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def preview_url(summary):
    return reverse("summaries:summary-preview", kwargs={"slug": summary.video.slug})


def reader_page(client, summary) -> str:
    client.logout()
    try:
        return client.get(summary.get_absolute_url()).content.decode()
    finally:
        client.force_login(EditorFactory())


def edit(client, summary, **changes):
    data = form_fields(client.get(change_url(summary)))
    data.update(changes)
    return data


def test_saving_a_live_summary_keeps_the_public_page_as_it_was(reviewer_client, live):
    data = edit(reviewer_client, live, tldr="Edited words.")
    data["chapters-1-title"] = "Two, edited"
    add_inline_row(data, "chapters", title="Three", body="Third.", position="")
    response = reviewer_client.post(change_url(live), data)
    assert response.status_code == 302, response.content.decode()[:3000]

    live.refresh_from_db()
    assert live.tldr == "Live words." and live.is_live()
    assert list(live.chapters.values_list("title", flat=True)) == ["One", "Two"]
    page = reader_page(reviewer_client, live)
    assert "Live words." in page and "Edited words." not in page

    copy = Summary.objects.get(working_copy_of=live)
    assert copy.tldr == "Edited words."
    assert list(copy.chapters.values_list("title", flat=True)) == ["One", "Two, edited", "Three"]
    # The change page now edits the copy, and says so.
    form = reviewer_client.get(change_url(live)).content.decode()
    assert "Edited words." in form and "unpublished changes" in form
    # The preview shows the changes.
    preview = reviewer_client.get(preview_url(live)).content.decode()
    assert "Edited words." in preview and "Three" in preview


def test_a_second_save_edits_the_same_copy(reviewer_client, live):
    assert (
        reviewer_client.post(
            change_url(live), edit(reviewer_client, live, tldr="First edit.")
        ).status_code
        == 302
    )
    assert (
        reviewer_client.post(
            change_url(live), edit(reviewer_client, live, tldr="Second edit.")
        ).status_code
        == 302
    )
    assert Summary.objects.get(working_copy_of=live).tldr == "Second edit."
    assert Summary.objects.filter(working_copy_of__isnull=False).count() == 1


def test_publishing_the_changes_changes_the_public_page(reviewer_client, live):
    reviewer_client.post(change_url(live), edit(reviewer_client, live, tldr="Edited words."))
    data = edit(reviewer_client, live, _publish="Publish changes")
    response = reviewer_client.post(change_url(live), data, follow=True)
    assert response.status_code == 200
    live.refresh_from_db()
    assert live.tldr == "Edited words." and live.is_live()
    assert not Summary.objects.filter(working_copy_of=live).exists()
    assert "Edited words." in reader_page(reviewer_client, live)


def test_discarding_the_changes_asks_first_and_keeps_them_in_the_history(reviewer_client, live):
    reviewer_client.post(change_url(live), edit(reviewer_client, live, tldr="Edited words."))
    asked = reviewer_client.post(
        change_url(live), edit(reviewer_client, live, _discard="Discard changes")
    )
    assert asked.status_code == 200 and "Discard the unpublished changes?" in asked.content.decode()
    assert Summary.objects.filter(working_copy_of=live).exists()  # not yet

    confirm = {"_discard": "1", "_discard_confirmed": "1"}
    assert 'name="_discard_confirmed"' in asked.content.decode()
    response = reviewer_client.post(change_url(live), confirm)
    assert response.status_code == 302
    assert not Summary.objects.filter(working_copy_of=live).exists()
    assert "Live words." in reviewer_client.get(change_url(live)).content.decode()
    history = reviewer_client.get(reverse("admin:summaries_summary_history", args=[live.pk]))
    page = history.content.decode()
    assert "Discarded changes" in page and "rita" in page
    # What was dropped can be restored (as unpublished changes again).
    discarded = restore.history_versions(live).first()
    assert discarded.revision.get_comment() == "Discarded changes"
    url = reverse("admin:summaries_summary_revision", args=[live.pk, discarded.pk])
    assert reviewer_client.post(url).status_code == 302
    assert Summary.objects.get(working_copy_of=live).tldr == "Edited words."
    live.refresh_from_db()
    assert live.tldr == "Live words."


def test_preview_of_unsaved_edits_saves_nothing(reviewer_client, live):
    data = edit(reviewer_client, live, tldr="Not saved yet.", _preview="Preview")
    response = reviewer_client.post(change_url(live), data)
    assert response.status_code == 200
    assert "Not saved yet." in response.content.decode()
    assert not Summary.objects.filter(working_copy_of__isnull=False).exists()
    live.refresh_from_db()
    assert live.tldr == "Live words."
    draft = SummaryFactory(tldr="Draft words.")
    data = edit(reviewer_client, draft, tldr="Draft, unsaved.", _preview="Preview")
    response = reviewer_client.post(change_url(draft), data)
    assert "Draft, unsaved." in response.content.decode()
    draft.refresh_from_db()
    assert draft.tldr == "Draft words."


def test_drafts_are_still_edited_in_place(reviewer_client):
    draft = SummaryFactory(tldr="Draft words.")
    assert (
        reviewer_client.post(
            change_url(draft), edit(reviewer_client, draft, tldr="Edited.")
        ).status_code
        == 302
    )
    draft.refresh_from_db()
    assert draft.tldr == "Edited." and not Summary.objects.filter(working_copy_of=draft).exists()


def test_the_summary_list_shows_originals_and_their_pending_changes(reviewer_client, live):
    reviewer_client.post(change_url(live), edit(reviewer_client, live, tldr="Edited words."))
    content = reviewer_client.get(reverse("admin:summaries_summary_changelist")).content.decode()
    assert content.count(f'href="{change_url(live)}"') >= 1
    copy = Summary.objects.get(working_copy_of=live)
    assert change_url(copy) not in content
    assert "Live · changes (draft)" in content


def test_a_form_error_on_the_first_edit_keeps_the_editors_input(reviewer_client, live):
    data = edit(reviewer_client, live, tldr="Edited words.")
    data["chapters-0-body"] = ""
    response = reviewer_client.post(change_url(live), data)
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    data = form_fields(response)  # the form as shown again, ids as they now are
    data["chapters-0-body"] = "Fixed."
    assert reviewer_client.post(change_url(live), data).status_code == 302
    copy = Summary.objects.get(working_copy_of=live)
    assert copy.tldr == "Edited words."
    assert Chapter.objects.filter(summary=copy, body="Fixed.").exists()


# --- Preview writes nothing ---------------------------------------------------------------


def stored() -> dict:
    """Every row of every table of the project, django-reversion and the admin's log."""
    return {
        model._meta.label: list(model.objects.order_by("pk").values())
        for model in apps.get_models(include_auto_created=True)
        if model._meta.app_label in ("summaries", "reversion", "admin")
    }


def preview_writes_nothing(client, capture, summary, **changes) -> str:
    """Preview the summary's form with `changes` (and a chapter retitled); assert that
    nothing was stored or queued (`capture`: django_capture_on_commit_callbacks).
    Returns the preview page."""
    data = edit(client, summary, _preview="Preview", **changes)
    data["chapters-0-title"] = "Unsaved chapter title"
    before = stored()
    with capture() as callbacks:
        response = client.post(change_url(summary), data)
    assert response.status_code == 200, response.content.decode()[:3000]
    assert stored() == before
    assert callbacks == []  # no task queued, nothing to do after a commit
    page = response.content.decode()
    assert "Unsaved chapter title" in page
    return page


def test_preview_of_a_draft_records_no_revision_and_stores_nothing(
    reviewer_client, django_capture_on_commit_callbacks
):
    draft = SummaryFactory(tldr="Draft words.")
    ChapterFactory(summary=draft, position=1, title="One", body="First.")
    # An earlier save: the draft has a history the preview must not add to.
    assert reviewer_client.post(change_url(draft), edit(reviewer_client, draft)).status_code == 302

    page = preview_writes_nothing(
        reviewer_client, django_capture_on_commit_callbacks, draft, tldr="Draft, unsaved."
    )

    assert "Draft, unsaved." in page
    assert Version.objects.get_for_object(draft).count() == 1


def test_preview_of_a_published_summary_stores_no_working_copy_and_no_revision(
    reviewer_client, live, django_capture_on_commit_callbacks
):
    page = preview_writes_nothing(
        reviewer_client, django_capture_on_commit_callbacks, live, tldr="Not saved yet."
    )

    assert "Not saved yet." in page
    assert not Summary.objects.filter(working_copy_of=live).exists()
    assert not Revision.objects.exists()


def test_preview_of_unpublished_changes_leaves_the_working_copy_and_its_history_alone(
    reviewer_client, live, django_capture_on_commit_callbacks
):
    assert (
        reviewer_client.post(
            change_url(live), edit(reviewer_client, live, tldr="Saved change.")
        ).status_code
        == 302
    )
    copy = Summary.objects.get(working_copy_of=live)
    revisions = Version.objects.get_for_object(copy).count()

    page = preview_writes_nothing(
        reviewer_client, django_capture_on_commit_callbacks, live, tldr="Unsaved change."
    )

    assert "Unsaved change." in page
    copy.refresh_from_db()
    assert copy.tldr == "Saved change."
    assert Version.objects.get_for_object(copy).count() == revisions


def test_a_preview_with_errors_stores_nothing_and_its_form_can_be_saved(
    reviewer_client, live, django_capture_on_commit_callbacks
):
    data = edit(reviewer_client, live, _preview="Preview")
    data["chapters-0-body"] = ""
    before = stored()

    with django_capture_on_commit_callbacks() as callbacks:
        response = reviewer_client.post(change_url(live), data)

    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert stored() == before and callbacks == []
    # The form shown again names rows that exist: saving it works.
    data = form_fields(response)
    data["chapters-0-body"] = "Fixed."
    assert reviewer_client.post(change_url(live), data).status_code == 302
    copy = Summary.objects.get(working_copy_of=live)
    assert Chapter.objects.filter(summary=copy, body="Fixed.").exists()
