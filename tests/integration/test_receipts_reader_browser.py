"""In a real browser: the receipts readers see. "▶ 0:05" beside a statement seeks the
click-to-load player; the transcript page filters as you type, seeks the player from each
line and marks it, works and prints without JavaScript, sends nothing off the machine
before a click, and axe-core finds nothing on it at 1280 and 360 px, light and dark."""

from urllib.parse import parse_qs, urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import expect

from summaries.editing import workflow
from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, PHONE, no_horizontal_scroll
from tests.test_reader_receipts import VIDEO_ID, WATCH, draft_with_parts

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

EMBED = f"https://www.youtube-nocookie.com/embed/{VIDEO_ID}"
STUB = "<!doctype html><title>Stub player</title><p>Stub player</p>"
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]},
    "iframes": False,
}


@pytest.fixture
def urls(live_server):
    summary = workflow.publish_summary(summary=draft_with_parts(), user=None)
    slug = summary.video.slug
    return {
        "summary": live_server.url + summary.get_absolute_url(),
        "transcript": live_server.url + reverse("summaries:summary-transcript", args=[slug]),
    }


class Network:
    """Records every request; the embed gets a stub page, the test server answers its own,
    anything else is aborted."""

    def __init__(self, context, local_host):
        self.local_host = local_host
        self.requests: list[str] = []
        context.route("**/*", self.handle)

    def handle(self, route):
        url = route.request.url
        self.requests.append(url)
        if urlsplit(url).hostname == self.local_host:
            route.continue_()
        elif url.startswith(EMBED + "?"):
            route.fulfill(status=200, content_type="text/html", body=STUB)
        else:
            route.abort()

    def elsewhere(self) -> list[str]:
        return [url for url in self.requests if urlsplit(url).hostname != self.local_host]


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
        page.goto(url)
        page.wait_for_load_state("networkidle")
        return page, network

    yield open_
    for context in contexts:
        context.close()


def frame_start(page) -> str | None:
    src = page.locator("#player iframe").get_attribute("src")
    return parse_qs(urlsplit(src).query).get("start", [None])[0]


def shown_paragraphs(page):
    return page.locator(".transcript .paragraph:visible")


def test_a_receipt_seeks_the_player_on_the_summary_page(open_page, urls):
    page, network = open_page(urls["summary"])
    receipt = page.get_by_role("link", name="Play from 0:05, where this is said")
    expect(receipt).to_have_text("▶ 0:05")
    assert network.elsewhere() == []
    receipt.click()
    expect(page.locator("#player iframe")).to_be_visible()
    assert frame_start(page) == "5"
    assert page.url == urls["summary"]
    assert {url.split("?")[0] for url in network.elsewhere()} == {EMBED}
    page.get_by_role("link", name="Read the full transcript").click()
    expect(page).to_have_url(urls["transcript"])


def test_the_transcript_page_filters_as_you_type_and_seeks_from_a_paragraph(open_page, urls):
    page, network = open_page(urls["transcript"])
    expect(shown_paragraphs(page)).to_have_count(5)
    assert network.elsewhere() == []
    page.get_by_role("searchbox", name="Find in the transcript").fill("benchmarks YEAR")
    expect(shown_paragraphs(page)).to_have_count(1)
    expect(page.locator(".paragraph:visible mark")).to_have_text(["benchmarks", "year"])
    expect(page.get_by_role("status")).to_have_text("1 of 5 paragraphs hold “benchmarks YEAR”.")
    # The chapter without a match is hidden with its heading.
    expect(page.get_by_role("heading", name="Fast models", level=2)).to_be_hidden()
    toc = page.get_by_role("navigation", name="Chapters")
    expect(toc.get_by_role("link")).to_have_text(["Releases"])
    assert parse_qs(urlsplit(page.url).query) == {"q": ["benchmarks YEAR"]}
    assert network.elsewhere() == []

    page.locator(".paragraph:visible .paragraph-time").click()
    expect(page.locator("#player iframe")).to_be_visible()
    assert frame_start(page) == "206"
    expect(page.locator(".paragraph[aria-current]")).to_contain_text("saturate within a year")
    assert {url.split("?")[0] for url in network.elsewhere()} == {EMBED}

    page.get_by_role("searchbox", name="Find in the transcript").fill("")
    expect(shown_paragraphs(page)).to_have_count(5)
    expect(page.locator(".transcript mark")).to_have_count(0)


def test_without_javascript_the_filter_asks_the_server_and_times_open_youtube(open_page, urls):
    page, network = open_page(urls["transcript"], java_script_enabled=False)
    expect(page.locator(".paragraph-time").first).to_have_attribute("href", f"{WATCH}&t=0s")
    page.get_by_role("searchbox", name="Find in the transcript").fill("releases")
    page.get_by_role("button", name="Find").click()
    page.wait_for_load_state()
    assert parse_qs(urlsplit(page.url).query) == {"q": ["releases"]}
    expect(shown_paragraphs(page)).to_have_count(1)
    expect(page.locator(".paragraph:visible mark")).to_have_text(["releases"])
    toc = page.get_by_role("navigation", name="Chapters")
    expect(toc.get_by_role("link")).to_have_text(["Releases"])
    page.get_by_role("link", name="Show the whole transcript").click()
    expect(shown_paragraphs(page)).to_have_count(5)
    assert network.elsewhere() == []


def test_the_transcript_page_prints_every_paragraph_without_the_controls(open_page, urls):
    page, _ = open_page(urls["transcript"])
    page.emulate_media(media="print")
    expect(page.locator(".transcript-search")).to_be_hidden()
    expect(page.locator("#player")).to_be_hidden()
    expect(shown_paragraphs(page)).to_have_count(5)
    ARTIFACTS.mkdir(exist_ok=True)
    page.pdf(path=str(ARTIFACTS / "transcript-print.pdf"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_no_axe_violations_on_the_transcript_page(open_page, urls, scheme, script):
    """At both widths, filtered and not, the player loaded (with JavaScript) or not. axe
    needs JavaScript: without it the page's own scripts are kept from loading instead."""
    page, network = open_page(urls["transcript"], color_scheme=scheme, block_scripts=not script)
    ARTIFACTS.mkdir(exist_ok=True)
    found = {}
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        for query in ("", "?q=benchmarks"):
            page.goto(urls["transcript"] + query)
            page.wait_for_load_state("networkidle")
            assert no_horizontal_scroll(page), (label, query)
            results = Axe().run(page, options=AXE_OPTIONS)
            if results.violations_count:
                found[f"{label} {query}"] = results.generate_report()
        if script:
            page.get_by_role("button", name="Play the video").click()
            expect(page.locator("#player iframe")).to_be_visible()
            results = Axe().run(page, options=AXE_OPTIONS)
            if results.violations_count:
                found[f"{label} playing"] = results.generate_report()
        page.screenshot(
            path=ARTIFACTS / f"transcript-{scheme}-{label}-{'js' if script else 'nojs'}.png",
            full_page=True,
        )
    assert found == {}
    assert {url.split("?")[0] for url in network.elsewhere()} <= {EMBED}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_on_the_summary_page_with_receipts(open_page, urls, scheme):
    page, network = open_page(urls["summary"], color_scheme=scheme)
    found = {}
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        results = Axe().run(page, options=AXE_OPTIONS)
        if results.violations_count:
            found[label] = results.generate_report()
    assert found == {}
    assert network.elsewhere() == []
