""" "Did you mean": the closest channel, person or topic name, or the query with each unknown
word replaced by the closest word of a live summary's title or 30-second text.

difflib over the names and those words, the same on every database (no pg_trgm extension
to create): the vocabulary of 10,000 summaries is some thousands of words, kept in the
fragment cache (computed again after content changed), and only the words of a similar
length are compared. Words are read as search reads them (apostrophes alike,
summaries.text.apostrophes) and without a possessive "'s": "antropic" gets "anthropic", never
"anthropic’s".
"""

import difflib
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from django.urls import reverse

from summaries.models import Summary
from summaries.pagecache.fragments import cached_fragment
from summaries.pagecache.middleware import canonical_query

from .search import clean_query, fold_apostrophes

NAME_CUTOFF = 0.8
WORD_CUTOFF = 0.75
MIN_WORD = 3
# Words: letters and digits, with inner apostrophes (straight, once folded) or hyphens.
_WORD = re.compile(r"\w+(?:['-]\w+)*")
POSSESSIVE = "'s"
KIND_FILTERS = ("channel", "person", "topic")


@dataclass(frozen=True)
class Suggestion:
    kind: str  # "channel", "person", "topic" (a filter) or "words" (a corrected query)
    label: str
    url: str


def words_of(text: str) -> list[str]:
    """The words of the text in lower case, apostrophes straight, possessives without their
    "'s" ("Anthropic’s" is "anthropic"; "don’t" stays "don't")."""
    words = _WORD.findall(fold_apostrophes(text).lower())
    return [word.removesuffix(POSSESSIVE) for word in words]


def vocabulary() -> dict[int, list[str]]:
    """The distinct words (MIN_WORD letters or more, not numbers) of live summaries' titles
    and 30-second texts, by length. One query."""
    by_length = defaultdict(set)
    texts = Summary.objects.published().values_list("video__title", "tldr")
    for title, tldr in texts:
        for word in words_of(f"{title or ''}\n{tldr}"):
            if len(word) >= MIN_WORD and not word.isdigit():
                by_length[len(word)].add(word)
    return {length: sorted(words) for length, words in by_length.items()}


def cached_vocabulary() -> dict[int, list[str]]:
    return cached_fragment("search:vocabulary", vocabulary)


def _similar_lengths(vocabulary: dict[int, list[str]], word: str) -> list[str]:
    # difflib's ratio is 2*M/(len(a)+len(b)) with M <= the shorter length, so a word at
    # least WORD_CUTOFF alike is at most this much shorter or longer.
    spread = int(len(word) * (1 - WORD_CUTOFF) / (1 + WORD_CUTOFF) * 2) + 1
    return [
        candidate
        for length in range(len(word) - spread, len(word) + spread + 1)
        for candidate in vocabulary.get(length, ())
    ]


def closest_name(words: list[str], choices: dict[str, list[tuple[str, str]]]) -> Suggestion | None:
    """The channel, person or topic whose name is most like the query, if alike enough."""
    # difflib analyses the second sequence once: the query, compared with every name.
    matcher = difflib.SequenceMatcher(None, b=" ".join(words))
    best, best_ratio = None, NAME_CUTOFF
    for kind in KIND_FILTERS:
        for slug, name in choices[kind]:
            matcher.set_seq1(" ".join(words_of(name)))
            if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio > best_ratio or (best is None and ratio >= best_ratio):
                best, best_ratio = (kind, slug, name), ratio
    if best is None:
        return None
    kind, slug, name = best
    return Suggestion(
        kind, name, f"{reverse('summaries:search')}?{canonical_query([(kind, slug)])}"
    )


def corrected_words(words: list[str], vocabulary: dict[int, list[str]]) -> list[str] | None:
    """The words with each one unknown to the vocabulary replaced by the closest known one;
    None when no word changed."""
    known = {word for group in vocabulary.values() for word in group}
    corrected, changed = [], False
    for word in words:
        if len(word) < MIN_WORD or word.isdigit() or word in known:
            corrected.append(word)
            continue
        close = difflib.get_close_matches(
            word, _similar_lengths(vocabulary, word), n=1, cutoff=WORD_CUTOFF
        )
        corrected.append(close[0] if close else word)
        changed = changed or bool(close)
    return corrected if changed else None


def suggest(
    query: str,
    *,
    choices: dict[str, list[tuple[str, str]]],
    filters: dict[str, str],
    finds_something: Callable[[str], bool],
) -> Suggestion | None:
    """What the reader may have meant by a query that found nothing, or None.

    A channel, person or topic whose name is close to the whole query comes first: its
    link shows its videos (search matches the summaries' text, which need not name them).
    Otherwise the query with misspelt words corrected from the live titles and 30-second
    texts (possessives dropped), kept with the `filters`, if `finds_something(corrected
    query)`; one search at most.
    """
    words = words_of(clean_query(query))
    if not words:
        return None
    name = closest_name(words, choices)
    if name is not None:
        return name
    corrected = corrected_words(words, cached_vocabulary())
    if corrected is None:
        return None
    corrected_query = " ".join(corrected)
    if not finds_something(corrected_query):
        return None
    pairs = [("q", corrected_query), *filters.items()]
    return Suggestion(
        "words", corrected_query, f"{reverse('summaries:search')}?{canonical_query(pairs)}"
    )
