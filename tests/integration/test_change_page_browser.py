"""In a real browser at 1280 px: the summary page of a long summary, with JavaScript (parts
folded to a line, move buttons, jump links, an unsaved-edits warning and a local draft, the
live preview, caveats on new rows) and without it (everything open, rows added through the
empty rows), and axe-core finds nothing on it."""

import datetime

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import expect

from summaries.editing import derived
from summaries.models import Caveat, Source, Summary
from tests.factories import (
    ChapterFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
)
from tests.integration.browser_helpers import DESKTOP, TIMEOUT_MS, no_horizontal_scroll, screenshot

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

PASSWORD = "correct horse battery"  # tests.factories.UserFactory's
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]}}
CHAPTERS = 4


@pytest.fixture
def summary():
    """A summary of four chapters citing two failing sources each, with key points,
    takeaways and a caveat."""
    summary = SummaryFactory(tldr="Speed matters alongside quality.", video__duration_seconds=3600)
    for number in range(1, CHAPTERS + 1):
        ChapterFactory(
            summary=summary,
            position=number,
            title=f"Chapter title {number}",
            start_time=number * 60,
            body=(
                f"Words of chapter {number}. [First source](https://c{number}a.example.org/p) "
                f"said it. [Second source](https://c{number}b.example.org/p) agreed."
            ),
        )
    for number in (1, 2):
        KeyPointFactory(summary=summary, position=number, title=f"Point {number}", body="Why.")
        TakeawayFactory(summary=summary, position=number, text=f"Takeaway {number}.")
    Caveat.objects.create(summary=summary, position=1, text="Measured once.")
    derived.sync_citations(summary=summary)
    Source.objects.filter(citations__summary=summary).update(
        state=Source.State.ERROR,
        error_class="dns",
        error="[Errno -2] Name or service not known",
        last_checked_at=datetime.datetime(2026, 11, 2, tzinfo=datetime.UTC),
    )
    return summary


def sign_in(page, base_url):
    user = ReviewerFactory(username="wendy")
    page.set_default_timeout(TIMEOUT_MS)
    page.set_viewport_size(DESKTOP)
    page.goto(f"{base_url}/admin/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text("WENDY", ignore_case=True)
    return user


def change_url(live_server, summary) -> str:
    return live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk])


@pytest.fixture
def editor_page(live_server, page):
    sign_in(page, live_server.url)
    return page


@pytest.fixture
def no_script_page(live_server, browser):
    context = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    page = context.new_page()
    sign_in(page, live_server.url)
    yield page
    context.close()


# --- With JavaScript ---------------------------------------------------------------------


def test_parts_fold_to_one_line_and_open_on_demand(live_server, editor_page, summary):
    page = editor_page
    page.goto(change_url(live_server, summary))
    toggles = page.locator("#chapters-group .part-toggle")
    expect(toggles).to_have_count(CHAPTERS + 1)  # and the empty row
    first = toggles.first
    expect(first).to_have_text("Chapter title 1 · 1:00 · 11 words · 2 links")
    expect(first).to_have_attribute("aria-expanded", "false")
    expect(page.locator("[name=chapters-0-body]")).to_be_hidden()
    first.focus()
    page.keyboard.press("Enter")
    expect(first).to_have_attribute("aria-expanded", "true")
    expect(page.locator("[name=chapters-0-body]")).to_be_visible()
    # Its live preview shows the saved text as readers get it, not a placeholder.
    preview = page.locator("#chapters-0 .markdown-live-preview .markdown-preview")
    expect(preview.locator("a").first).to_have_text("First source")
    page.get_by_role("button", name="Open all chapters").click()
    expect(page.locator("[name=chapters-3-body]")).to_be_visible()
    screenshot(page, "change-page-open-desktop-1280")
    page.get_by_role("button", name="Fold all chapters").click()
    expect(page.locator("[name=chapters-3-body]")).to_be_hidden()
    screenshot(page, "change-page-folded-desktop-1280")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 6000, height


def test_the_live_preview_warns_of_a_javascript_link(live_server, editor_page, summary):
    page = editor_page
    page.goto(change_url(live_server, summary))
    page.locator("#chapters-1 .part-toggle").click()
    body = page.locator("[name=chapters-1-body]")
    body.fill("")
    body.press_sequentially("[click](javascript:alert(1))", delay=5)
    problems = page.locator("#chapters-1 .markdown-live-preview-problems")
    expect(problems).to_contain_text("Saving will refuse this")
    expect(problems).to_contain_text("javascript: links cannot be cited")


