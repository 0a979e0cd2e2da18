"""Markdown rendering: what readers see, and what hostile input cannot do."""

import uuid
from html.parser import HTMLParser

import pytest

from summaries.text.markdown import (
    ALLOWED_TAGS,
    MAX_LINK_NESTING,
    MAX_SOURCE_CHARS,
    markdown_to_text,
    render_inline_markdown,
    render_markdown,
)

from .counting import calls_made
from .growth import assert_grows_linearly

ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "rel"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
}


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.text.append(data)


def parse(fragment):
    collector = _Collector()
    collector.feed(fragment)
    collector.close()
    return collector.elements, "".join(collector.text)


def assert_safe(fragment):
    """Only allow-listed tags and attributes; links are http(s), mailto or relative."""
    elements, _ = parse(fragment)
    for tag, attrs in elements:
        assert tag in ALLOWED_TAGS, f"{tag} in {fragment!r}"
        assert set(attrs) <= ALLOWED_ATTRIBUTES.get(tag, set()), f"{attrs} in {fragment!r}"
        if tag == "a":
            assert attrs["rel"] == "nofollow noopener"
            href = (attrs.get("href") or "").strip().lower()
            scheme, colon, _ = href.partition(":")
            assert not colon or scheme in {"http", "https", "mailto"} or "/" in scheme, href


HOSTILE = {
    "script": "<script>alert(1)</script>",
    "script in markdown paragraph": "Hello <script>alert(1)</script> world",
    "img onerror": '<img src=x onerror="alert(1)">',
    "a javascript": '<a href="javascript:alert(1)">x</a>',
    "a javascript mixed case": '<a href="JaVaScRiPt:alert(1)">x</a>',
    "a javascript tab entity": '<a href="jav&#x09;ascript:alert(1)">x</a>',
    "a javascript numeric entities": '<a href="&#106;&#97;vascript:alert(1)">x</a>',
    "a javascript newline": '<a href="java\nscript:alert(1)">x</a>',
    "a javascript leading space": '<a href=" javascript:alert(1)">x</a>',
    "a data url": '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    "a vbscript": '<a href="vbscript:msgbox(1)">x</a>',
    "iframe": '<iframe src="https://evil.example/"></iframe>',
    "form": '<form action="https://evil.example/"><input name="q"><button>Go</button></form>',
    "style": "<style>body { display: none }</style>",
    "style attribute": '<b style="position:fixed" onclick="alert(1)">x</b>',
    "svg onload": "<svg onload=alert(1)><circle r=1></circle></svg>",
    "math xlink": '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
    "object and embed": '<object data="x.swf"></object><embed src="x.swf">',
    "meta refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "base href": '<base href="javascript:alert(1)//">',
    "cell background": '<table><tr><td background="javascript:alert(1)">x</td></tr></table>',
    "markdown link javascript": "[x](javascript:alert(1))",
    "markdown link javascript upper": "[x](JAVASCRIPT:alert(1))",
    "markdown link data": "[x](data:text/html,hello)",
    "markdown image javascript": "![x](javascript:alert(1))",
    "markdown reference javascript": "[x][r]\n\n[r]: javascript:alert(1)",
    "autolink javascript": "<javascript:alert(1)>",
    "event handler on allowed tag": '<p title="x" onmouseover="alert(1)">hi</p>',
    "link target and own rel": '<a href="https://ok.example/" target="_blank" rel="opener">x</a>',
    "comment": "<!-- <script>alert(1)</script> -->",
    "cdata": "<![CDATA[<script>alert(1)</script>]]>",
    "unclosed script": "<div><script>alert(1)</div>",
    "split tag": "<scr<script>ipt>alert(1)</script>",
    "nested unclosed": "<b><i><a href='https://ok.example/'>x<em>y",
    "unclosed quote attribute": '<a href="https://ok.example/ onclick="alert(1)>x</a>',
}


