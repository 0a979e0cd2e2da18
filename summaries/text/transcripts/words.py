"""Word times and word counts.

`timed_words` gives the flat list of words that pins are aligned with; the parsers share
the spreading of words over a span of milliseconds; `words_written` counts the words of a
file before it is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .base import _SPEAKER_CHANGE, Segment, Word

_WORD = re.compile(r"\S+")


def timed_words(segments: list[Segment] | tuple[Segment, ...]) -> list[Word]:
    """Every word of the transcript in order, each with a time.

    Words the source timed keep their times; the words of a segment without them share its
    span in proportion to their length (a good guess for speech at an even pace).
    """
    words: list[Word] = []
    for segment in segments:
        if segment.words:
            words.extend(segment.words)
        else:
            words.extend(_spread(segment))
    return words


def _spread(segment: Segment) -> list[Word]:
    tokens = _WORD.findall(segment.text)
    if not tokens:
        return []
    total = sum(len(token) + 1 for token in tokens)
    span = max(segment.end - segment.start, 0.0)
    words, offset = [], 0
    for token in tokens:
        start = segment.start + span * offset / total
        offset += len(token) + 1
        words.append(Word(round(start, 3), round(segment.start + span * offset / total, 3), token))
    return words


# Characters counted at a time: the count holds one slice's words at once, never the file's.
_COUNT_SLICE = 1 << 16
_SPACE = re.compile(r"\s")


def words_written(text: str) -> int:
    """How many words (runs of non-space) the text holds, counted a slice at a time."""
    count, at, size = 0, 0, len(text)
    while at < size:
        # Cut only at a space, so that no word is counted twice.
        space = _SPACE.search(text, min(size, at + _COUNT_SLICE))
        stop = space.start() if space else size
        count += len(text[at:stop].split())
        at = stop
    return count


def _chunk_words(
    chunks: list[tuple[int | None, str]],
    start: int,
    end: int,
    tokens: Callable[[str], list[str]],
) -> list[Word]:
    """Words of text chunks, each chunk from its start (kept in order, inside start..end)
    to the next chunk's; a chunk without a time is part of the one before."""
    timed: list[tuple[int, list[str]]] = []
    at = start
    for chunk_start, text in chunks:
        if chunk_start is not None:
            at = min(max(chunk_start, at), end)
        found = tokens(text)
        if not found:
            continue
        if timed and (chunk_start is None or timed[-1][0] == at):
            timed[-1][1].extend(found)
        else:
            timed.append((at, found))
    words: list[Word] = []
    for index, (chunk_start, found) in enumerate(timed):
        chunk_end = timed[index + 1][0] if index + 1 < len(timed) else end
        words.extend(_spread_ms(found, chunk_start, chunk_end))
    return words


def _spread_ms(tokens: list[str], start: int, end: int) -> list[Word]:
    """Words sharing start..end (ms) in proportion to their length, as `timed_words` does.
    A ">>" takes no time: it is kept, at the start of the word after it."""
    if _SPEAKER_CHANGE in tokens:
        return _spread_marked(tokens, start, end)
    if len(tokens) == 1:
        return [Word(start / 1000, end / 1000, tokens[0])]
    total = sum(len(token) + 1 for token in tokens)
    span = end - start
    words, offset = [], 0
    for token in tokens:
        word_start = start + round(span * offset / total)
        offset += len(token) + 1
        words.append(Word(word_start / 1000, (start + round(span * offset / total)) / 1000, token))
    return words


def _spread_marked(tokens: list[str], start: int, end: int) -> list[Word]:
    said = [token for token in tokens if token != _SPEAKER_CHANGE]
    timed = iter(_spread_ms(said, start, end) if said else [])
    words: list[Word] = []
    marks = 0
    for token in tokens:
        if token == _SPEAKER_CHANGE:
            marks += 1
            continue
        word = next(timed)
        words.extend([Word(word.start, word.start, _SPEAKER_CHANGE)] * marks)
        words.append(word)
        marks = 0
    words.extend([Word(end / 1000, end / 1000, _SPEAKER_CHANGE)] * marks)
    return words
