"""In a real browser: search by keyboard at 1280 px and by taps at 360 px without JavaScript —
highlighted snippets, a filter, page 2, "did you mean" — and axe-core (best-practice rules
included) finds nothing on the search page's states, at both widths, light and dark."""

import datetime

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from playwright.sync_api import expect

from summaries.editing import derived
from summaries.models import Channel
from summaries.pagecache.generation import content_changed
from tests.factories import (
    AppearanceFactory,
    ChannelFactory,
    ChapterFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
)
from tests.integration.browser_helpers import (
    DESKTOP,
    PHONE,
    no_horizontal_scroll,
    screenshot,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]}}
FORM = "Search and filter summaries"
CHANNEL = "Robot Weekly"
# 22 summaries about robots in CHANNEL, 3 in another: 25 results, two pages of 20.
IN_CHANNEL, ELSEWHERE = 22, 3


@pytest.fixture
def site(live_server):
    weekly, other = ChannelFactory(name=CHANNEL), ChannelFactory(name="Factory Floor")
    person, topic = PersonFactory(name="Ada Lovelace"), TopicFactory(name="Robotics")
    now = timezone.now()
    for n in range(IN_CHANNEL + ELSEWHERE):
        summary = SummaryFactory(
            live=True,
            publish_at=now - datetime.timedelta(hours=n + 1),
            video__channel=weekly if n < IN_CHANNEL else other,
            video__title=f"Episode {n + 1}: machines at work",
            video__published_on=datetime.date(2026, 11, 1) - datetime.timedelta(days=n),
            tldr=f"Warehouse robots and machines sort parcels faster, part {n + 1}.",
        )
        ChapterFactory(summary=summary, body="Quantisation keeps the robots' models small.")
        AppearanceFactory(video=summary.video, person=person)
        summary.video.topics.add(topic)
        derived.update_search_document(summary=summary)
    # A draft that must never show.
    draft = SummaryFactory(video__title="Secret robots draft", tldr="Robots, unpublished.")
    derived.update_search_document(summary=draft)
    # As every write path does: cached pages and fragments (the filter choices, the title
    # words) of an earlier test's data are stale now.
    content_changed()
    return live_server.url


def search_form(page):
    return page.get_by_role("search", name=FORM)


