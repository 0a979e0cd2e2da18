"""Transcript parsing: a long YouTube auto-caption file read by parse_transcript.

    .venv/bin/python bench/run_transcript_import.py             # 3 hours, 7 runs, median
    .venv/bin/python bench/run_transcript_import.py --help      # --hours, --repeat, --seed, ...

The file is generated from a seed (tests/transcript_files.py): a YouTube auto-caption
WebVTT of `--hours` of talk (3 hours: about 30,000 words, 8,500 cues, 1.5 MB), each line
of speech a cue with its word times shown under the line before it and a 10 ms cue showing
it alone, as YouTube writes them; and the json3 of the same speech. In this process, after
one warm-up parse, it times `--repeat` parses of each (summaries/text/transcripts/ is
pure: no database, no Django) and checks that every word said comes out once. Each parse
counts the words as an import does (`max_words`, the default TRANSCRIPT_MAX_WORDS).

The whole import of a transcript, the database included, must take at most 2 s; parsing
is its first part and should stay under a quarter of it. Before measuring it waits until
the CPU is quiet (`--max-busy`, at most `--settle-timeout` seconds: other people's tests
share the machine). Prints the medians (time, and this process's CPU time) against
TARGET_MS and exits 1 when a median misses it or a word is lost or repeated.

Then the largest files a transcript may be, each parsed once with its CPU time against
WORST_TARGET_MS: as many one-word cues as allowed (MAX_CUES) in WebVTT and json3, and 9.5
million words in one cue (under the 20 MB cap), refused for its length. The tests check
only that these grow linearly (tests/growth.py); how long they take is this target.
Not a test: nothing here runs in CI. Needs nothing but the project's virtualenv.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from servers import ROOT, say, settle

TARGET_MS = 2000.0  # the whole import, database included
PARSE_GOAL_MS = 500.0  # what parsing should stay under, within that
MAX_WORDS = 250_000  # the default TRANSCRIPT_MAX_WORDS (curation/settings.py)
WORST_TARGET_MS = 5000.0  # a largest allowed file, parsed or refused


def make_auto_caption_vtt(hours: float, seed: int) -> bytes:
    """A YouTube auto-caption WebVTT of `hours` of speech, the same bytes for the same seed
    (tests/transcript_files.py)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.transcript_files import make_auto_caption_vtt as make

    return make(hours, seed)


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "summaries/text/transcripts"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}{' (summaries/text/transcripts/ with uncommitted changes)' if dirty else ''}"


def timed(parse: Callable[[bytes], object], data: bytes, repeat: int) -> tuple[list, list]:
    """Milliseconds and CPU milliseconds of `repeat` parses of `data`."""
    times, cpus = [], []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        parse(data)
        times.append((time.perf_counter() - started) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return times, cpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hours", type=float, default=3.0, help="hours of speech")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated speech")
    parser.add_argument("--repeat", type=int, default=7, help="parses timed per file")
    parser.add_argument(
        "--max-busy", type=float, default=0.15, help="wait for the CPU to be this idle"
    )
    parser.add_argument(
        "--settle-timeout", type=float, default=180, help="seconds to wait for a quiet CPU"
    )
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from summaries.text.transcripts import parse_transcript as parse_file
    from summaries.text.transcripts import timed_words

    def parse_transcript(data: bytes):
        return parse_file(data, max_words=MAX_WORDS)

    from tests.transcript_files import make_auto_caption_json3, speech, spoken_words

    said = spoken_words(speech(args.hours, args.seed))
    files = {
        "auto-caption vtt": make_auto_caption_vtt(args.hours, args.seed),
        "auto-caption json3": make_auto_caption_json3(args.hours, args.seed),
    }
    say(
        f"commit {commit()}; {args.hours:g} hours of speech (seed {args.seed}), "
        f"{len(said):,} words; {args.repeat} parses per file after a warm-up"
    )
    missed = []
    results = {}
    for name, data in files.items():
        parsed = parse_transcript(data)  # warm-up, and the words checked
        words = [(word.start, word.text) for word in timed_words(parsed.segments)]
        if words != said:
            missed.append(f"{name}: {len(words):,} words read, {len(said):,} said")
        waited, busy = settle(args.max_busy, args.settle_timeout)
        say(f"{name}: the machine was {busy:.0%} busy after {waited:.0f} s of waiting")
        times, cpus = timed(parse_transcript, data, args.repeat)
        say(
            f"{name}: {len(data):,} bytes, {len(parsed.segments):,} segments; "
            + ", ".join(f"{ms:.0f}" for ms in times)
            + " ms"
        )
        results[name] = (statistics.median(times), statistics.median(cpus))

    say("")
    say(f"{'file':<20}{'median':>10}{'CPU':>10}")
    for name, (ms, cpu) in results.items():
        say(f"{name:<20}{ms:>7.0f} ms{cpu:>7.0f} ms")
        if ms > TARGET_MS:
            missed.append(f"{name} {ms:.0f} ms")
    slowest = max(ms for ms, _ in results.values())
    say(
        f"target: the whole import <= {TARGET_MS:.0f} ms, parsing <= {PARSE_GOAL_MS:.0f} ms of "
        f"it: parsing {slowest:.0f} ms, "
        + (f"FAILED ({'; '.join(missed)})" if missed else "PASS")
        + ("" if slowest <= PARSE_GOAL_MS else f" (over the {PARSE_GOAL_MS:.0f} ms goal)")
    )
    missed += worst_cases(parse_transcript)
    return 1 if missed else 0


def worst_cases(parse: Callable[[bytes], object]) -> list[str]:
    """CPU milliseconds of one parse of each largest allowed file; what missed the target."""
    from summaries.text.transcripts import MAX_CUES, TranscriptError
    from tests.transcript_files import json3_tiny_events, one_cue_of_words, tiny_vtt_cues

    files = {
        f"{MAX_CUES:,} one-word cues, vtt": tiny_vtt_cues(MAX_CUES),
        f"{MAX_CUES:,} one-word events, json3": json3_tiny_events(MAX_CUES),
        "9,500,000 words in one cue, refused": one_cue_of_words(9_500_000),
    }
    say("")
    missed = []
    for name, data in files.items():
        cpu = time.process_time()
        with contextlib.suppress(TranscriptError):
            parse(data)
        ms = (time.process_time() - cpu) * 1000
        verdict = "PASS" if ms <= WORST_TARGET_MS else "FAILED"
        say(f"{name}: {ms:.0f} CPU ms (target <= {WORST_TARGET_MS:.0f} ms) {verdict}")
        if ms > WORST_TARGET_MS:
            missed.append(f"{name} {ms:.0f} ms")
    return missed


if __name__ == "__main__":
    sys.exit(main())
