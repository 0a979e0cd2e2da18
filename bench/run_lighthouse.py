"""Audit the home and demo summary pages with Lighthouse, mobile and desktop, in production.

    .venv/bin/python bench/run_lighthouse.py [--runs 3] [--redis-url redis://127.0.0.1:6379/13]

Lighthouse 12.2.3 (npm, installed into bench/.lighthouse/ on first use; git-ignored) runs on
this machine's Node with Debian's Chromium (/usr/bin/chromium) against the production
configuration: gunicorn `curation.wsgi -w 2` on 127.0.0.1 with DEBUG=0, a random SECRET_KEY,
ALLOWED_HOSTS=127.0.0.1, SECURE_SSL_REDIRECT=0, static files collected into a temporary
STATIC_ROOT (whitenoise, compressed manifest storage), and a fresh SQLite database holding
the demo (`manage.py load_demo`) in a temporary CURATION_VAR_DIR. The page cache is the
file cache in that folder, or Redis when --redis-url is given (a spare database: it is
emptied).

Every page is audited in both modes --runs times (mobile is Lighthouse's default: a
Moto G Power with simulated slow 4G and 4x CPU throttling; desktop is `--preset=desktop`),
all four categories. The JSON reports go to bench/lighthouse-reports/ (git-ignored); the
script prints the scores of every run, a table (lowest–highest of the runs), then every
audit that scored below 1 in any run (id, title, score, displayValue). It exits 1 when
any category of any run is below 100.

Performance is simulated from what Chromium did on this machine: the main-thread time it
observes is multiplied by the CPU throttling factor, so work of other processes shows up
as Total Blocking Time. Before each audit the script waits (up to --settle-timeout) for
the CPU to be quiet (--max-busy) and prints the busy share it found and Lighthouse's
benchmarkIndex (below 1000 Lighthouse warns that the host is slower than it expects).

--commit REV serves the files of a commit (git archive) instead of the working tree,
which other people may be editing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from servers import (
    HOST,
    PYTHON,
    ROOT,
    free_port,
    http_status,
    production_settings,
    run,
    say,
    settle,
    start_gunicorn,
    stop_gunicorn,
)

BENCH = Path(__file__).resolve().parent
LIGHTHOUSE_VERSION = "12.2.3"
LIGHTHOUSE_DIR = BENCH / ".lighthouse"
REPORTS = BENCH / "lighthouse-reports"
CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = (
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
    "--disable-background-networking --disable-component-update --disable-sync"
)
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
MODES = ("mobile", "desktop")


def lighthouse_bin() -> Path:
    """The pinned Lighthouse, installed with npm into bench/.lighthouse/ when missing."""
    binary = LIGHTHOUSE_DIR / "node_modules" / ".bin" / "lighthouse"
    package = LIGHTHOUSE_DIR / "node_modules" / "lighthouse" / "package.json"
    if package.exists() and json.loads(package.read_text())["version"] == LIGHTHOUSE_VERSION:
        return binary
    if shutil.which("npm") is None:
        raise SystemExit("npm is needed to install Lighthouse (apt-get install -y npm)")
    LIGHTHOUSE_DIR.mkdir(exist_ok=True)
    say(f"npm install lighthouse@{LIGHTHOUSE_VERSION} into {LIGHTHOUSE_DIR}")
    run(
        [
            "npm",
            "install",
            "--prefix",
            str(LIGHTHOUSE_DIR),
            "--no-audit",
            "--no-fund",
            "--save-exact",
            f"lighthouse@{LIGHTHOUSE_VERSION}",
        ]
    )
    return binary


def server_env(var_dir: Path, static_root: Path, redis_url: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CACHE_URL", "REDIS_URL", "DATABASE_URL", "DATABASE_REPLICA_URL")
    }
    env.update(
        production_settings(),
        CURATION_VAR_DIR=str(var_dir),
        DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}",
        STATIC_ROOT=str(static_root),
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def empty_redis(url: str) -> None:
    import redis  # the project's dependency (celery[redis])

    client = redis.Redis.from_url(url)
    client.flushdb()


def export_commit(commit: str, into: Path) -> None:
    """The files of `commit` (not the working tree, which others may be editing) in `into`."""
    into.mkdir()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


AUDIT_ATTEMPTS = 3


def audit(binary: Path, url: str, mode: str, out: Path, save_assets: bool = False) -> dict:
    command = [
        str(binary),
        url,
        f"--chrome-flags={CHROME_FLAGS}",
        "--output=json",
        f"--output-path={out}",
        f"--only-categories={','.join(CATEGORIES)}",
        "--quiet",
    ]
    if mode == "desktop":
        command.append("--preset=desktop")
    if save_assets:
        command.append("--save-assets")  # the trace and DevTools log beside the report
    env = {**os.environ, "CHROME_PATH": CHROMIUM}
    for attempt in range(1, AUDIT_ATTEMPTS + 1):
        # Lighthouse sometimes fails to record the page load's trace ("NO_NAVSTART") and
        # exits 1 without a report: that says nothing about the page, so audit it again.
        if subprocess.run(command, cwd=ROOT, env=env).returncode == 0:
            return json.loads(out.read_text())
        say(f"    Lighthouse failed (attempt {attempt} of {AUDIT_ATTEMPTS})")
    raise SystemExit(f"Lighthouse failed {AUDIT_ATTEMPTS} times on {url} ({mode})")


def scores(report: dict) -> dict[str, int]:
    return {name: round(100 * (report["categories"][name]["score"] or 0)) for name in CATEGORIES}


def below_one(report: dict) -> list[tuple[str, str, float | None, str]]:
    """Audits counted in a category's score that scored below 1 (or could not score)."""
    counted = {
        ref["id"]
        for name in CATEGORIES
        for ref in report["categories"][name]["auditRefs"]
        if ref["weight"] > 0 or name != "performance"
    }
    failing = []
    for audit_id, result in report["audits"].items():
        mode = result.get("scoreDisplayMode")
        if audit_id not in counted or mode in ("notApplicable", "manual", "informative"):
            continue
        if mode == "error" or (result.get("score") is not None and result["score"] < 1):
            failing.append(
                (audit_id, result["title"], result.get("score"), result.get("displayValue", ""))
            )
    return failing


