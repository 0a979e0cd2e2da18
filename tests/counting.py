"""Counting the work a function does, for tests that pin how work grows with input size.

Time depends on the machine and on what else runs on it; the number of function calls
does not, so a test can say "twice the links, about twice the work" without a timer.
"""

import sys


def calls_made(function, *args, **kwargs) -> int:
    """How many Python and built-in functions `function(*args, **kwargs)` calls."""
    count = 0

    def count_call(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    previous = sys.getprofile()
    sys.setprofile(count_call)
    try:
        function(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    return count
