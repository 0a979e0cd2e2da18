"""Pieces of text becoming segments, for caption files and json3 alike: a piece of a
rolling display ends where the next one starts, its words are timed, and a ">>" among
them cuts it at a new speaker's turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .base import _SPEAKER_CHANGE, Segment, Word
from .words import _chunk_words, _spread_ms


@dataclass(slots=True)
class _Piece:
    """What becomes a segment, once its end is settled and its words are timed."""

    start: int
    end: int
    text: str
    # Word times: (start or None, text) chunks, a start applying to the text after it.
    chunks: list[tuple[int | None, str]] | None = None
    speaker: str = ""
    # Part of a rolling display: the piece before it ends where this one starts.
    rolling: bool = False
    # Its text lines (markup dropped), for the speaker labels; None for timed words.
    lines: list[str] | None = None
    turn: bool = False


def _segments(pieces: list[_Piece], tokens: Callable[[str], list[str]]) -> list[Segment]:
    """Segments of the pieces: a piece of a rolling display ends where the next one starts
    (a line stays on screen after it is said); words from the word times of its chunks.
    A ">>" left among the words starts a new segment, a new speaker's turn."""
    segments = []
    for index, piece in enumerate(pieces):
        end = piece.end
        if index + 1 < len(pieces) and pieces[index + 1].rolling:
            end = max(piece.start, min(end, pieces[index + 1].start))
        if piece.chunks is not None:
            words = _chunk_words(piece.chunks, piece.start, end, tokens)
            segments.extend(_word_turns(piece, end, words, timed=True))
        elif _SPEAKER_CHANGE in piece.text:
            words = _spread_ms(tokens(piece.text), piece.start, end)
            segments.extend(_word_turns(piece, end, words, timed=False))
        elif piece.text:
            segments.append(
                Segment(piece.start / 1000, end / 1000, piece.text, piece.speaker, (), piece.turn)
            )
    return segments


def _word_turns(piece: _Piece, end: int, words: list[Word], *, timed: bool) -> list[Segment]:
    """Segments of a piece's words, cut at each ">>"; a turn's first word "NAME:" in
    capitals names its speaker."""
    groups: list[tuple[bool, list[Word]]] = [(piece.turn, [])]
    for word in words:
        if word.text == _SPEAKER_CHANGE:
            groups.append((True, []))
        else:
            groups[-1][1].append(word)
    groups = [(turn, found) for turn, found in groups if found]
    segments = []
    for number, (turn, found) in enumerate(groups):
        start = piece.start / 1000 if number == 0 else found[0].start
        stop = groups[number + 1][1][0].start if number + 1 < len(groups) else end / 1000
        speaker = piece.speaker
        first = found[0].text
        if turn and len(found) > 1 and first.endswith(":") and first[:-1].isupper():
            speaker, found = first[:-1], found[1:]
        text = " ".join(word.text for word in found)
        segments.append(Segment(start, stop, text, speaker, tuple(found) if timed else (), turn))
    return segments
