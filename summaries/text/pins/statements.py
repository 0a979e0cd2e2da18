"""A statement as the judge reads it: its tokens, how they read, and who it attributes
the words to."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import Kind
from .reading import _AUXILIARY, NEGATORS, REPORTING, Reading, read
from .tokens import _ATTRIBUTION, _NUMBER, _is_content, normalise

# An elision inside a quote: "…", "...", "[…]", "(...)".
_ELISION = re.compile(r"\s*(?:[\[(]\s*(?:\u2026|\.{3})\s*[\])]|\u2026|\.{3})\s*")
# Verbs a point attributes the words with ("Berman argues", "according to Shah").
_ATTRIBUTING = REPORTING | _ATTRIBUTION | frozenset("according predicts".split())


@dataclass(frozen=True)
class _Statement:
    text: str
    kind: Kind
    pieces: tuple[tuple[str, ...], ...]
    reading: Reading
    # Tokens that say who is speaking ("Hartmann says", "according to Shah"), not what.
    attribution: frozenset[int]

    @property
    def tokens(self) -> list[str]:
        return self.reading.tokens

    @property
    def stems(self) -> list[str]:
        return self.reading.stems

    @property
    def claim_positions(self) -> list[int]:
        """The tokens that carry the statement's meaning, attribution left out."""
        return [
            k
            for k, term in enumerate(self.tokens)
            if k not in self.attribution and (_is_content(term) or _NUMBER.match(term))
        ]

    @property
    def content(self) -> set[str]:
        return {self.stems[k] for k in self.claim_positions}

    @property
    def predicate(self) -> int:
        """The first token of what the statement says of its subject: its first verb
        after the attribution (an auxiliary, a negation or a verb in the past: "the first
        agent resolved…", "the servers were…"); the end of the statement when none is
        told. What comes before it is what the statement is about."""
        tokens = self.tokens
        start = max(self.attribution, default=-1) + 1
        if start < len(tokens) and tokens[start] == "that":
            start += 1
        for k in range(start, len(tokens)):
            term = tokens[k]
            if term in _VERB_WORDS or (len(term) > 4 and term.endswith("ed")):
                return k
        return len(tokens)


def _statement(text: str, kind: Kind, *, bounded: bool = False) -> _Statement:
    """A statement read as the judge compares it; `bounded` when the transcript it is
    compared with has no punctuation (see `reading.read`)."""
    parts = _ELISION.split(text) if kind == "quote" else [text]
    pieces = tuple(tuple(normalise(part)) for part in parts)
    pieces = tuple(piece for piece in pieces if piece)
    # An elision ends a sentence: what is said after it was said elsewhere.
    words = _ELISION.sub(" . ", text).split() if kind == "quote" else text.split()
    reading = read(words, bounded=bounded)
    attribution = _attribution(reading) if kind == "point" else frozenset()
    return _Statement(text, kind, pieces, reading, attribution)


def _attribution(reading: Reading) -> frozenset[int]:
    """The tokens of a point that say who speaks: its first verb of saying with the names
    (or pronoun) just before it ("Hartmann says", "…, Shah warns"), or "according to" and
    the names after it. A point attributes once: a later verb of saying is part of the
    claim ("OpenAI no longer argued that…")."""
    tokens = reading.tokens
    for k, term in enumerate(tokens):
        if term == "according" and k + 1 < len(tokens) and tokens[k + 1] == "to":
            marked = {k, k + 1}
            j = k + 2
            while j < len(tokens) and (_is_name_like(reading, j) or tokens[j] == "and"):
                marked.add(j)
                j += 1
            return frozenset(marked)
        if term not in _ATTRIBUTING:
            continue
        marked = {k}
        j = k - 1
        while j >= 0 and (_is_name_like(reading, j) or tokens[j] in ("and", "the")):
            marked.add(j)
            j -= 1
        if len(marked) > 1 or (k and tokens[k - 1] in _PRONOUNS):
            return frozenset(marked)
        # What says it, opening the statement: "The filing says…", "The report argues…".
        if (
            k in (2, 3)
            and tokens[0] in _DETERMINERS
            and all(t.isalpha() and _is_content(t) for t in tokens[1:k])
        ):
            return frozenset(range(k + 1))
    return frozenset()


_PRONOUNS = frozenset("he she they we i".split())
_DETERMINERS = frozenset("the a an this that its their his her our".split())
# Words that are, or open, a verb: auxiliaries and negations.
_VERB_WORDS = _AUXILIARY | NEGATORS


def _is_name_like(reading: Reading, k: int) -> bool:
    term = reading.tokens[k]
    at_start = k in reading.sentence_starts
    return reading.cased[k] or (at_start and term.isalpha() and _is_content(term))
