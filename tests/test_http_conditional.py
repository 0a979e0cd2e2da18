"""Reader pages over HTTP: validators and 304s, lifetimes, gzip stored once, the icons."""

import datetime
import gzip
import time
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.cache import cache
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone
from django.utils.http import http_date, parse_http_date

from summaries.editing import workflow
from summaries.models import ContentGeneration, Summary
from summaries.pagecache import generation, pages

from .factories import AppearanceFactory, SummaryFactory, TopicFactory, publish_edit

pytestmark = pytest.mark.django_db

PAGE_CACHE_CONTROL = {"public", "max-age=0", "must-revalidate", "s-maxage=60"}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


@pytest.fixture
def quiet():
    """No content has changed for a minute, so pages rendered now get a Last-Modified."""
    generation.current()
    ContentGeneration.objects.update(changed_at=time.time() - 60)


def directives(response) -> set[str]:
    return {d.strip() for d in response["Cache-Control"].split(",")}


def vary(response) -> set[str]:
    return {v.strip().lower() for v in response["Vary"].split(",")}


@pytest.fixture
def summary():
    return SummaryFactory(live=True, tldr="First words.")


def reader_pages(summary) -> list[str]:
    person = AppearanceFactory(video=summary.video).person
    topic = TopicFactory()
    summary.video.topics.add(topic)
    return [
        reverse("summaries:home"),
        summary.get_absolute_url(),
        summary.video.channel.get_absolute_url(),
        person.get_absolute_url(),
        topic.get_absolute_url(),
        reverse("summaries:feed-rss"),
        reverse("summaries:channel-feed-atom", kwargs={"slug": summary.video.channel.slug}),
        reverse("sitemap"),
    ]


# --- Validators and 304s ------------------------------------------------------------------


def test_every_reader_page_has_validators_and_answers_304_from_the_cache_with_one_query(
    client, summary, quiet, django_assert_num_queries
):
    for url in reader_pages(summary):
        first = client.get(url)
        assert first.status_code == 200, url
        assert first["ETag"].startswith('"') and first["ETag"].endswith('"'), url
        assert first["Last-Modified"], url
        assert directives(first) == PAGE_CACHE_CONTROL, url
        with django_assert_num_queries(3):  # the content generation, once per request
            not_modified = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
            by_date = client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
            head = client.head(url, HTTP_IF_NONE_MATCH=first["ETag"])
        assert not_modified.status_code == by_date.status_code == head.status_code == 304, url
        assert not_modified.content == b""
        assert not_modified["ETag"] == first["ETag"]
        assert directives(not_modified) == PAGE_CACHE_CONTROL
        assert "accept-encoding" in vary(not_modified)


def test_a_page_kept_in_this_process_answers_304_with_no_page_read_and_one_query(
    client, settings, summary, django_assert_num_queries
):
    settings.PAGE_CACHE_LOCAL_BYTES = 1024 * 1024  # before the client's first request
    url = summary.get_absolute_url()
    tag = client.get(url, HTTP_ACCEPT_ENCODING="gzip")["ETag"]
    for key in [key for key in cache._cache if ":page:" in key]:
        cache.delete(key.split(":", 2)[2])  # only this process's copy is left
    with django_assert_num_queries(1):  # the content generation
        assert (
            client.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=tag).status_code == 304
        )


def test_pages_are_served_with_validators_and_gzip_while_the_cache_is_down(
    client, settings, summary
):
    settings.CACHES = {
        "default": {
            "BACKEND": "summaries.pagecache.backend.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.2},
        }
    }
    url = summary.get_absolute_url()
    first = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert first.status_code == 200 and first["Content-Encoding"] == "gzip"
    again = client.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304


