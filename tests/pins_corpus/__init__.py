"""The pins corpus: transcripts written as auto captions, and statements pinned to them.

`<video>.txt` is a transcript, one paragraph per stretch of speech; `segments` cuts it into
caption cues of eight words at an even pace, with a pause between paragraphs. `<video>.cases`
holds statements with the verdict an editor expects (the format is at the top of
speed.cases); `*.heldout.cases` were kept out of the tuning of the matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from summaries.text.durations import parse_duration
from summaries.text.pins import Span, span_of
from summaries.text.transcripts import Segment, Word, timed_words

FOLDER = Path(__file__).resolve().parent
CUE_WORDS = 8
PAUSE_SECONDS = 1.5


def paragraphs(video: str) -> list[str]:
    text = (FOLDER / f"{video}.txt").read_text()
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def word_seconds(word: str) -> float:
    """How long a word takes to say: about 2.6 words a second, longer words longer."""
    return 0.2 + 0.04 * len(word)


def segments(video: str, offset: float = 0.5) -> list[Segment]:
    """Caption cues of the transcript, without word times (as auto captions come)."""
    cues = []
    clock = offset
    for paragraph in paragraphs(video):
        said = paragraph.split()
        for first in range(0, len(said), CUE_WORDS):
            cue = said[first : first + CUE_WORDS]
            length = sum(word_seconds(word) for word in cue)
            cues.append(Segment(round(clock, 3), round(clock + length, 3), " ".join(cue)))
            clock += length
        clock += PAUSE_SECONDS
    return cues


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    category: str
    expect: str
    at: str
    text: str
    time: str | None
    reason: str | None
    video: str


HEADER = re.compile(r"^\[([\w-]+)\] (\w+) ([\w-]+) (\w+)$")


def cases(filename: str) -> list[Case]:
    video = filename.split(".")[0]
    found = []
    for block in re.split(r"\n\s*\n", (FOLDER / filename).read_text()):
        lines = [line for line in block.strip().splitlines() if not line.startswith("#")]
        if not lines:
            continue
        match = HEADER.match(lines[0])
        assert match, f"{filename}: not a case header: {lines[0]!r}"
        fields = dict(line.split(": ", 1) for line in lines[1:])
        found.append(
            Case(
                *match.groups(),
                at=fields["at"],
                text=fields["text"],
                time=fields.get("time"),
                reason=fields.get("reason"),
                video=video,
            )
        )
    return found


def pinned_span(words: list[Word], at: str) -> Span:
    """The span of the first place the transcript says `at` (its words as captioned)."""
    said = [word.text for word in words]
    wanted = at.split()
    for first in range(len(said) - len(wanted) + 1):
        if said[first : first + len(wanted)] == wanted:
            return span_of(words, first, first + len(wanted))
    raise AssertionError(f"the transcript does not say {at!r}")


def stated_time(case: Case, span: Span) -> float | None:
    """The case's stated time: "@" the second the pinned words start in, "@+15" fifteen
    seconds later, "1:05" a clock time."""
    if case.time is None:
        return None
    if case.time.startswith("@"):
        return float(int(span.start) + int(case.time[1:] or 0))
    return float(parse_duration(case.time))


def transcript_words(video: str) -> list[Word]:
    return timed_words(segments(video))
