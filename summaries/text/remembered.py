"""Results of the pure text functions, remembered per source text.

A save reads every text of a summary several times (its HTML, the links it may cite, its
citations, the search text, the warnings in the answer), and each reading starts from the
same conversion. Inside `remembering()` every result is kept until the block ends, so each
text is converted once however many texts there are; outside, the latest few results of
each function are kept for the whole process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar, cast

# Sources are at most markdown.MAX_SOURCE_CHARS each: a few MB per function and process.
MEMO_SIZE = 64

Result = TypeVar("Result")
TextFunction = Callable[[str], Result]

_block: ContextVar[dict[Callable[[str], object], dict[str, object]] | None] = ContextVar(
    "remembered_results", default=None
)


@contextmanager
def remembering() -> Iterator[None]:
    """Within the block, each remembered function runs once per source text. Nested blocks
    share the outermost one's results."""
    if _block.get() is not None:
        yield
        return
    token = _block.set({})
    try:
        yield
    finally:
        _block.reset(token)


def remembered(
    *, latest: int = MEMO_SIZE
) -> Callable[[TextFunction[Result]], TextFunction[Result]]:
    """Decorator: `function(source)` computed once per source within a `remembering()`
    block, and kept for the `latest` sources outside. Results must not be changed by
    callers."""

    def decorate(function: TextFunction[Result]) -> TextFunction[Result]:
        latest_results = functools.lru_cache(maxsize=latest)(function)

        @functools.wraps(function)
        def wrapper(source: str) -> Result:
            block = _block.get()
            if block is None:
                return latest_results(source)
            results = block.setdefault(function, {})
            if source not in results:
                results[source] = latest_results(source)
            return cast(Result, results[source])

        return wrapper

    return decorate