def metrics(report: dict) -> str:
    names = {
        "first-contentful-paint": "FCP",
        "largest-contentful-paint": "LCP",
        "total-blocking-time": "TBT",
        "cumulative-layout-shift": "CLS",
        "speed-index": "SI",
    }
    return ", ".join(
        f"{short} {report['audits'][key].get('displayValue', '?')}" for key, short in names.items()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="audits of each page and mode")
    parser.add_argument("--redis-url", default="", help="a spare Redis database (emptied)")
    parser.add_argument("--mode", choices=MODES, action="append", help="default: both")
    parser.add_argument(
        "--max-busy",
        type=float,
        default=0.25,
        help="CPU share (all cores) above which an audit waits for the machine to quieten",
    )
    parser.add_argument("--settle-timeout", type=float, default=120.0)
    parser.add_argument(
        "--save-assets", action="store_true", help="keep each audit's trace (to find long tasks)"
    )
    parser.add_argument("--page", choices=("home", "summary"), action="append")
    parser.add_argument(
        "--commit",
        help="serve the files of this commit (git archive into a temporary folder) instead "
        "of the working tree",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 10:
        parser.error("--runs must be 1-10")
    modes = args.mode or list(MODES)
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    binary = lighthouse_bin()

    var_dir = Path(tempfile.mkdtemp(prefix="curation-lighthouse-"))
    static_root = var_dir / "static"
    env = server_env(var_dir, static_root, args.redis_url)
    server = None
    try:
        source = ROOT
        if args.commit:
            source = var_dir / "source"
            export_commit(args.commit, source)
            say(f"serving {args.commit} from {source}")
        say("migrate, load_demo, collectstatic")
        manage = [PYTHON, "manage.py"]
        run([*manage, "migrate", "--noinput", "-v", "0"], env=env, cwd=source)
        run([*manage, "load_demo"], env=env, capture=True, cwd=source)
        run(
            [*manage, "collectstatic", "--noinput", "--skip-checks", "-v", "0"],
            env=env,
            cwd=source,
        )
        slug = run(
            [
                PYTHON,
                "-c",
                "import django; django.setup(); from summaries.demo import data; "
                "print(data.MAIN_VIDEO['slug'])",
            ],
            env=env,
            capture=True,
            cwd=source,
        ).strip()
        if args.redis_url:
            empty_redis(args.redis_url)

        port = free_port()
        server = start_gunicorn(
            env, port, var_dir / "gunicorn.log", ready_path="/robots.txt", cwd=source
        )
        base = f"http://{HOST}:{port}"
        pages = [("home", "/"), ("summary", f"/videos/{slug}/")]
        pages = [(name, path) for name, path in pages if name in (args.page or (name,))]
        for name, path in pages:
            status = http_status(base + path)  # also warms the page cache
            say(f"  {name:<8} {path}  {status}")
            if status != 200:
                raise SystemExit(f"{path} answered {status}")

        REPORTS.mkdir(exist_ok=True)
        results: list[tuple[str, str, int, dict]] = []
        busy_runs: list[str] = []
        for n in range(1, args.runs + 1):
            for name, path in pages:
                for mode in modes:
                    out = REPORTS / f"{name}-{mode}-{n}.json"
                    _, busy = settle(args.max_busy, args.settle_timeout)
                    report = audit(binary, base + path, mode, out, args.save_assets)
                    results.append((name, mode, n, report))
                    if busy > args.max_busy:
                        busy_runs.append(f"{name}/{mode}#{n} ({busy:.0%})")
                    got = scores(report)
                    say(
                        f"run {n} {name:<8} {mode:<8} "
                        + " ".join(f"{c} {got[c]}" for c in CATEGORIES)
                        + f"  ({metrics(report)}; CPU busy before {busy:.0%}, "
                        f"benchmarkIndex {report['environment']['benchmarkIndex']:.0f})"
                    )
                    for warning in report.get("runWarnings", []):
                        say(f"    warning: {warning.split('. ')[0]}")
    finally:
        stop_gunicorn(server)
        shutil.rmtree(var_dir, ignore_errors=True)

    say("")
    # Each cell: the lowest–highest score of the runs; benchmarkIndex: Lighthouse's measure
    # of the host's speed at the start of each run (lower is slower).
    say(f"| page | mode | runs | {' | '.join(CATEGORIES)} | benchmarkIndex |")
    say("|" + " --- |" * (4 + len(CATEGORIES)))
    perfect = True
    for name, _ in pages:
        for mode in modes:
            runs = [scores(r) for p, m, _, r in results if p == name and m == mode]
            cells = []
            for category in CATEGORIES:
                values = sorted(s[category] for s in runs)
                perfect &= values[0] == 100
                cells.append(
                    str(values[0]) if values[0] == values[-1] else f"{values[0]}–{values[-1]}"
                )
            index = sorted(
                round(r["environment"]["benchmarkIndex"])
                for p, m, _, r in results
                if p == name and m == mode
            )
            cells.append(f"{index[0]}–{index[-1]}")
            say(f"| {name} | {mode} | {len(runs)} | {' | '.join(cells)} |")

    failing: dict[tuple[str, str], list[str]] = {}
    for name, mode, n, report in results:
        for audit_id, title, score, display in below_one(report):
            where = f"{name}/{mode}#{n}: score {score} {display}".rstrip()
            failing.setdefault((audit_id, title), []).append(where)
    if failing:
        say("\naudits below 1:")
        for (audit_id, title), where in sorted(failing.items()):
            say(f"  {audit_id}: {title}")
            for line in where:
                say(f"    {line}")
    if busy_runs:
        say(f"\nstarted on a busy CPU (over {args.max_busy:.0%}): {', '.join(busy_runs)}")
    say(f"\nreports: {REPORTS.relative_to(ROOT)}/")
    return 0 if perfect else 1


def _stop_on_signal(signum, frame):  # SIGTERM/SIGHUP: unwind so that gunicorn is stopped
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_on_signal)
    signal.signal(signal.SIGHUP, _stop_on_signal)
    sys.exit(main())
