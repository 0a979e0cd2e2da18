"""Transcripts as stored: segments of timed text, with word times where the source has them.

Parsers for WebVTT, SubRip, YouTube's json3 and Whisper-style JSON turn an uploaded file into
`Segment`s; `timed_words` gives the flat list of words that pins are aligned with.
Pure functions: no ORM, no requests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Word:
    """One word said, from `start` to `end` seconds into the video."""

    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Segment:
    """A stretch of speech: a caption cue, a Whisper segment, a json3 event."""

    start: float
    end: float
    text: str
    speaker: str = ""
    # Word times as the source gave them; empty when it gave none.
    words: tuple[Word, ...] = field(default=())

    def as_json(self) -> dict:
        data: dict = {"start": self.start, "end": self.end, "text": self.text}
        if self.speaker:
            data["speaker"] = self.speaker
        if self.words:
            data["words"] = [[word.start, word.end, word.text] for word in self.words]
        return data

    @classmethod
    def from_json(cls, data: dict) -> Segment:
        words = tuple(Word(float(s), float(e), str(t)) for s, e, t in data.get("words", ()))
        return cls(
            start=float(data["start"]),
            end=float(data["end"]),
            text=str(data["text"]),
            speaker=str(data.get("speaker", "")),
            words=words,
        )


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
