"""The receipts judge measured on the labelled corpus of bench/receipts_corpus/.

    .venv/bin/python bench/run_receipts_corpus.py                       # every talk, format
    .venv/bin/python bench/run_receipts_corpus.py --talk chips --format vtt
    .venv/bin/python bench/run_receipts_corpus.py --markdown receipts-report.md

Builds the corpus (bench/receipts_corpus/build.py) into the corpus folder's
"built" folder (git-ignored), runs `manage.py receipts_eval` as a subprocess for every talk in every
format, compares each verdict with its label and prints a Markdown report: the targets
(each met or not, with counts, over all formats and per format), a confusion table per
category (expected verdict and category rows, the verdicts got as columns) and per format,
the time each run took, and every statement judged wrongly (id, formats, expected, got,
text). Dated, with the commit it ran on. Exits 1 when a target is missed. Not a test.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "receipts_corpus"
BUILT = CORPUS / "built"
sys.path.insert(0, str(CORPUS))

import build  # noqa: E402

STATUSES = ("verbatim", "paraphrase", "not_found", "contradicted", "mis_timed", "error")
PASSED = {"verbatim", "paraphrase"}
CAUGHT = {"contradicted", "not_found"}
QUOTES = ("quote_exact", "quote_typographic", "quote_number_words", "quote_fillers")
CHANGED = ("number_changed", "unit_changed", "name_changed")
PARAPHRASES = ("paraphrase", "paraphrase_negation_moved", "number_in_name")
TIME_SLACK = 2.0


def run_eval(talk: str, fmt: str) -> tuple[dict, float]:
    transcript = BUILT / f"{talk}{build.SUFFIXES[fmt]}"
    output = BUILT / f"{talk}.{fmt}.result.json"
    output.unlink(missing_ok=True)
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "receipts_eval",
            str(transcript),
            str(BUILT / f"{talk}.claims.jsonl"),
            str(output),
            "--verbosity",
            "0",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"receipts_eval {transcript.name} failed:\n{done.stderr[-3000:]}")
    return json.loads(output.read_text()), seconds


# --- Targets -----------------------------------------------------------------------------


def targets(rows: list[dict]) -> list[tuple[str, bool, str]]:
    """(target, met, counts) for rows of one format or all."""

    def of(*categories):
        return [r for r in rows if r["category"] in categories]

    out = []
    quotes = of(*QUOTES)
    alarms = [r for r in quotes if r["got"] != "verbatim"]
    out.append(
        (
            "0 false alarms on exact, typographic, number-word and filler quotes",
            not alarms,
            f"{len(alarms)} of {len(quotes)} not verbatim",
        )
    )
    invented = of("invented")
    passed = [r for r in invented if r["got"] in PASSED]
    out.append(
        (
            "at most 1 invented statement in 60 passed",
            len(passed) * 60 <= len(invented),
            f"{len(passed)} of {len(invented)} passed",
        )
    )
    for name, categories in (
        ("every flipped negation caught", ("negation_flipped",)),
        ("every changed number, unit and name caught", CHANGED),
    ):
        group = of(*categories)
        missed = [r for r in group if r["got"] not in CAUGHT]
        out.append((name, not missed, f"{len(missed)} of {len(group)} not caught"))
    group = of(*PARAPHRASES)
    wrong = [r for r in group if r["got"] not in PASSED]
    out.append(
        (
            "every paraphrase a paraphrase (not contradicted, not found or mis-timed)",
            not wrong,
            f"{len(wrong)} of {len(group)} refused",
        )
    )
    for name, category, want in (
        ("chapters off by 5-60 s mis_timed", "chapter_mistimed", True),
        ("points off by 10-60 s mis_timed", "point_mistimed", True),
        ("chapters at their words left alone", "chapter_correct", False),
    ):
        group = of(category)
        if want:
            wrong = [r for r in group if r["got"] != "mis_timed"]
        else:
            wrong = [r for r in group if r["got"] not in PASSED]
        out.append((name, not wrong, f"{len(wrong)} of {len(group)} wrong"))
    timed = [r for r in rows if r["said_at"] is not None and r["got_time"] is not None and right(r)]
    off = [r for r in timed if abs(r["got_time"] - r["said_at"]) > TIME_SLACK]
    out.append(
        (
            f"times within {TIME_SLACK:.0f} s of the words (statements judged right)",
            not off,
            f"{len(off)} of {len(timed)} further",
        )
    )
    return out


def right(row: dict) -> bool:
    if row["category"] in PARAPHRASES[2:] + ("chapter_correct",):
        return row["got"] in PASSED
    return row["got"] == row["expected"]


# --- The report --------------------------------------------------------------------------


def confusion(rows: list[dict]) -> list[str]:
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for row in rows:
        counts[(row["category"], row["expected"])][row["got"]] += 1
    lines = [
        "| category | expected | " + " | ".join(STATUSES) + " | right |",
        "| --- | --- | " + " | ".join("---:" for _ in STATUSES) + " | ---: |",
    ]
    for (category, expected), got in sorted(counts.items()):
        group = [r for r in rows if r["category"] == category and r["expected"] == expected]
        cells = " | ".join(str(got.get(s, "")) for s in STATUSES)
        ok = sum(right(r) for r in group)
        lines.append(f"| {category} | {expected} | {cells} | {ok}/{len(group)} |")
    return lines


def target_table(by_format: dict[str, list[dict]], rows: list[dict]) -> list[str]:
    columns = ["all", *by_format]
    results = {"all": targets(rows), **{fmt: targets(r) for fmt, r in by_format.items()}}
    lines = [
        "| target | " + " | ".join(columns) + " |",
        "| --- | " + " | ".join("---" for _ in columns) + " |",
    ]
    for index, (name, _, _) in enumerate(results["all"]):
        cells = []
        for column in columns:
            _, met, counts = results[column][index]
            cells.append(f"{'met' if met else '**not met**'} ({counts})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def failures(rows: list[dict]) -> list[str]:
    wrong: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if not right(row):
            wrong[row["id"]].append(row)
    lines = [
        "| id | category | formats | expected | got | text |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for ident, group in sorted(wrong.items()):
        first = group[0]
        got = ", ".join(sorted({f"{r['got']}" + _timing(r) for r in group}))
        formats = ", ".join(r["format"] for r in group)
        text = first["text"].replace("|", "\\|")
        lines.append(
            f"| {ident} | {first['category']}{'/' + first['subtype'] if first['subtype'] else ''}"
            f" | {formats} | {first['expected']} | {got} | {text} |"
        )
    return lines


def _timing(row: dict) -> str:
    if row["got"] in ("mis_timed",) and row["got_time"] is not None and row["said_at"] is not None:
        return f" at {row['got_time']:.0f} s (said at {row['said_at']:.0f} s)"
    return ""


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--talk", action="append", help="a talk's name (default: every talk)")
    parser.add_argument("--format", action="append", choices=build.FORMATS)
    parser.add_argument("--markdown", type=Path, help="also write the report to this file")
    options = parser.parse_args()
    formats = options.format or list(build.FORMATS)
    started_on = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    revision = commit()
    built = build.build_all(BUILT, options.talk)
    rows: list[dict] = []
    timings: list[str] = []
    for talk in built:
        for fmt in formats:
            results, seconds = run_eval(talk.talk.name, fmt)
            timings.append(
                f"| {talk.talk.name} | {fmt} | {len(talk.words):,} | {len(talk.claims)} "
                f"| {seconds:.1f} |"
            )
            print(
                f"{talk.talk.name}.{fmt}: {len(results)} statements in {seconds:.1f} s",
                file=sys.stderr,
            )
            for ident, label in talk.labels.items():
                got = results.get(ident, {"status": "error", "time": None})
                rows.append(
                    {
                        **label,
                        "id": ident,
                        "format": fmt,
                        "got": got["status"],
                        "got_time": got["time"],
                    }
                )
    by_format = {fmt: [r for r in rows if r["format"] == fmt] for fmt in formats}
    statements = len(rows) // max(1, len(formats))
    report = [
        "# Receipts corpus: the judge measured",
        "",
        f"Run {started_on} at commit {revision}: {len(built)} talks "
        f"({', '.join(b.talk.name for b in built)}), {statements} statements, "
        f"formats {', '.join(formats)} (bench/run_receipts_corpus.py).",
        "",
        "## Targets",
        "",
        *target_table(by_format, rows),
        "",
        "## Verdicts by category, all formats",
        "",
        *confusion(rows),
        "",
    ]
    for fmt, fmt_rows in by_format.items():
        ok = sum(right(r) for r in fmt_rows)
        report += [f"## {fmt}: {ok} of {len(fmt_rows)} right", "", *confusion(fmt_rows), ""]
    report += [
        "## Runs of receipts_eval",
        "",
        "| talk | format | words | statements | seconds |",
        "| --- | --- | ---: | ---: | ---: |",
        *timings,
        "",
        "## Files parse_transcript reads otherwise than the talk",
        "",
        *([f"- {p}" for b in built for p in b.problems] or ["None."]),
        "",
        "## Statements judged wrongly",
        "",
        *failures(rows),
        "",
    ]
    text = "\n".join(report)
    print(text)
    if options.markdown:
        options.markdown.write_text(text, encoding="utf-8")
    return 0 if all(met for _, met, _ in targets(rows)) else 1


if __name__ == "__main__":
    sys.exit(main())
