"""In a real browser: the summary page previews a chapter's Markdown while the editor types."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.factories import ChapterFactory, EditorFactory, SummaryFactory
from tests.integration.browser_helpers import TIMEOUT_MS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

PASSWORD = "correct horse battery"  # tests.factories.UserFactory's


def test_typing_in_a_chapter_body_shows_the_rendered_markdown_below_it(live_server, page):
    page.set_default_timeout(TIMEOUT_MS)
    editor = EditorFactory(username="previewer")
    summary = SummaryFactory()
    ChapterFactory(summary=summary, position=1, body="Plain text as saved.")

    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", editor.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.goto(live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk]))

    page.locator("#chapters-0 .part-toggle").click()  # chapters open on demand
    body = page.locator("textarea[name='chapters-0-body']")
    field = page.locator(".form-row", has=body)
    preview = field.locator(".markdown-live-preview")
    body.fill("")
    body.press_sequentially("Now **much faster** <script>window.hacked = 1</script>", delay=10)

    expect(preview.locator("strong")).to_have_text("much faster")
    expect(preview).not_to_contain_text("hacked")
    assert page.evaluate("window.hacked") is None
    # Nothing was saved: the preview is only what saving would show.
    assert summary.chapters.get().body == "Plain text as saved."
