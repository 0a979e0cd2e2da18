"""What the site lets shared caches (Varnish, a CDN) keep agrees with what its own page
cache keeps: an answer to a spelling the page cache would not store is private."""

import pytest
from django.urls import reverse

from .factories import SummaryFactory

pytestmark = pytest.mark.django_db


def shared(response) -> bool:
    control = response["Cache-Control"]
    return "s-maxage" in control and "private" not in control


def test_a_page_with_made_up_parameters_is_private(client):
    summary = SummaryFactory(live=True)
    url = summary.get_absolute_url()
    assert shared(client.get(url))
    made_up = client.get(url, {"made-up": "1"})
    assert made_up.status_code == 200 and not shared(made_up)
    assert not shared(client.get(reverse("summaries:feed-rss"), {"x": "1"}))


def test_parameters_a_page_serves_stay_shared(client):
    summary = SummaryFactory(live=True)
    channel = summary.video.channel.get_absolute_url()
    assert shared(client.get(channel))
    # A filter form sent with empty fields asks for the same page (canonical_query).
    assert shared(client.get(channel, {"language": "", "person": ""}))
    channel_two = client.get(channel, {"page": "2"})
    assert channel_two.status_code == 404 or shared(channel_two)


def test_an_api_read_naming_a_media_type_parameter_is_private(client):
    SummaryFactory(live=True)
    assert shared(client.get("/api/v1/summaries/"))
    indented = client.get("/api/v1/summaries/", HTTP_ACCEPT="application/json; indent=8")
    assert indented.status_code == 200 and not shared(indented)
    assert shared(client.get("/api/v1/summaries/", HTTP_ACCEPT="application/json; q=0.9"))
