"""History that can be trusted: every revision a summary's life produces says what happened
and restores without error, and "Publish changes" records the changes, by their editors."""

import datetime

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from summaries.editing import restore, revisions
from summaries.models import Summary

from .admin_forms import add_inline_row, form_fields
from .factories import ChapterFactory, SummaryFactory
from .test_api_working_copies import client_for, url

pytestmark = pytest.mark.django_db


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def admin_save(client, summary, **changes):
    data = form_fields(client.get(change_url(summary)))
    data.update(changes)
    response = client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return response


def test_publish_changes_in_the_admin_records_the_changes_by_their_editor(client, editor, reviewer):
    summary = SummaryFactory(tldr="First words.")
    ChapterFactory(summary=summary, title="One", body="First chapter.")
    client.force_login(reviewer)
    admin_save(client, summary, _publish="Publish")
    client.force_login(editor)
    data = form_fields(client.get(change_url(summary)))
    data["tldr"] = "Second words."
    add_inline_row(data, "chapters", title="Two", body="Second chapter.", position="")
    assert client.post(change_url(summary), data).status_code == 302
    client.force_login(reviewer)
    admin_save(client, summary, _publish="Publish changes")

    history = list(restore.history_versions(summary))
    published, edited = history[0], history[1]
    assert published.revision.get_comment() == "Published changes"
    assert published.revision.user == reviewer
    assert edited.revision.user == editor  # the editor's save is in the summary's history
    before = next(v for v in history if v.revision.get_comment() == "Published")
    comparison = revisions.compare_revisions(before, published)
    assert [f.name for f in comparison.changed_fields] == ["tldr"]
    chapters = comparison.parts[2]
    assert [p.label for p in chapters.added] == ["Chapter 2: Two"]
    assert chapters.removed == []
    # The editor's save (on the working copy) compares part by part with the live version.
    edited_chapters = revisions.compare_revisions(before, edited).parts[2]
    assert [p.label for p in edited_chapters.added] == ["Chapter 2: Two"]
    assert edited_chapters.removed == []
    assert revisions.compare_revisions(edited, published).parts[2].changed is False
    # Restoring the published revision works (no parts pointing at a deleted copy).
    restore_url = reverse("admin:summaries_summary_revision", args=[summary.pk, published.pk])
    response = client.post(restore_url)
    assert response.status_code == 302
    assert not [m for m in get_messages(response.wsgi_request) if m.level_tag == "error"]


def test_every_revision_of_a_summarys_life_restores_without_error(client, editor, reviewer):
    summary = SummaryFactory(tldr="Draft words.")
    ChapterFactory(summary=summary, title="One", body="First chapter.")
    client.force_login(editor)
    admin_save(client, summary, tldr="Edited in the admin.", _review="Send to review")
    client.force_login(reviewer)
    admin_save(client, summary, _send_back="Send back", review_note="More.")
    admin_save(client, summary, _publish="Publish")
    api = client_for(editor)
    tag = api.get(url(summary))["Edit-Version"]
    patched = api.patch(
        url(summary), {"tldr": "Through the API."}, format="json", HTTP_IF_MATCH=tag
    )
    assert patched.status_code == 200, patched.json()
    client.force_login(editor)
    admin_save(client, summary, _discard="Discard", _discard_confirmed="1")
    admin_save(client, summary, tldr="Scheduled words.")
    client.force_login(reviewer)
    later = timezone.localtime() + datetime.timedelta(days=1)
    admin_save(
        client,
        summary,
        _publish="Publish changes",
        publish_at_0=f"{later:%Y-%m-%d}",
        publish_at_1=f"{later:%H:%M:%S}",
    )
    admin_save(client, summary, _unpublish="Unpublish")

    versions = list(restore.history_versions(summary))
    comments = [v.revision.get_comment() for v in versions]
    assert "Discarded changes" in comments and "Unpublished" in comments, comments
    for version in versions:
        restore_url = reverse("admin:summaries_summary_revision", args=[summary.pk, version.pk])
        assert client.get(restore_url).status_code == 200
        response = client.post(restore_url)
        assert response.status_code == 302, version.revision.get_comment()
        errors = [str(m) for m in get_messages(response.wsgi_request) if m.level_tag == "error"]
        assert errors == [], (version.revision.get_comment(), errors)
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT  # restores never publish
