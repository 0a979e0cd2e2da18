"""Link-heavy Markdown: a chapter of links saved through the API and shown in the preview.

    .venv/bin/python bench/run_markdown.py            # 5 of each per size, medians
    .venv/bin/python bench/run_markdown.py --help     # --repeat, --chapters, --db, ...

Three chapters, each the only chapter of a summary: 1,250 links, 2,500 links, and a
100 KB chapter of links (as many as fit in MAX_SOURCE_CHARS). A link is
"[source N](https://HOST/N)", all in one paragraph. In-process, through the whole Django
stack (every middleware, DRF, the editing service) with DEBUG off, on PostgreSQL
(`--db`, created and migrated here), after a warm-up save and gc.freeze() as in a gunicorn
worker (gunicorn.conf.py), for each chapter:

- create: POST /api/v1/summaries/ of a draft with that chapter (links to hosts new in the
  run, so every source is a new row), answered with the summary as the API shows it;
- update: PATCH of the same chapter with every link text changed (every citation rebuilt);
- preview: the admin's live Markdown preview of such a chapter not converted before (POST
  field=chapters-body), as while an editor types.

Before each chapter it waits until the CPU is quiet (`--max-busy`, at most
`--settle-timeout` seconds: other people's tests share the machine). Prints the times
(median of --repeat, and this process's CPU time) against the targets (a save <= 1 s, a
preview <= 300 ms) and exits 1 when a time misses one. The broker and the cache are kept
in a temporary folder (CURATION_VAR_DIR): the check batches the saves queue go nowhere.
Not a test: nothing here runs in CI. Needs PostgreSQL on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import inprocess
from run_change_page import ensure_database
from servers import HOST, ROOT, production_settings, say, settle

TARGETS_MS = {"create": 1000.0, "update": 1000.0, "preview": 300.0}
USERNAME = "bench-markdown"
VIDEO_SLUG = "bench-markdown-{size}-{run}"


def links(count: int, host: str, label: str = "source") -> str:
    return " ".join(f"[{label} {n}](https://{host}/{n})" for n in range(count))


def links_filling(limit: int, host: str) -> int:
    """How many links of `links` fit in `limit` characters."""
    count = int(limit / len(f"[source 1000](https://{host}/1000) "))
    while len(links(count + 1, host)) <= limit:
        count += 1
    while len(links(count, host)) > limit:
        count -= 1
    return count


def chapter_sizes() -> dict[str, int]:
    from summaries.text.markdown import MAX_SOURCE_CHARS

    return {
        "1,250 links": 1_250,
        "2,500 links": 2_500,
        "100 KB of links": links_filling(MAX_SOURCE_CHARS, "x000.org"),
    }


CHAPTERS = {"1250": "1,250 links", "2500": "2,500 links", "100kb": "100 KB of links"}


def prepare():
    """A clean catalogue for the bench: its channel and an editor who may do everything;
    the summaries, videos and sources of earlier runs removed. (API client, admin client.)"""
    from django.contrib.auth.models import User
    from django.test import Client
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from summaries.models import Channel, Source, Summary, Video

    Summary.objects.filter(video__slug__startswith="bench-markdown-").delete()
    Video.objects.filter(slug__startswith="bench-markdown-").delete()
    Source.objects.filter(url__regex=r"^https://x[0-9a-z]{3}\.org/").delete()
    Channel.objects.get_or_create(slug="bench-markdown", defaults={"name": "Bench Markdown"})
    user, _ = User.objects.get_or_create(username=USERNAME)
    user.is_staff, user.is_superuser = True, True
    user.save()
    token, _ = Token.objects.get_or_create(user=user)
    api = APIClient(HTTP_HOST=HOST)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    admin = Client(HTTP_HOST=HOST)
    admin.force_login(user)
    return api, admin


def payload(slug: str, body: str, run: int) -> dict:
    return {
        "video": {
            "slug": slug,
            "title": "Link-heavy chapter (bench)",
            "channel": "bench-markdown",
            "source_url": f"https://www.youtube.com/watch?v=benchmd{run:04d}",
            "duration": "1:00:00",
            "published_on": "2026-12-01",
        },
        "tldr": "A chapter made of links.",
        "chapters": [{"title": "Links", "body": body}],
    }


def timed(expected: int, request, *args, **kwargs):
    """(milliseconds, CPU milliseconds of this process, response) of `request(*args,
    **kwargs)`; any status but `expected` ends the script."""
    started, cpu = time.perf_counter(), time.process_time()
    response = request(*args, **kwargs)
    elapsed = (time.perf_counter() - started) * 1000
    cpu = (time.process_time() - cpu) * 1000
    if response.status_code != expected:
        raise SystemExit(f"answered {response.status_code}: {response.content[:500]!r}")
    return elapsed, cpu, response


def measure(api, admin, name: str, count: int, repeat: int, first_run: int) -> dict:
    """Medians of `repeat` creates, updates and previews of a chapter of `count` links:
    {kind: (milliseconds, CPU milliseconds)}."""
    from django.urls import reverse

    preview_url = reverse("admin:summaries_summary_markdown_preview")
    times = {"create": [], "update": [], "preview": []}
    for run in range(first_run, first_run + repeat):
        host = f"x{run:03x}.org"  # new hosts: new sources
        body = links(count, host)
        slug = VIDEO_SLUG.format(size=count, run=run)
        url = f"/api/v1/summaries/{slug}/"
        *figures, created = timed(
            201, api.post, "/api/v1/summaries/", payload(slug, body, run), format="json"
        )
        times["create"].append(figures)
        changed = {"chapters": [{"title": "Links", "body": links(count, host, "cited")}]}
        *figures, _ = timed(
            200, api.patch, url, changed, format="json", HTTP_IF_MATCH=created["ETag"]
        )
        times["update"].append(figures)
        # Text not converted before, as an editor's typing is.
        previewed = {"field": "chapters-body", "text": links(count, f"y{run:03x}.org")}
        *figures, answer = timed(200, admin.post, preview_url, previewed)
        if answer.json()["problems"]:
            raise SystemExit(f"the preview found problems: {answer.json()['problems'][:3]}")
        times["preview"].append(figures)
    say(
        f"{name}: {len(body):,} characters; "
        + "; ".join(
            f"{kind} {', '.join(f'{ms:.0f}' for ms, _ in runs)} ms" for kind, runs in times.items()
        )
    )
    return {
        kind: (statistics.median(ms for ms, _ in runs), statistics.median(c for _, c in runs))
        for kind, runs in times.items()
    }


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--db", default="curation_bench_markdown", help="PostgreSQL database")
    parser.add_argument("--repeat", type=int, default=5, help="saves and previews per size")
    parser.add_argument(
        "--chapters", nargs="+", choices=CHAPTERS, default=list(CHAPTERS), help="which chapters"
    )
    parser.add_argument(
        "--max-busy", type=float, default=0.15, help="wait for the CPU to be this idle"
    )
    parser.add_argument(
        "--settle-timeout", type=float, default=180, help="seconds to wait for a quiet CPU"
    )
    args = parser.parse_args(argv)

    var_dir = Path(tempfile.mkdtemp(prefix="curation-bench-markdown-"))
    (var_dir / "static").mkdir()  # STATIC_ROOT: whitenoise warns when it is missing
    env = dict(os.environ)
    env.pop("REDIS_URL", None)
    env.update(
        production_settings(),
        DATABASE_URL=f"postgres://postgres@{HOST}:5432/{args.db}",
        CURATION_VAR_DIR=str(var_dir),
    )
    try:
        ensure_database(args.db, env)
        os.environ.pop("REDIS_URL", None)
        os.environ.update(env)
        inprocess.setup_django()
        api, admin = prepare()
        say(f"commit {commit()}; {args.repeat} of each per size, after one warm-up save")
        measure(api, admin, "warm-up", 10, 1, first_run=0)
        # As a gunicorn worker does after start-up and its first requests (gunicorn.conf.py):
        # the objects of start-up leave the collector's full passes.
        gc.collect()
        gc.freeze()
        results = {}
        sizes = chapter_sizes()
        for number, (key, name) in enumerate(CHAPTERS.items(), start=1):
            if key not in args.chapters:
                continue
            count = sizes[name]
            waited, busy = settle(args.max_busy, args.settle_timeout)
            say(f"{name}: the machine was {busy:.0%} busy after {waited:.0f} s of waiting")
            results[name] = measure(api, admin, name, count, args.repeat, number * 100)
    finally:
        shutil.rmtree(var_dir, ignore_errors=True)

    say("")
    say(f"{'chapter':<17}{'create':>18}{'update':>18}{'preview':>18}   (medians: time, CPU)")
    missed = []
    for name, medians in results.items():
        row = "".join(f"{ms:>7.0f} ms ({cpu:>4.0f})" for ms, cpu in medians.values())
        say(f"{name:<17}{row}")
        missed += [f"{name} {kind}" for kind, (ms, _) in medians.items() if ms > TARGETS_MS[kind]]
    say(
        f"targets: a save (create, update) <= {TARGETS_MS['create']:.0f} ms, "
        f"a preview <= {TARGETS_MS['preview']:.0f} ms: "
        + (f"MISSED ({', '.join(missed)})" if missed else "met")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
