"""Profile the request pipeline in-process: a static file and cached pages, through the
site's WSGI application as gunicorn calls it (curation/wsgi.py: static files and cached
pages answered before Django, everything else through every middleware of MIDDLEWARE; the
request log, metrics), with no network and no gunicorn
in between.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/curation_bench \\
        REDIS_URL=redis://127.0.0.1:6379/14 STATIC_ROOT=/tmp/collected DEBUG=0 \\
        SECRET_KEY=... ALLOWED_HOSTS=127.0.0.1 SECURE_SSL_REDIRECT=0 \\
        .venv/bin/python bench/profile_pipeline.py /static/summaries/css/site.css /videos/SLUG/

Each path is requested --warm times first (the page cache keeps the page, this process
keeps its copy), then --requests times, timed; then as many again under cProfile, whose
top functions by own and by cumulative time are printed. Prints microseconds per request,
so that a change to the pipeline shows as the work it saves per answer. The environment
is the one bench/run_pages.py gives gunicorn; PROMETHEUS_MULTIPROC_DIR is set to a
temporary folder as gunicorn.conf.py sets it, and log lines go to /dev/null (set
LOG_LEVEL=INFO to include writing them).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time

os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="curation-profile-"))

import inprocess  # noqa: E402

inprocess.setup_django()

from curation.wsgi import application as site  # noqa: E402


def environ_for(path: str) -> dict:
    """A WSGI environ of a browser's GET of `path` on 127.0.0.1, as gunicorn builds it."""
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SCRIPT_NAME": "",
        "SERVER_NAME": inprocess.HOST,
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": f"{inprocess.HOST}:8000",
        "HTTP_ACCEPT_ENCODING": "gzip",
        "HTTP_USER_AGENT": "wrk",
        "REMOTE_ADDR": inprocess.HOST,
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def request(app, path: str) -> str:
    """One request through the app, its body read to the end as a server would; the status."""
    answered = []

    def start_response(status, headers, exc_info=None):
        answered.append(status)

    body = app(environ_for(path), start_response)
    try:
        for _ in body:
            pass
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    return answered[0]


def timed(app, path: str, requests: int) -> float:
    """Microseconds per request, over `requests` requests."""
    started = time.perf_counter()
    for _ in range(requests):
        request(app, path)
    return (time.perf_counter() - started) / requests * 1e6


def profiled(app, path: str, requests: int, top: int) -> str:
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(requests):
        request(app, path)
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--top", type=int, default=25, help="functions printed per table")
    parser.add_argument("--no-profile", action="store_true", help="timings only")
    args = parser.parse_args(argv)

    app = site
    for path in args.paths:
        for _ in range(args.warm):
            status = request(app, path)
        if not status.startswith("200"):
            raise SystemExit(f"{path} answered {status}")
    for path in args.paths:
        print(f"{path}: {timed(app, path, args.requests):.1f} us per request", flush=True)
    if not args.no_profile:
        for path in args.paths:
            print(f"\n=== {path} ===")
            print(profiled(app, path, args.requests, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
