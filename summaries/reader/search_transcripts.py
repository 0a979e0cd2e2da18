"""Snippets of words said: for a search result found by its video's live transcript only,
the transcript line that matched, marked, after a "▶ 12:40" link that plays the video
from that line (summaries.reader.receipts.Moment, as beside pinned statements).

No query of its own on PostgreSQL: the line is a column of the page's card rows
(said_line_sql, search_results._rows), found in the stored search text (line N is segment
N, summaries.models.transcripts.search_text_of), and only that segment's start is read
from the segments. Elsewhere one query, when a result was found by its transcript only.
"""

import json
from dataclasses import dataclass

from django.db import connections
from django.db.models import TextField
from django.db.models.expressions import RawSQL
from django.utils.safestring import SafeString, mark_safe

from summaries.models import Summary, Transcript
from summaries.text import platforms
from summaries.text.links import http_url

from .receipts import Moment
from .search import SEARCH_CONFIG, websearch_text
from .search_results import (
    HIDDEN,
    SNIPPET_WORDS,
    START,
    STOP,
    excerpt,
    marked_html,
    query_words,
)

# Characters of the search text the database's vector covers (migration 0027).
MAX_CHARS = 500_000


@dataclass(frozen=True)
class SaidLine:
    summary_id: int
    seconds: int
    text: str  # marked with START/STOP on PostgreSQL, plain elsewhere
    url: str


def _any_word_query(query: str) -> str:
    """The query's words, not negated, joined by `or` (web-search syntax): a transcript
    matches when all are said, but maybe on different lines; the line shown is the first
    saying them all, else the first saying any."""
    words = [word.strip('"') for word in query.split() if not word.startswith("-")]
    return " or ".join(word for word in words if word and word.lower() != "or")


def _hidden_text(column: str) -> str:
    """SQL: the column with < > & hidden and the markers removed, as _for_headline does
    (search_results), so ts_headline reads the text as text."""
    hidden = "".join(HIDDEN.values())
    source = "".join(HIDDEN) + START + STOP + hidden
    return f"translate({column}, '{source}', '{hidden}')"


# A scalar subquery of the summary's row (summaries_summary, the outer query's table): the
# first line of its video's live transcripts saying every query word (else any), as a JSON
# array [start, line marked by ts_headline, source_url, platform, platform_video_id]; NULL
# when the summary's own text matches or no transcript does.
# Parsing the lines (to_tsvector) is what costs: about 17 ms for the 30,000 words of a
# 3-hour transcript, the same whether they are parsed line by line or in larger pieces
# (bench/run_search_snippets.py). So each line is parsed at most once, and only up to the
# line shown: `lines` is a CTE, which PostgreSQL computes row by row as it is read and
# keeps, so the second branch (any word), which runs only when the first (every word)
# found nothing, reads the vectors the first one made instead of parsing them again. The
# lines come in order (the function scan of unnest yields them in order; an ORDER BY
# would parse every line first) and LIMIT stops the scan. The two queries are made once
# (the CROSS JOIN), not once per line.
_SAID_LINE_SQL = f"""(
SELECT json_build_array(
    (t.segments -> (line.n - 1)::int ->> 'start')::float,
    ts_headline('{SEARCH_CONFIG}', {_hidden_text("line.text")}, query.any_word, %s),
    v.source_url, v.platform, v.platform_video_id
)::text
FROM summaries_transcript t
JOIN summaries_video v ON v.id = t.video_id
CROSS JOIN (
    SELECT websearch_to_tsquery('{SEARCH_CONFIG}', %s) AS whole,
        websearch_to_tsquery('{SEARCH_CONFIG}', %s) AS any_word
) query
CROSS JOIN LATERAL (
    WITH lines AS MATERIALIZED (
        SELECT l.n, l.text, to_tsvector('{SEARCH_CONFIG}', l.text) AS vector
        FROM unnest(string_to_array(left(t.search_text, {MAX_CHARS}), E'\\n'))
            WITH ORDINALITY AS l(text, n)
    )
    (SELECT n, text, true AS whole FROM lines WHERE vector @@ query.whole LIMIT 1)
    UNION ALL
    (SELECT n, text, false AS whole FROM lines WHERE vector @@ query.any_word LIMIT 1)
    LIMIT 1
) line
WHERE t.video_id = summaries_summary.video_id
  AND t.state = %s
  AND NOT (summaries_summary.search_vector @@ query.whole)
  AND t.search_vector @@ query.whole
ORDER BY line.whole DESC, t.language
LIMIT 1
)"""  # noqa: S608 - only module constants are formatted in; every value is a parameter


