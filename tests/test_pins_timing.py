"""Pins: a point's time is where it starts being said, and the passage that says it best
decides its verdict."""

from __future__ import annotations

from summaries.text.pins import Status, suggest, verify
from summaries.text.transcripts import Word

TALK = (
    "Thanks for having me. Let me start with a confession. Our first agent, which we "
    "shipped in the spring, was a disaster. It was slow, and it resolved about 31% of "
    "tickets without a human. The customers hated it. So we rebuilt the whole thing."
)


def _words(text: str) -> list[Word]:
    return [Word(text=w, start=0.5 * k, end=0.5 * k + 0.4) for k, w in enumerate(text.split())]


def _start_of(words: list[Word], first: str) -> float:
    return next(w.start for w in words if w.text == first)


def test_a_point_starts_where_it_says_something_of_its_subject():
    words = _words(TALK)
    spans = suggest(
        "Hartmann says the first agent resolved about 31% of tickets without a human.",
        words,
        kind="point",
        limit=1,
    )
    assert spans[0].start == _start_of(words, "and")


def test_a_point_starts_in_the_sentence_before_when_that_says_more_than_its_subject():
    words = _words(TALK)
    spans = suggest(
        "Hartmann says their first agent, shipped in the spring, resolved about 31% of tickets.",
        words,
        kind="point",
        limit=1,
    )
    assert spans[0].start == _start_of(words, "Our")


QUESTION_AND_ANSWER = (
    "So the money keeps coming in. Priya, is it a bubble? Let me think about that for a "
    "second, because the numbers are big and the revenue is small. It's not a bubble. "
    "Parts of the market are frothy, but the demand is real."
)


def test_the_passage_at_the_stated_time_decides_when_nothing_else_says_it_better():
    words = _words(QUESTION_AND_ANSWER)
    statement = "Shah says it's a bubble."
    spans = suggest(statement, words, kind="point", limit=1)
    answer = _start_of(words, "It's")
    verdict = verify(statement, words, spans[0], kind="point", stated_time=answer)
    assert verdict.status == Status.CONTRADICTED, verdict.reason


def test_a_name_is_compared_with_the_word_in_its_place_not_the_verb_after_it():
    # Auto captions: no capitals, no punctuation, so any word may be a name.
    said = "and we delete what we receive within 24 hours and keep nothing after that"
    words = _words(said)
    statement = "Osei says Lantern deletes what it receives within 24 hours."
    spans = suggest(statement, words, kind="point", limit=1)
    verdict = verify(statement, words, spans[0], kind="point")
    assert verdict.status == Status.PARAPHRASE, verdict.reason


def test_in_auto_captions_a_point_is_said_by_words_said_together():
    # No punctuation, no pauses: the "sentences" are long stretches, and words of the
    # point said far apart in them are not a passage that says it.
    filler = (
        "and then we looked at the dashboards every morning with the whole team and "
        "talked through what had changed overnight and what the customers had asked for "
    )
    said = (
        "the agent answers tickets all day long "
        + filler
        + "we now ship to 14 countries "
        + filler
        + "and the docs come in several languages for the support staff"
    )
    words = _words(said)
    statement = "Hartmann says the agent speaks 14 languages."
    spans = suggest(statement, words, kind="point", limit=1)
    verdict = verify(statement, words, spans[0], kind="point") if spans else None
    assert verdict is None or verdict.status == Status.NOT_FOUND, verdict.reason


def test_a_name_said_in_the_next_sentence_is_not_said_in_the_passage():
    said = (
        "Then the nuclear deals. In the autumn Microsoft signed a deal to restart a reactor at "
        "Three Mile Island by 2028. Google and Amazon went for small modular reactors instead."
    )
    words = _words(said)
    statement = "Shah says Google signed a deal to restart a reactor at Three Mile Island."
    spans = suggest(statement, words, kind="point", limit=1)
    verdict = verify(statement, words, spans[0], kind="point")
    assert verdict.status == Status.CONTRADICTED, verdict.reason
    assert "'microsoft'" in verdict.reason
