"""A statement as the judge reads it: its tokens, stems and names."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import Kind
from .tokens import _ATTRIBUTION, _is_content, _stem, normalise

# ---------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------

# An elision inside a quote: "…", "...", "[…]", "(...)".
_ELISION = re.compile(r"\s*(?:[\[(]\s*(?:\u2026|\.{3})\s*[\])]|\u2026|\.{3})\s*")
# A capitalised word inside a sentence, or a word with capitals or digits inside it.
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w]*(?:[-.][\w]+)*)|\b(\w+[A-Z]\w*)")


@dataclass(frozen=True)
class _Statement:
    text: str
    kind: Kind
    pieces: tuple[tuple[str, ...], ...]
    tokens: tuple[str, ...]
    stems: tuple[str, ...]
    names: frozenset[str]

    @property
    def content(self) -> set[str]:
        """The stems that carry the statement's meaning, without its attribution."""
        return {
            stem
            for term, stem in zip(self.tokens, self.stems, strict=True)
            if _is_content(term) and (self.kind != "point" or term not in _ATTRIBUTION)
        }


def _statement(text: str, kind: Kind) -> _Statement:
    parts = _ELISION.split(text) if kind == "quote" else [text]
    pieces = tuple(tuple(normalise(part)) for part in parts)
    pieces = tuple(piece for piece in pieces if piece)
    tokens = tuple(term for piece in pieces for term in piece)
    names = set()
    for match in _NAME.finditer(text):
        name = match.group(1) or match.group(2)
        if name != "I":
            names.update(normalise(name))
    return _Statement(text, kind, pieces, tokens, tuple(_stem(t) for t in tokens), frozenset(names))
