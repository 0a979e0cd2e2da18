"""Transcripts as stored: segments of timed text, with word times where the source has them.

Parsers for WebVTT, SubRip, YouTube's json3 and Whisper-style JSON turn an uploaded file into
`Segment`s; `timed_words` gives the flat list of words that pins are aligned with.
Pure functions: no ORM, no requests.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .durations import format_duration


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


# Parsing uploaded transcript files.
#
# The WebVTT and SubRip cue blocks are read by a line scanner of this module rather than by
# webvtt-py or srt: those libraries do not say on which line a cue is (an editor needs it
# to fix the file), webvtt-py drops a malformed cue without a word, and srt's file regex
# backtracks on runs of spaces or digits (20,000 spaces take 20 s, 2,000 digits more than a
# minute). Every regular expression here is anchored or bounded, so each pass over the
# text is linear.

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
# Characters counted at a time: the count holds one slice's words at once, never the file's.
_COUNT_SLICE = 1 << 16
_SPACE = re.compile(r"\s")


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


def words_written(text: str) -> int:
    """How many words (runs of non-space) the text holds, counted a slice at a time."""
    count, at, size = 0, 0, len(text)
    while at < size:
        # Cut only at a space, so that no word is counted twice.
        space = _SPACE.search(text, min(size, at + _COUNT_SLICE))
        stop = space.start() if space else size
        count += len(text[at:stop].split())
        at = stop
    return count


# Decoding.

_BOMS = (
    # UTF-32 first: its little-endian mark starts like UTF-16's.
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_ENCODING_NAMES = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8",
    "utf-16-le": "UTF-16",
    "utf-16-be": "UTF-16",
    "utf-32-le": "UTF-32",
    "utf-32-be": "UTF-32",
    "cp1252": "Windows-1252 (Western European)",
    "latin-1": "Latin-1 (ISO 8859-1)",
}
# Control characters that no text file holds (tab, line breaks and form feed are allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_SAMPLE = 65_536
_NOT_TEXT = (
    "not a text file: a transcript is text (WebVTT, SubRip or JSON), and this file holds "
    "binary data (is it the video, or an image?)"
)


def _decode(data: bytes) -> tuple[str, str]:
    """The text of the file and the codec used: the one its byte order mark names, UTF-16
    recognised from its zero bytes, else UTF-8, else Windows-1252 or Latin-1."""
    if not data:
        raise TranscriptError("the file is empty")
    for mark, encoding in _BOMS:
        if data.startswith(mark):
            try:
                text = data[len(mark) :].decode(encoding.removesuffix("-sig"))
            except UnicodeDecodeError:
                raise TranscriptError(
                    f"the file starts with the mark of {_ENCODING_NAMES[encoding]} text but "
                    "its bytes are not " + _ENCODING_NAMES[encoding]
                ) from None
            return _text_only(text), encoding
    utf16 = _utf16_without_mark(data)
    if utf16:
        try:
            return _text_only(data.decode(utf16)), utf16
        except UnicodeDecodeError:
            raise TranscriptError(_NOT_TEXT) from None
    if b"\x00" in data:
        raise TranscriptError(_NOT_TEXT)
    try:
        return _text_only(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return _text_only(data.decode("cp1252")), "cp1252"
    except UnicodeDecodeError:
        # Five bytes have no character in Windows-1252; Latin-1 has one for every byte.
        return _text_only(data.decode("latin-1")), "latin-1"


def _utf16_without_mark(data: bytes) -> str:
    """ "utf-16-le" or "utf-16-be" when the file looks like UTF-16 without a byte order mark:
    the ASCII characters of a transcript (digits, colons, Latin letters) leave a zero byte
    in every other place. "" otherwise."""
    sample = data[:4096]
    pairs = len(sample) // 2
    if pairs < 2:
        return ""
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd >= pairs / 4 and even * 4 <= odd:
        return "utf-16-le"
    if even >= pairs / 4 and odd * 4 <= even:
        return "utf-16-be"
    return ""


def _text_only(text: str) -> str:
    sample = text[:_SAMPLE]
    if "\x00" in text or len(_CONTROL.findall(sample)) > max(1, len(sample) // 100):
        raise TranscriptError(_NOT_TEXT)
    return text.removeprefix("\ufeff")


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


def _clock(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


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


def _shown(value: object) -> str:
    """A value quoted for a message, shortened."""
    if isinstance(value, str):
        return repr(value[:40] + "…") if len(value) > 40 else repr(value)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)[:40]
    return "a list" if isinstance(value, list) else "an object"


# WebVTT and SubRip.


@dataclass(slots=True)
class _Cue:
    line: int  # the line of its timing line, counted from 1
    start: int  # milliseconds
    end: int
    lines: list[str]  # its text lines as written


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


# Markup of cue text: tags (<i>, <c.colour>, <v Name>, <00:00:01.000>) and SubRip's
# {\an8} position codes. A tag is "<" to the nearest ">" with no "<" between, so a stray
# "<" costs one scan to the next bracket, not one to the end of the line.
_TAG = re.compile(r"<[^<>]*>|\{\\[^{}]*\}")
_WORD_TIME = re.compile(r"<(?:(\d{1,6}):)?(\d{1,2}):(\d{1,2})\.(\d{1,3})>")
_VOICE = re.compile(r"<v(?:\.[^\s<>]*)?[ \t]([^<>]*)>")
_LONG_REFERENCE = re.compile(r"&#(?=[0-9]{8})")
_SPEAKER_CHANGE = ">>"


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


# Speaker labels of caption files. A cue's text may start a new speaker's turn with ">>"
# (YouTube's mark, anywhere in a line) or with a dialogue dash at the start of a line
# ("- Ready?" / "- Yes."), and name the speaker with "NAME: ", "[Name] " or "[NAME]: ".
# A name is up to four words, each starting with a capital ("Jo", "Dr. Smith", "ANNA"),
# or "Speaker 2". Written after a turn mark it is a speaker at once; at the start of a cue
# only when the same name starts two turns or more ("Step One: …" once is a sentence).
# Sound notes ("[Music]", "[laughs]") are never names and stay in the text.
_LABEL = re.compile(r"([^\W\d_][^:,;!?\n]{0,39}?):\s+(?=\S)")
_BRACKET_LABEL = re.compile(r"\[([^\W\d_][^\[\]:,;!?\n]{0,39})\]:?\s+(?=\S)")
_NUMBERED_SPEAKER = re.compile(r"speaker[ _-]?[0-9a-z]{1,3}", re.IGNORECASE)
_NAME_WORD = re.compile(r"[^\W\d_][\w.'’-]*")
_DASH = re.compile(r"-(?:\s+|(?=[^\W\d_]))(?=\S)")
_COUNTING = frozenset(
    "one two three four five six seven eight nine ten eleven twelve first second third "
    "fourth fifth sixth seventh eighth ninth tenth next last finally step point number "
    "part question".split()
)
# Words that open a sentence before a colon, never a name: "Mine: …", "So: …".
_NOT_NAMES = frozenset(
    "i me my mine you your yours we us our ours they them their theirs he him his she her "
    "hers it its this that these those here there so well okay now yes no and but or then "
    "answer note update correction".split()
)
_SOUND_NOTES = frozenset(
    "music applause laughter laughs laughing laugh chuckles chuckling inaudible crosstalk "
    "silence cheering cheers clapping sighs sigh coughs cough noise foreign unintelligible "
    "indistinct pause groans bleep beep static sound audio blank_audio no_audio".split()
)


def _is_name(label: str) -> bool:
    words = label.split()
    if not 1 <= len(words) <= 4 or "http" in label.lower():
        return False
    if _NUMBERED_SPEAKER.fullmatch(label):
        return True
    if any(word.casefold().strip(".") in _SOUND_NOTES for word in words):
        return False
    if words[0].casefold() in _COUNTING or (len(words) == 1 and label.casefold() in _NOT_NAMES):
        return False  # an item of a list said aloud: "Five: AI agents…"
    if any(word.endswith(".") and len(word) > 4 for word in words):
        return False  # a full stop after a whole word ends a sentence: "Pass. Two:"
    return all(_NAME_WORD.fullmatch(word) and word[0].isupper() for word in words)


def _label(text: str) -> tuple[str, str]:
    """(name, the text after it) of a turn starting with a speaker label, else ("", text)."""
    match = _BRACKET_LABEL.match(text) if text.startswith("[") else _LABEL.match(text)
    if match and _is_name(match.group(1).strip()):
        return " ".join(match.group(1).split()), text[match.end() :]
    return "", text


@dataclass(slots=True)
class _Turn:
    text: str
    turn: bool  # started by a turn mark
    speaker: str = ""


def _turns_of(lines: list[str]) -> list[_Turn]:
    """The cue's text cut at its turn marks: a dialogue dash starting a line, ">>"."""
    turns: list[_Turn] = []
    for line in lines:
        dash = _DASH.match(line)
        if dash:
            turns.append(_Turn(line[dash.end() :], True))
            line = ""
        elif not turns:
            turns.append(_Turn("", False))
        pieces = line.split(_SPEAKER_CHANGE) if _SPEAKER_CHANGE in line else [line]
        if dash and _SPEAKER_CHANGE in turns[-1].text:
            pieces = turns[-1].text.split(_SPEAKER_CHANGE)
            turns[-1].text = ""
        turns[-1].text = " ".join((turns[-1].text + " " + pieces[0]).split())
        turns.extend(_Turn(" ".join(piece.split()), True) for piece in pieces[1:])
    return [turn for turn in turns if turn.text or turn.turn]