@pytest.mark.parametrize("source", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_renders_only_allow_listed_markup(source):
    rendered = render_markdown(source)

    assert_safe(rendered)
    assert_safe(render_inline_markdown(source))
    lowered = rendered.lower()
    for forbidden in ("<script", "<iframe", "<form", "<input", "<style", "<svg", "<img"):
        assert forbidden not in lowered


@pytest.mark.parametrize(
    "source",
    ["<script>alert(1)</script>", "<style>body { color: red }</style>", "<svg><text>alert(1)"],
)
def test_script_style_and_svg_content_is_dropped_not_shown(source):
    assert "alert(1)" not in markdown_to_text(source)
    assert "color" not in markdown_to_text(source)


@pytest.mark.parametrize(
    "source",
    ["[x](javascript:alert(1))", '<a href="JaVaScRiPt:alert(1)">x</a>', "[x](data:text/html,hi)"],
)
def test_dangerous_link_keeps_text_but_loses_href(source):
    assert render_inline_markdown(source) == '<a rel="nofollow noopener">x</a>'


def test_event_handlers_are_removed_from_allowed_tags():
    assert render_markdown('<p title="x" onmouseover="alert(1)">hi</p>') == "<p>hi</p>"


def test_markdown_h1_is_demoted_to_h2_and_other_levels_kept():
    assert render_markdown("# Title\n\n## Part\n\n### Detail\n\n###### Small") == (
        "<h2>Title</h2>\n<h2>Part</h2>\n<h3>Detail</h3>\n<h6>Small</h6>"
    )


def test_raw_html_h1_is_reduced_to_its_text():
    assert render_markdown("<h1>Title</h1>") == "Title"


def test_lists_render_including_ordered_start_number():
    assert render_markdown("- one\n- two") == "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"
    assert render_markdown("3. three\n4. four") == (
        '<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>'
    )


def test_emphasis_and_raw_inline_formatting():
    assert render_markdown(
        "**bold**, *em*, ~~no~~ <del>gone</del> x<sup>2</sup> H<sub>2</sub>O"
    ) == (
        "<p><strong>bold</strong>, <em>em</em>, ~~no~~ <del>gone</del> "
        "x<sup>2</sup> H<sub>2</sub>O</p>"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "[Anthropic](https://www.anthropic.com/)",
            '<a href="https://www.anthropic.com/" rel="nofollow noopener">Anthropic</a>',
        ),
        (
            '[post](https://openai.com/index/x/ "OpenAI post")',
            '<a href="https://openai.com/index/x/" title="OpenAI post" rel="nofollow noopener">'
            "post</a>",
        ),
        (
            "<https://example.com/a?b=1&c=2>",
            '<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener">'
            "https://example.com/a?b=1&amp;c=2</a>",
        ),
        (
            "[ref][1]\n\n[1]: https://example.com/ref",
            '<a href="https://example.com/ref" rel="nofollow noopener">ref</a>',
        ),
        (
            "[mail](mailto:editor@example.com)",
            '<a href="mailto:editor@example.com" rel="nofollow noopener">mail</a>',
        ),
        ("[about](/about/)", '<a href="/about/" rel="nofollow noopener">about</a>'),
    ],
)
def test_links_keep_safe_urls_and_get_nofollow_noopener(source, expected):
    assert render_inline_markdown(source) == expected


def test_code_blocks_escape_markup_and_drop_language_class():
    source = '```python\nif a < b and c > d:\n    print("<p>")\n```'
    assert render_markdown(source) == (
        '<pre><code>if a &lt; b and c &gt; d:\n    print("&lt;p&gt;")\n</code></pre>'
    )
    assert render_markdown("Use `<script>` tags") == "<p>Use <code>&lt;script&gt;</code> tags</p>"


def test_tables_render_with_alignment():
    source = "| Model | Speed |\n|:--|--:|\n| Opus 4.6 | 2.5× |"
    assert render_markdown(source) == (
        "<table>\n<thead>\n<tr>\n"
        '<th align="left">Model</th>\n<th align="right">Speed</th>\n'
        "</tr>\n</thead>\n<tbody>\n<tr>\n"
        '<td align="left">Opus 4.6</td>\n<td align="right">2.5×</td>\n'
        "</tr>\n</tbody>\n</table>"
    )


def test_blockquote_and_horizontal_rule():
    assert render_markdown("> quoted\n\n---") == "<blockquote>\n<p>quoted</p>\n</blockquote>\n<hr>"


def test_images_are_dropped():
    assert render_markdown("See ![chart](https://example.com/chart.png) here") == "<p>See  here</p>"


def test_unclosed_tags_are_closed():
    assert render_markdown("<b><i>text") == "<p><b><i>text</i></b></p>"


@pytest.mark.parametrize("source", ["", "   \n\t ", None])
def test_empty_input_renders_nothing(source):
    assert render_markdown(source) == ""
    assert render_inline_markdown(source) == ""
    assert markdown_to_text(source) == ""


def test_rendering_is_deterministic_and_calls_do_not_share_state():
    with_definition = "[x][r]\n\n[r]: https://example.com/"
    first = render_markdown(with_definition)

    assert render_markdown(with_definition) == first
    # A reference defined in one text must not resolve in the next one.
    assert render_markdown("[x][r]") == "<p>[x][r]</p>"


def test_source_over_the_limit_is_shown_as_escaped_text():
    source = "**bold** <b>x</b>\n\n" + "y" * MAX_SOURCE_CHARS

    rendered = render_markdown(source)

    assert rendered.startswith("<p>**bold** &lt;b&gt;x&lt;/b&gt;</p>\n<p>yyy")
    assert_safe(rendered)


