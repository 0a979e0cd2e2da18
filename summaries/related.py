"""Related videos across channels, ranked by what they share with a video, with the reasons."""

import re
from dataclasses import dataclass

from django.db.models import (
    Case,
    Count,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Left

from .models import Appearance, Citation, Source, Video

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

# The database ranks every published video that shares something and returns this many;
# text similarity is computed in Python over those only, and the best `limit` are kept.
CANDIDATE_POOL = 50
# Characters of a summary's search text compared for text similarity.
TEXT_SAMPLE_CHARS = 1500
# Significant title words (longest first) matched against other titles, and their minimum length.
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


def _count(queryset: QuerySet, group: str, counted: str = "pk", distinct: bool = False):
    """A correlated COUNT subquery (0 when no row matches)."""
    counts = (
        queryset.order_by().values(group).annotate(n=Count(counted, distinct=distinct)).values("n")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), 0)


def _sources_of(video: Video) -> QuerySet:
    """The ids of the sources the video's summary cites (a subquery)."""
    return Citation.objects.filter(summary__video=video).values("source_id")


def _candidates(video: Video, keywords: list[str], now) -> QuerySet[Video]:
    """Published videos sharing anything with `video`, best structural score first.

    One query: the video's people, topics and sources are subqueries, each candidate's shared
    counts are correlated subqueries, and only rows sharing something are scored at all.
    """
    people = Appearance.objects.filter(video=video).values("person_id")
    topics = _VideoTopic.objects.filter(video=video).values("topic_id")
    sources = _sources_of(video)

    shares = (
        Q(pk__in=Appearance.objects.filter(person__in=people).values("video_id"))
        | Q(pk__in=_VideoTopic.objects.filter(topic__in=topics).values("video_id"))
        | Q(summary__in=Citation.objects.filter(source__in=sources).values("summary_id"))
    )
    title_hits = Value(0)
    for word in keywords:
        shares |= Q(title__icontains=word)
        title_hits += Case(When(title__icontains=word, then=Value(1)), default=Value(0))

    return (
        Video.objects.published(now)
        .exclude(pk=video.pk)
        .filter(shares)
        .annotate(
            shared_people=_count(
                Appearance.objects.filter(video=OuterRef("pk"), person__in=people), "video"
            ),
            shared_topics=_count(
                _VideoTopic.objects.filter(video=OuterRef("pk"), topic__in=topics), "video"
            ),
            shared_sources=_count(
                Citation.objects.filter(summary=OuterRef("summary"), source__in=sources),
                "summary",
                counted="source",
                distinct=True,
            ),
        )
        .annotate(
            score=W_PERSON * F("shared_people")
            + W_TOPIC * F("shared_topics")
            + W_SOURCE * F("shared_sources")
            + W_TITLE_WORD * title_hits
        )
        .order_by("-score", "-published_on", "pk")
    )


def _join(names: list[str]) -> str:
    if len(names) > 3:
        names = [*names[:2], f"{len(names) - 2} others"]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _reasons(source: Video, candidate: Video, keywords: list[str]) -> list[str]:
    """Why `candidate` is related, strongest first (from prefetched people and topics)."""
    reasons = []
    source_people = {a.person_id for a in source.appearances.all()}
    people = [a.person.name for a in candidate.appearances.all() if a.person_id in source_people]
    if people:
        reasons.append(f"also features {_join(people)}")
    shared_sources = candidate.shared_sources
    if shared_sources == 1:
        host = candidate.shared_source_host
        reasons.append(f"cites the same source ({host})" if host else "cites the same source")
    elif shared_sources > 1:
        reasons.append(f"cites {shared_sources} of the same sources")
    source_topics = {t.pk for t in source.topics.all()}
    topics = [t.name for t in candidate.topics.all() if t.pk in source_topics]
    if topics:
        reasons.append(f"same topic{'s' if len(topics) > 1 else ''}: {_join(topics)}")
    title = candidate.title.lower()
    words = [f"“{word}”" for word in keywords if word in title]
    if words:
        reasons.append(f"title also mentions {_join(words)}")
    return reasons[:MAX_REASONS]


def related_videos(video: Video, *, limit: int = 10, now=None) -> list[RelatedVideo]:
    """Published videos of any channel related to `video`, best first, with reasons.

    Score: W_PERSON per shared person, W_SOURCE per shared cited source, W_TOPIC per shared
    topic, W_TITLE_WORD per significant title word the other title contains, plus W_TEXT
    times the text similarity. Ties go to the newer video, then the lower id. Only live
    videos appear (never drafts, in review or scheduled); the video itself never does; a
    video sharing nothing is not related. Queries: one to rank the candidates in the
    database, then three to load the best with what a card shows (channel, people with
    their organisations, topics), whatever the number of candidates or results.
    """
    if limit <= 0:
        return []
    keywords = title_keywords(video.title)
    pool = list(_candidates(video, keywords, now).values_list("pk", "score")[:CANDIDATE_POOL])
    if not pool:
        return []

    sources = _sources_of(video)
    shared_source_host = (
        Source.objects.filter(citations__summary__video=OuterRef("pk"), pk__in=sources)
        .order_by("host")
        .values("host")[:1]
    )
    loaded = {
        v.pk: v
        for v in Video.objects.filter(pk__in=[video.pk, *(pk for pk, _ in pool)])
        .with_listing_data()
        .annotate(
            related_text=Left("summary__search_document", TEXT_SAMPLE_CHARS),
            shared_sources=_count(
                Citation.objects.filter(summary__video=OuterRef("pk"), source__in=sources),
                "summary",
                counted="source",
                distinct=True,
            ),
            shared_source_host=Subquery(shared_source_host),
        )
    }
    source = loaded[video.pk]

    def text_words(v: Video) -> set[str]:
        return set(_words(f"{v.title} {v.related_text or ''}", 3))

    source_words = text_words(source)
    ranked = []
    for pk, score in pool:
        candidate = loaded[pk]
        score = round(score + W_TEXT * _text_similarity(source_words, text_words(candidate)), 4)
        ranked.append((candidate, score))
    ranked.sort(key=lambda item: (-item[1], -item[0].published_on.toordinal(), item[0].pk))
    return [
        RelatedVideo(
            video=candidate,
            score=score,
            reasons=_reasons(source, candidate, keywords),
        )
        for candidate, score in ranked[:limit]
    ]