def _speaker_turns(pieces: list[_Piece], *, labelled: bool) -> list[_Piece]:
    """The pieces cut at their speakers' turns, labels taken out of the text as speakers
    (when `labelled`: the file has no voice tags). A cue holding several turns shares its
    time among them in proportion to their length."""
    cut = [_turns_of(piece.lines) if piece.lines is not None else None for piece in pieces]
    if labelled:
        _name_turns([turn for turns in cut if turns for turn in turns])
    result: list[_Piece] = []
    for index, (piece, turns) in enumerate(zip(pieces, cut, strict=True)):
        if turns is None:
            result.append(piece)
            continue
        turns = [turn for turn in turns if turn.text]
        if len(turns) == 1 and not turns[0].turn and not turns[0].speaker:
            piece.text = turns[0].text
            result.append(piece)
            continue
        end = piece.end
        if index + 1 < len(pieces) and pieces[index + 1].rolling:
            end = max(piece.start, min(end, pieces[index + 1].start))
        result.extend(_turn_pieces(piece, turns, end))
    return result


def _name_turns(turns: list[_Turn]) -> None:
    found = [_label(turn.text) for turn in turns]
    counts: dict[str, int] = {}
    for name, _ in found:
        if name:
            counts[name] = counts.get(name, 0) + 1
    for turn, (name, rest) in zip(turns, found, strict=True):
        if name and (turn.turn or counts[name] >= 2):
            turn.speaker, turn.text = name, " ".join(rest.split())


