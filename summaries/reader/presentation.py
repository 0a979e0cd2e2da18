"""Shape a loaded summary for its reader page: caveats beside claims, cited-link hosts,
what readers are told about each cited source.

Works on HTML that summaries.markdown already sanitised, and on prefetched objects only:
nothing here queries the database.
"""

import html
import re
from dataclasses import dataclass, field
from html import escape  # django.utils.html.escape's text, without its wrappers

from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from summaries.text.links import host_of, http_url, text_fragment_url

from . import receipts
from .source_labels import archived_label, label_of, needs_archived_copy

_LINK = re.compile(r'<a href="(?P<href>[^"]*)"(?P<attrs>[^>]*)>(?P<text>.*?)</a>', re.S)


@dataclass
class Block:
    """A top-level piece of a chapter's HTML and the caveats that qualify a claim in it."""

    html: SafeString
    caveats: list = field(default_factory=list)


def annotate_links(fragment: str, citations_by_url: dict) -> str:
    """Show each external link's host after it and point it at the cited phrase."""

    def replace(match):
        href = html.unescape(match["href"])
        if not href.startswith(("http://", "https://")):
            return match[0]
        citation = citations_by_url.get(href)
        target = text_fragment_url(href, citation.key_phrase) if citation else href
        host = host_of(href)
        return (
            f'<a href="{html.escape(target)}"{match["attrs"]}>{match["text"]}</a>'
            f' <span class="link-host">({html.escape(host)})</span>'
        )

    return _LINK.sub(replace, fragment)


def annotate_part_links(summary) -> None:
    """Give each key point its `body_shown` and each takeaway its `text_shown`: the HTML
    with each external link's host after it and pointing at the cited phrase, as in
    chapters. Sets the attributes on the (prefetched) parts themselves, which the article
    then lists."""
    citations = list(summary.citations.all())
    for point in summary.key_points.all():
        cited = {c.url: c for c in citations if c.key_point_id == point.pk}
        point.body_shown = mark_safe(annotate_links(point.body_html, cited))  # noqa: S308 - sanitised on save
    for takeaway in summary.takeaways.all():
        cited = {c.url: c for c in citations if c.takeaway_id == takeaway.pk}
        takeaway.text_shown = mark_safe(annotate_links(takeaway.text_html, cited))  # noqa: S308 - sanitised on save


def split_blocks(fragment: str) -> list[str]:
    """Top-level blocks of sanitised HTML (a paragraph, a list, a table, ...)."""
    blocks, start, depth = [], 0, 0
    for match in re.finditer(r"<(/?)(p|li|blockquote|pre|table|ul|ol|h[2-6])\b[^>]*>", fragment):
        closing, tag = match.group(1), match.group(2)
        if tag == "li":
            continue
        depth += -1 if closing else 1
        if closing and depth == 0:
            blocks.append(fragment[start : match.end()].strip())
            start = match.end()
    rest = fragment[start:].strip()
    if rest:
        blocks.append(rest)
    return [b for b in blocks if b]


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split()).lower()


def chapter_blocks(chapter, caveats, citations, *, video=None, digest: str = "") -> list[Block]:
    """The chapter's HTML in blocks, each caveat placed after the block stating its claim,
    and each quotation whose moment readers may see followed by a link to it (`video` and
    the live transcript's `digest` given: reader/receipts.py).

    A caveat whose claim phrase is not found in the text (or that has none) goes after
    the last block, so it is never lost.
    """
    by_url = {c.url: c for c in citations if c.chapter_id == chapter.pk}
    parts = split_blocks(chapter.body_html)
    if video is not None and digest and chapter.quote_pins:
        parts = receipts.link_quotes(parts, chapter.quote_pins, video, digest)
    blocks = [
        Block(mark_safe(annotate_links(part, by_url)))  # noqa: S308 - sanitised on save
        for part in parts
    ] or [Block(mark_safe(""))]
    plain = [_plain(block.html) for block in blocks]
    for caveat in caveats:
        phrase = " ".join(caveat.claim.lower().split())
        index = next((i for i, text in enumerate(plain) if phrase and phrase in text), None)
        blocks[len(blocks) - 1 if index is None else index].caveats.append(caveat)
    return blocks


@dataclass
class ChapterView:
    chapter: object
    blocks: list[Block]
    start_url: str = ""
    # The second the chapter starts at: where the transcript check found its first words
    # when its pin is verified (reader/receipts.py), else as written.
    start: int | None = None


def label_sources(citations) -> None:
    """Give each citation its `source_label`: what readers are told about its source.

    Sets the attribute on the (prefetched) citations themselves, which the page's
    `summary.citations.all` then lists; the date is shown in the site's time zone.
    """
    for citation in citations:
        checked_at = citation.source.last_checked_at
        citation.source_label = _archived_label(citation) or label_of(
            citation.source,
            citation.verdict,
            checked_at=timezone.localtime(checked_at) if checked_at else None,
        )
        citation.robust_attributes = None  # worked out again from the new label


def _archived_label(citation):
    """ "Archived copy, <date>" for a citation shown through a verified archived copy while
    its live page still fails it (the label goes back as soon as a check finds it again)."""
    url, captured_at = getattr(citation, "archived_url", ""), getattr(citation, "archived_at", None)
    source = citation.source
    if not url or captured_at is None:
        return None
    failing = needs_archived_copy(
        state=source.state, error_class=source.error_class, verdict=citation.verdict
    )
    return archived_label(url=url, captured_at=timezone.localtime(captured_at)) if failing else None


