"""Pins: a quantity is compared with the quantities of its own kind of measure (mass,
length, speed, temperature, frequency, bits and bit rates, FLOPs, volume), so that the same
value in another unit, or another value in the same one, contradicts a statement and the
same amount said in other words does not."""

from __future__ import annotations

import pytest

from summaries.text.pins import Status, suggest, verify
from summaries.text.transcripts import Word


def _words(text: str) -> list[Word]:
    return [Word(text=w, start=0.4 * k, end=0.4 * k + 0.3) for k, w in enumerate(text.split())]


def _judge(said: str, stated: str) -> tuple[Status, str]:
    words = _words(said)
    spans = suggest(stated, words, kind="point", limit=1)
    assert spans, stated
    verdict = verify(stated, words, spans[0], kind="point")
    return verdict.status, verdict.reason


CONTRADICTED = [
    ("The arm weighs 62 kilograms and lifts boxes all day.", "She says the arm weighs 62 pounds."),
    ("The arm weighs 62 kilograms and lifts boxes all day.", "She says the arm weighs 62 grams."),
    ("The arm weighs 62 kilograms and lifts boxes all day.", "The arm weighs 70 kilograms."),
    ("The pallet holds 2 tonnes of parcels at most.", "The pallet holds 2 ounces of parcels."),
    ("The robot walks at 5 miles per hour on flat ground.", "She says it walks at 5 km per hour."),
    ("The robot walks at 5 mph on flat ground.", "The robot walks at 8 mph on flat ground."),
    ("The cable is 12 feet long from end to end.", "She says the cable is 12 metres long."),
    ("The cable is 12 feet long from end to end.", "She says the cable is 12 inches long."),
    ("The chip runs at 3 GHz under load.", "She says the chip runs at 3 MHz under load."),
    ("The link carries 100 Gbps between racks.", "She says the link carries 100 gigabytes."),
    ("The model is quantised to 4 bits per weight.", "It is quantised to 4 bytes per weight."),
    ("The oven holds 200 celsius for hours.", "She says the oven holds 200 fahrenheit for hours."),
    ("The cluster reaches 2 petaflops on the benchmark.", "The cluster reaches 2 teraflops."),
    ("Each tank takes 40 litres of water a day.", "Each tank takes 40 gallons of water a day."),
]
SAME = [
    ("The arm weighs 62 pounds and lifts boxes all day.", "She says the arm weighs 62 lb."),
    ("It costs £62 a month for the plan.", "She says it costs 62 pounds a month."),
    ("The robot walks at 5 mph on flat ground.", "She says the robot walks at 5 miles per hour."),
]


@pytest.mark.parametrize(("said", "stated"), CONTRADICTED, ids=[s for _, s in CONTRADICTED])
def test_another_unit_or_value_of_the_same_measure_contradicts(said, stated):
    status, reason = _judge(said, stated)
    assert status == Status.CONTRADICTED, reason


@pytest.mark.parametrize(("said", "stated"), SAME, ids=[s for _, s in SAME])
def test_the_same_amount_in_other_words_is_not_contradicted(said, stated):
    status, reason = _judge(said, stated)
    assert status in (Status.PARAPHRASE, Status.VERBATIM), reason


def test_the_editor_reads_both_quantities():
    _, reason = _judge(
        "The arm weighs 62 kilograms and lifts boxes all day.", "She says the arm weighs 62 pounds."
    )
    assert reason == "the transcript says 62 kilograms, the statement says 62 pounds"


def test_a_count_of_what_was_just_named_is_compared_with_the_statement_count():
    status, reason = _judge(
        "And the audit reports are public. We published 12 of them last year.",
        "Osei says Lantern published 20 audit reports last year.",
    )
    assert status == Status.CONTRADICTED, reason
    assert "12" in reason and "20" in reason