def _turn_pieces(piece: _Piece, turns: list[_Turn], end: int) -> list[_Piece]:
    total = sum(len(turn.text) + 1 for turn in turns)
    span, offset = end - piece.start, 0
    pieces = []
    for number, turn in enumerate(turns):
        start = piece.start + round(span * offset / total)
        offset += len(turn.text) + 1
        last = number == len(turns) - 1
        stop = piece.end if last else piece.start + round(span * offset / total)
        speaker = turn.speaker or piece.speaker
        pieces.append(
            _Piece(
                start,
                stop,
                turn.text,
                speaker=speaker,
                rolling=piece.rolling and not number,
                turn=turn.turn,
            )
        )
    return pieces


# Segments and their words.


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


def _chunk_words(
    chunks: list[tuple[int | None, str]],
    start: int,
    end: int,
    tokens: Callable[[str], list[str]],
) -> list[Word]:
    """Words of text chunks, each chunk from its start (kept in order, inside start..end)
    to the next chunk's; a chunk without a time is part of the one before."""
    timed: list[tuple[int, list[str]]] = []
    at = start
    for chunk_start, text in chunks:
        if chunk_start is not None:
            at = min(max(chunk_start, at), end)
        found = tokens(text)
        if not found:
            continue
        if timed and (chunk_start is None or timed[-1][0] == at):
            timed[-1][1].extend(found)
        else:
            timed.append((at, found))
    words: list[Word] = []
    for index, (chunk_start, found) in enumerate(timed):
        chunk_end = timed[index + 1][0] if index + 1 < len(timed) else end
        words.extend(_spread_ms(found, chunk_start, chunk_end))
    return words


def _spread_ms(tokens: list[str], start: int, end: int) -> list[Word]:
    """Words sharing start..end (ms) in proportion to their length, as `timed_words` does.
    A ">>" takes no time: it is kept, at the start of the word after it."""
    if _SPEAKER_CHANGE in tokens:
        return _spread_marked(tokens, start, end)
    if len(tokens) == 1:
        return [Word(start / 1000, end / 1000, tokens[0])]
    total = sum(len(token) + 1 for token in tokens)
    span = end - start
    words, offset = [], 0
    for token in tokens:
        word_start = start + round(span * offset / total)
        offset += len(token) + 1
        words.append(Word(word_start / 1000, (start + round(span * offset / total)) / 1000, token))
    return words


