"""Every video's related list at once: the ranking of reader.related, in memory.

reader.related.refresh_related ranks one video's candidates in the database (six queries,
tens of milliseconds a video). Recomputing every list that way after an import, a topic
merge or a change of the ranking takes minutes at ten thousand videos. Here what the ranking
reads of every live video (people, topics, cited sources, title, date, the start of the
search text) is loaded once, in a few queries, into inverted indexes (person, topic and
source to the videos that have them); each video's candidates are then scored in Python from
those, with the same weights, the same candidate pool, the same text similarity and the same
reasons, and the lists are written in batches. The result is exactly what refresh_related
stores for each video (tests/test_related_bulk.py checks it).
"""

import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models.functions import Substr
from django.utils import timezone

from summaries.models import Appearance, Citation, RelatedLink, Source, Topic, Video
from summaries.pagecache.generation import content_changed

from .related import (
    CANDIDATE_POOL,
    STORED_COUNT,
    TEXT_SAMPLE_CHARS,
    W_PERSON,
    W_SOURCE,
    W_TEXT,
    W_TITLE_WORD,
    W_TOPIC,
    _text_similarity,
    _words,
    reasons_for,
    title_keywords,
)

# Lists written per transaction: one delete, one insert and one update per batch.
BATCH_SIZE = 500

_VideoTopic = Video.topics.through


@dataclass
class Catalogue:
    """What the ranking reads of every live video, and who links to what."""

    titles: dict[int, str] = field(default_factory=dict)
    days: dict[int, int] = field(default_factory=dict)  # published_on, as an ordinal
    texts: dict[int, str] = field(default_factory=dict)  # title and start of search text
    people: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # in card order
    topics: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # by name
    sources: dict[int, set[int]] = field(default_factory=dict)
    hosts: dict[int, str] = field(default_factory=dict)
    by_person: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_topic: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_source: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    _words: dict[int, set[str]] = field(default_factory=dict)

    def words(self, pk: int) -> set[str]:
        """The words text similarity compares, computed once per video."""
        found = self._words.get(pk)
        if found is None:
            found = self._words[pk] = set(_words(self.texts[pk], 3))
        return found


def load_catalogue(now) -> Catalogue:
    """Five queries: live videos, their appearances, topics and cited sources, and the
    hosts of those sources. Rows come in the order the per-video ranking shows them
    (appearances by position, topics by name), so that reasons list names alike."""
    catalogue = Catalogue()
    live = Video.objects.published(now).values("pk")
    rows = (
        Video.objects.filter(pk__in=live)
        .annotate(related_text=Substr("summary__search_document", 1, TEXT_SAMPLE_CHARS))
        .values_list("pk", "title", "published_on", "related_text")
    )
    for pk, title, day, text in rows.iterator(chunk_size=2000):
        catalogue.titles[pk] = title
        catalogue.days[pk] = day.toordinal()
        catalogue.texts[pk] = f"{title} {text or ''}"
        catalogue.people[pk] = []
        catalogue.topics[pk] = []
        catalogue.sources[pk] = set()

    appearances = (
        Appearance.objects.filter(video__in=live)
        .order_by("video_id", "position", "pk")
        .values_list("video_id", "person_id", "person__name")
    )
    for video_id, person_id, name in appearances.iterator(chunk_size=5000):
        catalogue.people[video_id].append((person_id, name))
        catalogue.by_person[person_id].append(video_id)

    names = dict(Topic.objects.values_list("pk", "name"))
    order = {
        pk: n for n, pk in enumerate(Topic.objects.order_by("name").values_list("pk", flat=True))
    }
    links = _VideoTopic.objects.filter(video__in=live).values_list("video_id", "topic_id")
    for video_id, topic_id in links.iterator(chunk_size=5000):
        catalogue.topics[video_id].append((topic_id, names[topic_id]))
        catalogue.by_topic[topic_id].append(video_id)
    for topics in catalogue.topics.values():
        topics.sort(key=lambda topic: order[topic[0]])

    cited = (
        Citation.objects.filter(summary__video__in=live)
        .order_by()
        .values_list("summary__video_id", "source_id")
        .distinct()
    )
    for video_id, source_id in cited.iterator(chunk_size=5000):
        catalogue.sources[video_id].add(source_id)
        catalogue.by_source[source_id].append(video_id)
    used = Source.objects.filter(citations__summary__video__in=live).order_by().distinct()
    catalogue.hosts = dict(used.values_list("pk", "host").iterator(chunk_size=5000))
    return catalogue


