import datetime
import io
from itertools import count

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from summaries.editing import derived, workflow
from summaries.models import Citation, RelatedLink, Source, Summary, Video
from summaries.reader.card_html import card_html
from summaries.reader.cards import card_of_video
from summaries.reader.related import (
    MAX_AGE,
    W_PERSON,
    W_SOURCE,
    W_TEXT,
    W_TITLE_WORD,
    W_TOPIC,
    refresh_related,
    refresh_stale_related,
    related_for_page,
    related_videos,
    stale_videos,
)

from .factories import (
    AppearanceFactory,
    OrganisationFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 10, 1)
_titles = count()


def summary(title=None, *, published_on=DAY, people=(), topics=(), sources=(), **kwargs):
    """A summary (live unless told otherwise) whose video has these people and topics."""
    kwargs.setdefault("live", True)
    made = SummaryFactory(
        video__title=title or f"Untitled {next(_titles)}",
        video__published_on=published_on,
        **kwargs,
    )
    for position, person in enumerate(people):
        AppearanceFactory(video=made.video, person=person, position=position)
    made.video.topics.add(*topics)
    for cited in sources:
        Citation.objects.create(
            summary=made, source=cited, url=cited.url, link_text="paper", claim="It says so."
        )
    return made


def source(url):
    return Source.objects.create(url=url, host=url.split("/")[2])


def ordered(results):
    return [(r.video.title, r.reasons) for r in results]


@pytest.fixture
def world():
    """Video A and neighbours whose right order is known (see test_ranks_by_what_is_shared)."""
    altman = PersonFactory(name="Sam Altman")
    amodei = PersonFactory(name="Dario Amodei")
    agents = TopicFactory(name="Agents")
    paper = source("https://arxiv.org/abs/2601.00001")
    a = summary("Frontier roadmap", people=[altman, amodei], topics=[agents], sources=[paper])
    summary("B Keynote", people=[altman], topics=[agents])
    summary("C Benchmarks", topics=[agents])
    summary("D Paper review", sources=[paper])
    summary("E Cooking show")
    summary("F Draft with Altman", people=[altman], live=False)
    summary(
        "G Scheduled with Altman",
        people=[altman],
        status=Summary.Status.PUBLISHED,
        publish_at=timezone.now() + datetime.timedelta(days=1),
    )
    summary("H In review", people=[amodei], topics=[agents], status=Summary.Status.IN_REVIEW)
    summary("I Roadmap for robots", topics=[agents])
    summary("J Roadmap alone")
    return a.video


def test_ranks_by_what_is_shared_with_reasons(world):
    results = related_videos(world)

    assert ordered(results) == [
        ("B Keynote", ["also features Sam Altman", "same topic: Agents"]),
        ("I Roadmap for robots", ["same topic: Agents", "title also mentions “roadmap”"]),
        ("D Paper review", ["cites the same source (arxiv.org)"]),
        ("C Benchmarks", ["same topic: Agents"]),
    ]
    # I: a topic, a title word, and a third of the title words in common (text similarity).
    assert [r.score for r in results] == [
        W_PERSON + W_TOPIC,
        round(W_TOPIC + W_TITLE_WORD + W_TEXT / 3, 4),
        W_SOURCE,
        W_TOPIC,
    ]


def test_never_includes_the_video_itself_drafts_review_or_scheduled(world):
    titles = {r.video.title for r in related_videos(world, limit=50)}

    assert "Frontier roadmap" not in titles
    assert not titles & {"F Draft with Altman", "G Scheduled with Altman", "H In review"}
    # Sharing nothing, or only a title word, is not enough to be related.
    assert not titles & {"E Cooking show", "J Roadmap alone"}


def test_scheduled_video_appears_once_its_time_has_come(world):
    later = timezone.now() + datetime.timedelta(days=2)

    titles = [r.video.title for r in related_videos(world, now=later)]

    assert titles[0] == "B Keynote"
    assert "G Scheduled with Altman" in titles


def test_limit_is_respected(world):
    assert [r.video.title for r in related_videos(world, limit=2)] == [
        "B Keynote",
        "I Roadmap for robots",
    ]
    assert related_videos(world, limit=0) == []