def test_rows_move_with_the_keyboard_and_keep_their_order(live_server, editor_page, summary):
    page = editor_page
    page.goto(change_url(live_server, summary))
    down = page.get_by_role("button", name="Move down: Chapter “Chapter title 1”")
    down.focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")  # focus stays on the button: twice down
    up = page.get_by_role("button", name="Move up: Takeaway “Takeaway 2.”")
    up.click()
    page.click("input[name=_continue]")
    expect(page.locator("ul.messagelist")).to_contain_text("changed successfully")
    chapters = list(summary.chapters.order_by("position").values_list("title", flat=True))
    assert chapters == [
        "Chapter title 2",
        "Chapter title 3",
        "Chapter title 1",
        "Chapter title 4",
    ]
    takeaways = list(summary.takeaways.order_by("position").values_list("text", flat=True))
    assert takeaways == ["Takeaway 2.", "Takeaway 1."]


def test_a_new_row_moves_and_a_caveat_qualifies_it_by_its_title(live_server, editor_page, summary):
    page = editor_page
    page.goto(change_url(live_server, summary))
    page.locator("#chapters-group .add-row a").click()
    new = page.locator("#chapters-group .inline-related.dynamic-chapters").last
    new.locator("[name$=-title]").fill("Brand new chapter")
    new.locator("[name$=-body]").fill("Fresh words.")
    up = page.get_by_role("button", name="Move up: Chapter “Brand new chapter”")
    for _ in range(CHAPTERS + 1):  # above every saved chapter and the empty row
        up.click()
    target = page.locator("[name=caveats-1-target]")
    target.select_option(label="New chapter: Brand new chapter")
    page.fill("[name=caveats-1-text]", "Only on one machine.")
    page.click("input[name=_continue]")
    expect(page.locator("ul.messagelist")).to_contain_text("changed successfully")
    first = summary.chapters.order_by("position").first()
    assert first.title == "Brand new chapter"
    assert summary.caveats.get(text="Only on one machine.").chapter == first


def test_jump_links_lead_to_each_section(live_server, editor_page, summary):
    page = editor_page
    page.goto(change_url(live_server, summary))
    nav = page.get_by_role("navigation", name="Sections of this summary")
    for name, target in [
        ("Key points (2)", "#key_points-group"),
        ("Takeaways (2)", "#takeaways-group"),
        (f"Chapters ({CHAPTERS})", "#chapters-group"),
        ("Caveats (1)", "#caveats-group"),
        (f"Citations ({CHAPTERS * 2})", "#citations-group"),
        ("Things to check", "#things-to-check"),
    ]:
        nav.get_by_role("link", name=name).click()
        expect(page.locator(target)).to_be_in_viewport()


def test_the_citation_table_fits_1280_px_with_distinct_columns(live_server, editor_page, summary):
    page = editor_page
    page.goto(change_url(live_server, summary))
    headers = page.locator("#citations-group thead th")
    titles = [title.strip() for title in headers.all_inner_texts()]
    assert len(titles) == len(set(titles)), titles
    boxes = [header.bounding_box() for header in headers.all()]
    for left, right in zip(boxes, boxes[1:], strict=False):
        assert left["x"] + left["width"] <= right["x"] + 1, titles
    cells = page.locator("#citations-group tbody tr").first.locator("td")
    row = [cell.bounding_box() for cell in cells.all()]
    for left, right in zip(row, row[1:], strict=False):
        assert left["x"] + left["width"] <= right["x"] + 1
    assert no_horizontal_scroll(page)


def test_things_to_check_say_it_plainly_with_the_reason_behind_a_disclosure(
    live_server, editor_page, summary
):
    page = editor_page
    page.goto(change_url(live_server, summary))
    page.click("input[name=_continue]")
    messages = page.locator("ul.messagelist li")
    expect(messages.filter(has_text="see Things to check")).to_have_text(
        f"{CHAPTERS * 2} sources could not be checked — see Things to check."
    )
    section = page.locator("#things-to-check")
    expect(section).to_contain_text("The site's name could not be looked up")
    reason = section.locator("details").first
    expect(reason.locator("ul")).to_be_hidden()
    reason.locator("summary").click()
    expect(reason).to_contain_text("[Errno -2] Name or service not known")


def test_leaving_with_unsaved_edits_asks_first(live_server, editor_page, summary):
    page = editor_page
    page.goto(change_url(live_server, summary))
    page.fill("#id_tldr", "An edit not saved yet.")
    asked = []

    def dismiss(dialog):
        asked.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.locator("#user-tools a", has_text="View site").click(no_wait_after=True)
    page.wait_for_timeout(500)
    assert asked == ["beforeunload"]
    expect(page.locator("#id_tldr")).to_have_value("An edit not saved yet.")


