"""In a real browser: the transcript page follows the video as it plays.

Nothing is requested from YouTube before the reader presses play. Then the embed (here a
fake player page served in its place) reports the time played by the postMessage protocol
of YouTube's IFrame API: once the page has said it is listening, the fake posts
"infoDelivery" messages whose currentTime the test sets. The line being said is marked and
scrolled into view, unless the reader scrolled a moment ago or switched "Follow the video"
off; messages from any other origin or window are ignored.
"""

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import expect

from summaries.models import Transcript
from tests.factories import ChapterFactory, SummaryFactory
from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, PHONE, no_horizontal_scroll
from tests.test_reader_receipts import VIDEO_ID, WATCH, add_transcript

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

YOUTUBE = "https://www.youtube-nocookie.com"
EMBED = f"{YOUTUBE}/embed/{VIDEO_ID}"
# Another window at YouTube's origin, inside the player: not the player itself.
NESTED = f"{YOUTUBE}/embed/nested-frame"
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]},
    "iframes": False,
}
# A sentence every 10 seconds for 15 minutes, each after a pause of 3 s, so each is a
# paragraph: paragraph n (from 1) starts at 10 * (n - 1).
SPEECH = [
    (10 * n, 10 * n + 7, f"Sentence {n + 1} of the talk about fast models and agents.", "Host")
    for n in range(90)
]

# Answers as YouTube's embed does: once the page has posted {"event": "listening"} to it,
# report(seconds) posts an infoDelivery message to the page's origin (the embed's origin=
# parameter). post(data, target) sends anything anywhere; nest() opens another frame.
FAKE_PLAYER = """<!doctype html><title>Fake player</title><p>Fake player</p>
<script>
  var parentOrigin = new URLSearchParams(location.search).get("origin");
  var listener = null;
  window.addEventListener("message", function (event) {
    var data = JSON.parse(event.data);
    if (data.event === "listening") { listener = data.id; }
  });
  function delivery(seconds) {
    return JSON.stringify({event: "infoDelivery", id: listener, channel: "widget",
                           info: {currentTime: seconds, playerState: 1}});
  }
  function report(seconds) {
    if (listener === null) { return false; }
    parent.postMessage(delivery(seconds), parentOrigin);
    return true;
  }
  function post(data, target) { parent.postMessage(data, target); }
  function nest() {
    var frame = document.createElement("iframe");
    frame.src = "%s";
    document.body.append(frame);
  }
</script>""" % (NESTED + "?x=1")
NESTED_PAGE = """<!doctype html><title>Nested</title>
<script>
  function deliver(seconds) {
    top.postMessage(JSON.stringify({event: "infoDelivery", info: {currentTime: seconds}}), "*");
  }
</script>"""


@pytest.fixture
def transcript_url(live_server):
    summary = SummaryFactory(
        live=True,
        video__source_url=WATCH,
        video__duration_seconds=900,
        video__title="Fast models, followed",
    )
    ChapterFactory(summary=summary, title="Opening", start_time=0)
    ChapterFactory(summary=summary, title="Releases", start_time=300)
    add_transcript(summary.video, state=Transcript.State.LIVE, speech=SPEECH)
    return live_server.url + reverse("summaries:summary-transcript", args=[summary.video.slug])


class Network:
    """Records every request; the embed gets the fake player (with `sandboxed`, in an
    origin of its own, as a CSP sandbox gives it), the test server answers its own,
    anything else is aborted."""

    def __init__(self, context, local_host):
        self.local_host = local_host
        self.requests: list[str] = []
        self.sandboxed = False
        context.route("**/*", self.handle)

    def handle(self, route):
        url = route.request.url
        self.requests.append(url)
        headers = {"Content-Security-Policy": "sandbox allow-scripts"} if self.sandboxed else {}
        if urlsplit(url).hostname == self.local_host:
            route.continue_()
        elif url.startswith(EMBED + "?"):
            route.fulfill(content_type="text/html", body=FAKE_PLAYER, headers=headers)
        elif url.startswith(NESTED + "?"):
            route.fulfill(content_type="text/html", body=NESTED_PAGE)
        else:
            route.abort()

    def elsewhere(self) -> list[str]:
        return [url for url in self.requests if urlsplit(url).hostname != self.local_host]