def test_ties_go_to_the_newer_video_then_the_lower_id():
    topic = TopicFactory(name="Robotics")
    a = summary("Origin", topics=[topic])
    older = summary("Older", topics=[topic], published_on=DAY - datetime.timedelta(days=3))
    first = summary("Same day first", topics=[topic])
    second = summary("Same day second", topics=[topic])
    newer = summary("Newer", topics=[topic], published_on=DAY + datetime.timedelta(days=3))
    assert first.video.pk < second.video.pk

    results = related_videos(a.video)

    assert [r.video for r in results] == [newer.video, first.video, second.video, older.video]
    assert {r.score for r in results} == {W_TOPIC}


def test_similar_text_breaks_a_tie_in_shared_topics():
    topic = TopicFactory(name="Compute")
    a = summary("Origin", topics=[topic], tldr="Training budgets decide which labs stay ahead.")
    plain = summary("Newer but unlike", topics=[topic], published_on=DAY)
    similar = summary(
        "Older but alike",
        topics=[topic],
        published_on=DAY - datetime.timedelta(days=30),
        tldr="Which labs stay ahead? Training budgets decide it.",
    )
    for item in (a, plain, similar):
        derived.update_search_document(summary=item)

    results = related_videos(a.video)

    assert [r.video for r in results] == [similar.video, plain.video]
    assert W_TOPIC < results[0].score < W_TOPIC + 1
    assert results[1].score == W_TOPIC


def test_many_shared_people_and_topics_are_named_and_reasons_are_capped():
    people = [PersonFactory(name=name) for name in ("Ann", "Bo", "Cy", "Di")]
    topics = [TopicFactory(name=name) for name in ("Agents", "Chips")]
    paper, post = source("https://arxiv.org/abs/1"), source("https://example.com/post")
    a = summary("Origin talk", people=people, topics=topics, sources=[paper, post])
    summary("Panel", people=people, topics=topics, sources=[paper, post])

    (result,) = related_videos(a.video)

    assert result.reasons == [
        "also features Ann, Bo and 2 others",
        "cites 2 of the same sources",
        "same topics: Agents and Chips",
    ]


def test_a_video_sharing_nothing_has_no_related_videos(django_assert_num_queries):
    a = summary("Origin")
    summary("Elsewhere")

    with django_assert_num_queries(1):
        assert related_videos(a.video) == []


def build_neighbours(size):
    """A video with `size` published neighbours of every kind, plus drafts that never count."""
    people = [PersonFactory() for _ in range(3)]
    topics = [TopicFactory() for _ in range(3)]
    sources = [source(f"https://example.com/paper/{n}") for n in range(3)]
    organisation = OrganisationFactory()
    a = summary("Origin", people=people, topics=topics, sources=sources)
    for n in range(size):
        neighbour = summary(
            people=people[: n % 3 + 1], topics=topics[n % 2 :], sources=sources[n % 3 :]
        )
        neighbour.video.appearances.update(organisation=organisation)
        summary(people=people, live=False)
    return a.video


@pytest.mark.parametrize("size", [8, 24])
def test_query_count_does_not_grow_with_candidates_or_results(size, django_assert_num_queries):
    video = build_neighbours(size)

    # The video's links, the ranking, the pool's text, the videos with channel, their people
    # with organisations, their topics.
    with django_assert_num_queries(6):
        results = related_videos(video, limit=size)
        cards = [card_html(card_of_video(r.video)) for r in results]

    assert len(results) == size
    assert all("Organisation" in card for card in cards)
    assert all(r.reasons for r in results)


# --- Stored related lists ------------------------------------------------------------------


def test_stored_list_matches_the_computed_one_and_is_what_pages_show(
    world, django_assert_num_queries
):
    links = refresh_related(video=world)
    world.refresh_from_db()

    assert world.related_refreshed_at is not None
    assert [link.related.title for link in links] == [r.video.title for r in related_videos(world)]
    with django_assert_num_queries(3):  # entries with video and channel, people, topics
        shown = related_for_page(world, limit=3)
    assert ordered(shown) == ordered(related_videos(world, limit=3))
    # Idempotent: the same rows again, not twice as many.
    refresh_related(video=world)
    assert RelatedLink.objects.filter(video=world).count() == len(links)


