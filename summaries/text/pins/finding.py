"""Where in the transcript a statement is said: word for word, aligned, or by its key words."""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel

from ..transcripts import Word
from .base import Kind, Span
from .index import _index, _Transcript
from .statements import _Statement, _statement
from .tokens import _stem

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
# A point's span is read with this many tokens around it: editors pin a little tight.
_CONTEXT_TOKENS = 20
# Scores (0-100) from which a statement is supported.
QUOTE_NEAR = 80.0
QUOTE_CONFLICT = 60.0
CHAPTER_NEAR = 70.0
POINT_SUPPORT = 40.0
# Stems said more often than this are no help in finding where a statement is.
_MAX_POSTING_SHARE = 0.02
_CANDIDATES = 8


def _find_exact(
    index: _Transcript, pieces: Sequence[Sequence[str]], lo: int, hi: int
) -> _Found | None:
    """The first place from `lo` where the pieces are said word for word and in order, each
    within a sentence or two of the one before (an elision), ending before `hi`."""
    if not pieces:
        return None
    for start in _occurrences(index, pieces[0], lo, hi):
        end = start + len(pieces[0])
        for piece in pieces[1:]:
            following = _occurrences(index, piece, end, min(hi, end + 80 + len(piece)))
            if not following:
                break
            end = following[0] + len(piece)
        else:
            return _Found(start, end, 100.0, verbatim=True)
    return None


def _occurrences(index: _Transcript, piece: Sequence[str], lo: int, hi: int) -> list[int]:
    """Where `piece` is said in tokens lo to hi, found from its rarest word."""
    size = len(piece)
    if size == 0 or hi - lo < size:
        return []
    offset = min(range(size), key=lambda k: len(index.postings.get(_stem(piece[k]), ())))
    posting = index.postings.get(_stem(piece[offset]), [])
    found = []
    tokens = index.tokens
    first = bisect_left(posting, lo + offset)
    for position in posting[first:]:
        start = position - offset
        if start + size > hi:
            break
        if tokens[start : start + size] == list(piece):
            found.append(start)
    return found


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


def _covered(index: _Transcript, statement: _Statement, a: int, b: int) -> float:
    """How much of a statement's meaning (its content stems, weighted by rarity) tokens a
    to b say, 0-100."""
    content = statement.content
    if not content:
        return 0.0
    said = set(index.stems[max(a, 0) : b])
    # fsum: exact whatever the order of the set, so equal coverages score equal in every
    # process (a plain sum's last bit depends on hash order, and ties are broken by score).
    total = math.fsum(index.weight(stem) for stem in content)
    found = math.fsum(index.weight(stem) for stem in content if stem in said)
    return 100.0 * found / total if total else 0.0


def _point_region(index: _Transcript, statement: _Statement, lo: int, hi: int) -> _Found | None:
    """The run of tokens in lo to hi that says the most of a point."""
    content = statement.content
    hits = [p for p in range(max(lo, 0), min(hi, len(index.stems))) if index.stems[p] in content]
    if not hits:
        return None
    gap = max(12, len(statement.tokens) // 2)
    runs: list[list[int]] = [[hits[0]]]
    for position in hits[1:]:
        if position - runs[-1][-1] > gap:
            runs.append([])
        runs[-1].append(position)
    best: _Found | None = None
    for run in runs:
        score = _covered(index, statement, run[0], run[-1] + 1)
        if best is None or score > best.score:
            a, b = _tightest(index.stems, run)
            best = _Found(*_with_edges(index, statement, a, b), score)
    return best


def _tightest(stems: Sequence[str], hits: Sequence[int]) -> tuple[int, int]:
    """The shortest stretch (first token, token after the last) of a run of `hits` that
    says every stem the whole run says: words that only repeat stems said again closer to
    the rest (a run of related words before the statement) are left out of its span."""
    wanted = len({stems[p] for p in hits})
    seen: Counter[str] = Counter()
    best = (hits[0], hits[-1] + 1)
    first = 0
    for position in hits:
        seen[stems[position]] += 1
        while len(seen) == wanted:
            if position + 1 - hits[first] < best[1] - best[0]:
                best = (hits[first], position + 1)
            stem = stems[hits[first]]
            seen[stem] -= 1
            if not seen[stem]:
                del seen[stem]
            first += 1
    return best


# How many words a point's span takes in either side of its key words, where the statement
# says them next to the same key word ("an agent", "to read").
_EDGE_TOKENS = 2


def _with_edges(index: _Transcript, statement: _Statement, a: int, b: int) -> tuple[int, int]:
    """Tokens a to b, with up to `_EDGE_TOKENS` words either side said as the statement
    says them next to the word at that edge ("an" before "agent")."""
    for _ in range(_EDGE_TOKENS):
        if a > 0 and _said_next_to(statement, index.stems[a], index.tokens[a - 1], -1):
            a -= 1
    for _ in range(_EDGE_TOKENS):
        if b < len(index.tokens) and _said_next_to(
            statement, index.stems[b - 1], index.tokens[b], 1
        ):
            b += 1
    return a, b


def _said_next_to(statement: _Statement, stem: str, term: str, step: int) -> bool:
    """Whether the statement says `term` right before (step -1) or after (step 1) a word of
    stem `stem`."""
    stems, tokens = statement.stems, statement.tokens
    return any(
        stems[k] == stem and 0 <= k + step < len(tokens) and tokens[k + step] == term
        for k in range(len(tokens))
    )


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


def _search(
    index: _Transcript, statement: _Statement, limit: int, *, word_for_word: bool = False
) -> list[_Found]:
    """The best places of the whole transcript for a statement, best first. A quote or a
    chapter's first words said word for word are those words; so is a point when
    `word_for_word` (a suggestion: a point in the speaker's own words is pinned to them,
    not to its key words said close together elsewhere)."""
    found: list[_Found] = []
    if statement.kind != "point" or word_for_word:
        exact = _find_exact(index, statement.pieces, 0, len(index.tokens))
        if exact is not None:
            found.append(exact)
    for lo, hi in _windows(index, statement, max(_CANDIDATES, 2 * limit)):
        if statement.kind == "point":
            region = _point_region(index, statement, lo, hi)
        else:
            region = _aligned(index, statement.stems, lo, hi)
        if region is not None:
            found.append(region)
    # Of equal scores, the words said word for word first, then the tightest: a stretch
    # that also holds related words said before or after the statement is not where it
    # is said.
    found.sort(key=lambda f: (-f.score, not f.verbatim, f.b - f.a, f.a))
    kept: list[_Found] = []
    for region in found:
        if all(region.b <= other.a or region.a >= other.b for other in kept):
            kept.append(region)
    return kept[:limit]


def suggest(statement: str, words: Sequence[Word], *, kind: Kind, limit: int = 3) -> list[Span]:
    """The spans of the transcript that best match a statement, best first, each with its
    score (0-100): for a quote or a chapter start, the words said most nearly as written;
    for a point, the stretch that says most of its key words, from the first of them to the
    last (related words said before or after are left out)."""
    if not words:
        return []
    index = _index(words)
    target = _statement(statement, kind)
    if not target.tokens:
        return []
    found = _search(index, target, limit, word_for_word=True)
    return [index.span(f.a, f.b, round(f.score, 1)) for f in found]
