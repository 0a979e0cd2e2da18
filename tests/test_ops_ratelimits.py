"""Rate limits of public forms (summaries/ops/ratelimits.py): per client address and per
e-mail address, both counted on every POST."""

import pytest
from django.core.cache import cache

from summaries.ops import ratelimits


@pytest.fixture(autouse=True)
def empty_counters():
    cache.clear()
    yield
    cache.clear()


def post_from(rf, client_address, address, *, client_rate="100/h", address_rate="100/h"):
    request = rf.post("/form/", {"email": address}, REMOTE_ADDR=client_address)
    return ratelimits.limited(
        request,
        group="test-form",
        client_rate=client_rate,
        address=address,
        address_rate=address_rate,
    )


def test_past_the_rate_for_one_client_its_posts_are_limited_and_others_are_not(rf):
    answers = [post_from(rf, "192.0.2.1", f"r{n}@example.com", client_rate="2/h") for n in range(3)]
    assert answers == [False, False, True]
    assert post_from(rf, "192.0.2.2", "r9@example.com", client_rate="2/h") is False


def test_past_the_rate_for_one_address_it_is_limited_from_any_client(rf):
    answers = [post_from(rf, f"192.0.2.{n}", "r@example.com", address_rate="2/h") for n in range(3)]
    assert answers == [False, False, True]
    assert post_from(rf, "192.0.2.9", "other@example.com", address_rate="2/h") is False


def test_a_post_limited_for_its_client_still_counts_for_its_address(rf):
    rates = {"client_rate": "1/h", "address_rate": "2/h"}
    assert post_from(rf, "192.0.2.1", "first@example.com", **rates) is False
    assert post_from(rf, "192.0.2.1", "r@example.com", **rates) is True
    assert post_from(rf, "192.0.2.2", "r@example.com", **rates) is False
    assert post_from(rf, "192.0.2.3", "r@example.com", **rates) is True


def test_a_get_is_never_limited_and_counts_nothing(rf):
    request = rf.get("/form/", REMOTE_ADDR="192.0.2.1")
    for _ in range(3):
        assert not ratelimits.limited(
            request, group="test-form", client_rate="1/h", address="", address_rate="1/h"
        )
    assert post_from(rf, "192.0.2.1", "r@example.com", client_rate="1/h") is False
