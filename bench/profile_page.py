"""Profile uncached reader pages in-process: queries, SQL time and the functions that dominate.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/curation_bench DEBUG=0 SECRET_KEY=... \\
        ALLOWED_HOSTS=127.0.0.1 CSRF_TRUSTED_ORIGINS=http://127.0.0.1 SECURE_SSL_REDIRECT=0 \\
        .venv/bin/python bench/profile_page.py /videos/SLUG/ /channels/SLUG/ /

bench/run_pages.py runs it (with its environment) when a target is missed. Each request gets
a query string of its own, so every one misses the page cache and renders the page, exactly
as in the uncached wrk runs (fragments shared by many pages, such as a channel's filter
choices, come from the cache there too). Prints, per page: wall time per request, the same
with every cached fragment stale (as right after an edit), the number of queries and their
total time, the slowest queries, the time spent in the main parts of the page (related
videos, chapters, SEO data, template rendering) and the top functions by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import re
import statistics
import sys
import time

import inprocess

inprocess.setup_django()

from django.core.handlers.wsgi import WSGIHandler  # noqa: E402

from summaries.pagecache.generation import content_changed  # noqa: E402

# (label, file suffix, function name): cumulative time of these is reported per request.
PARTS = [
    ("related videos", "summaries/reader/related.py", "related_videos"),
    ("chapters + caveats", "summaries/reader/presentation.py", "chapters_for_page"),
    ("SEO social tags", "summaries/reader/seo.py", "social_meta"),
    ("SEO JSON-LD", "summaries/reader/seo.py", "video_object_jsonld"),
    ("view get_object", "django/views/generic/detail.py", "get_object"),
    ("paginate queryset", "django/views/generic/list.py", "paginate_queryset"),
    ("template render", "django/template/response.py", "rendered_content"),
    ("SQL (cursor execute)", "django/db/backends/utils.py", "_execute"),
    ("cache get/set", "django/core/cache/backends/redis.py", "get"),
    ("cache get/set", "django/core/cache/backends/redis.py", "set"),
]


_LITERAL = re.compile(r"'(?:[^']|'')*'(?:::\w+)?|\b\d+(?:\.\d+)?\b")


def _shape(sql: str) -> str:
    """The query with its literals replaced, so that runs of the same query group together."""
    return _LITERAL.sub("?", sql or "(compiled query, run with bound parameters)")


def _get(client, path: str, n: int):
    return inprocess.uncached_get(client, path, f"profile-{n}")


def profile(path: str, requests: int) -> None:
    client = inprocess.warm_client(path, 3)

    times, query_counts, sql_ms, queries = [], [], [], []
    for n in range(requests):
        elapsed, captured, _response = inprocess.timed_get(client, path, f"profile-{n}")
        times.append(elapsed)
        query_counts.append(len(captured))
        sql_ms.append(sum(float(q["time"]) for q in captured) * 1000)
        queries.extend(captured)

    # As after an edit: the page and every fragment it reads (a channel's filter choices,
    # a list's length) are stale.
    cold = []
    for n in range(requests):
        content_changed()
        started = time.perf_counter()
        _get(client, path, 500 + n)
        cold.append((time.perf_counter() - started) * 1000)

    profiler = cProfile.Profile()
    profiler.enable()
    for n in range(requests):
        _get(client, path, 1000 + n)
    profiler.disable()

    print(f"\n== {path}")
    print(
        f"wall {statistics.median(times):.1f} ms per request (median of {requests}, "
        f"max {max(times):.1f}); {statistics.median(query_counts):.0f} queries, "
        f"SQL {statistics.median(sql_ms):.1f} ms"
    )
    print(
        f"cold {statistics.median(cold):.1f} ms per request (median of {requests}, "
        f"max {max(cold):.1f}): every cached fragment stale, as right after an edit"
    )
    slowest: dict[str, list[float]] = {}
    for query in queries:
        slowest.setdefault(_shape(query["sql"]), []).append(float(query["time"]) * 1000)
    ranked = sorted(slowest.items(), key=lambda item: -sum(item[1]) / requests)[:5]
    print("slowest queries (ms per request, then SQL):")
    for sql, durations in ranked:
        print(
            f"  {sum(durations) / requests:7.2f} ms in {len(durations) / requests:.0f} "
            f"quer{'y' if len(durations) == requests else 'ies'}: {sql[:600]}"
        )

    stats = pstats.Stats(profiler)
    parts: dict[str, float] = {}
    for label, suffix, function in PARTS:
        # The outermost of same-named functions in one file (RedisCache.get calls
        # RedisCacheClient.get): the largest cumulative time, not the sum.
        cumulative = max(
            (
                row[3]
                for (filename, _, name), row in stats.stats.items()
                if filename.endswith(suffix) and name == function
            ),
            default=0.0,
        )
        if cumulative:
            parts[label] = parts.get(label, 0.0) + cumulative
    total = sum(row[3] for key, row in stats.stats.items() if key[2] == "get_response")
    print(
        f"time per request in (cumulative, profiled, so slower than wall; "
        f"whole request {total / requests * 1000:.1f} ms):"
    )
    for label, seconds in parts.items():
        print(f"  {seconds / requests * 1000:7.2f} ms  {label}")
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    print("top functions by own time:")
    print("\n".join(out.getvalue().splitlines()[6:]))


def profile_cached(path: str, requests: int) -> None:
    """A page served from the warm page cache: Django's own time per request, in-process."""
    handler = WSGIHandler()

    def call() -> None:
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1",
            "wsgi.input": io.BytesIO(),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
        }
        statuses = []
        body = handler(environ, lambda status, headers, exc_info=None: statuses.append(status))
        b"".join(body)
        body.close()
        if not statuses[0].startswith("200"):
            raise SystemExit(f"{path} answered {statuses[0]}")

    call()  # fills the cache
    started = time.perf_counter()
    for _ in range(requests):
        call()
    wall = (time.perf_counter() - started) / requests * 1000
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        call()
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = sum(row[3] for key, row in stats.items() if key[2] == "get_response")
    in_cache = max(
        (
            row[3]
            for (filename, _, name), row in stats.items()
            if filename.endswith("django/core/cache/backends/redis.py") and name == "get"
        ),
        default=0.0,
    )
    share = in_cache / total if total else 0.0
    print(
        f"cached {path}: {wall:.2f} ms per request in Django (in-process, no HTTP server); "
        f"{share:.0%} of it in the Redis cache backend"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("-n", "--requests", type=int, default=20)
    args = parser.parse_args(argv)
    for path in args.paths:
        profile(path, args.requests)
    print()
    for path in args.paths:
        profile_cached(path, 10 * args.requests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
