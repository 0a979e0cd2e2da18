"""Finding cited sources, their claims and figures, and checking who a claim is attributed to."""

import uuid

import pytest

from summaries.text.citations import (
    MAX_CLAIM_CHARS,
    FoundCitation,
    attributed_organisation_names,
    extract_citations,
    find_figures,
    host_matches_domains,
    normalise_url,
    sentence_spans,
)
from summaries.text.remembered import remembering

from .counting import calls_made

# The second chapter ("Faster model releases") of the Berman speed summary example.
FASTER_MODEL_RELEASES = """\
I have been using Claude Opus 4.6 Fast Mode and find it extremely fast. \
[Anthropic says](https://www.anthropic.com/research/measuring-agent-autonomy) that this mode \
generates output 2.5 times faster than regular Opus 4.6. This is a comparison of output \
generation speed, not necessarily a 2.5-fold improvement in every complete task.

OpenAI has also released GPT-5.3-Codex-Spark, which it says can generate more than 1,000 \
tokens per second on Cerebras hardware. Its \
[February 2026 announcement](https://openai.com/index/introducing-gpt-5-3-codex-spark/) \
described a smaller coding model offered as a research preview, initially to ChatGPT Pro \
users. Actual task time also depends on input processing, tool execution and network \
overhead; speed alone does not establish output quality. Speed maxis unite.
"""


def test_example_chapter_citations():
    assert extract_citations(FASTER_MODEL_RELEASES) == [
        FoundCitation(
            url="https://www.anthropic.com/research/measuring-agent-autonomy",
            normalised_url="https://www.anthropic.com/research/measuring-agent-autonomy",
            link_text="Anthropic says",
            claim=(
                "Anthropic says that this mode generates output 2.5 times faster than "
                "regular Opus 4.6."
            ),
            key_phrase="2.5 times faster",
            paragraph=(
                "I have been using Claude Opus 4.6 Fast Mode and find it extremely fast. "
                "Anthropic says that this mode generates output 2.5 times faster than "
                "regular Opus 4.6. This is a comparison of output generation speed, not "
                "necessarily a 2.5-fold improvement in every complete task."
            ),
        ),
        FoundCitation(
            url="https://openai.com/index/introducing-gpt-5-3-codex-spark/",
            normalised_url="https://openai.com/index/introducing-gpt-5-3-codex-spark/",
            link_text="February 2026 announcement",
            claim=(
                "Its February 2026 announcement described a smaller coding model offered as "
                "a research preview, initially to ChatGPT Pro users."
            ),
            key_phrase="",
            paragraph=(
                "OpenAI has also released GPT-5.3-Codex-Spark, which it says can generate "
                "more than 1,000 tokens per second on Cerebras hardware. Its February 2026 "
                "announcement described a smaller coding model offered as a research "
                "preview, initially to ChatGPT Pro users. Actual task time also depends on "
                "input processing, tool execution and network overhead; speed alone does not "
                "establish output quality. Speed maxis unite."
            ),
        ),
    ]


def test_example_claims_feed_the_attribution_and_domain_checks():
    anthropic, openai = extract_citations(FASTER_MODEL_RELEASES)

    assert attributed_organisation_names(anthropic.claim, ["OpenAI", "Anthropic"]) == ["Anthropic"]
    assert host_matches_domains(anthropic.url, ["anthropic.com", "claude.ai"])
    assert attributed_organisation_names(openai.claim, ["OpenAI", "Anthropic"]) == []


def test_all_link_forms_are_found_in_document_order_and_non_http_links_skipped():
    source = (
        "First [inline](https://one.example/a). Then [ref][r] and <https://auto.example/b>.\n\n"
        "[mail](mailto:editor@example.com) [relative](/about/) [fragment](#top) "
        "[script](javascript:alert(1)) [ftp](ftp://files.example/) "
        '<a href="https://raw.example/c">raw</a> [again](https://one.example/a)\n\n'
        "[r]: https://ref.example/r"
    )

    found = [(citation.url, citation.link_text) for citation in extract_citations(source)]

    assert found == [
        ("https://one.example/a", "inline"),
        ("https://ref.example/r", "ref"),
        ("https://auto.example/b", "https://auto.example/b"),
        ("https://raw.example/c", "raw"),
        ("https://one.example/a", "again"),
    ]


