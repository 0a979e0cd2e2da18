"""What the transcript modules share: the `Segment`s and `Word`s a transcript is stored as,
the `ParsedTranscript` a file is read into, the limits an upload is held to, and the
`TranscriptError`s a file is refused with (and the helpers their messages use).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    # A new speaker starts here: the file marked the change (">>", a dialogue dash) with
    # or without naming them (`speaker` is "" when it did not).
    turn: bool = False

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"start": self.start, "end": self.end, "text": self.text}
        if self.speaker:
            data["speaker"] = self.speaker
        if self.words:
            data["words"] = [[word.start, word.end, word.text] for word in self.words]
        if self.turn:
            data["turn"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Segment:
        words = tuple(Word(float(s), float(e), str(t)) for s, e, t in data.get("words", ()))
        return cls(
            start=float(data["start"]),
            end=float(data["end"]),
            text=str(data["text"]),
            speaker=str(data.get("speaker", "")),
            words=words,
            turn=bool(data.get("turn", False)),
        )


FORMATS = ("vtt", "srt", "json3", "whisper")

# More cues than any video has (YouTube's auto-captions of 12 hours have about 35,000; a
# cue a word, 9 hours of talk): a file with more is refused before it is read, so the time
# spent on one upload stays bounded.
MAX_CUES = 100_000
# Objects of a JSON transcript: a segment or event each, and a word each where the file has
# word times (json3 segs, Whisper words).
MAX_JSON_OBJECTS = 4 * MAX_CUES
# Later times are not times in a video (and a huge number would overflow a float).
MAX_SECONDS = 100 * 3600
# Cues of a caption file may overlap by this much (two people talking at once).
OVERLAP_MS = 1000
# A cue this short that repeats the one before is the snapshot a rolling display leaves.
FLASH_MS = 50
# Lines a rolling display keeps on screen from one cue to the next, at most.
ROLLING_LINES = 4
# A transcript may end this long after the video before a warning: max(30 s, 5 %).
DURATION_SLACK_S = 30.0
DURATION_SLACK_SHARE = 0.05
# A transcript whose last words end before this share of the video, and this many seconds
# or more before its end, may have been cut short (a credits roll or an outro is shorter).
COVERAGE_SHARE = 0.9
COVERAGE_SLACK_S = 30.0
# Seconds without a cue that are more than a pause: words may be missing there.
GAP_S = 120.0
# Gaps named one by one; more are counted.
GAPS_NAMED = 5
# Words a file may write for each word said: a YouTube auto-caption file writes each about
# 4.4 times (the line being said with its word times, the line again above the next one,
# a 10 ms snapshot, the timing lines); Whisper JSON with word times about 7.
WRITTEN_PER_WORD = 8


class TranscriptError(ValueError):
    """A file refused as a transcript. The message names the line (or the cue, event or
    segment of a JSON file) where the problem is, in words an editor understands; `line` is
    that line number when there is one."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class TranscriptTooLarge(TranscriptError):
    """A file larger than the upload limit (the web layer answers 413)."""

    def __init__(self, size: int, max_bytes: int) -> None:
        super().__init__(
            f"the file is {size:,} bytes, larger than the limit of {max_bytes:,} bytes"
            + (f" ({max_bytes / 1_000_000:.1f} MB)" if max_bytes >= 1_000_000 else "")
        )
        self.size = size
        self.max_bytes = max_bytes


class TranscriptTooLong(TranscriptError):
    """A transcript of more words than an import may take (`words` counted, at most
    `max_words`): its segments, its pins and the page of it would take too long."""

    def __init__(self, words: int, max_words: int, *, written: bool = False) -> None:
        what = "the file holds" if written else "the transcript has"
        also = " (its times and markup included)" if written else ""
        super().__init__(
            f"{what} {words:,} words{also}, more than the {max_words:,} words a transcript "
            "may have; split it, or import the part the summary is about"
        )
        self.words = words
        self.max_words = max_words


@dataclass(frozen=True)
class ParsedTranscript:
    """Segments read from a transcript file, in time order, and how the file was read."""

    segments: tuple[Segment, ...]
    format: str  # one of FORMATS
    encoding: str  # the codec the bytes were decoded with, e.g. "utf-8", "utf-16-le"
    warnings: tuple[str, ...] = ()


# The mark of a new speaker in caption text (YouTube's): a word until the segments are
# cut at it.
_SPEAKER_CHANGE = ">>"


# Times and values as messages show them.


def _clock(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def _shown(value: object) -> str:
    """A value quoted for a message, shortened."""
    if isinstance(value, str):
        return repr(value[:40] + "…") if len(value) > 40 else repr(value)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)[:40]
    return "a list" if isinstance(value, list) else "an object"
