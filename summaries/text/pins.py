"""Pins: the statements of a summary tied to the transcript words that support them.

A statement is a quote of a chapter body (verbatim), a point (a key point, takeaway or
caveat, usually a paraphrase in the third person) or a chapter's start (its first words
and its start time). `suggest` finds where a statement is said; `verify` checks a pinned
span and answers a `Verdict` an editor reads: verbatim, paraphrase, not found,
contradicted (a flipped negation, another number, unit or name) or mis-timed.

Statements and transcripts are compared as `normalise` tokens: case, typography,
contractions, numbers said as words and fillers no longer differ. A transcript's tokens
are indexed once (kept for the last few transcripts seen) so that a whole 3-hour
transcript can be searched again for every statement.

Pure functions: no ORM, no requests.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from bisect import bisect_left
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

from .durations import format_duration
from .transcripts import Segment, Word, timed_words

Kind = Literal["quote", "point", "chapter"]

# A stated time (a chapter start, "watch from 3:21") may be this many seconds off.
TIME_TOLERANCE = 2.0


class Status(StrEnum):
    VERBATIM = "verbatim"
    PARAPHRASE = "paraphrase"
    NOT_FOUND = "not_found"
    CONTRADICTED = "contradicted"
    MIS_TIMED = "mis_timed"


@dataclass(frozen=True)
class Span:
    """Words `first_word` to `end_word` (exclusive) of a transcript, said from `start` to
    `end` seconds; `score` (0-100) says how well they match the statement."""

    first_word: int
    end_word: int
    start: float
    end: float
    score: float = 100.0


@dataclass(frozen=True)
class Verdict:
    status: Status
    score: float
    reason: str
    # Where the statement is said, when that is not the pinned span.
    suggested_span: Span | None = None
    # When it is said, when a stated time is off.
    suggested_time: float | None = None


@dataclass(frozen=True)
class Quote:
    """A quotation of a chapter body: `markdown[start:end] == text`."""

    text: str
    start: int
    end: int
    speaker: str = ""


@dataclass(frozen=True)
class ChapterSuggestion:
    start: float
    title: str


def span_of(words: Sequence[Word], first_word: int, end_word: int, score: float = 100.0) -> Span:
    """The span of words `first_word` to `end_word` (exclusive), with their times."""
    first_word = max(0, min(first_word, len(words) - 1))
    end_word = max(first_word + 1, min(end_word, len(words)))
    return Span(first_word, end_word, words[first_word].start, words[end_word - 1].end, score)


# ---------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------

_CHARACTERS = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u02bc\u2032`\u00b4", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u00a0\u202f\u2009\u2007", " "),
        "\u00d7": "x",
        "/": " per ",
        "&": " and ",
        "\u2026": " ",
    }
)
_TOKEN = re.compile(r"[$£€#%½¼¾]|\d+(?:[.,:]\d+)*[^\W\d_]*|[^\W\d_]+(?:'[^\W\d_]+)*")

_N_T = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
_APOSTROPHE_TAILS = {"re": "are", "ve": "have", "ll": "will", "m": "am", "d": "would"}
# Whose "'s" is "is" (or "has"), not a possessive.
_S_IS = frozenset(
    "it that what there here he she who where how when why everything nothing something "
    "someone everyone everybody somebody nobody this".split()
)
_WORD_FORMS: dict[str, tuple[str, ...]] = {
    "cannot": ("can", "not"),
    "gonna": ("going", "to"),
    "wanna": ("want", "to"),
    "gotta": ("got", "to"),
    "kinda": ("kind", "of"),
    "sorta": ("sort", "of"),
    "ok": ("okay",),
    "alright": ("all", "right"),
    "gb": ("gigabytes",),
    "gigabyte": ("gigabytes",),
    "tb": ("terabytes",),
    "terabyte": ("terabytes",),
    "ms": ("milliseconds",),
    "millisecond": ("milliseconds",),
    "%": ("percent",),
    # Captions often drop the apostrophe of a contraction.
    **{
        bare: (bare[:-2] if bare not in ("cant", "wont", "aint") else _N_T[bare[:2]], "not")
        for bare in (
            "dont doesnt didnt isnt arent wasnt werent cant couldnt shouldnt wouldnt "
            "havent hasnt hadnt wont aint"
        ).split()
    },
    "im": ("i", "am"),
    "youre": ("you", "are"),
    "theyre": ("they", "are"),
    "ive": ("i", "have"),
    "weve": ("we", "have"),
    "youve": ("you", "have"),
    "theyve": ("they", "have"),
    "thats": ("that", "is"),
    "whats": ("what", "is"),
    "theres": ("there", "is"),
}
_NUMBER_TOKEN = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(st|nd|rd|th|k|bn|b|x)?$")
_DIGITS_THEN_LETTERS = re.compile(r"(\d+(?:\.\d+)?)([^\W\d_]+)$")
_SCALED = {"k": 1000, "b": 10**9, "bn": 10**9}


@lru_cache(maxsize=65536)
def _word_tokens(text: str) -> tuple[str, ...]:
    """The tokens of a piece of text before the numbers are read: case folded, typography
    unified, contractions spelt out ("can't" -> "can", "not"), punctuation dropped."""
    tokens: list[str] = []
    for raw in _TOKEN.findall(text.translate(_CHARACTERS).casefold()):
        tokens.extend(_expand(raw))
    return tuple(tokens)


def _expand(term: str) -> tuple[str, ...]:
    if term[0].isdigit():
        return _expand_number(term)
    if term in _WORD_FORMS:
        return _WORD_FORMS[term]
    if "'" not in term:
        return (term,)
    if term.endswith("n't"):
        base = term[:-3]
        return (_N_T.get(base, base), "not")
    head, _, tail = term.rpartition("'")
    head = head.replace("'", "")
    if tail in _APOSTROPHE_TAILS:
        return (head, _APOSTROPHE_TAILS[tail])
    if tail == "s":
        if head in _S_IS:
            return (head, "is")
        return ("let", "us") if head == "let" else (head + "s",)
    return (head + tail,)


def _expand_number(term: str) -> tuple[str, ...]:
    """ "1,000" -> "1000", "2.5x" -> "2.5", "times", "10k" -> "10000", "21st" stays, "4o" ->
    "4", "o"."""
    match = _NUMBER_TOKEN.match(term)
    if match:
        digits, suffix = match.group(1).replace(",", ""), match.group(2)
        if suffix in _SCALED:
            return (_format_number(Fraction(digits) * _SCALED[suffix]),)
        if suffix == "x":
            return (digits, "times")
        if suffix:
            return (_ordinal(int(Fraction(digits))),) if "." not in digits else (digits,)
        return (digits,)
    match = _DIGITS_THEN_LETTERS.match(term)
    if match:
        return (match.group(1), match.group(2))
    if "," in term:
        return tuple(part for part in term.split(",") if part)
    return (term,)


_UNITS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    word: 10 * value
    for value, word in enumerate(
        "twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2
    )
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINAL_WORDS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fifth": 5,
    "eighth": 8,
    "ninth": 9,
    "twelfth": 12,
    **{word + "th": value for word, value in _UNITS.items() if value in (4, 6, 7, 10, 11)},
    **{word + "th": value for word, value in _UNITS.items() if 13 <= value <= 19},
    **{word[:-1] + "ieth": value for word, value in _TENS.items()},
    "hundredth": 100,
    "thousandth": 1000,
}
_FRACTIONS = {"½": Fraction(1, 2), "¼": Fraction(1, 4), "¾": Fraction(3, 4)}
_AND_A = {"half": Fraction(1, 2), "quarter": Fraction(1, 4)}
_DIGITS = re.compile(r"\d+(?:\.\d+)?$")
_CURRENCIES = {"$": "dollars", "£": "pounds", "€": "euros"}
_FILLERS = frozenset("um umm uh uhh uhm erm er hmm hm mm mhm".split())


def _ordinal(value: int) -> str:
    suffix = "th" if 10 <= value % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")
    return f"{value}{suffix}"


def _format_number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# What may come before each kind of number word in one number: "two hundred and fifty
# six thousand", "seventy one point three", "two and a half", "fifteen hundred".
_MAY_FOLLOW: dict[str, set[str | None]] = {
    "unit": {None, "tens", "hundred", "and", "scale"},
    "teen": {None, "hundred", "and", "scale"},
    "tens": {None, "hundred", "and", "scale"},
    "hundred": {"unit", "teen", "digits"},
    "scale": {"unit", "teen", "tens", "hundred", "digits", "decimal", "fraction"},
    "ordinal": {None, "tens", "hundred", "and", "scale"},
}


def _number_word_kind(term: str) -> str | None:
    if term in _UNITS:
        return "unit" if _UNITS[term] < 10 else "teen"
    if term in _TENS:
        return "tens"
    if term == "hundred":
        return "hundred"
    if term in _SCALES:
        return "scale"
    if term in _ORDINAL_WORDS:
        return "ordinal"
    return None


def _read_number(tokens: Sequence[str], i: int) -> tuple[str, int, bool] | None:
    """The number that starts at `tokens[i]`, if one does: (canonical token, index after
    it, whether it was said in words only)."""
    n = len(tokens)
    term = tokens[i]
    total, current = Fraction(0), Fraction(0)
    last: str | None = None
    j = i
    if _DIGITS.match(term):
        current, last, j = Fraction(term), "digits", i + 1
        # "1 000 000": groups of three digits after a whole number of up to three digits.
        if "." not in term and len(term) <= 3:
            while j < n and len(tokens[j]) == 3 and tokens[j].isdigit():
                current, j = current * 1000 + int(tokens[j]), j + 1
    elif term in ("a", "an") and i + 1 < n and tokens[i + 1] in ("hundred", *_SCALES):
        current, last, j = Fraction(1), "unit", i + 1
    elif _number_word_kind(term) is None and term not in _FRACTIONS:
        return None
    words_only = last != "digits"
    while j < n:
        term = tokens[j]
        kind = _number_word_kind(term)
        if kind == "ordinal":
            if last not in _MAY_FOLLOW["ordinal"]:
                break
            place = int(total + current) + _ORDINAL_WORDS[term]
            return _ordinal(place), j + 1, words_only
        if kind is not None:
            if last not in _MAY_FOLLOW[kind]:
                break
            if kind == "hundred":
                current *= 100
            elif kind == "scale":
                total, current = total + current * _SCALES[term], Fraction(0)
            else:
                current += _UNITS.get(term, 0) + _TENS.get(term, 0)
            last, j = kind, j + 1
            continue
        if term in _FRACTIONS and last in ("digits", "unit", "teen", "tens", None):
            current, last, j = current + _FRACTIONS[term], "fraction", j + 1
            continue
        step = _and_step(tokens, j, last)
        if step is None:
            step = _decimal_step(tokens, j, last)
        if step is None:
            break
        added, last, j = step
        current += added
    if last is None or last == "and":
        return None
    value = total + current
    if words_only and last in ("tens", "unit", "teen") and total == 0 and 11 <= value <= 99:
        year = _year_end(tokens, j, int(value))
        if year is not None:
            return str(year[0]), year[1], True
    return _format_number(value), j, words_only


def _and_step(tokens: Sequence[str], j: int, last: str | None) -> tuple[Fraction, str, int] | None:
    """ "and" inside a number: "two hundred and five", "two and a half"."""
    if tokens[j] != "and" or j + 1 >= len(tokens):
        return None
    after = tokens[j + 1]
    if last in ("hundred", "scale") and _number_word_kind(after) in ("unit", "teen", "tens"):
        return Fraction(0), "and", j + 1
    if (
        last in ("digits", "unit", "teen", "tens")
        and after == "a"
        and j + 2 < len(tokens)
        and tokens[j + 2] in _AND_A
    ):
        return _AND_A[tokens[j + 2]], "fraction", j + 3
    return None


def _decimal_step(
    tokens: Sequence[str], j: int, last: str | None
) -> tuple[Fraction, str, int] | None:
    """ "point" and the digits said after it: "four point two", "seventy one point three"."""
    if tokens[j] != "point" or last not in ("unit", "teen", "tens"):
        return None
    digits = ""
    k = j + 1
    while k < len(tokens) and _UNITS.get(tokens[k], 10) < 10:
        digits, k = digits + str(_UNITS[tokens[k]]), k + 1
    if not digits and k < len(tokens) and tokens[k].isdigit():
        digits, k = tokens[k], k + 1
    if not digits:
        return None
    return Fraction(f"0.{digits}"), "decimal", k


def _year_end(tokens: Sequence[str], j: int, century: int) -> tuple[int, int] | None:
    """A year said in two halves: "twenty twenty six", "nineteen eighty four"."""
    if j >= len(tokens) or _number_word_kind(tokens[j]) not in ("tens", "teen"):
        return None
    value = _UNITS.get(tokens[j], 0) + _TENS.get(tokens[j], 0)
    k = j + 1
    if tokens[j] in _TENS and k < len(tokens) and _number_word_kind(tokens[k]) == "unit":
        value, k = value + _UNITS[tokens[k]], k + 1
    if k < len(tokens) and _number_word_kind(tokens[k]) in ("hundred", "scale"):
        return None
    return century * 100 + value, k


def _normalised(
    tokens: Sequence[str], places: Sequence[int]
) -> tuple[list[str], list[int], list[int]]:
    """Numbers read, fillers dropped and repeated words said once, from word tokens and the
    place (word index) each comes from: (tokens, first place, last place of each token)."""
    out: list[str] = []
    firsts: list[int] = []
    lasts: list[int] = []
    currency = ""
    n = len(tokens)
    i = 0
    while i < n:
        term = tokens[i]
        first = places[i]
        if term in _FILLERS or (term == "you" and i + 1 < n and tokens[i + 1] == "know"):
            i += 1 if term != "you" else 2
            continue
        if term in _CURRENCIES or term == "#":
            if i + 1 < n and (_DIGITS.match(tokens[i + 1]) or tokens[i + 1] in _UNITS):
                if term == "#":
                    _append(out, firsts, lasts, "number", first, first)
                else:
                    currency = _CURRENCIES[term]
            i += 1
            continue
        number = _read_number(tokens, i) if _may_start_number(term) else None
        if number is not None:
            text, after, _ = number
            _append(out, firsts, lasts, text, first, places[after - 1])
            if currency:
                if after >= n or tokens[after] != currency:
                    _append(out, firsts, lasts, currency, first, places[after - 1])
                currency = ""
            if after < n and tokens[after] == "x":
                _append(out, firsts, lasts, "times", places[after], places[after])
                after += 1
            i = after
            continue
        currency = ""
        if term == "per" and i + 1 < n and tokens[i + 1] == "cent":
            term, i = "percent", i + 1
        elif term == "no" and i + 1 < n and tokens[i + 1] == "one":
            term, i = "nobody", i + 1
        _append(out, firsts, lasts, term, first, places[i])
        i += 1
    return out, firsts, lasts


def _may_start_number(term: str) -> bool:
    return (
        term[0].isdigit()
        or term in _UNITS
        or term in _TENS
        or term in _ORDINAL_WORDS
        or term in _FRACTIONS
        or term in ("a", "an")
    )


def _append(out: list[str], firsts: list[int], lasts: list[int], term: str, a: int, b: int) -> None:
    """Append a token, unless it repeats the one, two or three before it ("the the", "it is
    it is"): a stutter is said once."""
    out.append(term)
    firsts.append(a)
    lasts.append(b)
    size = len(out)
    for length in (1, 2, 3):
        if size < 2 * length or out[-1] != out[-1 - length]:
            continue
        if out[-length:] == out[-2 * length : -length]:
            # The copy kept now ends where the repeat ended.
            lasts[-length - 1] = lasts[-1]
            del out[-length:], firsts[-length:], lasts[-length:]
            return


# A Markdown link's destination: a quote may keep a link, whose address is not said.
_LINK_DESTINATION = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\s*\)")


