"""Statuses, spans and verdicts: what the judge answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from ..transcripts import Word

Kind = Literal["quote", "point", "chapter"]

# A stated time (a chapter start, "watch from 3:21") may be this many seconds off.
TIME_TOLERANCE = 2.0


class Status(StrEnum):
    VERBATIM = "verbatim"
    PARAPHRASE = "paraphrase"
    NOT_FOUND = "not_found"
    CONTRADICTED = "contradicted"
    MIS_TIMED = "mis_timed"


@dataclass(frozen=True)
class Span:
    """Words `first_word` to `end_word` (exclusive) of a transcript, said from `start` to
    `end` seconds; `score` (0-100) says how well they match the statement."""

    first_word: int
    end_word: int
    start: float
    end: float
    score: float = 100.0


@dataclass(frozen=True)
class Verdict:
    status: Status
    score: float
    reason: str
    # Where the statement is said, when that is not the pinned span.
    suggested_span: Span | None = None
    # When it is said, when a stated time is off.
    suggested_time: float | None = None


@dataclass(frozen=True)
class Quote:
    """A quotation of a chapter body: `markdown[start:end] == text`."""

    text: str
    start: int
    end: int
    speaker: str = ""


@dataclass(frozen=True)
class ChapterSuggestion:
    start: float
    title: str


def span_of(words: Sequence[Word], first_word: int, end_word: int, score: float = 100.0) -> Span:
    """The span of words `first_word` to `end_word` (exclusive), with their times."""
    first_word = max(0, min(first_word, len(words) - 1))
    end_word = max(first_word + 1, min(end_word, len(words)))
    return Span(first_word, end_word, words[first_word].start, words[end_word - 1].end, score)