def test_links_in_nested_blocks_keep_document_order_and_their_own_paragraph():
    source = (
        "- Parent [one](https://one.example/) item.\n"
        "    - Child [two](https://two.example/) item.\n"
        "- Sibling [three](https://three.example/).\n\n"
        "> Quoted [four](https://four.example/).\n\n"
        "| Source | Note |\n|---|---|\n| [five](https://five.example/) | cell |"
    )

    found = [(c.link_text, c.paragraph) for c in extract_citations(source)]

    assert found == [
        ("one", "Parent one item."),
        ("two", "Child two item."),
        ("three", "Sibling three."),
        ("four", "Quoted four."),
        ("five", "five"),
    ]


def test_claim_is_plain_text_of_the_sentence_with_the_link():
    source = (
        "Model **X** is `fast`. It is [*2×* faster](https://x.example/) per the U.S. report, "
        "e.g. in tests by Dr. Lee vs. a baseline of 3.5 seconds. Done."
    )

    (citation,) = extract_citations(source)

    assert citation.link_text == "2× faster"
    assert citation.claim == (
        "It is 2× faster per the U.S. report, e.g. in tests by Dr. Lee vs. a baseline of "
        "3.5 seconds."
    )
    assert citation.key_phrase == "2× faster"


def test_entities_in_claims_are_decoded():
    (citation,) = extract_citations("AT&amp;T says [costs fell 40%](https://att.example/).")

    assert citation.claim == "AT&T says costs fell 40%."
    assert citation.key_phrase == "40%"


def test_duplicate_links_are_each_reported_with_their_claim():
    source = "A [first](https://x.example/?utm_source=a). B [second](https://x.example/#b)."

    citations = extract_citations(source)

    assert [c.claim for c in citations] == ["A first.", "B second."]
    assert {c.normalised_url for c in citations} == {"https://x.example/"}


@pytest.mark.parametrize(
    "source",
    ["", "No links here.", "[x](javascript:alert(1))", "[" * 50_000, "<b>" * 20_000 + "[x]("],
)
def test_texts_without_http_links_give_no_citations(source):
    assert extract_citations(source) == []


def test_deeply_nested_html_does_not_break_extraction():
    (citation,) = extract_citations("<b>" * 20_000 + "[x](https://x.example/)")

    assert citation.url == "https://x.example/"


def link_run(count: int, link: str) -> str:
    return " ".join([uuid.uuid4().hex, *(link.format(i=i) for i in range(count))])


@pytest.mark.parametrize(
    "link",
    [
        "[source {i}](https://example.org/{i})",
        "Claim {i} is 3× faster [source {i}](https://example.org/{i}).",
        "- [source {i}](https://example.org/{i})\n",
    ],
)
def test_extraction_work_grows_in_proportion_to_the_number_of_links(link):
    few = calls_made(extract_citations, link_run(250, link))
    many = calls_made(extract_citations, link_run(1_000, link))

    # Four times the links: four times the work when linear, sixteen when quadratic.
    assert many < 5 * few, (few, many)


def test_a_claim_in_a_very_long_sentence_is_the_words_around_its_link():
    words = " ".join(f"word{i}" for i in range(1_000))
    source = f"{words} costs $5 per [source](https://x.example/) {words} end."

    (citation,) = extract_citations(source)

    assert len(citation.claim) <= MAX_CLAIM_CHARS
    assert citation.claim.startswith("… ") and citation.claim.endswith(" …")
    assert "word999 costs $5 per source word0" in citation.claim
    assert citation.key_phrase == "$5"


