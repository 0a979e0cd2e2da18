"""What a passage and a statement claim, and where they disagree."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from rapidfuzz import fuzz

from .index import _Transcript
from .statements import _Statement
from .tokens import _ATTRIBUTION, _NEGATIONS, _NUMBER, _format_number, _is_content

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
