"""Search over live summaries: PostgreSQL full-text search, a word-by-word fallback elsewhere."""

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connections
from django.db.models import QuerySet

from .models import Summary

# Longer queries are cut: nobody types more, and a long query only costs the database time.
MAX_QUERY_CHARS = 200
# The SQLite fallback adds one LIKE per word; later words are ignored.
MAX_FALLBACK_WORDS = 10

SEARCH_CONFIG = "english"

# The expression that migration 0004_search_index indexes (GIN). The filter must use exactly
# this expression, or PostgreSQL cannot use the index; keep the two in step.
DOCUMENT_VECTOR = SearchVector("search_document", config=SEARCH_CONFIG)

# Ranking only (computed for matching rows): a word in the title counts more than one in the
# body. The title is also the first line of search_document, so title matches score twice.
RANK_VECTOR = SearchVector("video__title", config=SEARCH_CONFIG, weight="A") + SearchVector(
    "search_document", config=SEARCH_CONFIG, weight="B"
)


def clean_query(query: str) -> str:
    """The query as searched: NUL bytes removed (PostgreSQL rejects them), spaces collapsed,
    and at most MAX_QUERY_CHARS characters."""
    return " ".join(query.replace("\x00", " ").split())[:MAX_QUERY_CHARS].strip()


def search_summaries(query: str, *, now=None) -> QuerySet[Summary]:
    """Live summaries matching the query, best match first.

    On PostgreSQL: full-text search in web-search syntax ("quoted phrases", `or`, `-word`),
    ranked by ts_rank with title words weighted above body words, then newest first. Other
    databases: every word must occur in the summary's text (case-insensitive), newest first.
    Never raises on user input: any string gives a result, possibly empty; an empty query
    gives an empty result without touching the database.
    """
    query = clean_query(query)
    if not query:
        return Summary.objects.none()
    summaries = Summary.objects.published(now)
    if connections[summaries.db].vendor == "postgresql":
        # websearch_to_tsquery accepts any text (no syntax errors from & | ! : * ( ) < >).
        search_query = SearchQuery(query, config=SEARCH_CONFIG, search_type="websearch")
        return (
            summaries.alias(document=DOCUMENT_VECTOR)
            .filter(document=search_query)
            .annotate(rank=SearchRank(RANK_VECTOR, search_query))
            .order_by("-rank", "-publish_at", "-id")
        )
    for word in query.split()[:MAX_FALLBACK_WORDS]:
        # icontains escapes LIKE wildcards (% _ \), so every character is matched literally.
        summaries = summaries.filter(search_document__icontains=word)
    return summaries.order_by("-publish_at", "-id")
