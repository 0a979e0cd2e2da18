"""Where a statement's words are said word for word."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from .index import _Transcript
from .tokens import _stem


def find_exact(
    index: _Transcript, pieces: Sequence[Sequence[str]], lo: int, hi: int
) -> tuple[int, int] | None:
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
            return start, end
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
