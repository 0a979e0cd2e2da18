"""The working-copy page: its links, buttons and messages say the right thing once."""

import re

import pytest
from django.urls import reverse

from summaries.editing import copies
from summaries.models import Summary

from .admin_forms import form_fields
from .factories import ChapterFactory, EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def preview_url(summary):
    return reverse("summaries:summary-preview", kwargs={"slug": summary.video.slug})


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Live words.")
    ChapterFactory(summary=summary, position=1, title="One", body="First.")
    ChapterFactory(summary=summary, position=2, title="Two", body="Second.")
    return summary


@pytest.fixture
def with_changes(live):
    copies.edit_target(summary=live, user=None)
    Summary.objects.filter(working_copy_of=live).update(tldr="Changed words.")
    return live


def href_of(html: str, text: str) -> str:
    found = re.search(r'<a href="([^"]*)"[^>]*>\s*' + re.escape(text), html)
    assert found, text
    return found.group(1).replace("&amp;", "&")


def test_the_history_button_of_the_changes_opens_the_summarys_history(client, with_changes):
    client.force_login(EditorFactory())
    page = client.get(change_url(with_changes)).content.decode()
    response = client.get(href_of(page, "History"), follow=True)
    assert response.status_code == 200
    assert response.request["PATH_INFO"] == reverse(
        "admin:summaries_summary_history", args=[with_changes.pk]
    )


def test_the_preview_link_is_shown_on_the_changes(client, with_changes):
    client.force_login(EditorFactory())
    page = client.get(change_url(with_changes)).content.decode()
    assert f'href="{preview_url(with_changes)}"' in page


def test_view_on_site_of_a_draft_opens_its_preview(client):
    draft = SummaryFactory()
    client.force_login(EditorFactory())
    page = client.get(change_url(draft)).content.decode()
    assert href_of(page, "View on site") == preview_url(draft)
    assert client.get(preview_url(draft)).status_code == 200


def test_view_on_site_of_a_live_summary_opens_its_reader_page(client, live):
    client.force_login(EditorFactory())
    page = client.get(change_url(live)).content.decode()
    assert href_of(page, "View on site") == live.get_absolute_url()


def test_view_on_site_of_the_changes_opens_their_preview(client, with_changes):
    client.force_login(EditorFactory())
    page = client.get(change_url(with_changes)).content.decode()
    assert href_of(page, "View on site") == preview_url(with_changes)


def test_save_and_add_another_is_not_offered_on_the_changes(client, with_changes):
    client.force_login(EditorFactory())
    assert 'name="_addanother"' in client.get(change_url(SummaryFactory())).content.decode()
    assert 'name="_addanother"' not in client.get(change_url(with_changes)).content.decode()


def test_the_state_of_the_changes_is_said_once(client, with_changes):
    Summary.objects.filter(working_copy_of=with_changes).update(status=Summary.Status.IN_REVIEW)
    client.force_login(ReviewerFactory())
    page = client.get(change_url(with_changes)).content.decode()
    state = re.search(r"<label>State:</label>\s*<div class=\"readonly\">(.*?)</div>", page)
    assert state.group(1).lower().count("unpublished changes") == 1, state.group(1)
    assert len(re.findall(r"waiting for review|in review", page, re.IGNORECASE)) == 1


def test_a_second_editor_saving_the_same_changes_gets_the_conflict_message_only(client, live):
    first, second = EditorFactory(username="ann"), EditorFactory(username="bob")
    client.force_login(first)
    ann_form = form_fields(client.get(change_url(live)))
    client.force_login(second)
    bob_form = form_fields(client.get(change_url(live)))
    client.force_login(first)
    ann_form.update({"tldr": "Ann's words.", "chapters-0-body": "Ann's first."})
    assert client.post(change_url(live), ann_form).status_code == 302
    client.force_login(second)
    bob_form.update({"tldr": "Bob's words.", "chapters-1-body": "Bob's second."})

    response = client.post(change_url(live), bob_form)

    html = response.content.decode()
    assert response.status_code == 200
    assert "ann saved this summary" in html
    assert "Select a valid choice" not in html
    assert Summary.objects.get(working_copy_of=live).tldr == "Ann's words."


@pytest.mark.parametrize("first_button", ["_discard", "_publish"])
def test_saving_changes_that_were_published_or_discarded_meanwhile_is_a_conflict(
    client, with_changes, first_button
):
    reviewer, other = ReviewerFactory(username="rita"), EditorFactory(username="bob")
    client.force_login(other)
    bob_form = form_fields(client.get(change_url(with_changes)))
    client.force_login(reviewer)
    rita_form = form_fields(client.get(change_url(with_changes)))
    rita_form.update({first_button: "go", "_discard_confirmed": "1"})
    assert client.post(change_url(with_changes), rita_form).status_code == 302
    client.force_login(other)
    bob_form.update({"tldr": "Bob's words.", "chapters-1-body": "Bob's second."})

    response = client.post(change_url(with_changes), bob_form)

    html = response.content.decode()
    assert response.status_code == 200
    assert "were NOT saved" in html
    assert "Select a valid choice" not in html
    assert not Summary.objects.filter(working_copy_of=with_changes).exists()
