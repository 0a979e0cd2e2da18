"""The quotations of a chapter body, and who says them."""

from __future__ import annotations

import re

from .base import Quote

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
