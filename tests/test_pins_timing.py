"""Pins: a point's time is where it starts being said, and the passage that says it best
decides its verdict."""

from __future__ import annotations

from summaries.text.pins import Status, suggest, verify
from summaries.text.transcripts import Word

TALK = (
    "Thanks for having me. Let me start with a confession. Our first agent, which we "
    "shipped in the spring, was a disaster. It was slow, and it resolved about 31% of "
    "tickets without a human. The customers hated it. So we rebuilt the whole thing."
)


def _words(text: str) -> list[Word]:
    return [Word(text=w, start=0.5 * k, end=0.5 * k + 0.4) for k, w in enumerate(text.split())]


def _start_of(words: list[Word], first: str) -> float:
    return next(w.start for w in words if w.text == first)


def test_a_point_starts_where_it_says_something_of_its_subject():
    words = _words(TALK)
    spans = suggest(
        "Hartmann says the first agent resolved about 31% of tickets without a human.",
        words,
        kind="point",
        limit=1,
    )
    assert spans[0].start == _start_of(words, "and")


def test_a_point_starts_in_the_sentence_before_when_that_says_more_than_its_subject():
    words = _words(TALK)
    spans = suggest(
        "Hartmann says their first agent, shipped in the spring, resolved about 31% of tickets.",
        words,
        kind="point",
        limit=1,
    )
    assert spans[0].start == _start_of(words, "Our")
