"""Transcripts as stored: segments of timed text, with word times where the source has them.

Parsers for WebVTT, SubRip, YouTube's json3 and Whisper-style JSON turn an uploaded file into
`Segment`s (`parse_transcript`, here); `timed_words` gives the flat list of words that pins
are aligned with. Pure functions: no ORM, no requests. Every name other code uses is
imported from here. The modules:

- `base.py`: `Segment`, `Word`, `ParsedTranscript`, the limits, the errors;
- `words.py`: word times (`timed_words`, words spread over a span) and `words_written`;
- `decode.py`: bytes to text; `detect.py`: which format, and JSON to json3 or Whisper;
- `captions.py`: WebVTT and SubRip (one line scanner), with `markup.py` (cue text),
  `speakers.py` (turns and speaker labels) and `pieces.py` (pieces of text to segments,
  json3's too);
- `json3.py`, `whisper.py`, and `jsonvalues.py` (the checks of JSON values they share);
- `gaps.py`: the warnings about gaps and a transcript's end against the video's.
"""

from __future__ import annotations

from .base import (
    COVERAGE_SHARE,
    COVERAGE_SLACK_S,
    DURATION_SLACK_S,
    DURATION_SLACK_SHARE,
    FLASH_MS,
    FORMATS,
    GAP_S,
    GAPS_NAMED,
    MAX_CUES,
    MAX_JSON_OBJECTS,
    MAX_SECONDS,
    OVERLAP_MS,
    ROLLING_LINES,
    WRITTEN_PER_WORD,
    ParsedTranscript,
    Segment,
    TranscriptError,
    TranscriptTooLarge,
    TranscriptTooLong,
    Word,
)
from .captions import _parse_captions
from .decode import _ENCODING_NAMES, _decode
from .detect import _detect, _parse_json
from .gaps import _duration_warnings, _gap_warnings
from .words import timed_words, words_written

__all__ = [
    "COVERAGE_SHARE",
    "COVERAGE_SLACK_S",
    "DURATION_SLACK_S",
    "DURATION_SLACK_SHARE",
    "FLASH_MS",
    "FORMATS",
    "GAP_S",
    "GAPS_NAMED",
    "MAX_CUES",
    "MAX_JSON_OBJECTS",
    "MAX_SECONDS",
    "OVERLAP_MS",
    "ROLLING_LINES",
    "WRITTEN_PER_WORD",
    "ParsedTranscript",
    "Segment",
    "TranscriptError",
    "TranscriptTooLarge",
    "TranscriptTooLong",
    "Word",
    "parse_transcript",
    "timed_words",
    "words_written",
]


def parse_transcript(
    data: bytes,
    *,
    filename: str = "",
    duration: float | None = None,
    max_bytes: int | None = None,
    max_words: int | None = None,
) -> ParsedTranscript:
    """Read an uploaded transcript: WebVTT (YouTube's auto-captions included), SubRip,
    YouTube json3 or Whisper-style JSON, told apart by their content; `filename`'s
    extension is only a hint. `duration` (seconds) is the video's length, for a warning when
    the transcript runs past it or ends well before it; a gap of GAP_S or more between
    cues is a warning too. Raises TranscriptError (TranscriptTooLarge over
    `max_bytes`, TranscriptTooLong over `max_words` words said) for a file that cannot be
    used, never another exception.

    The words are counted twice: every word written in the file, before it is read (a
    file may write each word said up to WRITTEN_PER_WORD times, with its times and
    markup), so that a file of millions of words is refused in a fraction of a second;
    then the words said, once read."""
    if max_bytes is not None and len(data) > max_bytes:
        raise TranscriptTooLarge(len(data), max_bytes)
    warnings: list[str] = []
    text, encoding = _decode(data)
    if encoding in ("cp1252", "latin-1"):
        warnings.append(
            f"the file is not UTF-8; it was read as {_ENCODING_NAMES[encoding]}, so check "
            "accented letters and quotes"
        )
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise TranscriptError("the file is empty")
    if max_words is not None:
        written = words_written(text)
        if written > WRITTEN_PER_WORD * max_words:
            raise TranscriptTooLong(written, max_words, written=True)
    kind = _detect(text, filename)
    if kind == "json":
        kind, segments = _parse_json(text)
    else:
        if kind == "vtt" and not text.lstrip().startswith("WEBVTT"):
            warnings.append('the file has no "WEBVTT" first line; it was read as WebVTT')
        segments = _parse_captions(text, vtt=kind == "vtt")
    if max_words is not None:
        said = sum(len(segment.text.split()) for segment in segments)
        if said > max_words:
            raise TranscriptTooLong(said, max_words)
    warnings.extend(_gap_warnings(segments))
    if duration is not None:
        warnings.extend(_duration_warnings(segments, duration))
    return ParsedTranscript(tuple(segments), kind, encoding, tuple(warnings))
