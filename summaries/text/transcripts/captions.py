"""WebVTT and SubRip files read into segments by one line scanner (`_parse_captions`, with
`vtt` for the WebVTT header, comment, style and region blocks and voice tags): cues and their
timing lines, checked in time order, and the lines a rolling display (YouTube's
auto-captions) shows twice said once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import (
    FLASH_MS,
    MAX_CUES,
    MAX_SECONDS,
    OVERLAP_MS,
    ROLLING_LINES,
    Segment,
    TranscriptError,
    _clock,
    _shown,
)
from .markup import (
    _WORD_TIME,
    _caption_plain,
    _caption_tokens,
    _has_word_times,
    _time_tag_chunks,
    _voice,
)
from .pieces import _Piece, _segments
from .speakers import _speaker_turns

# The WebVTT and SubRip cue blocks are read by a line scanner of this module rather than by
# webvtt-py or srt: those libraries do not say on which line a cue is (an editor needs it
# to fix the file), webvtt-py drops a malformed cue without a word, and srt's file regex
# backtracks on runs of spaces or digits (20,000 spaces take 20 s, 2,000 digits more than a
# minute). Every regular expression of this package is anchored or bounded, so each pass
# over the text is linear.


# Times.

# [hours:]minutes:seconds[.fraction]; WebVTT writes a dot, SubRip a comma: both are read.
_TIME = re.compile(r"(?:(\d{1,6}):)?(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3}))?")
# The timing line as nearly every file writes it, read in one match.
_USUAL_TIMING = re.compile(
    r"(?:(\d{1,2}):)?(\d\d):(\d\d)[.,](\d{3})[ \t]+-->[ \t]+"
    r"(?:(\d{1,2}):)?(\d\d):(\d\d)[.,](\d{3})(?:[ \t]|$)"
)
# A line starting like a timestamp: a timing line whose "-->" is broken.
_LOOKS_TIMED = re.compile(r"[ \t]*(?:\d{1,6}:)?\d{1,2}:\d{1,2}[.,]\d")


def _time_ms(value: str) -> int | None:
    """Milliseconds of a caption timestamp, None when it is not one."""
    match = _TIME.fullmatch(value)
    if not match:
        return None
    hours, minutes, seconds, fraction = match.groups()
    if int(minutes) > 59 or int(seconds) > 59:
        return None
    ms = ((int(hours or 0) * 60 + int(minutes)) * 60 + int(seconds)) * 1000
    return ms + int((fraction or "0").ljust(3, "0"))


@dataclass(slots=True)
class _Cue:
    line: int  # the line of its timing line, counted from 1
    start: int  # milliseconds
    end: int
    lines: list[str]  # its text lines as written


def _parse_captions(text: str, *, vtt: bool) -> list[Segment]:
    cues_written = text.count("-->")
    if cues_written > MAX_CUES:
        raise TranscriptError(
            f"the file has {cues_written:,} cues, more than the {MAX_CUES:,} a transcript may have"
        )
    lines = text.split("\n")
    cues = _scan_cues(lines, vtt=vtt)
    if not cues:
        raise TranscriptError(
            "no cue in the file: a caption file holds cues that start with a timing line "
            "such as 00:00:01.000 --> 00:00:04.000"
        )
    # Whole-text searches first: most files have neither word times nor voice tags.
    word_timed = _WORD_TIME.search(text) is not None and any(
        _has_word_times(line) for cue in cues for line in cue.lines
    )
    pieces = _caption_pieces(cues, word_timed=word_timed, voiced=vtt and "<v" in text)
    pieces = _speaker_turns(pieces, labelled=not any(piece.speaker for piece in pieces))
    segments = _segments(pieces, _caption_tokens)
    if not segments:
        raise TranscriptError("every cue of the file is empty: there is no text to import")
    return segments


def _is_vtt_block(line: str) -> bool:
    """A WebVTT comment, style or region block (skipped)."""
    word = line.split(None, 1)[0] if line.strip() else ""
    return word in ("NOTE", "STYLE", "REGION") and line.startswith(word)


def _scan_cues(lines: list[str], *, vtt: bool) -> list[_Cue]:
    """The cues of a WebVTT or SubRip file, each with the line of its timing line.

    A cue is an optional identifier (SubRip's number) on the line before its timing line,
    then its text lines, up to an empty line (in SubRip also a line of spaces) or a line
    holding "-->". Text after an empty line that is neither a cue nor a broken timing line
    continues the cue before it (as SubRip players read it), so that no text is lost.
    """
    count = len(lines)
    index = 0
    while vtt and index < count and not lines[index].strip():
        index += 1
    if vtt and index < count and lines[index].startswith("WEBVTT"):
        # The header block: "WEBVTT" and its metadata lines, up to an empty line.
        index += 1
        while index < count and lines[index] and "-->" not in lines[index]:
            index += 1
    cues: list[_Cue] = []
    while index < count:
        line = lines[index]
        if "-->" in line:
            timing = index
        elif not line or line.isspace():
            index += 1
            continue
        elif vtt and _is_vtt_block(line):
            while index < count and lines[index]:
                index += 1
            continue
        elif index + 1 < count and "-->" in lines[index + 1]:
            timing = index + 1
        elif _LOOKS_TIMED.match(line):
            raise _at(
                index + 1,
                f"broken timing line {_shown(line)}: expected a start and an end time joined "
                "by -->, such as 00:00:01.000 --> 00:00:04.000",
            )
        elif line.strip().isdigit() and index + 1 < count and lines[index + 1].strip():
            raise _at(
                index + 2,
                f"cue {line.strip()[:12]} has no timing line: expected a line such as "
                f"00:00:01,000 --> 00:00:04,000, found {_shown(lines[index + 1])}",
            )
        elif cues:
            index = _text_lines(lines, index, vtt=vtt, into=cues[-1].lines)
            continue
        else:
            raise _at(
                index + 1,
                "expected a cue, which starts with a timing line such as "
                f"00:00:01.000 --> 00:00:04.000; found {_shown(line)}",
            )
        start, end = _timing(lines[timing], timing + 1)
        cue = _Cue(timing + 1, start, end, [])
        index = _text_lines(lines, timing + 1, vtt=vtt, into=cue.lines)
        cues.append(cue)
    return cues


def _text_lines(lines: list[str], index: int, *, vtt: bool, into: list[str]) -> int:
    """Adds the text lines of a cue from `index` to `into`; the index of the line after."""
    count = len(lines)
    while index < count:
        line = lines[index]
        if not line or "-->" in line or (not vtt and line.isspace()):
            break
        # A cue number right before a timing line starts the next cue, empty line or not.
        if line.strip().isdigit() and index + 1 < count and "-->" in lines[index + 1]:
            break
        into.append(line)
        index += 1
    return index


def _at(line: int, message: str) -> TranscriptError:
    return TranscriptError(f"line {line}: {message}", line=line)


def _timing(line: str, number: int) -> tuple[int, int]:
    """Start and end (ms) of a timing line such as "00:00:01.000 --> 00:00:04.000 align:start"."""
    usual = _USUAL_TIMING.match(line)
    if usual:
        h1, m1, s1, f1, h2, m2, s2, f2 = usual.groups()
        start = ((int(h1 or 0) * 60 + int(m1)) * 60 + int(s1)) * 1000 + int(f1)
        end = ((int(h2 or 0) * 60 + int(m2)) * 60 + int(s2)) * 1000 + int(f2)
        if end >= start and m1 < "6" and s1 < "6" and m2 < "6" and s2 < "6":
            return start, end
    left, _, right = line.partition("-->")
    first = left.strip()
    rest = right.split(None, 1)
    second = rest[0] if rest else ""
    times = []
    for value, which in ((first, "start"), (second, "end")):
        if not value:
            raise _at(number, f"the cue {which} time is missing around -->")
        ms = _time_ms(value)
        if ms is None:
            raise _at(
                number,
                f"broken timestamp {_shown(value)}: expected hours:minutes:seconds.milliseconds "
                "such as 00:01:03.000",
            )
        if ms > MAX_SECONDS * 1000:
            raise _at(number, f"the cue {which} {_shown(value)} is past 100 hours")
        times.append(ms)
    start, end = times
    if end < start:
        raise _at(number, f"cue end {_clock(end)} is before its start {_clock(start)}")
    return start, end


def _caption_pieces(cues: list[_Cue], *, word_timed: bool, voiced: bool) -> list[_Piece]:
    """Pieces of text from the cues, each word said once.

    Checks the cue order. Auto-captions roll: a cue shows again the line or two already
    said above the new one, and YouTube adds a 10 ms cue showing the finished line. Lines
    repeating the end of the cue before are dropped when the cue adds a line, when it is
    such a snapshot, or when the file has word times (auto-captions); a cue only repeating
    the one before otherwise is a repetition said twice and is kept.
    """
    pieces: list[_Piece] = []
    shown: list[str] = []  # the text lines the cue before showed
    before: _Cue | None = None
    for cue in cues:
        lines = [(_caption_plain(raw), raw) for raw in cue.lines]
        lines = [(plain, raw) for plain, raw in lines if plain]
        plain = [text for text, _ in lines]
        repeated = _repeated_lines(shown, lines) if shown and lines else 0
        rolling = repeated > 0 and (
            word_timed or repeated < len(lines) or cue.end - cue.start <= FLASH_MS
        )
        if before is not None and (cue.start < before.start or before.end - cue.start > OVERLAP_MS):
            _check_order(cue, before, overlap_allowed=word_timed or rolling)
        new = lines[repeated:] if rolling else lines
        shown, before = plain, cue
        if not new:
            continue
        piece = _Piece(cue.start, cue.end, " ".join(text for text, _ in new), rolling=rolling)
        if word_timed:
            piece.rolling = True
            joined = " ".join(raw for _, raw in new)
            if _has_word_times(joined):
                piece.chunks = _time_tag_chunks(joined, cue.start)
        if piece.chunks is None:
            piece.lines = [text for text, _ in new]
        if voiced:
            piece.speaker = _voice(cue.lines)
        pieces.append(piece)
    return pieces


def _repeated_lines(shown: list[str], lines: list[tuple[str, str]]) -> int:
    """How many of the first lines repeat the last lines shown before (lines with word
    times are always new: they are the words being said)."""
    if lines[0][0] not in shown:
        return 0
    most = min(len(shown), len(lines), ROLLING_LINES)
    while most and any(_has_word_times(raw) for _, raw in lines[:most]):
        most -= 1
    for size in range(most, 0, -1):
        if shown[-size:] == [text for text, _ in lines[:size]]:
            return size
    return 0


def _check_order(cue: _Cue, before: _Cue, *, overlap_allowed: bool) -> None:
    if cue.start < before.start:
        raise _at(
            cue.line,
            f"the cue starts at {_clock(cue.start)}, before the cue before it "
            f"(line {before.line}, {_clock(before.start)}): cues must be in time order",
        )
    if not overlap_allowed and before.end - cue.start > OVERLAP_MS:
        raise _at(
            cue.line,
            f"the cue starts at {_clock(cue.start)}, {(before.end - cue.start) / 1000:.3f} s "
            f"before the cue before it ends (line {before.line}, {_clock(before.end)}); "
            "cues may overlap by 1 s at most",
        )
