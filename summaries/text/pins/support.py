"""Where a point (a key point, takeaway or caveat) is supported: the sentences that say
most of what it claims, in the order it claims it.

A point is supported by a passage of one to three consecutive sentences when more than
half of its meaning (its words of meaning, weighted by how rare each is in the transcript,
attribution left out) is said there in order. Words the transcript never says weigh most:
an on-topic point made of the talk's words around a claim never made is not supported.
"""

from __future__ import annotations

import heapq
import threading
from collections import defaultdict
from dataclasses import dataclass

from rapidfuzz.distance import Indel

from .exact import find_exact
from .index import _Transcript
from .statements import _Statement
from .tokens import _NUMBER, _is_content

# More than this share of a point's weighted meaning must be said for it to be supported.
SUPPORTED = 0.5
# The longest passage, in sentences, that supports one point.
_MOST_SENTENCES = 3
# Sentences scored as places a point may be said.
_CANDIDATES = 10
# Stems said more often than this share of the transcript are no help in finding a point.
_MAX_POSTING_SHARE = 0.02


@dataclass(frozen=True)
class Support:
    a: int  # first token of the passage (a sentence's start)
    b: int  # the token after its last sentence
    share: float  # 0-1: how much of the point is said there, in order (see `support`)
    # Statement token -> the passage token it was matched to.
    pairs: dict[int, int]
    # Where the point starts being said (see `_core`).
    start: int
    # The first token of the sentence that says the most of it.
    main: int = 0
    # The token after the last one pinned (`b`, or in a transcript without punctuation the
    # last word that says the point).
    end: int = 0

    @property
    def pinned_end(self) -> int:
        return self.end or self.b

    @property
    def score(self) -> float:
        return round(100.0 * self.share, 1)


def support(index: _Transcript, statement: _Statement, first: int, last: int) -> Support | None:
    """The best passage of sentences `first` to `last` (inclusive): its sentences trimmed to
    those that say some of the point."""
    claim = statement.claim_positions
    if not claim:
        return None
    a, b = index.sentence_span(first, last)
    positions = [p for p in range(a, b) if _counts(index.tokens[p])]
    if not positions:
        return None
    stems = [statement.stems[k] for k in claim]
    weights = [index.weight(stem) for stem in stems]
    pairs = _in_order(claim, stems, positions, [index.stems[p] for p in positions])
    pairs.update(_moved_phrases(claim, stems, positions, index, pairs))
    if not index.reading.punctuated:
        pairs = _said_together(pairs, weights, claim, _MOST_SENTENCES * len(statement.tokens))
    if not pairs:
        return None
    matched = {claim.index(k) for k in pairs}
    share = sum(weights[i] for i in matched) / sum(weights)
    # What the point says of its subject, not only its names, must be said: an invented
    # claim about a company the talk names is not supported by the names alone.
    rest = [i for i, k in enumerate(claim) if not _is_a_name(index, statement, k)]
    if rest and len(rest) < len(claim):
        rest_share = sum(weights[i] for i in rest if i in matched) / sum(weights[i] for i in rest)
        share = min(share, rest_share)
    said = sorted(pairs.values())
    start, _ = index.sentence_span(index.sentence[said[0]], index.sentence[said[0]])
    _, end = index.sentence_span(index.sentence[said[-1]], index.sentence[said[-1]])
    # Without punctuation "sentences" are stretches between pauses: the span pinned is
    # the words that say the point, with the little words the point says beside them.
    last = end if index.reading.punctuated else _last_of_run(said) + 1
    return Support(
        start,
        end,
        share,
        pairs,
        _core(index, statement, pairs, weights, claim),
        _main(index, pairs, weights, claim),
        last,
    )


