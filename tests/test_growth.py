"""tests/growth.py tells a linear function from a quadratic one, whatever the machine's
load (both sides are timed alike)."""

import pytest

from tests.growth import assert_grows_linearly


def pairs(n: int) -> int:
    return sum(1 for i in range(n) for _ in range(i))


def count(n: int) -> int:
    return sum(1 for _ in range(n))


def test_a_quadratic_function_fails(monkeypatch):
    monkeypatch.setattr("tests.growth.CHEAP_SECONDS", 0)  # small sizes, for the suite's time
    three_times = r"took 1[0-9.]+× .*, then 1[0-9.]+× .*, then 1[0-9.]+× "
    with pytest.raises(AssertionError, match=three_times):
        assert_grows_linearly(pairs, lambda n: n, 3000)


def test_a_linear_function_passes_and_gives_its_outcome(monkeypatch):
    monkeypatch.setattr("tests.growth.CHEAP_SECONDS", 0)
    assert assert_grows_linearly(count, lambda n: n, 400_000) == 400_000