# Records how the page scrolls itself (window.scrollTo's behaviour), before any script runs.
RECORD_SCROLLS = """
window.scrolls = [];
const scrollTo = window.scrollTo.bind(window);
window.scrollTo = (options) => { window.scrolls.push(options.behavior); scrollTo(options); };
"""


@pytest.fixture
def open_page(browser, live_server):
    contexts = []

    def open_(url, block_scripts=False, **options):
        context = browser.new_context(viewport=DESKTOP, **options)
        contexts.append(context)
        network = Network(context, urlsplit(live_server.url).hostname)
        if block_scripts:
            context.route("**/*.js", lambda route: route.abort())
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.add_init_script(RECORD_SCROLLS)
        page.goto(url)
        page.wait_for_load_state("networkidle")
        return page, network

    yield open_
    for context in contexts:
        context.close()


def player_frame(page):
    """The loaded player's frame, once the page has told it that it is listening."""
    frame = page.locator("#player iframe").element_handle().content_frame()
    frame.wait_for_load_state()
    frame.wait_for_function("listener !== null")
    return frame


def start_playing(page):
    page.get_by_role("button", name="Play the video").click()
    return player_frame(page)


def played(page, frame, seconds):
    """The player reports `seconds`; returns once the page has read the report."""
    assert frame.evaluate("report", seconds)
    page.wait_for_function("seconds => window.lastTime === seconds", arg=seconds)


def marked(page):
    return page.locator(".paragraph[aria-current='true']")


def line(page, number):
    return page.locator(f"#paragraph-{number}")


def shown_below_player(page, number):
    """Waits until line `number` is wholly in the window, below the player (which stays at
    the top once playing), the page's scrolling done."""
    page.wait_for_function(
        """number => {
               const line = document.getElementById("paragraph-" + number).getBoundingClientRect();
               const player = document.getElementById("player").getBoundingClientRect();
               return line.top >= Math.max(0, player.bottom) - 1
                   && line.bottom <= window.innerHeight + 1;
           }""",
        arg=number,
    )


def scroll_y(page) -> float:
    return page.evaluate("window.scrollY")


def follow_toggle(page):
    return page.get_by_role("button", name="Follow the video")


def watch_times(page):
    """Keeps the last time the page was told (window.lastTime), read after player.js has."""
    page.evaluate(
        """document.getElementById("player").addEventListener("player:time", (event) => {
               window.lastTime = event.detail.seconds;
           })"""
    )


def test_nothing_is_requested_from_youtube_before_play(open_page, transcript_url):
    page, network = open_page(transcript_url)
    expect(page.locator(".paragraph")).to_have_count(90)
    expect(line(page, 31).locator(".paragraph-time")).to_have_attribute("href", f"{WATCH}&t=300s")
    expect(follow_toggle(page)).to_be_hidden()  # it has nothing to follow yet
    expect(marked(page)).to_have_count(0)
    page.mouse.wheel(0, 2000)
    page.wait_for_timeout(500)
    assert network.elsewhere() == []

    start_playing(page)
    src = page.locator("#player iframe").get_attribute("src")
    assert src.startswith(EMBED + "?")
    query = parse_qs(urlsplit(src).query)
    origin = transcript_url.split("/videos/")[0]
    assert query == {"autoplay": ["1"], "enablejsapi": ["1"], "origin": [origin]}
    # Only the embed: the protocol needs no script of YouTube's.
    assert network.elsewhere() == [src]
    expect(follow_toggle(page)).to_be_visible()
    expect(follow_toggle(page)).to_have_attribute("aria-pressed", "true")