def _said_together(
    pairs: dict[int, int], weights: list[float], claim: list[int], reach: int
) -> dict[int, int]:
    """The pairs whose passage words are said within `reach` tokens of one another, where
    most of the point's weight is: in a transcript without punctuation, whose sentences
    are only guessed, a passage is as long as a few sentences of the point's own length,
    and words of it said further off are not what says it."""
    weight = {k: weights[i] for i, k in enumerate(claim)}
    said = sorted(pairs.items(), key=lambda pair: pair[1])
    best: tuple[float, int, int] = (-1.0, 0, 0)
    lo, total = 0, 0.0
    for hi, (k, position) in enumerate(said):
        total += weight[k]
        while position - said[lo][1] >= reach:
            total -= weight[said[lo][0]]
            lo += 1
        if total > best[0]:
            best = (total, lo, hi)
    _, lo, hi = best
    return dict(said[lo : hi + 1])


def _beside(index: _Transcript, statement: _Statement, token: int, step: int) -> int:
    """From a first (step -1) word said, the start of the passage: up to three more words
    the statement says before it ("an" before "agent", "Anthropic says" before what
    Anthropic says)."""
    said_by = {statement.tokens[k] for k in statement.attribution}
    edge = token
    for _ in range(3):
        beyond = edge + step
        if not 0 <= beyond < len(index.tokens) or index.tokens[beyond] not in statement.tokens:
            break
        # Who the point says said it, when the words say it too ("Anthropic says…"); no
        # other word of another clause.
        attributed = index.tokens[beyond] in said_by
        if _counts(index.tokens[beyond]) and not attributed:
            break
        if index.clause[beyond] != index.clause[edge] and not attributed:
            break
        edge = beyond
    return edge if step < 0 else edge + 1


def _main(index: _Transcript, pairs: dict[int, int], weights: list[float], claim: list[int]) -> int:
    """The first token of the sentence that says the most of the point."""
    said: dict[int, float] = {}
    for i, k in enumerate(claim):
        if k in pairs:
            sentence = index.sentence[pairs[k]]
            said[sentence] = said.get(sentence, 0.0) + weights[i]
    return index.sentence_starts[max(sorted(said), key=said.__getitem__)]


def _core(
    index: _Transcript,
    statement: _Statement,
    pairs: dict[int, int],
    weights: list[float],
    claim: list[int],
) -> int:
    """Where the point starts being said: in the first sentence of the passage that says
    two or more of its words, one of them of what it says of its subject (see
    `_Statement.predicate`), the start of the clause of the first of them. A sentence
    before it that says only the point's subject ("our first agent…" before "it resolved
    31% of tickets") names what the point is about, not what it claims. In a transcript without
    punctuation, whose sentences are only stretches between pauses, the first word of the
    closest run of its words (a stray word said before is not where it starts), or the
    start of its clause when that is a few words before."""
    said: dict[int, list[int]] = {}
    predicate = statement.predicate
    of_the_predicate: set[int] = set()
    for k in claim:
        if k in pairs:
            said.setdefault(index.sentence[pairs[k]], []).append(pairs[k])
            if k >= predicate:
                of_the_predicate.add(pairs[k])

    def _of_the_predicate(found: list[int]) -> bool:
        return any(p in of_the_predicate for p in found)

    if not index.reading.punctuated:
        token = _closest_run(sorted(pairs.values()))
        start = token
        while start > 0 and index.clause[start - 1] == index.clause[token]:
            start -= 1
        if token - start > _CLAUSE_REACH:
            start = token
        return _beside(index, statement, start, -1)
    first = min(
        (s for s, found in said.items() if len(found) >= 2 and _of_the_predicate(found)),
        default=None,
    )
    if first is None:
        first = min((s for s, found in said.items() if len(found) >= 2), default=min(said))
    token = min(said[first])
    start = index.sentence_starts[first]
    while token > start and index.clause[token - 1] == index.clause[token]:
        token -= 1
    return token


# Words between a point's first word said and the start of its clause, at most, for the
# clause's start to be where it starts (in a transcript without punctuation).
_CLAUSE_REACH = 4
# Words said more than this apart are two runs.
_RUN_GAP = 6


def _last_of_run(positions: list[int]) -> int:
    """The last word said, a single word said well after the rest left out (a stray word,
    not where the point ends)."""
    if len(positions) > 1 and positions[-1] - positions[-2] > _RUN_GAP:
        return positions[-2]
    return positions[-1]


