"""The admin change page of a real-sized summary in Chromium: load time, HTML size, save.

    .venv/bin/python bench/run_change_page.py            # 5 loads and 5 saves, medians
    .venv/bin/python bench/run_change_page.py --help     # --repeat, --db, --redis-db, ...

Builds (or rebuilds) one summary the size of the Berman speed summary: 12 chapters of
edited transcript citing 36 sources (3 each, every source failing its check, as after a
check run from a machine without DNS), 3 key points, 4 takeaways and 3 caveats. Serves the
project with gunicorn in the production configuration (DEBUG off, collected static files)
on 127.0.0.1, signs a reviewer in with Playwright's Chromium (/usr/bin/chromium) and prints:

- load: from navigation start to the load event of the change page (median of --repeat);
- html: the size of the page's HTML document, uncompressed;
- save: from the submission of the form by "Save and continue editing" (the 30-second text
  edited) to the load event of the page it comes back to, as the browser's navigation
  timing gives it (median of --repeat); its phases (the POST until its redirect, the page
  until its first byte, the browser's work) and the time from Playwright's click, which
  adds Playwright's own checks, are printed too.

Not a test: nothing here runs in CI. Needs PostgreSQL and Redis on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import inprocess
from servers import (
    HOST,
    PYTHON,
    ROOT,
    free_port,
    production_settings,
    run,
    say,
    start_gunicorn,
    stop_gunicorn,
)

SLUG = "bench-change-page"
USERNAME = "bench-reviewer"
PASSWORD = "bench change page password"  # noqa: S105 - a local bench account
CHAPTERS, SOURCES_PER_CHAPTER = 12, 3
TARGETS = {"load": 1000.0, "html": 150 * 1024, "save": 700.0}
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PARAGRAPH = (
    "Berman explains why response speed changes how agents are used: an agent that waits "
    "for each answer spends most of its time idle, and a person reviewing its work reads "
    "far slower than the model writes. He walks through a coding session, a research task "
    "and a long refactor, noting where the waiting went and what a faster model changed. "
)


def _database_url(db: str) -> str:
    return f"postgres://postgres@{HOST}:5432/{db}"


def ensure_database(db: str, env: dict) -> None:
    """Create the bench database if missing, and migrate it."""
    listed = run(
        ["psql", "-h", HOST, "-U", "postgres", "-Atc", "SELECT datname FROM pg_database"],
        env=env,
        capture=True,
    )
    if db not in listed.split():
        say(f"creating database {db}")
        run(["createdb", "-h", HOST, "-U", "postgres", db], env=env)
    say("migrating")
    run([PYTHON, "manage.py", "migrate", "--noinput", "--skip-checks", "-v", "0"], env=env)


def build_summary() -> str:
    """The bench summary, rebuilt from scratch; the path of its change page."""
    from django.contrib.auth.models import Group, User
    from django.urls import reverse
    from django.utils import timezone

    from summaries.editing import derived, save
    from summaries.models import (
        Caveat,
        Channel,
        Chapter,
        KeyPoint,
        Source,
        Summary,
        Takeaway,
        Video,
    )

    Summary.objects.filter(video__slug=SLUG).delete()  # its parts and citations go with it
    Video.objects.filter(slug=SLUG).delete()
    channel, _ = Channel.objects.get_or_create(slug="bench-channel", defaults={"name": "Bench"})
    video = Video.objects.create(
        title="Speed Maxis Unite: Why Fast AI Models Matter for Agents (bench copy)",
        slug=SLUG,
        channel=channel,
        source_url="https://www.youtube.com/watch?v=benchChange1",
        duration_seconds=60 * 60,
        language="en",
        published_on=timezone.now().date(),
    )
    user, _ = User.objects.get_or_create(username=USERNAME, defaults={"is_staff": True})
    user.is_staff, user.is_superuser = True, True
    user.set_password(PASSWORD)
    user.save()
    for group in Group.objects.filter(name__in=["Editors", "Reviewers"]):
        user.groups.add(group)
    summary = Summary(video=video, tldr="Speed matters alongside quality for agents.")
    chapters = []
    for number in range(1, CHAPTERS + 1):
        links = " ".join(
            f"[Source {number}.{n}](https://bench-{number}-{n}.example.org/report/{number}) "
            f"measured {number * 10 + n} tokens per second."
            for n in range(1, SOURCES_PER_CHAPTER + 1)
        )
        body = "\n\n".join([PARAGRAPH * 2, links, PARAGRAPH * 3, PARAGRAPH])
        chapters.append(
            Chapter(
                title=f"Chapter {number}: what speed changes",
                start_time=number * 240,
                synopsis="What he measured and why it matters for agents.",
                body=body,
            )
        )
    key_points = [
        KeyPoint(title=f"Point {n}", body="Fast output matters for agents.", time=n * 60)
        for n in range(1, 4)
    ]
    takeaways = [Takeaway(text=f"Takeaway {n}: speed is one factor.") for n in range(1, 5)]
    caveats = [
        Caveat(text="Measured once, on one machine.", chapter=chapters[0]),
        Caveat(text="Output speed is not task time.", takeaway=takeaways[0]),
        Caveat(text="Vendor figures.", key_point=key_points[0]),
    ]
    save.save_summary(
        summary=summary,
        parts={KeyPoint: key_points, Takeaway: takeaways, Chapter: chapters, Caveat: caveats},
        user=user,
    )
    derived.sync_citations(summary=summary)
    Source.objects.filter(citations__summary=summary).update(
        state=Source.State.ERROR,
        error_class="dns",
        error="[Errno -2] Name or service not known",
        last_checked_at=timezone.now(),
    )
    citations = summary.citations.count()
    say(f"summary {summary.pk}: {CHAPTERS} chapters, {citations} citations")
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def load_time_ms(page) -> float:
    return page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return n.loadEventEnd - n.startTime; }"
    )


def phases_ms(page) -> dict:
    """Where the last navigation's time went: the redirecting POST (a save), the page's
    own request until its first byte, and the browser's work until the load event."""
    return page.evaluate(
        """() => { const n = performance.getEntriesByType('navigation')[0];
        return {post: n.redirectEnd - n.redirectStart, get: n.responseStart - n.requestStart,
                browser: n.loadEventEnd - n.responseStart,
                parse: n.domInteractive - n.responseStart,
                ready: n.domContentLoadedEventEnd - n.domInteractive,
                load: n.loadEventEnd - n.domContentLoadedEventEnd}; }"""
    )


