"""How a function's CPU time grows with its input, for tests that guard against a
quadratic (or worse) path without a time limit that a loaded machine could miss.

`assert_grows_linearly` times the function on an input and on one `factor` times as
large, alternately and twice each, with Python's cyclic garbage collector paused (its
passes cost more the more objects are alive, which is not the function's complexity), and
keeps the quickest of each: what the machine does meanwhile slows both sides alike. A
linear function grows by about `factor`, a quadratic one by its square; growth past twice
the factor is measured again, up to ATTEMPTS times, and fails only when every measurement
says so (a load that changes between the two sides can fool one, not a quadratic path).
An input this size that takes under `CHEAP_SECONDS` passes at once: no quadratic path
reads it that fast.

How quickly the largest allowed files are read is a target, measured in
bench/run_transcript_import.py.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

CHEAP_SECONDS = 0.5
FACTOR = 4
ATTEMPTS = 3


def cpu_seconds(run: Callable[[], Any]) -> tuple[float, Any]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        started = time.process_time()
        outcome = run()
        return time.process_time() - started, outcome
    finally:
        if collecting:
            gc.enable()


def _growth(run: Callable[[Any], Any], small: Any, large: Any) -> tuple[float, float, Any]:
    """The quickest CPU seconds of two runs on each input, alternately, and the outcome."""
    small_times, large_times = [], []
    outcome = None
    for _ in range(2):
        small_times.append(cpu_seconds(lambda: run(small))[0])
        seconds, outcome = cpu_seconds(lambda: run(large))
        large_times.append(seconds)
        if seconds < CHEAP_SECONDS:
            break
    return min(small_times), min(large_times), outcome


def assert_grows_linearly(
    run: Callable[[Any], Any], build: Callable[[int], Any], size: int, factor: int = FACTOR
) -> Any:
    """Times `run(build(size // factor))` against `run(build(size))`; returns the outcome
    of the large one (for the test's own assertions)."""
    small, large = build(size // factor), build(size)
    measured = []
    for _ in range(ATTEMPTS):
        small_seconds, large_seconds, outcome = _growth(run, small, large)
        growth = large_seconds / max(small_seconds, 1e-6)
        if large_seconds < CHEAP_SECONDS or growth < 2 * factor:
            return outcome
        measured.append(f"{growth:.1f}× ({small_seconds:.3f} s → {large_seconds:.3f} s)")
    raise AssertionError(f"{factor}× the input took " + ", then ".join(measured) + " the CPU time")
