"""The summary page's click-to-load player, video lengths and reading time.

The browser side (nothing requested from YouTube before play, seeking, keyboard) is in
tests/integration/test_player_browser.py.
"""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core.cache import cache

from summaries.models import Summary
from summaries.templatetags.curation import reading_time, running_time

from .factories import ChapterFactory, KeyPointFactory, SummaryFactory, TakeawayFactory

pytestmark = pytest.mark.django_db

PLAYER_JS = Path(settings.BASE_DIR) / "static/summaries/js/player.js"


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


class Elements(HTMLParser):
    """Every start tag of a page with its attributes, in order."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def elements(content: str) -> list[tuple[str, dict]]:
    parser = Elements()
    parser.feed(content)
    return parser.tags


def is_elsewhere(url: str) -> bool:
    """An absolute URL (or a protocol-relative one) to a host other than the test server."""
    host = urlsplit(url.strip()).hostname
    return bool(host) and host != "testserver"


def youtube_summary(**kwargs) -> Summary:
    summary = SummaryFactory(live=True, video__source_url="https://youtu.be/dQw4w9WgXcQ", **kwargs)
    ChapterFactory(summary=summary, title="Opening", start_time=201)
    KeyPointFactory(summary=summary, time=65)
    TakeawayFactory(summary=summary, time=3725)
    return summary


def page(client, summary) -> str:
    response = client.get(summary.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


# --- Markup -------------------------------------------------------------------------------


def test_youtube_video_gets_a_poster_with_a_link_and_a_play_button_for_scripts(client):
    content = page(client, youtube_summary())
    tags = elements(content)
    (player,) = [attrs for tag, attrs in tags if attrs.get("id") == "player"]
    assert player["data-youtube-id"] == "dQw4w9WgXcQ"
    assert player["aria-label"] == "Video"
    (button,) = [
        attrs for tag, attrs in tags if tag == "button" and "player-play" in attrs.get("class", "")
    ]
    assert "hidden" in button  # shown by player.js: without scripts it could do nothing
    (link,) = [attrs for tag, attrs in tags if "player-link" in attrs.get("class", "")]
    assert link["href"] == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
    scripts = [attrs for tag, attrs in tags if tag == "script" and "src" in attrs]
    assert scripts == [{"defer": None, "src": "/static/summaries/js/player.js"}]
    # The player comes right after the summary's header, before "In 30 seconds".
    assert content.index("</header>\n  ", content.index("<article")) < content.index('id="player"')
    assert content.index('id="player"') < content.index('id="tldr"')


def test_video_elsewhere_than_youtube_gets_no_player_and_no_script(client):
    summary = SummaryFactory(live=True, video__source_url="https://vimeo.com/76979871")
    ChapterFactory(summary=summary, start_time=30)
    content = page(client, summary)
    assert 'id="player"' not in content
    assert "player.js" not in content
    assert "Watch from 0:30" in content  # still a link into the video, where it is hosted


def test_nothing_on_the_page_is_fetched_from_another_host(client):
    """Before play, a reader's browser contacts nobody but us: no iframe, image, script,
    style, font or connection hint from the platform. The only addresses elsewhere are links
    a reader may follow (the poster's and the "Watch from" links to youtube.com/watch)."""
    content = page(client, youtube_summary())
    assert "<iframe" not in content
    assert "youtube-nocookie" not in content  # the embed's address lives in player.js only
    for tag, attrs in elements(content):
        for name, value in attrs.items():
            if any(is_elsewhere(token) for token in re.split(r"[\s,]+", value or "")):
                assert (tag, name) == ("a", "href"), (tag, attrs)
        if tag == "link":
            assert attrs.get("rel") not in {"preconnect", "dns-prefetch", "preload", "prefetch"}
    player_links = [
        attrs["href"]
        for tag, attrs in elements(content)
        if tag == "a" and "youtube" in urlsplit(attrs.get("href", "")).netloc
    ]
    assert player_links and all(
        href.startswith("https://www.youtube.com/watch?v=dQw4w9WgXcQ") for href in player_links
    )


def test_player_script_embeds_only_the_privacy_enhanced_player():
    script = PLAYER_JS.read_text()
    hosts = {urlsplit(url).hostname for url in re.findall(r"https?://[^\s\"'/]+", script)}
    assert hosts <= {"www.youtube-nocookie.com"}
    assert '"https://www.youtube-nocookie.com/embed/"' in script


def test_watch_from_links_open_the_video_at_their_time_without_javascript(client):
    content = page(client, youtube_summary())
    watch = "https://www.youtube.com/watch?v=dQw4w9WgXcQ&amp;t="
    assert f'<a href="{watch}201s" rel="nofollow noopener">Watch from 3:21</a>' in content
    assert f'<a class="time" href="{watch}65s">Watch from 1:05</a>' in content
    assert f'<a class="time" href="{watch}3725s">Watch from 1:02:05</a>' in content


# --- The policy -----------------------------------------------------------------------------


def test_content_security_policy_allows_frames_from_the_privacy_enhanced_player_only(client):
    response = client.get(youtube_summary().get_absolute_url())
    directives = dict(
        (part.split()[0], sorted(part.split()[1:]))
        for part in response["Content-Security-Policy"].split(";")
        if part.strip()
    )
    assert directives == {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],  # thumbnails are stored and served here
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "frame-src": ["https://www.youtube-nocookie.com"],
    }