def test_an_uncached_page_answers_304_too(client, summary):
    url = summary.get_absolute_url()
    # A parameter the page does not read: served, never stored, so rendered every time.
    first = client.get(url, {"utm_source": "x"})
    assert first["ETag"] and "Last-Modified" not in first
    again = client.get(url, {"utm_source": "y"}, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert again["ETag"] == first["ETag"]
    other = client.get(url, {"utm_source": "z"}, HTTP_IF_NONE_MATCH='"something-else"')
    assert other.status_code == 200


def test_the_first_request_for_a_page_is_answered_304_when_it_matches(client, summary):
    url = summary.get_absolute_url()
    tag = client.get(url)["ETag"]
    cache.clear()  # the page is rendered again for the conditional request, and stored
    assert client.get(url, HTTP_IF_NONE_MATCH=tag).status_code == 304
    assert client.get(url)["ETag"] == tag


def test_an_edit_changes_the_etag_and_the_old_one_gets_the_new_page(client, summary):
    url = summary.get_absolute_url()
    before = client.get(url)["ETag"]
    publish_edit(summary, tldr="Second words.")
    changed = client.get(url, HTTP_IF_NONE_MATCH=before)
    assert changed.status_code == 200
    assert "Second words." in changed.content.decode()
    assert changed["ETag"] != before


def test_an_unpublished_page_is_404_even_for_its_old_etag_and_is_not_kept_long(client, summary):
    url = summary.get_absolute_url()
    first = client.get(url)
    client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])  # the page is in the cache
    workflow.unpublish_summary(summary=summary)
    gone = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert gone.status_code == 404
    assert "ETag" not in gone
    assert directives(gone) == PAGE_CACHE_CONTROL
    dated = client.get(url, HTTP_IF_MODIFIED_SINCE=http_date(time.time() + 3600))
    assert dated.status_code == 404


def test_an_unrelated_edit_keeps_the_etag_of_a_page_that_came_out_the_same(client, summary):
    other = SummaryFactory(live=True)
    url = other.get_absolute_url()
    before = client.get(url)["ETag"]
    publish_edit(summary, tldr="Another page's words.")  # every page is rendered again
    assert client.get(url, HTTP_IF_NONE_MATCH=before).status_code == 304


def test_if_modified_since_is_answered_by_the_render_date(client, summary, quiet):
    url = summary.get_absolute_url()
    first = client.get(url)
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    earlier = http_date(time.time() - 3600)
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=earlier).status_code == 200
    # If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3).
    mismatch = client.get(
        url, HTTP_IF_NONE_MATCH='"other"', HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]
    )
    assert mismatch.status_code == 200


def test_a_page_rendered_right_after_a_change_has_no_last_modified(client, summary):
    """Within the same second as a change, a date could not tell the versions apart."""
    url = summary.get_absolute_url()
    publish_edit(summary, tldr="Second words.")
    response = client.get(url)
    assert "Last-Modified" not in response
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=http_date(time.time() + 60)).status_code == 200


def test_last_modified_waits_for_a_scheduled_publication_close_at_hand():
    now = time.time()
    assert pages.last_modified(now, now - 60, None) == int(now)
    assert pages.last_modified(now, now - 60, now + 600) == int(now)
    assert pages.last_modified(now, now - 60, now + 1) is None
    assert pages.last_modified(now, now - 1, None) is None
    assert pages.last_modified(now, None, None) is None


def test_a_feeds_own_date_is_replaced_by_the_render_date(client, summary, quiet):
    """The feed framework dates a feed by its newest item, which goes back in time when
    that item is unpublished: a client would keep the feed that still lists it."""
    long_ago = timezone.now() - datetime.timedelta(days=30)
    Summary.objects.filter(pk=summary.pk).update(publish_at=long_ago, updated_at=long_ago)
    response = client.get(reverse("summaries:feed-rss"))
    assert abs(parse_http_date(response["Last-Modified"]) - time.time()) < 5


# --- Compression ---------------------------------------------------------------------------


def test_pages_are_sent_gzipped_when_asked_and_as_they_are_when_not(client, summary):
    url = summary.get_absolute_url()
    plain = client.get(url)
    zipped = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == plain.content
    assert int(zipped["Content-Length"]) == len(zipped.content) < len(plain.content) / 2
    assert "accept-encoding" in vary(plain) and "accept-encoding" in vary(zipped)
    # One representation per coding, each with its own strong ETag (RFC 9110 §8.8.3).
    assert zipped["ETag"] == plain["ETag"][:-1] + '-gzip"'
    assert zipped["Content-Security-Policy"] == plain["Content-Security-Policy"]


