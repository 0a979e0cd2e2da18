"""The one place where editor-written Markdown becomes reader-facing HTML."""

from __future__ import annotations

import html
import re
import threading
from html.parser import HTMLParser
from xml.etree.ElementTree import Element

import markdown
import nh3
from markdown.extensions import Extension
from markdown.inlinepatterns import (
    IMAGE_LINK_RE,
    IMAGE_REFERENCE_RE,
    LINK_RE,
    REFERENCE_RE,
    ImageInlineProcessor,
    ImageReferenceInlineProcessor,
    LinkInlineProcessor,
    ReferenceInlineProcessor,
    ShortImageReferenceInlineProcessor,
    ShortReferenceInlineProcessor,
)
from markdown.treeprocessors import Treeprocessor

from summaries.text.remembered import remembered

# Sources past this size are shown as escaped plain text instead of being parsed:
# both Python-Markdown (inline raw HTML) and html5ever (deeply nested tags) go
# quadratic on hostile input, and a real summary is a few thousand characters.
# Models and forms may reuse this number as their max_length.
MAX_SOURCE_CHARS = 100_000

# Link targets (URL plus title) longer than this are not treated as links. Python-Markdown
# scans to the end of the paragraph for every "](", so hostile input went quadratic.
MAX_LINK_TARGET_CHARS = 1_000
# Link texts may hold brackets ("[the [2026] report](…)") nested at most this deep; deeper
# ones are text. Bounds the work per "[" (_closing_bracket).
MAX_LINK_NESTING = 8

