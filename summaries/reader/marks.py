"""Search words marked in text: ts_headline's markers turned into <mark> (marked_html), and
the fallback's marking and excerpts (highlight, excerpt), shared by search results, the
transcript lines they quote (search_transcripts) and the transcript page (receipts).

Pure text: no queries, no other reader module.
"""

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from summaries.text.apostrophes import APOSTROPHES, fold_apostrophes

# Private-use characters: ts_headline's StartSel and StopSel. Removed from the text
# before ts_headline sees it, so a marker in the output is always one of ours.
START, STOP = "\ue000", "\ue001"
_MARKED = re.compile(f"{START}([^{START}{STOP}]*){STOP}")
_MARKERS = re.compile(f"[{START}{STOP}]")
# ts_headline leaves out whatever its parser reads as a tag ("use <b> for bold" would read
# "use  for bold"): < > & are hidden from it as these characters, and put back after.
HIDDEN = {"<": "\ue002", ">": "\ue003", "&": "\ue004"}
_SHOWN = str.maketrans({hidden: char for char, hidden in HIDDEN.items()})
# ts_headline: up to SNIPPET_WORDS words around the best match.
SNIPPET_WORDS = 35
# The fallback: about SNIPPET_CHARS characters, starting a little before the first match.
SNIPPET_CHARS = 240
LEAD_CHARS = 60


def marked_html(text: str) -> SafeString:
    """ts_headline's output as HTML: < > & shown again, the text escaped, START…STOP as
    <mark>…</mark>."""
    html = _MARKED.sub(r"<mark>\1</mark>", str(escape(text.translate(_SHOWN))))
    return mark_safe(_MARKERS.sub("", html))  # noqa: S308 - escaped above; only <mark> added


def query_words(query: str) -> list[str]:
    """The words the fallback search matches (each anywhere, case-insensitively)."""
    return [word for word in query.split() if word]


def word_pattern(words: list[str]) -> re.Pattern | None:
    """A pattern finding any of the words, whatever their case and apostrophes (None: no
    words)."""
    if not words:
        return None
    # Longest first, so that "robotics" wins over "robot" at the same place.
    ordered = sorted({fold_apostrophes(word.lower()) for word in words}, key=len, reverse=True)
    # An apostrophe typed one way marks the word written with any other.
    any_apostrophe = f"['{re.escape(APOSTROPHES)}]"
    return re.compile(
        "|".join(re.escape(word).replace("'", any_apostrophe) for word in ordered),
        re.IGNORECASE,
    )


def highlight(text: str, words: list[str]) -> SafeString:
    """`text` escaped, with every occurrence of the words (any case) in <mark>; the
    marker characters are removed, as for ts_headline."""
    text = _MARKERS.sub("", text)
    pattern = word_pattern(words)
    if pattern is None:
        return escape(text)
    pieces, last = [], 0
    for match in pattern.finditer(text):
        pieces += [escape(text[last : match.start()]), "<mark>", escape(match.group()), "</mark>"]
        last = match.end()
    pieces.append(escape(text[last:]))
    return mark_safe("".join(pieces))  # noqa: S308 - every piece of text is escaped


def excerpt(text: str, words: list[str]) -> SafeString:
    """About SNIPPET_CHARS characters of `text` from a little before the first match (or
    from its start), cut at spaces, with the words marked."""
    text = " ".join(text.split())
    pattern = word_pattern(words)
    match = pattern.search(text) if pattern else None
    start = max(0, match.start() - LEAD_CHARS) if match else 0
    if start:
        start = text.find(" ", start) + 1 or start
    end = start + SNIPPET_CHARS
    if end < len(text):
        end = text.rfind(" ", start, end) if " " in text[start:end] else end
    piece = highlight(text[start:end].strip(), words)
    lead = "… " if start else ""
    tail = " …" if end < len(text) else ""
    return mark_safe(f"{lead}{piece}{tail}")  # noqa: S308 - piece is escaped
