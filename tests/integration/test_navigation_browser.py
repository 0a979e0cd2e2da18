"""In a real browser: the header navigation, the indexes and the breadcrumbs, by keyboard at
1280 px and by taps at 360 px without JavaScript; axe-core finds nothing on the indexes."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from tests.integration.browser_helpers import DESKTOP, PHONE, no_horizontal_scroll, screenshot

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

CHANNEL = "Matthew Berman"
DEMO_TITLE = "Speed Maxis Unite: Why Fast AI Models Matter for Agents"
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]}}
# The indexes, and the pages whose header, breadcrumbs or headings this work changed.
AXE_PAGES = [
    "/channels/",
    "/people/",
    "/topics/",
    "/",
    "/channels/matthew-berman/",
    "/people/sam-altman/",
    "/topics/agents/",
    "/search/?q=agents",
    "/videos/speed-maxis-unite-why-fast-ai-models-matter-for-agents/",
]


def tab_to(page, name: str, limit: int = 80) -> None:
    """Press Tab until the link or button named `name` has the focus, then Enter."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "(document.activeElement.innerText || document.activeElement.value || '').trim()"
        )
        if focused == name:
            page.keyboard.press("Enter")
            page.wait_for_load_state()
            return
    pytest.fail(f"{name!r} never got the focus in {limit} tabs on {page.url}")


def main_nav(page):
    return page.get_by_role("navigation", name="Main")


def expect_current(page, link: str, value: str) -> None:
    expect(main_nav(page).get_by_role("link", name=link, exact=True)).to_have_attribute(
        "aria-current", value
    )


def check_breadcrumbs(page, names: list[str]) -> None:
    crumbs = page.get_by_role("navigation", name="Breadcrumb").get_by_role("listitem")
    expect(crumbs).to_have_text(names)
    expect(crumbs.last.get_by_role("link")).to_have_attribute("aria-current", "page")


def test_keyboard_journey_home_channels_channel_summary(page, demo):
    page.set_default_timeout(15_000)
    page.set_viewport_size(DESKTOP)
    page.goto(demo + "/")
    expect_current(page, "Home", "page")
    screenshot(page, "nav-home-desktop")

    tab_to(page, "Channels")
    expect(page).to_have_url(demo + "/channels/")
    expect(page.get_by_role("heading", name="Channels", level=1)).to_be_visible()
    expect_current(page, "Channels", "page")
    expect(page.get_by_role("link", name=CHANNEL)).to_be_visible()
    expect(page.locator(".index-list li").first).to_contain_text("7 summaries")
    screenshot(page, "nav-channels-desktop")

    tab_to(page, CHANNEL)
    expect(page.get_by_role("heading", name=CHANNEL, level=1)).to_be_visible()
    expect_current(page, "Channels", "true")
    check_breadcrumbs(page, ["Home", "Channels", CHANNEL])
    screenshot(page, "nav-channel-desktop")

    tab_to(page, DEMO_TITLE)
    expect(page.get_by_role("heading", name=DEMO_TITLE, level=1)).to_be_visible()
    check_breadcrumbs(page, ["Home", "Channels", CHANNEL, DEMO_TITLE])
    screenshot(page, "nav-summary-desktop")

    # Back up the trail by the breadcrumbs, then to a person from the index of people.
    page.get_by_role("navigation", name="Breadcrumb").get_by_role("link", name=CHANNEL).click()
    expect(page.get_by_role("heading", name=CHANNEL, level=1)).to_be_visible()
    tab_to(page, "People")
    expect_current(page, "People", "page")
    page.get_by_role("main").get_by_role("link").filter(has_text="Sam Altman").click()
    expect(page.get_by_role("heading", name="Sam Altman", level=1)).to_be_visible()
    expect(page.locator(".affiliations")).to_contain_text("OpenAI")
    expect_current(page, "People", "true")
    screenshot(page, "nav-person-desktop")


def test_journey_at_360_px_without_javascript(browser, demo):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(demo + "/")
    nav = main_nav(page)
    for name in ("Home", "Channels", "People", "Topics"):
        expect(nav.get_by_role("link", name=name, exact=True)).to_be_visible()
    expect(page.get_by_role("searchbox", name="Search summaries")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, "nav-home-phone")

    nav.get_by_role("link", name="Channels").click()
    expect(page.get_by_role("heading", name="Channels", level=1)).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, "nav-channels-phone")

    page.get_by_role("main").get_by_role("link", name=CHANNEL).click()
    expect(page.get_by_role("heading", name=CHANNEL, level=1)).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(page, "nav-channel-phone")

    page.get_by_role("link", name=DEMO_TITLE).click()
    check_breadcrumbs(page, ["Home", "Channels", CHANNEL, DEMO_TITLE])
    assert no_horizontal_scroll(page)
    screenshot(page, "nav-summary-phone")

    # Search from the header without JavaScript: the form's own button.
    page.get_by_role("searchbox", name="Search summaries").first.fill("Rubik")
    page.get_by_role("search", name="Site search").get_by_role("button", name="Search").click()
    expect(page.get_by_role("heading", name="Search", level=1)).to_be_visible()

    for path in ("/people/", "/topics/"):
        page.goto(demo + path)
        assert no_horizontal_scroll(page), path
        screenshot(page, f"nav-{path.strip('/')}-phone")
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_on_the_indexes_and_navigated_pages(page, demo, scheme):
    page.emulate_media(color_scheme=scheme)
    axe = Axe()
    found = {}
    for path in AXE_PAGES:
        for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(viewport)
            page.goto(demo + path)
            results = axe.run(page, options=AXE_OPTIONS)
            if results.violations_count:
                found[f"{path} {label}"] = results.generate_snapshot()
    assert found == {}
