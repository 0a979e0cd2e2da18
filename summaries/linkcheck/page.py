"""What a fetched page says: its title and description, its main text and fingerprint,
bot walls."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from email.message import Message
from html.parser import HTMLParser

from .pdf import read_pdf

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})

# Elements whose text is not part of the page's main text ("text of the body with
# script/style/nav/header/footer removed"); template, svg and noscript never show as prose.
SKIPPED_TAGS = frozenset(
    {"script", "style", "nav", "header", "footer", "template", "svg", "noscript", "head"}
)
# Elements that end a block of text: "<p>a</p><p>b</p>" reads "a" and "b" on their own
# lines, so a phrase is never found across two paragraphs, list items or table cells.
# Inline elements join: "<b>2.5</b>x" reads "2.5x".
BLOCK_TAGS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt"),
        *("figcaption", "figure", "form", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li"),
        *("main", "ol", "p", "pre", "section", "summary", "table", "td", "th", "tr", "ul"),
        *("option", "caption"),
    }
)
# Elements that separate words within a block ("2.5<br>times" reads "2.5 times").
SPACING_TAGS = frozenset({"br", "button", "img", "input", "select", "textarea"})
BLOCK = "\n"  # what separates blocks in Page.text
# Elements that may be in <head>; any other element starts the body.
HEAD_TAGS = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template"})
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
    | {"track", "wbr"}
)

_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.I)
_WHITESPACE_RE = re.compile(r"\s+")
_BLOCK_RUN_RE = re.compile(r"\s*\n\s*")
_SPACE_RUN_RE = re.compile(r"[^\S\n]+")

# Bot walls and challenge pages (Cloudflare, Akamai, Imperva, DataDome, PerimeterX,
# reCAPTCHA/hCaptcha/Turnstile). Titles are compared whole; markers are looked for in the
# HTML source, so that an article that merely mentions CAPTCHAs is not taken for one.
CHALLENGE_TITLES = frozenset(
    {
        "just a moment...",
        "just a moment…",
        "attention required! | cloudflare",
        "please wait... | cloudflare",
        "access denied",
        "ddos-guard",
        "are you a robot?",
        "human verification",
        "security check",
        "verify you are human",
        "checking your browser",
    }
)
CHALLENGE_MARKERS = (
    "challenges.cloudflare.com",
    "cf-chl-",
    "cf_chl_",
    "/cdn-cgi/challenge-platform/",
    "g-recaptcha",
    "h-captcha",
    "hcaptcha.com",
    "captcha-delivery.com",
    "px-captcha",
    "_incapsula_resource",
    "checking your browser before accessing",
)


@dataclass(frozen=True)
class Page:
    title: str | None
    # Main text: blocks (paragraphs, list items, cells) one per line, other whitespace
    # collapsed; None when the body is not text.
    text: str | None
    fingerprint: str | None  # of the text with all whitespace collapsed (fingerprint_text)
    challenge: bool
    description: str | None = None  # <meta name="description"> (or og:description)


def _is_hidden(attrs: list[tuple[str, str | None]]) -> bool:
    """Whether an element is never shown: the hidden attribute or an inline style that
    hides it (text readers cannot see does not support a claim)."""
    for name, value in attrs:
        if name == "hidden":
            return True
        if name == "style" and value and _HIDDEN_STYLE_RE.search(value):
            return True
    return False


class _MainTextParser(HTMLParser):
    """Title, description and main text of an HTML document; tolerant of broken markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title_parts: list[str] | None = None
        self.title: str | None = None
        self.descriptions: dict[str, str] = {}
        self.parts: list[str] = []
        # Open elements whose text is left out, innermost last: a skipped or hidden element
        # and every element opened inside it, so that its own end tag is found.
        self._skipping: list[str] = []
        self._in_svg = 0
        self.in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and self.title is None and not self._in_svg:
            self.title_parts = []
            return
        if tag == "meta":
            self._meta(dict(attrs))
        if tag == "svg":
            self._in_svg += 1
        if tag not in HEAD_TAGS and tag not in ("html", "head"):
            self._enter_body()
        if tag not in VOID_TAGS and (
            self._skipping or tag in SKIPPED_TAGS or (tag != "body" and _is_hidden(attrs))
        ):
            self._skipping.append(tag)
        self._separate(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            self._meta(dict(attrs))
        self._separate(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title_parts is not None:
            self.title = collapse("".join(self.title_parts))
            self.title_parts = None
            return
        if tag == "svg" and self._in_svg:
            self._in_svg -= 1
        if tag == "head":
            self._enter_body()
        if tag in self._skipping:
            # Close the innermost open element of that name and everything inside it.
            index = len(self._skipping) - 1 - self._skipping[::-1].index(tag)
            del self._skipping[index:]
        self._separate(tag)

    def handle_data(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(data)
        elif not self._skipping:
            # A line break in the source is a space: only block ends make lines (BLOCK).
            self.parts.append(data.replace(BLOCK, " "))

    def close(self) -> None:
        super().close()
        if self.title_parts is not None:  # an unclosed <title>
            self.title = collapse("".join(self.title_parts))
            self.title_parts = None

    def _enter_body(self) -> None:
        """The body starts (<body>, </head>, or content that cannot be in the head)."""
        if not self.in_body:
            self.in_body = True
            if self._skipping[:1] == ["head"]:  # </head> and <body> are optional
                del self._skipping[:]

    def _separate(self, tag: str) -> None:
        if tag in BLOCK_TAGS:
            self.parts.append(BLOCK)
        elif tag in SPACING_TAGS:
            self.parts.append(" ")

    def _meta(self, attrs: dict[str, str | None]) -> None:
        key = (attrs.get("name") or attrs.get("property") or "").strip().lower()
        content = attrs.get("content")
        if key in ("description", "og:description") and content and key not in self.descriptions:
            self.descriptions[key] = collapse(content)

    @property
    def description(self) -> str | None:
        found = self.descriptions.get("description") or self.descriptions.get("og:description")
        return found or None

    def head_done(self) -> bool:
        """Whether the title and description are known: the body has started."""
        return self.in_body and self.title_parts is None


def collapse(text: str) -> str:
    """Whitespace runs as single spaces, trimmed."""
    return _WHITESPACE_RE.sub(" ", text).strip()


def collapse_blocks(text: str) -> str:
    """Whitespace runs as single spaces, or a single BLOCK where one holds a BLOCK."""
    return _SPACE_RUN_RE.sub(" ", _BLOCK_RUN_RE.sub(BLOCK, text)).strip()


def media_type(content_type: str | None) -> tuple[str, str | None]:
    """("text/html", "utf-8") from a Content-Type header value; ("", None) when absent."""
    if not content_type:
        return "", None
    message = Message()
    message["content-type"] = content_type
    charset = message.get_param("charset")
    return message.get_content_type().lower(), (charset if isinstance(charset, str) else None)


def _decode(body: bytes, charset: str | None) -> str:
    if not charset:
        match = _META_CHARSET_RE.search(body[:4096])
        charset = match.group(1).decode("ascii") if match else None
    if body.startswith(b"\xef\xbb\xbf"):
        charset = "utf-8-sig"
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")


def _sniff(body: bytes) -> str:
    """A media type for a body served without a usable one (mislabelled or missing)."""
    head = body[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<title")):
        return "text/html"
    if body.startswith(b"%PDF-"):
        return "application/pdf"
    if b"\x00" in body[:4096]:
        return "application/octet-stream"
    return "text/plain"


def fingerprint_text(text: str) -> str:
    """sha256 of a whitespace-collapsed main text."""
    return hashlib.sha256(collapse(text).encode("utf-8")).hexdigest()


def is_challenge(title: str | None, html: str) -> bool:
    """Whether a page is a bot wall or challenge rather than the content."""
    if title and title.lower() in CHALLENGE_TITLES:
        return True
    source = html[:200_000].lower()
    return any(marker in source for marker in CHALLENGE_MARKERS)


def read_page(body: bytes, content_type: str | None, *, complete: bool = True) -> Page:
    """Title, description, main text, fingerprint and challenge flag of a response body.

    HTML (also when served as text/plain or without a type but starting like HTML) gives a
    title, a description and the body text without script/style/nav/header/footer and
    hidden elements; plain text gives its text; a PDF its metadata title and its text
    (`pdf`); anything else (images, binary served as text/html) gives no text and a
    fingerprint of the raw bytes, so that a change is still noticed. A body that is not
    `complete` (its reading stopped once the head was read) gives no text or fingerprint.
    """
    kind, charset = media_type(content_type)
    if kind in ("", "application/octet-stream", "text/plain") or (
        kind in HTML_TYPES and b"\x00" in body[:4096]
    ):
        kind = _sniff(body)
    if kind in HTML_TYPES:
        return _html_page(_decode(body, charset), complete=complete)
    if not complete:
        return Page(title=None, text=None, fingerprint=None, challenge=False)
    if kind in TEXT_TYPES:
        text = collapse(_decode(body, charset))
        return Page(title=None, text=text, fingerprint=fingerprint_text(text), challenge=False)
    if kind in PDF_TYPES:
        document = read_pdf(body)
        if document.text is not None:
            text = collapse(document.text)
            return Page(
                title=document.title, text=text, fingerprint=fingerprint_text(text), challenge=False
            )
        return Page(
            title=document.title,
            text=None,
            fingerprint=hashlib.sha256(body).hexdigest(),
            challenge=False,
        )
    return Page(
        title=None, text=None, fingerprint=hashlib.sha256(body).hexdigest(), challenge=False
    )


def _html_page(html: str, *, complete: bool) -> Page:
    parser = _MainTextParser()
    parser.feed(html)
    parser.close()
    text = collapse_blocks("".join(parser.parts)) if complete else None
    return Page(
        title=parser.title or None,
        description=parser.description,
        text=text,
        fingerprint=fingerprint_text(text) if text is not None else None,
        challenge=is_challenge(parser.title, html),
    )


class HeadScanner:
    """Fed an HTML body chunk by chunk, tells when its head (title, description) is read.

    Only tags matter here, which are ASCII: the bytes are read as latin-1, so a chunk
    boundary inside a multi-byte character changes nothing. The head itself is read again
    (`read_page`) with its real charset.
    """

    def __init__(self) -> None:
        self._parser = _MainTextParser()

    def feed(self, chunk: bytes) -> bool:
        """Whether the head has been read once this chunk is added."""
        self._parser.feed(chunk.decode("latin-1"))
        return self._parser.head_done()


def head_read(prefix: bytes) -> bool:
    """Whether an HTML body's first bytes already hold its head (title and description)."""
    return HeadScanner().feed(prefix)