# <h1> is the page title, so body headings start at <h2>: Markdown "# x" is demoted to
# <h2>; a raw-HTML <h1> is not in the allow-list and is reduced to its text.
# <img> is deliberately left out: summaries are text, and a remote image would let any
# host track readers (and mix content). Markdown images therefore vanish.
ALLOWED_TAGS = frozenset(
    {
        *("h2", "h3", "h4", "h5", "h6", "p", "br", "hr"),
        *("strong", "em", "b", "i", "code", "pre", "blockquote", "del", "sup", "sub"),
        *("ul", "ol", "li", "a"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    }
)
# "*" (attributes on every tag) is empty on purpose: nh3 would otherwise keep lang and title.
ALLOWED_ATTRIBUTES = {"*": set(), "a": {"href", "title"}, "ol": {"start"}}
# Python-Markdown's tables emit align="…" (use_align_attribute) instead of inline styles.
ALLOWED_ATTRIBUTE_VALUES = {
    "th": {"align": {"left", "center", "right"}},
    "td": {"align": {"left", "center", "right"}},
}
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow noopener"
# Tags removed together with their content (not just unwrapped), so no script text,
# CSS or SVG markup leaks into the page as visible text.
DROPPED_WITH_CONTENT = frozenset(
    {
        *("script", "style", "template", "noscript", "iframe", "object", "embed"),
        *("svg", "math", "textarea", "select", "title", "noembed", "noframes", "xmp"),
    }
)

# Elements that start a new line of text: markdown_to_text puts a space at their edges.
BLOCK_TAGS = frozenset(
    {
        *("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote"),
        *("ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "div"),
    }
)


_BRACKET_RE = re.compile(r"[\[\]]")


def _closing_bracket(text: str, index: int) -> int | None:
    """The index of the "]" closing the "[" just before `index`, or None when there is
    none before a nesting deeper than MAX_LINK_NESTING.

    Looks only as far as the answer: to the closing bracket, or to the bracket one level
    too deep, jumping from bracket to bracket.
    """
    depth = 1
    for bracket in _BRACKET_RE.finditer(text, index):
        depth += 1 if bracket.group() == "[" else -1
        if depth == 0:
            return bracket.start()
        if depth > MAX_LINK_NESTING:
            return None
    return None


class _BoundedScanMixin(LinkInlineProcessor):
    """Link parsing with linear worst cases.

    Python-Markdown walks character by character to the end of the paragraph for every
    "[" (link text) and every "](" (link target), so "[" * 50_000 took minutes. Here a
    link text ends at its closing bracket within MAX_LINK_NESTING levels of brackets, and
    a link target must close within MAX_LINK_TARGET_CHARS: each "[" costs at most the
    brackets of MAX_LINK_NESTING levels, whatever was parsed before it. Results for
    well-formed links are unchanged.
    """

    def getText(self, data: str, index: int) -> tuple[str, int, bool]:
        close = _closing_bracket(data, index)  # index is just past the opening "["
        if close is None:
            return "", index, False
        return data[index:close], close + 1, True

    def getLink(self, data: str, index: int) -> tuple[str, str | None, int, bool]:
        # Only the window is handed on: a copy of the text before it would cost as much
        # as the text so far, for every link.
        window = data[index : index + MAX_LINK_TARGET_CHARS]
        if ")" not in window:
            return "", None, index, False
        href, title, end, handled = super().getLink(window, 0)
        return href, title, index + end, handled


# The link-like inline patterns as markdown.inlinepatterns.build_inlinepatterns registers
# them (name, class, regex, priority); each is replaced by a bounded subclass.
_LINK_PATTERNS = (
    ("reference", ReferenceInlineProcessor, REFERENCE_RE, 170),
    ("link", LinkInlineProcessor, LINK_RE, 160),
    ("image_link", ImageInlineProcessor, IMAGE_LINK_RE, 150),
    ("image_reference", ImageReferenceInlineProcessor, IMAGE_REFERENCE_RE, 140),
    ("short_reference", ShortReferenceInlineProcessor, REFERENCE_RE, 130),
    ("short_image_ref", ShortImageReferenceInlineProcessor, IMAGE_REFERENCE_RE, 125),
)


class _DemoteH1(Treeprocessor):
    """Turn Markdown level-one headings into <h2>: the page owns the only <h1>."""

    def run(self, root: Element) -> None:
        for element in root.iter("h1"):
            element.tag = "h2"


class _SafeDefaultsExtension(Extension):
    """Bounded link scanning and h1 demotion, wired into a Markdown instance."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        for name, processor, pattern, priority in _LINK_PATTERNS:
            bounded = type(f"Bounded{processor.__name__}", (_BoundedScanMixin, processor), {})
            md.inlinePatterns.register(bounded(pattern, md), name, priority)
        md.treeprocessors.register(_DemoteH1(md), "demote_h1", 1)


# Each thread's Markdown converter. Building one registers every extension and pattern,
# which took longer than converting a chapter, so it is kept and reset between texts.
_converters = threading.local()


def _converter() -> markdown.Markdown:
    converter: markdown.Markdown | None = getattr(_converters, "markdown", None)
    if converter is None:
        converter = markdown.Markdown(
            extensions=["tables", "fenced_code", "sane_lists", _SafeDefaultsExtension()],
            extension_configs={"tables": {"use_align_attribute": True}},
        )
        _converters.markdown = converter
    return converter


@remembered()
def _markdown_to_unsafe_html(source: str) -> str:
    """Python-Markdown with the project's extensions; raw HTML is passed through.

    reset() forgets the previous text's reference definitions and stashed raw HTML. A
    conversion that fails (RecursionError on deep nesting) may leave the block parser's
    state half-way, so that converter is dropped and the next text gets a new one.
    """
    converter = _converter()
    try:
        return converter.reset().convert(source)
    except BaseException:
        _converters.markdown = None
        raise


def _plain_paragraphs(source: str) -> str:
    """Escaped text split into <p> on blank lines: the fallback for unparseable sources."""
    blocks = [block.strip() for block in source.replace("\r\n", "\n").split("\n\n")]
    return "\n".join(f"<p>{html.escape(block, quote=False)}</p>" for block in blocks if block)


def sanitise_html(fragment: str) -> str:
    """Keep only the allow-listed tags, attributes and URL schemes; add rel to links."""
    return nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        tag_attribute_values=ALLOWED_ATTRIBUTE_VALUES,
        url_schemes=set(ALLOWED_URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )


@remembered()
def render_markdown(source: str) -> str:
    """Render Markdown to sanitised HTML.

    Python-Markdown (tables, fenced code, sane lists) produces the HTML, raw HTML in the
    source included; nh3 then keeps only the allow-list above. Links keep http, https,
    mailto and relative URLs and get rel="nofollow noopener"; any other scheme loses its
    href. Empty input gives "". Sources over MAX_SOURCE_CHARS, or nested too deeply for
    the parser, are rendered as escaped plain-text paragraphs instead. The result
    depends only on the source.
    """
    if not source or not source.strip():
        return ""
    if len(source) > MAX_SOURCE_CHARS:
        unsafe = _plain_paragraphs(source)
    else:
        try:
            unsafe = _markdown_to_unsafe_html(source)
        except RecursionError:
            unsafe = _plain_paragraphs(source)
    return sanitise_html(unsafe).strip()


class _LinkTargets(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href is not None:
                self.hrefs.append(href)


def link_targets(source: str) -> list[str]:
    """Every link target of the text as written (Markdown links, autolinks, references and
    raw <a href>), entities decoded, before the sanitiser drops those it does not allow.

    For telling editors about links readers would not get; empty for the texts
    render_markdown shows as plain paragraphs.
    """
    if not source or not source.strip() or len(source) > MAX_SOURCE_CHARS:
        return []
    try:
        unsafe = _markdown_to_unsafe_html(source)
    except RecursionError:
        return []
    parser = _LinkTargets()
    parser.feed(unsafe)
    parser.close()
    return parser.hrefs


def render_inline_markdown(source: str) -> str:
    """Render a one-line text: like render_markdown, minus the <p> around a lone paragraph.

    Anything other than exactly one paragraph (a list, two paragraphs, a heading) is
    returned as render_markdown gives it.
    """
    rendered = render_markdown(source)
    if rendered.startswith("<p>") and rendered.endswith("</p>") and rendered.count("<p>") == 1:
        return rendered[len("<p>") : -len("</p>")]
    return rendered


class _TextExtractor(HTMLParser):
    """Collect text content, with a space wherever a block element starts or ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_to_text(fragment: str) -> str:
    """Text content of an HTML fragment: entities decoded, whitespace collapsed."""
    extractor = _TextExtractor()
    extractor.feed(fragment)
    extractor.close()
    return " ".join("".join(extractor.parts).split())


@remembered()
def markdown_to_text(source: str) -> str:
    """Plain text of the rendered Markdown, for search indexes and excerpts.

    What a reader sees, not the source: no Markdown punctuation, no tags, entities
    decoded, blocks separated by one space, runs of whitespace collapsed to one space.
    """
    return html_to_text(render_markdown(source))
