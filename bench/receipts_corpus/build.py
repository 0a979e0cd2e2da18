"""Build the receipts corpus: each talk rendered as the four transcript files an editor
imports, with its statements ready for `manage.py receipts_eval` and their labels.

    .venv/bin/python bench/receipts_corpus/build.py OUT_DIR            # every talk here
    .venv/bin/python bench/receipts_corpus/build.py OUT_DIR chips agents

For a talk `NAME.talk` and its statements `NAME.claims.jsonl` (the format is in README.md)
it writes into OUT_DIR:

- `NAME.vtt`: YouTube auto-captions (lowercase, no punctuation, rolling two-line cues with
  `<00:00:01.234><c> word</c>` word times and the 10 ms cue showing a finished line);
- `NAME.srt`: human captions (punctuation kept, at most two lines a cue, a speaker label
  where the speaker changes, in one style a talk: `NAME:`, `>> `, `- ` or `[Name] `);
- `NAME.json3`: YouTube's json3 timed text of the same lines (`segs` with `tOffsetMs`);
- `NAME.whisper.json`: Whisper-style segments a sentence each, with punctuation, `speaker`
  and `words` (start and end of each);
- `NAME.claims.jsonl`: the statements as receipts_eval reads them (id, kind, text, time,
  title), `time` being where the anchor's first word is said plus the statement's offset;
- `NAME.labels.json`: id -> category, subtype, expected verdict, said_at.

Every word is timed by a pace model seeded by the talk's name, so the same talk gives the
same bytes: about 150 words a minute, each speaker at a pace of their own, longer words
taking longer, a little jitter, a breath after commas and sentences, 0.4-1.5 s between
paragraphs and the `[pause N]` silences. Each rendered file is read back with the project's
`parse_transcript` and must give the talk's words (case and punctuation aside) at their
times (within 0.05 s, in the formats that carry word times); a statement whose anchor is
missing or said more than once stops the build with its id.

Needs only the standard library and `summaries.text.transcripts` (no Django settings).
"""

from __future__ import annotations

import json
import random
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from summaries.text.transcripts import parse_transcript, timed_words  # noqa: E402

FORMATS = ("vtt", "srt", "json3", "whisper")
SUFFIXES = {"vtt": ".vtt", "srt": ".srt", "json3": ".json3", "whisper": ".whisper.json"}
KINDS = ("key_point", "takeaway", "caveat", "chapter", "quote")
CATEGORIES = {
    "quote_exact": {"verbatim"},
    "quote_typographic": {"verbatim"},
    "quote_number_words": {"verbatim"},
    "quote_fillers": {"verbatim"},
    "paraphrase": {"paraphrase"},
    "paraphrase_negation_moved": {"paraphrase"},
    "invented": {"not_found"},
    "negation_flipped": {"contradicted"},
    "number_changed": {"contradicted"},
    "unit_changed": {"contradicted"},
    "name_changed": {"contradicted"},
    "number_in_name": {"paraphrase", "verbatim"},
    "chapter_correct": {"verbatim", "paraphrase"},
    "chapter_mistimed": {"mis_timed"},
    "point_mistimed": {"mis_timed"},
}
SRT_STYLES = ("name", "chevrons", "dash", "brackets")
FILLERS = {"um", "uh", "er", "erm"}
# Word times a rendered file gives must be this close to the pace model's.
TIME_SLACK = 0.05

# The pace model.
WORDS_A_MINUTE = 150.0
SPEAKER_PACE = (0.88, 1.12)  # a speaker's seconds a word, relative to the average
JITTER = 0.08  # each word's length varies by up to this share
COMMA_BREATH = 0.15  # seconds after a word ending in , ; :
SENTENCE_BREATH = 0.3  # seconds after a word ending a sentence
PARAGRAPH_GAP = (0.4, 1.5)
FIRST_WORD_AT = 0.6
# A talk too long for its video at this pace is spoken faster, up to this much.
MAX_SPEEDUP = 1.2
END_MARGIN = 2.0  # seconds of the video after the last word, at least
# A caption line of the auto-captions: this many words, or up to a paragraph's end.
CAPTION_LINE_WORDS = (5, 9)
SRT_LINE_CHARS = 42