def chapters_for_page(summary, digest: str = "") -> list[ChapterView]:
    """Every chapter with its blocks and caveats, and a link into the video at its start;
    the start and the quotations as the live transcript of `digest` verified them, where
    it did."""
    video = summary.video
    caveats = list(summary.caveats.all())
    citations = list(summary.citations.all())
    views = []
    for chapter in summary.chapters.all():
        own = [c for c in caveats if c.chapter_id == chapter.pk]
        checked = receipts.said_at(chapter.pin, digest, chapter=True)
        seconds = checked if checked is not None else chapter.start_time
        start_url = http_url(video.url_at(seconds)) if seconds is not None else ""
        blocks = chapter_blocks(chapter, own, citations, video=video, digest=digest)
        views.append(ChapterView(chapter, blocks, start_url, seconds))
    return views


def _cited_link(citation) -> str:
    url = http_url(citation.url)
    text = escape(citation.link_text)
    if not url:
        return text
    href = escape(text_fragment_url(url, citation.key_phrase))
    return f'<a href="{href}" rel="nofollow noopener"{_robust_link(citation, url)}>{text}</a>'


def _robust_link(citation, url: str) -> str:
    """Robust Links attributes (robustlinks.mementoweb.org) of a cited link: the original
    address, the archived copy readers are shown (when there is one) and the date the
    source was cited (the date of linking, in the site's time zone; when known). "" when
    there is neither a copy nor a date: the attributes would say nothing the href does
    not. Kept on the citation: the text and the list of sources both print it."""
    known = getattr(citation, "robust_attributes", None)
    if known is not None:
        return known
    citation.robust_attributes = _robust_attributes(citation, url)
    return citation.robust_attributes


def _robust_attributes(citation, url: str) -> str:
    version = http_url(getattr(citation.source_label, "archived_url", ""))
    cited_at = getattr(citation, "cited_at", None)
    if not version and cited_at is None:
        return ""
    attributes = f' data-originalurl="{escape(url)}"'
    if version:
        attributes += f' data-versionurl="{escape(version)}"'
    if cited_at is not None:
        attributes += f' data-versiondate="{timezone.localdate(cited_at):%Y-%m-%d}"'
    return attributes


_TEXT_LINK = re.compile(r'<a href="(?P<href>https?://[^"]*)"')


def robust_text_links(fragment: SafeString, citations) -> SafeString:
    """The article's HTML with Robust Links attributes on each cited link of its text, as
    on the list of cited sources (`label_sources` first). Applied to the stored article on
    every render of the page (one pass over its links), since the archived copy shown and
    the date cited change without an edit of the summary. A link is a citation's when it
    points where `annotate_links` pointed it (the cited address and its key phrase)."""
    by_target: dict[str, str] = {}
    for citation in citations:
        url = http_url(citation.url)
        if not url:
            continue
        target = html.escape(text_fragment_url(citation.url, citation.key_phrase))
        attributes = _robust_link(citation, url)
        if attributes and target not in by_target:
            by_target[target] = attributes
    if not by_target:
        return fragment

    def replace(match):
        attributes = by_target.get(match["href"])
        return match[0] + attributes if attributes else match[0]

    return mark_safe(_TEXT_LINK.sub(replace, fragment))  # noqa: S308 - escaped attributes added to safe HTML


def _archived_link(label) -> str:
    version = http_url(getattr(label, "archived_url", ""))
    if not version:
        return ""
    return (
        f' <a class="source-archived" href="{escape(version)}" rel="nofollow noopener">'
        "Open the archived copy</a>"
    )


def _source_item(number: int, citation) -> str:
    label = citation.source_label
    host = citation.source.host
    host = host_of(host if "://" in host else f"https://{host}")
    why = f"source-why-{number}"
    moved = (
        f' <span class="source-moved">New address: <a href="{escape(label.moved_to)}"'
        f' rel="nofollow noopener">{escape(label.moved_to_text)}</a></span>'
        if label.moved_to
        else ""
    )
    claim = f'<br><span class="claim">“{escape(citation.claim)}”</span>' if citation.claim else ""
    return (
        f'\n      <li>{_cited_link(citation)} <span class="link-host">({escape(host)})</span>\n'
        f'        <span class="source-label source-label--{escape(label.modifier)}">'
        f'<span class="source-label-name" tabindex="0" aria-describedby="{why}">'
        f"{escape(label.label)}</span>{moved}{_archived_link(label)}\n"
        f'          <span class="source-label-why" id="{why}">{escape(label.explanation)}</span>'
        f"</span>\n        {claim}</li>"
    )


def cited_sources_html(citations) -> SafeString:
    """The page's list of cited sources, each labelled (`label_sources` first), as HTML;
    "" when there are none.

    Written here rather than in the template: a summary cites dozens of sources, and a
    template spends ~0.1 ms on each of them.
    """
    if not citations:
        return mark_safe("")
    items = "".join(_source_item(n, c) for n, c in enumerate(citations, start=1))
    return mark_safe(  # noqa: S308 - every value is escaped above
        '<section aria-labelledby="sources"><h2 id="sources">Cited sources</h2>\n'
        f'    <ul class="sources">{items}\n    </ul></section>'
    )
