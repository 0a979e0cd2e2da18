"""The one place where editor-written Markdown becomes reader-facing HTML."""

from __future__ import annotations

import functools
import html
import re
from html.parser import HTMLParser

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

# Sources past this size are shown as escaped plain text instead of being parsed:
# both Python-Markdown (inline raw HTML) and html5ever (deeply nested tags) go
# quadratic on hostile input, and a real summary is a few thousand characters.
# Models and forms may reuse this number as their max_length.
MAX_SOURCE_CHARS = 100_000

# Link targets (URL plus title) longer than this are not treated as links. Python-Markdown
# scans to the end of the paragraph for every "](", so hostile input went quadratic.
MAX_LINK_TARGET_CHARS = 1_000

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


def _matching_brackets(text: str) -> dict[int, int]:
    """Map the index of each "[" to the index of the "]" that closes it, in one pass."""
    matches: dict[int, int] = {}
    open_brackets: list[int] = []
    for bracket in _BRACKET_RE.finditer(text):
        if bracket.group() == "[":
            open_brackets.append(bracket.start())
        elif open_brackets:
            matches[open_brackets.pop()] = bracket.start()
    return matches


class _BoundedScanMixin:
    """Link parsing with linear worst cases.

    Python-Markdown walks character by character to the end of the paragraph for every
    "[" (link text) and every "](" (link target), so "[" * 50_000 took minutes. Here the
    bracket pairs are found once per text, and a link target must close within
    MAX_LINK_TARGET_CHARS. Results for well-formed links are unchanged.
    """

    _bracket_text: str | None = None  # the text _bracket_pairs was computed for
    _bracket_pairs: dict[int, int]

    def getText(self, data, index):
        if data is not self._bracket_text:
            self._bracket_text, self._bracket_pairs = data, _matching_brackets(data)
        close = self._bracket_pairs.get(index - 1)  # index is just past the opening "["
        if close is None:
            return "", index, False
        return data[index:close], close + 1, True

    def getLink(self, data, index):
        window = data[: index + MAX_LINK_TARGET_CHARS]
        if ")" not in window[index:]:
            return "", None, index, False
        return super().getLink(window, index)


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

    def run(self, root):
        for element in root.iter("h1"):
            element.tag = "h2"


class _SafeDefaultsExtension(Extension):
    """Bounded link scanning and h1 demotion, wired into a Markdown instance."""

    def extendMarkdown(self, md):
        for name, processor, pattern, priority in _LINK_PATTERNS:
            bounded = type(f"Bounded{processor.__name__}", (_BoundedScanMixin, processor), {})
            md.inlinePatterns.register(bounded(pattern, md), name, priority)
        md.treeprocessors.register(_DemoteH1(md), "demote_h1", 1)


# Sources whose parse is remembered: a save of a whole summary parses each text several
# times (link checks, the stored HTML, citations, warnings, the search document), and the
# parse depends on the source alone. At most MAX_SOURCE_CHARS each, so a few MB per process.
PARSE_MEMO_SIZE = 64


@functools.lru_cache(maxsize=PARSE_MEMO_SIZE)
def _markdown_to_unsafe_html(source: str) -> str:
    """Python-Markdown with the project's extensions; raw HTML is passed through."""
    converter = markdown.Markdown(
        extensions=["tables", "fenced_code", "sane_lists", _SafeDefaultsExtension()],
        extension_configs={"tables": {"use_align_attribute": True}},
    )
    return converter.convert(source)


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

    def handle_starttag(self, tag: str, attrs) -> None:
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

    def handle_starttag(self, tag: str, attrs) -> None:
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


def markdown_to_text(source: str) -> str:
    """Plain text of the rendered Markdown, for search indexes and excerpts.

    What a reader sees, not the source: no Markdown punctuation, no tags, entities
    decoded, blocks separated by one space, runs of whitespace collapsed to one space.
    """
    return html_to_text(render_markdown(source))
