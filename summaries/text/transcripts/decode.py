"""The bytes of an uploaded transcript decoded to text: the codec its byte order mark names,
UTF-16 without a mark, UTF-8, else Windows-1252 or Latin-1; binary files refused.
"""

from __future__ import annotations

import re

from .base import TranscriptError

_BOMS = (
    # UTF-32 first: its little-endian mark starts like UTF-16's.
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_ENCODING_NAMES = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8",
    "utf-16-le": "UTF-16",
    "utf-16-be": "UTF-16",
    "utf-32-le": "UTF-32",
    "utf-32-be": "UTF-32",
    "cp1252": "Windows-1252 (Western European)",
    "latin-1": "Latin-1 (ISO 8859-1)",
}
# Control characters that no text file holds (tab, line breaks and form feed are allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_SAMPLE = 65_536
_NOT_TEXT = (
    "not a text file: a transcript is text (WebVTT, SubRip or JSON), and this file holds "
    "binary data (is it the video, or an image?)"
)


def _decode(data: bytes) -> tuple[str, str]:
    """The text of the file and the codec used: the one its byte order mark names, UTF-16
    recognised from its zero bytes, else UTF-8, else Windows-1252 or Latin-1."""
    if not data:
        raise TranscriptError("the file is empty")
    for mark, encoding in _BOMS:
        if data.startswith(mark):
            try:
                text = data[len(mark) :].decode(encoding.removesuffix("-sig"))
            except UnicodeDecodeError:
                raise TranscriptError(
                    f"the file starts with the mark of {_ENCODING_NAMES[encoding]} text but "
                    "its bytes are not " + _ENCODING_NAMES[encoding]
                ) from None
            return _text_only(text), encoding
    utf16 = _utf16_without_mark(data)
    if utf16:
        try:
            return _text_only(data.decode(utf16)), utf16
        except UnicodeDecodeError:
            raise TranscriptError(_NOT_TEXT) from None
    if b"\x00" in data:
        raise TranscriptError(_NOT_TEXT)
    try:
        return _text_only(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return _text_only(data.decode("cp1252")), "cp1252"
    except UnicodeDecodeError:
        # Five bytes have no character in Windows-1252; Latin-1 has one for every byte.
        return _text_only(data.decode("latin-1")), "latin-1"


def _utf16_without_mark(data: bytes) -> str:
    """ "utf-16-le" or "utf-16-be" when the file looks like UTF-16 without a byte order mark:
    the ASCII characters of a transcript (digits, colons, Latin letters) leave a zero byte
    in every other place. "" otherwise."""
    sample = data[:4096]
    pairs = len(sample) // 2
    if pairs < 2:
        return ""
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd >= pairs / 4 and even * 4 <= odd:
        return "utf-16-le"
    if even >= pairs / 4 and odd * 4 <= even:
        return "utf-16-be"
    return ""


def _text_only(text: str) -> str:
    sample = text[:_SAMPLE]
    if "\x00" in text or len(_CONTROL.findall(sample)) > max(1, len(sample) // 100):
        raise TranscriptError(_NOT_TEXT)
    return text.removeprefix("\ufeff")
