"""Stored filter choices (reader.facets): read in one query once stored, and never stale.

Each test reads an owner's choices (which stores them), changes something they depend on
through the models as every write path does, and reads them again: a change the
receivers did not forget would come back as the stored, old choices.
"""

import datetime

import pytest
import time_machine
from django.utils import timezone

from summaries import tasks
from summaries.editing import workflow
from summaries.models import ListFacets, Summary
from summaries.reader import facets

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
)
from .test_filter_choices import video

pytestmark = pytest.mark.django_db


def live_video(channel, **options):
    """A video of `channel` (with people, topics, language), live unless told otherwise."""
    return video(channel, **({"live": True} | options))


def people(owner, lookup="channel"):
    return [name for _, name in facets.choices(lookup, owner)["person"]]


def topics(owner, lookup="channel"):
    return [name for _, name in facets.choices(lookup, owner)["topic"]]


def languages(owner, lookup="channel"):
    return [code for code, _ in facets.choices(lookup, owner)["language"]]


@pytest.fixture
def channel():
    return ChannelFactory()


@pytest.fixture
def ada():
    return PersonFactory(name="Ada Lovelace", slug="ada")


@pytest.fixture
def agents():
    return TopicFactory(name="Agents", slug="agents")


def test_stored_choices_are_read_in_one_query(channel, ada, agents, django_assert_num_queries):
    live_video(channel, people=[ada], topics=[agents])
    first = facets.choices("channel", channel)
    with django_assert_num_queries(1):
        assert facets.choices("channel", channel) == first
    assert first["total"] == 1 and first["person"] == [("ada", "Ada Lovelace")]


def test_a_publication_and_an_unpublication_reach_the_choices(channel, ada, agents):
    live_video(channel, people=[ada])
    assert facets.choices("channel", channel)["total"] == 1
    grace = PersonFactory(name="Grace Hopper")
    added = live_video(channel, people=[grace], topics=[agents], language="de")
    assert people(channel) == ["Ada Lovelace", "Grace Hopper"]
    assert topics(channel) == ["Agents"] and languages(channel) == ["de", "en"]
    assert facets.choices("channel", channel)["total"] == 2
    workflow.unpublish_summary(summary=added.summary)
    assert people(channel) == ["Ada Lovelace"] and topics(channel) == []
    assert facets.choices("channel", channel)["total"] == 1


def test_a_deleted_summary_leaves_the_choices(channel, ada, agents):
    live_video(channel)
    gone = live_video(channel, people=[ada], topics=[agents])
    assert people(channel) == ["Ada Lovelace"]
    gone.summary.delete()  # (a video with a summary cannot be deleted: PROTECT)
    assert people(channel) == [] and topics(channel) == []
    assert facets.choices("channel", channel)["total"] == 1


def test_a_video_moved_to_another_channel_or_language(channel, ada):
    other = ChannelFactory()
    video = live_video(channel, people=[ada], language="en")
    assert people(channel) == ["Ada Lovelace"] and people(other) == []
    video.language = "fr"
    video.save()
    assert languages(channel) == ["fr"]
    video.channel = other
    video.save()
    assert people(channel) == [] and people(other) == ["Ada Lovelace"]


def test_topics_added_removed_and_cleared_from_either_side(channel, agents):
    chips = TopicFactory(name="Chips")
    video = live_video(channel, topics=[agents])
    assert topics(channel) == ["Agents"] and facets.choices("topics", chips)["total"] == 0
    video.topics.add(chips)
    assert topics(channel) == ["Agents", "Chips"]
    assert facets.choices("topics", chips)["total"] == 1
    video.topics.remove(agents)
    assert topics(channel) == ["Chips"] and facets.choices("topics", agents)["total"] == 0
    video.topics.clear()
    assert topics(channel) == [] and facets.choices("topics", chips)["total"] == 0
    agents.videos.add(video)
    assert topics(channel) == ["Agents"]
    agents.videos.clear()
    assert topics(channel) == []


def test_appearances_added_changed_and_removed(channel, ada):
    grace = PersonFactory(name="Grace Hopper")
    video = live_video(channel)
    assert people(channel) == [] and facets.choices("people", ada)["total"] == 0
    appearance = AppearanceFactory(video=video, person=ada)
    assert people(channel) == ["Ada Lovelace"] and facets.choices("people", ada)["total"] == 1
    appearance.person = grace
    appearance.save()
    assert people(channel) == ["Grace Hopper"] and facets.choices("people", ada)["total"] == 0
    appearance.delete()
    assert people(channel) == [] and facets.choices("people", grace)["total"] == 0


