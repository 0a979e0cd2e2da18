"""Which format a transcript file is in, told from its first characters (`_detect`), and a
JSON file read as YouTube json3 or Whisper JSON (`_parse_json`).
"""

from __future__ import annotations

import json

from .base import MAX_JSON_OBJECTS, Segment, TranscriptError
from .json3 import _json3_segments
from .whisper import _whisper_segments


def _detect(text: str, filename: str) -> str:
    """ "vtt", "srt" or "json" from the first characters of the text; the extension of
    `filename` decides only a WebVTT file without its WEBVTT line, and a .json file that
    is not valid JSON (so that the error names where)."""
    head = text.lstrip()[:6]
    if head.startswith("WEBVTT"):
        return "vtt"
    if head[:1] in ("{", "["):
        return "json"
    extension = filename.rpartition(".")[2].lower() if "." in filename else ""
    if "-->" in text:
        return "vtt" if extension == "vtt" else "srt"
    if extension == "json":
        return "json"
    if extension in ("vtt", "srt"):
        raise TranscriptError(
            "no cue in the file: a caption file holds cues that start with a timing line "
            "such as 00:00:01.000 --> 00:00:04.000"
        )
    raise TranscriptError(
        "not a transcript: expected WebVTT (a first line WEBVTT), SubRip (numbered cues with "
        "times such as 00:00:01,000 --> 00:00:04,000), YouTube json3 or Whisper JSON"
    )


def _parse_json(text: str) -> tuple[str, list[Segment]]:
    # Counted before loading: a million tiny events would take seconds to load.
    objects = text.count("{")
    if objects > MAX_JSON_OBJECTS:
        raise TranscriptError(
            f"the file has {objects:,} JSON objects, more than the {MAX_JSON_OBJECTS:,} a "
            "transcript may have"
        )
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise TranscriptError(
            f"line {error.lineno}, column {error.colno}: not valid JSON ({error.msg})",
            line=error.lineno,
        ) from None
    except RecursionError:
        raise TranscriptError("not a transcript: the JSON is nested too deeply") from None
    except ValueError as error:  # a number of more than 4,300 digits
        raise TranscriptError(f"not valid JSON ({str(error)[:80]})") from None
    if isinstance(document, dict) and "events" in document:
        return "json3", _json3_segments(document["events"])
    if isinstance(document, dict) and "segments" in document:
        return "whisper", _whisper_segments(document["segments"])
    if isinstance(document, list):
        return "whisper", _whisper_segments(document)
    raise TranscriptError(
        'a JSON file, but not a transcript: expected YouTube json3 (an "events" list) or '
        'Whisper JSON (a "segments" list)'
    )
