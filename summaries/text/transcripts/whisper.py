"""Whisper-style JSON transcripts (Whisper, WhisperX): segments in seconds with their
speakers, and their word times where the file has them.
"""

from __future__ import annotations

from .base import Segment, TranscriptError, Word, _clock, _shown
from .jsonvalues import _check_json_order, _items, _ms, _object
from .words import _spread_ms


def _whisper_segments(value: object) -> list[Segment]:
    """Segments of Whisper-style JSON: "start" and "end" in seconds, "text", and when
    present "speaker" and "words" (each "word" or "text", with "start" and "end"; a word
    without times, as WhisperX leaves numbers, takes them from its neighbours)."""
    items = _items(value, "segments")
    segments: list[Segment] = []
    before: tuple[str, int, int] | None = None
    for number, item in enumerate(items, start=1):
        where = f"segment {number}"
        segment = _object(item, where)
        start = _ms(segment.get("start"), where, "start", scale=1000)
        end = _ms(segment.get("end"), where, "end", scale=1000)
        if end < start:
            raise TranscriptError(f"{where}: end {_clock(end)} is before its start {_clock(start)}")
        _check_json_order(start, before, where, overlap_allowed=False)
        before = (where, start, end)
        text = segment.get("text", "")
        if not isinstance(text, str):
            raise TranscriptError(f'{where}: "text" is {_shown(text)}, not text')
        speaker = segment.get("speaker", "")
        if isinstance(speaker, (int, float)) and not isinstance(speaker, bool):
            speaker = str(speaker)
        if not isinstance(speaker, str):
            raise TranscriptError(f'{where}: "speaker" is {_shown(speaker)}, not text')
        words = _whisper_words(segment.get("words"), where, start, end)
        tokens = " ".join(text.split()) or " ".join(word.text for word in words)
        if tokens:
            segments.append(Segment(start / 1000, end / 1000, tokens, speaker.strip(), words))
    if not segments:
        raise TranscriptError("no segment of the file has text: there is nothing to import")
    return segments


def _whisper_words(value: object, where: str, start: int, end: int) -> tuple[Word, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TranscriptError(f'{where}: "words" is {_shown(value)}, not a list')
    found: list[tuple[int | None, int | None, list[str]]] = []
    for index, item in enumerate(value, start=1):
        place = f"{where}, word {index}"
        word = _object(item, place)
        text = word.get("word", word.get("text", ""))
        if not isinstance(text, str):
            raise TranscriptError(f'{place}: "word" is {_shown(text)}, not text')
        times = [
            None if word.get(key) is None else _ms(word.get(key), place, key, scale=1000)
            for key in ("start", "end")
        ]
        if text.split():
            found.append((times[0], times[1], text.split()))
    # Words without a start (WhisperX leaves numbers unaligned) share the gap between the
    # word before and the next word with a start; a word without an end lasts until that
    # next start (found in one walk back). Starts stay in order and inside the segment.
    later = [end] * len(found)
    known = end
    for index in range(len(found) - 1, -1, -1):
        later[index] = known
        given = found[index][0]
        if given is not None:
            known = given
    words: list[Word] = []
    pending: list[str] = []
    at = earliest = start
    for (word_start, word_end, tokens), next_start in zip(found, later, strict=True):
        if word_start is None:
            pending.extend(tokens)
            continue
        first = min(max(word_start, earliest), end)
        if pending:
            words.extend(_spread_ms(pending, min(at, first), first))
            pending = []
        last = min(max(next_start if word_end is None else word_end, first), end)
        words.extend(_spread_ms(tokens, first, last))
        at, earliest = last, first
    if pending:
        words.extend(_spread_ms(pending, min(at, end), end))
    return tuple(words)