def _base_scores(catalogue: Catalogue, pk: int) -> tuple[dict[int, int], dict[int, int]]:
    """Score from shared people, topics and sources of every candidate of `pk`, and how
    many sources each shares. A candidate shares at least one of them."""
    scores: dict[int, int] = defaultdict(int)
    for person_id, _ in catalogue.people[pk]:
        for other in catalogue.by_person[person_id]:
            scores[other] += W_PERSON
    for topic_id, _ in catalogue.topics[pk]:
        for other in catalogue.by_topic[topic_id]:
            scores[other] += W_TOPIC
    shared_sources: dict[int, int] = defaultdict(int)
    for source_id in catalogue.sources[pk]:
        for other in catalogue.by_source[source_id]:
            shared_sources[other] += 1
    for other, n in shared_sources.items():
        scores[other] += W_SOURCE * n
    scores.pop(pk, None)
    return scores, shared_sources


def _pool(catalogue: Catalogue, pk: int, keywords: list[str]) -> list[tuple[int, int]]:
    """The CANDIDATE_POOL best candidates as (pk, score), ordered as the database's ranking
    (score, then newer, then lower id), title words included."""
    scores, _ = _base_scores(catalogue, pk)
    titles = catalogue.titles
    # A candidate can gain at most len(keywords) from its title: those whose score from the
    # rest stays below the pool's worst score even with every word cannot enter the pool.
    floor = None
    if len(scores) > CANDIDATE_POOL:
        floor = heapq.nlargest(CANDIDATE_POOL, scores.values())[-1] - W_TITLE_WORD * len(keywords)
    scored = []
    for other, score in scores.items():
        if floor is not None and score < floor:
            continue
        if keywords:
            title = titles[other].lower()
            score += W_TITLE_WORD * sum(1 for word in keywords if word in title)
        scored.append((-score, -catalogue.days[other], other))
    return [(other, -score) for score, _, other in heapq.nsmallest(CANDIDATE_POOL, scored)]


def rank(catalogue: Catalogue, pk: int, limit: int = STORED_COUNT) -> list[tuple]:
    """The related list of live video `pk`: (related pk, score, reasons), best first, as
    reader.related.related_videos ranks it."""
    if not (catalogue.people[pk] or catalogue.topics[pk] or catalogue.sources[pk]):
        return []
    keywords = title_keywords(catalogue.titles[pk])
    pool = _pool(catalogue, pk, keywords)
    if not pool:
        return []
    mine = catalogue.words(pk)
    ranked = sorted(
        (
            (
                round(score + W_TEXT * _text_similarity(mine, catalogue.words(other)), 4),
                catalogue.days[other],
                other,
            )
            for other, score in pool
        ),
        key=lambda row: (-row[0], -row[1], row[2]),
    )[:limit]
    return [(other, score, _reasons(catalogue, pk, other, keywords)) for score, _, other in ranked]


def _reasons(catalogue: Catalogue, pk: int, other: int, keywords: list[str]) -> list[str]:
    people = {person_id for person_id, _ in catalogue.people[pk]}
    topics = {topic_id for topic_id, _ in catalogue.topics[pk]}
    sources = catalogue.sources[pk] & catalogue.sources[other]
    return reasons_for(
        people=[name for person_id, name in catalogue.people[other] if person_id in people],
        sources=len(sources),
        host=min(catalogue.hosts[source_id] for source_id in sources) if sources else None,
        topics=[name for topic_id, name in catalogue.topics[other] if topic_id in topics],
        title=catalogue.titles[other],
        keywords=keywords,
    )


def refresh_all_related(
    *,
    ids: Iterable[int] | None = None,
    now=None,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Recompute and store the related lists of the videos `ids` (every live video when
    None), as refresh_related would one by one, and return how many lists were written.

    A video that is not live gets no entries and counts as never refreshed. Each batch of
    `batch_size` lists is one transaction (delete, insert, timestamps) that makes cached
    pages stale; `progress(done, total)` is called after each.
    """
    now = now or timezone.now()
    catalogue = load_catalogue(now)
    if ids is None:
        ids = sorted(catalogue.titles)
    ids = list(dict.fromkeys(ids))
    for start in range(0, len(ids), batch_size):
        batch = ids[start : start + batch_size]
        _store(catalogue, batch, now)
        if progress is not None:
            progress(start + len(batch), len(ids))
    return len(ids)


def _store(catalogue: Catalogue, batch: list[int], now) -> None:
    live = [pk for pk in batch if pk in catalogue.titles]
    links = [
        RelatedLink(video_id=pk, related_id=other, position=n, score=score, reasons=reasons)
        for pk in live
        for n, (other, score, reasons) in enumerate(rank(catalogue, pk), start=1)
    ]
    with transaction.atomic():
        RelatedLink.objects.filter(video__in=batch).delete()
        RelatedLink.objects.bulk_create(links, batch_size=2000)
        Video.objects.filter(pk__in=live).update(related_refreshed_at=now)
        offline = sorted(set(batch) - set(live))
        if offline:
            Video.objects.filter(pk__in=offline).update(related_refreshed_at=None)
        content_changed()
