"""What a fetched page says: its title, its main text and fingerprint, bot walls."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from email.message import Message
from html.parser import HTMLParser

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})

# Elements whose text is not part of the page's main text (issue 6: "text of the body with
# script/style/nav/header/footer removed"); template, svg and noscript never show as prose.
SKIPPED_TAGS = frozenset(
    {"script", "style", "nav", "header", "footer", "template", "svg", "noscript", "head"}
)
# Elements that separate words: "<p>a</p><p>b</p>" reads "a b", "<b>2.5</b>x" reads "2.5x".
BREAKING_TAGS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl"),
        *("dt", "figcaption", "figure", "form", "h1", "h2", "h3", "h4", "h5", "h6", "hr"),
        *("li", "main", "ol", "p", "pre", "section", "summary", "table", "td", "th", "tr"),
        *("ul", "option", "button", "caption", "img", "input", "select", "textarea"),
    }
)
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
    | {"track", "wbr"}
)

_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.I)
_WHITESPACE_RE = re.compile(r"\s+")

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
    text: str | None  # main text, whitespace collapsed; None when the body is not text
    fingerprint: str | None
    challenge: bool


class _MainTextParser(HTMLParser):
    """Title and main text of an HTML document; tolerant of broken markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title_parts: list[str] | None = None
        self.title: str | None = None
        self.parts: list[str] = []
        self._skipping: list[str] = []  # open skipped elements, innermost last
        self._in_svg = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "title" and self.title is None and not self._in_svg:
            self.title_parts = []
            return
        if tag == "svg":
            self._in_svg += 1
        if tag == "body" and "head" in self._skipping:  # </head> is optional
            del self._skipping[self._skipping.index("head") :]
        if tag in SKIPPED_TAGS and tag not in VOID_TAGS:
            self._skipping.append(tag)
        if tag in BREAKING_TAGS:
            self.parts.append(" ")

    def handle_startendtag(self, tag: str, attrs) -> None:
        if tag in BREAKING_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title_parts is not None:
            self.title = collapse("".join(self.title_parts))
            self.title_parts = None
            return
        if tag == "svg" and self._in_svg:
            self._in_svg -= 1
        if tag in self._skipping:
            # Close the innermost open element of that name and everything inside it.
            index = len(self._skipping) - 1 - self._skipping[::-1].index(tag)
            del self._skipping[index:]
        if tag in BREAKING_TAGS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(data)
        elif not self._skipping:
            self.parts.append(data)

    def close(self) -> None:
        super().close()
        if self.title_parts is not None:  # an unclosed <title>
            self.title = collapse("".join(self.title_parts))
            self.title_parts = None


def collapse(text: str) -> str:
    """Whitespace runs as single spaces, trimmed."""
    return _WHITESPACE_RE.sub(" ", text).strip()


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


def read_page(body: bytes, content_type: str | None) -> Page:
    """Title, main text, fingerprint and challenge flag of a response body.

    HTML (also when served as text/plain or without a type but starting like HTML) gives a
    title and the body text without script/style/nav/header/footer; plain text gives its
    text; anything else (images, PDF, binary served as text/html) gives no text and a
    fingerprint of the raw bytes, so that a change is still noticed.
    """
    kind, charset = media_type(content_type)
    if kind in ("", "application/octet-stream", "text/plain") or (
        kind in HTML_TYPES and b"\x00" in body[:4096]
    ):
        kind = _sniff(body)
    if kind in HTML_TYPES:
        html = _decode(body, charset)
        parser = _MainTextParser()
        parser.feed(html)
        parser.close()
        text = collapse("".join(parser.parts))
        return Page(
            title=parser.title or None,
            text=text,
            fingerprint=fingerprint_text(text),
            challenge=is_challenge(parser.title, html),
        )
    if kind in TEXT_TYPES:
        text = collapse(_decode(body, charset))
        return Page(title=None, text=text, fingerprint=fingerprint_text(text), challenge=False)
    return Page(
        title=None, text=None, fingerprint=hashlib.sha256(body).hexdigest(), challenge=False
    )
