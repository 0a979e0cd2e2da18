"""Search over live summaries: PostgreSQL full-text search, a word-by-word fallback elsewhere.

Both read every apostrophe the same way (summaries.text.apostrophes): "Anthropic's" finds
"Anthropic’s" and the reverse, in the query and in the text searched.
"""

import re

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVectorField
from django.db import connections
from django.db.models import (
    Case,
    Exists,
    Expression,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    TextField,
    Value,
    When,
)
from django.db.models.expressions import Col
from django.db.models.functions import Replace

from summaries.models import Summary, Transcript
from summaries.text.apostrophes import APOSTROPHES, fold_apostrophes

# Longer queries are cut: nobody types more, and each extra word costs the database time
# (ranking walks the positions of every query word in every match).
MAX_QUERY_CHARS = 200
MAX_QUERY_WORDS = 8
# Ranking reads every match's positions, so a common word over thousands of long transcripts
# would take seconds. Only the newest MAX_RANKED matches are ranked (and returned).
MAX_RANKED = 300

# Must match the configuration of the search_vector column (migration 0005).
SEARCH_CONFIG = "english"
# Hyphens with nothing between them that web-search syntax reads as a word (websearch_text).
_NEGATION_RUN = re.compile(r'-(?:[^\w"]*-)+')

# Quotes around a word, which the fallback does not look for ("'robots'" finds "robots").
_QUOTES = "'\""

_SEARCH_VECTOR = SearchVectorField()
_SEARCH_VECTOR.set_attributes_from_name("search_vector")
_SEARCH_VECTOR.model = Summary
_TRANSCRIPT_VECTOR = SearchVectorField()
_TRANSCRIPT_VECTOR.set_attributes_from_name("search_vector")
_TRANSCRIPT_VECTOR.model = Transcript


class StoredSearchVector(Expression):
    """The summary's `search_vector` column, which exists on PostgreSQL only.

    Migration 0005_summary_search_vector adds it as a stored generated column (title words
    weighted A, the whole search_document B) with a GIN index. It is not a model field, so
    SQLite needs no such column. Stored rather than an expression index because computing
    to_tsvector() per row at query time (which ranking needs, and which the planner
    chooses for common words) takes seconds on long transcripts.
    """

    output_field = SearchVectorField()

    def resolve_expression(self, query=None, *args, **kwargs):
        return Col(query.get_initial_alias(), _SEARCH_VECTOR)


class TranscriptSearchVector(Expression):
    """The transcript's `search_vector` column, which exists on PostgreSQL only: a stored
    generated tsvector of its search_text with a GIN index (migration 0027)."""

    output_field = SearchVectorField()

    def resolve_expression(self, query=None, *args, **kwargs):
        return Col(query.get_initial_alias(), _TRANSCRIPT_VECTOR)


def folded_column(name: str) -> F | Replace:
    """SQL: the text column `name` as fold_apostrophes() would return it (REPLACE exists on
    every database)."""
    expression: F | Replace = F(name)
    for apostrophe in APOSTROPHES:
        expression = Replace(expression, Value(apostrophe), Value("'"), output_field=TextField())
    return expression


def fallback_words(query: str) -> list[str]:
    """The words the fallback search looks for, each anywhere in the text: lower case,
    apostrophes straight, without the quotes around them; words of quotes only are left
    out (they would match any text with an apostrophe)."""
    words = (word.strip(_QUOTES) for word in fold_apostrophes(query).lower().split())
    return [word for word in words if word]


def clean_query(query: str) -> str:
    """The query as searched: NUL bytes removed (PostgreSQL rejects them), spaces collapsed,
    at most MAX_QUERY_WORDS words and MAX_QUERY_CHARS characters."""
    words = query.replace("\x00", " ").split()[:MAX_QUERY_WORDS]
    return " ".join(words)[:MAX_QUERY_CHARS].strip()


