"""In a real browser, on the demo: the reader site's layout at 1280 and 360 px, in light and
dark colours. Home leads with a featured summary above a grid of cards; cards stack their
picture above their text on a phone; the 30-second text is on a phone's first screen; card
titles read as titles, not as blue underlined links; breadcrumbs keep to one line; the play
button covers none of the poster; axe-core finds nothing on any page type; nothing is
requested from another host before a click.

With SCREENSHOTS_DIR set, the axe pass also saves the first screen of every page type there
(light; home and summary dark too): docs/screenshots/ is made that way (docs/reader-site.md).
"""

import os
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.integration.browser_helpers import DESKTOP, PHONE, TIMEOUT_MS

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

SUMMARY = "/videos/speed-maxis-unite-why-fast-ai-models-matter-for-agents/"
# Every page type of the reader site, by the name its screenshot takes.
PAGES = {
    "home": "/",
    "summary": SUMMARY,
    "transcript": SUMMARY + "transcript/",
    "channel": "/channels/matthew-berman/",
    "person": "/people/sam-altman/",
    "topic": "/topics/agents/",
    "channels": "/channels/",
    "people": "/people/",
    "topics": "/topics/",
    "search": "/search/?q=agents",
    "not-found": "/no-such-page/",
}
SCREENS = {"desktop": DESKTOP, "phone": PHONE}
FIRST_PHONE_SCREEN = {"width": 360, "height": 640}
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]}}
# Pages whose dark screenshots are kept too.
DARK_SHOTS = ("home", "summary")


@pytest.fixture
def open_page(browser, demo):
    """A page opener: a fresh context at `viewport` in `scheme`; every request recorded."""
    contexts = []

    def open_page(path: str, viewport=DESKTOP, scheme: str = "light"):
        context = browser.new_context(viewport=viewport, color_scheme=scheme)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.requests = []
        page.on("request", lambda request: page.requests.append(request.url))
        page.goto(demo + path)
        return page

    yield open_page
    for context in contexts:
        context.close()


def box(page, selector: str) -> dict:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return found


def overlap(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_home_leads_with_the_latest_summary_above_a_grid_of_cards(open_page, scheme):
    page = open_page("/", DESKTOP, scheme)

    featured = page.locator(".featured")
    picture = featured.locator("img.video-thumb")
    assert picture.evaluate("img => img.complete && img.naturalWidth > 0")
    assert box(page, ".featured img.video-thumb")["width"] >= 500
    newest = page.locator(".card-grid .video-card h3").first.inner_text()
    assert featured.locator("h2").inner_text() != newest  # the grid goes on after it
    tops = page.locator(".card-grid > .video-card").evaluate_all(
        "cards => cards.map(card => Math.round(card.getBoundingClientRect().top))"
    )
    assert len(tops) >= 2 and tops.count(tops[0]) >= 2  # two cards or more side by side


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_nothing_moves_while_the_home_pages_pictures_load(browser, demo, viewport):
    """Layout shifts as Chromium reports them to the page, from the first paint, with the
    pictures arriving late (as on a slow network)."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.add_init_script(
        "window.shifts = []; new PerformanceObserver(list => list.getEntries()"
        ".forEach(entry => window.shifts.push(entry.value)))"
        ".observe({type: 'layout-shift', buffered: true});"
    )

    def late(route):
        time.sleep(0.3)
        route.continue_()

    page.route("**/media/**", late)
    page.goto(demo + "/")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    shifts = page.evaluate("window.shifts")
    context.close()
    assert sum(shifts) < 0.01


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", ["/", "/channels/matthew-berman/", "/search/?q=agents"])
def test_cards_stack_their_picture_above_a_wide_text_on_a_phone(open_page, path, scheme):
    page = open_page(path, PHONE, scheme)

    picture = box(page, ".video-card .video-thumb")
    text = box(page, ".video-card .card-text")
    assert picture["y"] + picture["height"] <= text["y"]
    assert text["width"] >= 300
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_30_second_text_starts_on_a_phones_first_screen(open_page, scheme):
    page = open_page(SUMMARY, FIRST_PHONE_SCREEN, scheme)

    text = page.locator("section[aria-labelledby=tldr] p").first
    first_line = text.evaluate(
        "p => { const range = document.createRange(); range.selectNodeContents(p);"
        " return range.getClientRects()[0].bottom; }"
    )
    assert first_line <= FIRST_PHONE_SCREEN["height"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_card_titles_are_neither_underlined_nor_link_blue(open_page, viewport, scheme):
    for path in ("/", "/topics/agents/", SUMMARY):
        page = open_page(path, viewport, scheme)
        styles = page.locator(".video-card :is(h2, h3) a").evaluate_all(
            "links => links.map(a => [getComputedStyle(a).textDecorationLine,"
            " getComputedStyle(a).color, getComputedStyle(document.body).color])"
        )
        assert styles, path
        for decoration, colour, text_colour in styles:
            assert decoration == "none", path
            assert colour == text_colour, path  # the text's colour, not a link's blue


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_breadcrumbs_keep_to_one_line_so_no_separator_stands_alone(open_page, viewport):
    for path in (SUMMARY, SUMMARY + "transcript/", "/channels/matthew-berman/"):
        page = open_page(path, viewport)
        # The crumbs in view (a phone shows home, the page above and this one; the others
        # are clipped to a pixel until focused).
        crumbs = page.locator(".breadcrumbs li").evaluate_all(
            "items => items.map(li => li.getBoundingClientRect())"
            ".filter(r => r.width > 1).map(r => [Math.round(r.top), Math.round(r.height)])"
        )
        line = float(
            page.locator(".breadcrumbs ol")
            .evaluate("ol => getComputedStyle(ol).lineHeight")
            .removesuffix("px")
        )
        assert len(crumbs) >= 3, path
        assert len({top for top, _ in crumbs}) == 1, path  # one row
        assert all(height < 1.5 * line for _, height in crumbs), path
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), path


# each on one line


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_play_button_covers_none_of_the_poster(open_page, viewport):
    """The demo's pictures carry their title, as YouTube's often do: the button sits
    beside the picture, never on it."""
    page = open_page(SUMMARY, viewport)
    page.locator(".player-play").wait_for(state="visible")

    button = box(page, ".player-play")
    picture = box(page, ".player-stage .video-thumb")
    assert not overlap(button, picture)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def save_first_screen(page, name: str, scheme: str) -> None:
    """The first screen as SCREENSHOTS_DIR/<page>-<width>[-dark].png, when it is set."""
    folder = os.environ.get("SCREENSHOTS_DIR")
    if not folder or (scheme == "dark" and name not in DARK_SHOTS):
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    suffix = "-dark" if scheme == "dark" else ""
    page.screenshot(path=Path(folder) / f"{name}-{page.viewport_size['width']}{suffix}.png")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_and_no_other_host_on_any_page_type(open_page, live_server, scheme):
    own_host = urlsplit(live_server.url).hostname
    axe = Axe()
    found, elsewhere = {}, []
    for name, path in PAGES.items():
        for screen, viewport in SCREENS.items():
            page = open_page(path, viewport, scheme)
            page.wait_for_load_state("networkidle")
            elsewhere += [url for url in page.requests if urlsplit(url).hostname != own_host]
            save_first_screen(page, name, scheme)
            results = axe.run(page, options=AXE_OPTIONS)
            if results.violations_count:
                found[f"{name} {screen}"] = results.generate_snapshot()
            page.context.close()
    assert found == {}
    assert elsewhere == []
