"""Key phrases found on real pages and PDFs, and never where a reader cannot see them
; titles and descriptions read from every page (section 2)."""

from __future__ import annotations

import pytest

from summaries.linkcheck import find_phrase, read_page, verdict
from summaries.linkcheck.page import head_read
from tests.pdf_files import make_pdf


def html_page(body: str, head: str = "<title>Launch notes</title>") -> bytes:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"{head}</head><body><main>{body}</main></body></html>"
    ).encode()


def found(body: str, phrase: str) -> bool:
    page = read_page(html_page(body), "text/html")
    return find_phrase(page.text, phrase) is not None


# --- Phrases that are on the page ---------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        # Split across inline elements: emphasis, links, spans a CMS wraps words in.
        (
            "<p>Opus is <strong>2.5</strong><em>×</em> <a href='/b'>fast</a>er than before.</p>",
            "2.5 times faster than before",
        ),
        (
            '<p><span class="w">state</span> <span class="w">of</span>\n'
            '<span class="w">the</span> <span class="w">art</span></p>',
            "state of the art",
        ),
        ("<p>up to <abbr title='thousand'>1,000</abbr>&nbsp;tokens</p>", "1000 tokens"),
        ("<p>Claude is 2.5<br>times faster</p>", "2.5 times faster"),
        ("<p>fast<wbr>er inference</p>", "faster inference"),
        # Entities and no-break spaces.
        ("<p>Claude&nbsp;is&#160;2.5&times;&#x20;faster</p>", "Claude is 2.5x faster"),
        ("<p>AT&amp;T and Anthropic</p>", "AT&T and Anthropic"),
        # Soft hyphens (as entities and as characters) and zero-width spaces.
        ("<p>an extra&shy;ordinary result</p>", "extraordinary result"),
        ("<p>an extra\u00adordinary result</p>", "extraordinary result"),
        ("<p>Anthro&#8203;pic said</p>", "Anthropic said"),
        # Typographic quotes and dashes, either way round.
        ("<p>&ldquo;state of the art&rdquo; &mdash; it&rsquo;s here</p>", '"state of the art"'),
        ("<p>it&rsquo;s here</p>", "it's here"),
        ("<p>a GPT&#8209;4&ndash;class model</p>", "GPT-4-class model"),
        ('<p>a "frontier" model</p>', "“frontier” model"),
        # Unicode compatibility forms (NFKC): full-width digits, ligatures.
        ("<p>Ｏｐｕｓ is ２.５× faster</p>", "Opus is 2.5x faster"),
        ("<p>the ﬁrst eﬃcient model</p>", "first efficient model"),
        # Case.
        ("<h2>CLAUDE OPUS 4.5 RELEASED</h2>", "Claude Opus 4.5 released"),
        # Numbers with thousands separators: commas, spaces, no-break and thin spaces.
        ("<p>a context of 1 000 000 tokens</p>", "1,000,000 tokens"),
        ("<p>a context of 1&nbsp;000&nbsp;000 tokens</p>", "1000000 tokens"),
        ("<p>a context of 1&#8239;000&#8239;000 tokens</p>", "1,000,000 tokens"),
        ("<p>a context of 1,000,000 tokens</p>", "1 000 000 tokens"),
        ("<p>a context of 1000000 tokens</p>", "1 000 000 tokens"),
        # A spaced number is read both ways: "10 100-metre" still holds "100-metre".
        ("<p>the top 10 100-metre runners</p>", "100-metre runners"),
        # Percentages and multipliers, spelled out.
        ("<p>errors fell 40 per cent</p>", "errors fell 40%"),
    ],
)
def test_phrases_on_realistic_pages_are_found(body, phrase):
    assert found(body, phrase)


# --- Phrases that are not what a reader sees ----------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        '<script>var claim = "2.5 times faster";</script><p>Nothing here.</p>',
        '<script type="application/ld+json">{"d": "2.5 times faster"}</script>',
        "<style>.x::after { content: '2.5 times faster' }</style><p>Nothing.</p>",
        "<template><p>2.5 times faster</p></template>",
        "<noscript><p>2.5 times faster</p></noscript>",
        "<div hidden><p>2.5 times faster</p></div>",
        '<div hidden="hidden"><div>inner</div><p>2.5 times faster</p></div>',
        '<p style="display: none">2.5 times faster</p>',
        '<div style="color:red; display:none !important"><b>2.5 times faster</b></div>',
        '<div style="visibility:hidden">2.5 times faster</div>',
        '<input type="hidden" value="2.5 times faster">',
        "<nav><a>2.5 times faster</a></nav>",
        "<p>2.5 times faster<!-- 2.5 times faster --></p>".replace("2.5 times faster<", "<"),
    ],
)
def test_phrases_in_scripts_styles_and_hidden_elements_never_count(body):
    assert not found(body, "2.5 times faster")


def test_text_after_a_hidden_element_counts_again():
    body = "<div hidden><div>nested</div>secret</div><p>Opus is 2.5 times faster.</p>"
    assert found(body, "2.5 times faster")
    assert not found(body, "secret")


