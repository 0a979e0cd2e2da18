"""Cached parts of list pages: a channel's filter choices and a list's length.

They are shared by every page of a list and kept like pages (until content changes, never
past the next scheduled publication), so each test checks that readers never see them stale.
"""

import datetime

import pytest
import time_machine
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from summaries.editing import workflow
from summaries.models import Summary
from summaries.pagecache.fragments import cached_fragment
from summaries.pagecache.generation import content_changed
from summaries.templatetags.curation import options

from .factories import AppearanceFactory, ChannelFactory, SummaryFactory, TopicFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_local_copies(settings):
    """Only the shared cache: fresh_get drops its pages, and no process copy may answer."""
    settings.PAGE_CACHE_LOCAL_BYTES = 0


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def fresh_get(client, url):
    """The page cache never answers (its pages are dropped), only fragments can."""
    for key in [key for key in cache._cache if ":page:" in key]:
        cache.delete(key.split(":", 2)[2])  # ":1:page:…" is the key "page:…", version 1
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def live_video(channel, person=None, topic=None, **video):
    """A new live video, as an editor's save makes it (content_changed included)."""
    summary = SummaryFactory(live=True, video__channel=channel, **video)
    if person:
        AppearanceFactory(video=summary.video, person__name=person)
    if topic:
        summary.video.topics.add(TopicFactory(name=topic))
    content_changed()
    return summary


def person_options(content):
    form = content[content.index('name="person"') :]
    return form[: form.index("</select>")]


def test_a_fragment_is_computed_once_until_content_changes():
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert cached_fragment("test", compute) == 1
    assert cached_fragment("test", compute) == 1
    content_changed()
    assert cached_fragment("test", compute) == 2


def test_a_fragment_computed_while_content_changed_is_not_kept():
    def compute_during_an_edit():
        content_changed()
        return "old"

    assert cached_fragment("test", compute_during_an_edit) == "old"
    assert cached_fragment("test", lambda: "new") == "new"


def test_channel_filter_choices_follow_publish_and_unpublish(client):
    channel = ChannelFactory()
    live_video(channel, person="Ada Lovelace", topic="Agents")
    url = channel.get_absolute_url()
    assert "Ada Lovelace" in person_options(fresh_get(client, url))

    added = live_video(channel, person="Grace Hopper", topic="Compilers", video__language="de")
    content = fresh_get(client, url)
    assert "Grace Hopper" in person_options(content)
    assert '<option value="de">German</option>' in content
    assert "Compilers" in content

    workflow.unpublish_summary(summary=added)
    content = fresh_get(client, url)
    assert "Grace Hopper" not in person_options(content)
    assert '<option value="de">' not in content


def test_renaming_a_person_renames_the_choice(client):
    channel = ChannelFactory()
    summary = live_video(channel, person="Ada Lovelace")
    url = channel.get_absolute_url()
    fresh_get(client, url)
    person = summary.video.appearances.get().person
    person.name = "Augusta Ada King"
    person.save()
    content_changed()  # as the admin and the API do after saving a person
    options_html = person_options(fresh_get(client, url))
    assert "Augusta Ada King" in options_html
    assert "Ada Lovelace" not in options_html


def test_a_scheduled_video_reaches_choices_and_page_count_when_it_goes_live(client):
    channel = ChannelFactory()
    for _ in range(20):
        live_video(channel)
    at = timezone.now() + datetime.timedelta(minutes=2)
    scheduled = SummaryFactory(
        video__channel=channel, status=Summary.Status.PUBLISHED, publish_at=at
    )
    AppearanceFactory(video=scheduled.video, person__name="Coming Soon")
    url = channel.get_absolute_url()
    content = fresh_get(client, url)
    assert "Coming Soon" not in person_options(content)
    assert "Page 1 of 2" not in content  # 20 videos fit on one page

    with time_machine.travel(at + datetime.timedelta(seconds=5)):
        content = fresh_get(client, url)
    assert "Coming Soon" in person_options(content)
    assert "Page 1 of 2" in content


def test_page_count_follows_new_videos(client):
    channel = ChannelFactory()
    for _ in range(21):
        live_video(channel)
    home = reverse("summaries:home")
    assert "Page 1 of 2" in fresh_get(client, home)
    assert "Page 1 of 2" in fresh_get(client, channel.get_absolute_url())
    for _ in range(20):
        live_video(channel)
    assert "Page 1 of 3" in fresh_get(client, home)
    assert "Page 1 of 3" in fresh_get(client, channel.get_absolute_url())


def test_filtered_lists_are_counted_apart(client):
    channel = ChannelFactory()
    for _ in range(21):
        live_video(channel, topic=None)
    topic = TopicFactory(name="Agents")
    for summary in Summary.objects.all()[:3]:
        summary.video.topics.add(topic)
    url = channel.get_absolute_url()
    assert "Page 1 of 2" in fresh_get(client, url)
    filtered = client.get(url, {"topic": topic.slug}).content.decode()
    assert filtered.count('class="video-card"') == 3
    assert "Page 1 of" not in filtered


def test_list_pages_skip_counting_and_choices_once_cached(client, django_assert_num_queries):
    channel = ChannelFactory()
    for _ in range(25):
        live_video(channel, person="Ada Lovelace", topic="Agents")
    url = channel.get_absolute_url()
    fresh_get(client, url)
    # The content generation, the channel, its stored filter choices (which hold the
    # count), its page of videos, their people, and the next scheduled time that bounds how
    # long the page is kept: no COUNT, and the choices are not computed again.
    with django_assert_num_queries(6):
        fresh_get(client, url)
    fresh_get(client, reverse("summaries:home"))
    with django_assert_num_queries(4):
        fresh_get(client, reverse("summaries:home"))


def test_options_escape_values_and_labels_and_mark_the_selected_one():
    html = options([("a&b", "<b>Bold</b>"), ("plain", "Plain")], "plain")
    assert html == (
        '<option value="a&amp;b">&lt;b&gt;Bold&lt;/b&gt;</option>'
        '<option value="plain" selected>Plain</option>'
    )
