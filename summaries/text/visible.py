"""Text readers must be able to see: titles, names and short labels typed by editors.

Zero-width spaces, bidi overrides and the like draw nothing, so a title made only of them
shows as an empty link, and at the edges of a title they reorder or hide the text around
it. They are dropped at the edges, and text with no visible character is refused.
"""

import unicodedata

# Spaces, line and paragraph separators, control and format characters (zero-width
# spaces and joiners, bidi embeddings, overrides and isolates, the byte order mark).
EDGE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})
# Also drawn as nothing on their own: combining marks, surrogates, private-use and
# unassigned code points.
UNSEEN_CATEGORIES = EDGE_CATEGORIES | {"Mn", "Me", "Cs", "Co", "Cn"}
# Letters and symbols Unicode classes as visible that every font draws blank: the Hangul
# fillers, the braille blank and the Mongolian vowel separator.
BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")

INVISIBLE_MESSAGE = (
    "This has no visible character: only spaces or invisible characters such as "
    "zero-width spaces or direction marks."
)


def _is_edge_character(character: str) -> bool:
    return character in BLANK_CHARACTERS or unicodedata.category(character) in EDGE_CATEGORIES


def strip_invisible_edges(text: str) -> str:
    """`text` without spaces and invisible characters at its start and end.

    Combining marks are kept: at the end they belong to the letter before them.
    """
    start, end = 0, len(text)
    while start < end and _is_edge_character(text[start]):
        start += 1
    while end > start and _is_edge_character(text[end - 1]):
        end -= 1
    return text[start:end]


def has_visible_character(text: str) -> bool:
    return any(
        character not in BLANK_CHARACTERS
        and unicodedata.category(character) not in UNSEEN_CATEGORIES
        for character in text
    )
