"""In a real browser: the editor's workflow, step by step (JavaScript on).

Several new chapters in one save; a live summary edited, previewed and published while an
anonymous reader keeps seeing the published text; a summary sent back with a note; and a
revision restored without changing whether the summary is published. (Comparing revisions
and the live Markdown preview have browser tests of their own.)
"""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from summaries.models import Caveat, Summary
from tests.factories import ChapterFactory, ReviewerFactory, SummaryFactory, TakeawayFactory
from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, sign_in

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


@pytest.fixture
def editor(live_server, page):
    """A signed-in editor who also reviews, in the test's browser page."""
    user = ReviewerFactory(username="wendy")
    sign_in(page, live_server, user)
    return user


def change_url(live_server, summary) -> str:
    return live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk])


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}-desktop-1280.png", full_page=True)


def test_several_new_chapters_are_saved_in_one_go(live_server, page, editor):
    summary = SummaryFactory(tldr="A draft with no chapters yet.")
    page.goto(change_url(live_server, summary))
    add = page.locator("#chapters-group .add-row a")
    add.click()
    add.click()
    page.fill("[name=chapters-0-title]", "First new chapter")
    page.fill("[name=chapters-0-body]", "Speed **matters**.")
    page.fill("[name=chapters-1-title]", "Second new chapter")
    page.fill("[name=chapters-1-body]", "Quality too.")
    page.click("input[name=_continue]")
    expect(page.locator("ul.messagelist")).to_contain_text("changed successfully")
    chapters = list(summary.chapters.order_by("position").values_list("title", "position"))
    assert chapters == [("First new chapter", 1), ("Second new chapter", 2)]


def test_a_live_summary_is_edited_previewed_and_published(live_server, page, reader, editor):
    live = SummaryFactory(live=True, tldr="Published words.")
    ChapterFactory(summary=live, position=1, title="Only chapter", body="Text.")
    public = live_server.url + live.get_absolute_url()

    page.goto(change_url(live_server, live))
    page.fill("#id_tldr", "Edited words, not yet public.")
    page.click("input[name=_continue]")
    expect(page.locator(".working-copy-banner")).to_contain_text("unpublished changes")

    reader.goto(public)
    expect(reader.locator("body")).to_contain_text("Published words.")
    expect(reader.locator("body")).not_to_contain_text("Edited words")

    page.goto(live_server.url + reverse("summaries:summary-preview", args=[live.video.slug]))
    expect(page.locator("body")).to_contain_text("Edited words, not yet public.")
    expect(page.locator(".preview-banner")).to_contain_text("unpublished changes")
    screenshot(page, "editor-preview-of-changes")

    page.goto(change_url(live_server, live))
    page.click("input[name=_publish]")
    expect(page.locator("ul.messagelist")).to_contain_text("Published")
    reader.reload()
    expect(reader.locator("body")).to_contain_text("Edited words, not yet public.")
    assert not Summary.objects.filter(working_copy_of=live).exists()


def test_a_reviewer_sends_a_summary_back_with_a_note(live_server, page, editor):
    summary = SummaryFactory(status=Summary.Status.IN_REVIEW, tldr="Needs work.")
    page.goto(change_url(live_server, summary))
    page.fill("#id_review_note", "Name who measured the 2.5× figure.")
    page.click("input[name=_send_back]")
    expect(page.locator("ul.messagelist")).to_contain_text("Sent back")
    page.goto(change_url(live_server, summary))
    expect(page.locator(".review-note")).to_contain_text("Name who measured the 2.5× figure.")
    summary.refresh_from_db()
    assert summary.status == Summary.Status.DRAFT


def test_a_revision_of_a_live_summary_is_restored_as_unpublished_changes(
    live_server, page, reader, editor
):
    summary = SummaryFactory(tldr="The first words.")
    page.goto(change_url(live_server, summary))
    page.click("input[name=_publish]")  # saves the first words, then publishes them
    expect(page.locator("ul.messagelist")).to_contain_text("Published")
    page.goto(change_url(live_server, summary))
    page.fill("#id_tldr", "The second words.")
    page.click("input[name=_publish]")  # unpublished changes, published at once
    expect(page.locator("ul.messagelist")).to_contain_text("Published")
    public = live_server.url + summary.get_absolute_url()
    reader.goto(public)
    expect(reader.locator("body")).to_contain_text("The second words.")

    history = reverse("admin:summaries_summary_history", args=[summary.pk])
    page.goto(live_server.url + history)
    page.locator("#change-history a[href*='/history/']").last.click()  # the oldest revision
    expect(page.locator("#content")).to_contain_text("unpublished changes")
    page.click("input[value='Restore this version']")
    expect(page.locator("ul.messagelist")).to_contain_text("as unpublished changes")
    expect(page.locator("#id_tldr")).to_have_value("The first words.")

    summary.refresh_from_db()
    assert summary.is_live() and summary.tldr == "The second words."
    reader.reload()
    expect(reader.locator("body")).to_contain_text("The second words.")  # not yet reviewed

    page.click("input[name=_publish]")
    expect(page.locator("ul.messagelist")).to_contain_text("Published")
    reader.reload()
    expect(reader.locator("body")).to_contain_text("The first words.")


def test_the_admin_fits_1280_pixels(live_server, page, editor):
    """The summary list shows state, publish time and failing sources, and the summary page
    with a caveat on a long takeaway, without a horizontal scroll bar."""
    summary = SummaryFactory(
        live=True, video__title="A rather long title of a video about agents " * 2
    )
    TakeawayFactory(summary=summary, position=1, text="A very long takeaway " * 30)
    chapter = ChapterFactory(summary=summary, position=1, title="Chapter", body="Text.")
    Caveat.objects.create(summary=summary, chapter=chapter, position=1, text="A note.")
    for url in (
        live_server.url + reverse("admin:summaries_summary_changelist"),
        change_url(live_server, summary),
    ):
        page.goto(url)
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{url} is {overflow}px wider than the window"
    page.goto(live_server.url + reverse("admin:summaries_summary_changelist"))
    for column in ("State", "Publish time", "Sources"):
        header = page.locator("#result_list thead th", has_text=column)
        expect(header).to_be_visible()
        box = header.bounding_box()
        assert box["x"] + box["width"] <= DESKTOP["width"], f"{column} is cut off"
    hidden = page.evaluate(
        "(() => { const r = document.querySelector('#changelist .results');"
        " return r.scrollWidth - r.clientWidth; })()"
    )
    assert hidden <= 0, f"the list scrolls sideways by {hidden}px"
    screenshot(page, "admin-summary-list")
