"""What readers see of receipts: when each statement of a summary is said in the video.

A pin (summaries/editing/receipts.py) reaches readers only when it was verified against
the video's live transcript (its digest is the live transcript's) and that check says where
the words are said:

- verbatim: said word for word where it is pinned;
- paraphrase: once a named editor approved it (for the statement and transcript as they
  are; the gate's rule, `receipts.is_verified`: an approval by "system" or nobody is none);
  a chapter's start also without approval, since its pin checks the time, not the wording
  (its first words said close to as written, within two seconds of the written start);
- mis-timed: the words were found, word for word (score 100) for a statement, close
  enough for a chapter's start, but the editor's time was off; readers get the time the
  check found, never the one written.

A pin not found or contradicted never gives a time, even when a reviewer let it through,
and neither does a pin whose words were found somewhere else than where it points. Times
are whole seconds, rounded down, so that the video starts just before the words.

Every time becomes a link to the platform's own page at that time (`Video.url_at`, as the
"Watch from" links): readers without JavaScript open the video there, and player.js plays
it in the click-to-load player instead. Nothing here queries the database.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from summaries.editing import receipts
from summaries.text.durations import format_duration
from summaries.text.links import http_url
from summaries.text.paragraphs import Paragraph, paragraphs
from summaries.text.pins import Status
from summaries.text.transcripts import Segment

from .marks import highlight

# A score the pins text layer gives only to words said exactly as written.
WORD_FOR_WORD = 100.0


def said_at(pin: dict[str, Any] | None, digest: str, *, chapter: bool = False) -> int | None:
    """The second at which a pinned statement (`chapter`: a chapter's start) is said, if
    readers may be shown it."""
    if not pin or not digest or pin.get("transcript") != digest:
        return None
    status = pin.get("status")
    if status == Status.MIS_TIMED:
        checked = pin.get("suggested_time")
        exact = float(pin.get("score") or 0) >= WORD_FOR_WORD
        return max(0, int(checked)) if checked is not None and (exact or chapter) else None
    if pin.get("suggested"):
        return None  # the words are said elsewhere than where the pin points
    if receipts.is_verified(pin) or (chapter and status == Status.PARAPHRASE):
        start = pin.get("start")
        return max(0, int(start)) if start is not None else None
    return None


@dataclass(frozen=True)
class Moment:
    """A time in the video, and the link that plays it."""

    seconds: int
    url: str  # "" when the video's address cannot be linked

    @property
    def clock(self) -> str:
        return format_duration(self.seconds)

    def link(self) -> SafeString:
        """The "▶ 12:40" beside a statement: a link into the video where it is said, named
        for screen readers by what it does."""
        name = f"Play from {self.clock}, where this is said"
        if not self.url:
            return mark_safe(f'<span class="receipt">▶ {self.clock}</span>')  # noqa: S308
        return mark_safe(  # noqa: S308 - the address is escaped
            f'<a class="receipt" href="{escape(self.url)}" rel="nofollow noopener" '
            f'aria-label="{name}">▶ {self.clock}</a>'
        )


def moment(video, seconds: int | None) -> Moment | None:
    if seconds is None:
        return None
    return Moment(seconds, http_url(video.url_at(seconds)))


def pinned_moment(video, pin: dict[str, Any] | None, digest: str) -> Moment | None:
    """The moment a pinned statement is said, when readers may be shown it."""
    return moment(video, said_at(pin, digest))


def mark_moments(summary, digest: str) -> None:
    """Give each of the summary's (prefetched) key points and takeaways its `moment`."""
    video = summary.video
    for part in [*summary.key_points.all(), *summary.takeaways.all()]:
        part.moment = pinned_moment(video, part.pin, digest)


# --- Quotations in chapter bodies ------------------------------------------------------

_TAG = re.compile(r"<[^>]*>")
_MARKDOWN = re.compile(r"\[([^\]]*)\]\([^)]*\)|[*_`]")
_CLOSING_MARKS = "\u201d\u2019\"'\u00bb"
_TRAILING = ",.;:!?\u2026"


def _plain(markdown: str) -> str:
    return " ".join(_MARKDOWN.sub(lambda m: m.group(1) or "", markdown).split())


def _text_runs(fragment: str) -> list[tuple[int, int]]:
    """(start, end) of each run of text between tags that is not inside a link."""
    runs, depth, last = [], 0, 0
    for tag in _TAG.finditer(fragment):
        if depth == 0 and tag.start() > last:
            runs.append((last, tag.start()))
        name = tag.group().lower()
        if name.startswith("<a ") or name == "<a>":
            depth += 1
        elif name.startswith("</a"):
            depth = max(0, depth - 1)
        last = tag.end()
    if depth == 0 and last < len(fragment):
        runs.append((last, len(fragment)))
    return runs


def _after_quote(fragment: str, quote: str) -> int | None:
    """Where in `fragment` (sanitised HTML) the quotation ends, after its closing mark;
    None when it is not written there as plain text outside a link."""
    for start, end in _text_runs(fragment):
        text = html.unescape(fragment[start:end])
        found = " ".join(text.split()).find(quote)
        if found < 0:
            continue
        # Map the end of the quotation in the collapsed text back to the HTML.
        wanted = found + len(quote)
        position, seen, spaced = start, 0, False
        while position < end and seen < wanted:
            char, position = _next_char(fragment, position)
            if char.isspace():
                if not spaced and seen:
                    seen += 1
                spaced = True
            else:
                seen += 1
                spaced = False
        return _past_closing_mark(fragment, position, end)
    return None


def _past_closing_mark(fragment: str, position: int, end: int) -> int:
    """After the punctuation and closing quotation mark that end a quotation (`,”`, `.”`,
    `”`); `position` itself when no closing mark follows."""
    found, scan = position, position
    while scan < end:
        char, after = _next_char(fragment, scan)
        if char in _CLOSING_MARKS:
            found = after
        elif char not in _TRAILING:
            break
        scan = after
    return found


_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|\w+);")


