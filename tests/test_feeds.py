import datetime
import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse
from django.utils import timezone

from summaries.models import Summary
from summaries.reader.feeds import FEED_SIZE

from .factories import ChannelFactory, SummaryFactory, VideoFactory

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"
RSS_TYPE = "application/rss+xml; charset=utf-8"
ATOM_TYPE = "application/atom+xml; charset=utf-8"


def parse(response):
    return ET.fromstring(response.content)  # noqa: S314 - the site's own feed


def rss_titles(response):
    return [item.findtext("title") for item in parse(response).iter("item")]


def atom_titles(response):
    return [entry.findtext(f"{ATOM}title") for entry in parse(response).iter(f"{ATOM}entry")]


def summary(title, channel, hours_ago=None, status=Summary.Status.PUBLISHED):
    """A summary of a new video; hours_ago < 0 schedules it in the future."""
    publish_at = None
    if hours_ago is not None:
        publish_at = timezone.now() - datetime.timedelta(hours=hours_ago)
    return SummaryFactory(
        video=VideoFactory(title=title, channel=channel), status=status, publish_at=publish_at
    )


@pytest.fixture
def channel():
    return ChannelFactory(name="Matthew Berman", slug="matthew-berman")


@pytest.fixture
def summaries(channel):
    other = ChannelFactory(name="Other channel", slug="other")
    return {
        "older": summary("Older live", channel, hours_ago=48),
        "newer": summary("Newer live", channel, hours_ago=1),
        "other": summary("Other channel live", other, hours_ago=24),
        "draft": summary("A draft", channel, status=Summary.Status.DRAFT),
        "review": summary("In review", channel, status=Summary.Status.IN_REVIEW),
        "scheduled": summary("Scheduled", channel, hours_ago=-2),
    }


@pytest.mark.parametrize(
    ("name", "content_type", "titles"),
    [("feed-rss", RSS_TYPE, rss_titles), ("feed-atom", ATOM_TYPE, atom_titles)],
)
def test_site_feed_lists_only_live_summaries_newest_first(
    client, summaries, name, content_type, titles
):
    response = client.get(reverse(f"summaries:{name}"))

    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert titles(response) == ["Newer live", "Other channel live", "Older live"]


def test_rss_item_carries_link_text_dates_author_and_guid(client, summaries):
    live = summaries["newer"]
    Summary.objects.filter(pk=live.pk).update(tldr="Thirty <b>seconds</b> & more.")

    root = parse(client.get(reverse("summaries:feed-rss")))

    channel = root.find("channel")
    assert channel.findtext("link") == "http://testserver/"
    item = channel.find("item")
    page = f"http://testserver{live.get_absolute_url()}"
    assert item.findtext("title") == "Newer live"
    assert item.findtext("link") == page
    # Readers render an RSS description as HTML: the plain text arrives escaped, so that it
    # reads "Thirty <b>seconds</b> & more." rather than setting a word in bold.
    assert item.findtext("description") == "Thirty &lt;b&gt;seconds&lt;/b&gt; &amp; more."
    assert item.find("guid").text == page
    assert item.find("guid").get("isPermaLink") == "true"
    assert "Matthew Berman" in item.findtext("{http://purl.org/dc/elements/1.1/}creator")
    pubdate = datetime.datetime.strptime(item.findtext("pubDate"), "%a, %d %b %Y %H:%M:%S %z")
    assert pubdate == live.publish_at.replace(microsecond=0)


def test_atom_entry_carries_id_dates_summary_and_author(client, summaries):
    live = summaries["newer"]
    live.refresh_from_db()

    root = parse(client.get(reverse("summaries:feed-atom")))

    entry = root.find(f"{ATOM}entry")
    page = f"http://testserver{live.get_absolute_url()}"
    assert entry.findtext(f"{ATOM}id") == page
    assert entry.find(f"{ATOM}link").get("href") == page
    assert entry.findtext(f"{ATOM}summary") == live.tldr
    assert entry.findtext(f"{ATOM}author/{ATOM}name") == "Matthew Berman"
    published = datetime.datetime.fromisoformat(entry.findtext(f"{ATOM}published"))
    updated = datetime.datetime.fromisoformat(entry.findtext(f"{ATOM}updated"))
    assert published == live.publish_at
    assert updated == live.publish_at  # no update or correction since it went live


