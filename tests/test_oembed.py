"""oEmbed: a rich card for published summaries only, discoverable
from each summary page."""

import html
import re

import pytest
from django.core.cache import cache
from django.urls import reverse

from summaries.editing import workflow
from summaries.models import Summary

from .factories import ChannelFactory, EditorFactory, SummaryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


def page_url(summary) -> str:
    return f"http://testserver{summary.video.get_absolute_url()}"


def ask(client, url, **params):
    return client.get(reverse("oembed"), {"url": url, "format": "json", **params})


def test_a_published_summary_has_a_rich_card(client):
    summary = SummaryFactory(
        live=True,
        video__title="Fast <b>models</b>",
        video__channel__name="Matthew & co",
        tldr="Opus is faster. " * 40,
    )
    response = ask(client, page_url(summary))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    card = response.json()
    assert card["version"] == "1.0" and card["type"] == "rich"
    assert card["title"] == "Fast <b>models</b>"
    assert card["author_name"] == "Matthew & co"
    assert card["author_url"] == "http://testserver" + summary.video.channel.get_absolute_url()
    assert card["provider_name"] == "Curation"
    assert card["width"] == 600 and card["height"] is None
    # The card links to the page, escapes what editors typed, and runs nothing.
    assert f'<a href="{page_url(summary)}">Fast &lt;b&gt;models&lt;/b&gt;</a>' in card["html"]
    assert "Matthew &amp; co" in card["html"]
    assert not re.search(r"<(script|iframe|img|style)", card["html"])
    assert len(html.unescape(re.sub("<[^>]+>", "", card["html"]))) < 500  # 30 seconds, cut


@pytest.mark.parametrize("state", ["draft", "scheduled", "unpublished"])
def test_summaries_that_are_not_live_have_no_card(client, state):
    summary = SummaryFactory(live=True)
    if state == "draft":
        Summary.objects.filter(pk=summary.pk).update(status=Summary.Status.DRAFT)
    elif state == "scheduled":
        workflow.publish_summary(summary=summary, at=summary.publish_at.replace(year=2999))
    else:
        workflow.unpublish_summary(summary=summary)
    assert ask(client, page_url(summary)).status_code == 404


def test_an_unpublished_summary_loses_its_cached_card(client):
    summary = SummaryFactory(live=True)
    assert ask(client, page_url(summary)).status_code == 200
    assert ask(client, page_url(summary)).status_code == 200  # from the page cache now
    workflow.unpublish_summary(summary=summary)
    assert ask(client, page_url(summary)).status_code == 404


def test_consumers_keep_a_card_no_longer_than_shared_caches_keep_its_page(client):
    """An unpublished summary's card goes from consumers' caches as soon as its page goes
    from a CDN's."""
    summary = SummaryFactory(live=True)
    page = client.get(summary.video.get_absolute_url())
    shared_lifetime = int(re.search(r"s-maxage=(\d+)", page["Cache-Control"]).group(1))
    assert 0 < ask(client, page_url(summary)).json()["cache_age"] <= shared_lifetime


@pytest.mark.parametrize(
    "url",
    [
        "",
        "not a url",
        "http://other.example/videos/{slug}/",  # another site with the same path
        "ftp://testserver/videos/{slug}/",
        "http://testserver/videos/no-such-video/",
        "http://testserver/channels/{channel}/",  # a page of ours that is no summary
        "http://testserver/preview/{slug}/",
        "http://testserver/admin/",
        "http://[::1/videos/{slug}/",
        "http://testserver/videos/{slug}/" + "x" * 3000,
    ],
)
def test_anything_else_is_a_404(client, url):
    summary = SummaryFactory(live=True)
    ChannelFactory()
    url = url.format(slug=summary.video.slug, channel=summary.video.channel.slug)
    response = ask(client, url)
    assert response.status_code == 404
    assert response.json() == {"detail": "No published summary has this URL."}


def test_only_json_is_served(client):
    summary = SummaryFactory(live=True)
    response = client.get(reverse("oembed"), {"url": page_url(summary), "format": "xml"})
    assert response.status_code == 501
    assert client.get(reverse("oembed"), {"url": page_url(summary)}).status_code == 200


@pytest.mark.parametrize("value", ["abc", "-5", "0", "1.5", "99999"])
def test_a_bad_maxwidth_is_a_400_naming_it(client, value):
    summary = SummaryFactory(live=True)
    response = ask(client, page_url(summary), maxwidth=value)
    assert response.status_code == 400
    assert "maxwidth" in response.json()["detail"]


def test_maxwidth_narrows_the_card(client):
    summary = SummaryFactory(live=True)
    assert ask(client, page_url(summary), maxwidth="320").json()["width"] == 320


def test_each_summary_page_names_its_card_and_the_link_works(client):
    summary = SummaryFactory(live=True)
    page = client.get(summary.video.get_absolute_url()).text
    found = re.search(r'<link rel="alternate" type="application/json\+oembed" href="([^"]+)"', page)
    assert found, "no oEmbed discovery link"
    response = client.get(html.unescape(found.group(1)))
    assert response.status_code == 200
    assert response.json()["title"] == summary.video.title


def test_a_preview_names_no_card(client):
    summary = SummaryFactory()  # a draft
    client.force_login(EditorFactory())
    page = client.get(reverse("summaries:summary-preview", args=[summary.video.slug])).text
    assert "application/json+oembed" not in page


# --- What is stored, and how often an address may ask ---------------------------------------


def stored_answers() -> int:
    return sum(1 for key in cache._cache if ":page:" in key)


def test_the_discovery_links_card_is_stored(client, django_assert_num_queries):
    summary = SummaryFactory(live=True)
    ask(client, page_url(summary))
    with django_assert_num_queries(1):  # the content generation: the card is kept
        assert ask(client, page_url(summary)).status_code == 200


def test_made_up_parameters_in_the_page_address_are_answered_but_not_stored(client):
    summary = SummaryFactory(live=True)
    ask(client, page_url(summary))
    before = stored_answers()
    for number in range(20):
        assert ask(client, f"{page_url(summary)}?junk={number}").status_code == 200
    assert stored_answers() == before


def test_cards_sized_by_maxwidth_or_maxheight_are_answered_but_not_stored(client):
    summary = SummaryFactory(live=True)
    ask(client, page_url(summary))
    before = stored_answers()
    for width in range(201, 251):
        assert ask(client, page_url(summary), maxwidth=width).json()["width"] == width
    assert ask(client, page_url(summary), maxheight=90).status_code == 200
    assert stored_answers() == before


def test_oembed_is_throttled_per_address(client, settings):
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "oembed": "3/minute"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    summary = SummaryFactory(live=True)
    answers = [ask(client, f"{page_url(summary)}?n={n}") for n in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert int(answers[-1]["Retry-After"]) > 0
    other = client.get(reverse("oembed"), {"url": page_url(summary)}, REMOTE_ADDR="10.0.0.9")
    assert other.status_code == 200  # another address has its own budget