_HEADER = re.compile(r"#\s*(\w+)\s*:\s*(.*)")
_PAUSE = re.compile(r"\[pause\s+(\d+(?:\.\d+)?)\]", re.IGNORECASE)
_PARAGRAPH = re.compile(r"([^:\[\]]{1,60}?):\s+(\S.*)")
# A dash between words is its own token, spoken as nothing.
_DASH = re.compile(r"\s*([—–])\s*")
_NOT_WORD = re.compile(r"\W+")


class CorpusError(ValueError):
    """A talk or statement the builder cannot use; the message names it."""


@dataclass(frozen=True)
class Paragraph:
    speaker: str
    text: str
    pause: float  # seconds of silence before it (a `[pause N]` line)
    line: int


@dataclass(frozen=True)
class Talk:
    name: str
    title: str
    speakers: tuple[str, ...]
    video_seconds: float
    paragraphs: tuple[Paragraph, ...]


@dataclass(frozen=True)
class TimedWord:
    start: float
    end: float
    text: str  # as written in the talk, punctuation included
    paragraph: int
    speaker: str


@dataclass
class Built:
    talk: Talk
    words: list[TimedWord]
    files: dict[str, bytes] = field(default_factory=dict)
    claims: list[dict] = field(default_factory=list)
    labels: dict[str, dict] = field(default_factory=dict)
    srt_style: str = ""
    # Where a rendered file, read back with parse_transcript, differs from the talk.
    problems: list[str] = field(default_factory=list)


# --- Reading talks -----------------------------------------------------------------------


def read_talk(path: Path) -> Talk:
    """A `.talk` file: `# key: value` headers, then a paragraph a line ("Name: text") and
    `[pause N]` lines."""
    headers: dict[str, str] = {}
    paragraphs: list[Paragraph] = []
    pause = 0.0
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            match = _HEADER.fullmatch(line)
            if not match:
                raise CorpusError(f"{path.name}:{number}: a header is '# key: value'")
            headers[match.group(1).lower()] = match.group(2).strip()
            continue
        pause_match = _PAUSE.fullmatch(line)
        if pause_match:
            pause += float(pause_match.group(1))
            continue
        match = _PARAGRAPH.fullmatch(line)
        if not match:
            raise CorpusError(f"{path.name}:{number}: expected 'Speaker Name: text'")
        paragraphs.append(Paragraph(match.group(1).strip(), match.group(2).strip(), pause, number))
        pause = 0.0
    for key in ("title", "speakers", "video_seconds"):
        if key not in headers:
            raise CorpusError(f"{path.name}: the header '# {key}:' is missing")
    speakers = tuple(re.sub(r"\s*\(.*?\)", "", s).strip() for s in headers["speakers"].split(","))
    for paragraph in paragraphs:
        if paragraph.speaker not in speakers:
            raise CorpusError(
                f"{path.name}:{paragraph.line}: {paragraph.speaker!r} is not in '# speakers:'"
            )
    if not paragraphs:
        raise CorpusError(f"{path.name}: no paragraph")
    return Talk(
        path.stem, headers["title"], speakers, float(headers["video_seconds"]), tuple(paragraphs)
    )


def tokens_of(text: str) -> list[str]:
    """The words of a paragraph as written: split at spaces and dashes, a dash staying with
    the word before it; a token with no letter or digit is not a word."""
    text = _DASH.sub(lambda m: m.group(1) + " ", text)
    tokens: list[str] = []
    for token in text.split():
        if any(c.isalnum() for c in token):
            tokens.append(token)
        elif tokens:
            tokens[-1] += token
    return tokens


def plain(token: str) -> str:
    """A word as the auto-captions write it: lowercase, no punctuation around it."""
    token = token.lower().replace("’", "'").replace("‘", "'")
    token = token.replace("“", "").replace("”", "").replace('"', "")
    token = re.sub(r"^[^\w$£€#@]+", "", token)
    return re.sub(r"[^\w%]+$", "", token)


def key(token: str) -> str:
    """A word as words are compared: lowercase letters and digits only."""
    return _NOT_WORD.sub("", token.lower().replace("’", "'")).replace("_", "")