def test_the_line_being_said_is_marked_and_kept_in_view(open_page, transcript_url):
    page, network = open_page(transcript_url)
    watch_times(page)
    frame = start_playing(page)
    played(page, frame, 0)
    expect(marked(page)).to_have_attribute("id", "paragraph-1")
    played(page, frame, 25.4)
    expect(marked(page)).to_have_attribute("id", "paragraph-3")
    played(page, frame, 299.9)
    expect(marked(page)).to_have_attribute("id", "paragraph-30")
    expect(marked(page)).to_have_count(1)
    # Far down the page: scrolled to, below the player that stays at the top.
    played(page, frame, 612)
    expect(marked(page)).to_have_attribute("id", "paragraph-62")
    shown_below_player(page, 62)
    # Back to the beginning.
    played(page, frame, 3)
    expect(marked(page)).to_have_attribute("id", "paragraph-1")
    shown_below_player(page, 1)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "transcript-follow.png")
    assert {url.split("?")[0] for url in network.elsewhere()} == {EMBED}


def test_the_toggle_stops_following_and_starts_again(open_page, transcript_url):
    page, _ = open_page(transcript_url)
    watch_times(page)
    frame = start_playing(page)
    played(page, frame, 10)
    expect(marked(page)).to_have_attribute("id", "paragraph-2")
    follow_toggle(page).click()
    expect(follow_toggle(page)).to_have_attribute("aria-pressed", "false")
    still = scroll_y(page)
    played(page, frame, 612)
    expect(marked(page)).to_have_attribute("id", "paragraph-2")
    assert scroll_y(page) == still

    # Switched on again, the page goes to the line being said at once.
    follow_toggle(page).press("Enter")
    expect(follow_toggle(page)).to_have_attribute("aria-pressed", "true")
    expect(marked(page)).to_have_attribute("id", "paragraph-62")
    shown_below_player(page, 62)


def test_the_page_stays_where_the_reader_scrolled_it(open_page, transcript_url):
    page, _ = open_page(transcript_url)
    watch_times(page)
    frame = start_playing(page)
    played(page, frame, 0)
    page.mouse.move(640, 600)
    page.mouse.wheel(0, 900)
    page.wait_for_function("() => window.scrollY > 0")
    page.wait_for_timeout(300)
    reader_at = scroll_y(page)
    played(page, frame, 612)
    expect(marked(page)).to_have_attribute("id", "paragraph-62")  # marked, not scrolled to
    assert scroll_y(page) == reader_at
    expect(line(page, 62)).not_to_be_in_viewport()

    # A few seconds later the page follows again.
    page.wait_for_timeout(4500)
    played(page, frame, 702)
    expect(marked(page)).to_have_attribute("id", "paragraph-71")
    shown_below_player(page, 71)


@pytest.mark.parametrize(("motion", "behaviour"), [("reduce", "auto"), ("no-preference", "smooth")])
def test_reduced_motion_scrolls_without_animation(open_page, transcript_url, motion, behaviour):
    page, _ = open_page(transcript_url, reduced_motion=motion)
    watch_times(page)
    frame = start_playing(page)
    played(page, frame, 612)
    shown_below_player(page, 62)
    assert page.evaluate("window.scrolls") == [behaviour]


def test_a_time_seeks_the_player_and_following_goes_on(open_page, transcript_url):
    page, network = open_page(transcript_url)
    watch_times(page)
    frame = start_playing(page)
    played(page, frame, 0)
    line(page, 31).locator(".paragraph-time").click()
    expect(page.locator("#player iframe")).to_have_attribute(
        "src", f"{EMBED}?autoplay=1&start=300&enablejsapi=1&origin={_origin(transcript_url)}"
    )
    expect(marked(page)).to_have_attribute("id", "paragraph-31")
    assert page.url == transcript_url
    frame = player_frame(page)  # the seek loaded the embed again, which is listened to again
    played(page, frame, 321)
    expect(marked(page)).to_have_attribute("id", "paragraph-33")
    assert {url.split("?")[0] for url in network.elsewhere()} == {EMBED}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}%3A%2F%2F{parts.netloc.replace(':', '%3A')}"


def nested_frame(page):
    for _ in range(200):
        found = page.frame(url=lambda url: url.startswith(NESTED))
        if found:
            return found
        page.wait_for_timeout(50)
    pytest.fail("The nested frame never loaded")


# Sends data from the player's frame to the page, whatever the page's origin.
POST = "data => post(data, '*')"


