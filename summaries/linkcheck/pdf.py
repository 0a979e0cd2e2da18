"""What a PDF source says: its metadata title and its text.

Papers and filings are cited as PDFs. pypdf (pure Python, maintained) reads them from the
fetched bytes, which the fetcher has already capped at its body limit; nothing external is
run. A damaged, encrypted or image-only PDF gives no text, and its claims are reported as
not found rather than failing the check.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypdf import PdfReader

logger = logging.getLogger(__name__)

# Text extraction is pure Python: bound the work a single source can cost a worker.
MAX_PAGES = 150
MAX_TEXT_CHARS = 2_000_000
# A word hyphenated at a line end ("fas-\nter") reads as one word; only between lower-case
# letters, so that "GPT-\n4" keeps its hyphen.
_LINE_END_HYPHEN_RE = re.compile(r"(?<=[a-z])-[ \t]*\n\s*(?=[a-z])")


@dataclass(frozen=True)
class PdfDocument:
    title: str | None
    text: str | None  # None when no text could be read


def read_pdf(body: bytes) -> PdfDocument:
    """The title (document information, else XMP) and text of a PDF's first MAX_PAGES pages."""
    # Imported when a PDF is met: most processes (web workers, commands) never read one,
    # and pypdf costs about 0.1 s to import.
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            return PdfDocument(title=None, text=None)
        title = _title(reader)
        text = _text(reader)
    except Exception as error:  # noqa: BLE001 - any malformed PDF is "no text", never a crash
        logger.info("unreadable PDF (%s: %s)", type(error).__name__, error)
        return PdfDocument(title=None, text=None)
    return PdfDocument(title=title, text=text)


def _title(reader: PdfReader) -> str | None:
    metadata = reader.metadata
    title = metadata.title if metadata is not None else None
    if not title and reader.xmp_metadata is not None:
        titles = reader.xmp_metadata.dc_title or {}
        title = titles.get("x-default") or next(iter(titles.values()), None)
    title = " ".join(str(title).split()) if title else ""
    return title or None


def _text(reader: PdfReader) -> str | None:
    parts: list[str] = []
    size = 0
    for page in reader.pages[:MAX_PAGES]:
        page_text = page.extract_text() or ""
        parts.append(page_text)
        size += len(page_text)
        if size >= MAX_TEXT_CHARS:
            break
    text = _LINE_END_HYPHEN_RE.sub("", "\n".join(parts))[:MAX_TEXT_CHARS]
    return text if text.strip() else None