def normalise(text: str) -> list[str]:
    """The tokens a statement or transcript is compared by.

    Case folded; typographic quotes, apostrophes, dashes and ellipses unified; punctuation
    dropped; contractions spelt out with the negation kept as its own term ("can't",
    "cannot" and "can not" are all "can", "not"); numbers as one canonical token ("1,000",
    "1 000", "one thousand" and "a thousand" are "1000"; "2.5", "2½" and "two and a half"
    are "2.5"; "5%" and "five per cent" are "5", "percent"; "21st" and "twenty first" are
    "21st"); fillers ("um", "you know") dropped and stutters ("the the") said once, on
    either side, since an edited quote may keep or drop them.
    """
    if "](" in text:
        text = _LINK_DESTINATION.sub("]", text)
    tokens = _word_tokens(text)
    return _normalised(tokens, range(len(tokens)))[0]


# ---------------------------------------------------------------------------------------
# Words that carry meaning
# ---------------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    """a an the and or but so if then than that this these those there here it its is are
    was were be been being am do does did doing have has had having will would shall should
    can could may might must of in on at to for from by with about as into onto over under
    up down out off just also very really too quite only even still already yet again more
    most much many some any all each every other such own same i me my mine we us our you
    your yours he him his she her they them their theirs what which who whom whose when
    where why how okay like well right yeah oh get got go going gone thing things way lot
    lots kind sort maybe actually basically literally pretty something anything everything
    now let say says said just because while though although one ones itself myself
    yourself themselves himself herself whether let's per""".split()
)
# Words that deny what follows them; "no" only reaches the next word or two.
_NEGATIONS = frozenset(
    "not never no nothing none nobody nowhere neither nor without instead".split()
)
# Words of attribution: a point says "Berman argues ..." where he said "...".
_ATTRIBUTION = frozenset(
    """says said say argues argued argue notes noted explains explained adds added claims
    claimed believes thinks points cites cited describes described suggests suggested warns
    warned reports reported according mentions mentioned concludes concluded estimates
    estimated recommends calls called sees verdict presenter speaker host he she they his
    her their him them""".split()
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?$")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)$")


