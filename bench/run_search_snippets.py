"""The search page's "said in the video" snippets over 3-hour transcripts, on PostgreSQL.

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME
    .venv/bin/python bench/run_search_snippets.py
    .venv/bin/python bench/run_search_snippets.py --summaries 10 --repeat 9 --baseline a1b5610

A result found only through its video's live transcript shows the first line of the
transcript saying the query words (summaries/reader/search_transcripts.py, a column of the
page's card rows). The bench makes `--summaries` published summaries, each with a live
transcript of 3 hours of generated talk (tests/transcript_files.py `speech`: caption lines
of five to nine words, "[Music]" breaks, ">>" speaker changes; about 30,000 words and 3,800
lines), a few lines of which say words said nowhere else: at the start, near the end, on
one line together and on lines of their own. Each query below is searched as the search
page does (`search.search_summaries`, then `search_results.page_results` of the page's ids,
which reads the card rows with their snippets in one query) and timed:

- with the snippets (the code of this checkout);
- without them (`said_line_sql` replaced by NULL: the rest of the results query and the
  cards), so "per result" is the difference divided by the results;
- with the code of `--baseline` (the module search_transcripts.py of that commit, read from
  git: the lines parsed one by one), which must choose the same lines;
- and the whole search page (GET /search/?q=..., every cache missed, as render_uncached).

Prints the medians with the date and the commit; exits 1 when a snippet differs from the
baseline's or when the slowest query's snippets cost more than --target ms a result. The
bench's rows are deleted afterwards. Not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from unittest import mock

from servers import ROOT, production_settings, run, say, settle

SLUG = "search-snippets-bench"
HOURS = 3.0
TARGET_MS = 50.0  # a result's snippet, the slowest query
BASELINE = "a1b5610"  # the last commit that parsed the lines one by one
TLDR = "A long talk about models, data and agents, and a quokka on the cover."
# (index of the line, from the end when negative; what is said there). Words said nowhere
# else in the talk (its vocabulary: tests/transcript_files.py VOCABULARY).
SAID = (
    (1, "welcome to the lighthouse podcast everyone"),
    (-60, "a glacier moves slower than any training run"),
    (-30, "the zebra finch learns its song from a tutor"),
    (-3, "and a pelican closes the show"),
)
QUERIES = (
    ("at the start", "lighthouse podcast"),
    ("near the end, one line", "zebra finch"),
    ("near the end, last lines", "pelican"),
    ("start and end, different lines", "lighthouse tutor"),
    ("near the end, different lines", "glacier tutor"),
    ("a negated word", "tutor -saxophone"),
    ("or", "glacier or pelican"),
    ("or a negated word", "pelican or -quokka"),
    ("a phrase", '"lighthouse podcast"'),
    ("not said (the summary's text)", "quokka"),
)


def commit() -> str:
    head = run(["git", "rev-parse", "--short", "HEAD"], capture=True).strip()
    dirty = run(
        ["git", "status", "--porcelain", "--", "summaries", "bench/run_search_snippets.py"],
        capture=True,
    ).strip()
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


def setup_django() -> None:
    """Django in the production configuration (DEBUG off), static files named as they are
    (no collected manifest: the page's static URLs are not what is measured)."""
    settings = {
        **production_settings(),
        "STATICFILES_BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage",
    }
    for name, value in settings.items():
        os.environ.setdefault(name, value)
    import inprocess

    inprocess.setup_django()


def baseline_module(revision: str):
    """search_transcripts.py as it was at `revision`, loaded beside the current one (its
    relative imports resolve in summaries.reader)."""
    source = subprocess.run(
        ["git", "show", f"{revision}:summaries/reader/search_transcripts.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    name = "summaries.reader._search_transcripts_baseline"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "summaries.reader"
    sys.modules[name] = module  # dataclasses look their module up there
    code = compile(source, f"{revision}:search_transcripts.py", "exec")
    exec(code, module.__dict__)  # noqa: S102 - this repository's own file, from git
    return module


def segments(seed: int) -> list[dict]:
    from tests.transcript_files import speech

    lines = speech(HOURS, seed)
    found = []
    for line in lines:
        text = " ".join(word for _, word in line.words)
        text = f">> {text}" if line.marker else text
        found.append({"start": line.words[0][0] / 1000, "end": line.end / 1000, "text": text})
    for index, text in SAID:
        found[index]["text"] = text
    return found


def make_rows(count: int) -> list:
    """`count` published summaries, each with a live 3-hour transcript."""
    from summaries.editing import derived
    from summaries.models import Channel, Transcript, segments_digest
    from tests.factories import SummaryFactory

    delete_rows()
    channel = Channel.objects.create(slug=SLUG, name="Long talks")
    summaries = []
    for n in range(count):
        summary = SummaryFactory(
            live=True,
            tldr=TLDR,
            video__title=f"Long talk {n + 1}",
            video__slug=f"{SLUG}-{n}",
            video__channel=channel,
        )
        data = segments(seed=n + 1)
        Transcript.objects.create(
            video=summary.video,
            language=summary.video.language,
            state=Transcript.State.LIVE,
            format="vtt",
            original=b"",
            segments=data,
            word_count=sum(len(s["text"].split()) for s in data),
            ends_at=data[-1]["end"],
            digest=segments_digest(data),
        )
        summaries.append(derived.update_search_document(summary=summary))
    return summaries


def delete_rows() -> None:
    from summaries.models import Channel, Summary, Video

    Summary.objects.filter(video__slug__startswith=SLUG).delete()
    Video.objects.filter(slug__startswith=SLUG).delete()
    Channel.objects.filter(slug=SLUG).delete()


@contextmanager
def snippets_from(module):
    """The page's rows with the said lines of `module` (None: no said lines at all)."""
    from django.db.models import TextField
    from django.db.models.expressions import RawSQL

    from summaries.reader import search_transcripts

    if module is None:

        def column(query):
            return RawSQL("NULL::text", (), output_field=TextField())  # noqa: S611 - constant
    else:
        column = module.said_line_sql
    with mock.patch.object(search_transcripts, "said_line_sql", column):
        yield


def results(query: str) -> list:
    from summaries.reader import search_results
    from summaries.reader.search import search_summaries

    ids = list(search_summaries(query).values_list("pk", flat=True)[:20])
    return search_results.page_results(ids, query)


def timed(action, repeat: int) -> list[float]:
    action()  # warm-up
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return times


def page_times(query: str, repeat: int) -> list[float]:
    import inprocess
    from django.urls import reverse
    from django.utils.http import urlencode

    path = f"{reverse('summaries:search')}?{urlencode({'q': query})}"
    client = inprocess.warm_client(path, 1)
    times = []
    for n in range(repeat):
        elapsed, _, _ = inprocess.timed_get(client, path, f"bench{n}")
        times.append(elapsed)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--summaries", type=int, default=5, help="results on the page")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each query")
    parser.add_argument("--baseline", default=BASELINE, help="commit to compare with")
    parser.add_argument("--target", type=float, default=TARGET_MS, help="ms a result")
    parser.add_argument("--max-busy", type=float, default=0.15, help="wait for this idle a CPU")
    parser.add_argument("--settle-timeout", type=float, default=120, help="seconds, at most")
    args = parser.parse_args(argv)
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a migrated PostgreSQL database")
    measured = commit()
    say(f"run_search_snippets: {datetime.date.today().isoformat()}, commit {measured}")
    setup_django()
    from summaries.pagecache.generation import content_changed

    old = baseline_module(args.baseline)
    summaries = make_rows(args.summaries)
    lines = sum(1 for _ in summaries[0].video.transcripts.get().search_text.split("\n"))
    words = summaries[0].video.transcripts.get().word_count
    say(f"{len(summaries)} summaries, each a live transcript of {lines:,} lines, {words:,} words")
    failed = False
    try:
        waited, busy = settle(args.max_busy, args.settle_timeout)
        say(f"the machine was {busy:.0%} busy after {waited:.0f} s of waiting")
        say(
            "query | results | with snippets | without | per result | "
            f"{args.baseline}: with, per result | whole page"
        )
        worst = 0.0
        for name, query in QUERIES:
            with snippets_from(None):
                without = statistics.median(timed(lambda q=query: results(q), args.repeat))
            with snippets_from(old):
                before = [str(r.snippet) for r in results(query)]
                was = statistics.median(timed(lambda q=query: results(q), args.repeat))
            now = [str(r.snippet) for r in results(query)]
            with_ = statistics.median(timed(lambda q=query: results(q), args.repeat))
            page = statistics.median(page_times(query, args.repeat))
            count = max(1, len(now))
            per, per_before = (with_ - without) / count, (was - without) / count
            worst = max(worst, per)
            say(
                f"{name} ({query}) | {len(now)} | {with_:,.1f} ms | {without:,.1f} ms | "
                f"{per:,.1f} ms | {was:,.1f} ms, {per_before:,.1f} ms | {page:,.1f} ms"
            )
            if now != before:
                failed = True
                say(f"  FAIL: snippets differ from {args.baseline}'s:\n  {now}\n  {before}")
        met = worst <= args.target
        say(
            f"slowest query's snippets: {worst:,.1f} ms a result, target <= {args.target:,.0f} ms: "
            f"{'PASS' if met else 'FAIL'} ({datetime.date.today().isoformat()}, commit {measured})"
        )
        failed |= not met
    finally:
        delete_rows()
        content_changed()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
