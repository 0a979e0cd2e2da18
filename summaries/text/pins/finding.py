"""Where in the transcript a statement is said: word for word, aligned, or by its key words."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel

from ..transcripts import Word
from . import support as point_support
from .base import Kind, Span
from .exact import find_exact
from .index import _index, _Transcript
from .statements import _Statement, _statement

# ---------------------------------------------------------------------------------------
# Finding a statement in the transcript
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Found:
    a: int  # first token
    b: int  # the token after the last
    score: float
    verbatim: bool = False


# How far around a pinned span a statement is looked for before the whole transcript.
_MARGIN_TOKENS = 12
# Scores (0-100) from which a statement is supported.
QUOTE_NEAR = 80.0
QUOTE_CONFLICT = 60.0
CHAPTER_NEAR = 70.0
# Stems said more often than this are no help in finding where a statement is.
_MAX_POSTING_SHARE = 0.02
_CANDIDATES = 8


def _find_exact(
    index: _Transcript, pieces: Sequence[Sequence[str]], lo: int, hi: int
) -> _Found | None:
    """The first place from `lo` where the pieces are said word for word (see
    `exact.find_exact`)."""
    found = find_exact(index, pieces, lo, hi)
    return None if found is None else _Found(found[0], found[1], 100.0, verbatim=True)


def _aligned(index: _Transcript, stems: Sequence[str], lo: int, hi: int) -> _Found | None:
    """The tokens of lo to hi that best match `stems` in order: the densest run of aligned
    words, scored by similarity (0-100)."""
    window = index.stems[lo:hi]
    if not window or not stems:
        return None
    matched = [
        lo + k
        for op in Indel.opcodes(stems, window)
        if op.tag == "equal"
        for k in range(op.dest_start, op.dest_end)
    ]
    if not matched:
        return None
    runs: list[list[int]] = [[matched[0]]]
    for position in matched[1:]:
        if position - runs[-1][-1] > 5:
            runs.append([])
        runs[-1].append(position)
    run = max(runs, key=len)
    a, b = run[0], run[-1] + 1
    return _Found(a, b, 100.0 * Indel.normalized_similarity(stems, index.stems[a:b]))


def _windows(index: _Transcript, statement: _Statement, limit: int) -> list[tuple[int, int]]:
    """Stretches of the transcript worth scoring: where the statement's rarer stems are said
    close together (votes by position, weighted by rarity)."""
    size = len(statement.tokens)
    width = max(16, size)
    most = max(50, int(len(index.tokens) * _MAX_POSTING_SHARE))
    # In sorted order, not the set's: the votes (floats) and their ties must come out the
    # same in every process, whatever its hash seed.
    content = sorted(statement.content)
    usable = [stem for stem in content if 0 < len(index.postings.get(stem, ())) <= most]
    if not usable:
        rare = sorted(content, key=lambda s: len(index.postings.get(s, ())) or 10**9)
        usable = [stem for stem in rare[:2] if stem in index.postings]
    votes: defaultdict[int, float] = defaultdict(float)
    for stem in usable:
        weight = index.weight(stem)
        for bucket in {position // width for position in index.postings[stem]}:
            votes[bucket] += weight
            votes[bucket - 1] += weight
    windows = []
    for bucket in heapq.nlargest(limit, votes, key=lambda bucket: (votes[bucket], -bucket)):
        lo = max(0, bucket * width - size // 2 - 4)
        windows.append((lo, min(len(index.tokens), (bucket + 2) * width + size // 2 + 4)))
    return windows


def _search(index: _Transcript, statement: _Statement, limit: int) -> list[_Found]:
    """The best places of the whole transcript for a quote or a chapter's first words,
    best first: the words said word for word, else the words said most nearly as
    written."""
    found: list[_Found] = []
    exact = _find_exact(index, statement.pieces, 0, len(index.tokens))
    if exact is not None:
        found.append(exact)
    for lo, hi in _windows(index, statement, max(_CANDIDATES, 2 * limit)):
        region = _aligned(index, statement.stems, lo, hi)
        if region is not None:
            found.append(region)
    # Of equal scores, the words said word for word first, then the tightest.
    found.sort(key=lambda f: (-f.score, not f.verbatim, f.b - f.a, f.a))
    kept: list[_Found] = []
    for region in found:
        if all(region.b <= other.a or region.a >= other.b for other in kept):
            kept.append(region)
    return kept[:limit]


def suggest(statement: str, words: Sequence[Word], *, kind: Kind, limit: int = 3) -> list[Span]:
    """The spans of the transcript that best match a statement, best first, each with its
    score (0-100): for a quote or a chapter start, the words said most nearly as written;
    for a point, the sentences that say most of what it claims, in order."""
    if not words:
        return []
    index = _index(words)
    target = _statement(statement, kind, bounded=not index.reading.punctuated)
    if not target.tokens:
        return []
    if kind == "point":
        passages = point_support.search(index, target, limit)
        return [index.span(p.start, p.pinned_end, p.score) for p in passages]
    found = _search(index, target, limit)
    return [index.span(f.a, f.b, round(f.score, 1)) for f in found]
