"""How a function's CPU time grows with its input, for tests that guard against a
quadratic (or worse) path without a time limit that a loaded machine could miss.

`assert_grows_linearly` times the function on an input and on one `factor` times as
large, alternately and twice each, and keeps the quickest of each: what the machine does
meanwhile slows both sides alike. A linear function grows by about `factor`, a quadratic
one by its square; the test fails only past twice the factor. An input this size that
takes under `CHEAP_SECONDS` passes at once: no quadratic path reads it that fast.

How quickly the largest allowed files are read is a target, measured in
bench/run_transcript_import.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

CHEAP_SECONDS = 0.5
FACTOR = 4


def cpu_seconds(run: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    outcome = run()
    return time.process_time() - started, outcome


def assert_grows_linearly(
    run: Callable[[Any], Any], build: Callable[[int], Any], size: int, factor: int = FACTOR
) -> Any:
    """Runs `run(build(size // factor))` and `run(build(size))` twice each; returns the
    outcome of the large one (for the test's own assertions)."""
    small, large = build(size // factor), build(size)
    small_times, large_times = [], []
    outcome = None
    for _ in range(2):
        small_times.append(cpu_seconds(lambda: run(small))[0])
        seconds, outcome = cpu_seconds(lambda: run(large))
        large_times.append(seconds)
        if seconds < CHEAP_SECONDS:
            return outcome
    growth = min(large_times) / max(min(small_times), 1e-6)
    assert growth < 2 * factor, (
        f"{factor}× the input took {growth:.1f}× the CPU time "
        f"({min(small_times):.3f} s → {min(large_times):.3f} s)"
    )
    return outcome
