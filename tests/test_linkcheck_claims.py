"""summaries.linkcheck claims and page reading: phrases, verdicts and fingerprints (section 3)."""

from __future__ import annotations

import pytest

from summaries.linkcheck import find_phrase, fingerprint_text, normalise_phrase, read_page, verdict

# --- find_phrase ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "text"),
    [
        ("2.5 times faster", "Claude is 2.5× faster than before."),
        ("2.5 times faster", "Claude is 2.5x faster than before."),
        ("2.5 times faster", "Claude is 2.5X faster than before."),
        ("2.5 times faster", "Claude is 2.5 x faster than before."),
        ("2.5 times faster", "Claude is 2.5-fold faster than before."),
        ("2.5×", "a 2.5 fold improvement"),
        ("2.5x faster", "Claude is 2.5 times faster."),
        ("2.5x faster", "Claude is 2.5&times; faster."),
        ("2.5x faster", "Claude is 2.5&#215;&nbsp;faster."),
        ("1,000 tokens", "up to 1000 tokens per call"),
        ("1000 tokens", "up to 1,000 tokens per call"),
        ("$1,250,000", "raised $1250000 in total"),
        ("40%", "a 40 percent drop"),
        ("40 percent", "a 40% drop"),
        ("40 per cent", "a 40 % drop"),
        ("Anthropic  SAYS", "…and anthropic says it will…"),
        ("AT&amp;T", "a deal with AT&T today"),
        ("“state of the art”", 'called it "state of the art" twice'),
        ("it’s fast", "it's fast"),
        ("GPT–4 class", "a GPT-4 class model"),
        ("GPT-4 class", "a GPT—4 class model"),
        ("twice as fast", "twice \t as   fast"),
        ("2.5 times faster", "2.5\u00a0times\u2009faster"),
        ("faster", "fas\u00adter than ever"),  # soft hyphen
        ("faster", "fas\u200bter than ever"),  # zero-width space
        ("ｆａｓｔｅｒ", "faster"),  # full-width forms
    ],
)
def test_phrases_match_after_normalising(phrase, text):
    assert find_phrase(text, phrase) is not None


@pytest.mark.parametrize(
    ("phrase", "text"),
    [
        ("5%", "grew 2.5% last year"),
        ("2.5x", "a 12.5x speed-up"),
        ("25 times", "2.5 times faster"),
        ("2.5 times", "25 times faster"),
        ("1,000", "11,000 users"),
        ("1,000", "1,000.5 users"),
        ("faster", "fasterer"),
        ("2.5 times faster", "2.5 times slower"),
        ("2.5 times faster", ""),
    ],
)
def test_phrases_do_not_match_inside_longer_numbers_or_words(phrase, text):
    assert find_phrase(text, phrase) is None


def test_blank_phrases_and_missing_text_match_nothing():
    assert find_phrase("some text", "") is None
    assert find_phrase("some text", "   ") is None
    assert find_phrase(None, "text") is None


def test_the_excerpt_is_about_200_characters_around_the_phrase():
    before = " ".join(f"word{n}" for n in range(60))
    after = " ".join(f"tail{n}" for n in range(60))
    text = f"{before} Claude is 2.5&times; faster than Sonnet. {after}"
    excerpt = find_phrase(text, "2.5 times faster")
    assert excerpt is not None
    assert "Claude is 2.5× faster than Sonnet." in excerpt
    assert excerpt.startswith("…") and excerpt.endswith("…")
    assert 150 <= len(excerpt) <= 220
    assert " word" in excerpt and "tail" in excerpt  # cut at word boundaries
    assert not excerpt[1:].startswith(("ord", "rd"))


def test_a_short_text_is_its_own_excerpt():
    assert find_phrase("It is  2.5x faster.", "2.5 times faster") == "It is 2.5x faster."


def test_normalise_phrase():
    assert normalise_phrase("  2.5 Times  Faster ") == "2.5x faster"
    assert normalise_phrase("40 per cent of 1,000") == "40% of 1000"


# --- verdict ----------------------------------------------------------------------------

PAGE = "Anthropic says Claude is 2.5× faster."


