"""Pinning through the services (summaries.editing.pinning) on a 3-hour transcript.

    .venv/bin/python bench/run_pins.py                      # SQLite, in a throwaway file
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/curation_bench_pins \
        .venv/bin/python bench/run_pins.py --repeat 31      # PostgreSQL (database made here)

Builds a deterministic transcript of about 30,000 words (3 hours at an even pace, in caption
cues of eight words): auto-caption text generated from the pins corpus (tests/pins_corpus/)
by a seeded word-pair chain, with the four corpus transcripts said at 0:20, 1:00, 1:50 and
2:40. It is imported as an editor would (`pinning.import_transcript`) for a draft summary
of 85 statements written from it, spread over the three hours: 40 key points, 20 takeaways,
10 caveats and 15 chapters whose bodies quote the video once each (15 quotations more).

Measured, in this process, against the database (medians of --repeat runs):
- pin all: `pinning.pin_all`, every statement pinned at its first suggestion and stored in
  one revision (the pins taken off again between runs, outside the timing);
- one pin write: `pinning.set_pin` of one key point at its suggestion;
- re-check: `receipts.refresh_pins` after a new transcript (the first half of the file
  imported, then the whole file again: every pin verified again, proposals made);
- baseline: one UPDATE of a key point's pin through the ORM, nothing else.
Each is split into the judge's time (summaries.text.pins `suggest` and `verify`) and the
rest (storage, revisions, queries). Targets: pin all <= 1 s, one pin write <= 15 ms. Prints
the date, the commit and the database; exits 1 when a target is missed. Not a test.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

from servers import ROOT, say

PIN_ALL_TARGET_MS = 1000.0
PIN_WRITE_TARGET_MS = 15.0
WORDS = 30_000
SEED = 2026
# Where the corpus transcripts are said in the long one, in seconds.
PLACES = {"speed": 1200.0, "local_ai": 3600.0, "kimi": 6600.0, "ipo": 9600.0}
POINTS, TAKEAWAYS, CAVEATS, CHAPTERS = 40, 20, 10, 15


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


class JudgeClock:
    """Wraps the judge's `suggest` and `verify` (as the editing services call them) and adds
    up the time spent in them."""

    def __init__(self) -> None:
        from summaries.text import pins

        self.pins = pins
        self.spent = 0.0
        self.originals = {name: getattr(pins, name) for name in ("suggest", "verify")}
        for name, function in self.originals.items():
            setattr(pins, name, self._timed(function))

    def _timed(self, function):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - started

        return timed


def vtt(segments) -> bytes:
    def clock(seconds: float) -> str:
        hours, rest = divmod(seconds, 3600)
        minutes, secs = divmod(rest, 60)
        return f"{int(hours):02d}:{int(minutes):02d}:{secs:06.3f}"

    lines = ["WEBVTT", ""]
    for segment in segments:
        lines += [f"{clock(segment.start)} --> {clock(segment.end)}", segment.text, ""]
    return "\n".join(lines).encode()


def build(segments):
    """The video, its imported transcript and the draft summary of 85 statements."""
    from django.contrib.auth.models import User

    from summaries.editing import pinning, save
    from summaries.models import Caveat, Channel, Chapter, KeyPoint, Summary, Takeaway, Video

    Summary.objects.filter(video__slug="bench-pins").delete()  # the last run's
    Video.objects.filter(slug="bench-pins").delete()
    user, _ = User.objects.get_or_create(username="bench-pins", is_superuser=True, is_staff=True)
    channel, _ = Channel.objects.get_or_create(slug="bench-pins", name="Bench")
    video = Video.objects.create(
        slug="bench-pins",
        title="Three hours of talk",
        channel=channel,
        source_url="https://www.youtube.com/watch?v=benchpins01",
        duration_seconds=int(segments[-1].end) + 1,
        published_on="2026-10-01",
    )
    rng = random.Random(SEED)
    count = POINTS + TAKEAWAYS + CAVEATS + 2 * CHAPTERS
    step = len(segments) // count
    said = []
    for index in range(count):
        at = index * step + rng.randrange(step - 1)
        text = f"{segments[at].text} {segments[at + 1].text}"
        said.append((int(segments[at].start), text))
    points = [KeyPoint(title=t[:40], body=t, time=a) for a, t in said[:POINTS]]
    rest = said[POINTS:]
    takeaways = [Takeaway(text=t, time=a) for a, t in rest[:TAKEAWAYS]]
    rest = rest[TAKEAWAYS:]
    caveats = [Caveat(text=t) for _, t in rest[:CAVEATS]]
    rest = rest[CAVEATS:]
    chapters = [
        Chapter(
            title=f"Part {n + 1}",
            body=f"{rest[2 * n][1]}\n\nAs they put it: “{rest[2 * n + 1][1]}”.",
            start_time=rest[2 * n][0],
        )
        for n in range(CHAPTERS)
    ]
    summary = Summary(video=video, tldr="Three hours, summarised.")
    parts = {KeyPoint: points, Takeaway: takeaways, Caveat: caveats, Chapter: chapters}
    save.save_summary(summary=summary, parts=parts, user=user)
    pinning.import_transcript(video=video, data=vtt(segments), user=user, filename="talk.vtt")
    return Summary.objects.get(pk=summary.pk), user


def unpin(summary) -> None:
    from summaries.editing.receipts import PINNED_MODELS

    for model in PINNED_MODELS:
        model.objects.filter(summary=summary).update(pin=None)


def median(runs):
    return statistics.median(runs)


def measure(function, repeat: int, judge: JudgeClock, before=None):
    """(median ms, median judge ms) of `function()` over `repeat` runs."""
    times, judged = [], []
    for _ in range(repeat):
        if before is not None:
            before()
        judge.spent = 0.0
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
        judged.append(judge.spent * 1000)
    return median(times), median(judged)


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", "summaries"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


def setup(scratch: str) -> str:
    """Django set up on DATABASE_URL (PostgreSQL: the database made if missing), or on a
    SQLite file in `scratch`; migrated. Returns the database's vendor."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch}/bench_pins.sqlite3"
    elif url.startswith(("postgres:", "postgresql:")):
        name = url.rsplit("/", 1)[1].split("?")[0]
        base = url.rsplit("/", 1)[0] + "/postgres"
        import psycopg

        with psycopg.connect(base.replace("postgres://", "postgresql://"), autocommit=True) as c:
            if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                c.execute(f'CREATE DATABASE "{name}"')
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0, interactive=False)
    return connection.vendor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs of each measure")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        vendor = setup(scratch)
        return run(args.repeat, vendor)


