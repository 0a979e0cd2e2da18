"""Recomputing every related list: seconds and ms per video at 1,000, 10,000 and 50,000 videos.

    .venv/bin/python bench/run_related.py [--sizes 1000,10000,50000] [--db curation_related]
        [--redis-db 14] [--lock /tmp/bench.lock]

For each size N, a PostgreSQL database `<--db>_<N>` on 127.0.0.1 (created with createdb if
missing, migrated, and filled by bench/generate_data.py --reset --no-related --related-only
when it holds fewer generated videos than N: only what related lists read). Once every
database is ready (and --lock is held), in each database, in a process of its own, the bulk
recomputation every related list goes through (`manage.py refresh_related --all`:
reader.related_bulk.refresh_all_related over every live video, loading, ranking and
writing) is timed. At --old-size (1,000) the per-video path (reader.related.refresh_related
for every live video, one after the other, what the command did before) is timed first, and
the lists both store are compared: they must be identical. Last, the publish path:
refresh_related_around for one video (its list and its neighbours'). Prints a table, with
the load average before and after each size, and the curve: each size's seconds and ms a
video against the smallest size's.

Target: 10,000 videos in at most 60 s. Generation takes about 10 s per 1,000 videos on two
busy cores (--skip-larger-than skips sizes whose database would have to be generated
beyond that many videos). Not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
HOST = "127.0.0.1"
TARGET_SIZE, TARGET_SECONDS = 10_000, 60.0
PREFIX = "bench-"  # generate_data.py's slug prefix


def psql(db: str, sql: str, **variables: str) -> str:
    """Run SQL with psql; `:'name'` in the SQL is the quoted value of variable `name`."""
    command = ["psql", "-h", HOST, "-U", "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-At"]
    for name, value in variables.items():
        command += ["-v", f"{name}={value}"]
    completed = subprocess.run(command, check=True, text=True, input=sql, capture_output=True)
    return completed.stdout.strip()


def ensure_database(name: str, videos: int, env: dict, limit: int | None) -> bool:
    """Create, migrate and fill `name` with `videos` generated videos; False when it would
    have to be generated and `videos` is over `limit`."""
    if not psql("postgres", "SELECT 1 FROM pg_database WHERE datname = :'name'", name=name):
        if limit is not None and videos > limit:
            print(f"{name}: missing, {videos} videos wanted: skipped", flush=True)
            return False
        subprocess.run(["createdb", "-h", HOST, "-U", "postgres", name], check=True)
    subprocess.run(
        [PYTHON, "manage.py", "migrate", "--noinput", "--skip-checks", "-v", "0"],
        check=True,
        env=env,
        cwd=ROOT,
    )
    generated = "SELECT count(*) FROM summaries_video WHERE slug LIKE :'prefix' || '%'"
    count = int(psql(name, generated, prefix=PREFIX))
    if count >= videos:
        print(f"{name}: {count} generated videos present, reusing them", flush=True)
        return True
    if limit is not None and videos > limit:
        print(f"{name}: {count} generated videos, {videos} wanted: skipped", flush=True)
        return False
    print(f"{name}: generating {videos} videos", flush=True)
    generate = [PYTHON, "bench/generate_data.py", "--videos", str(videos), "--reset"]
    subprocess.run([*generate, "--no-related", "--related-only"], check=True, env=env, cwd=ROOT)
    return True


def measure(old: bool) -> dict:
    """In the database of DATABASE_URL: the timings, as one JSON-able dictionary."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
    import django

    django.setup()
    from django.utils import timezone

    from summaries.models import RelatedLink, Video
    from summaries.reader.related import refresh_related, refresh_related_around
    from summaries.reader.related_bulk import refresh_all_related

    def stored() -> list[tuple]:
        rows = RelatedLink.objects.order_by("video_id", "position")
        return list(rows.values_list("video_id", "related_id", "position", "score", "reasons"))

    now = timezone.now()
    live = list(Video.objects.published(now).order_by("pk"))
    result: dict = {"videos": len(live), "load_before": os.getloadavg()[0]}
    if old:
        started = time.perf_counter()
        for video in live:
            refresh_related(video=video, now=now)
        result["old_seconds"] = time.perf_counter() - started
        one_by_one = stored()
        RelatedLink.objects.all().delete()
    started = time.perf_counter()
    result["lists"] = refresh_all_related(now=now)
    result["seconds"] = time.perf_counter() - started
    result["links"] = RelatedLink.objects.count()
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if old:
        result["identical"] = stored() == one_by_one
    # The publish path: a video in the middle of the catalogue and its neighbours' lists.
    video = live[len(live) // 2]
    started = time.perf_counter()
    result["publish_lists"] = len(refresh_related_around(video=video, now=now))
    result["publish_seconds"] = time.perf_counter() - started
    result["load_after"] = os.getloadavg()[0]
    return result


def environment(args, size: int) -> dict:
    """The environment of the processes working on the database of `size` videos."""
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@{HOST}:5432/{args.db}_{size}",
        "REDIS_URL": f"redis://{HOST}:6379/{args.redis_db}",
    }


