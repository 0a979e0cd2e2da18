import datetime
import json
import re
import xml.etree.ElementTree as ET

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory, modify_settings
from django.urls import reverse
from django.utils import timezone

from summaries.models import Summary, Video
from summaries.reader import article, seo
from summaries.reader.views_summary import SummaryDetailView

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    ChapterFactory,
    OrganisationFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
    VideoFactory,
)

pytestmark = pytest.mark.django_db

SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
YOUTUBE_ID = "abcdefghijk"


def load(summary, path=None):
    """The summary as the reader page loads it, and the request that asked for it."""
    request = RequestFactory().get(path or summary.get_absolute_url())
    view = SummaryDetailView()
    view.setup(request, slug=summary.video.slug)
    return view.get_object(), request


@pytest.fixture
def video():
    return VideoFactory(
        title="Gemini 3 is 2.5x faster",
        slug="gemini-3",
        channel=ChannelFactory(name="Matthew Berman", slug="matthew-berman"),
        source_url=f"https://www.youtube.com/watch?v={YOUTUBE_ID}",
        duration_seconds=2061,
        language="en",
        published_on=datetime.date(2026, 10, 1),
        thumbnail_url="https://i.ytimg.com/vi/abcdefghijk/hqdefault.jpg",
        # As the thumbnail worker stores it (summaries/thumbnails): pages name only this copy.
        thumbnail_source="https://i.ytimg.com/vi/abcdefghijk/hqdefault.jpg",
        thumbnail_files=[
            ["thumbnails/abc-320.webp", 320, 180],
            ["thumbnails/abc-640.webp", 640, 360],
        ],
    )


STORED_IMAGE = "http://testserver/media/thumbnails/abc-640.webp"


@pytest.fixture
def live(video):
    summary = SummaryFactory(video=video, live=True, tldr="It is faster.\nMostly.")
    AppearanceFactory(
        video=video,
        person=PersonFactory(name="Demis Hassabis", slug="demis-hassabis"),
        organisation=OrganisationFactory(name="Google DeepMind", domains="deepmind.google"),
    )
    ChapterFactory(summary=summary, position=1, title="Intro", start_time=0)
    ChapterFactory(summary=summary, position=2, title="No time", start_time=None)
    ChapterFactory(summary=summary, position=3, title="Benchmarks", start_time=300)
    ChapterFactory(summary=summary, position=4, title="Pricing", start_time=1200)
    return summary


# --- JSON-LD ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(2061, "PT34M21S"), (3723, "PT1H2M3S"), (3600, "PT1H"), (60, "PT1M"), (7, "PT7S")],
)
def test_iso_duration(seconds, expected):
    assert seo.iso_duration(seconds) == expected


def test_video_object_describes_the_video(live):
    summary, request = load(live)

    data = seo.video_object_jsonld(summary, request)

    assert data["@context"] == "https://schema.org"
    assert data["@type"] == "VideoObject"
    assert data["name"] == "Gemini 3 is 2.5x faster"
    assert data["description"] == "It is faster.\nMostly."
    assert data["uploadDate"] == "2026-10-01"
    assert data["duration"] == "PT34M21S"
    assert data["inLanguage"] == "en"
    assert data["thumbnailUrl"] == STORED_IMAGE
    assert data["url"] == f"https://www.youtube.com/watch?v={YOUTUBE_ID}"
    assert data["embedUrl"] == f"https://www.youtube.com/embed/{YOUTUBE_ID}"
    assert "contentUrl" not in data  # a YouTube page is not the media file
    assert data["mainEntityOfPage"] == "http://testserver/videos/gemini-3/"
    channel = {
        "@type": "Organization",
        "name": "Matthew Berman",
        "url": "http://testserver/channels/matthew-berman/",
    }
    assert data["author"] == data["publisher"] == channel
    assert data["actor"] == [
        {
            "@type": "Person",
            "name": "Demis Hassabis",
            "url": "http://testserver/people/demis-hassabis/",
            "affiliation": {
                "@type": "Organization",
                "name": "Google DeepMind",
                "url": "https://deepmind.google/",
            },
        }
    ]


def test_a_clip_per_timed_chapter_ending_where_the_next_starts(live):
    summary, request = load(live)

    clips = seo.video_object_jsonld(summary, request)["hasPart"]

    watch = f"https://www.youtube.com/watch?v={YOUTUBE_ID}"
    assert clips == [
        {
            "@type": "Clip",
            "name": "Intro",
            "startOffset": 0,
            "endOffset": 300,
            "url": f"{watch}&t=0s",
        },
        {
            "@type": "Clip",
            "name": "Benchmarks",
            "startOffset": 300,
            "endOffset": 1200,
            "url": f"{watch}&t=300s",
        },
        {
            "@type": "Clip",
            "name": "Pricing",
            "startOffset": 1200,
            "endOffset": 2061,
            "url": f"{watch}&t=1200s",
        },
    ]


