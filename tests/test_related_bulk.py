import datetime
import io
import random

import pytest
from django.core.management import call_command
from django.utils import timezone

from summaries.models import Citation, RelatedLink, Source, Summary, Video
from summaries.reader import related, related_bulk
from summaries.reader.related import refresh_related
from summaries.reader.related_bulk import refresh_all_related

from .factories import AppearanceFactory, PersonFactory, SummaryFactory, TopicFactory, VideoFactory

pytestmark = pytest.mark.django_db

WORDS = (
    "frontier roadmap agents scaling reasoning benchmark alignment robotics inference "
    "keynote launch safety multimodal compute chips agentic scaling-laws open weights"
).split()
DAYS = [datetime.date(2026, 10, day) for day in (1, 1, 2, 3, 5)]


def catalogue(seed: int = 7, videos: int = 90) -> list[Video]:
    """Videos sharing people, topics and sources at random: live ones, drafts, scheduled
    ones, one without a summary; titles and texts drawn from few words (title scores and
    text similarity matter), few days (ties on the date) and topics named alike."""
    rng = random.Random(seed)
    people = [PersonFactory(name=f"Person {n % 7}") for n in range(10)]
    topics = [TopicFactory(name=name) for name in ["Agents", "agents", "Chips", "Safety"] * 2]
    hosts = ["arxiv.org", "openai.com", "anthropic.com", "example.org"]
    sources = [
        Source.objects.create(url=f"https://{hosts[n % 4]}/{n}", host=hosts[n % 4])
        for n in range(12)
    ]
    soon = timezone.now() + datetime.timedelta(days=1)
    made = []
    for n in range(videos):
        state = rng.choice(["live"] * 8 + ["draft", "scheduled"])
        title = " ".join(rng.sample(WORDS, rng.randint(1, 5))) + f" {n}"
        summary = SummaryFactory(
            video__title=title.capitalize(),
            video__published_on=rng.choice(DAYS),
            live=state == "live",
            **(
                {"status": Summary.Status.PUBLISHED, "publish_at": soon}
                if state == "scheduled"
                else {}
            ),
        )
        text = " ".join(rng.choices(WORDS, k=rng.randint(0, 40)))
        Summary.objects.filter(pk=summary.pk).update(search_document=text)
        chosen = rng.sample(people, rng.randint(0, 3))
        for position, person in zip(rng.sample(range(5), len(chosen)), chosen, strict=True):
            AppearanceFactory(video=summary.video, person=person, position=position)
        summary.video.topics.add(*rng.sample(topics, rng.randint(0, 3)))
        for cited in rng.sample(sources, rng.randint(0, 3)) * rng.randint(1, 2):
            Citation.objects.create(
                summary=summary, source=cited, url=cited.url, link_text="it", claim="So."
            )
        made.append(summary.video)
    made.append(VideoFactory(title="No summary agents"))
    return made


def stored() -> tuple[list[tuple], dict[int, datetime.datetime | None]]:
    links = RelatedLink.objects.order_by("video_id", "position").values_list(
        "video_id", "related_id", "position", "score", "reasons"
    )
    return list(links), dict(Video.objects.values_list("pk", "related_refreshed_at"))


@pytest.mark.parametrize("pool", [related.CANDIDATE_POOL, 4])
def test_bulk_recomputation_stores_what_refresh_related_stores(monkeypatch, pool):
    # A pool of 4 makes every video's candidates overflow it, as at scale.
    monkeypatch.setattr(related, "CANDIDATE_POOL", pool)
    monkeypatch.setattr(related_bulk, "CANDIDATE_POOL", pool)
    videos = catalogue()
    now = timezone.now()
    for video in videos:
        refresh_related(video=video, now=now)
    one_by_one = stored()
    assert len(one_by_one[0]) > 200
    assert any(reasons[0].startswith("cites the same source (") for *_, reasons in one_by_one[0])
    RelatedLink.objects.all().delete()
    Video.objects.update(related_refreshed_at=now - datetime.timedelta(days=3))

    assert refresh_all_related(ids=[v.pk for v in videos], now=now, batch_size=7) == len(videos)

    assert stored() == one_by_one


def test_every_live_video_by_default_one_page_cache_bump_per_batch(monkeypatch):
    videos = catalogue(seed=11, videos=30)
    live = sorted(Video.objects.published().values_list("pk", flat=True))
    bumps = []
    monkeypatch.setattr(related_bulk, "content_changed", lambda **tags: bumps.append(1))
    done = []

    assert refresh_all_related(batch_size=10, progress=lambda n, total: done.append(n)) == len(live)

    assert len(bumps) == len(done) == -(-len(live) // 10)
    assert done[-1] == len(live)
    assert set(RelatedLink.objects.values_list("video_id", flat=True)) <= set(live)
    refreshed = Video.objects.filter(related_refreshed_at__isnull=False)
    assert sorted(refreshed.values_list("pk", flat=True)) == live
    assert len(videos) > len(live)


def test_command_all_recomputes_every_live_list_in_bulk(monkeypatch):
    catalogue(seed=5, videos=20)
    calls = []
    monkeypatch.setattr(related, "refresh_related", lambda **kwargs: calls.append(kwargs))
    out = io.StringIO()
    call_command("refresh_related", "--all", stdout=out)
    live = Video.objects.published().count()
    assert calls == []
    assert f"Refreshed the related videos of {live} videos" in out.getvalue()
    assert Video.objects.filter(related_refreshed_at__isnull=False).count() == live


def test_beat_refreshes_many_old_lists_in_bulk_and_stores_the_same(monkeypatch):
    videos = catalogue(seed=13, videos=40)
    now = timezone.now()
    Summary.objects.filter(publish_at__gt=now).update(publish_at=now + 10 * related.MAX_AGE)
    for video in videos:
        refresh_related(video=video, now=now)
    one_by_one = stored()
    later = now + related.MAX_AGE * 2
    Video.objects.filter(related_refreshed_at__isnull=False).update(related_refreshed_at=now)
    bulk = []
    monkeypatch.setattr(related, "BULK_FROM", 5)
    monkeypatch.setattr(
        related_bulk,
        "refresh_all_related",
        lambda **kwargs: bulk.append(kwargs) or refresh_all_related(**kwargs),
    )
    monkeypatch.setattr(related, "refresh_related", None)  # never one by one

    refreshed = related.refresh_stale_related(limit=1000, now=later)

    live = sorted(Video.objects.published(later).values_list("pk", flat=True))
    assert refreshed == live and bulk == [{"ids": live, "now": later}]
    links, times = stored()
    assert links == one_by_one[0]
    assert {times[pk] for pk in live} == {later}