def websearch_text(query: str) -> str:
    """The query with apostrophes straight (fold_apostrophes: PostgreSQL's parser reads the
    modifier letter ʼ as a letter, and splits words at the others as at ') and each run of
    negations written as one hyphen.

    websearch_to_tsquery reads every hyphen before a word as a NOT, skipping spaces and the
    characters it ignores (! & | ( ) <) between them, and keeps pending NOTs on a stack of
    32: a 33rd raises "tsquery stack too small". A run of hyphens separated by no letter,
    digit or quote becomes one hyphen, so at most one NOT waits for its word.
    """
    return _NEGATION_RUN.sub("-", fold_apostrophes(query))


def search_query(query: str) -> SearchQuery:
    """The PostgreSQL query of a cleaned query string, in web-search syntax."""
    # websearch_to_tsquery accepts any text (no syntax errors from & | ! : * ( ) < >).
    return SearchQuery(websearch_text(query), config=SEARCH_CONFIG, search_type="websearch")


def search_summaries(
    query: str, *, now=None, summaries: QuerySet[Summary] | None = None
) -> QuerySet[Summary]:
    """Live summaries matching the query, best match first: those whose own text matches,
    then those whose video's live transcript matches (words said, not written).

    `summaries` narrows the search to some live summaries (the search page's filters); it
    must be a subset of Summary.objects.published(). The narrowing applies before the
    MAX_RANKED caps, so a filter never loses matches that older ones crowded out.

    On PostgreSQL: full-text search in web-search syntax ("quoted phrases", `or`, `-word`).
    The newest MAX_RANKED matches of the summaries' text are ranked by cover density
    (ts_rank_cd: query words close together rank higher) with title words weighted above the
    rest, then newest first; after them the newest MAX_RANKED matches of live transcripts,
    newest first (ranking long transcripts would cost seconds). Other databases: every word
    (fallback_words) must occur in the summary's text, or every word in a live transcript's
    (case-insensitive, apostrophes read alike), newest first within each. Never raises on
    user input: any string gives a result, possibly empty; an empty query, or one of quotes
    only on other databases, gives an empty result without touching the database.
    """
    query = clean_query(query)
    if not query:
        return Summary.objects.none()
    if summaries is None:
        summaries = Summary.objects.published(now)
    if connections[summaries.db].vendor == "postgresql":
        return _postgresql_search(query, summaries)
    return _fallback_search(query, summaries)


def _text_first(text_match: Q) -> Case:
    """1 for the summaries whose own text matches, 0 for the others (transcript matches)."""
    return Case(When(text_match, then=1), default=0, output_field=IntegerField())


def _postgresql_search(query: str, summaries: QuerySet[Summary]) -> QuerySet[Summary]:
    matching = search_query(query)
    newest_text = (
        summaries.alias(document=StoredSearchVector())
        .filter(document=matching)
        .order_by("-publish_at", "-id")
        .values("pk")[:MAX_RANKED]
    )
    said = (
        Transcript.objects.live()
        .alias(said_words=TranscriptSearchVector())
        .filter(said_words=matching)
        .values("video_id")
    )
    newest_said = (
        summaries.filter(video__in=said).order_by("-publish_at", "-id").values("pk")[:MAX_RANKED]
    )
    return (
        Summary.objects.filter(Q(pk__in=newest_text) | Q(pk__in=newest_said))
        .annotate(
            text_match=_text_first(Q(pk__in=newest_text)),
            rank=SearchRank(StoredSearchVector(), matching, cover_density=True),
        )
        .order_by("-text_match", "-rank", "-publish_at", "-id")
    )


def _fallback_search(query: str, summaries: QuerySet[Summary]) -> QuerySet[Summary]:
    words = fallback_words(query)
    if not words:
        return Summary.objects.none()
    summaries = summaries.alias(document=folded_column("search_document"))
    transcripts = (
        Transcript.objects.live()
        .filter(video=OuterRef("video"))
        .alias(said=folded_column("search_text"))
    )
    text_match = Q()
    for word in words:
        # icontains escapes LIKE wildcards (% _ \), so every character is matched literally.
        text_match &= Q(document__icontains=word)
        transcripts = transcripts.filter(said__icontains=word)
    return (
        summaries.filter(text_match | Q(Exists(transcripts)))
        .annotate(text_match=_text_first(text_match))
        .order_by("-text_match", "-publish_at", "-id")
    )