def test_chapters_starting_past_the_end_or_untimed_make_no_clip(video):
    summary = SummaryFactory(video=video, live=True)
    ChapterFactory(summary=summary, position=1, title="Untimed", start_time=None)
    ChapterFactory(summary=summary, position=2, title="Too late", start_time=5000)

    data = seo.video_object_jsonld(*load(summary))

    assert "hasPart" not in data


def test_video_object_without_thumbnail_people_or_youtube(live):
    Video.objects.filter(pk=live.video.pk).update(
        source_url="https://example.com/talk.mp4",
        platform="other",
        thumbnail_url="",
        thumbnail_files=[],
    )
    live.video.appearances.all().delete()

    data = seo.video_object_jsonld(*load(live))

    assert data["url"] == data["contentUrl"] == "https://example.com/talk.mp4"
    assert "embedUrl" not in data
    assert "thumbnailUrl" not in data
    assert "actor" not in data
    assert data["hasPart"][0]["url"] == "https://example.com/talk.mp4#t=0"


def test_building_structured_data_runs_no_queries(live, django_assert_num_queries):
    request = RequestFactory().get(live.get_absolute_url())
    view = SummaryDetailView()
    view.setup(request, slug=live.video.slug)
    summary = view.get_object()
    # The timed chapters come with the page's stored article, and the people with the
    # summary (as JSON, reader/page_rows.py), as the page reads them.
    chapters = article.page_article(summary).timed_chapters

    with django_assert_num_queries(0):
        data = seo.video_object_jsonld(summary, request, chapters=chapters, appearances=view.people)
        seo.json_ld_script(data)
        seo.social_meta(summary, request)
    assert data["actor"] == seo.video_object_jsonld(summary, request)["actor"]


def test_script_in_a_title_cannot_break_out_of_the_json_ld_element():
    data = {"name": "</script><script>alert(1)</script> & <!-- more", "x": "\u2028"}

    html = seo.json_ld_script(data)

    assert html.startswith('<script type="application/ld+json">')
    assert html.endswith("</script>")
    body = html.removeprefix('<script type="application/ld+json">').removesuffix("</script>")
    assert "<" not in body and ">" not in body and "&" not in body
    assert "\\u003C/script\\u003E" in body
    assert json.loads(body) == data


# --- Social tags and the head include ---------------------------------------------------


def test_social_meta_has_canonical_absolute_url_and_large_card(live):
    summary, request = load(live)

    social = seo.social_meta(summary, request)

    assert social["canonical_url"] == "http://testserver/videos/gemini-3/"
    assert social["open_graph"]["og:url"] == social["canonical_url"]
    assert social["open_graph"]["og:type"] == "video.other"
    assert social["open_graph"]["og:title"] == "Gemini 3 is 2.5x faster"
    assert social["open_graph"]["og:description"] == "It is faster. Mostly."
    assert social["open_graph"]["og:site_name"] == "Curation"
    assert social["open_graph"]["og:image"] == STORED_IMAGE
    assert social["open_graph"]["og:image:width"] == 640
    assert social["twitter"]["twitter:card"] == "summary_large_image"
    assert social["twitter"]["twitter:image"] == STORED_IMAGE


def test_social_meta_on_the_preview_points_to_the_public_page_and_small_card(live):
    Video.objects.filter(pk=live.video.pk).update(thumbnail_url="", thumbnail_files=[])
    summary, request = load(live, path="/preview/gemini-3/")

    social = seo.social_meta(summary, request)

    assert social["canonical_url"] == "http://testserver/videos/gemini-3/"
    assert social["twitter"]["twitter:card"] == "summary"
    # No stored thumbnail (yet): the site's icon.
    icon = "http://testserver/static/summaries/icons/icon-512.png"
    assert social["open_graph"]["og:image"] == social["twitter"]["twitter:image"] == icon


def test_social_description_is_cut_for_cards(live):
    Summary.objects.filter(pk=live.pk).update(tldr="word " * 100)
    summary, request = load(live)

    assert len(seo.social_meta(summary, request)["description"]) <= 200