@lru_cache(maxsize=65536)
def _stem(term: str) -> str:
    """A crude stem, enough to match "generates" with "generation" and "faster" with
    "fast": common endings cut, then at most seven letters."""
    if not term.isalpha() or len(term) <= 3:
        return term[:-1] if len(term) == 3 and term.endswith("e") else term
    stem = term
    if stem.endswith("ies") and len(stem) > 4:
        stem = stem[:-3] + "y"
    elif stem.endswith("ing") and any(v in stem[:-3] for v in "aeiouy"):
        stem = stem[:-3]
    elif stem.endswith("ed") and not stem.endswith("eed"):
        stem = stem[:-2]
    elif stem.endswith(("sses", "xes", "zes", "ches", "shes")):
        stem = stem[:-2]
    elif stem.endswith("s") and not stem.endswith(("ss", "us", "is")):
        stem = stem[:-1]
    elif stem.endswith("ly") and len(stem) > 5:
        stem = stem[:-2]
    if stem.endswith(("er", "est")) and len(stem) > 5:
        stem = stem[:-2] if stem.endswith("er") else stem[:-3]
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        stem = stem[:-1]
    if len(stem) >= 3 and stem.endswith("e"):
        stem = stem[:-1]
    return stem[:7]


def _is_content(term: str) -> bool:
    return term not in _STOPWORDS and term not in _NEGATIONS and len(term) > 1


# ---------------------------------------------------------------------------------------
# The transcript, indexed
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Transcript:
    words: tuple[Word, ...]
    tokens: list[str]
    stems: list[str]
    # The first and last word each token was said in.
    first_word: list[int]
    last_word: list[int]
    # Where each stem is said, in token positions.
    postings: dict[str, list[int]]

    def weight(self, stem: str) -> float:
        """How much a stem tells about where it is: rare stems more than common ones."""
        return math.log(1.0 + len(self.tokens) / (1.0 + len(self.postings.get(stem, ()))))

    def tokens_of(self, first_word: int, end_word: int) -> tuple[int, int]:
        """The token range said in words `first_word` to `end_word`."""
        return bisect_left(self.first_word, first_word), bisect_left(self.first_word, end_word)

    def span(self, a: int, b: int, score: float) -> Span:
        return span_of(self.words, self.first_word[a], self.last_word[b - 1] + 1, score)

    def said(self, a: int, b: int) -> str:
        """The words of tokens a to b as the transcript has them."""
        return " ".join(w.text for w in self.words[self.first_word[a] : self.last_word[b - 1] + 1])


def _build_index(words: tuple[Word, ...]) -> _Transcript:
    tokens: list[str] = []
    places: list[int] = []
    for index, word in enumerate(words):
        if word.text.startswith("[") and word.text.endswith("]"):
            continue  # a caption's note, not speech: "[Music]", "[Applause]"
        for term in _word_tokens(word.text):
            tokens.append(term)
            places.append(index)
    normal, firsts, lasts = _normalised(tokens, places)
    stems = [_stem(term) for term in normal]
    postings: dict[str, list[int]] = defaultdict(list)
    for position, stem in enumerate(stems):
        postings[stem].append(position)
    return _Transcript(words, normal, stems, firsts, lasts, dict(postings))


