"""Links others keep (canonical and Open Graph URLs, JSON-LD, feeds, oEmbed, sitemaps, the
API's absolute URLs) start with SITE_URL, whatever scheme and Host the request came with:
a shared cache keeps them for every reader, so one request must not choose them."""

import json
import re

import pytest
from django.urls import reverse

from summaries.reader import memento

from .factories import SummaryFactory

pytestmark = pytest.mark.django_db

SITE = "https://curation.example"
# What one anonymous client may send: another host the site answers to, on another port,
# and a forwarded scheme (trusted here, as behind a TLS proxy).
FORGED = {"HTTP_HOST": "localhost:9999", "HTTP_X_FORWARDED_PROTO": "http"}


@pytest.fixture
def site(settings):
    settings.SITE_URL = SITE
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = False
    settings.ALLOWED_HOSTS = ["testserver", "localhost"]
    return settings


def absolute_urls(text: str) -> list[str]:
    return re.findall(r"https?://[^\s\"'<>\\]+", text)


def own_links(text: str) -> list[str]:
    """The absolute links of `text` to this site, by any name (not to XML namespaces, a
    video platform, schema.org)."""
    ours = ("localhost", "testserver", "curation.example")
    return [url for url in absolute_urls(text) if any(name in url for name in ours)]


def assert_site_links(text: str) -> None:
    links = own_links(text)
    assert links, "the answer holds absolute links"
    wrong = [url for url in links if not url.startswith(SITE + "/") and url != SITE]
    assert not wrong, wrong
    assert "localhost" not in text and "9999" not in text


def test_a_summary_page_links_to_itself_on_site_url(client, site):
    summary = SummaryFactory(live=True)
    text = client.get(summary.get_absolute_url(), **FORGED).content.decode()
    page = SITE + summary.get_absolute_url()
    assert f'<link rel="canonical" href="{page}">' in text
    assert f'content="{page}"' in text  # og:url
    assert_site_links(text)


@pytest.mark.parametrize(
    "name", ["summaries:feed-rss", "summaries:feed-atom", "summaries:corrections-feed-rss"]
)
def test_feeds_link_to_site_url(client, site, name):
    SummaryFactory(live=True)
    text = client.get(reverse(name), **FORGED).content.decode()
    assert_site_links(text)


def test_the_oembed_card_links_to_site_url(client, site):
    summary = SummaryFactory(live=True)
    page = SITE + summary.video.get_absolute_url()
    answer = client.get(reverse("oembed"), {"url": page, "format": "json"}, **FORGED)
    assert answer.status_code == 200
    card = answer.json()
    assert card["author_url"].startswith(SITE + "/") and card["provider_url"] == SITE + "/"
    assert_site_links(json.dumps(card))
    # The discovery link on the page points at this site's oEmbed endpoint.
    text = client.get(summary.get_absolute_url(), **FORGED).content.decode()
    assert f'href="{SITE}{reverse("oembed")}?' in text


def test_the_sitemap_and_robots_txt_link_to_site_url(client, site):
    SummaryFactory(live=True)
    assert_site_links(client.get("/sitemap.xml", **FORGED).content.decode())
    robots = client.get("/robots.txt", **FORGED).content.decode()
    assert f"Sitemap: {SITE}/sitemap.xml" in robots


def test_api_reads_link_to_site_url(client, site):
    summaries = SummaryFactory.create_batch(3, live=True)
    slug = summaries[0].video.slug
    detail = client.get(f"/api/v1/summaries/{slug}/", **FORGED)
    assert detail.status_code == 200
    assert detail.json()["html_url"] == SITE + summaries[0].video.get_absolute_url()
    assert_site_links(detail.content.decode())
    listed = client.get("/api/v1/summaries/", {"page_size": 1}, **FORGED)
    assert listed.status_code == 200
    assert listed.json()["next"].startswith(SITE + "/api/v1/summaries/?")
    assert_site_links(listed.content.decode())
    for path in ("/api/v1/videos/", "/api/v1/channels/"):
        answer = client.get(path, **FORGED)
        assert answer.status_code == 200, path
        assert "localhost" not in answer.content.decode(), path


def test_memento_links_are_on_site_url(rf, site):
    request = rf.get("/", **FORGED)
    assert memento.original_url(request, "a-video").startswith(SITE + "/")
    assert memento.timemap_url(request, "a-video").startswith(SITE + "/")
