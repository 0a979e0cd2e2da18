"""How a text reads: its tokens, the sentences and clauses they belong to, and whether each
is affirmed or denied.

A transcript and a statement are read by the same code, so that they can be compared
clause by clause: a sentence ends at a full stop, question or exclamation mark (or, in a
transcript without punctuation, at a pause); a clause ends at a comma, semicolon, colon or
dash, before a conjunction that starts one ("but", "because", "while"…), before "and" or
"or" followed by a subject, and after a verb of reporting ("says", "claimed"). A negation
("not", "never", "no longer", "rather than", "instead of", "without"…) denies the rest of
its clause; a second one in the same clause affirms it again. So "speed, not size" and
"speed rather than size" both deny "size" and affirm "speed", and "it's not that it
couldn't" affirms what "it could" affirms.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .tokens import _FILLERS, _is_content, _normalised, _stem, _word_tokens

# Words that deny the rest of their clause.
NEGATORS = frozenset(
    """not never no nothing none nobody nowhere neither nor without cannot stop stops stopped
    stopping avoid avoids avoided avoiding refuse refuses refused""".split()
)
# "not only", "not just": a negation of nothing ("not only fast but cheap").
_NOT_A_NEGATION_AFTER_NOT = frozenset("only just merely simply least".split())
# Two-word negations: the first word denies, the second is part of it.
_PAIRED = {"rather": "than", "instead": "of"}
# Words that start a clause of their own.
_CLAUSE_WORDS = frozenset(
    "but because while whereas although though unless if when which nor".split()
)
_SUBJECTS = frozenset("i we he she they you it there".split())
# Words a predicate's "not" follows ("is not", "didn't"); after any other word "not" denies
# what follows it alone ("speed not size"), a clause of its own.
_BEFORE_A_DENIAL = frozenset(
    """is are was were am be been do does did can could will would should shall have has had
    must may might need it that this there""".split()
)
# Verbs whose clause goes on in the next ("I don't think it is safe" denies "safe").
_RAISING = frozenset(
    """think thinks thought believe believes believed expect expects expected suppose
    guess reckon imagine seem seems seemed appear appears want wants say says said that""".split()
)


# Words after which a clause goes on: articles, prepositions, auxiliaries, conjunctions.
_GOES_ON = frozenset(
    """a an the of to in on at for with by from about as into onto than that and or but if
    because so not no never very too is are was were be been am do does did can could will
    would should shall have has had must may might my your our their his her its""".split()
)


_AUXILIARY = frozenset(
    "is are was were am be been do does did can could will would should shall have has had "
    "must may might".split()
)
_DETERMINERS = frozenset("the a an its their his her our my your these those".split())


def _list_item(
    tokens: Sequence[str], ends: Sequence[str | None], lasts: Sequence[int], k: int
) -> bool:
    """Whether the words from token k, after a comma, are one more item of a list ("not the
    company, its research, its cluster or its failed runs"), not a clause: they open with a
    determiner and have no verb of their own before the next mark."""
    if tokens[k] not in _DETERMINERS:
        return False
    for j in range(k, min(len(tokens), k + 8)):
        if tokens[j] in _AUXILIARY or tokens[j] in _SUBJECTS - {"it"}:
            return False
        if ends[lasts[j]]:
            return True
    return False


def _ends_a_claim(term: str) -> bool:
    """Whether a clause may end after `term`, so that a subject after it starts another."""
    return term not in _GOES_ON and term not in _RAISING


# After these a new clause starts: what is reported is not denied by a negation before it.
REPORTING = frozenset(
    """says said say argues argued notes noted explains explained adds added claims claimed
    warns warned admits admitted insists insisted reports reported tells told writes wrote
    recalls recalled concludes concluded confirms confirmed agrees agreed advises
    advised""".split()
)
# What joins a gerund subject to its predicate ("rolling your own cache is a trap").
_COPULAS = frozenset(
    "is are was were be will would can could makes made means meant costs takes".split()
)
# Words that carry a claim although they are too common to help find one: "it was fine",
# "that's okay" are denied or affirmed like any other word.
EVALUATIVE = frozenset("okay fine right true sure enough good well safe worth".split())

_TRAILING = "\"')]}\u201d\u2019\u00bb*_"
_LEADING = "\"'([{\u201c\u2018\u00ab*_"
_ABBREVIATIONS = frozenset("mr mrs ms dr st vs prof inc ltd jr sr no approx fig".split())
_DASHES = frozenset({"-", "--", "\u2013", "\u2014", "\u2015"})
_SINGLE_LETTERS = re.compile(r"^(?:[A-Za-z]\.)+$")
_DIGIT_AND_LETTER = re.compile(r"\d")
# A letter suffix on a number that is a unit or a scale, not part of a name: "2.5x", "10k",
# "21st", "1990s", "14kb", "40ms", "5gw".
_UNIT_SUFFIX = re.compile(
    r"^\$?[\d.,]+(?:x|k|m|b|bn|st|nd|rd|th|s|ms|kb|mb|gb|tb|w|kw|mw|gw|kwh|mwh|gwh|h|%)?$",
    re.IGNORECASE,
)


# Words that open a sentence with a comma and are not someone spoken to.
_NOT_VOCATIVE = frozenset(
    """so well okay yes yeah no oh now and but look right sure thanks first second third
    also honestly actually again then today""".split()
)
_END_RANK = {"": 0, "clause": 1, "sentence": 2}


@dataclass(frozen=True)
class Reading:
    """The tokens of a text (a transcript's words or a statement) and how they read."""

    tokens: list[str]
    stems: list[str]
    # The first and last word each token was said in.
    first_word: list[int]
    last_word: list[int]
    sentence: list[int]
    clause: list[int]
    # +1 affirmed, -1 denied, 0 neither (a negation itself, a gerund subject).
    polarity: list[int]
    # Written with a capital inside a sentence, or with capitals or digits inside it.
    cased: list[bool]
    # A number written inside a name ("GPT-4", "A100", "4o", "gpt-oss-20b").
    glued: list[bool]
    # The first token of each sentence.
    sentence_starts: list[int]
    # Whether sentences come from punctuation (else from pauses and length).
    punctuated: bool = True
    # A number written with group separators ("2,000"): a count, never a year.
    grouped: tuple[bool, ...] = ()
    # A word opening a sentence with a capital and a comma after it ("Laura, the stage is
    # yours"): someone spoken to, a name.
    vocative: tuple[bool, ...] = ()
    # Written without capitals (auto captions): names cannot be told by their case.
    uncased: bool = False


def read(
    texts: Sequence[str],
    *,
    gaps: Sequence[float] | None = None,
    skip_notes: bool = False,
    bounded: bool | None = None,
) -> Reading:
    """How the words `texts` read. `gaps` (seconds of silence after each word) break
    sentences and clauses where the text has no punctuation (fewer than one full stop in
    60 words): a sentence at a pause four times the median pause between words (at least
    0.25 s) or after 40 tokens, a clause at half that pause, and a negation reaches only
    the few words after it. With punctuation, only a pause of 3 s breaks a sentence.
    `bounded` reads a statement as a transcript without punctuation is read (negations of
    short reach), so that the two are compared alike."""
    raw: list[str] = []
    places: list[int] = []
    for index, text in enumerate(texts):
        if skip_notes and text.startswith("[") and text.endswith("]"):
            continue  # a caption's note, not speech: "[Music]", "[Applause]"
        for term in _word_tokens(text):
            raw.append(term)
            places.append(index)
    ends = [_word_end(text) for text in texts]
    punctuated = sum(end == "sentence" for end in ends) * 60 >= max(1, len(texts))
    if gaps is not None:
        ends = _pause_ends(ends, gaps, punctuated)
    stops = frozenset(k for k, end in enumerate(ends) if end == "sentence")
    tokens, firsts, lasts = _normalised(raw, places, stops)
    stems = [_stem(term) for term in tokens]
    opens = [bool(text) and text[0] in "([{\u2014\u2013" for text in texts]
    if bounded is None:
        bounded = not punctuated
    fillers = [bool(text) and all(t in _FILLERS for t in _word_tokens(text)) for text in texts]
    sentence_breaks, clause_breaks = _breaks(
        tokens, firsts, lasts, ends, opens, punctuated, bounded, fillers
    )
    sentence, starts = _numbered(len(tokens), sentence_breaks)
    clause, _ = _numbered(len(tokens), sentence_breaks | clause_breaks)
    polarity = _polarity(tokens, clause)
    _questions_neutral(polarity, sentence, lasts, ends, texts)
    starts_set = set(starts)
    cased = [
        _is_cased(texts[firsts[k]], at_start=k in starts_set) if tokens[k].isalpha() else False
        for k in range(len(tokens))
    ]
    glued = [_is_glued(texts[firsts[k]], tokens[k]) for k in range(len(tokens))]
    grouped = tuple("," in texts[firsts[k]] and tokens[k][:1].isdigit() for k in range(len(tokens)))
    vocative = tuple(
        k in starts_set
        and texts[lasts[k]].lstrip(_LEADING)[:1].isupper()
        and texts[lasts[k]].endswith(",")
        and tokens[k] not in _NOT_VOCATIVE
        for k in range(len(tokens))
    )
    return Reading(
        tokens,
        stems,
        firsts,
        lasts,
        sentence,
        clause,
        polarity,
        cased,
        glued,
        starts,
        punctuated,
        grouped,
        vocative,
        sum(any(c.isupper() for c in text) for text in texts) * 200 < len(texts),
    )


def _pause_ends(
    ends: Sequence[str | None], gaps: Sequence[float], punctuated: bool
) -> list[str | None]:
    """Word ends with the pauses that end a sentence or a clause where the text does not."""
    if punctuated:
        sentence_pause, clause_pause = 3.0, math.inf
    else:
        typical = statistics.median(gaps) if gaps else 0.0
        sentence_pause = max(0.25, 4 * typical)
        clause_pause = sentence_pause / 2
    marked = list(ends)
    for k, gap in enumerate(gaps):
        if gap >= sentence_pause:
            marked[k] = "sentence"
        elif gap >= clause_pause and marked[k] is None:
            marked[k] = "clause"
    return marked


def _word_end(text: str) -> str | None:
    """How a word ends a stretch of text: "sentence", "clause" or None."""
    if text in _DASHES or text.endswith(("\u2014", "--", "\u2013")):
        return "clause"
    stripped = text.rstrip(_TRAILING)
    if not stripped:
        return None
    last = stripped[-1]
    if last in "!?":
        return "sentence"
    if last == ".":
        if stripped.endswith("...") or _is_abbreviation(stripped):
            return "clause" if stripped.endswith("...") else None
        return "sentence"
    if last in ",;:\u2026":
        return "clause"
    return None


def _is_abbreviation(word: str) -> bool:
    bare = word.lstrip(_LEADING)
    return bool(_SINGLE_LETTERS.match(bare)) or bare[:-1].casefold() in _ABBREVIATIONS


def _breaks(
    tokens: Sequence[str],
    firsts: Sequence[int],
    lasts: Sequence[int],
    ends: Sequence[str | None],
    opens: Sequence[bool],
    punctuated: bool,
    bounded: bool,
    fillers: Sequence[bool],
) -> tuple[set[int], set[int]]:
    """The tokens that start a sentence, and those that start a clause."""
    sentences: set[int] = set()
    clauses: set[int] = set()
    length = 0
    for k in range(1, len(tokens)):
        length += 1
        word, next_word = lasts[k - 1], firsts[k]
        if next_word > word:
            # A dash or a note between the two words may end the clause; the commas a
            # captioner puts around a filler ("being, uh, coworkers") do not.
            end = max((ends[w] or "" for w in range(word, next_word)), key=_END_RANK.__getitem__)
            if end == "clause" and next_word > word + 1 and fillers[word + 1 : next_word]:
                if all(fillers[word + 1 : next_word]):
                    end = ""
            if end == "sentence":
                sentences.add(k)
            elif (end == "clause" or opens[next_word]) and not _list_item(tokens, ends, lasts, k):
                clauses.add(k)
        if not punctuated and length >= 40:
            sentences.add(k)
        if k in sentences:
            length = 0
            continue
        term = tokens[k]
        following = tokens[k + 1] if k + 1 < len(tokens) else ""
        if term in _CLAUSE_WORDS and tokens[k - 1] not in _CLAUSE_WORDS:
            clauses.add(k)
        elif _PAIRED.get(term) == following or term == "without":
            clauses.add(k)  # "speed rather than size": what is denied is a clause of its own
        elif term in ("and", "or") and (
            following in NEGATORS or following in _AUXILIARY or following.endswith("ed")
        ):
            clauses.add(k)  # "it is not a test and cannot be memorised": two predicates
        elif term == "not" and tokens[k - 1] not in _BEFORE_A_DENIAL:
            clauses.add(k)  # "what leaves the phone not where the model runs"
        elif _starts_a_clause(term, following) and _ends_a_claim(tokens[k - 1]):
            clauses.add(k)  # "the leaderboard isn't wrong it's answering…"
        elif term in ("and", "or", "so") and k + 1 < len(tokens) and tokens[k + 1] in _SUBJECTS:
            clauses.add(k)
        elif tokens[k - 1] in REPORTING:
            clauses.add(k)
    if bounded:
        clauses |= _scope_ends(tokens, sentences | clauses)
    return sentences, clauses


def _starts_a_clause(term: str, following: str) -> bool:
    """Whether a subject starts a clause here: "we", "they"… always; "it" and "you", which
    are objects too, before a verb that goes with them ("it's", "you can")."""
    if term in ("i", "we", "he", "she", "they"):
        return True
    if term in ("you", "it"):
        return following in _BEFORE_A_DENIAL or _is_content(following)
    return term in _SUBJECTS and following in _BEFORE_A_DENIAL


# Without punctuation a clause's end is unknown: a negation then reaches the verb and
# what it governs, this many words of meaning (or twice as many tokens) at most.
_UNPUNCTUATED_SCOPE = 3


def _scope_ends(tokens: Sequence[str], breaks: set[int]) -> set[int]:
    """Where the reach of each negation ends in a text without punctuation: after the verb
    and what it governs, `_UNPUNCTUATED_SCOPE` words of meaning (or twice as many
    tokens), unless a clause ends sooner."""
    ends = set()
    for j, term in enumerate(tokens):
        if term not in NEGATORS and term not in _PAIRED:
            continue
        content = 0
        for k in range(j + 1, min(len(tokens), j + 2 * _UNPUNCTUATED_SCOPE + 2)):
            if k in breaks:
                break
            if content >= _UNPUNCTUATED_SCOPE or k - j > 2 * _UNPUNCTUATED_SCOPE:
                ends.add(k)
                break
            if _is_content(tokens[k]):
                content += 1
    return ends


def _numbered(size: int, breaks: set[int]) -> tuple[list[int], list[int]]:
    """The number of the stretch each token is in, and the first token of each."""
    numbers = []
    starts = [0] if size else []
    current = 0
    for k in range(size):
        if k in breaks:
            current += 1
            starts.append(k)
        numbers.append(current)
    return numbers, starts


def _polarity(tokens: Sequence[str], clause: Sequence[int]) -> list[int]:
    """Each token's polarity: denied after an odd number of negations in its clause,
    affirmed in a clause with none. The words of a negated clause before its first
    negation (its subject, a fronted phrase) are neither: "the agent never issues a
    refund" and "a refund is never issued by the agent" deny the same claim with the
    words on either side of "never"."""
    polarity = [1] * len(tokens)
    negated = _negated_clauses(tokens, clause)
    denied = False
    seen_negation = False
    k = 0
    while k < len(tokens):
        if k == 0 or clause[k] != clause[k - 1]:
            denied = seen_negation = False
            _gerund_subject(tokens, clause, k, polarity)
        term = tokens[k]
        after = tokens[k + 1] if k + 1 < len(tokens) and clause[k + 1] == clause[k] else ""
        if _is_negation(term, after):
            denied, seen_negation = not denied, True
            polarity[k] = 0
            if _PAIRED.get(term) == after or (term == "no" and after == "longer"):
                k += 1
                polarity[k] = 0
            k += 1
            continue
        if polarity[k]:
            if clause[k] in negated and not seen_negation:
                polarity[k] = 0
            else:
                polarity[k] = -1 if denied else 1
        k += 1
    return polarity


def _negated_clauses(tokens: Sequence[str], clause: Sequence[int]) -> set[int]:
    negated = set()
    for k, term in enumerate(tokens):
        after = tokens[k + 1] if k + 1 < len(tokens) and clause[k + 1] == clause[k] else ""
        if _is_negation(term, after):
            negated.add(clause[k])
    return negated


def _questions_neutral(
    polarity: list[int],
    sentence: Sequence[int],
    lasts: Sequence[int],
    ends: Sequence[str | None],
    texts: Sequence[str],
) -> None:
    """A question affirms and denies nothing ("So it's fine to announce a win? No.")."""
    k = len(polarity)
    while k > 0:
        end = k - 1
        start = end
        while start > 0 and sentence[start - 1] == sentence[end]:
            start -= 1
        last_text = texts[lasts[end]].rstrip(_TRAILING)
        if ends[lasts[end]] == "sentence" and last_text.endswith("?"):
            for i in range(start, end + 1):
                polarity[i] = 0
        k = start


def _is_negation(term: str, after: str) -> bool:
    if term in _PAIRED:
        return _PAIRED[term] == after
    if term == "not":
        return after not in _NOT_A_NEGATION_AFTER_NOT
    return term in NEGATORS


def _gerund_subject(
    tokens: Sequence[str], clause: Sequence[int], k: int, polarity: list[int]
) -> None:
    """A clause that opens with a gerund and its object before a copula ("rolling your own
    cache is a trap"): those words name an action, they neither affirm nor deny it."""
    term = tokens[k]
    if not (term.endswith("ing") and len(term) > 4 and _is_content(term)):
        return
    for j in range(k + 1, min(len(tokens), k + 12)):
        if clause[j] != clause[k] or tokens[j] in NEGATORS:
            return
        if tokens[j] in _COPULAS:
            for i in range(k, j):
                polarity[i] = 0
            return


def _is_cased(text: str, *, at_start: bool) -> bool:
    bare = text.lstrip(_LEADING)
    if not bare:
        return False
    if any(c.isupper() for c in bare[1:]) and not bare.isupper() or _DIGIT_AND_LETTER.search(bare):
        return True
    return bare[0].isupper() and not at_start and bare != "I"


def _is_glued(text: str, token: str) -> bool:
    """Whether number `token` is written inside a name: after letters ("GPT-4", "A100",
    "gpt-oss-20b") or with letters right after it that are not its unit ("4o"); not a
    number said in words ("two") or joined to what it counts ("500-line", "40-second")."""
    if not token[:1].isdigit():
        return False
    bare = text.strip(_LEADING + _TRAILING + ".,;:!?")
    first_digit = next((k for k, c in enumerate(bare) if c.isdigit()), None)
    if first_digit is None:
        return False  # a number said in words ("two")
    if any(c.isalpha() for c in bare[:first_digit]):
        return True
    head = bare.split("-", 1)[0]
    return any(c.isalpha() for c in head) and not _UNIT_SUFFIX.match(head)
