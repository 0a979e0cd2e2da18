"""In a real browser: a source label's explanation shows on keyboard focus and on hover,
without JavaScript, and the sources section passes axe-core with best-practice rules."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, PHONE
from tests.test_source_labels import SOURCES, summary_citing

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SECTION = 'section[aria-labelledby="sources"]'
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


@pytest.fixture
def summary_url(live_server):
    summary = summary_citing(SOURCES, verdicts={"changed": "changed", "moved": "supported"})
    return live_server.url + summary.get_absolute_url()


def shown(locator) -> bool:
    """Whether the explanation takes room on the page (hidden, it is clipped to 1 px)."""
    box = locator.bounding_box()
    return box is not None and box["width"] > 40 and box["height"] > 8


def tab_to(page, locator, limit=200) -> None:
    """Press Tab until `locator` has the focus, as a keyboard user would."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if locator.evaluate("element => element === document.activeElement"):
            return
    raise AssertionError("never reached by the keyboard")


def test_explanations_show_on_keyboard_focus_and_hover_without_javascript(browser, summary_url):
    context = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    page = context.new_page()
    page.goto(summary_url)
    labels = page.locator(".source-label-name")
    expect(labels).to_have_count(len(SOURCES))
    timeout_label = page.get_by_text("Could not be checked").first
    why = page.locator("#" + timeout_label.get_attribute("aria-describedby"))
    assert not shown(why)

    tab_to(page, timeout_label)
    assert shown(why)
    expect(why).to_have_text(
        "The site did not answer in time when we tried on 3 Dec 2026. This is often "
        "temporary. It may still open in your browser."
    )
    expect(timeout_label).to_have_accessible_description(why.inner_text())
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(SECTION).screenshot(path=ARTIFACTS / "source-labels-focus.png")

    # Focus moves on: that explanation hides again; hovering another label shows its own.
    gone = page.get_by_text("Unavailable when last checked")
    gone_why = page.locator("#" + gone.get_attribute("aria-describedby"))
    tab_to(page, gone)
    assert not shown(why) and shown(gone_why)
    page.locator("h1").focus()
    page.get_by_text("The source changed since this was confirmed").hover()
    expect(page.get_by_text("so their context may differ")).to_be_visible()
    assert shown(page.get_by_text("so their context may differ"))

    # The moved source links to its new address.
    new_address = page.get_by_role("link", name="example.net/reports/2026")
    expect(new_address).to_have_attribute("href", "https://www.example.net/reports/2026")

    # Readable at 360 px without sideways scrolling, explanation open.
    page.set_viewport_size(PHONE)
    tab_to(page, gone)
    assert shown(gone_why)
    width = page.locator("html").evaluate("html => [html.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_sources_section_passes_axe_with_best_practices(browser, summary_url, scheme):
    context = browser.new_context(viewport=DESKTOP, color_scheme=scheme)
    page = context.new_page()
    page.goto(summary_url)
    options = {"runOnly": {"type": "tag", "values": AXE_TAGS}}
    results = Axe().run(page, context=SECTION, options=options)
    assert results.violations_count == 0, results.generate_report()
    passed = {rule["id"] for rule in results.response["passes"]}
    # The rules that matter here ran on the section (a wrong selector checks nothing).
    assert {"color-contrast", "aria-valid-attr-value", "aria-prohibited-attr"} <= passed, passed
    # Again with an explanation open, so its colours are checked too.
    page.get_by_text("The source changed since this was confirmed").focus()
    results = Axe().run(page, context=SECTION, options=options)
    assert results.violations_count == 0, results.generate_report()
    context.close()
