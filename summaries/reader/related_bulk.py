"""Every video's related list at once: the ranking of reader.related, in memory.

reader.related.refresh_related ranks one video's candidates in the database (six queries,
tens of milliseconds a video). Recomputing every list that way after an import, a topic
merge or a change of the ranking takes minutes at ten thousand videos. Here what the ranking
reads of every live video (people, topics, cited sources, title, date, the start of the
search text) is loaded once, in a few queries, into inverted indexes (person, topic and
source to the videos that have them); each video's candidates are then scored in Python from
those, with the same weights, the same candidate pool, the same text similarity and the same
reasons, and the lists are written in batches. The result is exactly what refresh_related
stores for each video (tests/test_related_bulk.py checks it): change one, change both.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction
from django.db.models.functions import Substr
from django.utils import timezone

from summaries.models import Appearance, Citation, RelatedLink, Source, Topic, Video
from summaries.models.rows import insert_rows
from summaries.pagecache import tags as cache_tags
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
    # Every live video has a row, in id order: scores are summed in arrays of one element
    # per row. Person, topic and source to the rows of the live videos that have it.
    order: list[int] = field(default_factory=list)
    row: dict[int, int] = field(default_factory=dict)
    day_of_row: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    by_person: dict[int, np.ndarray] = field(default_factory=dict)
    by_topic: dict[int, np.ndarray] = field(default_factory=dict)
    by_source: dict[int, np.ndarray] = field(default_factory=dict)
    _words: dict[int, set[str]] = field(default_factory=dict)
    _vocabulary: dict[str, str] = field(default_factory=dict)
    _titled: dict[str, np.ndarray] = field(default_factory=dict)
    _lower: list[str] = field(default_factory=list)

    def index(self) -> None:
        """Number the rows and turn who links to what into arrays of rows."""
        self.order = sorted(self.titles)
        self.row = {pk: n for n, pk in enumerate(self.order)}
        self.day_of_row = np.array([self.days[pk] for pk in self.order], dtype=np.int64)
        row = self.row
        people = ((pk, person) for pk, found in self.people.items() for person, _ in found)
        topics = ((pk, topic) for pk, found in self.topics.items() for topic, _ in found)
        sources = ((pk, source) for pk, found in self.sources.items() for source in found)
        self.by_person = _rows_by_item(people, row)
        self.by_topic = _rows_by_item(topics, row)
        self.by_source = _rows_by_item(sources, row)

    def words(self, pk: int) -> set[str]:
        """The words text similarity compares, computed once per video."""
        found = self._words.get(pk)
        if found is None:
            # One string per distinct word, shared by every video's set: at 50,000 videos
            # each video's own copies took 700 MB.
            vocabulary = self._vocabulary
            words = {vocabulary.setdefault(word, word) for word in _words(self.texts[pk], 3)}
            found = self._words[pk] = words
        return found

    def titled(self, word: str) -> np.ndarray:
        """The rows of the live videos whose title contains `word` (a lowercase title
        keyword), as title__icontains finds them (alike for every title in ASCII: the
        databases ignore the case of other letters in their own ways); computed once per
        word."""
        found = self._titled.get(word)
        if found is None:
            if not self._lower:
                self._lower = [self.titles[pk].lower() for pk in self.order]
            rows = [n for n, title in enumerate(self._lower) if word in title]
            found = self._titled[word] = np.array(rows, dtype=np.intp)
        return found


def _rows_by_item(links: Iterable[tuple[int, int]], row: dict[int, int]) -> dict[int, np.ndarray]:
    """(video, item) pairs as each item's array of the rows of its videos."""
    rows: dict[int, list[int]] = defaultdict(list)
    for pk, item in links:
        rows[item].append(row[pk])
    return {item: np.array(found, dtype=np.intp) for item, found in rows.items()}


def load_catalogue(now) -> Catalogue:
    """Six queries: live videos, their appearances, every topic, live videos' topics and
    cited sources, and the hosts of those sources. Rows come in the order the per-video
    ranking shows them (appearances by position, topics by name in the database's
    collation), so that reasons list names alike."""
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

    named = Topic.objects.order_by("name").values_list("pk", "name")  # the database's collation
    names = dict(named)
    order = {pk: n for n, pk in enumerate(names)}
    links = _VideoTopic.objects.filter(video__in=live).values_list("video_id", "topic_id")
    for video_id, topic_id in links.iterator(chunk_size=5000):
        catalogue.topics[video_id].append((topic_id, names[topic_id]))
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
    used = Source.objects.filter(citations__summary__video__in=live).order_by().distinct()
    catalogue.hosts = dict(used.values_list("pk", "host").iterator(chunk_size=5000))
    catalogue.index()
    return catalogue


