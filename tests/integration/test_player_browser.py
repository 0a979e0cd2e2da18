"""In a real browser: the summary page's player loads from YouTube only when asked to.

Every request the page makes is recorded; none may leave the machine. Requests to the
privacy-enhanced embed are answered here with a stub page, all others elsewhere aborted.
"""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from tests.factories import ChapterFactory, KeyPointFactory, SummaryFactory, TakeawayFactory
from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, PHONE

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

VIDEO_ID = "dQw4w9WgXcQ"
TITLE = "Why fast models matter for agents"
EMBED = f"https://www.youtube-nocookie.com/embed/{VIDEO_ID}"
STUB = "<!doctype html><title>Stub player</title><p>Stub player</p>"
# The player and the header's line with the length and reading time; the frame's content is
# YouTube's (here a stub), not ours to audit.
AXE_CONTEXT = {"include": [["#player"], [".video-meta"]]}
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]},
    "iframes": False,
}
PARAGRAPH = (
    "An edited sentence of the transcript, long enough to make a page worth scrolling. " * 12
)


@pytest.fixture
def summary_url(live_server):
    summary = SummaryFactory(
        live=True,
        video__title=TITLE,
        video__source_url=f"https://www.youtube.com/watch?v={VIDEO_ID}",
        video__duration_seconds=34 * 60 + 21,
    )
    KeyPointFactory(summary=summary, title="Speed compounds in agent loops", time=65)
    TakeawayFactory(
        summary=summary, text="Measure the whole task, not tokens per second.", time=900
    )
    for title, start in (("Why speed matters", 0), ("Faster releases", 201), ("Two options", 765)):
        ChapterFactory(
            summary=summary, title=title, start_time=start, body="\n\n".join([PARAGRAPH] * 4)
        )
    return live_server.url + summary.get_absolute_url()


class Network:
    """Records every request of a browser context; answers the embed with a stub page,
    lets the test server answer its own, and aborts anything else."""

    def __init__(self, context, local_host):
        self.local_host = local_host
        self.requests: list[str] = []
        context.route("**/*", self.handle)

    def handle(self, route):
        url = route.request.url
        self.requests.append(url)
        host = urlsplit(url).hostname
        if host == self.local_host:
            route.continue_()
        elif url.startswith(EMBED + "?"):
            route.fulfill(status=200, content_type="text/html", body=STUB)
        else:
            route.abort()

    def elsewhere(self) -> list[str]:
        return [url for url in self.requests if urlsplit(url).hostname != self.local_host]

    def embeds(self) -> list[str]:
        return [url for url in self.requests if url.startswith(EMBED + "?")]


@pytest.fixture
def open_page(browser, live_server):
    """A page in a context of its own (JavaScript on unless told), with its Network."""
    contexts = []

    def open_(url, block_player_js=False, **options):
        context = browser.new_context(viewport=DESKTOP, **options)
        contexts.append(context)
        network = Network(context, urlsplit(live_server.url).hostname)
        if block_player_js:
            context.route("**/player.js", lambda route: route.abort())
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.csp_errors = []
        page.on(
            "console",
            lambda message: (
                "Content Security Policy" in message.text and page.csp_errors.append(message.text)
            ),
        )
        page.goto(url)
        page.wait_for_load_state("networkidle")
        return page, network

    yield open_
    for context in contexts:
        context.close()


