"""The page cache middleware: who gets cached pages, what a cached page carries."""

import pytest
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

from summaries import caching

from .factories import SummaryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def test_a_cached_page_keeps_the_headers_of_the_rendered_one(client, django_assert_num_queries):
    summary = SummaryFactory(live=True)
    first = client.get(summary.get_absolute_url())
    with django_assert_num_queries(0):
        again = client.get(summary.get_absolute_url())
    assert again.content == first.content
    for header in ("Content-Type", "Content-Security-Policy", "X-Frame-Options"):
        assert again[header] == first[header]
    assert "public" in again["Cache-Control"] and "max-age=60" in again["Cache-Control"]
    assert again["Content-Length"] == str(len(first.content))


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
    summary.tldr = "After."
    summary.save()  # bumps the generation
    assert "After." in client.get(summary.get_absolute_url()).content.decode()


def stored_pages():
    return [key for key in cache._cache if ":page:" in key]


def test_error_pages_and_post_requests_are_not_cached(client):
    assert client.get("/videos/missing/").status_code == 404
    assert client.post(reverse("summaries:home")).status_code == 405
    assert stored_pages() == []
    assert not caching.may_serve_cached(client.post("/").wsgi_request)
    client.get(reverse("summaries:home"))
    assert len(stored_pages()) == 1
