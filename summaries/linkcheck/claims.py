"""Does a fetched page still say what the summary claims? (issue 6, section 3)"""

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
# "40%"; or a run of whitespace.
_TOKEN_RE = re.compile(
    r"""
    (?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)
    (?:
        (?P<times>\s*(?:×|x(?![a-z0-9])|times(?![a-z])|-?\s*fold(?![a-z])))
      | (?P<percent>\s*(?:%|percent(?![a-z])|per\s+cent(?![a-z])))
    )?
  | (?P<space>\s+)
    """,
    re.IGNORECASE | re.VERBOSE,
)


def _normalise(text: str) -> tuple[str, list[int]]:
    """The matching form of a text, and for each of its characters the offset it came from.

    Offsets point into `_base(text)`.
    """
    characters: list[str] = []
    sources: list[int] = []

    def emit(value: str, start: int, end: int) -> None:
        for index, character in enumerate(value):
            characters.append(character)
            # The last character of a replacement stands for the end of what it replaced.
            sources.append(end - 1 if index == len(value) - 1 else start)

    position = 0
    for match in _TOKEN_RE.finditer(text):
        for offset in range(position, match.start()):
            character = text[offset]
            if character not in _INVISIBLE:
                emit(character.casefold().translate(_EQUIVALENT), offset, offset + 1)
        if match.group("space"):
            emit(" ", match.start(), match.end())
        else:
            value = match.group("number").replace(",", "")
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


def normalise_phrase(phrase: str) -> str:
    """The form a phrase is matched in: "2.5 Times  Faster" reads "2.5x faster"."""
    return _normalise(_base(phrase))[0].strip()


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
    thousands separators ("1,000" is "1000") and the spelling of multipliers and
    percentages ("2.5×" = "2.5x" = "2.5 times" = "2.5-fold"; "40%" = "40 percent" =
    "40 per cent"). A phrase is not found inside a longer word or number.
    """
    normalised_phrase = normalise_phrase(phrase)
    if not text or not normalised_phrase:
        return None
    base = _base(text)
    normalised_text, sources = _normalise(base)
    match = _phrase_pattern(normalised_phrase).search(normalised_text)
    if match is None:
        return None
    start, end = sources[match.start()], sources[match.end() - 1] + 1
    return _excerpt(base, start, end)


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
    if not normalise_phrase(phrase):
        raise ValueError("a verdict needs a non-blank phrase")
    if find_phrase(result_text, phrase) is None:
        return "not_found"
    if (
        confirmed_fingerprint
        and current_fingerprint
        and confirmed_fingerprint != current_fingerprint
    ):
        return "changed"
    return "supported"
