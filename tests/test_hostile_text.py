"""Plain text typed by editors (or read from cited pages) never becomes live HTML.

Every plain-text field of the content model gets a hostile value, and every output that
shows it as HTML is parsed the way a browser or feed reader would read it: no element,
attribute or URL scheme the text tried to inject may be there, and the text itself must
still be readable (escaped, not dropped or mangled).

Text fields get "<Model.field> <hostile string>" so that a failure names the field;
URL fields get the hostile string itself (a `javascript:` URL must never become a link).
"""

import html
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from django.utils import timezone

from summaries.editing import derived
from summaries.models import Caveat, Citation, RelatedLink, Source

from .admin_forms import form_fields
from .factories import (
    AppearanceFactory,
    ChannelFactory,
    ChapterFactory,
    KeyPointFactory,
    OrganisationFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
    VideoFactory,
)

pytestmark = pytest.mark.django_db

HOSTILE = {
    "img-onerror": "<img src=x onerror=alert(1)>",
    "script": "<script>alert(1)</script>",
    "attr-breakout-svg": '"><svg onload=alert(1)>',
    "javascript-link": '<a href="javascript:alert(1)">x</a>',
    "style": '<p style="position:fixed">x</p>',
    "single-quote-handler": "' onmouseover='alert(1)",
    "cdata-breakout": "]]></description><script>x</script>",
    "script-breakout": "</script><script>alert(1)</script>",
    "pre-escaped": "&lt;script&gt;",
    "javascript-url": "javascript:alert(1)",
    "ampersand": "Q&A: <b>bold</b> & more",
}

# Plain-text fields (each shown somewhere below) and URL fields.
TEXT_FIELDS = [
    "Channel.name",
    "Channel.description",
    "Organisation.name",
    "Person.name",
    "Topic.name",
    "Video.title",
    "Video.blurb",
    "Summary.tldr",
    "KeyPoint.title",
    "Chapter.title",
    "Chapter.synopsis",
    "Caveat.claim",
    "Citation.link_text",
    "Citation.claim",
    "Citation.key_phrase",
    "Citation.verdict_excerpt",
    "Source.title",
    "Source.host",
    "Source.error",
    "RelatedLink.reasons",
]
URL_FIELDS = [
    "Video.source_url",
    "Video.thumbnail_url",
    "Channel.site_url",
    "Source.url",
    "Citation.url",
]

