"""Generated transcript files: a YouTube auto-caption WebVTT and the json3 of the same speech,
for the transcript parsing tests and bench/run_transcript_import.py.

The speech is made up from a seed (the same seed, the same bytes): lines of five to nine
words at a talking pace of about 2.8 words a second, a "[Music]" break now and then and a
">>" where the speaker changes, as YouTube writes them. `speech` returns what was said, so
a test can check that every word comes out of the parser once, at its time.

No Django: the bench imports it on its own.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

# Words of a talk about machine learning, in no particular order.
VOCABULARY = (
    "so we trained the model on a mix of code and text and then we looked at how "
    "it behaves when you ask it something it has never seen before which is really "
    "the interesting part because scaling alone does not tell you much about that "
    "you need evaluations that are hard to game and honestly most benchmarks saturate "
    "within a year or two once people start optimising for them directly I think "
    "the right way to frame it is as a question of data quality rather than quantity "
    "we're seeing smaller models match larger ones when the curriculum is careful "
    "and the tokenizer matters more than anyone expected it's wild how much compute "
    "goes into inference now compared with training reasoning traces get longer "
    "every month agents need memory tools and a sandbox they can't break out of "
    "alignment research asks whether the objective we wrote down is the one we meant "
    "interpretability lets us look inside at features circuits and attention heads"
).split()

MUSIC_EVERY = 180  # lines between "[Music]" breaks, on average
SPEAKER_CHANGE_EVERY = 60  # lines between ">>" markers, on average


@dataclass(frozen=True)
class Line:
    """A line of captions: its words with their start times (ms), and when it ends (ms).

    `timed` is False for a sound annotation such as "[Music]", which has no word times.
    `marker` is True when the line starts with ">>" (a new speaker).
    """

    words: tuple[tuple[int, str], ...]
    end: int
    timed: bool = True
    marker: bool = False


def speech(hours: float, seed: int) -> list[Line]:
    """The lines said in `hours` of talk, each ending where the next begins."""
    rng = random.Random(seed)
    limit = int(hours * 3_600_000)
    lines: list[Line] = []
    now = 80
    place = 0  # where in VOCABULARY the talk is: runs of it read like phrases
    pending: list[tuple[int, str]] = []
    while now < limit:
        if rng.randrange(MUSIC_EVERY) == 0:
            start, now = now, now + rng.randint(3_000, 9_000)
            lines.append(Line(((start, "[Music]"),), now, timed=False))
            continue
        marker = rng.randrange(SPEAKER_CHANGE_EVERY) == 0
        pending = []
        for _ in range(rng.randint(5, 9)):
            if rng.randrange(8) == 0:
                place = rng.randrange(len(VOCABULARY))
            pending.append((now, VOCABULARY[place % len(VOCABULARY)]))
            place += 1
            now += rng.randint(140, 500)
        now += rng.choice((0, 0, 0, 120, 400, 1_100))  # a breath, sometimes a pause
        lines.append(Line(tuple(pending), now, marker=marker))
    return lines


def spoken_words(lines: list[Line]) -> list[tuple[float, str]]:
    """Every word said, in order, with its start in seconds."""
    return [(start / 1000, text) for line in lines for start, text in line.words]


def _clock(ms: int) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def _plain(line: Line) -> str:
    text = " ".join(word for _, word in line.words)
    return f"&gt;&gt; {text}" if line.marker else text


def _tagged(line: Line) -> str:
    """The line as YouTube writes the words being said: the first word bare, each next one
    after its start time, in a <c> span."""
    if not line.timed:
        return _plain(line)
    (_, first), *rest = line.words
    text = (f"&gt;&gt; {first}" if line.marker else first) + "".join(
        f"<{_clock(start)}><c> {word}</c>" for start, word in rest
    )
    return text


def make_auto_caption_vtt(hours: float, seed: int) -> bytes:
    """A YouTube auto-caption WebVTT of `hours` of speech.

    Each line of speech is two cues: one from its first word to its end showing the line
    before it (already said) above the new line with its word times, then a 10 ms cue
    showing the finished line alone above a blank line. Every line of text but the timed
    one repeats words said before.
    """
    lines = speech(hours, seed)
    out = ["WEBVTT", "Kind: captions", "Language: en", ""]
    previous = " "
    for line in lines:
        start = line.words[0][0]
        settings = "align:start position:0%"
        out += [f"{_clock(start)} --> {_clock(line.end - 10)} {settings}", previous]
        out += [_tagged(line), ""]
        out += [f"{_clock(line.end - 10)} --> {_clock(line.end)} {settings}", _plain(line)]
        out += [" ", ""]
        previous = _plain(line)
    return "\n".join(out).encode()


def make_auto_caption_json3(hours: float, seed: int) -> bytes:
    """The same speech as `make_auto_caption_vtt`, as YouTube's json3 timed text.

    A window event first; then for each line an event whose segments carry the word
    offsets (shown until the line after next ends: the window holds two lines), and an
    appended event holding only a line break.
    """
    lines = speech(hours, seed)
    events: list[dict[str, object]] = [
        {"tStartMs": 0, "dDurationMs": lines[-1].end, "id": 1, "wpWinPosId": 1, "wsWinStyleId": 1}
    ]
    for number, line in enumerate(lines):
        start = line.words[0][0]
        shown_until = lines[min(number + 1, len(lines) - 1)].end
        segs: list[dict[str, object]] = []
        for index, (word_start, word) in enumerate(line.words):
            text = word if index == 0 else f" {word}"
            if index == 0 and line.marker:
                text = f">> {text}"
            seg: dict[str, object] = {"utf8": text}
            if index and line.timed:
                seg["tOffsetMs"] = word_start - start
            if line.timed:
                seg["acAsrConf"] = 0
            segs.append(seg)
        events.append(
            {"tStartMs": start, "dDurationMs": shown_until - start, "wWinId": 1, "segs": segs}
        )
        events.append(
            {"tStartMs": line.end - 10, "wWinId": 1, "aAppend": 1, "segs": [{"utf8": "\n"}]}
        )
    document = {"wireMagic": "pb3", "pens": [{}], "wsWinStyles": [{}], "events": events}
    return json.dumps(document, separators=(",", ":")).encode()


def one_cue_of_words(words: int) -> bytes:
    """A WebVTT file of one cue holding `words` one-letter words (two bytes a word): 9.5
    million of them fit under the 20 MB upload cap."""
    return b"WEBVTT\n\n00:00:00.000 --> 09:00:00.000\n" + b"a " * words + b"\n"


def tiny_vtt_cues(cues: int) -> bytes:
    """A WebVTT file of `cues` cues of one word each, 5 ms apart ("w0", "w1", …)."""
    lines = (f"{_clock(n * 5)} --> {_clock(n * 5 + 4)}\nw{n}\n\n" for n in range(cues))
    return ("WEBVTT\n\n" + "".join(lines)).encode()


def json3_tiny_events(events: int) -> bytes:
    """A YouTube json3 file of `events` timed events of one word each, 10 ms apart."""
    timed = [{"tStartMs": n * 10, "dDurationMs": 5, "segs": [{"utf8": "w"}]} for n in range(events)]
    return json.dumps({"events": timed}).encode()
