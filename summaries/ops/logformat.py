"""How log records are written: one JSON object per line, or one readable line.

Used by the site's LOGGING (curation/settings.py) and by gunicorn's own logger
(gunicorn.conf.py), whose master process loads no Django: this module imports nothing but
the standard library.

Either way a record is one line that no client can split or forge. Paths, headers and the
messages of exceptions that quote them are the client's text, and a `%0a` in a URL is a
line break once decoded: JSON escapes it by nature; the text format writes every
character that is not printable (line breaks, tabs, terminal escapes) as its Python escape
(`\\n`, `\\x1b`), and indents each line of a traceback, so that a line that starts at its
first column always starts a record.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

# Fields of every line logged inside summaries.ops.logs.bound(); the text format prints them.
CORRELATION_FIELDS = ("request_id", "task_id", "batch")
# Put before each line of a traceback or stack in the text format.
CONTINUATION = "    "

_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
}


def printable(text: str) -> str:
    """`text` with each character that is not printable written as its escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _plain(value):
    """A value JSON can hold as it is; anything else by its type's name only."""
    return f"<{type(value).__name__}>"


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the record's own fields
    (`extra=` and `bound()`), and the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _RECORD_ATTRIBUTES and not name.startswith("_"):
                entry[name] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=_plain)


def _indented(text: str) -> str:
    return "\n".join(CONTINUATION + printable(line) for line in text.split("\n"))


class TextFormatter(logging.Formatter):
    """`time level logger message` and the correlation fields as name=value on one line;
    below it, indented, the traceback if any."""

    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        record.asctime = self.formatTime(record, self.datefmt)
        fields = [
            f"{name}={getattr(record, name)}"
            for name in CORRELATION_FIELDS
            if getattr(record, name, None)
        ]
        lines = [printable(" ".join([self.formatMessage(record), *fields]))]
        # Formatted here rather than taken from record.exc_text, which another handler's
        # formatter may have filled in its own way.
        if record.exc_info:
            lines.append(_indented(self.formatException(record.exc_info)))
        elif record.exc_text:
            lines.append(_indented(record.exc_text))
        if record.stack_info:
            lines.append(_indented(self.formatStack(record.stack_info)))
        return "\n".join(lines)
