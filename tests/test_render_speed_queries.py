"""Reader pages rendered with no cache at all run a fixed number of queries.

Every request here misses the page cache (a query string of its own) and, with
PAGE_CACHE_FRAGMENTS off, computes every shared fragment afresh: the first request after a
publish. The counts are pinned exactly, at the size bench/render_uncached.py measures (a
summary with 12 chapters and 36 sources; a channel with more than a page of videos), and
must not grow with the data.
"""

import itertools

import pytest
from django.core.cache import cache
from django.urls import reverse

from summaries.editing import derived
from summaries.models import Caveat
from summaries.reader.related import refresh_related

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    ChapterFactory,
    KeyPointFactory,
    OrganisationFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
)

# Every anonymous request: the content generation, which the page cache checks stored
# pages against (and fragments, when on).
GENERATION = 1
# Summary page: the summary with its video, channel and stored article; the video's
# people, its topics; citations with their sources; "More from this channel"; the stored
# related entries; the people of every card; its published changes (updates and corrections
# shown with their dates, and the last change's time for dateModified).
SUMMARY_QUERIES = GENERATION + 8
# The first request after an edit renders the article again: its key points, takeaways,
# chapters, caveats and citations with their sources, then stores it over the one stored
# before.
SUMMARY_QUERIES_AFTER_EDIT = SUMMARY_QUERIES + 5 + 1
# Channel page: the channel; its stored filter choices (topics, people, videos per
# language: the list's length too); the page of videos and their people.
CHANNEL_QUERIES = GENERATION + 4
# The first request after a save forgot the stored choices (and before the worker computed
# them again): they are computed in one query, the owner's next scheduled publication is
# read (until when they hold) and they are stored.
CHANNEL_QUERIES_AFTER_EDIT = CHANNEL_QUERIES + 3
# Home page: the number of live summaries, the page of videos and their people.
HOME_QUERIES = GENERATION + 3

pytestmark = pytest.mark.django_db

_numbers = itertools.count()


@pytest.fixture(autouse=True)
def no_fragments(settings):
    settings.PAGE_CACHE_FRAGMENTS = False
    cache.clear()


def uncached_get(client, url, **params):
    response = client.get(url, {**params, "nocache": str(next(_numbers))})
    assert response.status_code == 200
    return response.content.decode()


def video_with_people(channel, topic):
    summary = SummaryFactory(live=True, video__channel=channel)
    AppearanceFactory(video=summary.video, organisation=OrganisationFactory())
    AppearanceFactory(video=summary.video)
    summary.video.topics.add(topic)
    return summary


def heavy_summary(channel, topic, *, chapters=12, sources_per_chapter=3):
    summary = video_with_people(channel, topic)
    for n in range(3):
        KeyPointFactory(summary=summary, title=f"Point {n}", time=n * 60)
    for n in range(4):
        TakeawayFactory(summary=summary, text=f"Takeaway {n}")
    link = itertools.count()
    for n in range(chapters):
        body = "\n\n".join(
            f"[Source {i}](https://example{i}.org/page) says it is {i + 2} times faster."
            for i in itertools.islice(link, sources_per_chapter)
        )
        chapter = ChapterFactory(summary=summary, title=f"Chapter {n}", body=body, start_time=n)
        Caveat.objects.create(
            summary=summary, chapter=chapter, claim="times faster", text="Careful.", position=n
        )
    derived.refresh_derived_data(summary=summary)
    return summary


def world(videos):
    channel = ChannelFactory()
    topic = TopicFactory()
    elsewhere = ChannelFactory()
    for _ in range(videos):
        video_with_people(channel, topic)
        video_with_people(elsewhere, topic)
    summary = heavy_summary(channel, topic)
    refresh_related(video=summary.video)
    return channel, summary


@pytest.mark.parametrize("videos", [2, 12])
def test_summary_page_with_12_chapters_and_36_sources(client, django_assert_num_queries, videos):
    _, summary = world(videos)
    url = summary.get_absolute_url()
    uncached_get(client, url)
    with django_assert_num_queries(SUMMARY_QUERIES):
        content = uncached_get(client, url)
    assert content.count('class="chapter"') == 12
    assert content.count('class="source-label-name"') == 36
    more = min(6, videos)  # the rest of the channel's videos are related too
    assert content.count('class="video-card"') == more + min(10, 2 * videos - more)


@pytest.mark.parametrize("videos", [2, 12])
def test_summary_page_right_after_an_edit(client, django_assert_num_queries, videos):
    _, summary = world(videos)
    url = summary.get_absolute_url()
    uncached_get(client, url)
    derived.page_changed(summary_id=summary.pk)
    with django_assert_num_queries(SUMMARY_QUERIES_AFTER_EDIT):
        content = uncached_get(client, url)
    assert content.count('class="chapter"') == 12
    with django_assert_num_queries(SUMMARY_QUERIES):
        assert uncached_get(client, url) == content


@pytest.mark.parametrize("videos", [3, 25])
def test_channel_page_with_every_cache_off(client, django_assert_num_queries, videos):
    channel, _ = world(videos)
    url = channel.get_absolute_url()
    with django_assert_num_queries(CHANNEL_QUERIES_AFTER_EDIT):
        first = uncached_get(client, url)
    with django_assert_num_queries(CHANNEL_QUERIES):
        content = uncached_get(client, url)
    assert content == first  # the same page, from the stored choices
    assert content.count('class="video-card"') == min(20, videos + 1)
    if videos + 1 > 20:
        assert "Page 1 of 2" in content


@pytest.mark.parametrize("videos", [3, 25])
def test_home_page_with_every_cache_off(client, django_assert_num_queries, videos):
    world(videos)
    with django_assert_num_queries(HOME_QUERIES):
        content = uncached_get(client, reverse("summaries:home"))
    # The newest is the featured card, the others the grid's.
    assert content.count('<article class="video-card') == min(20, 2 * videos + 1)
    assert content.count('class="video-card video-card--featured"') == 1


def test_a_filtered_channel_page_counts_its_list(client, django_assert_num_queries):
    channel, summary = world(25)
    topic = summary.video.topics.get()
    uncached_get(client, channel.get_absolute_url())  # the choices computed and stored
    with django_assert_num_queries(CHANNEL_QUERIES + 1):  # COUNT of the filtered list
        content = uncached_get(client, channel.get_absolute_url(), topic=topic.slug)
    assert "Page 1 of 2" in content


def test_a_person_page_counts_the_person_s_videos(client):
    channel, topic = ChannelFactory(), TopicFactory()
    summaries = [video_with_people(channel, topic) for _ in range(21)]
    person = summaries[0].video.appearances.first().person
    for summary in summaries[1:]:
        AppearanceFactory(video=summary.video, person=person)
    content = uncached_get(client, person.get_absolute_url())
    assert content.count('class="video-card"') == 20
    assert "Page 1 of 2" in content
