"""Markup of WebVTT and SubRip cue text: tags and position codes dropped, HTML entities
decoded, word times (<00:00:01.234>) and voice tags (<v Name>) read.
"""

from __future__ import annotations

import html
import re

# Markup of cue text: tags (<i>, <c.colour>, <v Name>, <00:00:01.000>) and SubRip's
# {\an8} position codes. A tag is "<" to the nearest ">" with no "<" between, so a stray
# "<" costs one scan to the next bracket, not one to the end of the line.
_TAG = re.compile(r"<[^<>]*>|\{\\[^{}]*\}")
_WORD_TIME = re.compile(r"<(?:(\d{1,6}):)?(\d{1,2}):(\d{1,2})\.(\d{1,3})>")
_VOICE = re.compile(r"<v(?:\.[^\s<>]*)?[ \t]([^<>]*)>")
_LONG_REFERENCE = re.compile(r"&#(?=[0-9]{8})")


def _unescape(text: str) -> str:
    """HTML entities decoded; a decimal reference too long to be a character stays as
    written (Python refuses to read a number of more than 4,300 digits)."""
    if "&#" in text:
        text = _LONG_REFERENCE.sub("&amp;#", text)
    return html.unescape(text)


def _caption_plain(raw: str) -> str:
    """Cue text as words separated by one space (see `_caption_tokens`)."""
    if "<" in raw or "{" in raw or "&" in raw:
        return " ".join(_caption_tokens(raw))
    return " ".join(raw.split())


def _caption_tokens(raw: str) -> list[str]:
    """The words of cue text: tags dropped, entities decoded (">>", the mark of a new
    speaker, is a word here; `_segments` and `_speaker_turns` take it out)."""
    if "<" in raw or "{" in raw:
        raw = _TAG.sub("", raw)
    if "&" in raw:
        raw = _unescape(raw)
    return raw.split()


def _has_word_times(raw: str) -> bool:
    return "<" in raw and _WORD_TIME.search(raw) is not None


def _time_tag_chunks(raw: str, start: int) -> list[tuple[int | None, str]]:
    """Text split at its <00:00:01.234> word times: the first chunk starts with the cue."""
    # The split gives the text before the first time, then for each time its four fields
    # (hours may be None) and the text after it.
    parts = _WORD_TIME.split(raw)
    chunks: list[tuple[int | None, str]] = [(start, parts[0])]
    for index in range(1, len(parts) - 1, 5):
        hours, minutes, seconds, fraction, text = parts[index : index + 5]
        at = None
        if int(minutes) < 60 and int(seconds) < 60:
            at = ((int(hours or 0) * 60 + int(minutes)) * 60 + int(seconds)) * 1000
            at += int(fraction.ljust(3, "0"))
        chunks.append((at, text))
    return chunks


def _voice(lines: list[str]) -> str:
    for line in lines:
        if "<v" in line:
            match = _VOICE.search(line)
            if match:
                return " ".join(_unescape(match.group(1)).split())
    return ""
