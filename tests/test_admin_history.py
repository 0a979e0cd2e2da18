"""A summary's history in the admin: what each revision did, by whom, when, and a page
comparing any two revisions."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone
from reversion.models import Version

from .admin_forms import add_inline_row, form_fields
from .factories import ChapterFactory, EditorFactory, SummaryFactory, UserFactory

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def reviewer(reviewer):
    """The shared reviewer, with a full name: the history shows it beside the username."""
    reviewer.first_name, reviewer.last_name = "Rita", "Hale"
    reviewer.save()
    return reviewer


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def history_url(summary):
    return reverse("admin:summaries_summary_history", args=[summary.pk])


def compare_url(summary, older, newer):
    url = reverse("admin:summaries_summary_compare", args=[summary.pk])
    return f"{url}?from={older.pk}&to={newer.pk}"


def save_in_admin(client, summary, **changes):
    data = form_fields(client.get(change_url(summary)))
    data.update(changes)
    response = client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    return Version.objects.get_for_object(summary).first()


@pytest.fixture
def summary():
    summary = SummaryFactory(tldr="Speed matters for agents.")
    ChapterFactory(summary=summary, title="Why speed matters", body="Fast output helps.")
    return summary


def test_compare_shows_two_admin_revisions_side_by_side(reviewer_client, summary):
    older = save_in_admin(reviewer_client, summary)
    data = form_fields(reviewer_client.get(change_url(summary)))
    data["tldr"] = "Speed matters a lot for agents."
    add_inline_row(data, "chapters", title=HOSTILE, body=f"Says {HOSTILE} here.", position="2")
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    newer = Version.objects.get_for_object(summary).first()

    response = reviewer_client.get(compare_url(summary, older, newer))

    assert response.status_code == 200
    page = response.content.decode()
    assert "In 30 seconds" in page
    assert "Speed matters for agents." in page
    assert "<ins>a lot </ins>" in page  # the words added, marked
    assert "Chapter 2: &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Added" in page
    # Editor input is text on this page, never markup.
    assert HOSTILE not in page
    assert "Says &lt;script&gt;alert(1)&lt;/script&gt; here." in page
    # Both revisions are named: when (to the second) and by whom.
    saved = timezone.localtime(newer.revision.date_created)
    assert f"{saved:%Y-%m-%d %H:%M:%S}" in page
    assert "rita" in page


def test_compare_lists_parts_removed_and_moved(reviewer_client, summary):
    ChapterFactory(summary=summary, title="Second", body="More.")
    ChapterFactory(summary=summary, title="Third", body="Even more.")
    older = save_in_admin(reviewer_client, summary)
    data = form_fields(reviewer_client.get(change_url(summary)))
    data["chapters-0-DELETE"] = "on"  # "Why speed matters" goes
    data["chapters-1-position"], data["chapters-2-position"] = "3", "2"  # Third before Second
    assert reviewer_client.post(change_url(summary), data).status_code == 302
    newer = Version.objects.get_for_object(summary).first()

    page = reviewer_client.get(compare_url(summary, older, newer)).content.decode()

    assert re.search(r"Removed.*Why speed matters", page, re.S)
    assert re.search(r"Moved from 3 to 1", page)


def test_two_versions_given_newest_first_are_compared_oldest_first(reviewer_client, summary):
    older = save_in_admin(reviewer_client, summary)
    newer = save_in_admin(reviewer_client, summary, tldr="Speed matters a lot for agents.")

    page = reviewer_client.get(compare_url(summary, newer, older)).content.decode()

    assert "<ins>a lot </ins>" in page


def test_compare_refuses_versions_of_another_summary_or_unknown_ones(reviewer_client, summary):
    mine = save_in_admin(reviewer_client, summary)
    other = SummaryFactory()
    theirs = save_in_admin(reviewer_client, other)
    url = reverse("admin:summaries_summary_compare", args=[summary.pk])

    assert reviewer_client.get(compare_url(summary, mine, theirs)).status_code == 404
    assert reviewer_client.get(f"{url}?from={mine.pk}&to=999999").status_code == 404
    for nonsense in ("abc", "²", "1" * 30, "-1"):
        assert reviewer_client.get(url, {"from": mine.pk, "to": nonsense}).status_code == 404
    missing = reverse("admin:summaries_summary_compare", args=[999999])
    assert reviewer_client.get(f"{missing}?from={mine.pk}&to={mine.pk}").status_code == 404


def test_compare_without_two_revisions_goes_back_to_the_history(reviewer_client, summary):
    version = save_in_admin(reviewer_client, summary)
    url = reverse("admin:summaries_summary_compare", args=[summary.pk])

    response = reviewer_client.get(f"{url}?from={version.pk}", follow=True)

    assert response.redirect_chain[-1][0] == history_url(summary)
    assert "Choose two revisions to compare" in response.content.decode()


def test_compare_is_for_staff_who_may_view_summaries(client, summary):
    url = reverse("admin:summaries_summary_compare", args=[summary.pk]) + "?from=1&to=2"

    anonymous = client.get(url)
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith(reverse("admin:login"))

    staff = UserFactory(is_staff=True)  # staff, but no permission on summaries
    staff.save()  # with the password the factory set after creating it
    client.force_login(staff)
    assert client.get(url).status_code == 403

    staff.user_permissions.add(Permission.objects.get(codename="view_summary"))
    staff = type(staff).objects.get(pk=staff.pk)  # permissions are cached on the object
    client.force_login(staff)
    assert client.get(url).status_code == 404  # allowed in; these versions do not exist


def test_history_says_what_happened_by_whom_to_the_second(reviewer_client, summary):
    save_in_admin(reviewer_client, summary, tldr="Edited words.")
    save_in_admin(reviewer_client, summary, _review="Send to review")
    save_in_admin(reviewer_client, summary, _publish="Save and publish")
    save_in_admin(reviewer_client, summary, _unpublish="Save and unpublish")

    response = reviewer_client.get(history_url(summary))

    assert response.status_code == 200
    page = response.content.decode()
    rows = re.findall(r"<tr class=\"revision\".*?</tr>", page, re.S)
    assert len(rows) == 4
    actions = [re.search(r'<td class="action">\s*(.*?)\s*</td>', row).group(1) for row in rows]
    assert actions == ["Unpublished", "Published", "Submitted for review", "Saved"]
    assert all("rita" in row and "Rita Hale" in row for row in rows)
    for version, row in zip(Version.objects.get_for_object(summary), rows, strict=True):
        saved = timezone.localtime(version.revision.date_created)
        assert f"{saved:%Y-%m-%d %H:%M:%S}" in row
    # What the editor changed is still told beside the action.
    assert "Changed In 30 seconds." in page


def test_history_offers_two_revisions_to_compare_without_javascript(reviewer_client, summary):
    older = save_in_admin(reviewer_client, summary)
    newer = save_in_admin(reviewer_client, summary, tldr="Edited words.")

    page = reviewer_client.get(history_url(summary)).content.decode()

    form = re.search(r'<form[^>]*method="get"[^>]*>.*?</form>', page, re.S).group(0)
    action = re.search(r'action="([^"]+)"', form).group(1)
    assert action == reverse("admin:summaries_summary_compare", args=[summary.pk])
    # The two newest are chosen already: one click compares the last change.
    assert re.search(rf'name="from" value="{older.pk}"[^>]*checked', form)
    assert re.search(rf'name="to" value="{newer.pk}"[^>]*checked', form)
    assert re.search(r'<button type="submit"[^>]*>Compare', form)


def test_history_keeps_the_restore_link_of_each_revision(reviewer_client, summary):
    version = save_in_admin(reviewer_client, summary)

    page = reviewer_client.get(history_url(summary)).content.decode()

    restore = reverse("admin:summaries_summary_revision", args=[summary.pk, version.pk])
    assert f'href="{restore}"' in page


def test_a_hostile_comment_or_name_is_text_on_the_history_page(client, summary):
    hostile_editor = EditorFactory(username="mallory", first_name=HOSTILE)
    client.force_login(hostile_editor)
    save_in_admin(client, summary)

    page = client.get(history_url(summary)).content.decode()

    assert HOSTILE not in page
    assert "&lt;script&gt;" in page


def test_a_workflow_button_and_an_edit_in_one_save_keep_both_in_the_history(
    reviewer_client, summary
):
    version = save_in_admin(
        reviewer_client, summary, tldr="New words.", _publish="Save and publish"
    )

    # Two events, in the order they happened: the edit was saved, then published.
    saved, published = Version.objects.get_for_object(summary)[1], version
    assert saved.revision.get_comment() == "Changed In 30 seconds."
    assert published.revision.get_comment() == "Published"
    page = reviewer_client.get(history_url(summary)).content.decode()
    assert re.search(r'<td class="action">\s*Published\s*</td>', page)