def _closest_run(positions: list[int]) -> int:
    """The first position of the run (positions at most `_RUN_GAP` apart) holding most."""
    runs: list[list[int]] = [[positions[0]]]
    for position in positions[1:]:
        if position - runs[-1][-1] > _RUN_GAP:
            runs.append([])
        runs[-1].append(position)
    return max(runs, key=len)[0]


def _moved_phrases(
    claim: list[int],
    stems: list[str],
    positions: list[int],
    index: _Transcript,
    pairs: dict[int, int],
) -> dict[int, int]:
    """Phrases of two or more of the point's words, left unmatched, that the passage says
    together elsewhere in it: a rewording may put a phrase first ("the basic plan costs
    twenty dollars" / "starts at twenty dollars … for the basic plan"). Single words out
    of order are not taken: they are what an invention made of the talk's words is."""
    used = set(pairs.values())
    free = [j for j, p in enumerate(positions) if p not in used]
    said: dict[tuple[str, str], int] = {}
    for offset in range(len(free) - 1):
        j, following = free[offset], free[offset + 1]
        if following == j + 1:
            said.setdefault((index.stems[positions[j]], index.stems[positions[following]]), j)
    moved: dict[int, int] = {}
    i = 0
    while i < len(claim) - 1:
        pair = (stems[i], stems[i + 1])
        if claim[i] in pairs or claim[i + 1] in pairs or pair not in said:
            i += 1
            continue
        j = said.pop(pair)
        moved[claim[i]], moved[claim[i + 1]] = positions[j], positions[j + 1]
        i += 2
        while i < len(claim) and j + 2 < len(positions) and claim[i] not in pairs:
            if stems[i] != index.stems[positions[j + 2]] or positions[j + 2] in used:
                break
            moved[claim[i]] = positions[j + 2]
            i, j = i + 1, j + 1
    return moved


def _in_order(
    claim: list[int], stems: list[str], positions: list[int], said: list[str]
) -> dict[int, int]:
    """Statement token -> passage token for the longest run of the stems said in order."""
    pairs = {}
    for op in Indel.opcodes(stems, said):
        if op.tag == "equal":
            for offset in range(op.src_end - op.src_start):
                pairs[claim[op.src_start + offset]] = positions[op.dest_start + offset]
    return pairs


def _is_a_name(index: _Transcript, statement: _Statement, k: int) -> bool:
    term = statement.tokens[k]
    return term.isalpha() and (statement.reading.cased[k] or term in index.names)


def _counts(term: str) -> bool:
    return _is_content(term) or bool(_NUMBER.match(term))


def best_near(index: _Transcript, statement: _Statement, a: int, b: int) -> Support | None:
    """The best passage for the point among the sentences tokens a to b touch, one more
    on either side."""
    last_sentence = index.sentence[-1]
    first = max(0, index.sentence[a] - 1)
    last = min(last_sentence, index.sentence[max(a, b - 1)] + 1)
    return _best_of(index, statement, first, last, max_size=last - first + 1)


def starting_in(index: _Transcript, statement: _Statement, a: int, b: int) -> Support | None:
    """The best passage for the point whose first sentence is one tokens a to b touch."""
    last_sentence = index.sentence[-1]
    first, last = index.sentence[a], index.sentence[max(a, b - 1)]
    best: Support | None = None
    for start in range(first, last + 1):
        hi = min(last_sentence, start + _MOST_SENTENCES - 1)
        found = _best_of(index, statement, start, hi, max_size=_MOST_SENTENCES, holding=start)
        if found is not None and found.a == index.sentence_starts[start]:
            if best is None or found.share > best.share:
                best = found
    return best


# The searches made in the last transcript searched: suggesting and verifying a point
# look for it alike. Each keeps at least this many passages.
_SEARCHES: dict[str, list[Support]] = {}
_SEARCHED: list[_Transcript | None] = [None]
_SEARCHES_KEPT = 256
_SEARCH_LIMIT = 3
_SEARCHES_LOCK = threading.Lock()