def test_rss_titles_are_escaped_html_and_atom_titles_are_text(client, channel):
    summary("Q&A: <b>tags</b> & more", channel, hours_ago=1)

    rss = parse(client.get(reverse("summaries:feed-rss")))
    atom = parse(client.get(reverse("summaries:feed-atom")))

    assert (
        rss.find("channel/item").findtext("title") == "Q&amp;A: &lt;b&gt;tags&lt;/b&gt; &amp; more"
    )
    entry_title = atom.find(f"{ATOM}entry/{ATOM}title")
    assert entry_title.get("type", "text") == "text"
    assert entry_title.text == "Q&A: <b>tags</b> & more"


@pytest.mark.parametrize("name", ["feed-rss", "feed-atom"])
def test_line_breaks_of_the_thirty_seconds_become_br_and_nothing_else_is_markup(
    client, summaries, name
):
    Summary.objects.filter(pk=summaries["newer"].pk).update(tldr="First <line>\r\nSecond & last")

    root = parse(client.get(reverse(f"summaries:{name}")))

    description = next(
        e
        for e in root.iter()
        if e.tag in ("description", f"{ATOM}summary") and e.text and e.text.startswith("First")
    )
    assert description.text == "First &lt;line&gt;<br>Second &amp; last"


@pytest.mark.parametrize("name", ["feed-rss", "feed-atom"])
def test_control_characters_in_text_do_not_break_the_feed(client, channel, name):
    # Word writes a manual line break as a vertical tab; XML 1.0 cannot carry one at all.
    live = summary("Vertical\x0btab", channel, hours_ago=1)
    Summary.objects.filter(pk=live.pk).update(tldr="Form\x0cfeed and escape\x1b.")

    response = client.get(reverse(f"summaries:{name}"))

    assert response.status_code == 200
    root = parse(response)
    texts = [e.text for e in root.iter() if e.text]
    assert "Vertical tab" in texts
    assert "Form feed and escape ." in texts


@pytest.mark.parametrize(
    ("name", "content_type", "titles"),
    [
        ("channel-feed-rss", RSS_TYPE, rss_titles),
        ("channel-feed-atom", ATOM_TYPE, atom_titles),
    ],
)
def test_channel_feed_lists_only_that_channels_live_summaries(
    client, summaries, channel, name, content_type, titles
):
    response = client.get(reverse(f"summaries:{name}", kwargs={"slug": channel.slug}))

    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert titles(response) == ["Newer live", "Older live"]


def test_channel_feed_links_to_the_channel_page(client, summaries, channel):
    root = parse(client.get(reverse("summaries:channel-feed-rss", kwargs={"slug": channel.slug})))

    assert root.find("channel").findtext("title") == "Matthew Berman — Curation"
    assert root.find("channel").findtext("link") == f"http://testserver{channel.get_absolute_url()}"


@pytest.mark.parametrize("name", ["channel-feed-rss", "channel-feed-atom"])
def test_channel_feed_of_unknown_channel_is_404(client, name):
    response = client.get(reverse(f"summaries:{name}", kwargs={"slug": "nobody"}))

    assert response.status_code == 404


def test_feed_holds_at_most_the_newest_fifty(client, channel):
    for hours in range(FEED_SIZE + 2):
        summary(f"Video {hours} hours ago", channel, hours_ago=hours + 1)

    titles = rss_titles(client.get(reverse("summaries:feed-rss")))

    assert len(titles) == FEED_SIZE
    assert titles[0] == "Video 0 hours ago"
    assert titles[-1] == f"Video {FEED_SIZE - 1} hours ago"


@pytest.mark.parametrize("count", [1, 10])
@pytest.mark.parametrize(
    ("name", "queries"),
    [
        # +1 for the content generation the page cache reads, +1 on a cache miss: the next
        # scheduled publish time bounds the cache lifetime.
        ("feed-rss", 3),
        ("feed-atom", 3),
        ("channel-feed-rss", 4),  # the channel, then its summaries
        ("channel-feed-atom", 4),
    ],
)
def test_feed_query_count_does_not_grow_with_items(
    client, django_assert_num_queries, channel, count, name, queries
):
    for hours in range(count):
        summary(f"Video {hours}", channel, hours_ago=hours + 1)
    kwargs = {"slug": channel.slug} if name.startswith("channel") else {}

    with django_assert_num_queries(queries):
        response = client.get(reverse(f"summaries:{name}", kwargs=kwargs))
    assert response.status_code == 200
    with django_assert_num_queries(1):  # served from the page cache: the content generation
        assert client.get(reverse(f"summaries:{name}", kwargs=kwargs)).status_code == 200