def test_a_stored_entry_that_goes_offline_is_not_shown(world):
    refresh_related(video=world)
    world.refresh_from_db()
    keynote = Summary.objects.get(video__title="B Keynote")
    workflow.unpublish_summary(summary=keynote)

    titles = [r.video.title for r in related_for_page(world)]

    assert "B Keynote" not in titles
    assert titles[0] == "I Roadmap for robots"


def test_a_video_never_refreshed_computes_its_list_on_the_page(world):
    assert world.related_refreshed_at is None
    assert ordered(related_for_page(world)) == ordered(related_videos(world))


def test_publishing_refreshes_the_video_and_its_neighbours(
    world, django_capture_on_commit_callbacks, celery_eager
):
    keynote = Video.objects.get(title="B Keynote")
    refresh_related(video=keynote)
    draft = Summary.objects.get(video__title="F Draft with Altman")
    assert "F Draft with Altman" not in titles_stored(keynote)

    with django_capture_on_commit_callbacks(execute=True):
        workflow.publish_summary(summary=draft)

    assert "F Draft with Altman" in titles_stored(keynote)
    assert "B Keynote" in titles_stored(draft.video)

    with django_capture_on_commit_callbacks(execute=True):
        workflow.unpublish_summary(summary=draft)

    assert "F Draft with Altman" not in titles_stored(keynote)
    draft.video.refresh_from_db()
    assert draft.video.related_refreshed_at is None  # its page computes a list if it returns
    assert not RelatedLink.objects.filter(video=draft.video).exists()


def titles_stored(video):
    return list(
        RelatedLink.objects.filter(video=video)
        .order_by("position")
        .values_list("related__title", flat=True)
    )


def test_beat_refreshes_missing_and_old_lists_first_and_bounded(world):
    now = timezone.now()
    live = list(Video.objects.published().order_by("pk"))
    for video in live[1:]:
        refresh_related(video=video, now=now)
    old = live[1]
    Video.objects.filter(pk=old.pk).update(related_refreshed_at=now - MAX_AGE * 2)

    assert stale_videos(limit=10, now=now) == [live[0].pk, old.pk]
    Video.objects.filter(pk=live[0].pk).update(related_refreshed_at=now - MAX_AGE * 3)
    assert refresh_stale_related(limit=1, now=now) == [live[0].pk]
    assert stale_videos(limit=10, now=now) == [old.pk]
    call_command("refresh_related", stdout=io.StringIO())
    assert stale_videos(limit=10, now=now) == []


def test_beat_adds_a_video_that_went_live_to_its_neighbours_lists(world):
    keynote = Video.objects.get(title="B Keynote")
    for video in Video.objects.published():
        refresh_related(video=video)
    assert "G Scheduled with Altman" not in titles_stored(keynote)
    scheduled = Video.objects.get(title="G Scheduled with Altman")
    later = scheduled.summary.publish_at + datetime.timedelta(minutes=1)

    refreshed = refresh_stale_related(now=later)

    assert refreshed[0] == scheduled.pk  # its own list first, then its neighbours'
    assert keynote.pk in refreshed
    assert "G Scheduled with Altman" in titles_stored(keynote)
    assert "B Keynote" in titles_stored(scheduled)
    assert stale_videos(limit=10, now=later) == []


def test_summary_page_with_stored_related_uses_fewer_queries(
    client, world, django_assert_num_queries, django_assert_max_num_queries, settings
):
    settings.PAGE_CACHE_LOCAL_BYTES = 0  # emptying the cache renders the page again
    url = world.get_absolute_url()
    client.get(url)  # stores the page's article (summaries/reader/article.py)
    cache.clear()
    with django_assert_max_num_queries(10_000) as computed:
        assert client.get(url).status_code == 200
    cache.clear()
    refresh_related(video=world)
    cache.clear()
    # Computed: 6 queries; stored, for cards that show no topics: 2 (the entries, and the
    # people of every card on the page).
    with django_assert_num_queries(len(computed.captured_queries) - 4):
        content = client.get(url).content.decode()
    assert content.index("B Keynote") < content.index("C Benchmarks")
    assert "Also features Sam Altman" in content