def save_screens(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.screenshot(path=ARTIFACTS / f"{name}-{label}.png")
    page.set_viewport_size(DESKTOP)


def frame_start(page) -> str | None:
    src = page.locator("#player iframe").get_attribute("src")
    return parse_qs(urlsplit(src).query).get("start", [None])[0]


def test_nothing_leaves_the_machine_until_play_then_only_the_embed(open_page, summary_url):
    page, network = open_page(summary_url)
    player = page.get_by_role("region", name="Video")
    play = player.get_by_role("button", name="Play the video")
    expect(play).to_be_visible()
    expect(player.locator("iframe")).to_have_count(0)
    expect(page.locator(".duration")).to_have_text("Duration 34:21")
    expect(page.locator(".reading-time")).to_have_text(re.compile(r"^\d+ min read$"))
    save_screens(page, "player-poster")
    assert network.elsewhere() == []

    stage = page.locator(".player-stage").bounding_box()
    below = page.locator("#tldr").bounding_box()
    play.click()
    frame = player.locator("iframe")
    expect(frame).to_have_attribute("src", EMBED + "?autoplay=1")
    expect(frame).to_have_attribute("title", f"YouTube video player: {TITLE}")
    expect(page.frame_locator("#player iframe").get_by_text("Stub player")).to_be_visible()
    assert network.elsewhere() == [EMBED + "?autoplay=1"]
    assert page.evaluate("document.activeElement.tagName") == "IFRAME"
    expect(player.locator(".player-note")).to_have_text(
        "Playing in YouTube’s privacy-enhanced mode."
    )
    # Nothing shifted: the player took the poster's box, the text below stayed.
    assert page.locator(".player-stage").bounding_box() == stage
    assert page.locator("#tldr").bounding_box() == below
    assert page.csp_errors == []
    save_screens(page, "player-loaded")

    # "Watch from 3:21" seeks the loaded player: the embed again, from that second.
    page.get_by_role("link", name="Watch from 3:21").click()
    expect(frame).to_have_attribute("src", EMBED + "?autoplay=1&start=201")
    expect(frame).to_be_in_viewport()
    assert page.url == summary_url
    assert network.embeds()[-1] == EMBED + "?autoplay=1&start=201"
    assert set(network.elsewhere()) <= set(network.embeds())


def test_watch_from_link_loads_the_player_at_its_time(open_page, summary_url):
    page, network = open_page(summary_url)
    link = page.get_by_role("link", name="Watch from 12:45")
    link.scroll_into_view_if_needed()
    expect(page.locator("#player")).not_to_be_in_viewport()
    link.click()
    expect(page.locator("#player iframe")).to_be_in_viewport()
    assert frame_start(page) == "765"
    assert page.url == summary_url
    assert page.evaluate("document.activeElement.tagName") == "IFRAME"
    # A key point's and a takeaway's time seek too.
    page.get_by_role("link", name="Watch from 1:05").click()
    expect(page.locator("#player iframe")).to_have_attribute("src", EMBED + "?autoplay=1&start=65")
    page.get_by_role("link", name="Watch from 15:00").click()
    expect(page.locator("#player iframe")).to_have_attribute("src", EMBED + "?autoplay=1&start=900")
    assert set(network.elsewhere()) <= set(network.embeds())


def test_keyboard_only(open_page, summary_url):
    page, network = open_page(summary_url)
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('player-play')"):
            break
    else:
        pytest.fail("Tab never reached the play button")
    assert network.elsewhere() == []
    page.keyboard.press("Enter")
    expect(page.locator("#player iframe")).to_have_attribute("src", EMBED + "?autoplay=1")
    assert page.evaluate("document.activeElement.tagName") == "IFRAME"

    # Enter on a focused "Watch from" link seeks the player and brings focus back to it.
    page.get_by_role("link", name="Watch from 3:21").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#player iframe")).to_have_attribute("src", EMBED + "?autoplay=1&start=201")
    expect(page.locator("#player iframe")).to_be_in_viewport()
    assert page.evaluate("document.activeElement.tagName") == "IFRAME"
    assert page.url == summary_url


def test_without_javascript_the_links_open_youtube_at_their_time(open_page, summary_url):
    page, network = open_page(summary_url, java_script_enabled=False)
    player = page.get_by_role("region", name="Video")
    expect(player.get_by_role("button")).to_have_count(0)  # hidden: it could do nothing
    expect(player.get_by_role("link", name="Watch on YouTube")).to_have_attribute(
        "href", f"https://www.youtube.com/watch?v={VIDEO_ID}"
    )
    for name, seconds in (("Watch from 3:21", 201), ("Watch from 1:05", 65)):
        expect(page.get_by_role("link", name=name)).to_have_attribute(
            "href", f"https://www.youtube.com/watch?v={VIDEO_ID}&t={seconds}s"
        )
    expect(page.locator("iframe")).to_have_count(0)
    save_screens(page, "player-no-js")
    assert network.elsewhere() == []


def test_phone_width_keeps_the_poster_inside_the_page(open_page, summary_url):
    page, network = open_page(summary_url)
    page.set_viewport_size(PHONE)
    box = page.locator(".player-stage").bounding_box()
    assert box["width"] <= PHONE["width"]
    assert abs(box["height"] - box["width"] * 9 / 16) < 2
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.get_by_role("button", name="Play the video").click()
    expect(page.locator("#player iframe")).to_be_visible()
    assert page.locator(".player-stage").bounding_box() == box
    assert set(network.elsewhere()) <= set(network.embeds())


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_the_player_passes_axe_with_best_practices(open_page, summary_url, scheme, script):
    """Poster and loaded player; and the poster as readers without JavaScript get it (the
    link as its one action). axe cannot run with JavaScript off, so there player.js is
    kept from loading instead."""
    page, network = open_page(summary_url, color_scheme=scheme, block_player_js=not script)
    for state in ["poster", "loaded"] if script else ["poster"]:
        if state == "loaded":
            page.get_by_role("button", name="Play the video").click()
            expect(page.locator("#player iframe")).to_be_visible()
        results = Axe().run(page, context=AXE_CONTEXT, options=AXE_OPTIONS)
        assert results.violations_count == 0, (state, results.generate_report())
        passed = {rule["id"] for rule in results.response["passes"]}
        assert "color-contrast" in passed, (state, passed)
        if state == "loaded":
            assert "frame-title" in passed, passed
    if not script:
        expect(page.get_by_role("button", name="Play the video")).to_be_hidden()
    assert set(network.elsewhere()) <= set(network.embeds())