def _spread_marked(tokens: list[str], start: int, end: int) -> list[Word]:
    said = [token for token in tokens if token != _SPEAKER_CHANGE]
    timed = iter(_spread_ms(said, start, end) if said else [])
    words: list[Word] = []
    marks = 0
    for token in tokens:
        if token == _SPEAKER_CHANGE:
            marks += 1
            continue
        word = next(timed)
        words.extend([Word(word.start, word.start, _SPEAKER_CHANGE)] * marks)
        words.append(word)
        marks = 0
    words.extend([Word(end / 1000, end / 1000, _SPEAKER_CHANGE)] * marks)
    return words


def _gap_warnings(segments: list[Segment]) -> list[str]:
    """A warning for each stretch of GAP_S or more between one cue's end and the next
    one's start (the first GAPS_NAMED by their times, the rest counted)."""
    gaps: list[tuple[float, float]] = []
    said_until = None
    for segment in segments:
        if said_until is not None and segment.start - said_until >= GAP_S:
            gaps.append((said_until, segment.start))
        said_until = segment.end if said_until is None else max(said_until, segment.end)
    warnings = [
        f"no words between {format_duration(int(start))} and {format_duration(int(end))}: "
        "is part of the transcript missing?"
        for start, end in gaps[:GAPS_NAMED]
    ]
    if len(gaps) > GAPS_NAMED:
        more = len(gaps) - GAPS_NAMED
        warnings.append(
            f"{more:,} more gap{'s' * (more > 1)} of {GAP_S / 60:.0f} minutes or more without "
            f"words, the last up to {format_duration(int(gaps[-1][1]))}"
        )
    return warnings


def _duration_warnings(segments: list[Segment], duration: float) -> list[str]:
    """A warning when the transcript runs well past the video's `duration`, or when its
    last words end well before it (a file cut short)."""
    if not segments or not math.isfinite(duration) or duration < 0:
        return []
    last = max(segment.end for segment in segments)
    if last < COVERAGE_SHARE * duration and duration - last >= COVERAGE_SLACK_S:
        share = math.floor(100 * last / duration)
        return [
            f"the transcript ends at {format_duration(int(last))} of a "
            f"{format_duration(int(duration))} video ({share} %): it may be cut short"
        ]
    slack = max(DURATION_SLACK_S, DURATION_SLACK_SHARE * duration)
    if last <= duration + slack:
        return []
    return [
        f"the transcript runs to {_clock(round(last * 1000))}, {last - duration:.0f} s past "
        f"the end of the video ({_clock(round(duration * 1000))}): is it the transcript of "
        "this video?"
    ]


# JSON: YouTube json3 and Whisper.


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


def _items(value: object, name: str) -> list[object]:
    if not isinstance(value, list):
        raise TranscriptError(f'"{name}" is {_shown(value)}, not a list')
    if len(value) > MAX_CUES:
        raise TranscriptError(
            f"the file has {len(value):,} {name}, more than the {MAX_CUES:,} a transcript may have"
        )
    return value


def _object(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise TranscriptError(f"{where}: {_shown(value)}, not an object")
    return value


def _ms(value: object, where: str, key: str, *, scale: int) -> int:
    """A time of a JSON transcript in milliseconds (`scale` 1 for milliseconds, 1000 for
    seconds); an error naming where, for anything but a number from 0 to 100 hours."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TranscriptError(f'{where}: "{key}" is {_shown(value)}, not a number')
    if not 0 <= value <= MAX_SECONDS * 1000 / scale:
        raise TranscriptError(f'{where}: "{key}" is {_shown(value)}, not a time in a video')
    return round(value * scale)


def _json_tokens(text: str) -> list[str]:
    return text.split()


def _check_json_order(
    start: int, before: tuple[str, int, int] | None, where: str, *, overlap_allowed: bool
) -> None:
    if before is None:
        return
    name, before_start, before_end = before
    if start < before_start:
        raise TranscriptError(
            f"{where} starts at {_clock(start)}, before {name} ({_clock(before_start)}): "
            "they must be in time order"
        )
    if not overlap_allowed and before_end - start > OVERLAP_MS:
        raise TranscriptError(
            f"{where} starts at {_clock(start)}, {(before_end - start) / 1000:.3f} s before "
            f"{name} ends ({_clock(before_end)}); they may overlap by 1 s at most"
        )


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
