"""Pins on a 3-hour transcript: verifying a summary's 50 pins, and suggesting a span.

    .venv/bin/python bench/run_pins.py              # 15 runs, medians
    .venv/bin/python bench/run_pins.py --repeat 31

Builds a deterministic transcript of about 30,000 words (3 hours at an even pace, in caption
cues of eight words): auto-caption text generated from the pins corpus
(tests/pins_corpus/) by a seeded word-pair chain, with the four corpus transcripts said
at 0:20, 1:00, 1:50 and 2:40. Fifty statements of the corpus are pinned to it with their
stored spans: quotes, typographic variants, paraphrased points, invented quotes,
flipped negations, changed numbers, mis-timed ones and chapter starts; eight pins have a
stale span (the words moved by thousands of words) and every invented quote is searched
for in the whole transcript before it is called not found.

Times, in this process (summaries/text/pins.py is pure: no Django, no database):
- index: the first call on the transcript, which normalises and indexes its words (once
  per transcript; later calls reuse it);
- verify 50: `verify` of all 50 pins, the index built (median of --repeat runs);
- suggest: `suggest` of one point over the whole transcript (median).
Prints the figures against the target (verifying 50 pins <= 150 ms) and how many verdicts
were the expected ones, and exits 1 when the target is missed or a verdict is wrong.
Not a test: nothing here runs in CI. Needs nothing but the project's virtualenv.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

from servers import ROOT, say

TARGET_MS = 150.0
WORDS = 30_000
SEED = 2026
# Where the corpus transcripts are said in the long one, in seconds.
PLACES = {"speed": 1200.0, "local_ai": 3600.0, "kimi": 6600.0, "ipo": 9600.0}
# How many statements of each category are pinned, and from which corpus files.
PICKS = {
    "exact": 8,
    "typographic": 8,
    "elision": 2,
    "paraphrase": 8,
    "invented": 8,
    "negation": 4,
    "number": 4,
    "mistimed": 4,
    "start": 4,
}
MOVED = 8  # quotes whose stored span is stale


@dataclass(frozen=True)
class Pin:
    id: str
    text: str
    kind: str
    expect: str
    span: object
    stated_time: float | None
    moved: bool


def chain_text(paragraphs: list[str], count: int, rng: random.Random) -> list[str]:
    """`count` words of auto-caption-like text: each next word drawn from the words that
    follow the current one in the corpus."""
    following: dict[str, list[str]] = defaultdict(list)
    for paragraph in paragraphs:
        said = paragraph.split()
        for first, second in zip(said, said[1:], strict=False):
            following[first].append(second)
    starts = [paragraph.split()[0] for paragraph in paragraphs]
    words = [rng.choice(starts)]
    while len(words) < count:
        options = following.get(words[-1])
        words.append(rng.choice(options) if options else rng.choice(starts))
    return words


def long_transcript():
    """(segments, offset of each corpus video's first word): 3 hours of captions."""
    from summaries.text.transcripts import Segment
    from tests.pins_corpus import CUE_WORDS, PAUSE_SECONDS, paragraphs, word_seconds

    rng = random.Random(SEED)
    videos = {video: paragraphs(video) for video in PLACES}
    corpus = [p for ps in videos.values() for p in ps]
    filler = chain_text(corpus, WORDS, rng)
    segments, clock, used, first_words = [], 0.5, 0, {}
    said_words = 0

    def say_paragraph(said: list[str]) -> None:
        nonlocal clock, said_words
        for first in range(0, len(said), CUE_WORDS):
            cue = said[first : first + CUE_WORDS]
            length = sum(word_seconds(word) for word in cue)
            segments.append(Segment(round(clock, 3), round(clock + length, 3), " ".join(cue)))
            clock += length
        said_words += len(said)
        clock += PAUSE_SECONDS

    pending = sorted(PLACES.items(), key=lambda item: item[1])
    while used < len(filler) and said_words < WORDS:
        if pending and clock >= pending[0][1]:
            video, _ = pending.pop(0)
            first_words[video] = said_words
            for paragraph in videos[video]:
                say_paragraph(paragraph.split())
            continue
        size = rng.randint(40, 120)
        say_paragraph(filler[used : used + size])
        used += size
    return segments, first_words


def pins(words, first_words) -> list[Pin]:
    """Fifty pins from the corpus cases, their spans moved to where their video is said."""
    from summaries.text.pins import span_of
    from tests.pins_corpus import cases, pinned_span, stated_time, transcript_words

    chosen: list[Pin] = []
    taken: dict[str, int] = defaultdict(int)
    moved = 0
    for filename in ("speed.cases", "local_ai.cases", "kimi.cases"):
        video = filename.split(".")[0]
        own_words = transcript_words(video)
        offset = first_words[video]
        for case in cases(filename):
            if case.category not in PICKS or taken[case.category] >= PICKS[case.category]:
                continue
            own = pinned_span(own_words, case.at)
            first, end = own.first_word + offset, own.end_word + offset
            stale = case.kind == "quote" and case.expect == "verbatim" and moved < MOVED
            if stale:
                # The stored span of an older transcript: thousands of words away.
                first, end = (first + 7919) % len(words), (first + 7919) % len(words) + 12
                moved += 1
            span = span_of(words, first, end)
            when = stated_time(case, own)
            if when is not None:
                when += words[offset].start - own_words[0].start
            taken[case.category] += 1
            chosen.append(Pin(case.id, case.text, case.kind, case.expect, span, when, stale))
    return chosen


def median_ms(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", "summaries/text"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs of each measure")
    args = parser.parse_args(argv)

    from summaries.text import pins as pins_module
    from summaries.text.transcripts import timed_words

    segments, first_words = long_transcript()
    words = timed_words(segments)
    pinned = pins(words, first_words)
    hours = words[-1].end / 3600
    say(f"commit {commit()}")
    say(
        f"transcript: {len(words):,} words, {len(segments):,} cues, {hours:.2f} hours; "
        f"{len(pinned)} pins, {sum(p.moved for p in pinned)} with a stale span, "
        f"{sum(p.expect == 'not_found' for p in pinned)} invented"
    )

    def verify_all():
        return [
            pins_module.verify(
                pin.text, words, pin.span, kind=pin.kind, stated_time=pin.stated_time
            )
            for pin in pinned
        ]

    started = time.perf_counter()
    verdicts = verify_all()
    cold_ms = (time.perf_counter() - started) * 1000
    wrong = [
        f"{pin.id}: {verdict.status} ({verdict.reason})"
        for pin, verdict in zip(pinned, verdicts, strict=True)
        if verdict.status != pin.expect or (pin.moved and verdict.suggested_span is None)
    ]
    gc.collect()
    verify_ms = median_ms(verify_all, args.repeat)
    statement = "Berman recommends a hybrid: a small local model for private and quick tasks."
    suggest_ms = median_ms(lambda: pins_module.suggest(statement, words, kind="point"), args.repeat)
    quote = "The lighting was correct and the orbits were smooth."
    quote_ms = median_ms(lambda: pins_module.suggest(quote, words, kind="quote"), args.repeat)

    say(f"first verify of 50 (builds the index): {cold_ms:.0f} ms")
    say(f"verify 50 pins: {verify_ms:.1f} ms (median of {args.repeat})")
    say(f"suggest one point: {suggest_ms:.2f} ms; one quote: {quote_ms:.2f} ms")
    say(f"verdicts as expected: {len(pinned) - len(wrong)}/{len(pinned)}")
    for line in wrong:
        say(f"  unexpected: {line}")
    met = verify_ms <= TARGET_MS
    say(f"target: verify 50 pins <= {TARGET_MS:.0f} ms: {'met' if met else 'MISSED'}")
    return 0 if met and not wrong else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
