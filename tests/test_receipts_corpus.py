"""The receipts judge on the labelled corpus of bench/receipts_corpus/, in the text layer
alone (no database): each statement found with `pins.suggest` and its first suggestion
judged with `pins.verify`, as the admin pins it, in every transcript format the builder
renders. One test a target, so
a failure names the target it misses and the statements that miss it."""

import sys
from functools import cache
from pathlib import Path

import pytest

from summaries.text import pins
from summaries.text.transcripts import parse_transcript, timed_words

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH / "receipts_corpus"))
sys.path.insert(0, str(BENCH))

import build  # noqa: E402
import run_receipts_corpus as runner  # noqa: E402

KINDS = {"key_point": "point", "takeaway": "point", "caveat": "point"}
# The words of a chapter's body that stand for its start (as the admin reads a chapter).
CHAPTER_OPENING_WORDS = 25
MIN_A_CATEGORY = 5
MIN_STATEMENTS = 600


@cache
def corpus() -> tuple[build.Built, ...]:
    return tuple(build.build_talk(path) for path in build.talk_paths())


def _judge(text: str, kind: str, words, stated_time) -> tuple[str, float | None]:
    spans = pins.suggest(text, words, kind=kind, limit=1)
    if not spans:
        return "not_found", None
    verdict = pins.verify(text, words, spans[0], kind=kind, stated_time=stated_time)
    status = verdict.status.value
    if status == "not_found":
        return status, None
    if status == "mis_timed" and verdict.suggested_time is not None:
        return status, verdict.suggested_time
    return status, spans[0].start


@cache
def rows() -> tuple[dict, ...]:
    found = []
    for built in corpus():
        for fmt in build.FORMATS:
            words = timed_words(parse_transcript(built.files[fmt]).segments)
            for claim in built.claims:
                kind = KINDS.get(claim["kind"], claim["kind"])
                text = claim["text"]
                if kind == "chapter":
                    text = " ".join(text.split()[:CHAPTER_OPENING_WORDS])
                stated = None if claim["kind"] in ("quote", "caveat") else claim["time"]
                status, time = _judge(text, kind, words, stated)
                label = built.labels[claim["id"]]
                found.append(
                    {**label, "id": claim["id"], "format": fmt, "got": status, "got_time": time}
                )
    return tuple(found)


TARGETS = [name for name, _, _ in runner.targets([])]


# Per target, the statements (over every talk and format) the judge gets wrong at the
# commit docs/benchmarks.md reports (every talk, the held-out `chips` included): the
# targets not met yet are held at that level, so that a change that does worse fails here.
# Lower one when the judge does better; a talk added raises them by its own figures only.
MISSES_REACHED = {
    "0 false alarms on exact, typographic, number-word and filler quotes": 8,
    "at most 1 invented statement in 60 passed": 6,
    "every flipped negation caught": 90,
    "every changed number, unit and name caught": 71,
    "every paraphrase a paraphrase (not contradicted, not found or mis-timed)": 251,
    "chapters off by 5-60 s mis_timed": 4,
    "points off by 10-60 s mis_timed": 37,
    "chapters at their words left alone": 10,
    "times within 2 s of the words (statements judged right)": 445,
}


@pytest.mark.parametrize("index", range(len(TARGETS)), ids=TARGETS)
def test_the_judge_holds_the_target(index):
    name, met, counts = runner.targets(list(rows()))[index]
    wrong = [
        f"{r['id']} ({r['format']}): expected {r['expected']}, got {r['got']}: {r['text']}"
        for r in rows()
        if not runner.right(r) and _concerns(index, r)
    ]
    misses = int(counts.split()[0])
    assert misses <= MISSES_REACHED[name], f"{name}: {counts}\n" + "\n".join(wrong[:40])


def _concerns(index: int, row: dict) -> bool:
    """Whether a wrongly judged row belongs to target `index` (for the failure message)."""
    groups = [
        runner.QUOTES,
        ("invented",),
        ("negation_flipped",),
        runner.CHANGED,
        runner.PARAPHRASES,
        ("chapter_mistimed",),
        ("point_mistimed",),
        ("chapter_correct",),
    ]
    return index >= len(groups) or row["category"] in groups[index]


def test_every_talk_has_every_category():
    for built in corpus():
        counts = {c: 0 for c in build.CATEGORIES}
        for label in built.labels.values():
            counts[label["category"]] += 1
        few = {c: n for c, n in counts.items() if n < MIN_A_CATEGORY}
        assert not few, f"{built.talk.name}: fewer than {MIN_A_CATEGORY} of {few}"


def test_the_corpus_has_enough_statements():
    total = sum(len(built.claims) for built in corpus())
    assert total >= MIN_STATEMENTS


def test_every_rendered_file_reads_back_as_the_talk():
    problems = [problem for built in corpus() for problem in built.problems]
    assert not problems


def test_ids_are_unique_across_the_corpus():
    ids = [ident for built in corpus() for ident in built.labels]
    assert len(ids) == len(set(ids))