def _next_char(fragment: str, position: int) -> tuple[str, int]:
    """The character at `position` of HTML text (an entity counts as one), and what follows."""
    entity = _ENTITY.match(fragment, position)
    if entity:
        return html.unescape(entity.group()), entity.end()
    return fragment[position], position + 1


def _block_end(fragment: str) -> int:
    """Where a link may go at the end of a block: before its last closing tag."""
    closing = re.search(r"</(p|li|blockquote)>\s*$", fragment)
    return closing.start() if closing else len(fragment)


def link_quotes(
    blocks: list[str], quote_pins: list[dict[str, Any]], video, digest: str
) -> list[str]:
    """The chapter's blocks with "▶ 12:40" after each quotation readers may hear said:
    right after its closing mark, or at the end of its block when the quotation holds
    markup (a link, emphasis). A quotation found in no block gets no link."""
    blocks = list(blocks)
    for pin in quote_pins:
        found = pinned_moment(video, pin, digest)
        quote = _plain(str(pin.get("quote") or ""))
        if found is None or not quote:
            continue
        for index, block in enumerate(blocks):
            position = _after_quote(block, quote)
            if position is None:
                if quote not in " ".join(html.unescape(_TAG.sub("", block)).split()):
                    continue
                position = _block_end(block)
            blocks[index] = f"{block[:position]} {found.link()}{block[position:]}"
            break
    return blocks


# --- Chapters as the transcript and the player see them --------------------------------


@dataclass(frozen=True)
class ChapterStart:
    title: str
    seconds: int
    position: int
    anchor: str
    verified: bool  # the time was checked against the transcript


def chapter_starts(chapters, digest: str, *, verified_only: bool = False) -> list[ChapterStart]:
    """When each chapter starts, in order of time: the time the transcript check found where
    the chapter is pinned and verified, else (unless `verified_only`) its written start.
    Chapters with neither are left out."""
    starts = []
    for chapter in chapters:
        checked = said_at(chapter.pin, digest, chapter=True)
        if checked is not None:
            seconds, verified = checked, True
        elif verified_only or chapter.start_time is None:
            continue
        else:
            seconds, verified = chapter.start_time, False
        starts.append(
            ChapterStart(chapter.title, seconds, chapter.position, chapter.anchor, verified)
        )
    return sorted(starts, key=lambda start: (start.seconds, start.position))


def key_moments(chapters, digest: str) -> list[tuple[str, int, int]]:
    """(title, start second, position) of the chapters that are the video's key moments
    (JSON-LD Clips): with a live transcript only those whose start was verified against it;
    without one, their written starts, which a reviewer published."""
    starts = chapter_starts(chapters, digest, verified_only=bool(digest))
    return [(start.title, start.seconds, start.position) for start in starts]