def _posted_and_seen(page, post):
    """Runs `post` (which sends a message to the page), and returns once the page's own
    listeners, player.js's first, have all had it."""
    page.evaluate(
        """() => {
               window.seen = new Promise((resolve) => {
                   window.addEventListener("message", () => resolve(true), { once: true });
                   setTimeout(() => resolve(false), 5000);
               });
           }"""
    )
    post()
    assert page.evaluate("() => window.seen"), "the message never came"


def test_messages_from_another_origin_or_window_are_ignored(open_page, transcript_url):
    page, network = open_page(transcript_url)
    watch_times(page)
    frame = start_playing(page)
    played(page, frame, 0)
    delivery = json.dumps({"event": "infoDelivery", "info": {"currentTime": 612}})

    # The page itself (its own origin), and another window at YouTube's origin.
    _posted_and_seen(page, lambda: page.evaluate("data => postMessage(data, '*')", delivery))
    frame.evaluate("nest()")
    nested = nested_frame(page)
    nested.wait_for_function("typeof deliver === 'function'")
    _posted_and_seen(page, lambda: nested.evaluate("deliver(612)"))
    expect(marked(page)).to_have_attribute("id", "paragraph-1")

    # The player's own window, with what is not a time report.
    for data in (
        "not JSON",
        "null",
        "[612]",
        json.dumps({"event": "infoDelivery", "info": {"currentTime": "612"}}),
        json.dumps({"event": "infoDelivery", "info": {"currentTime": -1}}),
        json.dumps({"event": "infoDelivery", "info": None}),
        json.dumps({"event": "onStateChange", "info": {"currentTime": 612}}),
        "x" * 200_000,
    ):
        _posted_and_seen(page, lambda data=data: frame.evaluate(POST, data))
    expect(marked(page)).to_have_attribute("id", "paragraph-1")
    assert page.evaluate("window.lastTime") == 0


def test_a_player_in_another_origin_is_not_listened_to(open_page, transcript_url):
    """The same frame, but in an opaque origin (sandboxed): its reports are ignored."""
    page, network = open_page(transcript_url)
    network.sandboxed = True
    watch_times(page)
    page.get_by_role("button", name="Play the video").click()
    frame = page.locator("#player iframe").element_handle().content_frame()
    frame.wait_for_function("typeof post === 'function'")
    assert frame.evaluate("self.origin") == "null"
    delivery = json.dumps({"event": "infoDelivery", "info": {"currentTime": 612}})
    _posted_and_seen(page, lambda: frame.evaluate(POST, delivery))
    expect(marked(page)).to_have_count(0)
    assert page.evaluate("window.lastTime") is None


def test_without_javascript_times_open_youtube_and_nothing_follows(open_page, transcript_url):
    page, network = open_page(transcript_url, java_script_enabled=False)
    expect(line(page, 62).locator(".paragraph-time")).to_have_attribute("href", f"{WATCH}&t=610s")
    expect(page.get_by_role("button", name="Follow the video")).to_have_count(0)
    expect(page.locator("iframe")).to_have_count(0)
    assert network.elsewhere() == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_while_following(open_page, transcript_url, scheme):
    """At 1280 and 360 px, with a line marked, following on and off. axe scrolls the page
    to read colours; pressing the toggle again brings the line back."""
    page, network = open_page(transcript_url, color_scheme=scheme, reduced_motion="reduce")
    found = {}
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.goto(transcript_url)
        page.wait_for_load_state("networkidle")
        watch_times(page)
        page.set_viewport_size(viewport)
        frame = start_playing(page)
        played(page, frame, 612)
        shown_below_player(page, 62)
        for pressed in ("true", "false"):
            expect(follow_toggle(page)).to_have_attribute("aria-pressed", pressed)
            assert no_horizontal_scroll(page), label
            results = Axe().run(page, options=AXE_OPTIONS)
            if results.violations_count:
                found[f"{label} {pressed}"] = results.generate_report()
            passed = {rule["id"] for rule in results.response["passes"]}
            assert "color-contrast" in passed, passed
            follow_toggle(page).click()
        shown_below_player(page, 62)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"transcript-follow-{scheme}-{label}.png")
    assert found == {}
    assert {url.split("?")[0] for url in network.elsewhere()} == {EMBED}