_INDEXES: OrderedDict[int, _Transcript] = OrderedDict()
_INDEXES_KEPT = 4
_INDEX_LOCK = threading.Lock()


def _index(words: Sequence[Word]) -> _Transcript:
    """The index of a transcript, built once for the last few transcripts seen (the same
    words, compared item by item, which is fast when they are the same objects)."""
    key = tuple(words)
    with _INDEX_LOCK:
        # Newest first: a summary's pins are verified one after another on one transcript,
        # and versions of a transcript often have as many words (a full comparison each).
        for cached_key, cached in reversed(_INDEXES.items()):
            if _same_words(cached.words, key):
                _INDEXES.move_to_end(cached_key)
                return cached
    index = _build_index(key)
    with _INDEX_LOCK:
        _INDEXES[id(index)] = index
        while len(_INDEXES) > _INDEXES_KEPT:
            _INDEXES.popitem(last=False)
    return index


def _same_words(cached: tuple[Word, ...], key: tuple[Word, ...]) -> bool:
    """Whether two transcripts say the same words at the same times; a difference at either
    end (a line added or corrected there) is seen without comparing every word."""
    if len(cached) != len(key):
        return False
    return not key or (cached[-1] == key[-1] and cached[0] == key[0] and cached == key)


# ---------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------

# An elision inside a quote: "…", "...", "[…]", "(...)".
_ELISION = re.compile(r"\s*(?:[\[(]\s*(?:\u2026|\.{3})\s*[\])]|\u2026|\.{3})\s*")
# A capitalised word inside a sentence, or a word with capitals or digits inside it.
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w]*(?:[-.][\w]+)*)|\b(\w+[A-Z]\w*)")


@dataclass(frozen=True)
class _Statement:
    text: str
    kind: Kind
    pieces: tuple[tuple[str, ...], ...]
    tokens: tuple[str, ...]
    stems: tuple[str, ...]
    names: frozenset[str]

    @property
    def content(self) -> set[str]:
        """The stems that carry the statement's meaning, without its attribution."""
        return {
            stem
            for term, stem in zip(self.tokens, self.stems, strict=True)
            if _is_content(term) and (self.kind != "point" or term not in _ATTRIBUTION)
        }


def _statement(text: str, kind: Kind) -> _Statement:
    parts = _ELISION.split(text) if kind == "quote" else [text]
    pieces = tuple(tuple(normalise(part)) for part in parts)
    pieces = tuple(piece for piece in pieces if piece)
    tokens = tuple(term for piece in pieces for term in piece)
    names = set()
    for match in _NAME.finditer(text):
        name = match.group(1) or match.group(2)
        if name != "I":
            names.update(normalise(name))
    return _Statement(text, kind, pieces, tokens, tuple(_stem(t) for t in tokens), frozenset(names))


# ---------------------------------------------------------------------------------------
# Finding a statement in the transcript
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Found:
    a: int  # first token
    b: int  # the token after the last
    score: float
    verbatim: bool = False


# How far around a pinned span a statement is looked for before the whole transcript.
_MARGIN_TOKENS = 12
# A point's span is read with this many tokens around it: editors pin a little tight.
_CONTEXT_TOKENS = 20
# Scores (0-100) from which a statement is supported.
QUOTE_NEAR = 80.0
QUOTE_CONFLICT = 60.0
CHAPTER_NEAR = 70.0
POINT_SUPPORT = 40.0
# Stems said more often than this are no help in finding where a statement is.
_MAX_POSTING_SHARE = 0.02
_CANDIDATES = 8


def _find_exact(
    index: _Transcript, pieces: Sequence[Sequence[str]], lo: int, hi: int
) -> _Found | None:
    """The first place from `lo` where the pieces are said word for word and in order, each
    within a sentence or two of the one before (an elision), ending before `hi`."""
    if not pieces:
        return None
    for start in _occurrences(index, pieces[0], lo, hi):
        end = start + len(pieces[0])
        for piece in pieces[1:]:
            following = _occurrences(index, piece, end, min(hi, end + 80 + len(piece)))
            if not following:
                break
            end = following[0] + len(piece)
        else:
            return _Found(start, end, 100.0, verbatim=True)
    return None


def _occurrences(index: _Transcript, piece: Sequence[str], lo: int, hi: int) -> list[int]:
    """Where `piece` is said in tokens lo to hi, found from its rarest word."""
    size = len(piece)
    if size == 0 or hi - lo < size:
        return []
    offset = min(range(size), key=lambda k: len(index.postings.get(_stem(piece[k]), ())))
    posting = index.postings.get(_stem(piece[offset]), [])
    found = []
    tokens = index.tokens
    first = bisect_left(posting, lo + offset)
    for position in posting[first:]:
        start = position - offset
        if start + size > hi:
            break
        if tokens[start : start + size] == list(piece):
            found.append(start)
    return found


def _aligned(index: _Transcript, stems: Sequence[str], lo: int, hi: int) -> _Found | None:
    """The tokens of lo to hi that best match `stems` in order: the densest run of aligned
    words, scored by similarity (0-100)."""
    window = index.stems[lo:hi]
    if not window or not stems:
        return None
    matched = [
        lo + k
        for op in Indel.opcodes(stems, window)
        if op.tag == "equal"
        for k in range(op.dest_start, op.dest_end)
    ]
    if not matched:
        return None
    runs: list[list[int]] = [[matched[0]]]
    for position in matched[1:]:
        if position - runs[-1][-1] > 5:
            runs.append([])
        runs[-1].append(position)
    run = max(runs, key=len)
    a, b = run[0], run[-1] + 1
    return _Found(a, b, 100.0 * Indel.normalized_similarity(stems, index.stems[a:b]))


def _covered(index: _Transcript, statement: _Statement, a: int, b: int) -> float:
    """How much of a statement's meaning (its content stems, weighted by rarity) tokens a
    to b say, 0-100."""
    content = statement.content
    if not content:
        return 0.0
    said = set(index.stems[max(a, 0) : b])
    # fsum: exact whatever the order of the set, so equal coverages score equal in every
    # process (a plain sum's last bit depends on hash order, and ties are broken by score).
    total = math.fsum(index.weight(stem) for stem in content)
    found = math.fsum(index.weight(stem) for stem in content if stem in said)
    return 100.0 * found / total if total else 0.0


