"""YouTube json3 transcripts: events of segs read into segments, automatic captions (with
word offsets) as a rolling display with word times.
"""

from __future__ import annotations

from .base import Segment, TranscriptError, _shown
from .jsonvalues import _check_json_order, _items, _json_tokens, _ms, _object
from .pieces import _Piece, _segments


def _json3_segments(value: object) -> list[Segment]:
    """Segments of json3 events: an event's "segs" hold its text, each from its offset
    ("tOffsetMs") after the event's start ("tStartMs"). Events without text (window
    definitions, the appended events holding only a line break) are skipped. Automatic
    captions (with word offsets) roll: an event is shown until the line after the next is
    said, so it ends where the next one starts."""
    events = _items(value, "events")
    found: list[tuple[str, int, int | None, list[tuple[int | None, str]], bool]] = []
    automatic = False
    for number, item in enumerate(events, start=1):
        where = f"event {number}"
        event = _object(item, where)
        segs = event.get("segs")
        if segs is None:
            continue
        if not isinstance(segs, list):
            raise TranscriptError(f'{where}: "segs" is {_shown(segs)}, not a list')
        start = _ms(event.get("tStartMs"), where, "tStartMs", scale=1)
        length = event.get("dDurationMs")
        end = None if length is None else start + _ms(length, where, "dDurationMs", scale=1)
        chunks: list[tuple[int | None, str]] = []
        offsets = False  # some seg of the event has its own time
        for index, seg_value in enumerate(segs, start=1):
            seg = _object(seg_value, f"{where}, seg {index}")
            text = seg.get("utf8", "")
            if not isinstance(text, str):
                raise TranscriptError(f'{where}, seg {index}: "utf8" is {_shown(text)}, not text')
            offset = seg.get("tOffsetMs")
            at = None
            if offset is not None:
                at = start + _ms(offset, f"{where}, seg {index}", "tOffsetMs", scale=1)
                automatic = offsets = True
            chunks.append((start if index == 1 and at is None else at, text))
        if any(not text.isspace() and text for _, text in chunks):
            found.append((where, start, end, chunks, offsets))
    pieces: list[_Piece] = []
    before: tuple[str, int, int] | None = None
    for position, (where, start, end, chunks, offsets) in enumerate(found):
        if end is None:
            # No duration: shown until the next event, or for its word offsets.
            later = found[position + 1][1] if position + 1 < len(found) else start
            end = max(start, later, *(at for at, _ in chunks if at is not None))
        _check_json_order(start, before, where, overlap_allowed=automatic)
        before = (where, start, end)
        # The words are timed wherever a seg has an offset, the first seg's included (an
        # event of one word said after the event starts).
        timed = automatic and offsets
        text = " ".join(_json_tokens("".join(text for _, text in chunks)))
        pieces.append(_Piece(start, end, text, chunks if timed else None, rolling=automatic))
    segments = _segments(pieces, _json_tokens)
    if not segments:
        raise TranscriptError("no event of the file has text: there is nothing to import")
    return segments
