"""Render reader pages in-process with no cache at all: median and p90 time, and queries.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/curation_bench DEBUG=0 SECRET_KEY=... \\
        ALLOWED_HOSTS=127.0.0.1 SECURE_SSL_REDIRECT=0 REDIS_URL=redis://127.0.0.1:6379/14 \\
        .venv/bin/python bench/render_uncached.py [-n 100] [--rounds 3] [--fragments] [PATH ...]

Every reader page, rendered with the page cache and the fragment cache
off, in 10 ms or less (median) at 10,000 videos. Without paths it measures the pages
bench/run_pages.py measures: the heaviest summary of the largest generated channel
(`bench-` slugs), that channel's page and the home page.

Each request goes through the whole Django stack (django.test.Client: every middleware,
URL resolution, the view, template rendering) with a query string no other request used,
so it misses the page cache; PAGE_CACHE_FRAGMENTS is off (summaries/pagecache/fragments.py),
so every shared fragment (a channel's filter choices, a list's length) is computed afresh
as on the first request after an edit. `--fragments` keeps the fragment cache on, as every
later request sees it. No HTTP server: bench/run_pages.py measures that from outside.

The pages take turns, `--rounds` times, so that a noisy spell of a shared machine falls on
every page alike; the median is over every timed request, and each round's median is shown
beside it. Queries are counted on separate requests: capturing them makes Django format
each query's SQL with its values, which would be timed too.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

import inprocess

inprocess.setup_django()

from django.db import connection  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from summaries.reader import facets  # noqa: E402

TARGET_MEDIAN_MS = 10.0
GENERATED_PREFIX = "bench-"


def pick_pages() -> list[tuple[str, str]]:
    """(name, path) of the heaviest summary of the largest generated channel, the channel
    and the home page: what bench/run_pages.py measures."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.slug FROM summaries_channel c "
            "JOIN summaries_video v ON v.channel_id = c.id WHERE c.slug LIKE %s "
            "GROUP BY c.id, c.slug ORDER BY count(*) DESC, c.slug LIMIT 1",
            [GENERATED_PREFIX + "%"],
        )
        row = cursor.fetchone()
        if row is None:
            raise SystemExit("No generated data: run bench/generate_data.py first.")
        channel_id, channel = row
        cursor.execute(
            "SELECT v.slug FROM summaries_video v JOIN summaries_summary s ON s.video_id = v.id "
            "WHERE v.channel_id = %s ORDER BY "
            "(SELECT count(*) FROM summaries_chapter ch WHERE ch.summary_id = s.id) DESC, "
            "(SELECT count(DISTINCT ci.source_id) FROM summaries_citation ci "
            " WHERE ci.summary_id = s.id) DESC, v.published_on DESC LIMIT 1",
            [channel_id],
        )
        (slug,) = cursor.fetchone()
    return [("summary", f"/videos/{slug}/"), ("channel", f"/channels/{channel}/"), ("home", "/")]


def forget_choices() -> None:
    """As a save to one of the channel's videos does, before the worker computed them
    again: the next request computes the channel's filter choices (reader.facets)."""
    facets.forget_all()


# Measured as well, but not held to the target: the channel page for a reader who comes
# after a save and before the worker (summaries.tasks.refresh_list_facets).
AFTER_A_SAVE = "channel, choices forgotten"


def count_queries(client, path: str, requests: int = 5) -> tuple[int, int, int]:
    """(fewest, most) queries over a few requests, and the page's size: counted apart from
    the timed requests, whose time would otherwise include the capture's own work
    (Django's debug cursor formats every query's SQL with its values)."""
    counts, size = [], 0
    for n in range(requests):
        _elapsed, captured, response = inprocess.timed_get(client, path, f"count{n}")
        counts.append(len(captured))
        size = len(response.content)
    return min(counts), max(counts), size


