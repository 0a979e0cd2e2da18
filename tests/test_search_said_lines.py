"""Which transcript line a search result found by its words said shows, on PostgreSQL
(search_transcripts.said_line_sql): the first line saying every query word, else the
first saying any, in web-search syntax, however long the transcript."""

import json

import pytest
from django.db import connection

from summaries.models import Summary
from summaries.reader.search import SEARCH_CONFIG, websearch_text
from summaries.reader.search_transcripts import _any_word_query, said_line_sql

from .test_search_transcripts import add_transcript, live

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only"),
]

# Words of the filler lines: none of them is a query word below.
FILLER = "so we trained it on code and then looked at how it behaves".split()


def filler(count):
    return [" ".join(FILLER[(n + i) % len(FILLER)] for i in range(8)) for n in range(count)]


def said_summary(lines, tldr="Nothing about it."):
    """A live summary whose own text (`tldr`) says none of the query words, its live
    transcript `lines` (line n starts at 10 n seconds)."""
    summary = live("Long talk", tldr=tldr)
    add_transcript(
        summary.video, speech=[(10 * n, 10 * n + 9, text) for n, text in enumerate(lines)]
    )
    return summary


def shown_line(summary, query):
    """The number of the line the result shows (None: none)."""
    value = (
        Summary.objects.filter(pk=summary.pk)
        .annotate(said_line=said_line_sql(query))
        .values_list("said_line", flat=True)
        .get()
    )
    return None if value is None else int(json.loads(value)[0]) // 10


def first_line(lines, query):
    """The rule, checked line by line in order: the first line matching the whole query,
    else the first matching any of its words."""
    with connection.cursor() as cursor:
        for text in (websearch_text(query), websearch_text(_any_word_query(query))):
            cursor.execute(
                "SELECT n - 1 FROM unnest(%s::text[]) WITH ORDINALITY AS l(line, n) "
                "WHERE to_tsvector(%s, line) @@ websearch_to_tsquery(%s, %s) ORDER BY n LIMIT 1",
                [lines, SEARCH_CONFIG, SEARCH_CONFIG, text],
            )
            row = cursor.fetchone()
            if row:
                return row[0]
    return None


def test_the_first_line_with_every_word_wins_over_earlier_lines_with_some():
    lines = filler(400)
    lines[3] = "memory is the bottleneck"
    lines[70] = "custom kernels help"
    lines[130] = "memory again, alone"
    lines[333] = "a kernel that saves memory"
    summary = said_summary(lines)

    assert shown_line(summary, "memory kernel") == 333
    assert shown_line(summary, "kernel memory") == 333


def test_without_a_line_with_every_word_the_first_with_any_is_shown():
    lines = filler(400)
    lines[250] = "memory is the bottleneck"
    lines[120] = "custom kernels help"
    summary = said_summary(lines)

    assert shown_line(summary, "memory kernel") == 120


def test_a_word_said_only_in_the_last_line_of_a_long_transcript_is_found():
    lines = [*filler(4_000), "and a pelican closes the show"]
    summary = said_summary(lines)

    assert shown_line(summary, "pelican") == 4_000
    assert shown_line(summary, "pelican show") == 4_000


def test_words_of_neighbouring_lines_are_never_read_as_one_line():
    lines = filler(300)
    # Across each boundary of 50 and 64 lines, and any other: "zebra" ends a line, "finch"
    # begins the next.
    for end in (49, 63, 127, 199):
        lines[end], lines[end + 1] = "we saw a zebra", "finch songs were next"
    lines[280] = "the zebra finch learns its song"
    summary = said_summary(lines)

    assert shown_line(summary, '"zebra finch"') == 280
    assert shown_line(summary, "zebra finch learns") == 280
    assert shown_line(summary, "zebra finch") == 280


@pytest.mark.parametrize(
    ("query", "tldr"),
    [
        ("memory -banana", ""),
        ("-banana kernel memory", ""),
        ("memory or kernel", ""),
        ("pelican or kernel", ""),
        ('"saves memory" or pelican', ""),
        ('"custom kernels" -"zebra finch"', ""),
        ('"custom kernels" -zebra', ""),
        ("memory kernel or pelican", ""),
        # A negated word in an `or`: the summary's own text says it, or it would match.
        ("memory or -kernel", "Nothing about kernels."),
        ("pelican or -kernel", "Nothing about kernels."),
        ("pelican or -glacier", "Not a glacier."),
    ],
)
def test_negated_words_and_or_show_the_line_the_rule_chooses(query, tldr):
    # Each query matches the transcript as a whole (a negated word said anywhere in it
    # would leave the result out) and not the summary's own text.
    lines = filler(600)
    lines[40] = "memory is the bottleneck"
    lines[111] = "custom kernels help"
    lines[250] = "a kernel that saves memory"
    lines[590] = "and a pelican closes the show"
    summary = said_summary(lines, tldr=tldr or "Nothing about it.")

    expected = first_line(lines, query)

    assert expected is not None
    assert shown_line(summary, query) == expected


def test_the_rule_reads_the_lines_as_checked_here():
    # The reference itself: the first line with every word, else with any.
    lines = ["memory first", "kernel then", "memory and kernel", "pelican"]

    assert first_line(lines, "memory kernel") == 2
    assert first_line(lines, "pelican memory") == 0
    assert first_line(lines, "memory -pelican") == 0
    assert first_line(lines, "pelican or -memory") == 1


def test_the_lines_follow_new_segments():
    lines = filler(200)
    lines[150] = "memory is the bottleneck"
    summary = said_summary(lines)
    transcript = summary.video.transcripts.get()

    transcript.segments = [
        {"start": 10.0 * n, "end": 10.0 * n + 9, "text": text}
        for n, text in enumerate([*filler(20), "memory again", *filler(5)])
    ]
    transcript.save(update_fields=["segments"])

    assert shown_line(summary, "memory") == 20
