"""The filter choices of a channel, person or topic page (reader.facets.choices): what a
reader can narrow the list by, taken from the owner's live videos only."""

import datetime

import pytest
from django.utils import timezone

from summaries.models import Summary
from summaries.reader.facets import choices as filter_choices

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db


def video(channel, *, people=(), topics=(), language="en", **summary):
    summary = SummaryFactory(video__channel=channel, video__language=language, **summary)
    for person in people:
        AppearanceFactory(video=summary.video, person=person)
    summary.video.topics.add(*topics)
    return summary.video


@pytest.fixture
def catalogue():
    channel = ChannelFactory()
    ada = PersonFactory(name="Ada Lovelace", slug="ada")
    grace = PersonFactory(name="Grace Hopper", slug="grace")
    hidden = PersonFactory(name="Hidden Person", slug="hidden")
    agents, chips, secret = (
        TopicFactory(name="Agents", slug="agents"),
        TopicFactory(name="Chips", slug="chips"),
        TopicFactory(name="Secret", slug="secret"),
    )
    # Listed after the others on purpose: choices come in name order.
    zeta = TopicFactory(name="Zeta", slug="a-zeta")
    video(channel, people=[grace, ada], topics=[chips, zeta], live=True)
    video(channel, people=[ada], topics=[agents], language="de", live=True)
    video(channel, people=[ada], topics=[agents], language="fr", live=True)
    # Not live: a draft, a scheduled one, one in review.
    video(channel, people=[hidden], topics=[secret], language="ja")
    video(
        channel,
        people=[hidden],
        topics=[secret],
        language="ja",
        status=Summary.Status.PUBLISHED,
        publish_at=timezone.now() + datetime.timedelta(days=1),
    )
    video(channel, people=[hidden], topics=[secret], status=Summary.Status.IN_REVIEW)
    # Another channel's live video.
    video(ChannelFactory(), people=[hidden], topics=[secret], language="ja", live=True)
    return channel, ada, agents


def test_a_channel_offers_the_topics_people_and_languages_of_its_live_videos(catalogue):
    channel, _, _ = catalogue
    choices = filter_choices("channel", channel)
    assert choices["topic"] == [("agents", "Agents"), ("chips", "Chips"), ("a-zeta", "Zeta")]
    assert choices["person"] == [("ada", "Ada Lovelace"), ("grace", "Grace Hopper")]
    assert [code for code, _ in choices["language"]] == ["de", "en", "fr"]
    assert choices["total"] == 3


def test_a_person_page_counts_each_live_video_once(catalogue):
    _, ada, _ = catalogue
    choices = filter_choices("people", ada)
    assert choices["total"] == 3
    assert choices["person"] == [("ada", "Ada Lovelace"), ("grace", "Grace Hopper")]
    assert [code for code, _ in choices["language"]] == ["de", "en", "fr"]


def test_a_topic_page_offers_only_what_its_live_videos_have(catalogue):
    _, _, agents = catalogue
    choices = filter_choices("topics", agents)
    assert choices["total"] == 2
    assert choices["topic"] == [("agents", "Agents")]
    assert choices["person"] == [("ada", "Ada Lovelace")]
    assert [code for code, _ in choices["language"]] == ["de", "fr"]


def test_an_owner_with_no_live_video_offers_nothing():
    channel = ChannelFactory()
    video(channel, people=[PersonFactory()], topics=[TopicFactory()])
    assert filter_choices("channel", channel) == {
        "topic": [],
        "person": [],
        "language": [],
        "total": 0,
    }
