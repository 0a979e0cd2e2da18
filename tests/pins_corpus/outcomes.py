"""Print, as JSON, every suggestion and verdict of the corpus: `python -m
tests.pins_corpus.outcomes` (tests/test_pins_text.py runs it under several hash seeds, and
every run must print the same)."""

import dataclasses
import json

from summaries.text.pins import suggest, verify

from . import cases, pinned_span, stated_time, transcript_words

FILES = ("speed.cases", "local_ai.cases", "kimi.cases", "ipo.heldout.cases")


def outcomes() -> list:
    found = []
    for filename in FILES:
        for case in cases(filename):
            words = transcript_words(case.video)
            span = pinned_span(words, case.at)
            verdict = verify(
                case.text, words, span, kind=case.kind, stated_time=stated_time(case, span)
            )
            suggested = suggest(case.text, words, kind=case.kind, limit=3)
            found.append([dataclasses.asdict(verdict), [dataclasses.asdict(s) for s in suggested]])
    return found


if __name__ == "__main__":
    print(json.dumps(outcomes(), default=str, sort_keys=True))