def said_line_sql(query: str) -> RawSQL:
    """The annotation of _SAID_LINE_SQL for `query` (PostgreSQL; one page's rows only:
    each parses the lines of the transcript up to the one shown)."""
    options = (
        f"StartSel={START}, StopSel={STOP}, MaxWords={SNIPPET_WORDS}, "
        f"MinWords={SNIPPET_WORDS // 2}, MaxFragments=1"
    )
    full, any_word = websearch_text(query), websearch_text(_any_word_query(query))
    params = (options, full, any_word, Transcript.State.LIVE)
    return RawSQL(_SAID_LINE_SQL, params, output_field=TextField())  # noqa: S611 - parameters


def said_line(summary_id: int, value: str | None) -> SaidLine | None:
    """The SaidLine of a said_line_sql value."""
    if not value:
        return None
    start, text, source_url, platform, video_id = json.loads(value)
    return SaidLine(
        summary_id, _seconds(start), text or "", _url(source_url, platform, video_id, start)
    )


def _seconds(start) -> int:
    return max(0, int(start or 0))


def _url(source_url: str, platform: str, video_id: str, start) -> str:
    return http_url(platforms.video_url_at(source_url, platform, video_id, _seconds(start)))


def _best_line(search_text: str, words: list[str]) -> int | None:
    """The index of the first line with every word (any case), else of the first with the
    most of them; None when no line has any."""
    lowered = [word.lower() for word in words]
    best, best_count = None, 0
    for index, line in enumerate(search_text.split("\n")):
        count = sum(word in line.lower() for word in lowered)
        if count == len(lowered):
            return index
        if count > best_count:
            best, best_count = index, count
    return best


def _fallback_lines(rows: list[dict], query: str) -> list[SaidLine]:
    """The same lines on other databases (development): for the rows whose own text lacks
    a query word, the text and segments of their videos' live transcripts are read and
    searched here, in one query."""
    words = query_words(query)
    said_only = [
        row["pk"]
        for row in rows
        if not all(word.lower() in row["search_document"].lower() for word in words)
    ]
    if not said_only:
        return []
    transcripts = (
        Transcript.objects.live()
        .filter(video__summary__in=said_only)
        .order_by("language")
        .values_list(
            "video__summary",
            "search_text",
            "segments",
            "video__source_url",
            "video__platform",
            "video__platform_video_id",
        )
    )
    found: dict[int, SaidLine] = {}
    for pk, search_text, segments, source_url, platform, video_id in transcripts:
        index = _best_line(search_text, words)
        if pk in found or index is None or index >= len(segments):
            continue
        start = segments[index].get("start")
        text = search_text.split("\n")[index]
        found[pk] = SaidLine(pk, _seconds(start), text, _url(source_url, platform, video_id, start))
    return list(found.values())


def said_snippets(rows: list[dict], query: str) -> dict[int, SafeString]:
    """{summary id: snippet} for the rows (search_results._rows) whose own text does not
    match the query but whose video's live transcript does: on PostgreSQL from their
    `said_line` (said_line_sql), elsewhere searched here (one query, only when a row's own
    text lacks a query word)."""
    if not rows or not query:
        return {}
    if connections[Summary.objects.db].vendor == "postgresql":
        lines = [said_line(row["pk"], row.get("said_line")) for row in rows]
    else:
        lines = list(_fallback_lines(rows, query))
    return {line.summary_id: said_snippet(line, query) for line in lines if line is not None}


def said_snippet(line: SaidLine, query: str) -> SafeString:
    """ "Said: ▶ 12:40 … words …", the matched words in <mark>."""
    if START in line.text:
        words = marked_html(line.text)
    else:
        words = excerpt(line.text, query_words(query))
    link = Moment(line.seconds, line.url).link()
    return mark_safe(  # noqa: S308 - link and words are escaped HTML
        f'<span class="said">Said in the video</span> {link} “{words}”'
    )
