"""Apostrophes as search reads them, however a word's apostrophe was written or typed.

Editors and readers write ' ’ ‘ ʼ ＇ or ` for the same apostrophe: search reads each as a
straight one, in the query and in the text it compares (`fold_apostrophes`). The text
stored for search has the modifier letter ʼ as the typographic ’ (`searchable`):
PostgreSQL's parser reads ʼ as a letter ("Anthropicʼs" would be one word there) and splits
words at the others, and ’ looks the same in snippets.
"""

# Besides the straight apostrophe: the right and left single quotation marks, the modifier
# letter apostrophe, the full-width apostrophe, the backtick.
APOSTROPHES = "’‘ʼ＇`"
MODIFIER_LETTER = "ʼ"
TYPOGRAPHIC = "’"
_TO_STRAIGHT = str.maketrans(dict.fromkeys(APOSTROPHES, "'"))


def fold_apostrophes(text: str) -> str:
    """The text with each of APOSTROPHES as a straight apostrophe (same length)."""
    return text.translate(_TO_STRAIGHT)


def searchable(text: str) -> str:
    """The text as stored for search: the modifier letter ʼ as the typographic ’."""
    return text.replace(MODIFIER_LETTER, TYPOGRAPHIC)
