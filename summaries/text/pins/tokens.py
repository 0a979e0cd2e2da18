"""The tokens a statement or a transcript is compared by, and which of them carry meaning."""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

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
    "twice": ("2", "times"),
    "dollar": ("dollars",),
    "euro": ("euros",),
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
            if term == "second" and last == "tens" and i and tokens[i - 1] in ("a", "an"):
                break  # "a forty second delay": forty seconds, not the forty-second
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
    tokens: Sequence[str], places: Sequence[int], stops: frozenset[int] = frozenset()
) -> tuple[list[str], list[int], list[int]]:
    """Numbers read, fillers dropped and repeated words said once, from word tokens and the
    place (word index) each comes from: (tokens, first place, last place of each token).
    Words repeated across the end of a sentence (after a word of `stops`) are both kept:
    "…not a railway. A railway lasts…" is not a stutter."""
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
        _append(out, firsts, lasts, term, first, places[i], stops)
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


def _append(
    out: list[str],
    firsts: list[int],
    lasts: list[int],
    term: str,
    a: int,
    b: int,
    stops: frozenset[int] = frozenset(),
) -> None:
    """Append a token, unless it repeats the one, two or three before it ("the the", "it is
    it is") within a sentence: a stutter is said once."""
    out.append(term)
    firsts.append(a)
    lasts.append(b)
    size = len(out)
    for length in (1, 2, 3):
        if size < 2 * length or out[-1] != out[-1 - length]:
            continue
        if stops and any(lasts[j] in stops for j in range(size - 2 * length, size - length)):
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
    most much many some any all each every other such same i me my mine we us our you
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
