"""Who may only view a summary reads its parts as editors write them; reviewers edit them."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from summaries.models import Chapter

from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    KeyPointFactory,
    SummaryFactory,
    UserFactory,
    reviewers_group,
)

pytestmark = pytest.mark.django_db


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


@pytest.fixture
def summary():
    summary = SummaryFactory()
    ChapterFactory(summary=summary, position=1, title="One", body="The *first*.", start_time=65)
    KeyPointFactory(summary=summary, position=1, title="Fast", time=125)
    return summary


def test_a_reviewer_who_is_not_an_editor_can_fix_a_chapter(client, summary):
    reviewer = UserFactory(is_staff=True)
    reviewer.groups.add(reviewers_group())
    reviewer.save()  # with the password the factory set
    client.force_login(reviewer)
    data = form_fields(client.get(change_url(summary)))
    assert "chapters-0-body" in data  # an editable row, not a read-only one
    data["chapters-0-body"] = "The *first*, fixed."
    response = client.post(change_url(summary), data)
    assert response.status_code == 302
    assert Chapter.objects.get(summary=summary).body == "The *first*, fixed."


def test_a_read_only_view_shows_times_as_clock_times_and_the_markdown_source(client, summary):
    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="summaries", codename__startswith="view_"
        )
    )
    viewer.save()
    client.force_login(viewer)
    html = client.get(change_url(summary)).content.decode()
    assert "1:05" in html and "2:05" in html
    assert ">65<" not in html and ">125<" not in html
    assert "The *first*." in html