def timed(client, path: str, requests: int, round_number: int, prepare=None) -> list[float]:
    times = []
    for n in range(requests):
        if prepare is not None:
            prepare()
        started = time.perf_counter()
        inprocess.uncached_get(client, path, f"r{round_number}-{n}")
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(pages: list[tuple[str, str]], requests: int, rounds: int) -> dict[str, dict]:
    """Per page (by name): the times of `requests` requests in each of `rounds` rounds, the
    pages taking turns, so that a noisy spell of a shared machine falls on every page alike."""
    clients = {name: inprocess.warm_client(path, 5) for name, path in pages}
    # As gunicorn.conf.py does once a worker has answered its first requests: what they
    # built (compiled templates, resolvers, compiled queries) out of later collections.
    gc.collect()
    gc.freeze()
    prepare = {name: forget_choices if name == AFTER_A_SAVE else None for name, _ in pages}
    times = {name: [] for name, _ in pages}
    round_medians = {name: [] for name, _ in pages}
    for round_number in range(rounds):
        for name, path in pages:
            got = timed(clients[name], path, requests, round_number, prepare[name])
            times[name].extend(got)
            round_medians[name].append(statistics.median(got))
    results = {}
    for name, path in pages:
        all_times = sorted(times[name])
        if prepare[name] is not None:
            prepare[name]()  # counted on one request that computes the choices
        low, high, size = count_queries(clients[name], path, 1 if prepare[name] else 5)
        results[name] = {
            "median": statistics.median(all_times),
            "p90": all_times[min(len(all_times) - 1, int(len(all_times) * 0.9))],
            "min": all_times[0],
            "round_medians": round_medians[name],
            "query_range": (low, high),
            "bytes": size,
        }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="pages to measure (default: the bench's three)")
    parser.add_argument("-n", "--requests", type=int, default=100, help="per page and round")
    parser.add_argument("--rounds", type=int, default=3, help="the pages take turns (3)")
    parser.add_argument(
        "--fragments", action="store_true", help="keep the fragment cache on (warm)"
    )
    args = parser.parse_args(argv)
    pages = [(path, path) for path in args.paths] or pick_pages()
    if not args.paths:
        channel = dict(pages)["channel"]
        pages.insert(2, (AFTER_A_SAVE, channel))
    # As gunicorn.conf.py does in each worker: long-lived objects out of the collector's way.
    gc.collect()
    gc.freeze()
    mode = "fragment cache on (warm)" if args.fragments else "page and fragment caches off"
    print(f"in-process render, {mode}; {args.rounds} rounds of {args.requests} requests per page")
    print(
        f"| {'page':<26} | {'median ms':>9} | {'p90 ms':>8} | {'min ms':>8} | "
        f"{'round medians':>20} | {'queries':>7} | {'bytes':>7} | path"
    )
    print(f"|{'-' * 28}|{'-' * 11}|{'-' * 10}|{'-' * 10}|{'-' * 22}|{'-' * 9}|{'-' * 9}|------")
    missed = []
    with override_settings(PAGE_CACHE_FRAGMENTS=args.fragments):
        results = measure(pages, args.requests, args.rounds)
        for name, path in pages:
            result = results[name]
            low, high = result["query_range"]
            spread = f"{low}" if low == high else f"{low}-{high}"
            rounds = " / ".join(f"{median:.1f}" for median in result["round_medians"])
            print(
                f"| {name:<26} | {result['median']:>9.2f} | {result['p90']:>8.2f} | "
                f"{result['min']:>8.2f} | {rounds:>20} | {spread:>7} | {result['bytes']:>7,} "
                f"| {path}"
            )
            if result["median"] > TARGET_MEDIAN_MS and name != AFTER_A_SAVE:
                missed.append(name)
    print(
        f"target: median <= {TARGET_MEDIAN_MS:.0f} ms with every cache off: "
        + (f"MISSED ({', '.join(missed)})" if missed else "met")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
