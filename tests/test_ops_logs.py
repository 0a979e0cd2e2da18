"""Logs (summaries/ops/logs.py): one line per request and per task, an id that follows a
request into the tasks it queued and a check batch from dispatch to record, JSON lines."""

import io
import json
import logging
import os
import subprocess
import sys
from urllib.parse import quote

import pytest
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from kombu import Connection

from summaries import tasks
from summaries.checking import dispatch, record
from summaries.linkcheck import CheckResult, State
from summaries.models import Source
from summaries.ops import logformat, logs

from .factories import SummaryFactory
from .test_ops_metrics import answering

pytestmark = pytest.mark.django_db


def request_lines(caplog):
    return [r for r in caplog.records if r.name == "curation.request"]


def logged_request(caplog) -> tuple:
    """(view, path, status, request id) of the one request line logged."""
    (line,) = request_lines(caplog)
    return line.view, line.path, line.status, line.request_id


def test_a_request_logs_one_line_with_its_id_and_status(client, caplog):
    caplog.set_level(logging.INFO, logger="curation.request")
    response = client.get("/no-such-page/", HTTP_X_REQUEST_ID="req-1234abcd")
    assert response.status_code == 404
    assert response["X-Request-ID"] == "req-1234abcd"
    (line,) = request_lines(caplog)
    assert line.request_id == "req-1234abcd"
    assert line.status == 404
    assert line.method == "GET"
    assert line.view == "<unmatched>"
    assert line.path == "/no-such-page/"
    assert line.duration_ms >= 0
    message = line.getMessage()
    assert "404" in message and "/no-such-page/" in message


def test_a_cached_page_logs_its_url_name_and_a_fresh_id(client, caplog):
    summary = SummaryFactory(live=True)
    client.get(summary.get_absolute_url())
    caplog.set_level(logging.INFO, logger="curation.request")
    caplog.clear()
    response = client.get(summary.get_absolute_url())  # from the page cache
    (line,) = request_lines(caplog)
    assert line.view == "summaries:summary-detail"
    assert line.status == 200
    assert len(response["X-Request-ID"]) == 32 and line.request_id == response["X-Request-ID"]


@pytest.mark.parametrize(
    "offered", ["has spaces", "x" * 200, "new\nline", "semi;colon", "", "é-accented"]
)
def test_a_malformed_request_id_is_replaced(client, offered):
    response = client.get("/no-such-page/", HTTP_X_REQUEST_ID=offered)
    assert response["X-Request-ID"] != offered
    assert len(response["X-Request-ID"]) == 32


def test_the_query_string_is_never_logged(client, caplog):
    caplog.set_level(logging.INFO, logger="curation.request")
    client.get("/no-such-page/?token=secret-value")
    (line,) = request_lines(caplog)
    assert "secret-value" not in line.getMessage()
    assert "secret-value" not in json.dumps(vars(line), default=str)


def test_a_task_queued_during_a_request_carries_its_id():
    with Connection("memory://") as connection:
        queue = connection.SimpleQueue("request-id-test")
        with logs.bound(request_id="req-abcdef12"):
            tasks.rerender_summary.apply_async(
                (1,), connection=connection, queue="request-id-test", routing_key="request-id-test"
            )
        message = queue.get(timeout=2)
        assert message.headers["request_id"] == "req-abcdef12"
        message.ack()
        queue.close()


def test_a_task_logs_one_line_with_its_outcome_and_the_request_id(caplog):
    caplog.set_level(logging.INFO, logger="curation.task")
    tasks.rerender_summary.apply((0,), headers={"request_id": "req-from-web-1"}, task_id="t-1")
    (line,) = [r for r in caplog.records if r.name == "curation.task"]
    assert line.task == "summaries.tasks.rerender_summary"
    assert line.task_id == "t-1"
    assert line.outcome == "SUCCESS"
    assert line.duration_ms >= 0
    assert line.request_id == "req-from-web-1"
    assert logs.current() == {}  # nothing of the task is left for the next one