# --- Timing ------------------------------------------------------------------------------


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def time_words(talk: Talk) -> list[TimedWord]:
    """Every word of the talk with its start and end (seconds), from the pace model."""
    rng = random.Random(seed_of(talk.name))
    seconds_a_word = 60.0 / WORDS_A_MINUTE
    pace = {speaker: rng.uniform(*SPEAKER_PACE) for speaker in talk.speakers}
    words: list[TimedWord] = []
    now = FIRST_WORD_AT
    for index, paragraph in enumerate(talk.paragraphs):
        if index:
            now += rng.uniform(*PARAGRAPH_GAP)
        now += paragraph.pause
        for token in tokens_of(paragraph.text):
            letters = sum(c.isalnum() for c in token)
            length = seconds_a_word * pace[paragraph.speaker] * (0.55 + 0.09 * letters)
            length *= 1 + rng.uniform(-JITTER, JITTER)
            length = max(length, 0.14)
            start = round(now, 3)
            end = round(now + length * 0.88, 3)
            words.append(TimedWord(start, end, token, index, paragraph.speaker))
            now += length
            if token[-1] in ".?!":
                now += SENTENCE_BREATH
            elif token[-1] in ",;:—–":
                now += COMMA_BREATH
    return _fitted(talk, words)


def _fitted(talk: Talk, words: list[TimedWord]) -> list[TimedWord]:
    """The words sped up evenly to end before the video does, when the model's pace runs
    past it; a talk that would need more than MAX_SPEEDUP is refused."""
    last, room = words[-1].end, talk.video_seconds - END_MARGIN
    if last <= room:
        return words
    factor = room / last
    if factor < 1 / MAX_SPEEDUP:
        raise CorpusError(
            f"{talk.name}: the talk takes {last:.0f} s at the model's pace, too long for its "
            f"video_seconds ({talk.video_seconds:.0f})"
        )
    return [
        TimedWord(
            round(w.start * factor, 3), round(w.end * factor, 3), w.text, w.paragraph, w.speaker
        )
        for w in words
    ]


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _clock(seconds: float, comma: bool = False) -> str:
    ms = _ms(seconds)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    whole, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{whole:02d}{',' if comma else '.'}{millis:03d}"


# --- Auto-caption lines (VTT and json3) --------------------------------------------------


@dataclass(frozen=True)
class CaptionLine:
    words: tuple[TimedWord, ...]
    end: float  # when the next line starts (or the last word ends)
    marker: bool  # the speaker changes here (">>")


def caption_lines(talk: Talk, words: list[TimedWord]) -> list[CaptionLine]:
    """The talk cut into lines of 5-9 words (a paragraph ends a line), as the automatic
    captions show them."""
    rng = random.Random(seed_of(talk.name) + 1)
    groups: list[list[TimedWord]] = []
    current: list[TimedWord] = []
    size = rng.randint(*CAPTION_LINE_WORDS)
    for word in words:
        if current and (len(current) >= size or word.paragraph != current[-1].paragraph):
            groups.append(current)
            current, size = [], rng.randint(*CAPTION_LINE_WORDS)
        current.append(word)
    groups.append(current)
    lines = []
    for index, group in enumerate(groups):
        following = groups[index + 1][0].start if index + 1 < len(groups) else None
        end = group[-1].end + 0.5 if following is None else min(following, group[-1].end + 2.0)
        speaker_before = groups[index - 1][-1].speaker if index else group[0].speaker
        marker = index > 0 and group[0].speaker != speaker_before
        lines.append(CaptionLine(tuple(group), round(end, 3), marker))
    return lines


def _line_plain(line: CaptionLine) -> str:
    text = " ".join(plain(word.text) for word in line.words)
    return f"&gt;&gt; {text}" if line.marker else text


def _line_tagged(line: CaptionLine) -> str:
    first, *rest = line.words
    head = plain(first.text)
    text = (f"&gt;&gt; {head}" if line.marker else head) + "".join(
        f"<{_clock(word.start)}><c> {plain(word.text)}</c>" for word in rest
    )
    return text


def render_vtt(talk: Talk, words: list[TimedWord]) -> bytes:
    """YouTube auto-captions: each line a cue showing the line before above it with its word
    times, ended by a 10 ms cue showing the finished line alone."""
    out = ["WEBVTT", "Kind: captions", "Language: en", ""]
    previous = " "
    settings = "align:start position:0%"
    for line in caption_lines(talk, words):
        start, flash = line.words[0].start, line.end - 0.010
        out += [f"{_clock(start)} --> {_clock(flash)} {settings}", previous, _line_tagged(line), ""]
        out += [f"{_clock(flash)} --> {_clock(line.end)} {settings}", _line_plain(line), " ", ""]
        previous = _line_plain(line)
    return "\n".join(out).encode()


