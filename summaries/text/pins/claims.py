"""What a passage and a statement claim, and where they disagree: the polarity of each
claim, the quantities said with what they measure, and the names."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, Levenshtein

from .index import _Transcript
from .reading import EVALUATIVE, Reading, _is_negation
from .statements import _Statement
from .tokens import _NUMBER, _ORDINAL, _STOPWORDS, _format_number, _is_content

# ---------------------------------------------------------------------------------------
# Quantities
# ---------------------------------------------------------------------------------------

# A unit word: its family, its canonical name and its size in the family's base unit.
_UNITS: dict[str, tuple[str, str, Fraction]] = {}


def _units(family: str, names: str, size: Fraction | int, canonical: str) -> None:
    for name in names.split():
        _UNITS[name] = (family, canonical, Fraction(size))


_units("time", "ms milliseconds millisecond", Fraction(1, 1000), "milliseconds")
_units("time", "s sec secs second seconds", 1, "seconds")
_units("time", "min mins minute minutes", 60, "minutes")
_units("time", "h hr hrs hour hours", 3600, "hours")
_units("time", "day days", 86400, "days")
_units("time", "week weeks", 7 * 86400, "weeks")
_units("time", "month months", 30 * 86400, "months")
_units("time", "year years", 365 * 86400, "years")
_units("tokens", "token tokens", 1, "tokens")
_units("words", "word words", 1, "words")
_units("parameters", "parameter parameters params", 1, "parameters")
_units("bytes", "byte bytes", 1, "bytes")
_units("bytes", "kb kilobyte kilobytes", 10**3, "kilobytes")
_units("bytes", "mb megabyte megabytes", 10**6, "megabytes")
_units("bytes", "gb gigabyte gigabytes", 10**9, "gigabytes")
_units("bytes", "tb terabyte terabytes", 10**12, "terabytes")
_units("power", "milliwatt milliwatts", Fraction(1, 1000), "milliwatts")
_units("power", "w watt watts", 1, "watts")
_units("power", "kw kilowatt kilowatts", 10**3, "kilowatts")
_units("power", "mw megawatt megawatts", 10**6, "megawatts")
_units("power", "gw gigawatt gigawatts", 10**9, "gigawatts")
_units("energy", "joule joules j", Fraction(1, 3600), "watt-hours")
_units("energy", "wh", 1, "watt-hours")
_units("energy", "kwh", 10**3, "kilowatt-hours")
_units("energy", "mwh", 10**6, "megawatt-hours")
_units("energy", "gwh", 10**9, "gigawatt-hours")
_units("mass", "mg milligram milligrams", Fraction(1, 10**6), "milligrams")
_units("mass", "gram grams gramme grammes", Fraction(1, 1000), "grams")
_units("mass", "kg kgs kilo kilos kilogram kilograms kilogramme kilogrammes", 1, "kilograms")
_units("mass", "tonne tonnes ton tons", 1000, "tonnes")
_units("mass", "oz ounce ounces", Fraction(28349523125, 10**12), "ounces")
_units("mass", "lb lbs", Fraction(45359237, 10**8), "pounds")
_units("length", "nm nanometre nanometres nanometer nanometers", Fraction(1, 10**9), "nanometres")
_units("length", "mm millimetre millimetres millimeter millimeters", Fraction(1, 1000), "mm")
_units("length", "cm centimetre centimetres centimeter centimeters", Fraction(1, 100), "cm")
_units("length", "metre metres meter meters", 1, "metres")
_units("length", "km kilometre kilometres kilometer kilometers", 1000, "kilometres")
_units("length", "inch inches", Fraction(254, 10**4), "inches")
_units("length", "ft foot feet", Fraction(3048, 10**4), "feet")
_units("length", "yard yards yd yds", Fraction(9144, 10**4), "yards")
_units("length", "mile miles", Fraction(1609344, 1000), "miles")
_units("length per time", "mph", Fraction(1609344, 3600 * 1000), "miles an hour")
_units("length per time", "kph kmh", Fraction(1000, 3600), "km an hour")
_units("volume", "ml millilitre millilitres milliliter milliliters", Fraction(1, 1000), "ml")
_units("volume", "litre litres liter liters", 1, "litres")
_units("volume", "gallon gallons", Fraction(3785411784, 10**9), "gallons")
# Temperatures are not multiples of one another: each scale is a family of its own.
_units("celsius", "celsius centigrade", 1, "degrees Celsius")
_units("fahrenheit", "fahrenheit", 1, "degrees Fahrenheit")
_units("frequency", "hz hertz", 1, "hertz")
_units("frequency", "khz kilohertz", 10**3, "kilohertz")
_units("frequency", "mhz megahertz", 10**6, "megahertz")
_units("frequency", "ghz gigahertz", 10**9, "gigahertz")
_units("bits", "bit bits", 1, "bits")
_units("bits", "kilobit kilobits kbit", 10**3, "kilobits")
_units("bits", "megabit megabits mbit", 10**6, "megabits")
_units("bits", "gigabit gigabits gbit", 10**9, "gigabits")
_units("bits", "terabit terabits tbit", 10**12, "terabits")
_units("bits per time", "bps", 1, "bits a second")
_units("bits per time", "kbps", 10**3, "kilobits a second")
_units("bits per time", "mbps", 10**6, "megabits a second")
_units("bits per time", "gbps", 10**9, "gigabits a second")
_units("bits per time", "tbps", 10**12, "terabits a second")
_units("flops", "flop flops", 1, "FLOPs")
_units("flops", "gigaflop gigaflops gflops", 10**9, "gigaFLOPs")
_units("flops", "teraflop teraflops tflops", 10**12, "teraFLOPs")
_units("flops", "petaflop petaflops pflops", 10**15, "petaFLOPs")
_units("flops", "exaflop exaflops eflops", 10**18, "exaFLOPs")
_units("money", "dollars dollar bucks usd", 1, "dollars")
_units("money", "cents cent", Fraction(1, 100), "dollars")
_units("pounds", "pounds pound gbp", 1, "pounds")
# Units one word names in two families: "pounds" of money ("£62" reads "62 pounds") or of
# mass ("62 pounds" of arm). Such a quantity is the same as, and compared with, either.
_OTHER_READING: dict[str, tuple[str, Fraction]] = {"pounds": ("mass", Fraction(45359237, 10**8))}
_units("euros", "euros euro eur", 1, "euros")
_units("percent", "percent", 1, "percent")
_units("times", "times fold x", 1, "times")
# "kilowatt hours", "gigawatt hours": the second word makes energy of power.
_HOURS_AFTER_POWER = frozenset("hour hours".split())
# Multipliers said as a word: "twice", "doubled", "halved".
_MULTIPLIERS = {
    "twice": Fraction(2),
    "double": Fraction(2),
    "doubled": Fraction(2),
    "doubles": Fraction(2),
    "triple": Fraction(3),
    "tripled": Fraction(3),
    "triples": Fraction(3),
    "quadrupled": Fraction(4),
    "halved": Fraction(1, 2),
    "halves": Fraction(1, 2),
    "half": Fraction(1, 2),
}
# Words between a number and what it counts: "40 more people", "4,000 tokens of noise".
_BEFORE_NOUN = frozenset("more extra additional other new different of".split())
_MONTHS = frozenset(
    """january february march april may june july august september october november
    december""".split()
)


@dataclass(frozen=True)
class _Quantity:
    value: Fraction
    family: str  # "" for a count of things
    unit: str
    size: Fraction  # the value in the family's base unit
    nouns: frozenset[str]  # the stems of what a count counts
    position: int
    before: str = ""  # the word said just before a count ("to" in "98 to 2")

    def same(self, other: _Quantity) -> bool:
        """The same quantity, or the same value with its unit left unsaid on one side
        ("$1 billion" and "one billion")."""
        if self.family == other.family:
            return self.size == other.size
        for one, another in ((self, other), (other, self)):
            family, size = _OTHER_READING.get(one.unit, ("", 0))
            if family and family == another.family:
                return one.value * size == another.size
        bare = (self.family == "" and not self.nouns) or (other.family == "" and not other.nouns)
        return bare and self.value == other.value

    def spoken(self) -> str:
        if self.family == "year":
            return _format_number(self.value)
        text = _spoken_number(self.value)
        if self.family == "ordinal":
            return _ordinal_text(int(self.value))
        if self.family in ("", "year"):
            return text
        if self.unit == "dollars":
            return f"${text}"
        return f"{text} {self.unit}"


def _quantities(reading: Reading, a: int, b: int, names: frozenset[str]) -> list[_Quantity]:
    """The quantities said in tokens a to b: a number with its unit or what it counts, or
    a multiplier word; not a number inside a name ("GPT-4", "Nova 3")."""
    tokens = reading.tokens
    found = []
    for k in range(a, b):
        term = tokens[k]
        bare = _bare_unit(tokens, k) if not _after_number(tokens, k) else None
        if bare is not None:
            found.append(bare)
            continue
        if term in _MULTIPLIERS and not (term == "half" and _is_a_part(tokens, k)):
            value = _MULTIPLIERS[term]
            found.append(_Quantity(value, "times", "times", value, frozenset(), k))
            continue
        if _ORDINAL.match(term) and k and tokens[k - 1] in ("a", "one") and int(term[:-2]) > 2:
            value = Fraction(1, int(term[:-2]))  # "a third as well": a fraction
            found.append(_Quantity(value, "times", "times", value, frozenset(), k))
            continue
        if _ORDINAL.match(term):
            value = Fraction(int(term[:-2]))
            found.append(_Quantity(value, "ordinal", "", value, frozenset(), k))
            continue
        if not _NUMBER.match(term) or _is_name_number(reading, k, names):
            continue
        found.append(_quantity(reading, k, b))
    return found


# Words before a unit that make it a rate ("$2.10 an hour", "doubling every seven months")
# or, alone, one of it ("about a week", "in its first month").
_RATE_WORDS = frozenset("a an per each every".split())
_ONE_OF = frozenset("a an per each every 1st".split())


def _rate(tokens: Sequence[str], j: int, end: int) -> tuple[str, str, Fraction] | None:
    """ "a month", "per hour" after a quantity: (family, "a month", size)."""
    if j + 1 < end and tokens[j] in _RATE_WORDS and tokens[j + 1] in _UNITS:
        family, unit, size = _UNITS[tokens[j + 1]]
        one = unit.rstrip("s")
        article = "an" if one[0] in "aeiou" or one.startswith("hour") else "a"
        return family, f"{article} {one}", size
    return None


# Words before "a week" that make it a length of time ("within a week"); after a noun it
# is a rate ("millions of tokens a day").
_BEFORE_A_LENGTH = frozenset(
    "in within about around under over after for than nearly almost roughly just only".split()
)


def _bare_unit(tokens: Sequence[str], k: int) -> _Quantity | None:
    """A unit said with no number: one of it ("about a week", "every month", "the first
    day")."""
    if k == 0 or tokens[k - 1] not in _ONE_OF or tokens[k] not in _UNITS:
        return None
    if tokens[k - 1] in ("a", "an") and (k < 2 or tokens[k - 2] not in _BEFORE_A_LENGTH):
        return None
    family, unit, size = _UNITS[tokens[k]]
    if family not in ("time",):
        return None
    return _Quantity(Fraction(1), family, unit, size, frozenset(), k)


def _after_number(tokens: Sequence[str], k: int) -> bool:
    """Whether a unit word belongs to a number said before it ("$11,000 a month")."""
    return any(_NUMBER.match(tokens[j]) for j in range(max(0, k - 4), k))


def _is_a_part(tokens: Sequence[str], k: int) -> bool:
    """ "the second half", "half of the", "in half": a part, not a multiplier."""
    before = tokens[k - 1] if k else ""
    after = tokens[k + 1] if k + 1 < len(tokens) else ""
    return before in ("the", "first", "second", "2nd", "1st", "a") or after in ("of", "an")


def _quantity(reading: Reading, k: int, end: int) -> _Quantity:
    tokens = reading.tokens
    value = Fraction(tokens[k])
    following = tokens[k + 1] if k + 1 < end else ""
    if following in _UNITS:
        family, unit, size = _UNITS[following]
        after = tokens[k + 2] if k + 2 < end else ""
        if family == "power" and after in _HOURS_AFTER_POWER:
            family, unit = "energy", unit.replace("watts", "watt-hours")
        rate = _rate(tokens, k + 2, end)
        if rate is not None:
            family, unit, size = f"{family} per {rate[0]}", f"{unit} {rate[1]}", size / rate[2]
        return _Quantity(value, family, unit, value * size, frozenset(), k)
    if value.denominator == 1 and 1900 <= value <= 2100 and not reading.grouped[k]:
        return _Quantity(value, "year", "", value, frozenset(), k)
    nouns: list[str] = []
    j = k + 1
    while j < end and len(nouns) < 3 and reading.clause[j] == reading.clause[k]:
        term = tokens[j]
        if term in _BEFORE_NOUN:
            j += 1
            continue
        if not _is_content(term) or _NUMBER.match(term):
            break
        nouns.append(reading.stems[j])
        j += 1
    before = tokens[k - 1] if k and reading.clause[k - 1] == reading.clause[k] else ""
    return _Quantity(value, "", "", value, frozenset(nouns), k, before)


def _is_name_number(reading: Reading, k: int, names: frozenset[str]) -> bool:
    """A number that is part of a name: written inside it ("GPT-4", "A100") or said right
    after a name that is not a month ("Nova 3", "Grok 3"; "August 2023" is a date)."""
    if reading.glued[k]:
        return True
    if k == 0 or reading.clause[k - 1] != reading.clause[k]:
        return False
    before = reading.tokens[k - 1]
    if before in _MONTHS or before in _STOPWORDS or not before.isalpha():
        return False
    return reading.cased[k - 1] or before in names


def _name_number(reading: Reading, k: int) -> tuple[str, ...]:
    """A name with its number, as compared: ("nova", "3"), ("gpt", "4", "o")."""
    key = [reading.tokens[k - 1], reading.tokens[k]] if k else [reading.tokens[k]]
    after = k + 1
    # A letter or two written onto the number ("4o"), not the next part of a hyphenated
    # name ("GPT-5.3-Codex", said "GPT five point three Codex").
    if (
        after < len(reading.tokens)
        and reading.first_word[after] == reading.last_word[k]
        and len(reading.tokens[after]) <= 2
    ):
        key.append(reading.tokens[after])
    return tuple(key)


def _quantity_conflict(index: _Transcript, a: int, b: int, statement: _Statement) -> str | None:
    """A quantity of the statement that the passage (tokens a to b) gives otherwise: the
    same family (time, money, power…) or the same thing counted with another value, or the
    same value in another unit."""
    said = _quantities(index.reading, a, b, index.names)
    stated = [
        q
        for q in _quantities(statement.reading, 0, len(statement.tokens), index.names)
        if q.position not in statement.attribution
    ]
    said = [_referred(index, a, q, stated) for q in said]
    matched = [other for other in said if any(q.same(other) for q in stated)]
    for quantity in stated:
        if any(quantity.same(other) for other in said):
            continue
        # A quantity the statement gives elsewhere is not said instead of this one.
        rivals = [o for o in said if _comparable(quantity, o) and o not in matched]
        if rivals:
            said_as, stated_as = rivals[0].spoken(), quantity.spoken()
            return f"the transcript says {said_as}, the statement says {stated_as}"
        for other in said:
            if other.value == quantity.value and quantity.family and other.family:
                return (
                    f"the transcript says {other.spoken()}, the statement says {quantity.spoken()}"
                )
    return None


_REFERRING = frozenset("them those these".split())


def _referred(index: _Transcript, a: int, said: _Quantity, stated: list[_Quantity]) -> _Quantity:
    """A count said of what was just named ("the audit reports are public. We published
    12 of them") counts what the passage names before it: the statement's counted things
    the passage says before the count."""
    tokens = index.tokens
    k = said.position
    if said.family or said.nouns or k + 2 >= len(tokens):
        return said
    if tokens[k + 1] != "of" or tokens[k + 2] not in _REFERRING:
        return said
    before = set(index.stems[a:k])
    nouns = frozenset(n for q in stated for n in q.nouns if n in before)
    return replace(said, nouns=nouns) if nouns else said


def _comparable(stated: _Quantity, said: _Quantity) -> bool:
    """Whether two quantities measure the same thing, so that different values disagree."""
    if stated.family != said.family:
        return _OTHER_READING.get(stated.unit, ("",))[0] == said.family != "" or (
            _OTHER_READING.get(said.unit, ("",))[0] == stated.family != ""
        )
    if stated.family:
        return True
    if stated.nouns or said.nouns:
        return bool(stated.nouns & said.nouns)
    return bool(stated.before) and stated.before == said.before


def _name_number_conflict(index: _Transcript, a: int, b: int, statement: _Statement) -> str | None:
    """A name said with another number ("Nova 2" for "Nova 3", "GPT-5" for "GPT-4")."""
    reading = statement.reading
    said: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for k in range(a + 1, b):
        if _NUMBER.match(index.tokens[k]) and _is_name_number(index.reading, k, index.names):
            key = _name_number(index.reading, k)
            said[key[0]].add(key)
    for k, term in enumerate(reading.tokens):
        if not _NUMBER.match(term) or not _is_name_number(reading, k, index.names):
            continue
        key = _name_number(reading, k)
        if key in said[key[0]] or not said[key[0]] or k == 0:
            continue
        other = sorted(said[key[0]])[0]
        return f"the transcript says {' '.join(other)!r}, the statement says {' '.join(key)!r}"
    return None


def _spoken_number(value: Fraction) -> str:
    """A number as an editor reads it: "2.5", "70 billion", "1,500"."""
    for name, size in (("trillion", 10**12), ("billion", 10**9), ("million", 10**6)):
        if value >= size and (value * 100 / size).denominator == 1:
            return f"{_format_number(value / size)} {name}"
    if value.denominator == 1 and value >= 10000:
        return f"{int(value):,}"
    return _format_number(value)


def _ordinal_text(value: int) -> str:
    suffix = "th" if 10 <= value % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")
    return f"{value}{suffix}"


# ---------------------------------------------------------------------------------------
# Polarity
# ---------------------------------------------------------------------------------------


# Auxiliary verbs a negation may be all that follows ("what it couldn't do"): compared
# for polarity like words of meaning.
_AUXILIARIES = frozenset(
    "do does did is are was were be been can could will would should have has had must".split()
)


def _is_unit(reading: Reading, k: int) -> bool:
    """Whether token k is the unit of a quantity ("times" in "2.5 times")."""
    return k > 0 and reading.tokens[k] in _UNITS and bool(_NUMBER.match(reading.tokens[k - 1]))


def _is_polar(reading: Reading, k: int, names: frozenset[str]) -> bool:
    """Whether token k says something that can be affirmed or denied: a word of meaning,
    an evaluative word ("fine", "okay"), an auxiliary verb or a quantity; not a number
    inside a name."""
    term = reading.tokens[k]
    if not reading.polarity[k]:
        return False
    if _NUMBER.match(term):
        return not _is_name_number(reading, k, names)
    return _is_content(term) or term in EVALUATIVE or term in _AUXILIARIES


def _polarity_conflict(index: _Transcript, a: int, b: int, statement: _Statement) -> str | None:
    """A clause (of the statement or of the passage, tokens a to b) where the words both
    say are mostly denied on one side and affirmed on the other.

    Each word is compared with the places the passage says it: it agrees when one of
    them has its polarity (evaluative words, which often close a sentence, are looked for
    in the sentence either side too). Only words denied on at least one side tell
    anything: those affirmed on both are left out, so that a clause that agrees in many
    words is not outweighed by them ("compute for normal-sized work is no longer scarce" /
    "…is still scarce")."""
    reading = statement.reading
    names = index.names
    stated = [
        k
        for k in range(len(reading.tokens))
        if k not in statement.attribution and _is_polar(reading, k, names)
    ]
    near_a, near_b = _around(index, a, b)
    agree: dict[tuple[str, int], float] = defaultdict(float)
    disagree: dict[tuple[str, int], float] = defaultdict(float)
    example: dict[tuple[str, int], int] = {}
    for k in stated:
        mine = reading.polarity[k]
        lo, hi = (near_a, near_b) if reading.tokens[k] in EVALUATIVE else (a, b)
        p = _said_as(index, reading.stems[k], mine, lo, hi, unit=_is_unit(reading, k))
        if p is None:
            continue
        theirs = index.polarity[p]
        if mine > 0 and theirs > 0:
            continue
        weight = index.weight(reading.stems[k])
        for group in (("statement", reading.clause[k]), ("passage", index.clause[p])):
            if mine == theirs:
                agree[group] += weight
            else:
                disagree[group] += weight
                example.setdefault(group, k)
    for group in sorted(disagree):
        if disagree[group] > agree[group]:
            k = example[group]
            word = reading.tokens[k]
            if reading.polarity[k] > 0:
                return f"the transcript denies {word!r}, the statement affirms it"
            return f"the statement denies {word!r}, the transcript affirms it"
    return None


def _around(index: _Transcript, a: int, b: int) -> tuple[int, int]:
    """Tokens a to b with the sentence before and the one after."""
    first = max(0, index.sentence[a] - 1)
    last = min(index.sentence[-1], index.sentence[max(a, b - 1)] + 1)
    return index.sentence_span(first, last)


def _said_as(
    index: _Transcript, stem: str, polarity: int, a: int, b: int, *, unit: bool = False
) -> int | None:
    """Where tokens a to b say `stem`: with the same polarity if anywhere, else with the
    other; None when they never say it with a polarity."""
    other = None
    for p in index.postings.get(stem, ()):
        if p < a or p >= b or not index.polarity[p]:
            continue
        if _is_unit(index.reading, p) != unit:
            continue  # "2.5 times" is no "time" of a task
        if index.polarity[p] == polarity:
            return p
        other = p if other is None else other
    return other


# ---------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------


def _is_name(reading: Reading, k: int, names: frozenset[str]) -> bool:
    """A word written as a name here, or one the transcript writes as a name elsewhere
    (so a name opening a sentence is a name too)."""
    term = reading.tokens[k]
    if not term.isalpha() or term in _STOPWORDS:
        return False
    return reading.cased[k] or term in names or bool(reading.vocative and reading.vocative[k])


def _name_conflict(
    index: _Transcript, positions: Sequence[int], statement: _Statement, *, edges: bool
) -> str | None:
    """A name of the statement said as another name in the same place ("OpenAI says"
    where the transcript says "Anthropic says"; "Sam, welcome" where it says "Tom,
    welcome"): compared where the statement's words and the passage's (`positions`, in
    order) are aligned, with a sentence-initial name counted as a name."""
    reading = statement.reading
    claim = [k for k in range(len(reading.tokens)) if k not in statement.attribution]
    stated = [reading.tokens[k] for k in claim]
    passage = [index.tokens[p] for p in positions]
    said = set(passage)
    # Aligned by stems, as everything else is compared: "we delete" where the statement
    # says "Lantern deletes" puts "we" in the name's place, not "delete".
    stated_stems = [reading.stems[k] for k in claim]
    passage_stems = [index.stems[p] for p in positions]
    for src, dest in _gaps(index, positions, stated_stems, passage_stems, edges=edges):
        tight = len(src) <= 2 and len(dest) <= 2
        for i in src:
            k = claim[i]
            if not _is_name(reading, k, index.names) or reading.tokens[k] in said:
                continue
            for j in dest:
                other = passage[j]
                if passage_stems[j] in stated_stems:
                    continue
                if _names_another(index, positions[j], other, stated, tight=tight) and (
                    not _misheard(other, reading.tokens[k])
                ):
                    return (
                        f"the transcript says {other!r}, the statement says {reading.tokens[k]!r}"
                    )
    return None


def _gaps(
    index: _Transcript,
    positions: Sequence[int],
    stated: Sequence[str],
    passage: Sequence[str],
    *,
    edges: bool,
) -> list[tuple[range, range]]:
    """The words of the statement and of the passage between the stretches they share,
    (statement indexes, passage indexes), five statement words at most. At either end only
    the passage words next to the shared ones, in their sentence, count; for a point, whose
    first words often name who said it, only one or two."""
    blocks = [op for op in Indel.opcodes(stated, passage) if op.tag == "equal"]
    if not blocks:
        return []
    found = []
    previous_src, previous_dest = 0, 0
    bounds = [(op.src_start, op.dest_start, op.src_end, op.dest_end) for op in blocks]
    bounds.append((len(stated), len(passage), 0, 0))
    for src_end, dest_end, next_src, next_dest in bounds:
        src_start, dest_start = previous_src, previous_dest
        previous_src, previous_dest = next_src, next_dest
        if src_end - src_start > 5 or src_end == src_start:
            continue
        at_start, at_end = src_start == 0, src_end == len(stated)
        if (at_start or at_end) and not edges and src_end - src_start > 2:
            continue
        # As many passage words as the statement has there (three at most for a quote).
        near = min(3 if edges else 2, src_end - src_start)
        if at_start:
            dest_start = max(dest_start, dest_end - near)
            sentence = index.sentence[positions[min(dest_end, len(positions) - 1)]]
            while dest_start < dest_end and index.sentence[positions[dest_start]] != sentence:
                dest_start += 1
        if at_end:
            dest_end = min(dest_end, dest_start + near)
            sentence = index.sentence[positions[max(dest_start - 1, 0)]]
            while dest_end > dest_start and index.sentence[positions[dest_end - 1]] != sentence:
                dest_end -= 1
        found.append((range(src_start, src_end), range(dest_start, dest_end)))
    return found


def _names_another(
    index: _Transcript, position: int, term: str, stated: Sequence[str], *, tight: bool
) -> bool:
    """Whether a passage word is a name the statement does not say. In a transcript
    written without capitals (auto captions), where names cannot be told by their case,
    any word of meaning in a name's place, one word for one or two for two, is taken as
    one."""
    if _is_name(index.reading, position, index.names):
        return True
    return tight and index.uncased and _is_content(term) and term not in stated


def _misheard(said: str, stated: str) -> bool:
    """Whether a name differs from another only as captions mishear one ("Burman" for
    "Berman", "cloud" for "Claude"): mostly the same letters, or two letters changed in a
    name of five or more that starts with the same one."""
    if fuzz.ratio(said, stated) >= 75:
        return True
    return (
        said[:1] == stated[:1]
        and min(len(said), len(stated)) >= 5
        and Levenshtein.distance(said, stated) <= 2
    )


def _conflict(
    index: _Transcript,
    a: int,
    b: int,
    statement: _Statement,
) -> str | None:
    """What in the passage (tokens a to b) contradicts the statement: another quantity,
    a name said with another number, another name, or the other polarity."""
    # A quote's or chapter's name just before or after the words (a vocative, "Sam,
    # welcome") is compared too; a point's names only between words it shares with the
    # passage, since a point opens with whoever it is about or said it.
    edges = statement.kind != "point"
    # A point's passage is whole sentences: the words around it are another sentence's,
    # and a name said there ("… by 2028. Google and Amazon…") is not said in the passage.
    margin = 3 if edges else 0
    positions = list(range(max(0, a - margin), min(len(index.tokens), b + margin)))
    return (
        _quantity_conflict(index, a, b, statement)
        or _name_number_conflict(index, a, b, statement)
        or _name_conflict(index, positions, statement, edges=edges)
        or (
            _polarity_conflict(index, a, b, statement)
            if statement.kind == "point"
            else _negation_conflict(index, a, b, statement)
        )
    )


def _negation_conflict(index: _Transcript, a: int, b: int, statement: _Statement) -> str | None:
    """Where the words of a quote or a chapter's start (said as written, or nearly, in
    tokens a to b) differ in polarity: a negation the quote adds or leaves out, or, for a
    quote that opens mid-sentence (a lower-case first word), a negation said just before
    it in its clause. Their own negations are the transcript's, so nothing else is
    compared: where the sentences and clauses of a transcript without punctuation fall
    is not what a quotation's polarity depends on."""
    stated = sum(1 for k, t in enumerate(statement.tokens) if _negates(statement.reading, k, t))
    said = sum(
        1 for p in _said_with(index, a, b, statement) if _negates(index.reading, p, index.tokens[p])
    )
    if stated % 2 != said % 2:
        if said > stated:
            return "the transcript says a “not” the statement leaves out"
        return "the statement says a “not” the transcript does not"
    first = statement.text.lstrip(" \"'\u201c\u2018([")[:1]
    if first.islower() and a < len(index.polarity) and _denied_before(index, a):
        return "the transcript denies these words: a negation is said just before them"
    return None


def _said_with(index: _Transcript, a: int, b: int, statement: _Statement) -> set[int]:
    """The transcript tokens the statement's words are said as, from a few words before a
    (where its first words may be) to b, and the few words between two of them; not the
    stretch an elision leaves out."""
    lo = max(0, a - 6)
    matched = [
        lo + op.dest_start + offset
        for op in Indel.opcodes(statement.stems, index.stems[lo:b])
        if op.tag == "equal"
        for offset in range(op.dest_end - op.dest_start)
    ]
    said = set(matched)
    for x, y in zip(matched, matched[1:], strict=False):
        if y - x - 1 <= 3:
            said.update(range(x + 1, y))
    return said


def _negates(reading: Reading, k: int, term: str) -> bool:
    """Whether token k is a negation (its polarity 0 and a negating word)."""
    following = reading.tokens[k + 1] if k + 1 < len(reading.tokens) else ""
    return reading.polarity[k] == 0 and _is_negation(term, following)


def _denied_before(index: _Transcript, a: int) -> bool:
    """Whether token a is said inside the reach of a negation before it in its clause."""
    return index.polarity[a] < 0 and any(
        _negates(index.reading, p, index.tokens[p])
        for p in range(max(0, a - 8), a)
        if index.clause[p] == index.clause[a]
    )