def tab_until(page, selector: str, limit: int = 200) -> None:
    """Press Tab until the element matching `selector` has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    pytest.fail(f"{selector} never got the focus in {limit} tabs on {page.url}")


def expect_marked_snippets(page) -> None:
    marks = page.locator(".search-result .snippet mark")
    expect(marks.first).to_be_visible()
    assert marks.first.inner_text().lower().startswith("robot")
    assert page.locator(".search-result").count() == page.locator(".snippet:has(mark)").count()


def expect_results(page, heading: str, cards: int) -> None:
    expect(page.get_by_role("heading", level=2, name=heading)).to_be_visible()
    expect(page.locator(".search-result")).to_have_count(cards)
    expect(page.get_by_text("Secret robots draft")).to_have_count(0)


def test_keyboard_search_filter_page_two_and_did_you_mean(page, site):
    page.set_default_timeout(15_000)
    page.set_viewport_size(DESKTOP)
    page.goto(site + "/search/")

    tab_until(page, "#q")
    page.keyboard.type("robots")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect_results(page, "25 results for “robots”", 20)
    expect_marked_snippets(page)
    screenshot(page, "search-results-desktop")

    # The channel filter by keyboard: Tab to the select, arrows to the channel (after "Any
    # channel" and "Factory Floor"), Tab to the button, Enter.
    tab_until(page, "#filter-channel")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#filter-channel option:checked")).to_have_text(CHANNEL)
    tab_until(page, ".filters button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect_results(page, "22 results for “robots” with these filters", 20)
    expect(search_form(page).get_by_role("searchbox")).to_have_value("robots")
    expect(page.locator("#filter-channel option:checked")).to_have_text(CHANNEL)
    assert {text.strip() for text in page.locator(".search-result .channel").all_inner_texts()} == {
        CHANNEL
    }
    screenshot(page, "search-filtered-desktop")

    pages = page.get_by_role("navigation", name="Pages")
    expect(pages).to_contain_text("Page 1 of 2")
    tab_until(page, "a[rel=next]")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect(page.get_by_role("navigation", name="Pages")).to_contain_text("Page 2 of 2")
    expect(page.locator(".search-result")).to_have_count(IN_CHANNEL - 20)
    expect(page.locator("#filter-channel option:checked")).to_have_text(CHANNEL)
    expect_marked_snippets(page)
    expect(page.locator("a[rel=prev]")).to_be_visible()

    # A misspelt title word (the channel filter still set): no results, and a suggestion
    # that runs the corrected search with the filter.
    field = search_form(page).get_by_role("searchbox")
    field.fill("machnes")
    field.press("Enter")
    page.wait_for_load_state()
    expect(page.get_by_role("heading", level=2)).to_contain_text("No results for “machnes”")
    suggestion = page.locator(".did-you-mean a")
    expect(suggestion).to_have_text("machines")
    screenshot(page, "search-did-you-mean-desktop")
    tab_until(page, ".did-you-mean a")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect_results(page, "22 results for “machines” with these filters", 20)
    expect(page.locator(".snippet mark").first).to_have_text("machines")


def test_search_at_360_px_without_javascript(browser, site):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(site + "/search/")
    form = search_form(page)
    form.get_by_role("searchbox").fill("robots")
    form.get_by_role("button", name="Search").click()
    expect_results(page, "25 results for “robots”", 20)
    expect_marked_snippets(page)
    assert no_horizontal_scroll(page)
    screenshot(page, "search-results-phone")

    page.get_by_label("Person").select_option(label="Ada Lovelace")
    page.get_by_label("Published until").fill("2026-10-25")
    form.get_by_role("button", name="Apply filters").click()
    # Videos published on Nov 1 minus 7 days or earlier: 25 - 7 = 18, one page.
    expect_results(page, "18 results for “robots” with these filters", 18)
    expect(page.get_by_role("navigation", name="Pages")).to_have_count(0)
    assert no_horizontal_scroll(page)
    screenshot(page, "search-filtered-phone")

    page.get_by_role("link", name="Clear filters").click()
    expect_results(page, "25 results for “robots”", 20)
    page.get_by_role("link", name="Next").click()
    expect(page.get_by_role("navigation", name="Pages")).to_contain_text("Page 2 of 2")
    expect(page.locator(".search-result")).to_have_count(5)

    page.goto(site + "/search/?q=ada+lovelase")
    expect(page.get_by_role("heading", level=2)).to_contain_text("No results")
    page.locator(".did-you-mean").get_by_role("link", name="Ada Lovelace").click()
    expect_results(page, "25 results with these filters", 20)
    assert no_horizontal_scroll(page)
    screenshot(page, "search-did-you-mean-phone")

    # Bad input answers with the form saying what is wrong, never a server error.
    response = page.goto(site + "/search/?q=robots&channel=nope&published_after=someday")
    assert response.status == 400
    expect(page.locator(".field-error")).to_have_count(2)
    assert no_horizontal_scroll(page)
    screenshot(page, "search-invalid-phone")
    for bad in ("page=abc", "page=99999", "q=" + "x" * 10_000):
        assert page.goto(f"{site}/search/?{bad}").status == 200, bad
    context.close()


AXE_PAGES = [
    "/search/",
    "/search/?q=robots",
    "/search/?q=robots&channel=channel-slug&published_after=2026-10-01",
    "/search/?q=robots&page=2",
    "/search/?q=robts",
    "/search/?q=zzzzqqq",
    "/search/?q=robots&channel=nope&published_before=someday",
]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_on_the_search_page(page, site, scheme):
    slug = Channel.objects.get(name=CHANNEL).slug
    page.emulate_media(color_scheme=scheme)
    axe = Axe()
    found = {}
    for path in AXE_PAGES:
        for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(viewport)
            page.goto(site + path.replace("channel-slug", slug))
            results = axe.run(page, options=AXE_OPTIONS)
            if results.violations_count:
                found[f"{path} {label}"] = results.generate_snapshot()
    assert found == {}