# --- The transcript page ---------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    """A statement of the live summary that readers may see supported by the words at
    `first` (the index of its pin's first word): "Key point 3", linked on the summary page."""

    first: int
    name: str
    url: str


def supports(pin: dict[str, Any] | None, digest: str) -> bool:
    """Whether a pin counts as verified for readers against the live transcript `digest`:
    verbatim, or a paraphrase a named editor approved, where it points (the same rule as
    the publish gate's, without its overrides)."""
    if not pin or not digest or pin.get("transcript") != digest or pin.get("suggested"):
        return False
    if not isinstance(pin.get("first"), int):
        return False
    return receipts.is_verified(pin)


def statements(parts: list[tuple[str, int, Any]], digest: str, summary_url: str):
    """The statements to mark on the transcript page, from (kind, position, pin) of the
    summary's key points ("key_point") and takeaways ("takeaway"): numbered as the summary
    page lists them, linked to them there (`#key-point-3`, `#takeaway-1`)."""
    found = []
    for kind, name in (("key_point", "Key point"), ("takeaway", "Takeaway")):
        ranked = sorted((position, pin) for k, position, pin in parts if k == kind)
        anchor = kind.replace("_", "-")
        for number, (_, pin) in enumerate(ranked, start=1):
            if supports(pin, digest):
                url = f"{summary_url}#{anchor}-{number}"
                found.append(Statement(pin["first"], f"{name} {number}", url))
    return sorted(found, key=lambda statement: statement.first)


@dataclass
class Passage:
    """A paragraph of the transcript as the page shows it."""

    number: int
    seconds: int
    clock: str
    url: str
    speaker: str  # shown at a change of speaker and at the start of a chapter
    text: str
    supports: list[Statement] = field(default_factory=list)
    matches: bool = True


@dataclass
class Section:
    title: str
    anchor: str
    seconds: int | None
    url: str
    passages: list[Passage]

    @property
    def matches(self) -> bool:
        return any(passage.matches for passage in self.passages)


OPENING = "Before the first chapter"


def _url(video, seconds: int) -> str:
    at = moment(video, seconds)
    return at.url if at else ""


def _passages(found: list[Paragraph], video, marked: list[Statement]) -> list[Passage]:
    passages = []
    for number, paragraph in enumerate(found, start=1):
        seconds = max(0, int(paragraph.start))
        clock = format_duration(seconds)
        supported = [s for s in marked if paragraph.first <= s.first < paragraph.end]
        passages.append(
            Passage(
                number,
                seconds,
                clock,
                _url(video, seconds),
                paragraph.speaker,
                paragraph.text,
                supported,
            )
        )
    return passages


def _chapter_section(start: ChapterStart, video) -> Section:
    anchor = f"transcript-{start.anchor}"
    return Section(start.title, anchor, start.seconds, _url(video, start.seconds), [])


def _name_speakers(result: list[Section]) -> None:
    """Keep a passage's speaker only where it changes, or where a chapter starts."""
    for section in result:
        speaker = ""
        for passage in section.passages:
            said_by = passage.speaker
            if said_by == speaker:
                passage.speaker = ""
            speaker = said_by or speaker


def sections(
    segments: list[Segment],
    starts: list[ChapterStart],
    video,
    marked: list[Statement] | None = None,
) -> list[Section]:
    """The transcript's paragraphs under the chapter they belong to, each with the
    statements of `marked` its words support.

    A chapter begins with the segment in which its start falls (the first segment ending
    after it), so a chapter whose first words are said inside a caption gets that caption;
    a paragraph never runs across a chapter's start. Paragraphs before the first chapter
    go under OPENING; without chapters, under one section.
    """
    ordered = sorted(segments, key=lambda segment: segment.start)
    begins: list[tuple[int, ChapterStart]] = []
    pending = list(starts)
    for index, segment in enumerate(ordered):
        while pending and segment.end > pending[0].seconds:
            begins.append((index, pending.pop(0)))
    found = paragraphs(ordered, breaks={index for index, _ in begins})
    passages = _passages(found, video, marked or [])
    if not starts:
        result = [Section("Transcript", "transcript-all", None, "", passages)] if passages else []
        _name_speakers(result)
        return result
    result = []
    current = Section(OPENING, "transcript-opening", None, "", [])
    for passage, paragraph in zip(passages, found, strict=True):
        while begins and begins[0][0] <= paragraph.segment:
            if current.passages or current.title != OPENING:
                result.append(current)
            current = _chapter_section(begins.pop(0)[1], video)
        current.passages.append(passage)
    result.append(current)
    # Chapters starting after the last words still head the page's list, empty.
    result += [_chapter_section(start, video) for _, start in begins]
    result += [_chapter_section(start, video) for start in pending]
    _name_speakers(result)
    return result


def query_words(query: str) -> list[str]:
    """The words a paragraph must all hold (any case) to match the page's filter."""
    return [word.casefold() for word in query.split()]


def filter_passages(result: list[Section], words: list[str]) -> int:
    """Mark the paragraphs that hold every word (all of them when there are none); how
    many do."""
    count = 0
    for section in result:
        for passage in section.passages:
            text = passage.text.casefold()
            passage.matches = all(word in text for word in words)
            count += passage.matches
    return count


def _hidden(shown: bool) -> str:
    return "" if shown else " hidden"


def _passage_html(passage: Passage, words: list[str]) -> str:
    when = f'<time datetime="PT{passage.seconds}S">{passage.clock}</time>'
    time = (
        f'<a class="paragraph-time" href="{escape(passage.url)}" rel="nofollow noopener">{when}</a>'
        if passage.url
        else f'<span class="paragraph-time">{when}</span>'
    )
    speaker = f'<b class="speaker">{escape(passage.speaker)}:</b> ' if passage.speaker else ""
    supported = "".join(
        f' <a class="supports" href="{escape(statement.url)}">{escape(statement.name)}</a>'
        for statement in passage.supports
    )
    return (
        f'<p class="paragraph" id="paragraph-{passage.number}" data-start="{passage.seconds}"'
        f"{_hidden(passage.matches)}>{time} {speaker}"
        f'<span class="paragraph-text">{highlight(passage.text, words)}</span>{supported}</p>'
    )


def _section_html(section: Section, words: list[str], filtering: bool) -> str:
    start = ""
    if section.seconds is not None:
        clock = format_duration(section.seconds)
        start = (
            f'<p class="chapter-start"><a href="{escape(section.url)}" rel="nofollow noopener">'
            f"Watch from {clock}</a></p>"
            if section.url
            else f'<p class="chapter-start">From {clock}</p>'
        )
    passages = "\n".join(_passage_html(passage, words) for passage in section.passages)
    shown = section.matches or not filtering
    return (
        f'<section class="transcript-chapter" id="{section.anchor}" '
        f'aria-labelledby="{section.anchor}-title"{_hidden(shown)}>\n'
        f'<h2 id="{section.anchor}-title">{escape(section.title)}</h2>{start}\n'
        f'<div class="transcript-paragraphs">\n{passages}\n</div></section>'
    )


def transcript_html(result: list[Section], words: list[str]) -> SafeString:
    """The transcript's sections as HTML; with `words`, paragraphs without them are hidden
    (`filter_passages` first) and the words are marked.

    Written here rather than in a template: an hour's transcript has hundreds of
    paragraphs, and a template spends ~0.1 ms on each.
    """
    filtering = bool(words)
    return mark_safe(  # noqa: S308 - every value is escaped above
        "\n".join(_section_html(section, words, filtering) for section in result)
    )


# --- The chapters file -----------------------------------------------------------------


def _vtt_time(seconds: int) -> str:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}.000"


def _vtt_text(title: str) -> str:
    """A cue's text: one line, with & < > escaped as WebVTT requires ("-->" cannot stay)."""
    line = " ".join(title.split())
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def chapters_vtt(starts: list[ChapterStart], duration: int) -> str | None:
    """A WebVTT chapters track: a cue per chapter from its start to the next chapter's, the
    last to the end of the video. Chapters starting at or after the end, or at the same
    second as an earlier one, are left out. None when no chapter is left."""
    kept: list[ChapterStart] = []
    for start in starts:
        if duration and start.seconds >= duration:
            continue
        if kept and kept[-1].seconds == start.seconds:
            continue
        kept.append(start)
    if not kept:
        return None
    cues = ["WEBVTT", ""]
    for number, start in enumerate(kept, start=1):
        end = kept[number].seconds if number < len(kept) else max(duration, start.seconds + 1)
        cues += [
            f"chapter-{number}",
            f"{_vtt_time(start.seconds)} --> {_vtt_time(end)}",
            _vtt_text(start.title),
            "",
        ]
    return "\n".join(cues)
