"""Logs: one line per request and per task, ids that follow work across processes, JSON.

- `RequestLogMiddleware` (first in MIDDLEWARE) gives each request an id (the client's
  `X-Request-ID` when well formed, else a new one), sends it back in `X-Request-ID`, counts
  the request (summaries/ops/metrics.py) and logs one line on `curation.request`: method,
  URL name, path (never the query string), status, duration and the id.
- Tasks queued while a request (or a task) runs carry its request id in their message
  headers (`before_task_publish`); each task logs one line on `curation.task` when it
  ends: name, id, outcome, duration and the request id it came with.
- `bound()` adds fields (request_id, task_id, the check batch token) to every line logged
  inside it: `ContextFilter` copies them onto records, the formatters print them.
- `logformat.JsonFormatter` (LOG_FORMAT=json) writes one JSON object per line;
  `logformat.TextFormatter` one readable line, with what clients chose escaped. The
  standard library's logging does the rest: a formatter of 30 lines needs no dependency,
  and only we decide which fields a line carries (values that are not plain data are
  written as their type's name, so a request object's query string, a token, never
  reaches a log through `repr`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import re
import time

from celery import signals

from . import metrics
from .logformat import printable

REQUEST_ID_HEADER = "X-Request-ID"
_WELL_FORMED_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}\Z")

request_logger = logging.getLogger("curation.request")
task_logger = logging.getLogger("curation.task")

# Never mutated: each change sets a new dict, so a context copied by a thread or a task
# keeps what it had.
_context: contextvars.ContextVar[dict] = contextvars.ContextVar("curation_log_context")


def current() -> dict:
    return _context.get({})


@contextlib.contextmanager
def bound(**fields):
    """Add `fields` to every line logged until the block ends."""
    token = _context.set({**current(), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def well_formed_id(offered: str | None) -> str:
    """The client's id when well formed, else 32 random hex digits (as uuid4().hex, without
    building a UUID on every request)."""
    if offered and _WELL_FORMED_ID.match(offered):
        return offered
    return os.urandom(16).hex()


def request_id_for(request) -> str:
    """The request's id: its X-Request-ID when well formed, else a new one."""
    return well_formed_id(request.META.get("HTTP_X_REQUEST_ID"))


def _printable(text: str, limit: int) -> str:
    """Client-chosen text, cut at `limit`, for a field of a log line."""
    return printable(text[:limit])


REQUEST_MESSAGE = "%s %s %s %s %.1f ms"  # method, view, path, status, duration


def log_request(method: str, view: str, path: str, status: int, started: float, request_id: str):
    """Write the request's line on `curation.request`, if INFO is on for it.

    The record is made here and handed to the logger's handlers as `Logger.info` would,
    without what `info` adds on every call: the search of the stack for the caller's file
    and line (no formatter prints them) and the checks of `extra`'s names.
    """
    if not request_logger.isEnabledFor(logging.INFO):
        return
    duration_ms = round((time.perf_counter() - started) * 1000, 1)
    method = _printable(method, 16)
    path = _printable(path, 300)
    record = logging.LogRecord(
        request_logger.name,
        logging.INFO,
        __file__,
        0,
        REQUEST_MESSAGE,
        (method, view, path, status, duration_ms),
        None,
    )
    record.method = method
    record.view = view
    record.path = path
    record.status = status
    record.duration_ms = duration_ms
    record.request_id = request_id
    request_logger.handle(record)


class RequestLogMiddleware:
    """Request id, request count and one log line per request (first in MIDDLEWARE, so
    that cached pages, redirects and static files are counted too)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        request_id = request_id_for(request)
        request.request_id = request_id
        token = _context.set({"request_id": request_id})
        try:
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            status = response.status_code
            view = metrics.count_request(request, status)
            log_request(request.method or "", view, request.path, status, started, request_id)
            return response
        finally:
            _context.reset(token)


# --- Tasks -------------------------------------------------------------------------------


@signals.before_task_publish.connect(dispatch_uid="curation-request-id-header")
def _carry_request_id(headers=None, **kwargs) -> None:
    request_id = current().get("request_id")
    if request_id and headers is not None:
        headers.setdefault("request_id", request_id)


# Started tasks of this process: task id -> (start, context token). A thread pool runs
# several at once, each in its own thread (and context).
_running: dict[str, tuple[float, contextvars.Token]] = {}


def _request_id_of(task) -> str | None:
    request = task.request
    return (
        getattr(request, "request_id", None)  # a worker: message headers are attributes
        or (request.headers or {}).get("request_id")  # Task.apply(headers=…)
        or current().get("request_id")  # run eagerly inside a request
    )


@signals.task_prerun.connect(dispatch_uid="curation-task-started")
def _task_started(task_id=None, task=None, **kwargs) -> None:
    fields = {"task_id": task_id}
    request_id = _request_id_of(task)
    if request_id:
        fields["request_id"] = request_id
    _running[task_id] = (time.perf_counter(), _context.set(fields))


@signals.task_postrun.connect(dispatch_uid="curation-task-finished")
def _task_finished(task_id=None, task=None, state=None, **kwargs) -> None:
    started = _running.pop(task_id, None)
    if started is None:
        return
    start, token = started
    duration_ms = round((time.perf_counter() - start) * 1000, 1)
    try:
        task_logger.info(
            "task %s %s %s %.1f ms",
            task.name,
            task_id,
            state,
            duration_ms,
            extra={
                **current(),
                "task": task.name,
                "outcome": state,
                "duration_ms": duration_ms,
            },
        )
    finally:
        _context.reset(token)


# --- Formatting (the formatters are in summaries/ops/logformat.py) ---------------------


class ContextFilter(logging.Filter):
    """Copy the fields of `bound()` onto each record the handler writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in current().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class RefusedRequestFilter(logging.Filter):
    """Requests Django refuses as suspicious and answers 400 (too many query or form
    fields, a body too large, a Host not allowed) are the client's error, which no one on
    our side can fix: one WARNING line, without the traceback Django logs them with at
    ERROR. The API logs its own refusals so (summaries/api/errors.py)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.security.") and getattr(record, "status_code", 0) == 400:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info = record.exc_text = None
        return True
