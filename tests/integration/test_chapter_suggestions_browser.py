"""In a real browser: an editor opens a summary without chapters whose video has a
transcript, sees the suggested chapters in the Receipts panel, changes a title, leaves one
out and adds the others; an empty title is shown beside its field on a page of its own.
axe-core finds nothing on the panel with its form nor on that page."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import expect

from summaries.editing import chapter_suggestions as suggesting
from summaries.models import Chapter
from tests.factories import EditorFactory, SummaryFactory
from tests.integration.browser_helpers import screenshot, sign_in
from tests.integration.test_receipts_browser import AXE_OPTIONS, axe_violations
from tests.receipts_factories import make_transcript
from tests.test_chapter_suggestions import LINES

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


@pytest.fixture
def summary():
    summary = SummaryFactory(video__duration_seconds=900, video__title="Three talks")
    make_transcript(summary.video, LINES)
    return summary


def change_url(live_server, summary) -> str:
    return live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk])


def test_an_editor_adds_the_suggested_chapters(live_server, page, summary):
    suggested = suggesting.chapter_suggestions(summary)
    assert len(suggested) >= 3
    sign_in(page, live_server, EditorFactory(username="eddie"))
    page.goto(change_url(live_server, summary))
    form = page.locator("#chapter-suggestions")
    expect(form.get_by_label("Title of chapter 1")).to_have_value(suggested[0].title)
    screenshot(page, "chapter-suggestions-panel")

    # An empty title: the page of the form says so beside it, and nothing is added.
    form.get_by_label("Title of chapter 2").fill("")
    form.get_by_role("button", name="Add these chapters").click()
    expect(page.locator(".errornote")).to_contain_text("no chapter was added")
    error = page.locator(".chapter-suggestion").nth(1).locator(".errorlist")
    expect(error).to_contain_text("Give the chapter a title")
    results = Axe().run(page, options=AXE_OPTIONS)
    assert results.violations_count == 0, results.generate_snapshot()
    screenshot(page, "chapter-suggestions-error")
    assert not Chapter.objects.filter(summary=summary).exists()

    # A title of the editor's, one chapter left out, the rest added.
    page.get_by_label("Title of chapter 2").fill("Who local AI is for")
    page.get_by_label("Keep chapter 3").uncheck()
    page.get_by_role("button", name="Add these chapters").click()
    expect(page.locator("ul.messagelist")).to_contain_text(
        f"Added {len(suggested) - 1} chapters from the transcript"
    )
    expect(page.locator("#chapter-suggestions")).to_have_count(0)
    stored = list(
        Chapter.objects.filter(summary=summary)
        .order_by("position")
        .values_list("start_time", "title")
    )
    assert stored[1] == (suggested[1].start, "Who local AI is for")
    assert suggested[2].start not in [start for start, _title in stored]
    expect(page.locator("#receipts")).to_contain_text("Who local AI is for")


def test_no_axe_violations_on_the_panel_with_suggested_chapters(live_server, browser, summary):
    editor = EditorFactory(username="eddie")
    found = axe_violations(
        browser, live_server, editor, change_url(live_server, summary), "#receipts"
    )
    assert found == {}
