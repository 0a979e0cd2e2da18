"""In a real browser, on the demo: the summary page on paper (print media), the one focus
style shared by links and the search box, a keyboard-only journey down a summary page, and
one meta description on every reader page (Lighthouse's SEO audit)."""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.integration.browser_helpers import ARTIFACTS, DESKTOP

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SUMMARY = "/videos/speed-maxis-unite-why-fast-ai-models-matter-for-agents/"
EMBED = "https://www.youtube-nocookie.com/embed/"
STUB = "<!doctype html><title>Stub player</title><p>Stub player</p>"
OUTLINE = """el => {
    const style = getComputedStyle(el);
    return [style.outlineStyle, style.outlineWidth, style.outlineColor, style.outlineOffset];
}"""
READER_PAGES = [
    "/",
    "/channels/",
    "/people/",
    "/topics/",
    "/channels/matthew-berman/",
    "/people/sam-altman/",
    "/topics/agents/",
    "/search/?q=agents",
    SUMMARY,
]


@pytest.fixture
def page_for(browser, live_server):
    """A page in a context of its own: requests to this server pass, the YouTube embed is
    answered with a stub page, everything else is aborted; console errors are collected."""
    contexts = []
    local_host = urlsplit(live_server.url).hostname

    def route(route):
        url = route.request.url
        if urlsplit(url).hostname == local_host:
            route.continue_()
        elif url.startswith(EMBED):
            route.fulfill(status=200, content_type="text/html", body=STUB)
        else:
            route.abort()

    def open_(**options):
        context = browser.new_context(viewport=DESKTOP, **options)
        contexts.append(context)
        context.route("**/*", route)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.console_errors = []
        page.on(
            "console",
            lambda message: message.type == "error" and page.console_errors.append(message.text),
        )
        return page

    yield open_
    for context in contexts:
        context.close()


def active(page, expression: str):
    return page.evaluate(f"(() => {{ const el = document.activeElement; return {expression}; }})()")