def test_the_batch_token_follows_a_check_from_dispatch_to_record(
    caplog, monkeypatch, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.INFO)
    source = Source.objects.create(url="https://example.com/traced", host="example.com")
    result = CheckResult(url=source.url, state=State.OK, final_url=source.url, status=200)
    monkeypatch.setattr(record, "run_checks", answering(result))

    with django_capture_on_commit_callbacks() as callbacks:
        dispatch.request_checks(sources=[source])
    name = tasks.check_source_batch.name
    (queued,) = [c for c in callbacks if getattr(getattr(c, "task", None), "name", "") == name]
    ids, token = queued.args
    tasks.check_source_batch.apply((ids, token))  # as a worker runs it: task signals fire

    def lines(logger: str) -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == logger]

    assert any(token in line for line in lines("summaries.checking.dispatch"))
    assert sum(token in line for line in lines("summaries.checking.tasks")) >= 2  # start, end
    assert any(token in line for line in lines("summaries.checking.record"))
    (task_line,) = [r for r in caplog.records if r.name == "curation.task"]
    assert task_line.task == tasks.check_source_batch.name and task_line.outcome == "SUCCESS"


# --- JSON lines ---------------------------------------------------------------------------


def test_the_json_formatter_writes_one_valid_json_object_per_line():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logformat.JsonFormatter())
    handler.addFilter(logs.ContextFilter())
    logger = logging.getLogger("tests.json")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with logs.bound(request_id="req-json-1", batch="b" * 32):
            logger.warning('said "hi"\nand left', extra={"status": 200, "thing": object()})
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["message"] == 'said "hi"\nand left'
    assert first["level"] == "WARNING" and first["logger"] == "tests.json"
    assert first["request_id"] == "req-json-1" and first["batch"] == "b" * 32
    assert first["status"] == 200 and "object" in first["thing"]
    assert "time" in first
    assert "ValueError: boom" in second["exc_info"]
    assert "request_id" not in second


def test_log_format_json_makes_every_line_json(tmp_path):
    script = (
        "import logging, django; django.setup();"
        "logging.getLogger('summaries.x').warning('hello');"
        "from django.test import Client;"
        "Client().get('/no-such-page/', HTTP_HOST='localhost')"
    )
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "LOG_FORMAT": "json",
        "DEBUG": "1",
        "CURATION_VAR_DIR": str(tmp_path),
    }
    result = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    parsed = [json.loads(line) for line in result.stderr.splitlines()]
    assert any(p["message"] == "hello" for p in parsed)
    (request,) = [p for p in parsed if p["logger"] == "curation.request"]
    assert request["status"] == 404 and len(request["request_id"]) == 32


# --- Text that clients choose cannot forge lines ------------------------------------------

# A path as a client can send it (%0d%0a, %1b): it would start a record of its own, and
# wipe an operator's terminal, if written as it is.
FORGED_LINE = "2030-01-01 00:00:00,000 ERROR django.request forged"
FORGED_PATH = f"/x\r\n{FORGED_LINE}\x1b[2J/"
FORGED_URL = quote(FORGED_PATH)


@pytest.fixture(params=["text", "json"])
def console(request):
    """What the site's configured console handler writes, in each LOG_FORMAT."""
    (handler,) = [h for h in logging.getLogger().handlers if h.name == "console"]
    formatter = logformat.JsonFormatter() if request.param == "json" else logformat.TextFormatter()
    stream = io.StringIO()
    previous_stream, previous_formatter = handler.setStream(stream), handler.formatter
    handler.setFormatter(formatter)
    try:
        yield request.param, stream
    finally:
        handler.setStream(previous_stream)
        handler.setFormatter(previous_formatter)


