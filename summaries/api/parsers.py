"""A JSON parser that refuses oversized bodies and deep nesting instead of failing with a 500."""

import codecs
import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from .errors import PayloadTooLarge


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def json_depth_exceeds(value, limit: int) -> bool:
    """Whether arrays and objects nest deeper than `limit` (iterative: no recursion)."""
    return _problem(value, limit) == "depth"


def _problem(value, limit: int) -> str | None:
    """ "depth" when nested deeper than `limit`, "text" when a string cannot be stored
    (a lone UTF-16 surrogate such as "\\ud800", which UTF-8 cannot encode), else None."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return "text"
            continue
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return "depth"
        stack.extend((child, depth + 1) for child in children)
    return None


class BoundedJSONParser(BaseParser):
    """Strict JSON (no NaN/Infinity) of at most API_MAX_BODY_BYTES, nested at most
    API_MAX_JSON_DEPTH deep, whose strings can be stored (no unpaired surrogates).

    DRF reads the request stream itself, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE never
    applies to API bodies; the size is checked here, before and while reading. Python's
    json module raises RecursionError on deeply nested input, which a plain parser turns
    into a server error.
    """

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        try:
            declared = int(declared or 0)
        except ValueError:
            declared = 0
        if declared > limit:
            raise PayloadTooLarge(limit)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(limit)
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.decode(raw, encoding)
            data = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise ParseError("JSON parse error: nested too deeply.") from None
        except (ValueError, LookupError) as exc:
            raise ParseError(f"JSON parse error: {exc}") from None
        problem = _problem(data, settings.API_MAX_JSON_DEPTH)
        if problem == "depth":
            raise ParseError(
                f"JSON parse error: nested deeper than {settings.API_MAX_JSON_DEPTH} levels."
            )
        if problem == "text":
            raise ParseError("JSON parse error: a string holds an unpaired surrogate (\\ud800).")
        return data