# Scripts and images a page may carry itself: files from the site, and JSON data blocks
# (which are checked to decode as JSON, so nothing broke out of them).
JSON_SCRIPT_TYPES = ("application/json", "application/ld+json")
INJECTABLE_TAGS = {"img", "svg", "script", "iframe", "object", "embed", "math"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data"}
# The admin's own icons (its theme switch), drawn inline.
ADMIN_SVG_CLASSES = {
    "base-svgs",
    "theme-icon-when-auto",
    "theme-icon-when-dark",
    "theme-icon-when-light",
}


@dataclass
class World:
    hostile: str
    values: dict
    summary: object
    channel: object
    person: object
    topic: object
    source: object

    def __getitem__(self, name):
        return self.values[name]


def build_world(hostile: str) -> World:
    """A live summary whose every plain-text field (and its neighbours') is hostile."""
    values = {name: f"{name} {hostile}" for name in TEXT_FIELDS}
    values.update({name: hostile for name in URL_FIELDS})
    channel = ChannelFactory(
        name=values["Channel.name"],
        description=values["Channel.description"],
        site_url=values["Channel.site_url"],
    )
    video_fields = {
        "channel": channel,
        "title": values["Video.title"],
        "blurb": values["Video.blurb"],
        "source_url": values["Video.source_url"],
        "thumbnail_url": values["Video.thumbnail_url"],
        "duration_seconds": 600,
    }
    video = VideoFactory(**video_fields)
    topic = TopicFactory(name=values["Topic.name"])
    video.topics.add(topic)
    person = PersonFactory(name=values["Person.name"])
    AppearanceFactory(
        video=video,
        person=person,
        organisation=OrganisationFactory(name=values["Organisation.name"]),
    )
    summary = SummaryFactory(video=video, live=True, tldr=values["Summary.tldr"])
    KeyPointFactory(summary=summary, position=1, title=values["KeyPoint.title"], time=30)
    chapter = ChapterFactory(
        summary=summary,
        position=1,
        title=values["Chapter.title"],
        synopsis=values["Chapter.synopsis"],
        start_time=0,
    )
    # Starts no later than the chapter before it: the editor's warnings name it.
    ChapterFactory(summary=summary, position=2, title=values["Chapter.title"], start_time=0)
    Caveat.objects.create(
        summary=summary, chapter=chapter, position=1, claim=values["Caveat.claim"], text="A note."
    )
    source = Source.objects.create(
        url=values["Source.url"],
        host=values["Source.host"],
        title=values["Source.title"],
        error=values["Source.error"],
        state=Source.State.ERROR,
    )
    Citation.objects.create(
        summary=summary,
        chapter=chapter,
        source=source,
        url=values["Citation.url"],
        link_text=values["Citation.link_text"],
        claim=values["Citation.claim"],
        key_phrase=values["Citation.key_phrase"],
        verdict=Citation.Verdict.NOT_FOUND,
        verdict_excerpt=values["Citation.verdict_excerpt"],
    )
    # A second live video of the channel ("More from this channel"), and one of another
    # channel stored as related to the first ("Related" never repeats the channel's cards).
    other = VideoFactory(**{**video_fields, "title": f"Other {values['Video.title']}"})
    SummaryFactory(video=other, live=True, tldr=values["Summary.tldr"])
    elsewhere = VideoFactory(
        **{**video_fields, "channel": ChannelFactory(), "title": f"Related {values['Video.title']}"}
    )
    SummaryFactory(video=elsewhere, live=True, tldr=values["Summary.tldr"])
    RelatedLink.objects.create(
        video=video,
        related=elsewhere,
        position=1,
        score=1.0,
        reasons=[values["RelatedLink.reasons"]],
    )
    video.related_refreshed_at = timezone.now()
    video.save()
    derived.update_search_document(summary=summary)
    return World(hostile, values, summary, channel, person, topic, source)


# --- Reading HTML as a browser would --------------------------------------------------


@dataclass
class Element:
    tag: str
    attrs: list
    content: str = ""  # for <script> and <style>: the raw text inside


@dataclass
class ParsedHTML:
    elements: list = field(default_factory=list)
    text: str = ""  # what a reader sees: text nodes and the values of form fields and tags


class _Parser(HTMLParser):
    RAW = ("script", "style")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.result = ParsedHTML()
        self._text = []
        self._raw = None

    def handle_starttag(self, tag, attrs):
        element = Element(tag, attrs)
        self.result.elements.append(element)
        if tag in self.RAW:
            self._raw = element
        for name, value in attrs:
            if name in ("value", "content", "title", "alt", "placeholder", "aria-label"):
                self._text.append(f"\n{value}\n")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self._raw = None

    def handle_endtag(self, tag):
        if tag in self.RAW:
            self._raw = None

    def handle_data(self, data):
        if self._raw is not None:
            self._raw.content += data
        else:
            self._text.append(data)

    def close(self):
        super().close()
        self.result.text = "".join(self._text)


def parse_html(markup: str) -> ParsedHTML:
    parser = _Parser()
    parser.feed(markup)
    parser.close()
    return parser.result


def _scheme(url: str) -> str:
    cleaned = "".join(ch for ch in url if not ch.isspace() and ord(ch) >= 0x20).lower()
    return cleaned.split(":", 1)[0] if ":" in cleaned else ""


def injected(parsed: ParsedHTML) -> list[str]:
    """Elements and attributes the page does not make itself and text could have injected."""
    found = []
    for element in parsed.elements:
        attrs = dict(element.attrs)
        if element.tag in INJECTABLE_TAGS:
            own_file = element.tag in ("script", "img") and (attrs.get("src") or "").startswith(
                "/static/"
            )
            own_script = element.tag == "script" and (
                (attrs.get("src") or "").startswith("/admin/") and not element.content
            )
            own_icon = element.tag == "svg" and attrs.get("class") in ADMIN_SVG_CLASSES
            own_data = element.tag == "script" and attrs.get("type") in JSON_SCRIPT_TYPES
            if own_data:
                try:
                    json.loads(element.content)
                except ValueError:
                    found.append(f"<script> whose JSON does not decode: {element.content!r}")
            elif not (own_file or own_script or own_icon):
                found.append(f"<{element.tag} {element.attrs}>")
        for name, value in element.attrs:
            if name.startswith("on"):
                found.append(f"<{element.tag}> with event handler {name}={value!r}")
            elif name == "style":
                found.append(f"<{element.tag}> with style={value!r}")
            elif name in URL_ATTRIBUTES and _scheme(value or "") in ("javascript", "vbscript"):
                found.append(f"<{element.tag}> with {name}={value!r}")
    return found


def assert_safe_and_readable(parsed: ParsedHTML, world: World, fields, where: str):
    found = injected(parsed)
    assert not found, f"{where}: markup injected by text: {found}"
    missing = [name for name in fields if world[name] not in parsed.text]
    assert missing == [], f"{where}: text not shown as written: {missing}"
    # Text that looks escaped ("&lt;script&gt;") is text too: it must not be un-escaped.
    unescaped = [
        name
        for name in fields
        if html.unescape(world[name]) != world[name] and html.unescape(world[name]) in parsed.text
    ]
    assert unescaped == [], f"{where}: escaped-looking text un-escaped: {unescaped}"


# --- Reader pages -----------------------------------------------------------------------

CARD = ["Video.title", "Channel.name", "Person.name", "Organisation.name", "Video.blurb"]

READER_PAGES = {
    "summary": (
        lambda w: w.summary.get_absolute_url(),
        [
            *CARD,
            "Topic.name",
            "Summary.tldr",
            "KeyPoint.title",
            "Chapter.title",
            "Chapter.synopsis",
            "Caveat.claim",
            "Citation.link_text",
            "Citation.claim",
            "RelatedLink.reasons",
        ],
    ),
    "channel": (
        lambda w: w.channel.get_absolute_url(),
        [*CARD, "Channel.description", "Topic.name"],
    ),
    "person": (lambda w: w.person.get_absolute_url(), CARD),
    "topic": (lambda w: w.topic.get_absolute_url(), [*CARD, "Topic.name"]),
    "home": (lambda w: reverse("summaries:home"), CARD),
    # Found by a word of its own: PostgreSQL reads "<...>" in a document as a tag and skips
    # it, but not in a query, so the hostile text itself finds nothing there.
    "search": (
        lambda w: f"{reverse('summaries:search')}?{urlencode({'q': 'Summary.tldr'})}",
        ["Video.title", "Channel.name", "Summary.tldr"],
    ),
}


@pytest.mark.parametrize("output", READER_PAGES)
@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_reader_pages_show_plain_text_as_text(client, hostile, output):
    world = build_world(hostile)
    path, fields = READER_PAGES[output]

    response = client.get(path(world))

    assert response.status_code == 200
    parsed = parse_html(response.content.decode())
    assert_safe_and_readable(parsed, world, fields, output)


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_search_page_shows_the_query_back_as_text(client, hostile):
    world = build_world(hostile)
    response = client.get(reverse("summaries:search"), {"q": hostile})
    assert response.status_code == 200
    parsed = parse_html(response.content.decode())
    assert_safe_and_readable(parsed, world, [], "search")
    assert f"“{hostile}”" in parsed.text


@pytest.mark.parametrize(
    ("url", "links"),
    [
        ("https://vimeo.com/1", True),
        ("http://example.com/talk.mp4", True),
        ("javascript:alert(1)", False),
        ("JavaScript:alert(1)", False),
        (" javascript:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("vbscript:msgbox(1)", False),
    ],
)
def test_stored_urls_become_links_only_with_http_or_https(client, url, links):
    """A URL field is text too: validated on input, but only http(s) may become an href."""
    channel = ChannelFactory(site_url=url)
    summary = SummaryFactory(video=VideoFactory(channel=channel, source_url=url), live=True)
    KeyPointFactory(summary=summary, title="Point", time=30)
    chapter = ChapterFactory(summary=summary, title="Start", start_time=0)
    source = Source.objects.create(url="https://example.org/a", host="example.org")
    Citation.objects.create(
        summary=summary, chapter=chapter, source=source, url=url, link_text="Cited", claim="C."
    )

    pages = [summary.get_absolute_url(), channel.get_absolute_url()]
    parsed = [parse_html(client.get(path).content.decode()) for path in pages]

    hrefs = [dict(e.attrs).get("href", "") for page in parsed for e in page.elements]
    to_url = sorted(h for h in hrefs if h.startswith(url))
    if links:  # watching, the channel's site, the citation, the chapter start, the key point
        assert to_url == sorted([url, url, url, f"{url}#t=0", f"{url}#t=30"])
    else:
        assert to_url == []
        assert [injected(page) for page in parsed] == [[], []]
    text = parsed[0].text
    assert "Cited" in text and "0:30" in text  # the citation and the time are still shown


def _meta(parsed: ParsedHTML) -> dict:
    tags = {}
    for element in parsed.elements:
        attrs = dict(element.attrs)
        if element.tag == "meta" and "content" in attrs:
            tags[attrs.get("property") or attrs.get("name")] = attrs["content"]
    return tags


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_summary_page_structured_data_and_meta_tags_hold_the_text_exactly(client, hostile):
    world = build_world(hostile)

    parsed = parse_html(client.get(world.summary.get_absolute_url()).content.decode())

    scripts = [e for e in parsed.elements if e.tag == "script"]
    assert [dict(s.attrs) for s in scripts] == [{"type": "application/ld+json"}]
    data = json.loads(scripts[0].content)
    assert data["name"] == world["Video.title"]
    assert data["description"] == world["Summary.tldr"]
    assert data["author"]["name"] == world["Channel.name"]
    assert data["actor"][0]["name"] == world["Person.name"]
    assert data["actor"][0]["affiliation"]["name"] == world["Organisation.name"]
    assert [clip["name"] for clip in data["hasPart"]] == [world["Chapter.title"]] * 2
    # The editor's thumbnail URL is only fetched by the worker, never printed; until a
    # thumbnail is stored there is none in the data, and og:image is the site's icon.
    assert "thumbnailUrl" not in data
    meta = _meta(parsed)
    assert meta["description"] == world["Summary.tldr"]
    assert meta["og:title"] == meta["twitter:title"] == world["Video.title"]
    assert meta["og:description"] == meta["twitter:description"] == world["Summary.tldr"]
    assert meta["og:image"] == meta["twitter:image"]
    assert meta["og:image"].endswith("/static/summaries/icons/icon-512.png")


# --- Admin ------------------------------------------------------------------------------

ADMIN_PAGES = {
    "summary-change": (
        lambda w: reverse("admin:summaries_summary_change", args=[w.summary.pk]),
        [
            "Video.title",
            "Summary.tldr",
            "KeyPoint.title",
            "Chapter.title",
            "Chapter.synopsis",
            "Caveat.claim",
            "Citation.link_text",
            "Citation.claim",
            "Citation.key_phrase",
            "Citation.verdict_excerpt",
            "Source.host",
        ],
    ),
    "summary-changelist": (
        lambda w: reverse("admin:summaries_summary_changelist"),
        ["Video.title", "Channel.name", "Topic.name"],
    ),
    "source-change": (
        lambda w: reverse("admin:summaries_source_change", args=[w.source.pk]),
        ["Source.url", "Source.host", "Source.title", "Source.error"],
    ),
    "source-changelist": (
        lambda w: reverse("admin:summaries_source_changelist"),
        ["Source.url", "Source.host", "Source.title", "Channel.name"],
    ),
}


@pytest.mark.parametrize("output", ADMIN_PAGES)
@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_admin_pages_show_plain_text_as_text(admin_client, hostile, output):
    world = build_world(hostile)
    path, fields = ADMIN_PAGES[output]

    response = admin_client.get(path(world))

    assert response.status_code == 200
    assert_safe_and_readable(parse_html(response.content.decode()), world, fields, output)


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_admin_messages_after_saving_show_plain_text_as_text(admin_client, hostile):
    """Saving runs the editor warnings, counted in a message and listed under "Things to
    check", which quotes a chapter title."""
    world = build_world(hostile)
    url = reverse("admin:summaries_summary_change", args=[world.summary.pk])
    data = {**form_fields(admin_client.get(url)), "_continue": "Save and continue editing"}

    response = admin_client.post(url, data, follow=True)

    assert response.redirect_chain, response.content.decode()[:3000]
    page = response.content.decode()
    assert_safe_and_readable(parse_html(page), world, ["Video.title", "Summary.tldr"], "saved")
    messages = parse_html(page.split('<ul class="messagelist">', 1)[1].split("</ul>", 1)[0])
    assert "see Things to check" in messages.text
    things = page.split('id="things-to-check"', 1)[1].split("</div>", 1)[0]
    assert (
        f"Chapter 2 “{world['Chapter.title']}”: starts at 0:00"
        in parse_html(f"<div {things}</div>").text
    )


# --- Feeds ------------------------------------------------------------------------------

ATOM = "{http://www.w3.org/2005/Atom}"
DC_CREATOR = "{http://purl.org/dc/elements/1.1/}creator"


def _rss(root):
    """(HTML-typed texts, {text-typed element: texts}) of an RSS 2.0 feed.

    Readers render an RSS title or description as HTML (Django escapes item titles for
    that reason); dc:creator is Dublin Core text.
    """
    channel = root.find("channel")
    html_texts = [channel.findtext("title"), channel.findtext("description")]
    for item in channel.iter("item"):
        html_texts += [item.findtext("title"), item.findtext("description")]
    return html_texts, {"creator": [e.text for e in channel.iter(DC_CREATOR)]}


def _atom(root):
    """(HTML-typed texts, {text-typed element: texts}) of an Atom feed (RFC 4287 §3.1)."""
    html_texts, texts = [], {"title": [], "subtitle": []}
    for name in ("title", "subtitle", "summary", "content", "rights"):
        for element in root.iter(f"{ATOM}{name}"):
            kind = element.get("type", "text")
            assert kind in ("text", "html"), f"<{name}> of type {kind}"
            if kind == "html":
                html_texts.append(element.text)
            else:
                texts.setdefault(name, []).append(element.text)
    texts["author"] = [e.text for e in root.iter(f"{ATOM}name")]
    return html_texts, texts


FEEDS = {
    "rss": (
        lambda w: reverse("summaries:feed-rss"),
        _rss,
        ["Video.title", "Summary.tldr"],
        lambda w: {"creator": w["Channel.name"]},
    ),
    "atom": (
        lambda w: reverse("summaries:feed-atom"),
        _atom,
        ["Summary.tldr"],
        lambda w: {"title": w["Video.title"], "author": w["Channel.name"]},
    ),
    "channel-rss": (
        lambda w: reverse("summaries:channel-feed-rss", kwargs={"slug": w.channel.slug}),
        _rss,
        ["Video.title", "Summary.tldr", "Channel.name", "Channel.description"],
        lambda w: {"creator": w["Channel.name"]},
    ),
    "channel-atom": (
        lambda w: reverse("summaries:channel-feed-atom", kwargs={"slug": w.channel.slug}),
        _atom,
        ["Summary.tldr"],
        lambda w: {
            "title": w["Video.title"],
            "author": w["Channel.name"],
            "subtitle": w["Channel.description"],
        },
    ),
}


@pytest.mark.parametrize("feed", FEEDS)
@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_feeds_carry_plain_text_as_escaped_html_or_as_text(client, hostile, feed):
    world = build_world(hostile)
    path, read, html_fields, text_fields = FEEDS[feed]

    response = client.get(path(world))

    assert response.status_code == 200
    root = ET.fromstring(response.content)  # noqa: S314 - the site's own feed; must be XML
    html_parts, text_parts = read(root)
    # Each HTML-typed element on its own, as a reader renders it after XML decoding.
    parsed = [parse_html(part or "") for part in html_parts]
    for part in parsed:
        found = injected(part)
        assert not found, f"{feed}: markup injected by text: {found}"
    shown = ParsedHTML(text="\n".join(part.text for part in parsed))
    assert_safe_and_readable(shown, world, html_fields, feed)
    for element, expected in text_fields(world).items():
        assert expected in text_parts[element], f"{feed}: <{element}> not the text as written"
    if feed == "channel-atom":
        assert f"{world['Channel.name']} — Curation" in text_parts["title"]