def measure_size(args, size: int) -> dict:
    """The timings in the database of `size` videos, in a process of its own."""
    command = [PYTHON, __file__, "--measure", *(["--old"] if size == args.old_size else [])]
    env = environment(args, size)
    out = subprocess.run(command, check=True, env=env, cwd=ROOT, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def held(path: str | None):
    """An exclusive lock on the file `path` (none without a path), so that timed runs of
    several benchmarks sharing a machine never overlap (`flock PATH command` takes the
    same lock)."""
    if path is None:
        yield
        return
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def report(results: dict[int, dict]) -> None:
    print("\nvideos  live   bulk s  ms/video  peak RSS MB  load  publish  per-video path")
    for size, r in results.items():
        old = ""
        if "old_seconds" in r:
            old_ms = 1000 * r["old_seconds"] / r["videos"]
            same = "identical lists" if r["identical"] else "LISTS DIFFER"
            old = f"{r['old_seconds']:.1f} s, {old_ms:.1f} ms/video ({same})"
        ms = 1000 * r["seconds"] / max(1, r["videos"])
        print(
            f"{size:>6}  {r['videos']:>5}  {r['seconds']:>6.1f}  {ms:>8.2f}"
            f"  {r['peak_rss_mb']:>11.0f}  {load(r):>4}  {r['publish_seconds']:.1f} s"
            f"/{r['publish_lists']}  {old}"
        )
    print_curve(results)
    if TARGET_SIZE in results:
        seconds = results[TARGET_SIZE]["seconds"]
        verdict = "met" if seconds <= TARGET_SECONDS else "MISSED"
        print(f"target {TARGET_SIZE} videos <= {TARGET_SECONDS:.0f} s: {seconds:.1f} s, {verdict}")


def load(result: dict) -> str:
    """The one-minute load average before and after a measurement, as "6-7"."""
    low, high = sorted(round(result[key]) for key in ("load_before", "load_after"))
    return str(low) if low == high else f"{low}-{high}"


def print_curve(results: dict[int, dict]) -> None:
    """How the cost grows: each size's seconds and ms a video against the smallest size's."""
    if not results:
        return
    base = results[min(results)]
    base_ms = 1000 * base["seconds"] / max(1, base["videos"])
    steps = []
    for r in (results[size] for size in sorted(results)):
        ms = 1000 * r["seconds"] / max(1, r["videos"])
        time_ratio, size_ratio = r["seconds"] / base["seconds"], r["videos"] / base["videos"]
        steps.append(
            f"{r['videos']:,} videos {r['seconds']:.1f} s ({ms:.1f} ms a video; x{time_ratio:.1f}"
            f" the time for x{size_ratio:.0f} the videos, x{ms / base_ms:.1f} a video)"
        )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(f"curve ({time.strftime('%Y-%m-%d', time.gmtime())}, commit {commit or '?'}):")
    for step in steps:
        print(f"  {step}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="comma-separated")
    parser.add_argument("--db", default="curation_related", help="database name prefix")
    parser.add_argument("--redis-db", type=int, default=14, help="a spare Redis database")
    parser.add_argument(
        "--skip-larger-than", type=int, default=None, help="generate no database above this"
    )
    parser.add_argument(
        "--old-size", type=int, default=1000, help="time the per-video path at this size too"
    )
    parser.add_argument(
        "--lock", default=None, help="hold an exclusive lock on this file while timing"
    )
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--old", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.old)))
        return 0
    sizes = sorted(int(size) for size in args.sizes.split(","))
    # Every database is made ready first, so that the lock is held only while timing.
    limit = args.skip_larger_than
    ready = [
        size
        for size in sizes
        if ensure_database(f"{args.db}_{size}", size, environment(args, size), limit)
    ]
    results = {}
    with held(args.lock):
        for size in ready:
            results[size] = measure_size(args, size)
            print(f"{size}: {json.dumps(results[size])}", flush=True)
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