def run(repeat: int, vendor: str) -> int:
    from summaries.editing import pinning, receipts
    from summaries.models import KeyPoint

    segments, _ = long_transcript()
    summary, user = build(segments)
    judge = JudgeClock()
    statements = sum(1 for _ in receipts.parts_of(summary))
    quotes = sum(len(c.quote_pins) for c in summary.chapters.all())
    say(f"{datetime.date.today()}, commit {commit()}, {vendor}")
    say(
        f"transcript: {len(segments):,} cues, "
        f"{segments[-1].end / 3600:.2f} hours; {statements} statements, {quotes} quotations"
    )

    pin_all = measure(
        lambda: pinning.pin_all(summary=summary, user=user),
        repeat,
        judge,
        before=lambda: unpin(summary),
    )
    point = KeyPoint.objects.filter(summary=summary).order_by("position").first()
    span = pinning.suggestions(summary=summary, part=point, limit=1)[0]

    def write():
        pinning.set_pin(
            summary=summary, part=point, first=span.first_word, end=span.end_word, user=user
        )

    write()
    one = measure(write, max(repeat, 51), judge)
    pin = KeyPoint.objects.get(pk=point.pk).pin
    bare = measure(
        lambda: KeyPoint.objects.filter(pk=point.pk).update(pin=pin), max(repeat, 51), judge
    )
    half = [s for s in segments if s.end <= segments[-1].end / 2]
    timer = {"ms": 0.0}
    original = receipts.refresh_pins

    def timed_refresh(**kwargs):
        judge.spent = 0.0
        started = time.perf_counter()
        try:
            return original(**kwargs)
        finally:
            timer["ms"] = (time.perf_counter() - started) * 1000
            timer["judge"] = judge.spent * 1000

    pinning.refresh_pins = timed_refresh
    recheck = {}
    for name, cues in (("first half", half), ("whole file again", segments)):
        pinning.import_transcript(video=summary.video, data=vtt(cues), user=user, filename="t.vtt")
        recheck[name] = (timer["ms"], timer["judge"])
    pinning.refresh_pins = original
    proposals = 0

    def line(name, figures, target=None):
        total, judged = figures
        verdict = ""
        if target is not None:
            verdict = f"; target <= {target:.0f} ms: {'met' if total <= target else 'MISSED'}"
        say(
            f"{name}: {total:.1f} ms (judge {judged:.1f} ms, storage and the rest "
            f"{total - judged:.1f} ms){verdict}"
        )

    line(f"pin all {statements} statements (median of {repeat})", pin_all, PIN_ALL_TARGET_MS)
    line(f"one pin write (median of {max(repeat, 51)})", one, PIN_WRITE_TARGET_MS)
    line("baseline: one ORM UPDATE of a pin", bare)
    for name, figures in recheck.items():
        line(f"re-check after importing the {name}", figures)
    for part in receipts.parts_of(summary):
        proposals += bool(part.pin and part.pin.get("proposal"))
    say(f"after the round trip: {proposals} proposals left (expected 0)")
    met = pin_all[0] <= PIN_ALL_TARGET_MS and one[0] <= PIN_WRITE_TARGET_MS
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