def test_renamed_people_and_topics_are_renamed_on_every_page_they_are_offered(channel, ada, agents):
    live_video(channel, people=[ada], topics=[agents])
    assert people(channel) == ["Ada Lovelace"] and topics(channel) == ["Agents"]
    assert people(agents, "topics") == ["Ada Lovelace"]
    assert topics(ada, "people") == ["Agents"]
    ada.name = "Augusta Ada King"
    ada.save()
    agents.name = "AI agents"
    agents.save()
    assert people(channel) == ["Augusta Ada King"] and topics(channel) == ["AI agents"]
    assert people(agents, "topics") == ["Augusta Ada King"]
    assert topics(ada, "people") == ["AI agents"]


def test_a_deleted_topic_is_no_longer_offered(channel, agents):
    live_video(channel, topics=[agents])
    assert topics(channel) == ["Agents"]
    agents.delete()
    assert topics(channel) == []


def test_a_scheduled_video_is_offered_once_it_goes_live_with_no_save(channel, ada):
    live_video(channel)
    at = timezone.now() + datetime.timedelta(hours=1)
    live_video(channel, people=[ada], live=False, status=Summary.Status.PUBLISHED, publish_at=at)
    assert people(channel) == []
    stored = ListFacets.objects.get(kind="channel", owner_id=channel.pk)
    assert stored.valid_until == at
    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert people(channel) == ["Ada Lovelace"]
        assert facets.choices("channel", channel)["total"] == 2


def test_choices_computed_while_a_save_forgets_them_are_not_stored(
    channel, ada, monkeypatch, django_assert_num_queries
):
    """A reader computing the choices while an editor's save commits: what it computed may
    predate the save, so it is shown once but not kept."""
    video = live_video(channel, people=[ada])
    compute = facets.compute

    def compute_during_a_save(lookup, owner, now=None):
        found = compute(lookup, owner, now)
        facets.forget_videos([video.pk])  # the save's receivers, committed meanwhile
        return found

    monkeypatch.setattr(facets, "compute", compute_during_a_save)
    facets.choices("channel", channel)  # no row yet
    assert ListFacets.objects.get(kind="channel", owner_id=channel.pk).choices is None
    facets.choices("channel", channel)  # a row, forgotten while computing
    assert ListFacets.objects.get(kind="channel", owner_id=channel.pk).choices is None
    monkeypatch.setattr(facets, "compute", compute)
    facets.choices("channel", channel)
    with django_assert_num_queries(1):
        assert people(channel) == ["Ada Lovelace"]


def test_a_draft_saved_changes_nothing_offered(channel, ada):
    live_video(channel)
    draft = SummaryFactory(video__channel=channel, live=False)
    AppearanceFactory(video=draft.video, person=ada)
    assert people(channel) == []
    draft.tldr = "Changed."
    draft.save()
    assert people(channel) == [] and facets.choices("channel", channel)["total"] == 1


def refreshes_queued(callbacks) -> list[list]:
    """The owners of each refresh_list_facets queued on commit."""
    return [
        owner
        for callback in callbacks
        if getattr(getattr(callback, "task", None), "name", "") == tasks.refresh_list_facets.name
        for owner in callback.args[0]
    ]


def test_a_save_queues_its_owners_choices_to_be_computed_again_after_commit(
    channel, ada, agents, django_capture_on_commit_callbacks, django_assert_num_queries
):
    """Readers then find them stored: the first view after an edit is as fast as the next."""
    video = live_video(channel, people=[ada], topics=[agents])
    facets.choices("channel", channel)
    with django_capture_on_commit_callbacks() as callbacks:
        video.language = "de"
        video.save()
    owners = refreshes_queued(callbacks)
    assert set(map(tuple, owners)) == {
        ("channel", channel.pk),
        ("person", ada.pk),
        ("topic", agents.pk),
    }
    assert facets.refresh(owners) == 3
    assert facets.refresh(owners) == 0  # already stored: nothing computed twice
    with django_assert_num_queries(1):
        assert languages(channel) == ["de"]
    with django_assert_num_queries(1):
        assert languages(ada, "people") == ["de"]


def test_refreshing_a_deleted_owner_drops_its_row(channel, agents):
    live_video(channel, topics=[agents])
    facets.choices("topics", agents)
    pk = agents.pk
    agents.delete()
    facets.refresh([["topic", pk]])
    assert not ListFacets.objects.filter(kind="topic", owner_id=pk).exists()


def test_the_refresh_task_computes_what_a_save_forgot(channel, ada):
    live_video(channel, people=[ada])
    facets.forget_videos([], people=[ada.pk])
    tasks.refresh_list_facets([["person", ada.pk]])
    assert ListFacets.objects.get(kind="person", owner_id=ada.pk).choices["total"] == 1
