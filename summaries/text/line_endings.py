"""Text as it is stored: the differences no editor makes on purpose taken out.

Browsers send a textarea's line breaks as CRLF (the HTML standard asks them to), API
clients on Windows may too, and the stored text has LF; whitespace at the very end of a
text is left by a pasted paragraph and is trimmed by the admin's forms but not by the API.
Neither changes what readers see, so neither may count as an edit.

Whitespace inside the text is kept as typed: two spaces at the end of a line are a line
break in Markdown, indentation makes a code block, and in a code block every space is
content.
"""


def normalised_text(text: str) -> str:
    """`text` with every line break as LF (CRLF and lone CR too) and no whitespace at its
    end. Its start is kept: four leading spaces open a Markdown code block."""
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip()
