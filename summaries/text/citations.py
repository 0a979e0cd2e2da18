"""Finding the sources a summary cites, and the figures and attributions they back."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import quote, unquote_plus, urlsplit

from summaries.text.markdown import BLOCK_TAGS, render_markdown
from summaries.text.remembered import remembered

CITABLE_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}
TRACKING_PARAMETERS = frozenset({"fbclid", "gclid", "mc_cid", "mc_eid"})
TRACKING_PREFIXES = ("utm_",)
# A claim is the sentence of its link, but at most this long: in a sentence longer than this
# (a run of links with no full stop) it is the words around the link. Keeps the work and
# the storage per link bounded, whatever the length of the paragraph.
MAX_CLAIM_CHARS = 500
CUT = "…"


@dataclass(frozen=True)
class FoundCitation:
    """One http(s) link in a Markdown text and the statement it is attached to."""

    url: str  # as written in the source
    normalised_url: str  # normalise_url(url): the key for deduplication and link checks
    link_text: str
    claim: str  # plain text of the sentence containing the link text
    key_phrase: str  # the first figure in the claim, or ""
    paragraph: str  # plain text of the paragraph, list item, heading or cell


# --- URLs -------------------------------------------------------------------------------

# Characters left as they are when percent-encoding a path or query: RFC 3986 reserved
# characters and "%" (so existing escapes survive); everything else non-ASCII is encoded.
_PATH_SAFE = "/%:@!$&'()*+,;=~"
_QUERY_SAFE = "/?%:@!$&'()*+,;=~"
_HOST_RE = re.compile(r"[a-z0-9_.\-]+|[0-9a-f:.]+")


def _normalise_host(host: str) -> str:
    """Lowercase, IDNA-encoded host without a trailing dot; ValueError when invalid."""
    host = host.lower().rstrip(".")
    if ":" in host:  # an IPv6 literal: urlsplit has removed the brackets
        if not _HOST_RE.fullmatch(host):
            raise ValueError(f"invalid IPv6 host {host!r}")
        return f"[{host}]"
    host = host.encode("idna").decode("ascii")  # UnicodeError is a ValueError
    if not host or not _HOST_RE.fullmatch(host):
        raise ValueError(f"invalid host {host!r}")
    return host


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 for an absolute path: resolve "." and ".." segments."""
    segments = path.split("/")[1:]
    output: list[str] = []
    for position, segment in enumerate(segments, start=1):
        is_last = position == len(segments)
        if segment in (".", ".."):
            if segment == ".." and output:
                output.pop()
            if is_last:
                output.append("")  # "/a/b/.." is the directory "/a/"
        else:
            output.append(segment)
    return "/" + "/".join(output)


def _is_tracking_parameter(pair: str) -> bool:
    name = unquote_plus(pair.partition("=")[0]).lower()
    return name in TRACKING_PARAMETERS or name.startswith(TRACKING_PREFIXES)


