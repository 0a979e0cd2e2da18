"""A transcript's tokens, stems and sentences, indexed once for the last few transcripts seen."""

from __future__ import annotations

import math
import threading
from bisect import bisect_left
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..transcripts import Word
from .base import Span, span_of
from .reading import Reading, read

# ---------------------------------------------------------------------------------------
# The transcript, indexed
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Transcript:
    words: tuple[Word, ...]
    tokens: list[str]
    stems: list[str]
    # The first and last word each token was said in.
    first_word: list[int]
    last_word: list[int]
    # Where each stem is said, in token positions.
    postings: dict[str, list[int]]
    # How the tokens read: sentences, clauses, polarity, names.
    reading: Reading
    # Tokens written as names somewhere inside a sentence ("Nova", "Parcelly").
    names: frozenset[str]

    @cached_property
    def token_starts(self) -> list[float]:
        """When each token starts being said, in seconds (ascending)."""
        return [self.words[first].start for first in self.first_word]

    @property
    def uncased(self) -> bool:
        return self.reading.uncased

    @property
    def sentence(self) -> list[int]:
        return self.reading.sentence

    @property
    def polarity(self) -> list[int]:
        return self.reading.polarity

    @property
    def clause(self) -> list[int]:
        return self.reading.clause

    @property
    def sentence_starts(self) -> list[int]:
        return self.reading.sentence_starts

    def sentence_span(self, first: int, last: int) -> tuple[int, int]:
        """The tokens of sentences `first` to `last` (inclusive)."""
        starts = self.reading.sentence_starts
        end = starts[last + 1] if last + 1 < len(starts) else len(self.tokens)
        return starts[first], end

    def weight(self, stem: str) -> float:
        """How much a stem tells about where it is: rare stems more than common ones."""
        return math.log(1.0 + len(self.tokens) / (1.0 + len(self.postings.get(stem, ()))))

    def tokens_of(self, first_word: int, end_word: int) -> tuple[int, int]:
        """The token range said in words `first_word` to `end_word`."""
        return bisect_left(self.first_word, first_word), bisect_left(self.first_word, end_word)

    def span(self, a: int, b: int, score: float) -> Span:
        return span_of(self.words, self.first_word[a], self.last_word[b - 1] + 1, score)

    def said(self, a: int, b: int) -> str:
        """The words of tokens a to b as the transcript has them."""
        return " ".join(w.text for w in self.words[self.first_word[a] : self.last_word[b - 1] + 1])


def _build_index(words: tuple[Word, ...]) -> _Transcript:
    gaps = [later.start - word.end for word, later in zip(words, words[1:], strict=False)]
    reading = read([word.text for word in words], gaps=[*gaps, 0.0], skip_notes=True)
    postings: dict[str, list[int]] = defaultdict(list)
    for position, stem in enumerate(reading.stems):
        postings[stem].append(position)
    names = _names(reading)
    return _Transcript(
        words,
        reading.tokens,
        reading.stems,
        reading.first_word,
        reading.last_word,
        dict(postings),
        reading,
        names,
    )


def _names(reading: Reading) -> frozenset[str]:
    """The words the transcript writes as names: with a capital inside a sentence at least
    as often as without ("Parcelly", "Nova"; not "time" for one "Inference Time")."""
    cased: dict[str, int] = defaultdict(int)
    plain: dict[str, int] = defaultdict(int)
    starts = set(reading.sentence_starts)
    for k, term in enumerate(reading.tokens):
        if k in starts:
            continue
        if reading.cased[k]:
            cased[term] += 1
        else:
            plain[term] += 1
    return frozenset(term for term, count in cased.items() if count >= plain[term])


_INDEXES: OrderedDict[int, _Transcript] = OrderedDict()
_INDEXES_KEPT = 4
_INDEX_LOCK = threading.Lock()


def _index(words: Sequence[Word]) -> _Transcript:
    """The index of a transcript, built once for the last few transcripts seen (the same
    words, compared item by item, which is fast when they are the same objects)."""
    key = tuple(words)
    with _INDEX_LOCK:
        # Newest first: a summary's pins are verified one after another on one transcript,
        # and versions of a transcript often have as many words (a full comparison each).
        for cached_key, cached in reversed(_INDEXES.items()):
            if _same_words(cached.words, key):
                _INDEXES.move_to_end(cached_key)
                return cached
    index = _build_index(key)
    with _INDEX_LOCK:
        _INDEXES[id(index)] = index
        while len(_INDEXES) > _INDEXES_KEPT:
            _INDEXES.popitem(last=False)
    return index


def _same_words(cached: tuple[Word, ...], key: tuple[Word, ...]) -> bool:
    """Whether two transcripts say the same words at the same times; a difference at either
    end (a line added or corrected there) is seen without comparing every word."""
    if len(cached) != len(key):
        return False
    return not key or (cached[-1] == key[-1] and cached[0] == key[0] and cached == key)


def index_of(words: Sequence[Word]) -> _Transcript:
    """The index of a transcript (built now, or the one kept), for a benchmark to time."""
    return _index(words)


def forget_indexes() -> None:
    """Drop the indexes kept, as a fresh process has none."""
    with _INDEX_LOCK:
        _INDEXES.clear()
