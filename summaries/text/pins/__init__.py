"""Pins: the statements of a summary tied to the transcript words that support them.

A statement is a quote of a chapter body (verbatim), a point (a key point, takeaway or
caveat, usually a paraphrase in the third person) or a chapter's start (its first words
and its start time). `suggest` finds where a statement is said; `verify` checks a pinned
span and answers a `Verdict` an editor reads: verbatim, paraphrase, not found,
contradicted (a flipped negation, another quantity or name) or mis-timed.

The package, one concern a module, each using only those above it:
- `base`: statuses, spans and verdicts;
- `tokens`: the tokens text is compared by (case, typography, contractions, numbers said
  as words and fillers no longer differ) and which of them carry meaning;
- `index`: a transcript's tokens, stems and sentences, indexed once;
- `statements`: a statement as tokens, with its names;
- `finding`: where in the transcript a statement is said;
- `claims`: what a passage and a statement claim (polarity by clause, quantities with
  their units, names), and where they disagree;
- `verdicts`: the verdict on a pinned span;
- `quotes`: the quotations of a chapter body;
- `chapters`: where chapters could start.

Pure functions: no ORM, no requests.
"""

from .base import TIME_TOLERANCE, ChapterSuggestion, Kind, Quote, Span, Status, Verdict, span_of
from .chapters import suggest_chapters
from .finding import suggest
from .index import forget_indexes, index_of
from .quotes import extract_quotes
from .tokens import normalise
from .verdicts import verify

__all__ = [
    "TIME_TOLERANCE",
    "ChapterSuggestion",
    "Kind",
    "Quote",
    "Span",
    "Status",
    "Verdict",
    "extract_quotes",
    "forget_indexes",
    "index_of",
    "normalise",
    "span_of",
    "suggest",
    "suggest_chapters",
    "verify",
]