@pytest.mark.parametrize(
    "body",
    [
        # The words all appear, but in different blocks or sentences.
        "<ul><li>2.5</li><li>times faster</li></ul>",
        "<table><tr><td>2.5</td><td>times faster</td></tr></table>",
        "<p>Opus scored 2.5</p><p>times faster than last year, said no one</p>",
        "<h2>2.5</h2><p>times faster</p>",
        "<p>It took 2.5 seconds. At times faster models fail.</p>",
        "<p>faster, 2.5 times as often</p>",
        "<p>2.5 times slower</p>",
        "<p>12.5 times faster</p>",
    ],
)
def test_words_mentioned_apart_are_not_the_claim(body):
    page_text = read_page(html_page(body), "text/html").text
    assert find_phrase(page_text, "2.5 times faster") is None
    assert verdict(page_text, "2.5 times faster", None, None) == "not_found"


def test_the_excerpt_reads_as_one_line():
    page = read_page(html_page("<h2>Results</h2><p>Opus is 2.5× faster.</p>"), "text/html")
    assert find_phrase(page.text, "2.5x faster") == "Results Opus is 2.5× faster."


# --- Titles and descriptions --------------------------------------------------------------


def test_title_and_meta_description():
    head = (
        "<title>Claude  Opus 4.5 &mdash; Anthropic</title>"
        '<meta name="description" content="  Our most capable\n model. ">'
        '<meta property="og:description" content="Social text">'
    )
    page = read_page(html_page("<p>Body</p>", head), "text/html")
    assert page.title == "Claude Opus 4.5 — Anthropic"
    assert page.description == "Our most capable model."


def test_open_graph_description_when_there_is_no_meta_description():
    head = '<title>T</title><meta property="og:description" content="Social text"/>'
    assert read_page(html_page("", head), "text/html").description == "Social text"
    assert read_page(html_page("", "<title>T</title>"), "text/html").description is None


def test_a_head_read_alone_gives_title_and_description_without_text():
    head = '<title>Only the head</title><meta name="description" content="Short">'
    body = html_page("<p>" + "long text " * 10_000 + "</p>", head)
    prefix = body[: body.index(b"<main>")]
    assert head_read(prefix)
    page = read_page(prefix, "text/html", complete=False)
    assert (page.title, page.description) == ("Only the head", "Short")
    assert (page.text, page.fingerprint) == (None, None)


def test_a_head_is_not_read_before_its_end():
    assert not head_read(b"<html><head><title>Half")
    assert not head_read(b"<html><head><title>T</title><meta name=x>")
    assert head_read(b"<html><head><title>T</title></head>")
    assert head_read(b"<title>T</title><p>no head or body tags")
    assert not head_read(b"%PDF-1.7")


# --- PDFs ---------------------------------------------------------------------------------

PAPER = make_pdf(
    [
        ["Scaling Inference (2026)", "Opus 4.5 is 2.5\u00d7 faster than its prede-"],
        ["cessor at 1,000 tokens per second.", "\u201cState of the art\u201d \u2014 reviewers"],
    ],
    title="Scaling  Inference: a study",
)


def test_pdf_title_and_text():
    page = read_page(PAPER, "application/pdf")
    assert page.title == "Scaling Inference: a study"
    assert page.text and "Opus 4.5 is 2.5× faster" in page.text
    assert page.fingerprint and not page.challenge


@pytest.mark.parametrize(
    "phrase",
    [
        "2.5 times faster than its predecessor",  # hyphenated over a line end
        "its predecessor at 1000 tokens per second",  # over a page break
        '"state of the art" - reviewers',
        "OPUS 4.5",
    ],
)
def test_pdf_claims_are_found(phrase):
    page = read_page(PAPER, "application/pdf")
    assert find_phrase(page.text, phrase) is not None


def test_a_pdf_served_with_a_wrong_type_is_still_read():
    page = read_page(PAPER, "application/octet-stream")
    assert page.title == "Scaling Inference: a study"
    assert find_phrase(page.text, "2.5x faster") is not None


def test_a_pdf_fingerprint_follows_its_text():
    same = read_page(PAPER, "application/pdf").fingerprint
    edited = make_pdf([["Opus 4.5 is 2.4\u00d7 faster"]], title="Scaling Inference: a study")
    assert read_page(edited, "application/pdf").fingerprint != same


@pytest.mark.parametrize(
    "body",
    [
        b"%PDF-1.7\n%garbage that is no PDF",
        PAPER[: len(PAPER) // 2],  # cut off by the body cap
        b"%PDF-1.4\n1 0 obj << /Length 999999 >> stream\nxx",
    ],
)
def test_a_damaged_pdf_gives_no_text_and_no_crash(body):
    page = read_page(body, "application/pdf")
    assert page.text is None
    assert find_phrase(page.text, "2.5x faster") is None
    assert page.fingerprint  # of the bytes: a change is still noticed


def test_a_pdf_without_a_title_or_text():
    blank = make_pdf([[]])
    page = read_page(blank, "application/pdf")
    assert (page.title, page.text) == (None, None)
