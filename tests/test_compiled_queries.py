"""Reader queries compiled once per process (summaries/reader/compiled.py) answer exactly as
the querysets they are built from, for every value, whatever values they were compiled with.
"""

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.db.models import F
from django.utils import timezone

from summaries.models import Appearance, Summary, Topic, Video
from summaries.reader import cards, page_rows
from summaries.reader.compiled import CompiledQuery

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    OrganisationFactory,
    SummaryFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db


def people_query():
    return CompiledQuery(
        Appearance,
        lambda video_id: (
            Appearance.objects.filter(video_id=video_id)
            .order_by("position", "id")
            .values_list("person__name", "organisation__name")
        ),
        ids=("video_id",),
    )


def reference_people(video_id):
    return list(
        Appearance.objects.filter(video_id=video_id)
        .order_by("position", "id")
        .values_list("person__name", "organisation__name")
    )


def test_each_run_answers_for_its_own_values_not_those_it_was_compiled_with():
    query = people_query()
    videos = []
    for n in range(3):
        summary = SummaryFactory(live=True)
        for _ in range(n + 1):
            AppearanceFactory(video=summary.video, organisation=OrganisationFactory())
        videos.append(summary.video)
    for video in [*videos, *reversed(videos)]:
        assert query.run(video_id=video.pk) == reference_people(video.pk)
    assert [len(query.run(video_id=video.pk)) for video in videos] == [1, 2, 3]


def test_values_rows_are_dicts_with_the_querysets_keys_and_converted_values():
    summary = SummaryFactory(live=True)
    query = CompiledQuery(
        Video,
        lambda video_id: Video.objects.filter(pk=video_id).values(
            "title", "published_on", "thumbnail_files", channel_name=F("channel__name")
        ),
        ids=("video_id",),
    )
    Video.objects.filter(pk=summary.video_id).update(thumbnail_files={"w": [1, 2]})
    expected = list(
        Video.objects.filter(pk=summary.video_id).values(
            "title", "published_on", "thumbnail_files", channel_name=F("channel__name")
        )
    )
    rows = query.run(video_id=summary.video_id)
    assert rows == expected
    # JSON decoded and dates as dates, on SQLite as on PostgreSQL.
    assert rows[0]["thumbnail_files"] == {"w": [1, 2]}
    assert rows[0]["published_on"] == summary.video.published_on


def test_a_list_of_ids_shorter_than_compiled_for_is_padded_and_a_longer_one_still_answers():
    query = CompiledQuery(
        Appearance,
        lambda video_ids: (
            Appearance.objects.filter(video_id__in=video_ids)
            .order_by("video_id", "position", "id")
            .values_list("video_id", "person__name")
        ),
        id_lists={"video_ids": 3},
    )
    videos = [SummaryFactory(live=True).video for _ in range(5)]
    for video in videos:
        AppearanceFactory(video=video)

    def expected(ids):
        return list(
            Appearance.objects.filter(video_id__in=ids)
            .order_by("video_id", "position", "id")
            .values_list("video_id", "person__name")
        )

    ids = [video.pk for video in videos]
    assert query.run(video_ids=ids[:1]) == expected(ids[:1])
    assert query.run(video_ids=ids[1:4]) == expected(ids[1:4])
    assert query.run(video_ids=ids) == expected(ids)  # longer: the queryset itself
    assert query.run(video_ids=[]) == []


def test_what_is_live_is_decided_at_each_run_not_when_the_query_was_compiled():
    channel = ChannelFactory()
    shown = SummaryFactory(live=True, video__channel=channel)
    soon = SummaryFactory(
        status=Summary.Status.PUBLISHED,
        publish_at=timezone.now() + timedelta(hours=1),
        video__channel=channel,
    )
    SummaryFactory(video__channel=channel)  # a draft: never
    assert [card["pk"] for card in cards.more_from_channel(shown.video)] == []
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert [card["pk"] for card in cards.more_from_channel(shown.video)] == [soon.video_id]


def test_the_summary_pages_short_lists_match_their_querysets():
    summary = SummaryFactory(live=True)
    AppearanceFactory(video=summary.video, organisation=OrganisationFactory())
    AppearanceFactory(video=summary.video)
    for topic in (TopicFactory(name="Zeta"), TopicFactory(name="Alpha")):
        summary.video.topics.add(topic)
    people = page_rows.people(summary.video_id)
    assert [(a.person.name, a.organisation and a.organisation.name) for a in people] == [
        (a.person.name, a.organisation and a.organisation.name)
        for a in summary.video.appearances.order_by("position", "id")
    ]
    assert [t.name for t in page_rows.topics(summary.video_id)] == ["Alpha", "Zeta"]


def test_a_value_that_is_not_a_parameter_is_refused_when_compiled():
    query = CompiledQuery(
        Video,
        lambda video_id: Video.objects.values_list("pk"),  # ignores its value
        ids=("video_id",),
    )
    with pytest.raises(ValueError, match="video_id is not a parameter"):
        query.run(video_id=1)


def test_model_instances_come_with_their_select_related_objects():
    summaries = [SummaryFactory(live=True) for _ in range(2)]
    query = CompiledQuery(
        Summary,
        lambda slug, now: (
            Summary.objects.published(now)
            .filter(video__slug=slug)
            .select_related("video", "video__channel")
        ),
        texts=("slug",),
        now=True,
    )
    for summary in [*summaries, *summaries]:
        (found,) = query.run(slug=summary.video.slug)
        assert (found.pk, found.tldr, found.video.title) == (
            summary.pk,
            summary.tldr,
            summary.video.title,
        )
        assert found.video.channel.name == summary.video.channel.name
        assert found._state.db == "default" and not found._state.adding
    assert query.run(slug="no-such-video") == []


def test_a_summary_page_asks_for_a_live_summary_each_time(client):
    summary = SummaryFactory(live=True)
    url = summary.get_absolute_url()
    assert client.get(url, {"n": "1"}).status_code == 200
    Summary.objects.filter(pk=summary.pk).update(status=Summary.Status.DRAFT)
    assert client.get(url, {"n": "2"}).status_code == 404
    assert client.get("/videos/nothing-here/").status_code == 404


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's prepared statements")
def test_on_postgresql_a_compiled_query_is_planned_once_per_connection():
    query = people_query()
    videos = [SummaryFactory(live=True).video for _ in range(3)]
    topic = TopicFactory()
    for video in videos:
        assert query.run(video_id=video.pk) == reference_people(video.pk)
        assert list(Topic.objects.filter(pk=topic.pk).values_list("slug")) == [(topic.slug,)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        statements = [row[0] for row in cursor.fetchall()]
    # One statement for the three runs; the ORM's own queries are never prepared.
    assert sum('"summaries_appearance"."position"' in sql for sql in statements) == 1
    assert not any('FROM "summaries_topic"' in sql for sql in statements)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's prepared statements")
def test_on_postgresql_a_compiled_query_is_never_planned_again_for_new_values():
    # Left to choose, PostgreSQL plans a prepared statement afresh for its first five runs
    # and, for most reader queries, on every run after: 0.1-0.4 ms each time.
    query = people_query()
    for _ in range(7):
        video = SummaryFactory(live=True).video
        assert query.run(video_id=video.pk) == reference_people(video.pk)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE %s",
            ['%"summaries_appearance"."position"%'],
        )
        assert cursor.fetchall() == [(7, 0)]  # seven runs of the one generic plan
