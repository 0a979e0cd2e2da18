"""gunicorn settings, read from the working directory by `gunicorn curation.wsgi`.

The garbage collector, metrics and the grace period of a shutdown are set here; bind,
workers and request timeouts stay on the command line.

A full collection walks every object in the process, and a Django process holds hundreds
of thousands of long-lived ones (modules, compiled templates, URL patterns): about 40 ms
each time, which lands on a reader's request. Freezing what exists after start-up,
and again once the first requests have compiled templates and resolvers, takes those
objects out of every later collection (about 9 ms then). See the `gc.freeze` docs.
"""

import gc
import os
import shutil
import tempfile
from pathlib import Path

import environ
from gunicorn import glogging

from summaries.ops.logformat import JsonFormatter

# On SIGTERM gunicorn stops taking connections at once (a new one is refused, or reset),
# lets each worker finish the requests it is answering, and SIGKILLs the workers still
# busy after this many seconds (their requests are lost). Keep it above the slowest
# request that should survive a deploy, and below the orchestrator's own grace period
# (Kubernetes' terminationGracePeriodSeconds is 30 s by default), so that gunicorn, not a
# SIGKILL from outside, decides what is cut off. Tested in
# tests/integration/test_graceful_shutdown.py.
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "25"))

# Requests after which what the process built for them (lazily loaded templates, URL
# resolvers, cached settings) is frozen too.
_FREEZE_AFTER_REQUESTS = 20


def post_worker_init(worker):
    gc.collect()
    gc.freeze()


def post_request(worker, req, environ, resp):
    worker.curation_requests = getattr(worker, "curation_requests", 0) + 1
    if worker.curation_requests == _FREEZE_AFTER_REQUESTS:
        gc.collect()
        gc.freeze()


# Metrics (summaries/ops/metrics.py): each worker writes its counts to files in
# PROMETHEUS_MULTIPROC_DIR and a scrape, whichever worker answers it, sums them
# (prometheus-client's multiprocess mode). Workers must find the variable when they import
# prometheus_client, so it is set here in the master: a new folder of this gunicorn's own,
# removed when it exits, unless one is given (then emptied when gunicorn starts).
_METRICS_PREFIX = "curation-metrics-"
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _made = tempfile.mkdtemp(prefix=f"{_METRICS_PREFIX}{os.getpid()}-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = os.environ["CURATION_METRICS_DIR_MADE"] = _made


def _remove_folders_of_dead_masters() -> None:
    """Folders left by a gunicorn that was killed before its on_exit."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_METRICS_PREFIX}*-*"):
        pid = folder.name[len(_METRICS_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # alive, another user's
            pass


def on_starting(server):
    for stale in Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).glob("*.db"):
        stale.unlink(missing_ok=True)
    _remove_folders_of_dead_masters()


def child_exit(server, worker):
    """A worker died or was replaced: its counts stay in the sums, its live values go."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    made = os.environ.get("CURATION_METRICS_DIR_MADE")
    if made and made == os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        shutil.rmtree(made, ignore_errors=True)


# gunicorn's own lines (start, workers booting and timing out, rejected requests) follow
# the site's LOG_FORMAT, read as curation/settings.py reads it (the environment, then
# .env): with json, one JSON object per line like the site's (summaries/ops/logformat.py),
# so that every line of the stream parses; otherwise gunicorn's plain lines.
class JsonLogger(glogging.Logger):
    def setup(self, cfg):
        super().setup(cfg)
        for handler in (*self.error_log.handlers, *self.access_log.handlers):
            handler.setFormatter(JsonFormatter())


def _log_format() -> str:
    env_file = Path(__file__).with_name(".env")
    if env_file.is_file():
        environ.Env.read_env(env_file)
    return os.environ.get("LOG_FORMAT", "text")


if _log_format() == "json":
    logger_class = JsonLogger
