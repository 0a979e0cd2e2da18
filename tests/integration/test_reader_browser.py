"""In a real browser: a reader finds their way from the home page through the demo."""

import re

import pytest
from playwright.sync_api import expect

from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, PHONE, no_horizontal_scroll

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

DEMO_TITLE = "Speed Maxis Unite: Why Fast AI Models Matter for Agents"


def save_screens(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.screenshot(path=ARTIFACTS / f"{name}-{label}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def test_reader_journey(page, demo):
    page.set_default_timeout(15_000)
    page.set_viewport_size(DESKTOP)
    page.goto(demo + "/")
    expect(page.get_by_role("heading", name="Latest summaries")).to_be_visible()
    save_screens(page, "home")

    # Follow the channel from a card, then open the speed summary.
    page.get_by_role("link", name=DEMO_TITLE).first.click()
    expect(page.get_by_role("heading", name=DEMO_TITLE, level=1)).to_be_visible()
    page.get_by_role("link", name="Matthew Berman").first.click()
    expect(page.get_by_role("heading", name="Matthew Berman", level=1)).to_be_visible()
    save_screens(page, "channel")
    page.get_by_role("link", name=DEMO_TITLE).click()
    expect(page.get_by_role("heading", name=DEMO_TITLE)).to_be_visible()
    expect(page.get_by_text("In 30 seconds")).to_be_visible()
    save_screens(page, "summary")

    # Jump through the table of contents.
    toc = page.get_by_role("navigation", name="Chapters")
    toc.get_by_role("link", name="Faster model releases").click()
    expect(page).to_have_url(re.compile(r"#chapter-2$"))
    expect(page.get_by_role("heading", name="Faster model releases")).to_be_in_viewport()
    caveat = page.locator(".caveat", has_text="not necessarily a 2.5-fold improvement")
    expect(caveat).to_be_visible()

    # Cited links show where they go.
    expect(page.locator(".sources")).to_contain_text("anthropic.com")

    # Readable at 360 px without sideways scrolling.
    page.set_viewport_size(PHONE)
    assert no_horizontal_scroll(page)
    page.set_viewport_size(DESKTOP)

    # Open another video of the channel. The demo's videos are all of one channel, and
    # "Related" never repeats a card of "More from this channel", so it has none here.
    expect(page.get_by_role("region", name="Related")).to_have_count(0)
    more = page.get_by_role("region", name="More from this channel")
    first = more.locator("h3 a").first
    title = first.inner_text()
    first.click()
    expect(page.get_by_role("heading", name=title, level=1)).to_be_visible()

    # Search from the header.
    page.fill("#site-q", "Rubik")
    page.press("#site-q", "Enter")
    expect(
        page.get_by_role("link", name="Kimi K3.1 and a Rubik’s Cube Solver Demonstration")
    ).to_be_visible()

    # Read the feed linked from every page (the browser may show it or save it).
    with page.expect_response(lambda response: "/feeds/rss/" in response.url) as answer:
        page.get_by_role("link", name="RSS").click()
    feed = answer.value
    assert feed.ok
    assert "<rss" in feed.text() and DEMO_TITLE in feed.text()


def test_pages_work_without_javascript(browser, demo):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    page.goto(demo + "/")
    page.get_by_role("link", name=DEMO_TITLE).first.click()
    expect(page.get_by_role("heading", name="Read the edited text by chapter")).to_be_visible()
    assert no_horizontal_scroll(page)
    context.close()