def test_a_claim_of_an_ordinary_sentence_is_the_whole_sentence():
    sentence = (
        "Anthropic says " + "the new mode is fast and " * 10 + "cheap [here](https://x.example/)."
    )

    (citation,) = extract_citations(f"Before. {sentence} After.")

    assert citation.claim == sentence.replace("[here](https://x.example/)", "here")


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("It is 2.5 times faster. Next.", ["It is 2.5 times faster.", "Next."]),
        ("Tools, e.g. Codex, help. Next.", ["Tools, e.g. Codex, help.", "Next."]),
        ("See i.e. This one. Next.", ["See i.e. This one.", "Next."]),
        ("The U.S. Department said so. Next.", ["The U.S. Department said so.", "Next."]),
        ("Ask Dr. Smith or Mr. Jones. Next.", ["Ask Dr. Smith or Mr. Jones.", "Next."]),
        ("Opus vs. GPT is close. Next.", ["Opus vs. GPT is close.", "Next."]),
        ("Written by J. R. R. Tolkien. Next.", ["Written by J. R. R. Tolkien.", "Next."]),
        ("He said “it works.” Then left.", ["He said “it works.”", "Then left."]),
        ("Wait... what happened? It ended.", ["Wait... what happened?", "It ended."]),
        ("Released Opus 4.6. Then GPT-5.3.", ["Released Opus 4.6.", "Then GPT-5.3."]),
        ("  ", []),
    ],
)
def test_sentence_spans_do_not_split_on_abbreviations_or_decimals(text, sentences):
    assert [text[start:end] for start, end in sentence_spans(text)] == sentences


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://www.Anthropic.com:443/research/x?utm_source=a#top",
            "https://www.anthropic.com/research/x",
        ),
        ("HTTP://Example.COM:80", "http://example.com/"),
        ("http://example.com:443/", "http://example.com:443/"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("https://example.com?b=2", "https://example.com/?b=2"),
        (
            "https://example.com/p?z=1&utm_medium=x&a=2&fbclid=f&gclid=g&mc_cid=c&mc_eid=e&m=3",
            "https://example.com/p?z=1&a=2&m=3",
        ),
        ("https://example.com/p?UTM_Campaign=x", "https://example.com/p"),
        ("https://example.com/a/./b/../c/", "https://example.com/a/c/"),
        ("https://example.com/a/b/..", "https://example.com/a/"),
        ("https://example.com/../../a", "https://example.com/a"),
        ("https://bücher.example/straße", "https://xn--bcher-kva.example/stra%C3%9Fe"),
        ("https://example.com./a", "https://example.com/a"),
        ("https://example.com/a%20b", "https://example.com/a%20b"),
        ("  https://example.com/#only-fragment  ", "https://example.com/"),
        ("https://[2001:DB8::1]:443/x", "https://[2001:db8::1]/x"),
    ],
)
def test_normalise_url(url, expected):
    assert normalise_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "mailto:editor@example.com",
        "javascript:alert(1)",
        "ftp://example.com/file",
        "/relative/path",
        "#fragment",
        "example.com/no-scheme",
        "https://",
        "https:///path-only",
        "https://example.com:99999/",
        "https://exa mple.com/",
        "https://a..b/",
    ],
)
def test_normalise_url_rejects_non_http_and_hostless_urls(url):
    with pytest.raises(ValueError):  # noqa: PT011 - each kind of URL has its own message
        normalise_url(url)


def test_a_save_normalises_a_link_it_checked_once():
    """Checking a link (rules.citable_url_problem) and extracting its citation both
    normalise its URL: within one save (remembering), the second time is free."""
    url = f"https://Example.org/{uuid.uuid4()}?utm_source=x"
    with remembering():
        first = calls_made(normalise_url, url)
        again = calls_made(normalise_url, url)
        with pytest.raises(ValueError, match="not an http"):
            normalise_url("ftp://example.org/")
    assert again < 10 < first