def render_json3(talk: Talk, words: list[TimedWord]) -> bytes:
    """YouTube json3: a window event, then an event a line whose segments carry the word
    offsets, shown until the line after it ends, and an appended line-break event."""
    lines = caption_lines(talk, words)
    events: list[dict] = [
        {"tStartMs": 0, "dDurationMs": _ms(lines[-1].end), "id": 1, "wpWinPosId": 1}
    ]
    for number, line in enumerate(lines):
        start = _ms(line.words[0].start)
        shown_until = _ms(lines[min(number + 1, len(lines) - 1)].end)
        segs: list[dict] = []
        for index, word in enumerate(line.words):
            text = plain(word.text) if index == 0 else " " + plain(word.text)
            if index == 0 and line.marker:
                text = ">> " + text
            seg: dict = {"utf8": text}
            if index:
                seg["tOffsetMs"] = _ms(word.start) - start
            seg["acAsrConf"] = 0
            segs.append(seg)
        events.append(
            {"tStartMs": start, "dDurationMs": shown_until - start, "wWinId": 1, "segs": segs}
        )
        events.append(
            {"tStartMs": _ms(line.end) - 10, "wWinId": 1, "aAppend": 1, "segs": [{"utf8": "\n"}]}
        )
    document = {"wireMagic": "pb3", "pens": [{}], "wsWinStyles": [{}], "events": events}
    return json.dumps(document, separators=(",", ":")).encode()


# --- Human captions (SRT) ----------------------------------------------------------------


def srt_style(talk: Talk) -> str:
    return SRT_STYLES[seed_of(talk.name) % len(SRT_STYLES)]


def speaker_label(style: str, speaker: str) -> str:
    if style == "name":
        return speaker.split()[-1].upper() + ":"
    if style == "chevrons":
        return ">>"
    if style == "dash":
        return "-"
    return f"[{speaker.split()[0]}]"


def srt_cues(words: list[TimedWord]) -> list[list[TimedWord]]:
    """Cues of at most two lines of about 42 characters, ending at a sentence where one
    ends near the limit, and always at a paragraph's end."""
    cues: list[list[TimedWord]] = []
    current: list[TimedWord] = []
    for word in words:
        if current and word.paragraph != current[-1].paragraph:
            cues.append(current)
            current = []
        length = sum(len(w.text) + 1 for w in current) + len(word.text)
        if current and length > 2 * SRT_LINE_CHARS - 6:
            cues.append(current)
            current = []
        current.append(word)
        if current[-1].text[-1] in ".?!" and len(current) >= 6:
            cues.append(current)
            current = []
    if current:
        cues.append(current)
    return cues


def _two_lines(text: list[str]) -> list[str]:
    """Words broken into at most two lines, the first up to SRT_LINE_CHARS."""
    first: list[str] = []
    for index, token in enumerate(text):
        if first and len(" ".join([*first, token])) > SRT_LINE_CHARS:
            return [" ".join(first), " ".join(text[index:])]
        first.append(token)
    return [" ".join(first)]


def render_srt(talk: Talk, words: list[TimedWord], style: str) -> bytes:
    out: list[str] = []
    speaker = ""
    for number, cue in enumerate(srt_cues(words), start=1):
        tokens = [word.text for word in cue]
        if cue[0].speaker != speaker:
            tokens = [speaker_label(style, cue[0].speaker), *tokens]
            speaker = cue[0].speaker
        out += [str(number), f"{_clock(cue[0].start, True)} --> {_clock(cue[-1].end, True)}"]
        out += [*_two_lines(tokens), ""]
    return "\n".join(out).encode()


# --- Whisper ------------------------------------------------------------------------------


