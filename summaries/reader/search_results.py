"""Search results: cards (summaries/reader/cards.py, as on every list) with a snippet,
the matched words in <mark>.

The snippet comes from the part of the summary where the words matched: the 30-second
text (whole) when it matches, otherwise the key points, takeaways and chapters (the stored search
text after the title and the 30-second text). On PostgreSQL ts_headline picks and marks
it; elsewhere a simple fallback finds the first line with the most query words and marks
them.

Every snippet is escaped here and only <mark> is added: ts_headline marks matches with
characters that are removed from the text first (so no stored text can forge one), the
text is escaped, then the markers become <mark> and </mark>.
"""

from dataclasses import dataclass

from django.contrib.postgres.search import SearchHeadline, SearchVector, SearchVectorExact
from django.db import connections
from django.db.models import Case, F, Func, TextField, Value, When
from django.db.models.functions import Length, StrIndex, Substr
from django.utils.safestring import SafeString

from summaries.models import Summary

from . import cards
from .marks import (
    HIDDEN,
    SNIPPET_WORDS,
    START,
    STOP,
    excerpt,
    marked_html,
    query_words,
    word_pattern,
)
from .search import SEARCH_CONFIG, search_query
from .search_transcripts import said_line_sql, said_snippets


@dataclass(frozen=True)
class Result:
    video: dict  # a card (summaries/reader/cards.py)
    snippet: SafeString


def _for_headline(expression):
    """The text with < > & hidden (HIDDEN) and the markers, and the hiding characters
    themselves, removed."""
    hidden = "".join(HIDDEN.values())
    return Func(
        expression,
        Value("".join(HIDDEN) + START + STOP + hidden),
        Value(hidden),
        function="translate",
        output_field=TextField(),
    )


def _headline(expression, query, **options):
    return SearchHeadline(
        _for_headline(expression),
        query,
        config=SEARCH_CONFIG,
        start_sel=START,
        stop_sel=STOP,
        **options,
    )


def _rows(ids: list[int], query: str):
    """Rows of the live summaries of `ids`: their cards' columns (cards.card_values), `pk`
    and `tldr`, and on PostgreSQL `marked_snippet` (ts_headline output with START/STOP
    markers) and `said_line` (search_transcripts.said_line_sql: the transcript line
    matched, for summaries found by their transcript only), elsewhere the stored search
    text for the fallback. One query."""
    summaries = Summary.objects.published().filter(pk__in=ids)
    extra: tuple[str, ...] = ("pk", "tldr")
    if connections[summaries.db].vendor != "postgresql":
        extra += ("search_document",)
    elif query:
        matching = search_query(query)
        # The stored search text after the title and the 30-second text (its first parts):
        # the key points, takeaways and chapters.
        parts = Substr(
            F("search_document"),
            StrIndex(F("search_document"), F("tldr")) + Length(F("tldr")) + 1,
        )
        fragment = {
            "max_words": SNIPPET_WORDS,
            "min_words": SNIPPET_WORDS // 2,
            "max_fragments": 1,
        }
        summaries = summaries.annotate(
            marked_snippet=Case(
                When(
                    SearchVectorExact(SearchVector("tldr", config=SEARCH_CONFIG), matching),
                    # Short by design: shown whole, as on the summary page.
                    then=_headline(F("tldr"), matching, highlight_all=True),
                ),
                default=_headline(parts, matching, **fragment),
                output_field=TextField(),
            ),
        )
        extra += ("marked_snippet", "said_line")
        summaries = summaries.annotate(said_line=said_line_sql(query))
    return cards.card_values(summaries, through="video", extra=extra)


def page_results(ids: list[int], query: str) -> list[Result]:
    """A Result per summary of `ids` (one page of results, in order), its video as the
    card every other list shows (summaries/reader/cards.py): two queries (the summaries'
    card rows with their snippets, the people of every card); off PostgreSQL a third when
    a result was found by its transcript only (search_transcripts).

    Snippets are computed for the page only; a summary unpublished since its id was found
    is left out.
    """
    by_pk = {row["pk"]: row for row in _rows(ids, query)}
    rows = [by_pk[pk] for pk in ids if pk in by_pk]
    videos = cards.add_people([cards.card(row) for row in rows])
    words = query_words(query)
    said = said_snippets(rows, query)
    return [
        Result(video=video, snippet=said.get(row["pk"]) or snippet(row, query, words))
        for row, video in zip(rows, videos, strict=True)
    ]


def fallback_part(search_document: str, tldr: str, words: list[str]) -> str:
    """The line of the search text (after the title) with the most distinct query words,
    the first such line when several tie; the 30-second text when none has any."""
    pattern = word_pattern(words)
    lines = search_document.split("\n")[1:] if pattern else []
    best, best_count = tldr, 0
    for line in lines:
        count = len({match.lower() for match in pattern.findall(line)})
        if count > best_count:
            best, best_count = line, count
    return best


def snippet(row: dict, query: str, words: list[str]) -> SafeString:
    """The snippet of a row of _rows."""
    marked = row.get("marked_snippet") or ""
    if START in marked:
        return marked_html(marked)
    if query and "search_document" in row:
        return excerpt(fallback_part(row["search_document"], row["tldr"], words), words)
    # No query, or only the title matched: the start of the 30-second text.
    return excerpt(row["tldr"], [])
