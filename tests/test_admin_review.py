"""The admin's review: what the changes change, the conversation, the assigned reviewer."""

import pytest
from django.urls import reverse

from summaries.editing import copies, review, save, workflow
from summaries.models import Chapter, ReviewMessage, Summary

from .admin_forms import form_fields
from .factories import ChapterFactory, EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def changes_url(summary):
    return reverse("admin:summaries_summary_changes", args=[summary.pk])


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Speed matters for agents.")
    ChapterFactory(summary=summary, position=1, title="One", body="The first chapter.")
    ChapterFactory(summary=summary, position=2, title="Two", body="The second chapter.")
    return summary


def change(live, editor):
    copy, _ids, _made = copies.edit_target(summary=live, user=editor)
    copy.tldr = "Speed matters a lot for agents."
    one, two = Chapter.objects.filter(summary=copy).order_by("position")
    one.body = "The opening chapter."
    save.save_summary(summary=copy, parts={Chapter: [two, one]}, user=editor)
    workflow.submit_for_review(summary=live, user=editor, message="Reordered <b>them</b>.")
    return copy


def test_a_reviewer_sees_what_the_changes_change_against_the_live_summary(client, live):
    change(live, EditorFactory())
    client.force_login(ReviewerFactory())
    page = client.get(change_url(live)).content.decode()
    assert f'href="{changes_url(live)}"' in page  # near the Publish button

    response = client.get(changes_url(live))

    assert response.status_code == 200
    html = response.content.decode()
    assert "<ins>a lot </ins>" in html
    assert "<del>first</del>" in html and "<ins>opening</ins>" in html
    assert "Moved from 2 to 1" in html
    assert "Live (what readers see)" in html


def test_the_changes_page_of_a_summary_without_changes_goes_back_to_its_page(client, live):
    client.force_login(ReviewerFactory())
    response = client.get(changes_url(live))
    assert response.status_code == 302 and response["Location"] == change_url(live)


def test_the_dashboard_links_changes_awaiting_review_to_what_changed(client, live):
    change(live, EditorFactory())
    client.force_login(ReviewerFactory())
    page = client.get(reverse("admin:index")).content.decode()
    assert f'href="{changes_url(live)}"' in page


def test_the_conversation_is_shown_on_the_summary_in_order_and_escaped(client, live):
    editor, reviewer = EditorFactory(username="ed"), ReviewerFactory(username="rita")
    change(live, editor)
    workflow.send_back(summary=live, user=reviewer, note="Why <script>x</script>?")
    client.force_login(editor)
    html = client.get(change_url(live)).content.decode()
    first = html.index("Reordered &lt;b&gt;them&lt;/b&gt;.")
    second = html.rindex("Why &lt;script&gt;x&lt;/script&gt;?")
    assert first < second
    assert "<script>x" not in html


def test_an_editor_replies_from_the_summary_page(client, live):
    editor = EditorFactory(username="ed")
    change(live, editor)
    client.force_login(editor)
    data = form_fields(client.get(change_url(live)))
    data["review_reply"] = "Done, see chapter one."
    response = client.post(reverse("admin:summaries_summary_reply", args=[live.pk]), data)
    assert response.status_code == 302 and response["Location"] == change_url(live)
    assert review.thread(live).last().text == "Done, see chapter one."
    assert review.thread(live).last().kind == ReviewMessage.Kind.REPLY


def test_an_empty_reply_is_refused_with_a_message(client, live):
    editor = EditorFactory()
    client.force_login(editor)
    response = client.post(
        reverse("admin:summaries_summary_reply", args=[live.pk]), {"review_reply": " "}, follow=True
    )
    assert "Write a message." in response.content.decode()
    assert not ReviewMessage.objects.exists()


def test_sending_to_review_with_a_message_keeps_it(client):
    editor = EditorFactory()
    summary = SummaryFactory(created_by=editor)
    client.force_login(editor)
    data = form_fields(client.get(change_url(summary)))
    data.update(_review="go", review_message="Please check the numbers.")
    client.post(change_url(summary), data)
    summary.refresh_from_db()
    assert summary.status == Summary.Status.IN_REVIEW
    assert [m.text for m in review.thread(summary)] == ["Please check the numbers."]


def test_a_reviewer_is_assigned_from_the_summary_page(client):
    editor, reviewer = EditorFactory(), ReviewerFactory(username="rita")
    summary = SummaryFactory()
    client.force_login(editor)
    page = client.get(change_url(summary)).content.decode()
    assert f'<option value="{reviewer.pk}">rita</option>' in page
    response = client.post(
        reverse("admin:summaries_summary_assign", args=[summary.pk]),
        {"assigned_to": str(reviewer.pk)},
    )
    assert response.status_code == 302
    summary.refresh_from_db()
    assert summary.assigned_to == reviewer
    # Someone who may not publish cannot be picked.
    client.post(
        reverse("admin:summaries_summary_assign", args=[summary.pk]),
        {"assigned_to": str(editor.pk)},
    )
    summary.refresh_from_db()
    assert summary.assigned_to == reviewer


def test_a_reviewer_takes_summaries_from_the_list(client):
    reviewer = ReviewerFactory()
    summaries = [SummaryFactory(), SummaryFactory()]
    client.force_login(reviewer)
    client.post(
        reverse("admin:summaries_summary_changelist"),
        {"action": "assign_to_me", "_selected_action": [s.pk for s in summaries]},
    )
    assert {s.assigned_to for s in Summary.objects.all()} == {reviewer}