def measure(base: str, path: str, repeat: int) -> dict:
    """Sign in, then time `repeat` loads and `repeat` saves of the change page."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/admin/login/")
        page.fill("#id_username", USERNAME)
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_selector("#user-tools")
        loads, saves, sizes, phases, clicked = [], [], [], [], []
        for _ in range(repeat + 1):  # the first load warms gunicorn's workers
            response = page.goto(base + path, wait_until="load")
            sizes.append(len(response.body()))
            loads.append(load_time_ms(page))
        loads = loads[1:]
        for n in range(repeat):
            page.fill("#id_tldr", f"Speed matters alongside quality for agents ({n}).")
            started = time.perf_counter()
            with page.expect_navigation(wait_until="load"):
                page.click("input[name=_continue]")
            clicked.append((time.perf_counter() - started) * 1000)
            saves.append(load_time_ms(page))  # from the form's submission to the load event
            phases.append(phases_ms(page))
            if "changed successfully" not in page.inner_text("ul.messagelist"):
                raise SystemExit("the save did not succeed:\n" + page.inner_text("#content"))
        browser.close()
    return {
        "load": statistics.median(loads),
        "html": statistics.median(sizes),
        "save": statistics.median(saves),
        "loads": loads,
        "saves": saves,
        "clicked": clicked,
        "phases": {
            name: statistics.median(p[name] for p in phases)
            for name in ("post", "get", "browser", "parse", "ready", "load")
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--db", default="curation_change_page", help="PostgreSQL database")
    parser.add_argument("--redis-db", type=int, default=13, help="Redis database (cache)")
    parser.add_argument("--repeat", type=int, default=5, help="loads and saves to time")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    env.update(
        production_settings(),
        DATABASE_URL=_database_url(args.db),
        REDIS_URL=f"redis://{HOST}:6379/{args.redis_db}",
    )
    ensure_database(args.db, env)
    os.environ.update(DATABASE_URL=env["DATABASE_URL"], REDIS_URL=env["REDIS_URL"])
    inprocess.setup_django()
    path = build_summary()

    static_root = Path(tempfile.mkdtemp(prefix="curation-change-page-static-"))
    env["STATIC_ROOT"] = str(static_root)
    say("collectstatic")
    run([PYTHON, "manage.py", "collectstatic", "--noinput", "--skip-checks", "-v", "0"], env=env)
    port = free_port()
    log_path = static_root / "gunicorn.log"
    gunicorn = None
    try:
        gunicorn = start_gunicorn(env, port, log_path, ready_path="/admin/login/")
        figures = measure(f"http://{HOST}:{port}", path, args.repeat)
    finally:
        stop_gunicorn(gunicorn)
    say(f"loads (ms): {', '.join(f'{v:.0f}' for v in figures['loads'])}")
    say(f"saves (ms): {', '.join(f'{v:.0f}' for v in figures['saves'])}")
    say(
        "saves timed from Playwright's click (ms): "
        + ", ".join(f"{v:.0f}" for v in figures["clicked"])
    )
    phases = figures["phases"]
    say(
        f"a save's median phases: POST until its redirect {phases['post']:.0f} ms, the page "
        f"until its first byte {phases['get']:.0f} ms, the browser until load "
        f"{phases['browser']:.0f} ms (parsing with the scripts in <head> {phases['parse']:.0f}, "
        f"deferred scripts and DOMContentLoaded {phases['ready']:.0f}, until load "
        f"{phases['load']:.0f})"
    )
    missed = []
    for name, unit, shown in (
        ("load", "ms", f"{figures['load']:.0f} ms"),
        ("html", "B", f"{figures['html'] / 1024:.0f} KB"),
        ("save", "ms", f"{figures['save']:.0f} ms"),
    ):
        target = TARGETS[name]
        limit = f"{target / 1024:.0f} KB" if unit == "B" else f"{target:.0f} ms"
        ok = figures[name] <= target
        missed += [] if ok else [name]
        say(f"{name:<5} {shown:>8}  (target <= {limit}: {'met' if ok else 'MISSED'})")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
