"""Does a fetched page still say what the summary claims?"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Literal

Verdict = Literal["supported", "not_found", "changed"]
EXCERPT_CHARS = 200

# Removed before matching: soft hyphen, zero-width space/joiners, word joiner, BOM.
_INVISIBLE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")
# Typographic quotes and dashes read as their ASCII forms (after NFKC, which already folds
# full-width forms and non-breaking spaces).
_EQUIVALENT = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′`´", "'"),
        **dict.fromkeys("“”„‟″«»", '"'),
        **dict.fromkeys("‐‑‒–—―−﹣", "-"),
    }
)
# A number (thousands separators dropped) with an optional multiplier or percent sign, so
# that "2.5×", "2.5x", "2.5 times", "2.5-fold" all read "2.5x" and "40 per cent" reads
# "40%"; or a run of whitespace. Never across a line (BLOCK). GROUPS is where the spaced
# form ("1 000", also with a no-break or thin space, which NFKC makes a space) is allowed:
# see find_phrase.
_READING_PATTERN = r"""
    (?P<number>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?GROUPS|\d+(?:\.\d+)?)
    (?:
        (?P<times>[^\S\n]*(?:×|x(?![a-z0-9])|times(?![a-z])|-?[^\S\n]*fold(?![a-z])))
      | (?P<percent>[^\S\n]*(?:%|percent(?![a-z])|per[^\S\n]+cent(?![a-z])))
    )?
  | (?P<space>\s+)
    """
_TOKEN_RE = re.compile(_READING_PATTERN.replace("GROUPS", ""), re.IGNORECASE | re.VERBOSE)
_SPACED_TOKEN_RE = re.compile(
    _READING_PATTERN.replace("GROUPS", r"|\d{1,3}(?:[ ]\d{3})+(?!\d)(?:\.\d+)?"),
    re.IGNORECASE | re.VERBOSE,
)
_SPACED_NUMBER_RE = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?!\d)")
BLOCK = "\n"  # separates blocks (paragraphs, cells) in a page's text: see page.Page


def _normalise(text: str, *, spaced: bool = False) -> tuple[str, list[int]]:
    """The matching form of a text, and for each of its characters the offset it came from.

    Offsets point into `_base(text)`. A whitespace run that holds a BLOCK stays a BLOCK, so
    that no phrase is found across two blocks. With `spaced`, "1 000" is the number 1000.
    """
    characters: list[str] = []
    sources: list[int] = []

    def emit(value: str, start: int, end: int) -> None:
        for index, character in enumerate(value):
            characters.append(character)
            # The last character of a replacement stands for the end of what it replaced.
            sources.append(end - 1 if index == len(value) - 1 else start)

    position = 0
    tokens = _SPACED_TOKEN_RE if spaced else _TOKEN_RE
    for match in tokens.finditer(text):
        for offset in range(position, match.start()):
            character = text[offset]
            if character not in _INVISIBLE:
                emit(character.casefold().translate(_EQUIVALENT), offset, offset + 1)
        if match.group("space"):
            emit(BLOCK if BLOCK in match.group() else " ", match.start(), match.end())
        else:
            value = match.group("number").replace(",", "").replace(" ", "")
            if match.group("times"):
                value += "x"
            elif match.group("percent"):
                value += "%"
            emit(value, match.start(), match.end())
        position = match.end()
    for offset in range(position, len(text)):
        character = text[offset]
        if character not in _INVISIBLE:
            emit(character.casefold().translate(_EQUIVALENT), offset, offset + 1)
    return "".join(characters), sources


def _base(text: str) -> str:
    """Entities decoded and compatibility forms folded (NFKC): what excerpts are cut from."""
    return unicodedata.normalize("NFKC", html.unescape(text))


def normalise_phrase(phrase: str, *, spaced: bool = False) -> str:
    """The form a phrase is matched in: "2.5 Times  Faster" reads "2.5x faster"."""
    # A phrase is one block: line breaks typed or pasted into it are spaces.
    return _normalise(" ".join(_base(phrase).split()), spaced=spaced)[0].strip()


def _phrase_pattern(normalised: str) -> re.Pattern[str]:
    """The phrase, not glued to a longer word or number ("5%" is not in "2.5%")."""
    before = r"(?<!\w)" if normalised[0].isalnum() else ""
    if normalised[0].isdigit():
        before += r"(?<!\d[.,])"
    after = r"(?!\w)" if normalised[-1].isalnum() else ""
    if normalised[-1].isdigit():
        after += r"(?![.,]\d)"
    return re.compile(before + re.escape(normalised) + after)


def _excerpt(base: str, start: int, end: int) -> str:
    """About EXCERPT_CHARS characters around base[start:end], cut at word boundaries."""
    context = max(0, (EXCERPT_CHARS - (end - start)) // 2)
    left, right = max(0, start - context), min(len(base), end + context)
    if left > 0:
        space = base.find(" ", left, start)
        left = space + 1 if space != -1 else left
    if right < len(base):
        space = base.rfind(" ", end, right)
        right = space if space != -1 else right
    excerpt = " ".join(base[left:right].split())
    return ("…" if left > 0 else "") + excerpt + ("…" if right < len(base) else "")


def find_phrase(text: str | None, phrase: str) -> str | None:
    """The excerpt (about 200 characters) around the phrase in the text, or None.

    Matching ignores case, whitespace, HTML entities, Unicode compatibility forms,
    typographic quotes and dashes, invisible characters (soft hyphens, zero-width spaces),
    thousands separators ("1,000" and "1 000" are "1000") and the spelling of multipliers
    and percentages ("2.5×" = "2.5x" = "2.5 times" = "2.5-fold"; "40%" = "40 percent" =
    "40 per cent"). A phrase is not found inside a longer word or number, nor across two
    blocks of the text (lines: paragraphs, list items, table cells of a page).
    """
    if not text or not normalise_phrase(phrase):
        return None
    base = _base(text)
    # "10 100-metre runners" holds the number 100 as much as "1 000 tokens" holds 1000: the
    # spaced reading is tried only when the plain one finds nothing and a side has one.
    readings = [False]
    if _SPACED_NUMBER_RE.search(base) or _SPACED_NUMBER_RE.search(_base(phrase)):
        readings.append(True)
    for spaced in readings:
        normalised_text, sources = _normalise(base, spaced=spaced)
        pattern = _phrase_pattern(normalise_phrase(phrase, spaced=spaced))
        match = pattern.search(normalised_text)
        if match is not None:
            start, end = sources[match.start()], sources[match.end() - 1] + 1
            return _excerpt(base, start, end)
    return None


def verdict(
    result_text: str | None,
    phrase: str,
    confirmed_fingerprint: str | None,
    current_fingerprint: str | None,
) -> Verdict:
    """The claim verdict of one citation against a fetched page.

    - "not_found": the phrase is not on the page (this wins: the claim has lost its source);
    - "changed": the phrase is there, but an editor confirmed the citation against a page
      whose fingerprint differs from the current one. The page changed since it was
      reviewed, so the phrase may now be read in another context ("was said to be 2.5
      times faster, but..."); confirming again records the new fingerprint;
    - "supported": the phrase is there and the page is as confirmed (or never confirmed).
    Call it for pages whose text was read (states ok and redirected, need_body=True); a
    missing text counts as not found. Raises ValueError for a blank phrase: a citation
    without a key phrase has no verdict.
    """
    return claim_verdict(result_text, phrase, confirmed_fingerprint, current_fingerprint)[0]


def claim_verdict(
    result_text: str | None,
    phrase: str,
    confirmed_fingerprint: str | None,
    current_fingerprint: str | None,
) -> tuple[Verdict, str | None]:
    """`verdict`, and the excerpt where the phrase was found (None when not found), from
    one search of the text (a PDF's text can be megabytes)."""
    if not normalise_phrase(phrase):
        raise ValueError("a verdict needs a non-blank phrase")
    excerpt = find_phrase(result_text, phrase)
    if excerpt is None:
        return "not_found", None
    if (
        confirmed_fingerprint
        and current_fingerprint
        and confirmed_fingerprint != current_fingerprint
    ):
        return "changed", excerpt
    return "supported", excerpt