def _scores(catalogue: Catalogue, pk: int, keywords: list[str]) -> np.ndarray:
    """The database's score of every candidate of `pk`, one element per row (0 for a
    video that is no candidate, and for `pk`): W_PERSON, W_TOPIC and W_SOURCE for each
    person, topic and cited source it shares with `pk`, plus W_TITLE_WORD per keyword in
    its title. Summed in one array over the whole catalogue, so that a video costs a few
    passes in C rather than a Python step per candidate (thousands at 50,000 videos)."""
    scores = np.zeros(len(catalogue.order), dtype=np.int64)
    for person_id, _ in catalogue.people[pk]:
        scores[catalogue.by_person[person_id]] += W_PERSON
    for topic_id, _ in catalogue.topics[pk]:
        scores[catalogue.by_topic[topic_id]] += W_TOPIC
    for source_id in catalogue.sources[pk]:
        scores[catalogue.by_source[source_id]] += W_SOURCE
    scores[catalogue.row[pk]] = 0
    candidate = scores > 0  # a title word counts only for a video sharing something
    for word in keywords:
        rows = catalogue.titled(word)
        scores[rows[candidate[rows]]] += W_TITLE_WORD
    return scores


def _pool(catalogue: Catalogue, scores: np.ndarray) -> list[tuple[int, int]]:
    """The CANDIDATE_POOL best candidates as (pk, score), ordered as the database ranks
    them: score, then newer, then lower id (rows are in id order)."""
    rows = np.flatnonzero(scores)
    if len(rows) > CANDIDATE_POOL:
        kept = scores[rows]
        worst = np.partition(kept, len(kept) - CANDIDATE_POOL)[len(kept) - CANDIDATE_POOL]
        rows = rows[kept >= worst]
    best = rows[np.lexsort((rows, -catalogue.day_of_row[rows], -scores[rows]))]
    order = catalogue.order
    return [(order[row], int(scores[row])) for row in best[:CANDIDATE_POOL]]


def _similarity(a: set[str], b: set[str]) -> float:
    """related._text_similarity (the same division), without building the union."""
    if not (a and b):
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def rank(catalogue: Catalogue, pk: int, limit: int = STORED_COUNT) -> list[tuple]:
    """The related list of live video `pk`: (related pk, score, reasons), best first, as
    reader.related.related_videos ranks it."""
    if not (catalogue.people[pk] or catalogue.topics[pk] or catalogue.sources[pk]):
        return []
    keywords = title_keywords(catalogue.titles[pk])
    pool = _pool(catalogue, _scores(catalogue, pk, keywords))
    if not pool:
        return []
    mine = catalogue.words(pk)
    ranked = sorted(
        (
            (
                round(score + W_TEXT * _similarity(mine, catalogue.words(other)), 4),
                catalogue.days[other],
                other,
            )
            for other, score in pool
        ),
        key=lambda row: (-row[0], -row[1], row[2]),
    )[:limit]
    why = _Reasons(catalogue, pk, keywords)
    return [(other, score, why.of(other)) for score, _, other in ranked]


class _Reasons:
    """Why candidates are related to one video: what they share with it."""

    def __init__(self, catalogue: Catalogue, pk: int, keywords: list[str]):
        self.catalogue = catalogue
        self.people = {person_id for person_id, _ in catalogue.people[pk]}
        self.topics = {topic_id for topic_id, _ in catalogue.topics[pk]}
        self.sources = catalogue.sources[pk]
        self.keywords = keywords

    def of(self, other: int) -> list[str]:
        catalogue = self.catalogue
        sources = self.sources & catalogue.sources[other]
        return reasons_for(
            people=[name for pk, name in catalogue.people[other] if pk in self.people],
            sources=len(sources),
            host=min(catalogue.hosts[pk] for pk in sources) if sources else None,
            topics=[name for pk, name in catalogue.topics[other] if pk in self.topics],
            title=catalogue.titles[other],
            keywords=self.keywords,
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
    """One transaction: the batch's old entries deleted, its new ones inserted in one
    statement (models.rows: each column sent as one array on PostgreSQL), its videos'
    refresh times set, and cached pages made stale."""
    live = [pk for pk in batch if pk in catalogue.titles]
    rows = [
        (pk, other, n, score, reasons)
        for pk in live
        for n, (other, score, reasons) in enumerate(rank(catalogue, pk), start=1)
    ]
    with transaction.atomic():
        RelatedLink.objects.filter(video__in=batch).delete()
        if rows:
            names = ("video_id", "related_id", "position", "score", "reasons")
            insert_rows(RelatedLink, dict(zip(names, zip(*rows, strict=True), strict=True)))
        Video.objects.filter(pk__in=live).update(related_refreshed_at=now)
        offline = sorted(set(batch) - set(live))
        if offline:
            Video.objects.filter(pk__in=offline).update(related_refreshed_at=None)
        content_changed(purge=cache_tags.of_videos(batch))
