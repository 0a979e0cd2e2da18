"""In a real browser, on the demo site: a reader types into the header's search box the way
people type — a straight apostrophe for a typographic one and the reverse, a misspelt word —
and finds the video, or follows "did you mean" to it. Runs on the database configured
(PostgreSQL in CI; SQLite too: tests/conftest.py gives integration tests a database file)."""

import pytest
from playwright.sync_api import expect

from summaries.pagecache.generation import content_changed
from tests.integration.browser_helpers import screenshot

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

IPO = "Matthew Berman Examines Anthropic’s IPO Filing"
RUBIK = "Kimi K3.1 and a Rubik’s Cube Solver Demonstration"
BENCHMARK = "An AI-Generated Kimi Benchmark Chart Used Invented Scores"


@pytest.fixture
def site(demo):
    # As every write path does: pages and fragments (the "did you mean" vocabulary) kept
    # for an earlier test's content are stale now.
    content_changed()
    return demo


def search_for(page, words: str) -> None:
    """Type the words into the header's search box and press Enter."""
    field = page.get_by_role("search", name="Site search").get_by_role("searchbox")
    field.fill("")
    field.press_sequentially(words)
    field.press("Enter")
    page.wait_for_load_state()


def results_heading(page):
    return page.locator("#results-heading")


def expect_found(page, words: str, title: str) -> None:
    expect(results_heading(page)).to_have_text(f"1 result for “{words}”")
    expect(page.get_by_role("link", name=title)).to_be_visible()


@pytest.mark.parametrize(
    ("typed", "title"),
    [
        ("Anthropic's IPO", IPO),
        ("Anthropic’s IPO", IPO),
        ("anthropicʼs ipo", IPO),
        ("Rubik's cube", RUBIK),
    ],
)
def test_any_apostrophe_typed_finds_the_title(reader, site, typed, title):
    reader.goto(site + "/")

    search_for(reader, typed)

    expect_found(reader, typed, title)


def test_did_you_mean_corrects_a_misspelt_word_and_leads_to_the_videos(reader, site):
    reader.goto(site + "/")

    search_for(reader, "benchmrk")
    expect(results_heading(reader)).to_have_text("No results for “benchmrk”")
    suggestion = reader.locator(".did-you-mean a")
    expect(suggestion).to_have_text("benchmark")
    screenshot(reader, "search-typing-did-you-mean")
    suggestion.click()
    expect(results_heading(reader)).to_contain_text("for “benchmark”")
    expect(reader.get_by_role("link", name=BENCHMARK)).to_be_visible()

    # A possessive in the text, never in the suggestion.
    search_for(reader, "antropic")
    expect(suggestion).to_have_text("anthropic")
    suggestion.click()
    expect(reader.get_by_role("link", name=IPO)).to_be_visible()