def assert_no_forged_line(console, logger_name: str) -> None:
    log_format, stream = console
    written = stream.getvalue()
    lines = written.splitlines()  # every kind of line break a reader may split on
    assert lines, "nothing was logged"
    if log_format == "json":
        entries = [json.loads(line) for line in lines]
        assert any(FORGED_LINE in e["message"] for e in entries if e["logger"] == logger_name)
        return
    assert not any(line.startswith(FORGED_LINE[:10]) for line in lines), written
    assert "\x1b" not in written
    records = [line for line in lines if not line[:1].isspace()]
    assert all(line[:4].isdigit() for line in records), written  # each starts with its time
    assert any(logger_name in line and "\\r\\n2030-01-01" in line for line in records), written


def unreachable_cache_error():
    import redis

    return redis.ConnectionError(f"Error 111 connecting to {FORGED_PATH}.")


def test_the_page_cache_logs_a_path_it_could_not_look_up_on_one_line(client, settings, console):
    settings.CACHES = {"default": {"BACKEND": "tests.test_ops.UnreachableCache"}}
    client.get(FORGED_URL)
    assert_no_forged_line(console, "summaries.pagecache.middleware")


def test_the_api_throttle_logs_a_path_it_could_not_count_on_one_line(rf, settings, console):
    from summaries.api.throttling import AnonThrottle

    settings.CACHES = {"default": {"BACKEND": "tests.test_ops.UnreachableCache"}}
    request = rf.get(FORGED_URL)
    request.user = AnonymousUser()
    assert AnonThrottle().allow_request(request, view=None)
    assert_no_forged_line(console, "summaries.api.throttling")


def test_an_outage_logs_the_path_and_its_error_on_one_line_each(rf, console):
    from summaries.ops.outage import OutageMiddleware

    answer = OutageMiddleware(None).process_exception(rf.get(FORGED_URL), unreachable_cache_error())
    assert answer.status_code == 503
    assert_no_forged_line(console, "summaries.ops.outage")


def test_an_api_server_error_logs_the_path_and_its_error_on_one_line_each(rf, console):
    from summaries.api.errors import exception_handler

    answer = exception_handler(ValueError(FORGED_PATH), {"request": rf.get(FORGED_URL)})
    assert answer.status_code == 500
    assert_no_forged_line(console, "django.request")


def test_the_text_format_writes_the_ids_on_the_line_and_the_traceback_indented_below():
    logger = logging.getLogger("tests.text")
    try:
        raise ValueError("boom")
    except ValueError:
        record = logger.makeRecord(
            "tests.text", logging.ERROR, "f", 1, "failed", (), sys.exc_info()
        )
    record.request_id = "req-text-1"
    first, *below = logformat.TextFormatter().format(record).split("\n")
    assert first.endswith(" ERROR tests.text failed request_id=req-text-1")
    assert below[0] == "    Traceback (most recent call last):"
    assert below[-1] == "    ValueError: boom"
    assert all(line.startswith("    ") for line in below)


# --- Requests Django refuses are the client's error ---------------------------------------


def written_records(console) -> list[dict]:
    """(level, logger, has traceback) of each record the console handler wrote."""
    log_format, stream = console
    lines = stream.getvalue().splitlines()
    if log_format == "json":
        entries = [json.loads(line) for line in lines]
        return [(e["level"], e["logger"], "exc_info" in e) for e in entries]
    records = []
    for line in lines:
        if line[:1].isspace():
            records[-1] = (*records[-1][:2], True)
        else:
            _, _, level, logger, *_ = line.split(" ")
            records.append((level, logger, False))
    return records


def test_too_many_query_parameters_answer_400_with_one_warning_line(client, console):
    query = "&".join(f"p{number}=1" for number in range(1001))
    response = client.get(f"/?{query}")
    assert response.status_code == 400
    refused = [r for r in written_records(console) if r[1].startswith("django.security")]
    assert refused == [("WARNING", "django.security.TooManyFieldsSent", False)]