def _point_region(index: _Transcript, statement: _Statement, lo: int, hi: int) -> _Found | None:
    """The run of tokens in lo to hi that says the most of a point."""
    content = statement.content
    hits = [p for p in range(max(lo, 0), min(hi, len(index.stems))) if index.stems[p] in content]
    if not hits:
        return None
    gap = max(12, len(statement.tokens) // 2)
    runs: list[list[int]] = [[hits[0]]]
    for position in hits[1:]:
        if position - runs[-1][-1] > gap:
            runs.append([])
        runs[-1].append(position)
    best: _Found | None = None
    for run in runs:
        score = _covered(index, statement, run[0], run[-1] + 1)
        if best is None or score > best.score:
            a, b = _tightest(index.stems, run)
            best = _Found(*_with_edges(index, statement, a, b), score)
    return best


def _tightest(stems: Sequence[str], hits: Sequence[int]) -> tuple[int, int]:
    """The shortest stretch (first token, token after the last) of a run of `hits` that
    says every stem the whole run says: words that only repeat stems said again closer to
    the rest (a run of related words before the statement) are left out of its span."""
    wanted = len({stems[p] for p in hits})
    seen: Counter[str] = Counter()
    best = (hits[0], hits[-1] + 1)
    first = 0
    for position in hits:
        seen[stems[position]] += 1
        while len(seen) == wanted:
            if position + 1 - hits[first] < best[1] - best[0]:
                best = (hits[first], position + 1)
            stem = stems[hits[first]]
            seen[stem] -= 1
            if not seen[stem]:
                del seen[stem]
            first += 1
    return best


# How many words a point's span takes in either side of its key words, where the statement
# says them next to the same key word ("an agent", "to read").
_EDGE_TOKENS = 2


def _with_edges(index: _Transcript, statement: _Statement, a: int, b: int) -> tuple[int, int]:
    """Tokens a to b, with up to `_EDGE_TOKENS` words either side said as the statement
    says them next to the word at that edge ("an" before "agent")."""
    for _ in range(_EDGE_TOKENS):
        if a > 0 and _said_next_to(statement, index.stems[a], index.tokens[a - 1], -1):
            a -= 1
    for _ in range(_EDGE_TOKENS):
        if b < len(index.tokens) and _said_next_to(
            statement, index.stems[b - 1], index.tokens[b], 1
        ):
            b += 1
    return a, b


def _said_next_to(statement: _Statement, stem: str, term: str, step: int) -> bool:
    """Whether the statement says `term` right before (step -1) or after (step 1) a word of
    stem `stem`."""
    stems, tokens = statement.stems, statement.tokens
    return any(
        stems[k] == stem and 0 <= k + step < len(tokens) and tokens[k + step] == term
        for k in range(len(tokens))
    )


def _windows(index: _Transcript, statement: _Statement, limit: int) -> list[tuple[int, int]]:
    """Stretches of the transcript worth scoring: where the statement's rarer stems are said
    close together (votes by position, weighted by rarity)."""
    size = len(statement.tokens)
    width = max(16, size)
    most = max(50, int(len(index.tokens) * _MAX_POSTING_SHARE))
    # In sorted order, not the set's: the votes (floats) and their ties must come out the
    # same in every process, whatever its hash seed.
    content = sorted(statement.content)
    usable = [stem for stem in content if 0 < len(index.postings.get(stem, ())) <= most]
    if not usable:
        rare = sorted(content, key=lambda s: len(index.postings.get(s, ())) or 10**9)
        usable = [stem for stem in rare[:2] if stem in index.postings]
    votes: defaultdict[int, float] = defaultdict(float)
    for stem in usable:
        weight = index.weight(stem)
        for bucket in {position // width for position in index.postings[stem]}:
            votes[bucket] += weight
            votes[bucket - 1] += weight
    windows = []
    for bucket in heapq.nlargest(limit, votes, key=lambda bucket: (votes[bucket], -bucket)):
        lo = max(0, bucket * width - size // 2 - 4)
        windows.append((lo, min(len(index.tokens), (bucket + 2) * width + size // 2 + 4)))
    return windows


def _search(
    index: _Transcript, statement: _Statement, limit: int, *, word_for_word: bool = False
) -> list[_Found]:
    """The best places of the whole transcript for a statement, best first. A quote or a
    chapter's first words said word for word are those words; so is a point when
    `word_for_word` (a suggestion: a point in the speaker's own words is pinned to them,
    not to its key words said close together elsewhere)."""
    found: list[_Found] = []
    if statement.kind != "point" or word_for_word:
        exact = _find_exact(index, statement.pieces, 0, len(index.tokens))
        if exact is not None:
            found.append(exact)
    for lo, hi in _windows(index, statement, max(_CANDIDATES, 2 * limit)):
        if statement.kind == "point":
            region = _point_region(index, statement, lo, hi)
        else:
            region = _aligned(index, statement.stems, lo, hi)
        if region is not None:
            found.append(region)
    # Of equal scores, the words said word for word first, then the tightest: a stretch
    # that also holds related words said before or after the statement is not where it
    # is said.
    found.sort(key=lambda f: (-f.score, not f.verbatim, f.b - f.a, f.a))
    kept: list[_Found] = []
    for region in found:
        if all(region.b <= other.a or region.a >= other.b for other in kept):
            kept.append(region)
    return kept[:limit]


def suggest(statement: str, words: Sequence[Word], *, kind: Kind, limit: int = 3) -> list[Span]:
    """The spans of the transcript that best match a statement, best first, each with its
    score (0-100): for a quote or a chapter start, the words said most nearly as written;
    for a point, the stretch that says most of its key words, from the first of them to the
    last (related words said before or after are left out)."""
    if not words:
        return []
    index = _index(words)
    target = _statement(statement, kind)
    if not target.tokens:
        return []
    found = _search(index, target, limit, word_for_word=True)
    return [index.span(f.a, f.b, round(f.score, 1)) for f in found]


# ---------------------------------------------------------------------------------------
# Contradictions
# ---------------------------------------------------------------------------------------

# Words after a number that say what it counts: a different one is another claim.
_UNIT_WORDS = frozenset(
    """times percent seconds minutes hours days weeks months years milliseconds dollars
    cents pounds euros tokens words parameters gigabytes terabytes megabytes calls moves
    pages employees users lines people fold""".split()
)


def _numbers(tokens: Sequence[str]) -> list[tuple[str, str]]:
    """The numbers said, each with the word after it."""
    found = []
    for k, term in enumerate(tokens):
        if _NUMBER.match(term):
            unit = tokens[k + 1] if k + 1 < len(tokens) else ""
            found.append((term, unit))
    return found


def _number_conflict(
    index: _Transcript, core: tuple[int, int], context: tuple[int, int], statement: _Statement
) -> str | None:
    """A number (or its unit) the statement gives that the transcript says otherwise: the
    statement's numbers are looked for in `context`, and a different one is reported from
    the pinned `core` first."""
    said_numbers = _numbers(index.tokens[context[0] : context[1]])
    core_numbers = _numbers(index.tokens[core[0] : core[1]])
    stated_numbers = _numbers(statement.tokens)
    said_values = {value for value, _ in said_numbers}
    stated_values = {value for value, _ in stated_numbers}
    others = [n for n in core_numbers + said_numbers if n[0] not in stated_values]
    for value, unit in stated_numbers:
        if value not in said_values:
            if not others or _is_version(index, statement, value):
                continue
            same_unit = [other for other in others if other[1] == unit]
            other = (same_unit or others)[0]
            return (
                f"the transcript says {_spoken(*other, with_unit=bool(same_unit))}, "
                f"the statement says {_spoken(value, unit, with_unit=bool(same_unit))}"
            )
        units = {u for v, u in said_numbers if v == value}
        if unit in _UNIT_WORDS and units <= _UNIT_WORDS and unit not in units:
            return (
                f"the transcript says {_spoken(value, min(units))}, "
                f"the statement says {_spoken(value, unit)}"
            )
    return None


def _is_version(index: _Transcript, statement: _Statement, value: str) -> bool:
    """Whether a number is part of a name ("Opus 4.6", "K3.1") said so somewhere in the
    transcript: a name, not a quantity of this passage."""
    tokens = statement.tokens
    for k in range(1, len(tokens)):
        if tokens[k] != value or tokens[k - 1] not in statement.names:
            continue
        for position in index.postings.get(value, ()):
            if position and index.tokens[position - 1] == tokens[k - 1]:
                return True
    return False


def _spoken(value: str, unit: str, *, with_unit: bool = True) -> str:
    """A canonical number as an editor reads it: "2.5 times", "70 billion", "1,500"."""
    number = Fraction(value)
    text = value
    for name, size in (("trillion", 10**12), ("billion", 10**9), ("million", 10**6)):
        if number >= size and (number * 100 / size).denominator == 1:
            text = f"{_format_number(number / size)} {name}"
            break
    else:
        if number.denominator == 1 and number >= 10000:
            text = f"{int(number):,}"
    return f"{text} {unit}" if with_unit and unit in _UNIT_WORDS else text


def _heads(tokens: Sequence[str], stems: Sequence[str]) -> tuple[set[str], set[str]]:
    """(stems denied, stems affirmed): a denied stem is the first word of meaning after a
    negation ("did not matter", "never leave"); an affirmed one is said with no negation
    in the few words before it."""
    denied: set[str] = set()
    affirmed: set[str] = set()
    last_negation = -100
    for k, term in enumerate(tokens):
        if term in _NEGATIONS:
            last_negation = k
            reach = 2 if term == "no" else 4
            for j in range(k + 1, min(len(tokens), k + 1 + reach)):
                if tokens[j] in _NEGATIONS:
                    break
                if _is_content(tokens[j]):
                    denied.add(stems[j])
                    break
            continue
        if _is_content(term) and k - last_negation > 5:
            affirmed.add(stems[k])
    return denied, affirmed


def _negation_conflict(
    said: Sequence[str], said_stems: Sequence[str], statement: _Statement
) -> str | None:
    said_denied, said_affirmed = _heads(said, said_stems)
    stated_denied, stated_affirmed = _heads(statement.tokens, statement.stems)
    said_nearby = _near_negation(said, said_stems)
    stated_nearby = _near_negation(statement.tokens, statement.stems)
    for stem in sorted(said_denied & stated_affirmed - stated_nearby):
        return (
            f"the transcript denies {_word_for(stem, said, said_stems)!r}, the statement affirms it"
        )
    for stem in sorted(stated_denied & said_affirmed - said_nearby):
        return (
            f"the statement denies {_word_for(stem, said, said_stems)!r}, the transcript affirms it"
        )
    return None


def _near_negation(tokens: Sequence[str], stems: Sequence[str]) -> set[str]:
    """Stems said within a few words after a negation anywhere: not plainly affirmed."""
    near: set[str] = set()
    for k, term in enumerate(tokens):
        if term in _NEGATIONS:
            near.update(stems[k + 1 : k + 6])
    return near


def _word_for(stem: str, tokens: Sequence[str], stems: Sequence[str]) -> str:
    for term, token_stem in zip(tokens, stems, strict=True):
        if token_stem == stem:
            return term
    return stem


def _name_conflict(index: _Transcript, a: int, b: int, statement: _Statement) -> str | None:
    """A name of the statement said as another word in the same place ("OpenAI says"
    where the transcript says "anthropic says")."""
    said = index.tokens[a:b]
    said_set = set(said)
    tokens = statement.tokens
    for k, term in enumerate(tokens):
        if term not in statement.names or term in said_set or _NUMBER.match(term):
            continue
        if statement.kind == "point" and k + 1 < len(tokens) and tokens[k + 1] in _ATTRIBUTION:
            continue  # "Berman says": who a point attributes the words to, not said in them
        before = tokens[k - 1] if k else None
        after = tokens[k + 1] if k + 1 < len(tokens) else None
        for j in range(1, len(said) - 1):
            other = said[j]
            if other in tokens or not _is_content(other):
                continue
            if (before is None or said[j - 1] == before) and (
                after is None or said[j + 1] == after
            ):
                if before is None and after is None:
                    continue
                if fuzz.ratio(other, term) >= 70:
                    continue  # a name misheard by the captions, not another name
                return f"the transcript says {other!r}, the statement says {term!r}"
    return None


def _conflict(
    index: _Transcript, core: tuple[int, int], context: tuple[int, int], statement: _Statement
) -> str | None:
    """What in the transcript contradicts the statement: its numbers are checked against
    `context`, its negations and names against the `core` where it was found."""
    a, b = core
    return (
        _number_conflict(index, core, context, statement)
        or _negation_conflict(index.tokens[a:b], index.stems[a:b], statement)
        or _name_conflict(index, a, b, statement)
    )


# ---------------------------------------------------------------------------------------
# Verifying a pin
# ---------------------------------------------------------------------------------------


def verify(
    statement: str,
    words: Sequence[Word],
    span: Span,
    *,
    kind: Kind,
    stated_time: float | None = None,
) -> Verdict:
    """Whether the pinned `span` of the transcript supports `statement`.

    The statement is looked for in the span and a little around it, then, if it is not
    there, in the whole transcript: words found elsewhere are judged where they are and
    given as `suggested_span`. A contradiction (a flipped negation, another number, unit
    or name) outweighs a paraphrase; a stated time (a chapter start, "watch from 3:21")
    more than two seconds from where the words are said makes the pin mis-timed, with
    `suggested_time`.
    """
    target = _statement(statement, kind)
    if not words or not target.tokens:
        return Verdict(Status.NOT_FOUND, 0.0, "there are no words to compare")
    index = _index(words)
    a, b = index.tokens_of(span.first_word, span.end_word)
    # A span from an older, longer transcript may end past this one.
    a = min(a, len(index.tokens) - 1)
    b = min(max(b, a + 1), len(index.tokens))
    if kind == "point":
        found, local = _locate_point(index, target, a, b)
    else:
        found, local = _locate_words(index, target, a, b)
    if found is None:
        return Verdict(Status.NOT_FOUND, 0.0, "nothing in the transcript says this")
    verdict = _judge(index, target, found, local, (a, b))
    moved = index.span(found.a, found.b, round(found.score, 1))
    inside = span.first_word <= moved.first_word and moved.end_word <= span.end_word
    if verdict.status == Status.NOT_FOUND:
        return verdict
    said_at = span.start if kind == "point" and local else moved.start
    suggested_span = None if inside or (kind == "point" and local) else moved
    if not local:
        verdict = _with(
            verdict,
            reason=f"{verdict.reason}; said at {_clock(moved.start)}, outside the pinned span",
        )
    if stated_time is not None and abs(stated_time - said_at) > TIME_TOLERANCE:
        status = Status.CONTRADICTED if verdict.status == Status.CONTRADICTED else Status.MIS_TIMED
        reason = f"said at {_clock(said_at)}, not {_clock(stated_time)}"
        if status == Status.CONTRADICTED:
            reason = f"{verdict.reason}; {reason}"
        elif verdict.status != Status.VERBATIM:
            # The editor still reads why the words are not verbatim.
            reason = f"{reason}; {verdict.reason}"
        return Verdict(status, verdict.score, reason, suggested_span, said_at)
    return Verdict(verdict.status, verdict.score, verdict.reason, suggested_span)


def _with(verdict: Verdict, *, reason: str) -> Verdict:
    return Verdict(
        verdict.status, verdict.score, reason, verdict.suggested_span, verdict.suggested_time
    )


def _locate_words(
    index: _Transcript, target: _Statement, a: int, b: int
) -> tuple[_Found | None, bool]:
    """Where a quote or a chapter's first words are said: in the pinned span or near it
    if they are there, else the best place of the whole transcript. (place, near the pin)"""
    margin = _MARGIN_TOKENS + len(target.tokens)
    lo, hi = max(0, a - margin), min(len(index.tokens), b + margin)
    exact = _find_exact(index, target.pieces, lo, hi)
    if exact is not None:
        return exact, True
    near = _aligned(index, target.stems, lo, hi)
    if near is not None and near.score >= QUOTE_NEAR:
        return near, True
    found = _search(index, target, 1)
    best = found[0] if found else None
    if best is None or (near is not None and near.score + 5 >= best.score):
        return near, True
    return best, False


def _locate_point(
    index: _Transcript, target: _Statement, a: int, b: int
) -> tuple[_Found | None, bool]:
    """Where a point is supported: by its pinned span (read with a little context) if that
    says enough of it, else by the best stretch of the whole transcript."""
    lo, hi = max(0, a - _CONTEXT_TOKENS), min(len(index.tokens), b + _CONTEXT_TOKENS)
    score = _covered(index, target, lo, hi)
    exact = _find_exact(index, target.pieces, lo, hi)
    if exact is not None:
        return exact, True
    if score >= POINT_SUPPORT:
        return _Found(a, max(b, a + 1), score), True
    found = _search(index, target, 1)
    if found and found[0].score > score + 5:
        return found[0], False
    return _Found(a, max(b, a + 1), score), True


def _judge(
    index: _Transcript, target: _Statement, found: _Found, local: bool, pinned: tuple[int, int]
) -> Verdict:
    """The verdict on the place where the statement was found (without its time)."""
    score = round(found.score, 1)
    if found.verbatim:
        return Verdict(
            Status.VERBATIM,
            100.0,
            f"said word for word at {_clock(index.words[index.first_word[found.a]].start)}",
        )
    size = len(index.tokens)
    if target.kind == "point":
        core = pinned if local else (found.a, found.b)
        lo, hi = max(0, core[0] - _CONTEXT_TOKENS), min(size, core[1] + _CONTEXT_TOKENS)
        floor, near = POINT_SUPPORT, POINT_SUPPORT
    else:
        # A negation said just before the words found still applies to them.
        core = (max(0, found.a - 3), min(size, found.b + 1))
        lo, hi = found.a, found.b
        floor = QUOTE_CONFLICT
        near = QUOTE_NEAR if target.kind == "quote" else CHAPTER_NEAR
    if score < floor:
        return Verdict(
            Status.NOT_FOUND,
            score,
            f"nothing in the transcript says this (best match {score:.0f}/100)",
        )
    conflict = _conflict(index, core, (lo, hi), target)
    if conflict:
        return Verdict(Status.CONTRADICTED, score, conflict)
    if score < near:
        return Verdict(
            Status.NOT_FOUND,
            score,
            f"nothing in the transcript says this (best match {score:.0f}/100)",
        )
    said = index.said(found.a, found.b)
    if target.kind == "point":
        missing = sorted(target.content - set(index.stems[lo:hi]))
        unsaid = ", ".join(_word_for(s, target.tokens, target.stems) for s in missing[:5])
        note = f"; not said: {unsaid}" if missing else ""
        return Verdict(
            Status.PARAPHRASE,
            score,
            f"a paraphrase ({score:.0f}/100) for an editor to approve{note}",
        )
    return Verdict(
        Status.PARAPHRASE,
        score,
        f"close but not word for word ({score:.0f}/100); the transcript says: {_shorten(said)}",
    )


def _shorten(text: str, size: int = 200) -> str:
    return text if len(text) <= size else text[: size - 1].rsplit(" ", 1)[0] + "\u2026"


def _clock(seconds: float) -> str:
    return format_duration(int(seconds))


# ---------------------------------------------------------------------------------------
# Quotations of a chapter body
# ---------------------------------------------------------------------------------------

# What is not prose: code, link destinations, reference definitions, autolinks, bare
# addresses and HTML tags. Masked (same length) before looking for quotation marks.
_NOT_PROSE = re.compile(
    r"^(?P<fence>```|~~~)[^\n]*\n.*?(?:^(?P=fence)[^\n]*$|\Z)"
    r"|(?P<ticks>`+)(?!`).*?(?<!`)(?P=ticks)(?!`)"
    r"|\]\((?:[^()\s]|\([^()]*\))*(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
    r"|^[ ]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*$"
    r"|<[a-zA-Z][a-zA-Z0-9+.-]*:[^\s<>]*>"
    r"|https?://[^\s<>\"\u201d]*"
    r"|</?[a-zA-Z][^<>\n]*>",
    re.MULTILINE | re.DOTALL,
)
_SPEECH = (
    r"says|said|argues|argued|adds|added|notes|noted|explains|explained|asks|asked|writes|"
    r"wrote|recalls|recalled|tells|told|warns|warned|continues|continued|jokes|joked|"
    r"insists|insisted|claims|claimed|admits|admitted|puts it|put it|concludes|concluded"
)
_SPEAKER = r"(?P<name>[A-Z][\w'\u2019.-]*(?:\s+[A-Z][\w'\u2019.-]*){0,3}|he|she|they)"
_SPEAKER_AFTER = re.compile(
    rf"^[,\s]*(?:{_SPEAKER}\s+(?:{_SPEECH})\b|(?:{_SPEECH})\s+{_SPEAKER})".replace(
        "(?P<name>", "(?P<first>", 1
    )
)
_SPEAKER_BEFORE = re.compile(
    rf"(?:{_SPEAKER}\s+(?:{_SPEECH})|[Aa]ccording to\s+{_SPEAKER}|[Aa]s\s+{_SPEAKER}\s+"
    rf"(?:puts|put) it)\s*[,:]?\s*$".replace("(?P<name>", "(?P<first>", 1).replace(
        "(?P<name>", "(?P<second>", 1
    )
)
_OPENERS_BEFORE = frozenset(" \t\n([{\u2014\u2013-/*_>")


def extract_quotes(markdown: str) -> list[Quote]:
    """The quotations of a chapter body, in order: text between double quotation marks,
    typographic (“…”, with quotations nested inside kept in the outer one) or straight
    ("…"), and between typographic single marks (‘…’) opened at a word's start, so that
    apostrophes ("Anthropic’s", "don’t") are never taken for quotation marks. Code and
    link destinations are not read. A speaker named next to the quotation ("…," Berman
    says; Berman said: "…") is given as `speaker`.
    """
    masked = _NOT_PROSE.sub(lambda m: " " * len(m.group(0)), markdown)
    quotes = []
    for opened, closed in _quotation_marks(masked):
        start, end = opened + 1, closed
        while end > start and markdown[end - 1] in " \t\n,":
            end -= 1
        while start < end and markdown[start] in " \t\n":
            start += 1
        if start < end:
            text = markdown[start:end]
            quotes.append(Quote(text, start, end, _speaker(markdown, opened, closed + 1)))
    return quotes


def _quotation_marks(text: str) -> list[tuple[int, int]]:
    """(opening, closing) offsets of the outermost quotation marks."""
    pairs = []
    k = 0
    while k < len(text):
        mark = text[k]
        if (
            mark == "\u201c"
            or (mark == '"' and _opens(text, k))
            or (mark == "\u2018" and _opens(text, k))
        ):
            closed = _closing(text, k)
            if closed is not None:
                pairs.append((k, closed))
                k = closed + 1
                continue
        k += 1
    return pairs


def _opens(text: str, k: int) -> bool:
    before = text[k - 1] if k else " "
    after = text[k + 1] if k + 1 < len(text) else " "
    return (before in _OPENERS_BEFORE or before in "\u201c\u2018\"'") and not after.isspace()


def _closes(text: str, k: int) -> bool:
    before = text[k - 1] if k else " "
    after = text[k + 1] if k + 1 < len(text) else " "
    return not before.isspace() and not after.isalnum()


def _closing(text: str, opened: int) -> int | None:
    """Where the quotation opened at `opened` closes, nested quotations skipped; None
    when it never closes (a stray mark)."""
    mark = text[opened]
    depth = 0
    for k in range(opened + 1, len(text)):
        char = text[k]
        if mark == "\u201c" and char in "\u201c\u201d":
            depth += 1 if char == "\u201c" else -1
        elif mark == '"' and char == '"':
            depth += 1 if _opens(text, k) and not _closes(text, k) else -1
        elif mark == "\u2018" and char in "\u2018\u2019":
            if char == "\u2018" and _opens(text, k):
                depth += 1
            elif char == "\u2019" and _closes(text, k):
                depth -= 1
        elif char == "\n" and text.startswith("\n", k + 1):
            return None  # a quotation does not run over a paragraph break
        if depth < 0:
            return k
    return None


def _speaker(markdown: str, opened: int, after: int) -> str:
    """The speaker named right after or right before a quotation; "" for none or a
    pronoun."""
    match = _SPEAKER_AFTER.match(markdown[after : after + 80])
    if match is None:
        match = _SPEAKER_BEFORE.search(markdown[max(0, opened - 80) : opened])
    if match is None:
        return ""
    name = next((group for group in match.groups() if group), "").rstrip(".,;:")
    return "" if name.lower() in ("he", "she", "they") else name


# ---------------------------------------------------------------------------------------
# Chapters
# ---------------------------------------------------------------------------------------

# Words either side of a possible split compared for a change of subject.
_SHIFT_WORDS = 120


def suggest_chapters(
    segments: Sequence[Segment], *, min_length: float = 120.0, max_chapters: int = 20
) -> list[ChapterSuggestion]:
    """Where chapters could start, each with a short title: the first at the first word,
    the others at segment starts where the subject changes most (the words before and
    after share the fewest stems) or the speaker pauses, at least `min_length` seconds
    apart and from the end."""
    words = timed_words(list(segments))
    if not words:
        return []
    index = _index(words)
    starts = _segment_starts(segments, index)
    finish = words[-1].end
    scored = sorted(
        ((score, time, token) for time, token, score in _shifts(index, starts)),
        reverse=True,
    )
    chosen = [(words[0].start, 0)]
    for _, time, token in scored:
        if len(chosen) >= max_chapters:
            break
        if finish - time < min_length or any(abs(time - t) < min_length for t, _ in chosen):
            continue
        chosen.append((time, token))
    chosen.sort()
    return [
        ChapterSuggestion(time, _title(index, token, next_token))
        for (time, token), (_, next_token) in zip(
            chosen, chosen[1:] + [(finish, len(index.tokens))], strict=True
        )
    ]


def _segment_starts(
    segments: Sequence[Segment], index: _Transcript
) -> list[tuple[float, int, float]]:
    """(time, first token, pause before it) of each segment but the first."""
    starts = []
    word = 0
    previous_end: float | None = None
    for segment in segments:
        count = len(segment.words) or len(segment.text.split())
        if previous_end is not None and count:
            a, _ = index.tokens_of(word, word + 1)
            if a < len(index.tokens):
                starts.append((segment.start, a, max(0.0, segment.start - previous_end)))
        word += count
        previous_end = segment.end
    return starts


def _shifts(
    index: _Transcript, starts: list[tuple[float, int, float]]
) -> list[tuple[float, int, float]]:
    """(time, token, score) of each possible split: how different the words before and
    after are (0-1), plus up to 0.3 for a pause of up to three seconds."""
    content = [
        stem if _is_content(term) else ""
        for term, stem in zip(index.tokens, index.stems, strict=True)
    ]
    scored = []
    for time, token, pause in starts:
        before = Counter(s for s in content[max(0, token - _SHIFT_WORDS) : token] if s)
        after = Counter(s for s in content[token : token + _SHIFT_WORDS] if s)
        scored.append((time, token, 1.0 - _cosine(before, after) + 0.1 * min(pause, 3.0)))
    return scored


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(count * b[stem] for stem, count in a.items())
    norm = math.sqrt(sum(c * c for c in a.values())) * math.sqrt(sum(c * c for c in b.values()))
    return dot / norm if norm else 0.0


def _title(index: _Transcript, a: int, b: int) -> str:
    """Up to three words said often in a chapter and seldom elsewhere, in the order they
    are first said: "Opus, fast and anthropic"."""
    counts = Counter(
        stem
        for term, stem in zip(index.tokens[a:b], index.stems[a:b], strict=True)
        if _is_content(term) and term.isalpha()
    )
    if not counts:
        return ""
    total = len(index.tokens)

    def distinctive(stem: str) -> float:
        return counts[stem] * math.log(1.0 + total / len(index.postings[stem]))

    best = sorted(counts, key=distinctive, reverse=True)[:3]
    first_said = {stem: index.stems.index(stem, a, b) for stem in best}
    picked = [index.tokens[first_said[stem]] for stem in sorted(best, key=first_said.__getitem__)]
    line = picked[0] if len(picked) == 1 else f"{', '.join(picked[:-1])} and {picked[-1]}"
    return line[:1].upper() + line[1:]
