"""The summary page's people, topics and cited sources as plain rows (reader/page_rows.py):
the same values, in the same order, as the models give."""

import datetime

import pytest

from summaries.models import Citation, Source
from summaries.reader import page_rows
from summaries.reader.presentation import label_sources

from .factories import (
    AppearanceFactory,
    OrganisationFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db

CHECKED_AT = datetime.datetime(2026, 12, 3, 23, 30, 15, 123456, tzinfo=datetime.UTC)


@pytest.fixture
def summary():
    summary = SummaryFactory(live=True)
    video = summary.video
    # Positions out of creation order; one person speaks for no organisation.
    AppearanceFactory(
        video=video,
        person=PersonFactory(name="Grace Hopper", slug="grace"),
        organisation=OrganisationFactory(name="Navy", domains="Navy.mil\n navy.example "),
        position=2,
    )
    AppearanceFactory(
        video=video, person=PersonFactory(name="Ada Lovelace", slug="ada"), position=1
    )
    video.topics.add(
        TopicFactory(name="chips", slug="chips"),
        TopicFactory(name="Agents", slug="agents"),
        TopicFactory(name="Benchmarks", slug="benchmarks"),
    )
    checked = Source.objects.create(
        url="https://moved.example/a",
        host="moved.example",
        state=Source.State.REDIRECTED,
        status_code=200,
        final_url="https://moved.example/b",
        last_checked_at=CHECKED_AT,
    )
    unchecked = Source.objects.create(url="https://new.example/", host="new.example")
    for position, source in ((2, unchecked), (1, checked)):
        Citation.objects.create(
            summary=summary,
            source=source,
            position=position,
            url=source.url,
            link_text=f"link {position}",
            claim=f"Claim {position}.",
            key_phrase=f"phrase {position}",
        )
    return summary


def test_people_come_in_their_order_on_the_video_with_their_organisation(summary):
    people = page_rows.people(summary.video_id)
    assert [p.person.name for p in people] == ["Ada Lovelace", "Grace Hopper"]
    assert [p.person.get_absolute_url() for p in people] == ["/people/ada/", "/people/grace/"]
    assert people[0].organisation is None
    assert people[1].organisation.name == "Navy"
    assert people[1].organisation.domain_list() == ["navy.mil", "navy.example"]


def test_topics_come_by_name(summary):
    topics = page_rows.topics(summary.video_id)
    assert [t.name for t in topics] == ["Agents", "Benchmarks", "chips"]
    assert topics[0].get_absolute_url() == "/topics/agents/"


def test_citations_carry_their_sources_latest_check(summary):
    citations = page_rows.citations(summary.pk)
    assert [c.link_text for c in citations] == ["link 1", "link 2"]
    first, second = citations
    assert (first.url, first.claim, first.key_phrase) == (
        "https://moved.example/a",
        "Claim 1.",
        "phrase 1",
    )
    assert first.source.last_checked_at == CHECKED_AT
    assert first.source.status_code == 200
    assert second.source.last_checked_at is None
    assert second.source.state == Source.State.UNCHECKED


def test_readers_see_the_same_labels_as_from_the_models(summary, settings):
    # 23:30 UTC on 3 December is already 4 December in Auckland.
    settings.TIME_ZONE = "Pacific/Auckland"
    from_rows = page_rows.citations(summary.pk)
    from_models = list(summary.citations.select_related("source"))
    label_sources(from_rows)
    label_sources(from_models)
    assert [c.source_label for c in from_rows] == [c.source_label for c in from_models]
    shown = from_rows[0].source_label
    assert "4 Dec 2026" in shown.label + shown.explanation
    assert shown.moved_to == "https://moved.example/b"


def test_a_summary_with_no_people_topics_or_citations_has_empty_lists():
    summary = SummaryFactory(live=True)
    assert page_rows.people(summary.video_id) == []
    assert page_rows.topics(summary.video_id) == []
    assert page_rows.citations(summary.pk) == []


def test_the_summary_page_shows_them(client, summary):
    html = client.get(summary.video.get_absolute_url()).content.decode()
    assert html.index(">Ada Lovelace<") < html.index(">Grace Hopper<") < html.index(" · Navy<")
    assert html.index(">Agents<") < html.index(">Benchmarks<") < html.index(">chips<")
    assert html.index(">link 1<") < html.index(">link 2<")