def test_each_coding_is_revalidated_against_its_own_etag(client, summary):
    url = summary.get_absolute_url()
    plain = client.get(url)
    zipped = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert (
        client.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=zipped["ETag"]).status_code
        == 304
    )
    assert (
        client.get(url, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=plain["ETag"]).status_code
        == 200
    )
    assert client.get(url, HTTP_IF_NONE_MATCH=zipped["ETag"]).status_code == 200


def test_a_cache_hit_compresses_nothing(client, summary, django_assert_num_queries):
    url = summary.get_absolute_url()
    with mock.patch.object(pages.gzip, "compress", wraps=gzip.compress) as compress:
        client.get(url)  # a miss: the page is stored with and without gzip
        assert compress.call_count == 1
        with django_assert_num_queries(6):  # the content generation, once per request
            for _ in range(3):
                assert client.get(url, HTTP_ACCEPT_ENCODING="gzip")["Content-Encoding"] == "gzip"
                assert "Content-Encoding" not in client.get(url)
        assert compress.call_count == 1


def test_an_uncached_page_is_compressed_only_for_clients_that_ask(client, summary):
    url = summary.get_absolute_url()
    with mock.patch.object(pages.gzip, "compress", wraps=gzip.compress) as compress:
        assert "Content-Encoding" not in client.get(url, {"utm_source": "a"})
        assert compress.call_count == 0
        zipped = client.get(url, {"utm_source": "b"}, HTTP_ACCEPT_ENCODING="gzip")
        assert compress.call_count == 1
    assert zipped["Content-Encoding"] == "gzip"


def test_pages_for_signed_in_people_and_search_results_are_never_compressed(
    client, summary, admin_user
):
    """BREACH: secrets (CSRF tokens, session data) and reflected input never meet gzip."""
    search = client.get(reverse("summaries:search"), {"q": "words"}, HTTP_ACCEPT_ENCODING="gzip")
    assert search.status_code == 200 and "Content-Encoding" not in search
    client.force_login(admin_user)
    page = client.get(summary.get_absolute_url(), HTTP_ACCEPT_ENCODING="gzip")
    assert page.status_code == 200 and "Content-Encoding" not in page


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("", "identity"),
        ("gzip", "gzip"),
        ("deflate, gzip;q=1.0, *;q=0.5", "gzip"),
        ("gzip;q=0", "identity"),
        ("GZIP ; Q=0.3", "gzip"),
        ("x-gzip", "gzip"),
        ("br, deflate", "identity"),
        ("*", "gzip"),
        ("*;q=0", "identity"),
        ("gzip;q=0, *", "identity"),
        ("identity", "identity"),
        ("gzip;q=nonsense", "identity"),
    ],
)
def test_accept_encoding_is_read_as_rfc_9110_says(header, expected):
    request = RequestFactory().get("/", HTTP_ACCEPT_ENCODING=header)
    assert pages.preferred_encoding(request) == expected


# --- Icons ---------------------------------------------------------------------------------


def test_favicon_ico_answers_with_an_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00"
    assert "max-age=86400" in response["Cache-Control"]


def test_the_manifest_names_the_site_and_its_icons(client, django_assert_num_queries):
    response = client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/manifest+json")
    manifest = response.json()
    assert manifest["short_name"] == "Curation" and manifest["start_url"] == "/"
    assert manifest["display"] == "standalone"
    assert manifest["theme_color"] == "#0b57d0" and manifest["background_color"] == "#fdfdfb"
    sizes = {icon["sizes"] for icon in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes
    for icon in manifest["icons"]:
        assert finders.find(icon["src"].removeprefix(settings.STATIC_URL)), icon
    with django_assert_num_queries(1):  # the content generation, as for any cached page
        again = client.get("/manifest.webmanifest", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304


def test_pages_link_the_icons_and_the_manifest(client):
    head = client.get(reverse("summaries:home")).content.decode().split("</head>")[0]
    assert 'rel="icon"' in head and "icon.svg" in head and "favicon-32.png" in head
    assert 'rel="apple-touch-icon"' in head
    assert f'rel="manifest" href="{reverse("web-manifest")}"' in head