@pytest.mark.parametrize(
    ("text", "figures"),
    [
        ("2.5 times faster than regular Opus 4.6", ["2.5 times faster"]),
        ("output is 2.5× as quick", ["2.5×"]),
        ("a 2.5x speed-up", ["2.5x speed-up"]),
        ("more than 1,000 tokens per second on Cerebras", ["1,000 tokens per second"]),
        ("up 40% on last year", ["40%"]),
        ("40 percent of users", ["40 percent"]),
        ("raised $3 billion in 2026", ["$3 billion"]),
        ("a 3.5-fold improvement", ["3.5-fold improvement"]),
        ("threefold, or three times faster", ["threefold", "three times faster"]),
        ("twice as fast as before", ["twice as fast"]),
        ("a 128k context and 70B parameters", ["128k", "70B parameters"]),
        ("latency of 200ms or 1.5 seconds", ["200ms", "1.5 seconds"]),
        ("costs €5 million, or $20 per month", ["€5 million", "$20 per month"]),
        ("scores 30–40% higher", ["30–40% higher"]),
        ("2048 tokens per second", ["2048 tokens per second"]),
    ],
)
def test_find_figures(text, figures):
    assert find_figures(text) == figures


@pytest.mark.parametrize(
    "text",
    [
        "Its February 2026 announcement",
        "In 2026 users switched",
        "Claude Opus 4.6 Fast Mode",
        "GPT-5.3-Codex-Spark on Cerebras",
        "Kimi K3.1 Pro and Claude 3 Opus",
        "Qwen3-235B was released",
        "a 5x5 grid",
        "twice the attention",
        "",
    ],
)
def test_years_and_version_numbers_are_not_figures(text):
    assert find_figures(text) == []


@pytest.mark.parametrize(
    ("claim", "attributed"),
    [
        ("Anthropic says that this mode generates output 2.5 times faster.", ["Anthropic"]),
        ("According to OpenAI, Spark exceeds 1,000 tokens per second.", ["OpenAI"]),
        ("OpenAI reported more than 1,000 tokens per second.", ["OpenAI"]),
        ("OpenAI's announcement says the model is a research preview.", ["OpenAI"]),
        ("OpenAI’s own benchmarks show a gain.", ["OpenAI"]),
        ("anthropic has also said so, as reported by OPENAI.", ["OpenAI", "Anthropic"]),
        ("Google DeepMind says it is faster.", ["Google DeepMind"]),
        ("AT&T announced a deal.", ["AT&T"]),
        ("Berman compares Anthropic and OpenAI models.", []),
        ("OpenAI has also released Spark, which it says is fast.", []),
        ("NotOpenAI says so, and Anthropics say otherwise.", []),
    ],
)
def test_attributed_organisation_names(claim, attributed):
    names = ["OpenAI", "Anthropic", "Google DeepMind", "AT&T", ""]
    assert attributed_organisation_names(claim, names) == attributed


@pytest.mark.parametrize(
    ("url", "matches"),
    [
        ("https://anthropic.com/news", True),
        ("https://www.anthropic.com/research/x", True),
        ("https://docs.Anthropic.COM./x", True),
        ("https://anthropic.com.evil.io/", False),
        ("https://notanthropic.com/", False),
        ("https://anthropic.com@evil.io/", False),
        ("https://evil.io/?next=https://anthropic.com", False),
        ("mailto:press@anthropic.com", False),
        ("/relative/anthropic.com", False),
        ("not a url", False),
    ],
)
def test_host_matches_domains(url, matches):
    assert host_matches_domains(url, ["claude.ai", "Anthropic.com", ""]) is matches


def test_host_matches_internationalised_domains():
    assert host_matches_domains("https://www.xn--bcher-kva.example/", ["bücher.example"])
    assert not host_matches_domains("https://example.com/", [])