# --- Lengths and reading time --------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (None, ""),
        ("", ""),
        (1, "0:01"),
        (26, "0:26"),
        (59, "0:59"),
        (60, "1:00"),
        (1550, "25:50"),  # not rounded to "26 min"
        (2061, "34:21"),
        (3599, "59:59"),
        (3600, "1:00:00"),
        (3727, "1:02:07"),
        (7 * 24 * 3600, "168:00:00"),
        ("2061", "34:21"),
    ],
)
def test_running_time_reads_as_video_sites_show_a_length(seconds, expected):
    assert running_time(seconds) == expected


def test_header_shows_the_length_and_reading_time_as_clock_times(client):
    summary = youtube_summary(video__duration_seconds=3900)
    content = page(client, summary)
    assert '<span class="visually-hidden">Duration </span>1:05:00</span>' in content
    assert '<span class="reading-time">1 min read</span>' in content
    assert '<span class="time">3:21</span>' in content  # the table of contents' chapter start


PARTS = ["key_points", "takeaways", "chapters", "caveats"]


def test_reading_time_counts_the_words_of_every_part_of_the_summary():
    summary = SummaryFactory(live=True, tldr="word " * 100)
    ChapterFactory(summary=summary, body="word " * 1000)
    KeyPointFactory(summary=summary, body="word " * 100)
    TakeawayFactory(summary=summary, text="word " * 100)
    summary = Summary.objects.prefetch_related(*PARTS).get(pk=summary.pk)
    # ~1300 words and a few for titles, at 230 a minute.
    assert reading_time(summary) == "6 min read"


def test_reading_time_is_at_least_a_minute_and_makes_no_query(django_assert_num_queries):
    youtube_summary()
    summary = Summary.objects.prefetch_related(*PARTS).get()
    with django_assert_num_queries(0):
        assert reading_time(summary) == "1 min read"


def test_player_and_reading_time_add_no_query(client, django_assert_max_num_queries):
    """The same page for a video on YouTube (player, reading time) and elsewhere (neither
    player nor script) takes the same queries; test_views pins that they do not grow."""
    counts = []
    for url in ("https://www.youtube.com/watch?v=aaaaaaaaaaa", "https://vimeo.com/1"):
        summary = SummaryFactory(live=True, video__source_url=url)
        ChapterFactory(summary=summary, start_time=3)
        KeyPointFactory(summary=summary, time=4)
        with django_assert_max_num_queries(10_000) as captured:
            page(client, summary)
        counts.append(len(captured.captured_queries))
    assert counts[0] == counts[1]