def render_whisper(talk: Talk, words: list[TimedWord]) -> bytes:
    """Whisper-style JSON: a segment a sentence (at most 30 words), with its speaker and
    the words' times."""
    segments: list[list[TimedWord]] = []
    current: list[TimedWord] = []
    for word in words:
        if current and (word.paragraph != current[-1].paragraph or len(current) >= 30):
            segments.append(current)
            current = []
        current.append(word)
        if word.text[-1] in ".?!":
            segments.append(current)
            current = []
    if current:
        segments.append(current)
    document = {
        "language": "en",
        "segments": [
            {
                "id": index,
                "start": segment[0].start,
                "end": segment[-1].end,
                "text": " " + " ".join(word.text for word in segment),
                "speaker": segment[0].speaker,
                "words": [
                    {"word": " " + w.text, "start": w.start, "end": w.end, "probability": 0.9}
                    for w in segment
                ],
            }
            for index, segment in enumerate(segments)
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=1).encode()


# --- Reading the files back ----------------------------------------------------------------


def check_file(built: Built, fmt: str) -> list[str]:
    """Parse the rendered file as the project does; its words must be the talk's (case and
    punctuation aside, SRT speaker labels the parser leaves in the text skipped) and, where
    the format times words, within TIME_SLACK of the model's times. Returns what differs
    (empty when nothing does)."""
    name = f"{built.talk.name}{SUFFIXES[fmt]}"
    parsed = parse_transcript(built.files[fmt], filename=name, duration=built.talk.video_seconds)
    if parsed.format != fmt:
        raise CorpusError(f"{name}: read as {parsed.format}, not {fmt}")
    labels = {key(speaker_label(built.srt_style, s)) for s in built.talk.speakers}
    got = []
    for segment in parsed.segments:
        seg_words = timed_words([segment])
        if fmt == "srt" and seg_words:
            # A label the parser did not take as a speaker starts the cue's text.
            while seg_words and key(seg_words[0].text) in labels | {""}:
                seg_words = seg_words[1:]
        got.extend(w for w in seg_words if key(w.text))
    want = built.words
    if [key(w.text) for w in got] != [key(w.text) for w in want]:
        for index, (a, b) in enumerate(zip(got, want, strict=False)):
            if key(a.text) != key(b.text):
                return [
                    f"{name}: word {index} (at {b.start:.1f} s) reads {a.text!r}, "
                    f"the talk says {b.text!r}"
                ]
        return [f"{name}: {len(got)} words read, the talk has {len(want)}"]
    if fmt == "srt":
        return []
    late = [
        f"{name}: word {index} {b.text!r} starts at {a.start:.3f} s, the model says {b.start:.3f} s"
        for index, (a, b) in enumerate(zip(got, want, strict=True))
        if abs(a.start - b.start) > TIME_SLACK
    ]
    return late[:1]


# --- Statements ----------------------------------------------------------------------------


def _spoken_keys(words: list[TimedWord]) -> list[tuple[str, int]]:
    """The talk's words as anchors are matched: (key, index of the word), fillers left
    out ("um", "uh", "er" and "you know")."""
    keys = [key(word.text) for word in words]
    found: list[tuple[str, int]] = []
    index = 0
    while index < len(keys):
        if keys[index] in FILLERS or not keys[index]:
            index += 1
        elif keys[index] == "you" and index + 1 < len(keys) and keys[index + 1] == "know":
            index += 2
        else:
            found.append((keys[index], index))
            index += 1
    return found


def _anchor_keys(anchor: str) -> list[str]:
    keys = [key(token) for token in tokens_of(anchor)]
    keys = [k for k in keys if k and k not in FILLERS]
    out: list[str] = []
    index = 0
    while index < len(keys):
        if keys[index] == "you" and index + 1 < len(keys) and keys[index + 1] == "know":
            index += 2
            continue
        out.append(keys[index])
        index += 1
    return out


def anchor_time(anchor: str, words: list[TimedWord], spoken: list[tuple[str, int]], where: str):
    wanted = _anchor_keys(anchor)
    if not wanted:
        raise CorpusError(f"{where}: the anchor {anchor!r} has no words")
    sequence = [k for k, _ in spoken]
    size = len(wanted)
    places = [
        i
        for i in range(len(sequence) - size + 1)
        if sequence[i] == wanted[0] and sequence[i : i + size] == wanted
    ]
    if not places:
        raise CorpusError(f"{where}: the anchor {anchor!r} is not in the talk")
    if len(places) > 1:
        times = ", ".join(f"{words[spoken[p][1]].start:.1f} s" for p in places)
        raise CorpusError(f"{where}: the anchor {anchor!r} is said {len(places)} times ({times})")
    return words[spoken[places[0]][1]].start


def read_statements(path: Path, words: list[TimedWord]) -> tuple[list[dict], dict[str, dict]]:
    spoken = _spoken_keys(words)
    claims: list[dict] = []
    labels: dict[str, dict] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as error:
            raise CorpusError(f"{where}: not JSON ({error.msg})") from None
        ident = item.get("id")
        where = f"{where} ({ident})"
        for name in ("id", "kind", "category", "expected", "text"):
            if not isinstance(item.get(name), str) or not item[name].strip():
                raise CorpusError(f"{where}: {name!r} is missing")
        if ident in labels:
            raise CorpusError(f"{where}: the id is used twice")
        if item["kind"] not in KINDS:
            raise CorpusError(f"{where}: kind {item['kind']!r} is not one of {', '.join(KINDS)}")
        allowed = CATEGORIES.get(item["category"])
        if allowed is None:
            raise CorpusError(f"{where}: category {item['category']!r} is unknown")
        if item["expected"] not in allowed:
            raise CorpusError(f"{where}: {item['category']} expects {' or '.join(allowed)}")
        anchor, offset = item.get("anchor"), item.get("offset")
        said_at = None
        if anchor is None:
            if item["category"] != "invented":
                raise CorpusError(f"{where}: only an invented statement has no anchor")
        else:
            said_at = anchor_time(anchor, words, spoken, where)
        time = None
        if offset is not None:
            if said_at is None:
                raise CorpusError(f"{where}: an offset needs an anchor")
            time = max(0, round(said_at + float(offset)))
        claim = {"id": ident, "kind": item["kind"], "text": item["text"], "time": time}
        if item["kind"] == "chapter":
            claim["title"] = item.get("title") or item["text"][:60]
        claims.append(claim)
        labels[ident] = {
            "category": item["category"],
            "subtype": item.get("subtype"),
            "expected": item["expected"],
            "said_at": said_at,
            "kind": item["kind"],
            "offset": offset,
            "text": item["text"],
        }
    return claims, labels


# --- Building -------------------------------------------------------------------------------


def build_talk(path: Path, *, check: bool = True) -> Built:
    """A talk rendered in every format, with its statements and labels (nothing written)."""
    talk = read_talk(path)
    words = time_words(talk)
    built = Built(talk, words, srt_style=srt_style(talk))
    built.files = {
        "vtt": render_vtt(talk, words),
        "srt": render_srt(talk, words, built.srt_style),
        "json3": render_json3(talk, words),
        "whisper": render_whisper(talk, words),
    }
    if check:
        for fmt in FORMATS:
            built.problems.extend(check_file(built, fmt))
    claims_path = path.with_suffix(".claims.jsonl")
    if claims_path.exists():
        built.claims, built.labels = read_statements(claims_path, words)
    return built


def talk_paths(names: list[str] | None = None) -> list[Path]:
    """The talks of the corpus folder (all, or those named by stem or path)."""
    if not names:
        return sorted(HERE.glob("*.talk"))
    paths = []
    for name in names:
        path = Path(name)
        if path.suffix != ".talk":
            path = HERE / f"{name}.talk"
        if not path.exists():
            raise CorpusError(f"no talk {name!r} ({path})")
        paths.append(path)
    return paths


def write(built: Built, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt, data in built.files.items():
        target = out / f"{built.talk.name}{SUFFIXES[fmt]}"
        target.write_bytes(data)
        written.append(target)
    claims = out / f"{built.talk.name}.claims.jsonl"
    claims.write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in built.claims), encoding="utf-8"
    )
    labels = out / f"{built.talk.name}.labels.json"
    labels.write_text(json.dumps(built.labels, ensure_ascii=False, indent=1), encoding="utf-8")
    return [*written, claims, labels]


def build_all(out: Path, names: list[str] | None = None) -> list[Built]:
    """Build and write the talks; ids must be unique across them."""
    built_talks = []
    seen: dict[str, str] = {}
    for path in talk_paths(names):
        built = build_talk(path)
        for ident in built.labels:
            if ident in seen:
                raise CorpusError(f"{ident}: in {seen[ident]} and {built.talk.name}")
            seen[ident] = built.talk.name
        for problem in built.problems:
            print(f"build.py: the parser reads {problem}", file=sys.stderr)
        write(built, out)
        built_talks.append(built)
    return built_talks


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    out = Path(argv[0])
    try:
        talks = build_all(out, argv[1:])
    except CorpusError as error:
        print(f"build.py: {error}", file=sys.stderr)
        return 1
    for built in talks:
        last = built.words[-1].end
        print(
            f"{built.talk.name}: {len(built.words):,} words, {last / 60:.1f} min of "
            f"{built.talk.video_seconds / 60:.1f}, {len(built.claims)} statements, "
            f"SRT labels {built.srt_style!r}"
        )
    print(f"wrote {len(talks)} talks to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