def test_too_deeply_nested_lists_fall_back_to_text():
    source = "\n".join("  " * depth + "- item" for depth in range(400))

    rendered = render_markdown(source)

    assert rendered.startswith("<p>- item")
    assert_safe(rendered)


def test_a_text_too_deeply_nested_leaves_nothing_behind_for_the_next():
    nested = "\n".join("  " * depth + "- item" for depth in range(400))  # under the size cap
    assert render_markdown(nested).startswith("<p>- item")  # the parser gave up

    # A list item continued by an indented paragraph, as a fresh parser reads it.
    assert render_markdown("- a\n\n    b") == "<ul>\n<li>\n<p>a</p>\n<p>b</p>\n</li>\n</ul>"


# Each built from its number of repeats; the numbers given are the large
# inputs, and a quarter of each is read too, to see how the time grows (tests/growth.py).
PATHOLOGICAL = {
    "open brackets": (lambda n: "[" * n, 50_000),
    "unclosed links": (lambda n: "[a](" * n, 20_000),
    "unclosed images": (lambda n: "![a](" * n, 15_000),
    "reference-like": (lambda n: "[a][" * n, 20_000),
    "nested brackets": (lambda n: "[" * n + "]" * n + "(https://example.com/)", 20_000),
    "angle brackets": (lambda n: "<" * n, 50_000),
    "nested blockquotes": (lambda n: "> " * n + "x", 20_000),
    "nested divs": (lambda n: "<div>" * n, 19_000),
    "mixed punctuation": (lambda n: "*_[`<" * n, 19_000),
}


@pytest.mark.parametrize(("build", "size"), PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_input_renders_in_linear_time(build, size):
    # Before the bounded link scanning, "[" * 50_000 took minutes.
    rendered = assert_grows_linearly(render_markdown, build, size)

    assert_safe(rendered)


def link_run(count: int, link: str) -> str:
    """`count` links in one paragraph, after a word of its own (the parse memo never has it)."""
    return " ".join([uuid.uuid4().hex, *(link.format(i=i) for i in range(count))])


LINK_SHAPES = {
    "plain": "[source {i}](https://example.org/{i})",
    "brackets in the text": "[source [{i}] note](https://example.org/{i})",
    "in sentences": "Claim {i} is 3× faster [source {i}](https://example.org/{i}).",
    "unclosed before each": "[[source {i}](https://example.org/{i})",
    "images": "![chart {i}](https://example.org/{i}.png)",
}


@pytest.mark.parametrize("link", LINK_SHAPES.values(), ids=LINK_SHAPES.keys())
def test_rendering_work_grows_in_proportion_to_the_number_of_links(link):
    few = calls_made(render_markdown, link_run(250, link))
    many = calls_made(render_markdown, link_run(1_000, link))

    # Four times the links: four times the work when linear, sixteen when quadratic.
    assert many < 5 * few, (few, many)


def test_a_link_text_may_hold_brackets():
    assert render_markdown("See [the [2026] report](https://example.org/).") == (
        '<p>See <a href="https://example.org/" rel="nofollow noopener">the [2026] report</a>.</p>'
    )


def test_a_link_text_with_brackets_nested_past_the_limit_stays_text():
    nested = "[" * (MAX_LINK_NESTING + 1) + "x" + "]" * (MAX_LINK_NESTING + 1)

    rendered = render_markdown(f"{nested}(https://example.org/)")

    assert "<a" not in rendered
    assert "(https://example.org/)" in rendered


def test_inline_rendering_strips_the_lone_paragraph():
    assert render_inline_markdown("Anthropic says **2.5×** faster") == (
        "Anthropic says <strong>2.5×</strong> faster"
    )


@pytest.mark.parametrize(
    "source",
    ["First paragraph.\n\nSecond paragraph.", "- a\n- b", "## Heading", "> quote"],
)
def test_inline_rendering_keeps_block_structure_when_not_one_paragraph(source):
    assert render_inline_markdown(source) == render_markdown(source)


def test_text_is_what_readers_see():
    source = (
        "# Title\n\nSome **bold** and [a link](https://example.com/) &amp; more.\n\n"
        "- one\n- two\n\n`<code>` &copy; 2026&nbsp;AD"
    )
    assert markdown_to_text(source) == "Title Some bold and a link & more. one two <code> © 2026 AD"


def test_text_separates_blocks_and_collapses_whitespace():
    assert (
        markdown_to_text("alpha\n\nbeta\n\n| a | b |\n|---|---|\n| c | d |") == "alpha beta a b c d"
    )
    assert markdown_to_text("line one  \nline   two") == "line one line two"