def test_a_lost_session_offers_the_draft_back_and_a_save_drops_it(
    live_server, editor_page, summary
):
    page = editor_page
    page.goto(change_url(live_server, summary))
    page.fill("#id_tldr", "Typed before the crash.")
    page.wait_for_function(
        "() => Object.keys(localStorage).some(k => k.startsWith('curation:draft:'))"
    )
    # The tab dies: a new page of the same browser profile opens the summary again.
    second = page.context.new_page()
    second.set_default_timeout(TIMEOUT_MS)
    page.close()
    second.goto(change_url(live_server, summary))
    offer = second.get_by_role("region", name="Unsaved edits")
    expect(offer).to_contain_text("Restore your unsaved edits from")
    expect(second.locator("#id_tldr")).to_have_value("Speed matters alongside quality.")
    offer.get_by_role("button", name="Restore them").click()
    expect(second.locator("#id_tldr")).to_have_value("Typed before the crash.")
    second.click("input[name=_continue]")
    expect(second.locator("ul.messagelist")).to_contain_text("changed successfully")
    assert Summary.objects.get(pk=summary.pk).tldr == "Typed before the crash."
    expect(second.get_by_role("region", name="Unsaved edits")).to_have_count(0)
    drafts = second.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('curation:draft:'))"
    )
    assert all(not key.endswith(":1") for key in drafts)  # the saved version's is gone


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_on_the_summary_page(live_server, browser, summary, scheme):
    context = browser.new_context(bypass_csp=True, viewport=DESKTOP, color_scheme=scheme)
    page = context.new_page()
    sign_in(page, live_server.url)
    page.goto(change_url(live_server, summary))
    page.locator("#chapters-0 .part-toggle").click()
    results = Axe().run(page, options=AXE_OPTIONS)
    context.close()
    found = [(v["id"], n["target"]) for v in results.response["violations"] for n in v["nodes"]]
    assert results.violations_count == 0, found


# --- Without JavaScript ------------------------------------------------------------------


def test_without_javascript_every_part_is_open_and_parts_can_be_added(
    live_server, no_script_page, summary
):
    page = no_script_page
    page.goto(change_url(live_server, summary))
    expect(page.locator("[name=chapters-3-body]")).to_be_visible()
    expect(page.locator(".part-toggle")).to_have_count(0)
    new = {"key_points": "title", "takeaways": "text", "chapters": "title", "caveats": "text"}
    rows = {prefix: int(page.input_value(f"[name={prefix}-INITIAL_FORMS]")) for prefix in new}
    page.fill(f"[name=key_points-{rows['key_points']}-title]", "Point added without script")
    page.fill(f"[name=key_points-{rows['key_points']}-body]", "Why.")
    page.fill(f"[name=takeaways-{rows['takeaways']}-text]", "Takeaway added without script.")
    page.fill(f"[name=chapters-{rows['chapters']}-title]", "Chapter added without script")
    page.fill(f"[name=chapters-{rows['chapters']}-body]", "Its words.")
    page.fill(f"[name=caveats-{rows['caveats']}-text]", "Caveat on the new chapter.")
    page.select_option(
        f"[name=caveats-{rows['caveats']}-target]", value=f"new:chapters:{rows['chapters']}"
    )
    screenshot(page, "change-page-no-script-desktop-1280")
    page.click("input[name=_continue]")
    expect(page.locator("ul.messagelist")).to_contain_text("changed successfully")
    assert summary.key_points.filter(title="Point added without script").exists()
    assert summary.takeaways.filter(text="Takeaway added without script.").exists()
    chapter = summary.chapters.get(title="Chapter added without script")
    assert summary.caveats.get(text="Caveat on the new chapter.").chapter == chapter
    # "Save and add empty rows" gives more empty rows, still without script.
    page.click("input[name=_more_rows]")
    expect(page.locator(f"[name=chapters-{rows['chapters'] + 4}-title]")).to_be_visible()


def test_without_javascript_untouched_empty_rows_save_without_errors(
    live_server, no_script_page, summary
):
    page = no_script_page
    page.goto(change_url(live_server, summary))
    page.fill("#id_tldr", "Only the text changed.")
    page.click("input[name=_continue]")
    expect(page.locator("ul.messagelist")).to_contain_text("changed successfully")
    expect(page.locator(".errornote")).to_have_count(0)
    assert summary.chapters.count() == CHAPTERS
    assert summary.caveats.count() == 1
