"""Pins: statements of a summary checked against the transcript words they are pinned to.

The corpus (tests/pins_corpus/) holds four transcripts written as auto captions and 290
statements pinned to them. Rates reached (summaries/text/pins/ at the commit of this
file); the tests hold each at that level:

- tuning part (speed, local_ai, kimi; 233 statements): exact and typographic quotes 58/58
  verbatim (elisions included), invented quotes 60/60 not found, flipped negations and
  changed numbers 49/49 caught (45 contradicted, 4 points not found), paraphrases 26/33
  sent to an editor (REFUSED_PARAPHRASES), mis-timed found 35/35 (31 within a second of
  the words, TIMED_OFF), moved spans 3/3;
- held-out part (ipo, 57 statements, never used to build the judge): the rates of
  HELD_OUT_RATES.

The judge is measured on the larger receipts corpus (bench/receipts_corpus/) in
docs/benchmarks.md; this one holds the rates above.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from functools import cache

import pytest
from django.conf import settings

from summaries.text.pins import (
    Quote,
    Span,
    Status,
    Verdict,
    extract_quotes,
    normalise,
    span_of,
    suggest,
    suggest_chapters,
    verify,
)
from summaries.text.transcripts import Segment, Word, timed_words

from .pins_corpus import Case, cases, pinned_span, segments, stated_time, transcript_words

TUNING = ("speed.cases", "local_ai.cases", "kimi.cases")
HELD_OUT = ("ipo.heldout.cases",)

# ---------------------------------------------------------------------------------------
# normalise
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variants",
    [
        ["1,000", "1 000", "1000", "one thousand", "a thousand", "1k"],
        ["2.5", "two and a half", "2½", "two point five"],
        ["5%", "five percent", "5 per cent", "five per cent"],
        ["21st", "twenty first", "twenty-first"],
        ["3rd", "third"],
        ["256,000", "two hundred and fifty six thousand", "256k"],
        ["1,500", "fifteen hundred", "one thousand five hundred"],
        ["71.3", "seventy one point three"],
        ["2026", "twenty twenty six", "two thousand and twenty six"],
        ["$4.2 billion", "four point two billion dollars"],
        ["70B", "70 billion", "seventy billion"],
        ["2.5x", "2.5×", "two and a half times"],
    ],
)
def test_numbers_said_any_way_are_one_token_sequence(variants):
    assert len({tuple(normalise(text)) for text in variants}) == 1, [
        normalise(text) for text in variants
    ]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("can't", ["can", "not"]),
        ("cannot", ["can", "not"]),
        ("can not", ["can", "not"]),
        ("Can’t", ["can", "not"]),
        ("won't", ["will", "not"]),
        ("doesn’t", ["does", "not"]),
        ("dont", ["do", "not"]),
        ("it's", ["it", "is"]),
        ("Anthropic’s", ["anthropics"]),
        ("you're", ["you", "are"]),
        ("let's", ["let", "us"]),
        ("gonna", ["going", "to"]),
    ],
)
def test_contractions_are_spelt_out_and_the_negation_kept(text, tokens):
    assert normalise(text) == tokens


def test_typography_case_punctuation_and_dashes_do_not_count():
    assert normalise("“Speed” — it’s a real-world thing… Really!") == normalise(
        '"speed" - it\'s a real world thing... really'
    )


def test_fillers_and_stutters_are_dropped_on_either_side():
    said = "so um the the model is uh you know it is it is really fast"
    assert normalise(said) == normalise("So the model is, it is really fast")
    assert "um" not in normalise(said)


def test_markdown_emphasis_and_link_addresses_are_not_words():
    assert normalise(
        '[Anthropic says](https://www.anthropic.com/research "A title") it is *very* `fast`'
    ) == normalise("anthropic says it is very fast")


def test_a_negation_stays_a_token():
    assert normalise("Speed alone does not establish quality") != normalise(
        "Speed alone does establish quality"
    )
    assert "not" in normalise("it isn't free")


# ---------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------


@cache
def judged(filename: str) -> tuple[tuple[Case, Span, Verdict], ...]:
    """Every case of a corpus file with its pinned span and the verdict on it."""
    results = []
    for case in cases(filename):
        words = transcript_words(case.video)
        span = pinned_span(words, case.at)
        verdict = verify(
            case.text, words, span, kind=case.kind, stated_time=stated_time(case, span)
        )
        results.append((case, span, verdict))
    return tuple(results)


def reason_names(reason: str, expected: str) -> bool:
    """Whether the reason says `expected` (a number), whatever the way it is written."""
    said, wanted = normalise(reason), normalise(expected)
    return any(said[k : k + len(wanted)] == wanted for k in range(len(said)))


def outcomes(files: tuple[str, ...]) -> dict[str, list[tuple[Case, bool, Verdict]]]:
    """Per category, each case with whether its verdict is the one an editor expects."""
    by_category: dict[str, list[tuple[Case, bool, Verdict]]] = defaultdict(list)
    for filename in files:
        for case, span, verdict in judged(filename):
            right = verdict.status == case.expect
            if case.expect == "mis_timed":
                right = right and verdict.suggested_time is not None
                right = right and abs(verdict.suggested_time - span.start) <= 1.0
            if case.reason:
                right = right and reason_names(verdict.reason, case.reason)
            if case.category == "moved":
                right = right and verdict.suggested_span is not None
            by_category[case.category].append((case, right, verdict))
    return by_category


def rate(results: list[tuple[Case, bool, Verdict]]) -> tuple[int, int, list[str]]:
    wrong = [
        f"{case.id}: {verdict.status} {verdict.reason}"
        for case, right, verdict in results
        if not right
    ]
    return len(results) - len(wrong), len(results), wrong


def category(files: tuple[str, ...], *names: str) -> list[tuple[Case, bool, Verdict]]:
    found = outcomes(files)
    return [result for name in names for result in found[name]]


def test_the_corpus_has_the_cases_it_claims():
    found = outcomes(TUNING + HELD_OUT)
    counts = {name: len(results) for name, results in found.items()}
    assert counts["invented"] >= 60
    for name in ("exact", "typographic", "paraphrase", "negation", "number", "mistimed"):
        assert counts[name] >= 20, name


def test_no_false_alarm_on_exact_or_typographic_quotes():
    right, total, wrong = rate(category(TUNING, "exact", "typographic", "elision"))
    assert right == total, wrong


def test_invented_quotes_are_not_found():
    right, total, wrong = rate(category(TUNING, "invented"))
    assert total >= 60
    assert right >= total - 1, wrong


@pytest.mark.parametrize("files", [TUNING, HELD_OUT], ids=["tuning", "held-out"])
def test_every_flipped_negation_and_changed_number_is_caught(files):
    """Contradicted, or for a point not found at all: a point whose changed number leaves
    less than half of it said (ki-nu-3: "eight out of ten logic questions" where "it got
    nine out of ten right") is no paraphrase of anything, and blocks publication too."""
    results = category(files, "negation", "number")
    caught = {Status.CONTRADICTED, Status.NOT_FOUND}
    missed = [case.id for case, _, verdict in results if verdict.status not in caught]
    assert not missed
    for case, right, verdict in results:
        if case.kind == "quote" or verdict.status == Status.CONTRADICTED:
            assert right, (case.id, verdict)


# Paraphrases of the auto-caption corpus that say less than half of the point in order in
# one to three sentences (a point is supported only then, so that an on-topic invention
# is not), or whose words are said under a negation the point moved: refused, for an
# editor to pin by hand or override. Measured on the receipts corpus in
# docs/benchmarks.md; listed here so that no other paraphrase is refused.
REFUSED_PARAPHRASES = {"sp-pa-1", "sp-pa-3", "sp-pa-4", "sp-pa-5", "la-pa-1", "la-pa-7", "ki-pa-2"}
# Mis-timed points found mis-timed whose suggested time is more than a second from where
# their words start: in a transcript without punctuation a point's start is the closest
# run of its words, and these open with words the point does not use ("I asked…" for
# "Berman had…").
TIMED_OFF = {"sp-mt-5", "la-mt-3", "la-mt-6", "ki-mt-3"}


@pytest.mark.parametrize("files", [TUNING, HELD_OUT], ids=["tuning", "held-out"])
def test_every_paraphrase_goes_to_an_editor(files):
    results = [
        r
        for r in category(files, "paraphrase", "near-quote", "timed", "start")
        if r[0].expect == "paraphrase"
    ]
    statuses = {verdict.status for _, _, verdict in results if verdict.status != Status.MIS_TIMED}
    assert Status.VERBATIM not in statuses
    wrong = {case.id for case, right, _ in results if not right}
    assert wrong <= REFUSED_PARAPHRASES, wrong - REFUSED_PARAPHRASES


@pytest.mark.parametrize("files", [TUNING, HELD_OUT], ids=["tuning", "held-out"])
def test_mis_timed_pins_get_the_time_the_words_are_said(files):
    results = category(files, "mistimed", "start", "timed")
    assert all(verdict.status == case.expect for case, _, verdict in results)
    wrong = {case.id for case, right, _ in results if not right}
    assert wrong <= TIMED_OFF, wrong - TIMED_OFF


@pytest.mark.parametrize("files", [TUNING, HELD_OUT], ids=["tuning", "held-out"])
def test_a_quote_whose_span_moved_gets_a_suggested_span(files):
    for case, right, verdict in category(files, "moved"):
        assert right, (case.id, verdict)
        words = transcript_words(case.video)
        said = " ".join(
            w.text
            for w in words[verdict.suggested_span.first_word : verdict.suggested_span.end_word]
        )
        assert normalise(said) == normalise(case.text)


# The held-out part, evaluated once after the tuning: the rates reached, which the tests
# hold. Its one miss (ip-ty-2) is a quote that writes "$1 billion" where the speaker said
# "one billion" without the currency: a near-quote (97/100) an editor approves, not a
# contradiction and not "not found".
HELD_OUT_RATES = {
    ("exact", "typographic", "elision"): (12, 13),
    ("invented",): (20, 20),
    ("negation", "number"): (10, 10),
    ("paraphrase", "near-quote"): (7, 7),
    ("mistimed", "start"): (6, 6),
    ("moved",): (1, 1),
}


@pytest.mark.parametrize("names", HELD_OUT_RATES, ids="-".join)
def test_held_out_rates(names):
    right, total, wrong = rate(category(HELD_OUT, *names))
    reached, size = HELD_OUT_RATES[names]
    assert total == size
    assert right >= reached, wrong


def test_a_held_out_quote_missed_as_verbatim_still_goes_to_an_editor():
    for case, _, verdict in category(HELD_OUT, "exact", "typographic", "elision"):
        assert verdict.status in (Status.VERBATIM, Status.PARAPHRASE), case.id


def test_every_process_pins_the_same_whatever_its_hash_seed():
    # Web and worker processes each have their own string hash seed: a set's order (and a
    # float summed in it) must not decide a pin, or the same statement gets one span in one
    # process and another elsewhere. Seed 6 once moved a point said at 0:05 to 0:04.
    printed = {
        subprocess.run(
            [sys.executable, "-m", "tests.pins_corpus.outcomes"],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            cwd=settings.BASE_DIR,
        ).stdout
        for seed in ("0", "6", "123")
    }
    assert len(printed) == 1


# ---------------------------------------------------------------------------------------
# verify, case by case
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def speed_words() -> list[Word]:
    return transcript_words("speed")


def test_a_changed_number_names_both_numbers_for_the_editor(speed_words):
    span = pinned_span(
        speed_words, "anthropic says that this mode generates output two and a half times faster"
    )
    verdict = verify(
        "Anthropic says that this mode generates output 3 times faster than regular Opus 4.6.",
        speed_words,
        span,
        kind="quote",
    )
    assert verdict.status == Status.CONTRADICTED
    assert verdict.reason == "the transcript says 2.5 times, the statement says 3 times"


def test_a_point_with_a_flipped_negation_is_contradicted_not_a_paraphrase(speed_words):
    span = pinned_span(speed_words, "speed alone does not establish output quality")
    assert (
        verify(
            "Berman says speed alone does not establish quality.", speed_words, span, kind="point"
        ).status
        == Status.PARAPHRASE
    )
    verdict = verify(
        "Berman says speed alone establishes quality.", speed_words, span, kind="point"
    )
    assert verdict.status == Status.CONTRADICTED
    assert "establish" in verdict.reason


def test_a_quote_with_another_name_is_contradicted_but_a_misheard_one_is_not(speed_words):
    span = pinned_span(speed_words, "i have been using claude opus four point six fast mode")
    other = verify(
        "I have been using Gemini Opus 4.6 Fast Mode and I find it extremely fast.",
        speed_words,
        span,
        kind="quote",
    )
    assert other.status == Status.CONTRADICTED
    assert other.reason == "the transcript says 'claude', the statement says 'gemini'"
    # Captions often mishear a name ("cloud" for "claude"): a near-quote, not another name.
    misheard = verify(
        "I have been using Cloud Opus 4.6 Fast Mode and I find it extremely fast.",
        speed_words,
        span,
        kind="quote",
    )
    assert misheard.status == Status.PARAPHRASE
    said = pinned_span(speed_words, "anthropic says that this mode generates output")
    quoted = "OpenAI says that this mode generates output 2.5 times faster than regular Opus 4.6."
    assert verify(quoted, speed_words, said, kind="quote").status == Status.CONTRADICTED


def test_the_speaker_a_point_names_is_not_taken_for_another_name(speed_words):
    span = pinned_span(speed_words, "anthropic says that this mode generates output")
    point = "Berman says Fast Mode generates output 2.5 times faster than regular Opus 4.6."
    assert verify(point, speed_words, span, kind="point").status == Status.PARAPHRASE


def test_an_elided_quote_skips_words_only_where_it_says_so(speed_words):
    span = pinned_span(
        speed_words, "actual task time also depends on input processing tool execution"
    )
    elided = "Actual task time also depends on input processing … and network overhead."
    assert verify(elided, speed_words, span, kind="quote").status == Status.VERBATIM
    skipped = "Actual task time also depends on input processing and network overhead."
    assert verify(skipped, speed_words, span, kind="quote").status == Status.PARAPHRASE


def test_a_stated_time_may_be_two_seconds_off(speed_words):
    span = pinned_span(speed_words, "speed alone does not establish output quality")
    text = "Speed alone does not establish output quality."
    for offset in (-1.9, 0.0, 1.9):
        verdict = verify(text, speed_words, span, kind="quote", stated_time=span.start + offset)
        assert verdict.status == Status.VERBATIM
    late = verify(text, speed_words, span, kind="quote", stated_time=span.start + 2.5)
    assert late.status == Status.MIS_TIMED
    assert late.suggested_time == pytest.approx(span.start)
    assert "said at" in late.reason


def test_a_quote_said_elsewhere_is_found_by_searching_the_whole_transcript(speed_words):
    wrong_place = pinned_span(speed_words, "speed maxis unite")
    verdict = verify("The model can be fast and wrong.", speed_words, wrong_place, kind="quote")
    assert verdict.status == Status.VERBATIM
    right_place = pinned_span(speed_words, "the model can be fast and wrong")
    assert verdict.suggested_span is not None
    assert (verdict.suggested_span.first_word, verdict.suggested_span.end_word) == (
        right_place.first_word,
        right_place.end_word,
    )


def test_an_invented_quote_is_not_found_even_after_searching_everywhere(speed_words):
    span = pinned_span(speed_words, "speed maxis unite")
    verdict = verify(
        "Cerebras is going to beat Nvidia, no question about it.", speed_words, span, kind="quote"
    )
    assert verdict.status == Status.NOT_FOUND
    assert verdict.suggested_span is None


def test_an_empty_statement_or_transcript_is_not_found(speed_words):
    span = span_of(speed_words, 0, 5)
    assert verify("…", speed_words, span, kind="quote").status == Status.NOT_FOUND
    assert verify("Speed matters.", [], span, kind="point").status == Status.NOT_FOUND


def test_caption_notes_are_not_speech():
    said = [Segment(0.0, 4.0, "the model can be [Music] fast and wrong")]
    words = timed_words(said)
    verdict = verify(
        "The model can be fast and wrong.", words, span_of(words, 0, len(words)), kind="quote"
    )
    assert verdict.status == Status.VERBATIM


def test_a_span_past_the_end_of_the_transcript_is_searched_for_again(speed_words):
    past = Span(len(speed_words) + 50, len(speed_words) + 60, 9999.0, 9999.5)
    verdict = verify("Speed maxis unite.", speed_words, past, kind="quote")
    assert verdict.status == Status.VERBATIM
    assert verdict.suggested_span == pinned_span(speed_words, "speed maxis unite")
    point = verify(
        "Spark's first-token latency is about 300 milliseconds.", speed_words, past, kind="point"
    )
    assert point.status == Status.PARAPHRASE
    assert point.suggested_span is not None


def test_the_index_of_a_changed_transcript_is_not_reused(speed_words):
    span = pinned_span(speed_words, "speed maxis unite")
    assert verify("Speed maxis unite.", speed_words, span, kind="quote").status == Status.VERBATIM
    changed = list(speed_words)
    changed[span.first_word] = Word(span.start, span.start + 0.3, "greed")
    assert verify("Speed maxis unite.", changed, span, kind="quote").status != Status.VERBATIM


# ---------------------------------------------------------------------------------------
# suggest
# ---------------------------------------------------------------------------------------


def test_suggest_finds_a_quote_and_a_point_where_they_are_said(speed_words):
    quote = suggest("I would never trade away correctness", speed_words, kind="quote")
    expected = pinned_span(speed_words, "i would never trade away correctness")
    assert (quote[0].first_word, quote[0].end_word, quote[0].score) == (
        expected.first_word,
        expected.end_word,
        100.0,
    )
    point = suggest(
        "OpenAI reported more than 1,000 tokens per second for GPT-5.3-Codex-Spark.",
        speed_words,
        kind="point",
    )
    said = pinned_span(speed_words, "more than a thousand tokens per second")
    assert point[0].first_word <= said.first_word < point[0].end_word
    assert len(point) <= 3
    assert all(a.score >= b.score for a, b in zip(point, point[1:], strict=False))


# Words said before the statement's own words that share most of its key words: a point
# must not be pinned from them.
RELATED_BEFORE = (
    "when you were chatting with a model speed had a ceiling you could read its output "
    "only so fast so extra speed did not buy you much a person was the bottleneck and the "
    "model was waiting on that person to read it and act but that is not how we use these "
    "models anymore we hand them a task and walk away"
)
SAID_AFTER = (
    "an agent can act on the model's output without waiting for a person to read it and "
    "that makes speed important for its whole workflow"
)
UNRELATED = "the weather was lovely that morning and we walked along the river to the old mill"


def said_as_captions(*breaths: str) -> list[Word]:
    return timed_words([Segment(8.0 * k, 8.0 * k + 7.5, text) for k, text in enumerate(breaths)])


@pytest.mark.parametrize(
    "point",
    [
        # A paraphrase and a point said word for word.
        "An agent can act on model output without waiting for a person to read it, making "
        "speed important for its workflow.",
        "An agent can act on the model's output without waiting for a person to read it.",
    ],
)
def test_a_point_is_pinned_from_its_own_first_word_not_the_related_words_before(point):
    words = said_as_captions(UNRELATED, RELATED_BEFORE, SAID_AFTER, UNRELATED)
    own_words = len(UNRELATED.split()) + len(RELATED_BEFORE.split())

    found = suggest(point, words, kind="point", limit=1)[0]

    assert found.first_word == own_words, " ".join(w.text for w in words[found.first_word :][:8])
    assert found.start == words[own_words].start
    last = " ".join(w.text for w in words[found.first_word : found.end_word]).split()[-1]
    assert last == ("workflow" if "workflow" in point else "it")


def test_a_point_said_word_for_word_is_pinned_to_those_words_not_its_key_words_elsewhere():
    # Its key words said close together first, then the point itself.
    words = said_as_captions(
        UNRELATED,
        "agents reading files running tests",
        UNRELATED,
        "the agent reads the file and then it runs the tests",
        UNRELATED,
    )
    own_words = 2 * len(UNRELATED.split()) + len("agents reading files running tests".split())

    found = suggest("The agent reads the file and then it runs the tests.", words, kind="point")

    assert (found[0].first_word, found[0].end_word) == (own_words, own_words + 11)
    assert found[0].score == 100.0


def test_a_tight_point_span_verifies_as_the_wide_one_did():
    words = said_as_captions(UNRELATED, RELATED_BEFORE, SAID_AFTER, UNRELATED)
    point = (
        "An agent can act on model output without waiting for a person to read it, making "
        "speed important for its workflow."
    )
    found = suggest(point, words, kind="point", limit=1)[0]

    verdict = verify(point, words, found, kind="point")

    assert (verdict.status, verdict.suggested_span) == (Status.PARAPHRASE, None)
    assert found.score == verdict.score == 100.0


def test_suggest_in_a_long_transcript():
    # The speed transcript said once, after about 29,000 other words.
    other = [Word(k * 0.4, k * 0.4 + 0.3, f"word{k % 997} filler") for k in range(29_000)]
    offset = other[-1].end + 1
    said = [Word(w.start + offset, w.end + offset, w.text) for w in transcript_words("speed")]
    words = other + said
    found = suggest("Speed alone does not establish output quality.", words, kind="quote")
    assert words[found[0].first_word].text == "speed"
    assert found[0].first_word > 29_000


# ---------------------------------------------------------------------------------------
# extract_quotes
# ---------------------------------------------------------------------------------------

CHAPTER = """\
I feel vindicated: I have been a “speed maxi” for AI models. “Speed matters, and ‘quality’ \
isn’t everything,” Berman says. Anthropic’s mode is fast.

Berman said: "Agents don't wait for people." See [“the post”](https://x.org/a "A title") and \
`code "not a quote"`.

```
print("not a quote either")
```

He wrote ‘a single quote’ about the users’ data. “An unclosed quotation

"Straight "nested" quote," says Sam Altman.
"""


def test_extract_quotes_from_a_chapter_body():
    quotes = extract_quotes(CHAPTER)
    assert [(q.text, q.speaker) for q in quotes] == [
        ("speed maxi", ""),
        ("Speed matters, and ‘quality’ isn’t everything", "Berman"),
        ("Agents don't wait for people.", "Berman"),
        ("the post", ""),
        ("a single quote", ""),
        ('Straight "nested" quote', "Sam Altman"),
    ]
    for quote in quotes:
        assert CHAPTER[quote.start : quote.end] == quote.text


def test_extract_quotes_ignores_code_and_link_addresses():
    body = 'Use `say("hi")` or [a link](https://x.org/?q="x" "title") and <https://x.org/"y">.'
    assert extract_quotes(body) == []


def test_an_extracted_quote_verifies_against_its_transcript(speed_words):
    body = "He is blunt: “The model can be fast and wrong,” Berman says."
    (quote,) = extract_quotes(body)
    assert quote == Quote("The model can be fast and wrong", 14, 45, "Berman")
    span = pinned_span(speed_words, "the model can be fast and wrong")
    assert verify(quote.text, speed_words, span, kind="quote").status == Status.VERBATIM


# ---------------------------------------------------------------------------------------
# suggest_chapters
# ---------------------------------------------------------------------------------------


def test_suggested_chapters_start_where_the_subject_changes():
    said: list[Segment] = []
    joins = []
    clock = 0.0
    for video in ("speed", "local_ai", "kimi", "ipo"):
        part = segments(video, offset=clock)
        joins.append(part[0].start)
        said += part
        clock = part[-1].end + 2.0
    chapters = suggest_chapters(said, min_length=90.0)
    starts = [chapter.start for chapter in chapters]
    assert starts[0] == joins[0]
    for join in joins[1:]:
        assert min(abs(join - start) for start in starts) <= 5.0, (join, starts)
    assert all(b - a >= 90.0 for a, b in zip(starts, starts[1:], strict=False))
    assert all(chapter.title for chapter in chapters)
    assert len(suggest_chapters(said, min_length=30.0, max_chapters=3)) == 3
    assert suggest_chapters([]) == []


def test_a_short_transcript_is_one_chapter():
    words = timed_words(segments("speed"))
    chapters = suggest_chapters(segments("speed"), min_length=600.0)
    assert [c.start for c in chapters] == [words[0].start]