def tab_until(page, expression: str, limit: int = 80) -> int:
    """Press Tab until `expression` (about `el`, the focused element) holds; the presses."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if active(page, expression):
            return presses
    pytest.fail(f"Tab never reached an element where {expression} in {limit} presses")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_summary_prints_its_text_without_the_site_around_it(page_for, demo, scheme):
    page = page_for(color_scheme=scheme)
    page.goto(demo + SUMMARY)
    page.wait_for_load_state("networkidle")
    expect(page.locator(".player-play")).to_be_visible()  # player.js ran
    page.emulate_media(media="print")

    for selector in (
        ".skip-link",
        ".site-nav",
        ".site-search",
        ".breadcrumbs",
        "#player",
        ".toc",
        ".related",
        ".more",
        ".site-footer",
    ):
        expect(page.locator(selector)).to_be_hidden()
    for heading in ("In 30 seconds", "Key points", "Takeaways", "Read the edited text by chapter"):
        expect(page.get_by_role("heading", name=heading, level=2)).to_be_visible()
    expect(page.locator(".key-points li").first).to_be_visible()
    expect(page.locator(".takeaways li").first).to_be_visible()
    expect(page.locator(".chapter").last).to_be_visible()
    expect(page.locator(".caveat").first).to_be_visible()
    expect(page.locator(".sources li").first).to_be_visible()
    # The explanation of a source's label, shown on hover on screen, is printed.
    expect(page.locator(".source-label-why").first).to_be_visible()

    # Black on white, whatever the reader's colour scheme.
    body = page.evaluate(
        "[getComputedStyle(document.body).color, getComputedStyle(document.body).backgroundColor]"
    )
    assert body == ["rgb(0, 0, 0)", "rgb(255, 255, 255)"]

    # A link cited in a chapter prints its address after its text, in place of the host.
    cited = page.locator(".chapter p:not(.chapter-start) a[href^='http']:not(.time)").first
    href = cited.get_attribute("href")
    after = cited.evaluate("el => getComputedStyle(el, '::after').content")
    assert href in after and after.startswith('" (')
    expect(page.locator(".chapter a[href^='http'] + .link-host").first).to_be_hidden()
    # "Watch from" links keep their text only.
    for time_link in (".chapter-start a", "a.time"):
        links = page.locator(time_link)
        if links.count():
            assert links.first.evaluate("el => getComputedStyle(el, '::after').content") == "none"

    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"print-summary-{scheme}.pdf").write_bytes(pdf)
    page.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    page.screenshot(path=ARTIFACTS / f"print-summary-{scheme}.png", full_page=True)


def test_the_search_box_has_the_focus_style_of_links(page_for, demo):
    page = page_for()
    page.goto(demo + SUMMARY)
    tab_until(page, "el.matches('.site-nav a')")
    link_outline = active(page, f"({OUTLINE})(el)")
    assert link_outline[0] == "solid" and link_outline[1] == "3px"

    tab_until(page, "el.id === 'site-q'")
    assert active(page, "el.matches(':focus-visible')")
    assert active(page, f"({OUTLINE})(el)") == link_outline
    page.keyboard.press("Tab")
    assert active(page, "el.matches('.site-search button')")
    assert active(page, f"({OUTLINE})(el)") == link_outline

    # And without the focus, no outline: the style is the focus's.
    page.locator("main h1").click()
    assert page.locator("#site-q").evaluate(OUTLINE)[0] == "none"


def test_keyboard_only_down_the_summary_page(page_for, demo):
    page = page_for()
    page.goto(demo + SUMMARY)

    # The skip link comes first, is visible when focused and skips the header.
    page.keyboard.press("Tab")
    assert active(page, "el.matches('.skip-link')")
    expect(page.locator(".skip-link")).to_be_in_viewport()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert active(page, "!!el.closest('main')")

    # From the top again: the navigation, the search box, then the player's play button.
    page.goto(demo + SUMMARY)
    expect(page.locator(".player-play")).to_be_visible()
    page.keyboard.press("Tab")  # the skip link
    tab_until(page, "el.matches('.site-nav a') && el.textContent === 'Channels'", limit=6)
    tab_until(page, "el.id === 'site-q'", limit=6)
    page.keyboard.type("agents")
    page.keyboard.press("Tab")
    assert active(page, "el.matches('.site-search button')")
    tab_until(page, "el.matches('.player-play')", limit=30)
    page.keyboard.press("Enter")
    frame = page.locator("#player iframe")
    expect(frame).to_have_attribute("src", EMBED + "DEMOspeed01?autoplay=1")
    assert active(page, "el.tagName") == "IFRAME"

    # On to the table of contents: Enter on a chapter moves the reader and the focus
    # starting point there (the next Tab goes on from the chapter).
    tab_until(page, "el.matches('.toc a')", limit=40)
    target = active(page, "el.getAttribute('href')")
    assert target == "#chapter-1"
    tab_until(page, "el.getAttribute('href') === '#chapter-2'", limit=3)
    page.keyboard.press("Enter")
    expect(page).to_have_url(demo + SUMMARY + "#chapter-2")
    expect(page.locator("#chapter-2-title")).to_be_in_viewport()
    page.keyboard.press("Tab")
    assert active(page, "!!el.closest('#chapter-2')")
    assert page.console_errors == []


def test_every_reader_page_has_one_meta_description(page_for, demo):
    page = page_for()
    descriptions = {}
    for path in READER_PAGES:
        page.goto(demo + path)
        meta = page.locator("meta[name='description']")
        expect(meta).to_have_count(1)
        descriptions[path] = meta.get_attribute("content")
        assert len(descriptions[path]) >= 50, (path, descriptions[path])
    # Pages about one thing say so: their descriptions differ from the site's.
    assert len({descriptions[path] for path in READER_PAGES[4:]}) == len(READER_PAGES[4:])
