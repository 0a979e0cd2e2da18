"""In a real browser: an editor picks two revisions on a summary's history and compares them."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from summaries.editing.save import save_summary
from summaries.models import Chapter
from tests.factories import ChapterFactory, EditorFactory, SummaryFactory
from tests.integration.browser_helpers import ARTIFACTS, TIMEOUT_MS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

PASSWORD = "correct horse battery"  # tests.factories.UserFactory's


def test_an_editor_compares_the_first_and_the_last_revision(live_server, page):
    page.set_default_timeout(TIMEOUT_MS)
    editor = EditorFactory(username="historian")
    summary = SummaryFactory(tldr="Speed matters for agents.")
    chapter = ChapterFactory(summary=summary, position=1, title="Why speed matters")
    save_summary(summary=summary, parts={}, user=editor)  # the first revision
    summary.tldr = "Speed matters a lot for agents."
    save_summary(summary=summary, parts={}, user=editor)
    added = Chapter(title="<script>window.hacked = 1</script>", body="New.")
    save_summary(summary=summary, parts={Chapter: [chapter, added]}, user=editor)

    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", editor.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.goto(live_server.url + reverse("admin:summaries_summary_history", args=[summary.pk]))

    rows = page.locator("tr.revision")
    expect(rows).to_have_count(3)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "admin-revision-history.png", full_page=True)
    # Newest first: compare the oldest revision with the newest.
    rows.nth(2).locator("input[name=from]").check()
    rows.nth(0).locator("input[name=to]").check()
    page.get_by_role("button", name="Compare selected revisions").click()

    expect(page.locator("h1")).to_contain_text("Compare revisions")
    expect(page.locator("ins").first).to_have_text("a lot ")
    expect(page.locator(".badge.added")).to_have_count(1)
    expect(page.locator("tr.part")).to_contain_text("<script>window.hacked = 1</script>")
    assert page.evaluate("window.hacked") is None
    page.screenshot(path=ARTIFACTS / "admin-compare-revisions.png", full_page=True)
