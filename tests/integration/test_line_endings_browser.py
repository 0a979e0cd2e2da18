"""In a real browser, which sends a textarea's line breaks as CRLF: saving the page of a
live summary whose chapters hold several paragraphs changes nothing it did not edit."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from summaries.editing import copies
from summaries.editing.revisions import compare_live_and_changes
from summaries.models import Chapter, Summary
from tests.factories import ChapterFactory, ReviewerFactory, SummaryFactory
from tests.integration.browser_helpers import DESKTOP, TIMEOUT_MS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

PASSWORD = "correct horse battery"  # tests.factories.UserFactory's
BODY = "First paragraph of the chapter.\n\nSecond paragraph, with more words.\n\nA third."


@pytest.fixture
def live():
    summary = SummaryFactory(live=True, tldr="Live words.\n\nIn two paragraphs.")
    ChapterFactory(summary=summary, position=1, title="Opening", start_time=0, body=BODY)
    ChapterFactory(summary=summary, position=2, title="Closing", start_time=60, body="One.")
    return summary


@pytest.fixture
def reviewer_page(live_server, page):
    user = ReviewerFactory(username="wendy")
    page.set_default_timeout(TIMEOUT_MS)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text("WENDY", ignore_case=True)
    return page


def test_a_browser_save_changes_only_what_was_edited(live_server, reviewer_page, live):
    page = reviewer_page
    url = live_server.url + reverse("admin:summaries_summary_change", args=[live.pk])
    page.goto(url)
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("Nothing changed")
    assert not Summary.objects.filter(working_copy_of=live).exists()

    page.fill("[name=tldr]", "Live words.\n\nIn two better paragraphs.")
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("changed successfully")
    copy = copies.working_copy_of(live)
    assert copy.tldr == "Live words.\n\nIn two better paragraphs."
    assert Chapter.objects.get(summary=copy, position=1).body == BODY
    comparison = compare_live_and_changes(live)
    assert [change.name for change in comparison.changed_fields] == ["tldr"]
    assert not any(kind.changed for kind in comparison.parts)