@pytest.mark.parametrize(
    ("text", "confirmed", "current", "expected"),
    [
        (PAGE, None, "aaa", "supported"),  # never confirmed
        (PAGE, "aaa", "aaa", "supported"),  # as confirmed
        (PAGE, "aaa", "bbb", "changed"),  # phrase still there, page changed since review
        ("Claude is faster.", "aaa", "aaa", "not_found"),
        ("Claude is faster.", "aaa", "bbb", "not_found"),  # not found wins over changed
        (None, None, None, "not_found"),
        (PAGE, "aaa", None, "supported"),  # no current fingerprint: nothing to compare
    ],
)
def test_verdict(text, confirmed, current, expected):
    assert verdict(text, "2.5 times faster", confirmed, current) == expected


def test_verdict_needs_a_phrase():
    with pytest.raises(ValueError, match="non-blank phrase"):
        verdict(PAGE, " ", None, None)


# --- Reading pages: title, main text, fingerprint ---------------------------------------

ARTICLE = """<!doctype html>
<html><head><title>
  Claude&nbsp;Opus &amp; Sonnet &#8212; News</title>
<style>p { color: red }</style><script>var tracking = "2.5x";</script></head>
<body>
<header><a href="/">Home</a> Site name</header>
<nav><ul><li>Menu</li><li>About</li></ul></nav>
<main><h1>Launch</h1><p>Claude is <b>2.5</b>&times; faster.</p><p>Second&nbsp;paragraph</p>
<svg><title>icon</title><text>chart</text></svg><noscript>Enable JS</noscript></main>
<footer>Copyright 2026</footer>
</body></html>"""


def test_read_page_title_and_main_text():
    page = read_page(ARTICLE.encode(), "text/html; charset=utf-8")
    assert page.title == "Claude Opus & Sonnet — News"
    # One block per line; the fingerprint reads them as one line, as it always did, so
    # citations confirmed before blocks were kept apart are not reported "changed".
    assert page.text == "Launch\nClaude is 2.5× faster.\nSecond paragraph"
    assert page.fingerprint == fingerprint_text("Launch Claude is 2.5× faster. Second paragraph")
    assert not page.challenge


def test_the_fingerprint_ignores_navigation_scripts_and_whitespace_only():
    original = read_page(ARTICLE.encode(), "text/html").fingerprint
    cosmetic = (
        ARTICLE.replace("Menu", "Products")
        .replace("tracking", "analytics")
        .replace("Copyright 2026", "Copyright 2027")
        .replace("<p>Second", "\n\n   <p>Second")
    )
    assert read_page(cosmetic.encode(), "text/html").fingerprint == original
    edited = ARTICLE.replace("2.5</b>", "2.4</b>")
    assert read_page(edited.encode(), "text/html").fingerprint != original


def test_read_page_decodes_charsets():
    latin = "<html><head><meta charset='iso-8859-1'><title>Café</title></head></html>"
    assert read_page(latin.encode("latin-1"), "text/html").title == "Café"
    assert read_page(latin.encode("latin-1"), "text/html; charset=latin-1").title == "Café"
    assert read_page("<title>Ünïcode</title>".encode(), "text/html; charset=bogus").title == (
        "Ünïcode"
    )


def test_read_page_tolerates_broken_markup():
    page = read_page(b"<title>Half<p>open <b>tags <script>x", "text/html")
    assert page.title.startswith("Half")  # an unclosed title ends with the document
    page = read_page(b"<html><head><title>T</title><body><p>No closing head", "text/html")
    assert page.text == "No closing head"


def test_binary_bodies_have_no_text_but_a_fingerprint():
    page = read_page(b"%PDF-1.7\x00\x01binary", "application/pdf")
    assert (page.title, page.text) == (None, None)
    assert page.fingerprint and len(page.fingerprint) == 64


@pytest.mark.parametrize(
    "body",
    [
        "<html><head><title>Just a moment...</title></head></html>",
        "<html><head><title>Attention Required! | Cloudflare</title></head></html>",
        '<html><script src="https://challenges.cloudflare.com/turnstile/v0/api.js"></script>',
        '<html><form id="challenge-form" action="/?__cf_chl_f_tk=x"></form></html>',
        '<html><div class="h-captcha" data-sitekey="x"></div></html>',
        '<html><iframe src="https://geo.captcha-delivery.com/captcha/"></iframe></html>',
    ],
)
def test_challenge_pages_are_recognised(body):
    assert read_page(body.encode(), "text/html").challenge


def test_an_article_about_captchas_is_not_a_challenge():
    body = "<title>Why CAPTCHAs fail</title><p>A captcha is a test. Just a moment...</p>"
    assert not read_page(body.encode(), "text/html").challenge
