"""The page cache middleware: who gets cached pages, what a cached page carries."""

import datetime
import random

import pytest
import time_machine
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from summaries.editing import workflow
from summaries.models import Summary
from summaries.pagecache import generation, middleware

from .factories import (
    AppearanceFactory,
    SummaryFactory,
    TopicFactory,
    UserFactory,
    publish_edit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def test_a_cached_page_keeps_the_headers_of_the_rendered_one(client, django_assert_num_queries):
    summary = SummaryFactory(live=True)
    first = client.get(summary.get_absolute_url())
    with django_assert_num_queries(1):  # the content generation, which it was stored under
        again = client.get(summary.get_absolute_url())
    assert again.content == first.content
    for header in ("Content-Type", "Content-Security-Policy", "X-Frame-Options"):
        assert again[header] == first[header]
    # Browsers revalidate every time; shared caches keep a page a minute (pagecache/pages.py).
    directives = {d.strip() for d in again["Cache-Control"].split(",")}
    assert directives == {"public", "max-age=0", "must-revalidate", "s-maxage=60"}
    assert again["Content-Length"] == str(len(first.content))


def test_a_cached_page_keeps_securitymiddleware_s_headers_and_its_https_redirect(
    client, settings, django_assert_num_queries
):
    """The page cache answers before SecurityMiddleware: a page is stored with the headers
    it gave the rendered page, and plain HTTP is still redirected to HTTPS."""
    settings.SECURE_SSL_REDIRECT = False
    settings.SECURE_HSTS_SECONDS = 3600
    url = SummaryFactory(live=True).get_absolute_url()
    assert client.get(url).status_code == 200  # stored for plain-HTTP readers
    settings.SECURE_SSL_REDIRECT = True
    client = Client()  # middleware built again, with the redirect on
    first = client.get(url, secure=True)
    with django_assert_num_queries(1):  # from the cache
        again = client.get(url, secure=True)
    for header in (
        "X-Content-Type-Options",
        "Referrer-Policy",
        "Cross-Origin-Opener-Policy",
        "Strict-Transport-Security",
    ):
        assert again[header] == first[header], header
    plain = client.get(url)
    assert plain.status_code == 301
    assert plain["Location"] == f"https://testserver{url}"


def test_a_session_cookie_or_authorization_header_bypasses_the_cache(
    client, django_assert_max_num_queries
):
    summary = SummaryFactory(live=True, tldr="Old words.")
    client.get(summary.get_absolute_url())
    # Changed behind the cache's back (no signal), so only a fresh render shows it.
    type(summary).objects.filter(pk=summary.pk).update(tldr="New words.")
    assert "Old words." in client.get(summary.get_absolute_url()).content.decode()
    client.cookies[settings.SESSION_COOKIE_NAME] = "whatever"
    assert "New words." in client.get(summary.get_absolute_url()).content.decode()
    del client.cookies[settings.SESSION_COOKIE_NAME]
    fresh = client.get(summary.get_absolute_url(), HTTP_AUTHORIZATION="Token abc")
    assert "New words." in fresh.content.decode()


def test_staff_pages_are_never_stored_for_readers(client):
    summary = SummaryFactory(live=True)
    staff = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(staff)
    client.get(summary.get_absolute_url())
    client.get(reverse("summaries:summary-preview", kwargs={"slug": summary.video.slug}))
    assert stored_pages() == []


def test_a_page_stored_before_an_edit_is_not_served_after_it(client):
    summary = SummaryFactory(live=True, tldr="Before.")
    client.get(summary.get_absolute_url())
    publish_edit(summary, tldr="After.")  # makes pages stale
    assert "After." in client.get(summary.get_absolute_url()).content.decode()


def stored_pages():
    return [key for key in cache._cache if ":page:" in key]


def drop_stored_pages():
    for key in stored_pages():
        cache.delete(key.split(":", 2)[2])  # ":1:page:…" is the key "page:…", version 1


def test_error_pages_and_post_requests_are_not_cached(client):
    assert client.get("/videos/missing/").status_code == 404
    assert client.post(reverse("summaries:home")).status_code == 405
    assert stored_pages() == []
    assert not middleware.may_serve_cached(client.post("/").wsgi_request)
    client.get(reverse("summaries:home"))
    assert len(stored_pages()) == 2  # one page, stored with and without gzip


@pytest.fixture
def local_copies(settings):
    """Pages kept in this process too, as with Redis (set before the client's first request)."""
    settings.PAGE_CACHE_LOCAL_BYTES = 1024 * 1024


def test_a_local_copy_serves_hits_without_reading_the_page_from_the_cache(
    client, local_copies, django_assert_num_queries
):
    summary = SummaryFactory(live=True, tldr="Kept words.")
    url = summary.get_absolute_url()
    client.get(url)
    drop_stored_pages()  # only this process's copy is left
    with django_assert_num_queries(1):  # the content generation
        again = client.get(url)
    assert "Kept words." in again.content.decode()
    assert again["Content-Security-Policy"]


def test_a_local_copy_is_dropped_by_an_edit(client, local_copies):
    summary = SummaryFactory(live=True, tldr="Before.")
    url = summary.get_absolute_url()
    client.get(url)
    client.get(url)
    publish_edit(summary, tldr="After.")
    assert "After." in client.get(url).content.decode()
    workflow.unpublish_summary(summary=summary)
    assert client.get(url).status_code == 404


def restored(snapshot: dict) -> None:
    """The local-memory cache as it was when `snapshot` was taken (cache._cache copied), as
    a Redis restarted from a snapshot comes back."""
    cache._cache.clear()
    cache._expire_info.clear()
    cache._cache.update(snapshot["values"])
    cache._expire_info.update(snapshot["expiry"])


def snapshot_of_cache() -> dict:
    return {"values": dict(cache._cache), "expiry": dict(cache._expire_info)}


def test_a_cache_restored_from_before_an_unpublish_never_serves_the_page(client, local_copies):
    summary = SummaryFactory(live=True)
    urls = [summary.get_absolute_url(), f"/api/v1/summaries/{summary.video.slug}/"]
    for url in urls:
        assert client.get(url).status_code == 200
        assert client.get(url).status_code == 200  # from the cache
    snapshot = snapshot_of_cache()
    workflow.unpublish_summary(summary=summary)
    restored(snapshot)
    for url in urls:
        assert client.get(url).status_code == 404, url


def test_a_cache_restored_from_before_an_edit_never_serves_the_old_page(client):
    summary = SummaryFactory(live=True, tldr="Before.")
    url = summary.get_absolute_url()
    client.get(url)
    snapshot = snapshot_of_cache()
    publish_edit(summary, tldr="After.")
    assert "After." in client.get(url).content.decode()
    restored(snapshot)
    assert "After." in client.get(url).content.decode()


def test_a_page_larger_than_the_local_budget_is_read_from_the_cache(
    client, settings, django_assert_num_queries
):
    settings.PAGE_CACHE_LOCAL_BYTES = 100  # smaller than any page
    summary = SummaryFactory(live=True)
    url = summary.get_absolute_url()
    client.get(url)
    with django_assert_num_queries(1):  # the content generation
        assert client.get(url).status_code == 200  # from the shared cache
    drop_stored_pages()
    with CaptureQueriesContext(connection) as rendered:
        assert client.get(url).status_code == 200
    assert rendered.captured_queries  # no local copy: rendered again


def test_a_local_copy_expires_when_a_scheduled_summary_goes_live(client, local_copies):
    SummaryFactory(live=True)
    at = timezone.now() + datetime.timedelta(minutes=2)
    SummaryFactory(video__title="Coming soon", status=Summary.Status.PUBLISHED, publish_at=at)
    home = reverse("summaries:home")
    assert "Coming soon" not in client.get(home).content.decode()
    assert "Coming soon" not in client.get(home).content.decode()  # a local copy now
    with time_machine.travel(at + datetime.timedelta(seconds=5)):
        assert "Coming soon" in client.get(home).content.decode()


def test_a_page_stored_by_an_earlier_release_is_rendered_again(client):
    summary = SummaryFactory(live=True, tldr="Current words.")
    url = summary.get_absolute_url()
    key = middleware.page_key(RequestFactory().get(url))
    cache.set(key, (generation.current_generation(), b"old format", []))
    response = client.get(url)
    assert "Current words." in response.content.decode()


def test_a_page_stored_by_a_release_with_other_static_files_is_not_served(
    client, local_copies, monkeypatch
):
    """Pages link to hashed static names: a page kept from the release before would ask
    for stylesheets a new release's static folder may no longer hold."""
    summary = SummaryFactory(live=True, tldr="Words.")
    url = summary.get_absolute_url()
    monkeypatch.setattr(middleware, "release", lambda: "manifest-a")
    client.get(url)
    Summary.objects.filter(pk=summary.pk).update(tldr="Changed behind the cache.")
    assert "Words." in client.get(url).content.decode()  # the stored page

    monkeypatch.setattr(middleware, "release", lambda: "manifest-b")
    assert "Changed behind the cache." in client.get(url).content.decode()


def test_the_release_is_the_static_manifest_s_hash(monkeypatch):
    from django.contrib.staticfiles.storage import staticfiles_storage

    middleware.release.cache_clear()
    monkeypatch.setattr(staticfiles_storage, "manifest_hash", "abc123", raising=False)
    try:
        assert middleware.release() == "abc123"
    finally:
        middleware.release.cache_clear()


# --- What may be stored: the pages a view serves, each under one spelling ---------------
# Anyone can add a query string or spell the host differently; none of that may add
# entries to the cache (20 s of random query strings filled Redis).


def cache_size() -> int:
    return len(cache._cache)


def list_pages(summary):
    channel = summary.video.channel
    person = AppearanceFactory(video=summary.video).person
    topic = TopicFactory()
    summary.video.topics.add(topic)
    return [
        summary.get_absolute_url(),
        reverse("summaries:home"),
        channel.get_absolute_url(),
        person.get_absolute_url(),
        topic.get_absolute_url(),
        reverse("summaries:feed-rss"),
        reverse("summaries:channel-feed-atom", kwargs={"slug": channel.slug}),
        reverse("sitemap"),
    ]


def test_random_query_parameters_add_no_cache_entries(client):
    pages = list_pages(SummaryFactory(live=True))
    for url in pages:
        assert client.get(url).status_code == 200  # each real page and its fragments
    before = cache_size()
    rng = random.Random(7)
    for number in range(500):
        url = pages[number % len(pages)]
        response = client.get(url, {f"x{rng.randrange(10**9)}": str(rng.random())})
        assert response.status_code == 200  # still served, just not stored
    assert cache_size() - before <= 3


@pytest.mark.parametrize(
    "query",
    [
        {"topic": "no-such-topic"},
        {"person": "nobody"},
        {"language": "zz"},
        {"topic": "{topic} "},  # read as "{topic}": another spelling of a stored page
        {"page": "1"},
        {"page": "01"},
        {"page": "last"},
        {"topic": "{topic}", "utm_source": "x"},
    ],
)
def test_values_a_page_does_not_serve_as_written_are_not_stored(client, query):
    summary = SummaryFactory(live=True)
    topic = TopicFactory()
    summary.video.topics.add(topic)
    url = summary.video.channel.get_absolute_url()
    client.get(url)
    client.get(url, {"topic": topic.slug})
    before = cache_size()
    query = {name: value.format(topic=topic.slug) for name, value in query.items()}
    assert client.get(url, query).status_code == 200
    assert cache_size() == before


def test_a_filter_form_with_empty_fields_is_served_from_the_cached_page(
    client, django_assert_num_queries
):
    summary = SummaryFactory(live=True)
    topic = TopicFactory()
    summary.video.topics.add(topic)
    url = summary.video.channel.get_absolute_url()
    client.get(url, {"topic": topic.slug})
    with django_assert_num_queries(1):  # the content generation
        again = client.get(url, {"topic": topic.slug, "person": "", "language": ""})
    assert summary.video.title in again.content.decode()


@pytest.mark.parametrize("host", ["TESTSERVER", "testserver.", "testserver:8123"])
def test_other_spellings_of_the_host_are_served_but_not_stored(client, host):
    summary = SummaryFactory(live=True)
    before = cache_size()
    assert client.get(summary.get_absolute_url(), HTTP_HOST=host).status_code == 200
    assert cache_size() == before


def test_a_page_fetched_over_https_links_to_site_url_like_any_other(client, settings):
    """Pages carry absolute links on SITE_URL whatever scheme a request came in (behind a
    TLS proxy, X-Forwarded-Proto says which), so one stored page serves both."""
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = False
    settings.SITE_URL = "https://curation.example"
    url = SummaryFactory(live=True).get_absolute_url()
    proxied = {"HTTP_X_FORWARDED_PROTO": "https", "SERVER_PORT": "443"}
    for answer in (client.get(url, **proxied), client.get(url)):
        text = answer.content.decode()
        assert f'"https://curation.example{url}"' in text
        assert "://testserver" not in text


def test_search_results_are_never_stored(client):
    SummaryFactory(live=True, tldr="Speed matters.")
    # The search page's shared parts (the filter choices, the words "did you mean"
    # compares with) are kept once, whatever the query.
    client.get(reverse("summaries:search"), {"q": "warm up"})
    before = cache_size()
    for word in ("speed", "matters", "nothing-like-it"):
        assert client.get(reverse("summaries:search"), {"q": word}).status_code == 200
    assert cache_size() == before


def test_page_links_use_the_spelling_that_is_cached(client):
    channel = SummaryFactory(live=True).video.channel
    SummaryFactory.create_batch(20, live=True, video__channel=channel)
    url = channel.get_absolute_url()
    second = client.get(url, {"page": "2"}).content.decode()
    assert f'rel="prev" href="{url}"' in second
    first = client.get(url).content.decode()
    assert 'rel="next" href="?page=2"' in first


# --- An unreachable cache never fails a page or a write ----------------------------------


@pytest.fixture
def unreachable_cache(settings):
    """The cache's Redis is down (nothing listens on port 1)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "summaries.pagecache.backend.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 0.2},
        }
    }


def test_pages_are_served_while_the_cache_is_down(client, unreachable_cache):
    summary = SummaryFactory(live=True, tldr="Still readable.")
    channel_url = summary.video.channel.get_absolute_url()
    api_url = f"/api/v1/summaries/{summary.video.slug}/"
    for url in (summary.get_absolute_url(), reverse("summaries:home"), channel_url, api_url):
        response = client.get(url)
        assert response.status_code == 200, url
    assert "Still readable." in client.get(summary.get_absolute_url()).content.decode()


def test_edits_and_check_results_are_saved_while_the_cache_is_down(unreachable_cache):
    summary = SummaryFactory(live=True, tldr="Before.")
    summary.tldr = "After."
    summary.save()  # the save signal marks pages stale: it must not fail the save
    workflow.unpublish_summary(summary=summary)
    summary.refresh_from_db()
    assert summary.tldr == "After." and summary.status == Summary.Status.DRAFT