def test_seo_head_renders_canonical_tags_and_json_ld(live):
    Summary.objects.filter(pk=live.pk).update(tldr='Says "</script>" & more')
    summary, request = load(live)

    html = render_to_string(
        "includes/seo_head.html",
        {
            "social": seo.social_meta(summary, request),
            "jsonld": seo.json_ld_script(seo.video_object_jsonld(summary, request)),
        },
    )

    assert '<link rel="canonical" href="http://testserver/videos/gemini-3/">' in html
    assert '<meta property="og:url" content="http://testserver/videos/gemini-3/">' in html
    assert (
        '<meta property="og:description" content="Says &quot;&lt;/script&gt;&quot; &amp; more">'
        in html
    )
    assert '<meta name="twitter:card" content="summary_large_image">' in html
    assert html.count("</script>") == 1
    jsonld = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    assert json.loads(jsonld.group(1))["description"] == 'Says "</script>" & more'
    assert "noindex" not in html


def test_seo_head_marks_the_preview_noindex():
    assert '<meta name="robots" content="noindex, nofollow">' in render_to_string(
        "includes/seo_head.html", {"preview": True}
    )


def test_feed_links_name_the_site_feeds_and_the_channel_feeds():
    channel = ChannelFactory(slug="matthew-berman")

    site_only = render_to_string("includes/feed_links.html", {})
    with_channel = render_to_string("includes/feed_links.html", {"channel": channel})

    assert 'type="application/rss+xml"' in site_only
    assert 'href="/feeds/rss/"' in site_only
    assert 'type="application/atom+xml"' in site_only
    assert 'href="/feeds/atom/"' in site_only
    assert "/channels/" not in site_only
    assert 'href="/channels/matthew-berman/rss/"' in with_channel
    assert 'href="/channels/matthew-berman/atom/"' in with_channel


# --- sitemap.xml and robots.txt ---------------------------------------------------------


@pytest.fixture
def sitemaps_app():
    # The sitemap template ships with django.contrib.sitemaps; a no-op once it is installed.
    with modify_settings(INSTALLED_APPS={"append": "django.contrib.sitemaps"}):
        yield


def sitemap_urls(client):
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/xml"
    root = ET.fromstring(response.content)  # noqa: S314 - the site's own sitemap
    return {url.findtext(f"{SITEMAP}loc"): url.findtext(f"{SITEMAP}lastmod") for url in root}


def test_sitemap_lists_live_pages_only(client, sitemaps_app, live):
    shown_topic, hidden_topic = TopicFactory(slug="agents"), TopicFactory(slug="secret")
    live.video.topics.add(shown_topic)
    hidden_channel = ChannelFactory(slug="hidden-channel")
    for status, hours in ((Summary.Status.DRAFT, None), (Summary.Status.PUBLISHED, -2)):
        hidden = SummaryFactory(
            video=VideoFactory(channel=hidden_channel),
            status=status,
            publish_at=hours and timezone.now() - datetime.timedelta(hours=hours),
        )
        AppearanceFactory(video=hidden.video, person=PersonFactory(slug=f"hidden-{status}"))
        hidden.video.topics.add(hidden_topic)
        # A live channel's draft is hidden too.
        SummaryFactory(video=VideoFactory(channel=live.video.channel, slug=f"draft-{status}"))

    urls = sitemap_urls(client)

    assert set(urls) == {
        "http://testserver/",
        "http://testserver/channels/",
        "http://testserver/people/",
        "http://testserver/topics/",
        "http://testserver/videos/gemini-3/",
        "http://testserver/channels/matthew-berman/",
        "http://testserver/people/demis-hassabis/",
        "http://testserver/topics/agents/",
    }
    live.refresh_from_db()
    assert urls["http://testserver/videos/gemini-3/"] == live.updated_at.date().isoformat()


def test_sitemap_lastmod_follows_a_scheduled_summary_going_live(client, sitemaps_app, live):
    went_live = timezone.now() - datetime.timedelta(minutes=1)
    Summary.objects.filter(pk=live.pk).update(updated_at=went_live - datetime.timedelta(days=30))
    Video.objects.filter(pk=live.video.pk).update(
        updated_at=went_live - datetime.timedelta(days=30)
    )
    Summary.objects.filter(pk=live.pk).update(publish_at=went_live)

    urls = sitemap_urls(client)

    assert urls["http://testserver/videos/gemini-3/"] == went_live.date().isoformat()
    assert urls["http://testserver/channels/matthew-berman/"] == went_live.date().isoformat()


def test_robots_txt_disallows_private_paths_and_names_the_sitemap(client):
    response = client.get("/robots.txt")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert lines[0] == "User-agent: *"
    for path in ("/admin/", "/preview/", "/api/"):
        assert f"Disallow: {path}" in lines
    assert "Disallow: /" not in lines
    assert f"Sitemap: http://testserver{reverse('sitemap')}" in lines
