"""Related videos across channels, ranked by what they share with a video, with the reasons."""

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import (
    Case,
    Count,
    F,
    FilteredRelation,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Substr
from django.utils import timezone

from summaries.models import Appearance, Citation, RelatedLink, Source, Video
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.generation import content_changed

from .cards import card, card_of_video, card_values
from .compiled import CompiledQuery

# Scoring weights. A shared person is the strongest sign that two videos belong together
# (the same voice, the same line of work); citing the same page means both discuss the same
# announcement or paper; a topic is broad (one topic spans many videos); a word shared by the
# titles is weak on its own. Integers, so that the database computes exact scores.
W_PERSON = 4
W_SOURCE = 3
W_TOPIC = 2
W_TITLE_WORD = 1
# Text similarity (Jaccard over the words of the title and the start of the search text) is
# at most 1, so it mostly orders videos whose shared people, sources and topics score alike.
W_TEXT = 1.0

# The database ranks every published video that shares a person, topic or source and returns
# this many; text similarity is computed in Python over those only, and the best `limit` kept.
CANDIDATE_POOL = 50
# Characters of a summary's search text compared for text similarity.
TEXT_SAMPLE_CHARS = 1500
# Significant title words (longest first) looked for in the candidates' titles; minimum length.
MAX_TITLE_WORDS = 4
MIN_TITLE_WORD = 4
MAX_REASONS = 3

_WORD = re.compile(r"\w+")
_STOP_WORDS = frozenset(
    """
    about after again all also and any are because been before being between both but can
    could did does doing down during each few for from further had has have having her here
    him his how into its just more most much new not now off once only other our out over own
    same she should some such than that the their them then there these they this those
    through too under until very was way were what when where which while who whom why will
    with would you your
    video videos episode podcast interview talk part live full explained
    """.split()
)

_VideoTopic = Video.topics.through


@dataclass(frozen=True)
class RelatedVideo:
    video: Video
    score: float
    reasons: list[str]


@dataclass(frozen=True)
class _Shared:
    """What the video links to: ids of its people, topics and cited sources."""

    people: frozenset[int]
    topics: frozenset[int]
    sources: frozenset[int]


def _words(text: str, min_length: int) -> list[str]:
    return [
        word
        for word in _WORD.findall(text.lower())
        if len(word) >= min_length and word not in _STOP_WORDS and not word.isdigit()
    ]


def title_keywords(title: str) -> list[str]:
    """The title's most specific words: distinct, longest first, then in title order."""
    words = list(dict.fromkeys(_words(title, MIN_TITLE_WORD)))
    return sorted(words, key=len, reverse=True)[:MAX_TITLE_WORDS]


def _text_similarity(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _shared_ids(video: Video) -> _Shared:
    """One query: the ids of the video's people, topics and cited sources."""

    def kind(n: int) -> Value:
        return Value(n, output_field=IntegerField())

    rows = (
        Appearance.objects.filter(video=video)
        .order_by()
        .values_list(kind(0), "person_id")
        .union(
            _VideoTopic.objects.filter(video=video).order_by().values_list(kind(1), "topic_id"),
            Citation.objects.filter(summary__video=video)
            .order_by()
            .values_list(kind(2), "source_id"),
            all=True,
        )
    )
    ids: tuple[set[int], set[int], set[int]] = (set(), set(), set())
    for n, pk in rows:
        ids[n].add(pk)
    return _Shared(*map(frozenset, ids))


def _ranked_candidates(
    video: Video, shared: _Shared, keywords: list[str], now, exclude: Collection[int] = ()
) -> QuerySet:
    """Published videos sharing a person, topic or source with `video`, best score first,
    other than `video` and the videos whose ids are in `exclude`.

    One query. Each kind of link is a LEFT JOIN restricted to the shared ids (so a candidate
    joins only its shared rows), counted per candidate with COUNT(DISTINCT); only videos
    in the hashed id lists are joined at all. Rows: pk, score, published_on, shared sources.
    """
    links = Q()
    relations = {}
    counts = {}
    if shared.people:
        links |= Q(pk__in=Appearance.objects.filter(person__in=shared.people).values("video_id"))
        relations["shared_person"] = FilteredRelation(
            "appearances", condition=Q(appearances__person__in=shared.people)
        )
        counts["people"] = W_PERSON * Count("shared_person", distinct=True)
    if shared.topics:
        links |= Q(pk__in=_VideoTopic.objects.filter(topic__in=shared.topics).values("video_id"))
        relations["shared_topic"] = FilteredRelation(
            "topics", condition=Q(topics__in=shared.topics)
        )
        counts["topics"] = W_TOPIC * Count("shared_topic", distinct=True)
    sources = Value(0)
    if shared.sources:
        links |= Q(
            summary__in=Citation.objects.filter(source__in=shared.sources).values("summary_id")
        )
        relations["shared_citation"] = FilteredRelation(
            "summary__citations", condition=Q(summary__citations__source__in=shared.sources)
        )
        sources = Count("shared_citation__source", distinct=True)
        counts["sources"] = W_SOURCE * sources
    score = Value(0)
    for count in counts.values():
        score += count
    for word in keywords:
        score += W_TITLE_WORD * Case(When(title__icontains=word, then=1), default=0)

    return (
        Video.objects.published(now)
        .exclude(pk__in=[video.pk, *exclude])
        .filter(links)
        .alias(**relations)
        .values("pk")
        .annotate(score=score, shared_sources=sources)
        .order_by("-score", "-published_on", "pk")
        .values_list("pk", "score", "published_on", "shared_sources")
    )


def _join(names: list[str]) -> str:
    if len(names) > 3:
        names = [*names[:2], f"{len(names) - 2} others"]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _reasons(candidate: Video, shared: _Shared, sources: int, keywords: list[str]) -> list[str]:
    """Why `candidate` is related, strongest first (from its prefetched people and topics)."""
    return reasons_for(
        people=[a.person.name for a in candidate.appearances.all() if a.person_id in shared.people],
        sources=sources,
        host=candidate.shared_source_host,
        topics=[t.name for t in candidate.topics.all() if t.pk in shared.topics],
        title=candidate.title,
        keywords=keywords,
    )


def reasons_for(
    *, people: list[str], sources: int, host: str | None, topics: list[str], title: str, keywords
) -> list[str]:
    """Why a candidate is related, strongest first: the names of the people and topics it
    shares (in its own order), how many cited sources it shares (with the host of one, shown
    when it shares exactly one), and its title, searched for the video's keywords."""
    reasons = []
    if people:
        reasons.append(f"also features {_join(people)}")
    if sources == 1:
        reasons.append(f"cites the same source ({host})" if host else "cites the same source")
    elif sources > 1:
        reasons.append(f"cites {sources} of the same sources")
    if topics:
        reasons.append(f"same topic{'s' if len(topics) > 1 else ''}: {_join(topics)}")
    title = title.lower()
    words = [f"“{word}”" for word in keywords if word in title]
    if words:
        reasons.append(f"title also mentions {_join(words)}")
    return reasons[:MAX_REASONS]


def related_videos(
    video: Video, *, limit: int = 10, now=None, exclude: Collection[int] = ()
) -> list[RelatedVideo]:
    """Published videos of any channel related to `video`, best first, with reasons.

    A video is related when it shares a person, a topic or a cited source. Score: W_PERSON
    per shared person, W_SOURCE per shared source, W_TOPIC per shared topic, W_TITLE_WORD
    per significant word of this title found in its title, plus W_TEXT times the text
    similarity. Ties go to the newer video, then the lower id. Only live videos appear
    (never drafts, in review or scheduled), never the video itself nor those in `exclude`
    (ids of videos the page shows elsewhere).

    Six queries whatever the number of candidates or results: the video's people, topics
    and sources; the database's ranking (at most CANDIDATE_POOL rows); the pool's text for
    similarity; the best `limit` videos with what a card shows (video and channel, people
    with organisations, topics). One query in all when the video has no people, topics or
    sources, two when nothing published shares any. reader.related_bulk ranks every video
    at once the same way, in memory: a change here is a change there
    (tests/test_related_bulk.py compares them).
    """
    if limit <= 0:
        return []
    shared = _shared_ids(video)
    if not (shared.people or shared.topics or shared.sources):
        return []
    keywords = title_keywords(video.title)
    pool = list(_ranked_candidates(video, shared, keywords, now, exclude)[:CANDIDATE_POOL])
    if not pool:
        return []

    texts = {
        pk: set(_words(f"{title} {text or ''}", 3))
        for pk, title, text in Video.objects.filter(pk__in=[video.pk, *(row[0] for row in pool)])
        .annotate(related_text=Substr("summary__search_document", 1, TEXT_SAMPLE_CHARS))
        .values_list("pk", "title", "related_text")
    }
    ranked = sorted(
        (
            (round(score + W_TEXT * _text_similarity(texts[video.pk], texts[pk]), 4), day, pk)
            for pk, score, day, _ in pool
        ),
        key=lambda row: (-row[0], -row[1].toordinal(), row[2]),
    )[:limit]
    shared_sources = {pk: sources for pk, _, _, sources in pool}

    # The host of one shared source, for the reason; correlated, but over these rows only.
    shared_source_host = (
        Source.objects.filter(pk__in=shared.sources, citations__summary__video=OuterRef("pk"))
        .order_by("host")
        .values("host")[:1]
    )
    videos = (
        Video.objects.filter(pk__in=[pk for _, _, pk in ranked])
        .with_listing_data()
        .annotate(shared_source_host=Subquery(shared_source_host))
        .in_bulk()
    )
    return [
        RelatedVideo(
            video=videos[pk],
            score=score,
            reasons=_reasons(videos[pk], shared, shared_sources[pk], keywords),
        )
        for score, _, pk in ranked
    ]


# --- Stored related videos -----------------------------------------------------------------

# Entries stored per video: more than a page shows, so that a stored video going offline
# (unpublished) leaves enough live ones behind until the next refresh.
STORED_COUNT = 20
# Refreshed on publish and unpublish (the video and its neighbours), and by celery beat
# once older than this, so that other videos' edits and new videos reach every list.
MAX_AGE = timedelta(hours=24)


def refresh_related(*, video: Video, now=None) -> list[RelatedLink]:
    """Compute `video`'s related videos and store them, replacing the previous entries.

    Idempotent: running it twice stores the same rows. A video that is not live gets no
    entries and counts as never refreshed, so that its page computes the list when it goes
    live (at a scheduled time, say) until the next beat refresh stores one. Makes cached
    pages stale.
    """
    now = now or timezone.now()
    live = Video.objects.published(now).filter(pk=video.pk).exists()
    found = related_videos(video, limit=STORED_COUNT, now=now) if live else []
    links = [
        RelatedLink(
            video=video, related=item.video, position=n, score=item.score, reasons=item.reasons
        )
        for n, item in enumerate(found, start=1)
    ]
    with transaction.atomic():
        RelatedLink.objects.filter(video=video).delete()
        RelatedLink.objects.bulk_create(links)
        Video.objects.filter(pk=video.pk).update(related_refreshed_at=now if live else None)
        content_changed(purge=cache_tags.of_videos([video.pk]))
    return links


def neighbours(video: Video) -> list[int]:
    """Ids of the videos whose related lists may change when `video` goes live or offline:
    those it lists and those that list it (relatedness is nearly symmetric)."""
    listed = RelatedLink.objects.filter(video=video).values_list("related_id", flat=True)
    listing = RelatedLink.objects.filter(related=video).values_list("video_id", flat=True)
    return sorted((set(listed) | set(listing)) - {video.pk})


def stale_videos(*, limit: int, now=None) -> list[int]:
    """Ids of live videos whose stored list is missing or older than MAX_AGE, oldest first."""
    now = now or timezone.now()
    return list(
        Video.objects.published(now)
        .filter(Q(related_refreshed_at__isnull=True) | Q(related_refreshed_at__lt=now - MAX_AGE))
        .order_by(F("related_refreshed_at").asc(nulls_first=True), "pk")
        .values_list("pk", flat=True)[:limit]
    )


@functools.lru_cache(maxsize=16)
def _stored_cards_query(size: int) -> CompiledQuery:
    """The first `size` live stored entries of a video, as card rows with score and reasons."""
    return CompiledQuery(
        RelatedLink,
        lambda video_id, now: card_values(
            RelatedLink.objects.filter(
                video_id=video_id, related__in=Video.objects.published(now).values("pk")
            ).order_by("position"),
            "related",
            ("score", "reasons"),
        )[:size],
        ids=("video_id",),
        now=True,
    )


def _stored_cards(video: Video, limit: int, exclude: Collection[int]) -> list[RelatedVideo]:
    # The videos in `exclude` are dropped here rather than in SQL, so that the query's
    # shape (and its compiled SQL) depends on their number only.
    excluded = set(exclude)
    rows = _stored_cards_query(limit + len(excluded)).run(video_id=video.pk)
    rows = [row for row in rows if row["card_pk"] not in excluded][:limit]
    return [RelatedVideo(card(row), row["score"], row["reasons"]) for row in rows]


def related_for_page(
    video: Video,
    *,
    limit: int = 10,
    topics: bool = True,
    people: bool = True,
    cards: bool = False,
    exclude: Collection[int] = (),
) -> list[RelatedVideo]:
    """The related videos a page shows: the stored list, or computed now if never stored.

    Stored: three queries (the live entries with video and channel, their people with
    organisations, their topics; two without `topics`, for cards that do not show them;
    one without `people` either, for a page that loads every card's people at once),
    whatever the size of the catalogue. With `cards`, each `video` is a card (reader.cards:
    a dictionary, no model instance) from that one query, without people (see
    reader.cards.add_people) or topics. Entries whose video is no longer live are skipped,
    and so are the videos in `exclude` (ids of those the page already shows, such as "More
    from this channel"): the next entries take their place, up to `limit`.
    """
    if video.related_refreshed_at is None:
        computed = related_videos(video, limit=limit, exclude=exclude)
        if cards:
            computed = [
                RelatedVideo(card_of_video(item.video), item.score, item.reasons)
                for item in computed
            ]
        return computed
    if cards:
        return _stored_cards(video, limit, exclude)
    live = Video.objects.published().values("pk")
    prefetch = []
    if people:
        prefetch.append(
            Prefetch(
                "related__appearances",
                queryset=Appearance.objects.select_related("person", "organisation"),
            )
        )
    if topics:
        prefetch.append("related__topics")
    links = RelatedLink.objects.filter(video=video, related__in=live)
    if exclude:
        links = links.exclude(related__in=list(exclude))
    links = (
        links.select_related("related__channel")
        .prefetch_related(*prefetch)
        .order_by("position")[:limit]
    )
    return [
        RelatedVideo(video=link.related, score=link.score, reasons=link.reasons) for link in links
    ]


def refresh_related_around(*, video: Video, now=None) -> list[int]:
    """Refresh `video`'s list and the lists of its neighbours, before and after.

    Called when the video goes live or offline: it may enter or leave the lists of the
    videos it is related to. Returns the ids refreshed.
    """
    before = set(neighbours(video))
    refresh_related(video=video, now=now)
    refreshed = [video.pk]
    for pk in sorted(before | set(neighbours(video))):
        other = Video.objects.filter(pk=pk).first()
        if other is not None:
            refresh_related(video=other, now=now)
            refreshed.append(pk)
    return refreshed


# Old lists a beat run recomputes together in bulk (reader.related_bulk) from this many on:
# loading what the ranking reads of every live video costs about as much as ranking fifty
# videos one by one.
BULK_FROM = 50


def refresh_stale_related(*, limit: int = 200, now=None) -> list[int]:
    """Refresh live videos whose list is missing or old, about `limit` lists a run (beat).

    A live video with no list has just gone live (at its scheduled time: publishing one
    for later refreshes nothing) or was never refreshed; the lists of its neighbours may
    now include it, so they are refreshed with it. Old lists are refreshed after those,
    together in bulk when there are BULK_FROM or more. Returns the ids refreshed, in order.
    """
    from .related_bulk import refresh_all_related  # it ranks with this module's functions

    refreshed: dict[int, None] = {}  # ordered set
    old: dict[int, Video] = {}
    for pk in stale_videos(limit=limit, now=now):
        if len(refreshed) + len(old) >= limit:
            break
        if pk in refreshed:  # already refreshed as a neighbour
            continue
        video = Video.objects.filter(pk=pk).first()
        if video is None:
            continue
        if video.related_refreshed_at is None:
            refreshed.update(dict.fromkeys(refresh_related_around(video=video, now=now)))
        else:
            old[pk] = video
    old = {pk: video for pk, video in old.items() if pk not in refreshed}
    if len(old) >= BULK_FROM:
        refresh_all_related(ids=list(old), now=now)
    else:
        for video in old.values():
            refresh_related(video=video, now=now)
    refreshed.update(dict.fromkeys(old))
    return list(refreshed)