def search(index: _Transcript, statement: _Statement, limit: int) -> list[Support]:
    """The best passages of the whole transcript for a point, best first, none
    overlapping."""
    with _SEARCHES_LOCK:
        kept = _SEARCHES.get(statement.text) if _SEARCHED[0] is index else None
    if kept is not None and (len(kept) >= limit or limit <= _SEARCH_LIMIT):
        return kept[:limit]
    found = _search(index, statement, max(limit, _SEARCH_LIMIT))
    with _SEARCHES_LOCK:
        if _SEARCHED[0] is not index or len(_SEARCHES) >= _SEARCHES_KEPT:
            _SEARCHES.clear()
            _SEARCHED[0] = index
        _SEARCHES[statement.text] = found
    return found[:limit]


def _search(index: _Transcript, statement: _Statement, limit: int) -> list[Support]:
    found: list[Support] = []
    exact = _said_word_for_word(index, statement)
    if exact is not None:
        found.append(exact)
    last_sentence = index.sentence[-1] if index.tokens else -1
    for sentence in _candidate_sentences(index, statement):
        lo = max(0, sentence - _MOST_SENTENCES + 1)
        hi = min(last_sentence, sentence + _MOST_SENTENCES - 1)
        best = _best_of(index, statement, lo, hi, max_size=_MOST_SENTENCES, holding=sentence)
        if best is not None:
            found.append(best)
    # Of equal shares, the words said word for word, then the shortest, then the first.
    found.sort(key=lambda s: (-s.share, s is not exact, s.b - s.a, s.a))
    kept: list[Support] = []
    for passage in found:
        if all(passage.b <= other.a or passage.a >= other.b for other in kept):
            kept.append(passage)
    return kept[:limit]


def _said_word_for_word(index: _Transcript, statement: _Statement) -> Support | None:
    """The point's own words (attribution left out) said as written, if they are: a point
    in the speaker's words is pinned to them, not to its key words said close together
    elsewhere."""
    claim = [k for k in range(len(statement.tokens)) if k not in statement.attribution]
    if not claim or claim != list(range(claim[0], claim[-1] + 1)):
        return None
    words = tuple(statement.tokens[k] for k in claim)
    found = find_exact(index, (words,), 0, len(index.tokens))
    if found is None:
        return None
    a, b = found
    pairs = {k: a + offset for offset, k in enumerate(claim)}
    return Support(a, b, 1.0, pairs, a, a, b)


def _best_of(
    index: _Transcript,
    statement: _Statement,
    lo: int,
    hi: int,
    *,
    max_size: int,
    holding: int | None = None,
) -> Support | None:
    """The best passage of consecutive sentences within lo to hi (holding sentence
    `holding`, when given): the most said, then the shortest, then the first."""
    best: Support | None = None
    for first in range(lo, hi + 1):
        for last in range(first, min(hi, first + max_size - 1) + 1):
            if holding is not None and not first <= holding <= last:
                continue
            found = support(index, statement, first, last)
            if found is None:
                continue
            if best is None or (found.share, best.b - best.a, -found.a) > (
                best.share,
                found.b - found.a,
                -best.a,
            ):
                best = found
    return best


def _candidate_sentences(index: _Transcript, statement: _Statement) -> list[int]:
    """The sentences where the point's rarer stems are said, by votes weighted by rarity."""
    most = max(50, int(len(index.tokens) * _MAX_POSTING_SHARE))
    content = sorted(statement.content)
    usable = [stem for stem in content if 0 < len(index.postings.get(stem, ())) <= most]
    if not usable:
        usable = [stem for stem in content if stem in index.postings][:2]
    votes: defaultdict[int, float] = defaultdict(float)
    for stem in usable:
        weight = index.weight(stem)
        for sentence in {index.sentence[p] for p in index.postings[stem]}:
            votes[sentence] += weight
    return heapq.nlargest(_CANDIDATES, votes, key=lambda s: (votes[s], -s))