# Remembered: a save normalises each link's URL when it checks the link and again when it
# extracts the citation (a chapter may hold thousands).
@remembered()
def normalise_url(url: str) -> str:
    """The canonical form of an http(s) URL, used to compare and deduplicate links.

    Scheme and host are lowercased, the host IDNA-encoded and stripped of a trailing dot,
    default ports (:80 for http, :443 for https) and the fragment dropped; tracking
    parameters (utm_*, fbclid, gclid, mc_cid, mc_eid) are removed and the rest of the
    query keeps its order; dot segments are resolved, an empty path becomes "/", and
    non-ASCII characters are percent-encoded. Raises ValueError for other schemes, for
    URLs without a host and for invalid hosts or ports.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in CITABLE_SCHEMES:
        raise ValueError(f"not an http(s) URL: {url!r}")
    if not parts.hostname:
        raise ValueError(f"URL has no host: {url!r}")
    netloc = _normalise_host(parts.hostname)
    port = parts.port  # raises ValueError when out of range or not a number
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    if parts.username is not None:
        userinfo = parts.username
        if parts.password is not None:
            userinfo = f"{userinfo}:{parts.password}"
        netloc = f"{userinfo}@{netloc}"
    path = quote(_remove_dot_segments(parts.path or "/"), safe=_PATH_SAFE)
    query = "&".join(
        quote(pair, safe=_QUERY_SAFE)
        for pair in parts.query.split("&")
        if pair and not _is_tracking_parameter(pair)
    )
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def _domain_key(domain: str) -> str:
    """A domain from the organisation list in the same form as a normalised host."""
    domain = domain.strip().lower().removeprefix("*.").strip(".")
    return _normalise_host(domain) if domain else ""


def host_matches_domains(url: str, domains: list[str]) -> bool:
    """Whether the URL's host is one of the domains or a subdomain of one.

    "www.anthropic.com" matches "anthropic.com"; "anthropic.com.evil.io",
    "notanthropic.com" and "https://anthropic.com@evil.io/" do not. URLs that
    normalise_url rejects match nothing, and so do empty or invalid domains.
    """
    try:
        host = urlsplit(normalise_url(url)).hostname or ""
    except ValueError:
        return False
    for domain in domains:
        try:
            key = _domain_key(domain)
        except ValueError:
            continue
        if key and (host == key or host.endswith("." + key)):
            return True
    return False


# --- Figures ----------------------------------------------------------------------------

_SPELLED_NUMBERS = (
    "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
    "|forty|fifty|hundred|thousand"
)
_COUNT_NOUNS = (
    "tokens?|words?|parameters?|params|users?|customers?|subscribers?|developers?|people"
    "|employees?|GPUs?|TPUs?|chips?|servers?|requests?|queries|calls?|lines(?:\\s+of\\s+code)?"
    "|files?|pages?|languages?|countries|images?|videos?|downloads?|stars?|tasks?|questions?"
    "|problems?|steps?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?"
    "|dollars?|euros?|pounds?|cents?|USD|EUR|GBP"
)
_MEASURE_UNITS = (
    "milliseconds?|microseconds?|ms|µs|ns|[KMGTP]i?B|bytes?|bits?|[KMG]bps|[KMG]?Hz"
    "|[kMGT]Wh?|watts?|[TPE]?FLOP[Ss]?|fps|tok/s|t/s|points?|percentage\\s+points?|pp"
)
_COMPARATORS = (
    "faster|slower|more|less|fewer|larger|smaller|bigger|higher|lower|cheaper|costlier"
    "|longer|shorter|better|worse|quicker|greater|increase|decrease|improvement|reduction"
    "|gain|speed-?up|boost|jump|drop|rise|growth|as\\s+(?:fast|many|much|large|long|big)"
)
_RATE = (
    "(?:per|a|an|each)\\s+(?:(?:million|thousand|1,000|1M|1K)\\s+)?"
    "(?:second|sec|minute|min|hour|day|week|month|year|token|user|request|query|call"
    "|seat|GPU|image|task)s?"
)
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"

# A figure is a number together with what makes it a quantity: a currency sign, a scale
# ("3 billion", "128k"), a multiplier or percentage, or a unit, optionally followed by a
# rate ("per second") and a comparator ("faster"). Numbers glued to a name ("GPT-5.3",
# "K3.1") are never figures, and a bare number ("Opus 4.6", "2026") has no unit.
_FIGURE_RE = re.compile(
    rf"""
    (?<![\w.,/$€£¥])(?<!\w-)
    (?:
        (?P<currency>US\$|\$|€|£|¥)?
        (?P<number>{_NUMBER}(?:\s?[-–]\s?{_NUMBER})?)
        (?P<scale>\s(?i:thousand|million|billion|trillion)\b|(?:[kKMBT]|bn)(?![\w]))?
        (?:
            (?P<multiplier>\s?[%×]|x(?![\w])|[\s-]?(?i:fold)\b|\s(?i:times|percent|per\scent)\b)
          | (?P<measure>\s?(?:{_MEASURE_UNITS})(?![\w]))
          | (?P<count>\s(?i:{_COUNT_NOUNS})\b)
        )?
      | (?P<spelled>(?i:
            \b(?:{_SPELLED_NUMBERS})(?:\s+times|[\s-]?fold)\b
          | \b(?:twice|half)(?=\s+as\s)
        ))
    )
    (?P<rate>\s(?i:{_RATE})\b|/(?i:s|sec|min|h|hr|day|mo|yr|month|year)\b)?
    (?P<comparator>\s(?i:{_COMPARATORS})\b)?
    """,
    re.VERBOSE,
)
_YEAR_RE = re.compile(r"(?:19|20)\d\d")


def _is_figure(match: re.Match[str]) -> bool:
    """A number is a figure only with a currency, scale, multiplier, unit or rate.

    A plain year ("2026", "in 2026 users…") counts only with a multiplier, measure unit,
    rate or currency, so that dates next to a count noun are not reported.
    """
    groups = match.groupdict()
    if groups["spelled"]:
        return groups["spelled"].lower() not in ("twice", "half") or bool(groups["comparator"])
    strong = any(groups[name] for name in ("currency", "scale", "multiplier", "measure", "rate"))
    if _YEAR_RE.fullmatch(groups["number"]):
        return strong
    return strong or bool(groups["count"])


def find_figures(text: str) -> list[str]:
    """Figure phrases in a plain text, in order: "2.5 times faster", "40%", "$3 billion".

    A figure is a number with its currency, scale, multiplier ("2.5×", "3.5-fold"), unit
    ("1,000 tokens"), rate ("per second") and comparator ("faster"): a few words at most.
    Years on their own and version numbers inside names ("Opus 4.6", "GPT-5.3") are not
    figures.
    """
    return [match.group().strip() for match in _FIGURE_RE.finditer(text) if _is_figure(match)]


# --- Attribution ------------------------------------------------------------------------

# Present (both persons, for "OpenAI says" and "OpenAI's figures show") and past forms.
_ATTRIBUTION_VERBS = (
    "says?|said|reports?|reported|announces?|announced|claims?|claimed|states?|stated"
    "|writes?|wrote|notes?|noted|estimates?|estimated|finds?|found|tells?|told"
    "|explains?|explained|publish(?:es)?|published|describes?|described|measures?|measured"
    "|confirms?|confirmed|shows?|showed|suggests?|suggested|argues?|argued|predicts?"
    "|predicted|indicates?|indicated|lists?|listed|cites?|cited|puts?\\s+it"
)
_SOURCE_NOUNS = (
    "announcement|blog(?:\\s+post)?|post|paper|report|technical\\s+report|research"
    "|researchers|data|figures|numbers|benchmarks?|tests?|testing|documentation|docs"
    "|press\\s+release|release\\s+notes|statement|website|site|page|team|engineers"
    "|spokesperson|CEO|model\\s+card|system\\s+card"
)
_AUXILIARIES = "also|has|have|had|previously|publicly|now|officially|itself|later|recently"


def _attribution_re(name: str) -> re.Pattern[str]:
    """Match "<name> says", "<name>'s figures show", "according to <name>", "reported by <name>"."""
    name_re = r"\s+".join(re.escape(word) for word in name.split())
    return re.compile(
        rf"""
        (?<!\w){name_re}(?:['’]s)?(?:\s+(?:own\s+)?(?:{_SOURCE_NOUNS}))?
            (?:\s+(?:{_AUXILIARIES})){{0,3}}\s+(?:{_ATTRIBUTION_VERBS})(?!\w)
      | (?:according\s+to|reported\s+by|announced\s+by|published\s+by|estimated\s+by)
            \s+(?:the\s+)?{name_re}(?!\w)
        """,
        re.IGNORECASE | re.VERBOSE,
    )


def attributed_organisation_names(claim: str, names: list[str]) -> list[str]:
    """The names, among those given, that the claim attributes a statement to.

    Matches "Anthropic says", "OpenAI reported", "OpenAI's announcement says",
    "Google has also said", "according to OpenAI" and "reported by Meta",
    case-insensitively and on word boundaries. A name that is merely mentioned is not
    attributed. Returns names in the order given, each once.
    """
    found: list[str] = []
    for name in names:
        if name.strip() and name not in found and _attribution_re(name).search(claim):
            found.append(name)
    return found


# --- Key phrase suggestions --------------------------------------------------------------

SUGGESTED_PHRASE_WORDS = 8
MIN_SUGGESTED_WORDS = 2  # one word is found on almost any page
# Words that carry no claim at either end of a suggested phrase.
_EDGE_WORDS = frozenset(
    "a an and are as at be but by for from has have i in is it its of on or so that the "
    "their there these they this those to was we were which who with you".split()
)
# An attribution a suggested phrase leaves out: "<verb> (that)" or "according to <name>,".
_ATTRIBUTION_RE = re.compile(
    rf"""(?:(?:{_ATTRIBUTION_VERBS})(?:\s+that)?|according\s+to\s+[^,]+,)\s+""",
    re.IGNORECASE | re.VERBOSE,
)


def _leading_letters(alternative: str) -> str:
    """The letters an alternative of a regex starts with, but a last optional one ("s?")."""
    letters = "".join(itertools.takewhile(lambda character: "a" <= character <= "z", alternative))
    return letters[:-1] if alternative[len(letters) :].startswith("?") else letters


def _shortest(prefixes: set[str]) -> frozenset[str]:
    """The prefixes that have no other of them as their own prefix."""
    return frozenset(p for p in prefixes if not any(p != q and p.startswith(q) for q in prefixes))


# What every attribution starts with, in lower case: where _ATTRIBUTION_RE can match.
_ATTRIBUTION_STARTS = _shortest(
    {_leading_letters(alternative) for alternative in [*_ATTRIBUTION_VERBS.split("|"), "according"]}
)
# The letters that IGNORECASE matches to ASCII letters without lower() giving them
# (the re module's documentation): a text with any is searched by the regex alone.
_CASE_FOLDED_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")


# Where one of them begins: one scan of the text for all, in C.
_ATTRIBUTION_START_RE = re.compile("|".join(sorted(map(re.escape, _ATTRIBUTION_STARTS))))


def _first_attribution(text: str) -> re.Match[str] | None:
    """_ATTRIBUTION_RE.search(text), tried only where one of _ATTRIBUTION_STARTS begins,
    in order: instead of every verb at every character of a long claim."""
    if _CASE_FOLDED_TO_ASCII.search(text):
        return _ATTRIBUTION_RE.search(text)
    lowered = text.lower()
    at = 0
    while (start := _ATTRIBUTION_START_RE.search(lowered, at)) is not None:
        match = _ATTRIBUTION_RE.match(text, start.start())
        if match:
            return match
        at = start.start() + 1
    return None


_WORD_RE = re.compile(r"[\w][\w.,%$€£×'’\-]*")


def _is_edge_word(word: str) -> bool:
    return word.lower() in _EDGE_WORDS


def suggest_key_phrase(claim: str) -> str:
    """Words of a citation's claim its source should say, for an editor to accept as the
    key phrase when none was extracted (extraction only takes figures).

    The claim sentence without a leading attribution ("Anthropic says that …"), trimmed of
    words that carry nothing at either end, at most SUGGESTED_PHRASE_WORDS words; "" when
    nothing is left. A suggestion only: what the page says is checked once it is accepted.
    """
    text = " ".join(claim.split())
    attribution = _first_attribution(text)
    without = text[attribution.end() :] if attribution else text
    if len(without.split(maxsplit=2)) == 3:  # an attribution that leaves a claim to quote
        text = without
    # Read as far as the words kept: a claim may be a few hundred words long.
    stripped = (match.group().rstrip(".,;:!?") for match in _WORD_RE.finditer(text))
    content = itertools.dropwhile(_is_edge_word, (word for word in stripped if word))
    words = list(itertools.islice(content, SUGGESTED_PHRASE_WORDS))
    while words and words[-1].lower() in _EDGE_WORDS:
        words.pop()
    return " ".join(words) if len(words) >= MIN_SUGGESTED_WORDS else ""


# --- Sentences --------------------------------------------------------------------------

# Words that end in a full stop without ending a sentence ("e.g.", "Dr.", "vs.").
_ABBREVIATIONS = frozenset(
    {
        *("e.g", "i.e", "cf", "vs", "al", "approx", "ca", "fig"),
        *("dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "mt", "gen", "gov", "sen"),
        *("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
    }
)
_SENTENCE_END_RE = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_NEXT_CHARACTER_RE = re.compile(r"\s*(\S?)")
_INITIALISM_RE = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]|[A-Z]")  # U.S, e.g, a.m, J
_LAST_WORD_RE = re.compile(r"[\w.]+$")


def _next_character(text: str, position: int) -> tuple[str, int]:
    """The first character at or after `position` that is not whitespace ("" at the end of
    the text), and where it is."""
    found = _NEXT_CHARACTER_RE.match(text, position)
    if found is None:  # never: every part of the pattern may match nothing
        return "", len(text)
    return found.group(1), found.start(1)


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    """Whether this ".", "!", "?" or "…" followed by whitespace closes a sentence."""
    following, _ = _next_character(text, match.end())
    if following.islower():
        return False
    if not following or not match.group().startswith("."):
        return True
    word = _LAST_WORD_RE.search(text, max(0, match.start() - 40), match.start())
    if word is None:
        return True
    token = word.group()
    return token.lower() not in _ABBREVIATIONS and not _INITIALISM_RE.fullmatch(token)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Start and end offsets of the sentences of a plain text.

    A sentence ends at ".", "!", "?" or "…" (with any closing quotes or brackets) that is
    followed by whitespace and then by something other than a lowercase letter. Decimals
    ("2.5") never split, nor do abbreviations ("e.g.", "vs.", "Dr.") and initialisms
    ("U.S.", and single capitals as in "J. Smith").
    """
    spans: list[tuple[int, int]] = []
    _, start = _next_character(text, 0)
    for match in _SENTENCE_END_RE.finditer(text):
        if match.end() > start and _ends_sentence(text, match):
            spans.append((start, match.end()))
            _, start = _next_character(text, match.end())
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


def _covering_sentences(block: _TextBuilder, start: int, end: int) -> tuple[int, int]:
    """Offsets of the sentence(s) of the block that the span start..end lies in; the whole
    block when it lies in none."""
    starts, ends = block.sentences
    first = bisect.bisect_right(ends, start)  # the first sentence ending after `start`
    last = bisect.bisect_right(starts, max(start, end - 1)) - 1
    if first > last:
        return 0, block.length
    return starts[first], ends[last]


def _window(text: str, low: int, high: int, start: int, end: int) -> tuple[int, int]:
    """At most MAX_CLAIM_CHARS less room for two CUTs of text[low:high] around start..end,
    cut at spaces."""
    room = MAX_CLAIM_CHARS - 2 * len(CUT + " ")
    side = max(0, (room - (end - start)) // 2)
    left = max(low, min(start - side, high - room))
    right = min(high, left + room)
    if left > low:  # start at a word
        space = text.find(" ", left, start)
        left = space + 1 if space != -1 else left
    if right < high:  # end at a word
        space = text.rfind(" ", max(end, left), right)
        right = space if space != -1 else right
    return left, right


def _claim(block: _TextBuilder, start: int, end: int) -> tuple[str, str]:
    """The claim of the link at start..end of the block, and its key phrase.

    The claim is the sentence(s) the link lies in, and its key phrase the first figure in
    it. In a sentence longer than MAX_CLAIM_CHARS (a run of links with no full stop) the
    claim is the words around the link, CUT marking the words left out, and its key phrase
    the first figure of the block that lies within those words.
    """
    low, high = _covering_sentences(block, start, end)
    if high - low <= MAX_CLAIM_CHARS:
        return block.sentence_claim(low, high)
    left, right = _window(block.text, low, high, start, end)
    words = block.text[left:right].strip()
    claim = f"{CUT + ' ' if left > low else ''}{words}{' ' + CUT if right < high else ''}"
    return claim, block.first_figure(left, right)


# --- Reading the rendered HTML ---------------------------------------------------------


class _Element:
    __slots__ = ("tag", "attrs", "children")

    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[_Element | str] = []


class _TreeBuilder(HTMLParser):
    """A minimal element tree of a sanitised HTML fragment (entities decoded)."""

    VOID_TAGS = frozenset({"br", "hr", "img", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Element("#root", {})
        self._open = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = _Element(tag, dict(attrs))
        self._open[-1].children.append(element)
        if tag not in self.VOID_TAGS:
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open[-1].children.append(_Element(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        # Close the innermost open element of that name and all inside it; stray end
        # tags are ignored. nh3 output is well-formed, so this is only a safety net.
        for depth in range(len(self._open) - 1, 0, -1):
            if self._open[depth].tag == tag:
                del self._open[depth:]
                return

    def handle_data(self, data: str) -> None:
        self._open[-1].children.append(data)


class _TextBuilder:
    """Plain text of one block, whitespace collapsed as it is appended."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.length = 0
        self._space_pending = False

    @property
    def position(self) -> int:
        """Offset where the next word will start."""
        return self.length + (1 if self._space_pending and self.length else 0)

    def add(self, data: str) -> None:
        if data[:1].isspace():
            self._space_pending = True
        for word in data.split():
            if self._space_pending and self.length:
                self._parts.append(" ")
                self.length += 1
            self._parts.append(word)
            self.length += len(word)
            self._space_pending = True
        if data and not data[-1].isspace():
            self._space_pending = False

    def separate(self) -> None:
        self._space_pending = True

    # The two below are read once the block is complete, by every link in it.

    @functools.cached_property
    def text(self) -> str:
        return "".join(self._parts)

    @functools.cached_property
    def sentences(self) -> tuple[list[int], list[int]]:
        """The start and the end offsets of the block's sentences (sentence_spans)."""
        spans = sentence_spans(self.text)
        return [start for start, _ in spans], [end for _, end in spans]

    @functools.cache  # noqa: B019 - a block lives as long as one extraction
    def sentence_claim(self, low: int, high: int) -> tuple[str, str]:
        """The text from `low` to `high` and the first figure in it ("" when none)."""
        claim = self.text[low:high].strip()
        figures = find_figures(claim)
        return claim, figures[0] if figures else ""

    @functools.cached_property
    def _figures(self) -> tuple[list[int], list[tuple[int, str]]]:
        """The start offsets of the figures of the whole block, and (end, phrase) of each."""
        found = [m for m in _FIGURE_RE.finditer(self.text) if _is_figure(m)]
        return [m.start() for m in found], [(m.end(), m.group().strip()) for m in found]

    def first_figure(self, left: int, right: int) -> str:
        """The first figure of the block that lies within left..right; "" when none."""
        starts, ends = self._figures
        first = bisect.bisect_left(starts, left)
        if first < len(starts) and ends[first][0] <= right:
            return ends[first][1]
        return ""


@dataclass
class _Anchor:
    href: str
    block: _TextBuilder
    start: int
    end: int = field(default=0)


def _anchors(root: _Element) -> list[_Anchor]:
    """Every <a href> in document order, with its block's text and its offsets in it.

    Each block element (paragraph, list item, heading, cell…) gets its own text, without
    the text of blocks nested in it. Iterative, because sanitised HTML can nest deeply.
    """
    anchors: list[_Anchor] = []
    stack: list[tuple[_Element | str, _TextBuilder] | _Anchor] = [(root, _TextBuilder())]
    while stack:
        item = stack.pop()
        if isinstance(item, _Anchor):
            item.end = item.block.length  # all of the link's content has been added
            continue
        node, block = item
        if isinstance(node, str):
            block.add(node)
            continue
        if node.tag in BLOCK_TAGS:
            # A nested block (a sub-list, a cell) separates words in its parent and collects
            # its own text, so a list item's claim never runs into its sub-items. A <br>
            # has no text of its own: it only separates.
            block.separate()
            block = _TextBuilder()
        if node.tag == "a" and node.attrs.get("href"):
            anchor = _Anchor(href=node.attrs["href"] or "", block=block, start=block.position)
            anchors.append(anchor)
            stack.append(anchor)
        stack.extend((child, block) for child in reversed(node.children))
    return anchors


def _citation(anchor: _Anchor) -> FoundCitation | None:
    """The citation for one link, or None if it is not an absolute http(s) URL."""
    url = anchor.href.strip()
    try:
        if urlsplit(url).scheme.lower() not in CITABLE_SCHEMES:
            return None
        normalised = normalise_url(url)
    except ValueError:
        return None
    paragraph = anchor.block.text
    start, end = anchor.start, max(anchor.start, anchor.end)
    link_text = paragraph[start:end].strip()
    start += len(paragraph[start:end]) - len(paragraph[start:end].lstrip())
    claim, key_phrase = _claim(anchor.block, start, max(start, end))
    return FoundCitation(
        url=url,
        normalised_url=normalised,
        link_text=link_text,
        claim=claim,
        key_phrase=key_phrase,
        paragraph=paragraph,
    )


def extract_citations(source: str) -> list[FoundCitation]:
    """Every http(s) link in a Markdown text, in document order, with its claim.

    Inline links, reference-style links, autolinks ("<https://…>") and raw-HTML links
    all count, as rendered by render_markdown, so what is found is what readers see.
    mailto, relative, fragment-only and unparseable links are skipped, and so are all
    links of a text over MAX_SOURCE_CHARS (rendered as plain text). Duplicates are kept:
    each occurrence backs its own claim.
    """
    return list(_citations_of(source))


# A text's citations take several times its size: fewer are kept outside a block.
@remembered(latest=8)
def _citations_of(source: str) -> tuple[FoundCitation, ...]:
    builder = _TreeBuilder()
    builder.feed(render_markdown(source))
    builder.close()
    citations = (_citation(anchor) for anchor in _anchors(builder.root))
    return tuple(citation for citation in citations if citation is not None)
