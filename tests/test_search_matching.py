"""Search finds what readers type on every database: a straight apostrophe finds text
written with a typographic one and the reverse, "did you mean" corrects from titles and
30-second texts and never proposes a possessive, and no input gives a server error.

Runs on SQLite (the fallback search) and on PostgreSQL (full-text search) alike."""

import importlib

import pytest
from django.apps import apps as django_apps
from django.urls import reverse

from summaries.editing import derived
from summaries.models import Summary, Transcript
from summaries.reader import search_suggest
from summaries.reader.search import fallback_words, fold_apostrophes, search_summaries

from .factories import SummaryFactory
from .test_search import live
from .test_search_transcripts import add_transcript

pytestmark = pytest.mark.django_db

# How readers and editors write an apostrophe: straight, typographic (right and left single
# quotation marks), the modifier letter, the full-width one, a backtick.
APOSTROPHES = ["'", "’", "‘", "ʼ", "＇", "`"]


def page(client, **params):
    response = client.get(reverse("summaries:search"), params)
    assert response.status_code == 200, response.content.decode()[:3000]
    return response


def titles(response) -> list[str]:
    return [result.video["title"] for result in response.context["results"]]


def found_titles(query: str) -> list[str]:
    return [summary.summarised_video.title for summary in search_summaries(query)]


def suggested(client, query: str) -> str | None:
    suggestion = page(client, q=query).context.get("suggestion")
    return suggestion.label if suggestion else None


# --- Apostrophes ----------------------------------------------------------------------------


def test_every_apostrophe_reads_as_a_straight_one():
    assert fold_apostrophes("Anthropic’s ‘IPO’ donʼt Rubik＇s it`s") == (
        "Anthropic's 'IPO' don't Rubik's it's"
    )


@pytest.mark.parametrize("written", APOSTROPHES)
@pytest.mark.parametrize("typed", APOSTROPHES)
def test_a_title_with_any_apostrophe_is_found_by_any_other(typed, written):
    live(f"Matthew Berman Examines Anthropic{written}s IPO Filing")
    live("Other news")

    assert found_titles(f"Anthropic{typed}s IPO") == [
        f"Matthew Berman Examines Anthropic{written}s IPO Filing"
    ]


@pytest.mark.parametrize("typed", APOSTROPHES)
def test_the_thirty_second_text_is_found_whatever_apostrophe_was_typed(client, typed):
    live("Kimi K3.1 demo", tldr="It solves a Rubik’s Cube, and you don’t need to help.")
    live("Other news", tldr="Nothing about cubes.")

    assert titles(page(client, q=f"Rubik{typed}s")) == ["Kimi K3.1 demo"]
    assert titles(page(client, q=f"don{typed}t need")) == ["Kimi K3.1 demo"]


@pytest.mark.parametrize("typed", APOSTROPHES)
def test_text_written_with_the_modifier_letter_is_found(client, typed):
    # PostgreSQL's parser reads ʼ as a letter: "Donʼt" would be one word there.
    summary = live("Kimi K3.1 demo", tldr="Donʼt miss the Rubikʼs Cube.")
    add_transcript(summary.video, speech=[(0, 4, "Hello."), (65, 70, "Itʼs Anthropicʼs chart.")])
    live("Other news", tldr="Nothing about cubes.")

    assert titles(page(client, q=f"Rubik{typed}s cube")) == ["Kimi K3.1 demo"]
    assert titles(page(client, q=f"anthropic{typed}s chart")) == ["Kimi K3.1 demo"]


def test_stored_search_text_of_earlier_versions_gets_typographic_apostrophes():
    summary = live("A talk", tldr="A talk.")
    transcript = add_transcript(summary.video, speech=[(0, 4, "Anthropicʼs chart.")])
    # As an earlier version stored them: the modifier letter kept.
    Summary.objects.filter(pk=summary.pk).update(search_document="Anthropicʼs IPO")
    Transcript.objects.filter(pk=transcript.pk).update(search_text="Donʼt panic.")

    migration = importlib.import_module("summaries.migrations.0031_search")
    migration.modifier_letters_as_typographic(django_apps, None)

    summary.refresh_from_db()
    transcript.refresh_from_db()
    assert summary.search_document == "Anthropic’s IPO"
    assert transcript.search_text == "Don’t panic."
    assert found_titles("anthropic's ipo") == found_titles("don't panic") == ["A talk"]


def test_a_typographic_apostrophe_finds_a_straight_one(client):
    live("Rubik's Cube solved", tldr="The robot didn't drop it.")

    assert titles(page(client, q="Rubik’s cube")) == ["Rubik's Cube solved"]
    assert titles(page(client, q="didn’t drop")) == ["Rubik's Cube solved"]


@pytest.mark.parametrize("typed", ["'", "ʼ"])
def test_words_said_are_found_whatever_apostrophe_was_typed(client, typed):
    summary = live("A talk", tldr="A talk about models.")
    add_transcript(
        summary.video, speech=[(0, 4, "Hello."), (65, 70, "Don’t trust Anthropic’s chart.")]
    )

    response = page(client, q=f"anthropic{typed}s chart")

    assert titles(response) == ["A talk"]
    snippet = str(response.context["results"][0].snippet)
    assert "Said in the video" in snippet
    assert "1:05" in snippet


def test_the_api_search_reads_apostrophes_alike(client):
    found = live("Matthew Berman Examines Anthropic’s IPO Filing")
    live("Other news")

    for query in ("Anthropic's IPO", "Anthropicʼs IPO"):
        response = client.get("/api/v1/summaries/", {"search": query})
        assert [item["slug"] for item in response.json()["results"]] == [found.video.slug]


def test_quotes_around_a_word_do_not_stop_it_matching():
    live("Robots in factories")

    assert found_titles("'robots'") == found_titles("‘robots’") == ["Robots in factories"]


def test_the_fallback_matches_words_without_the_quotes_around_them():
    assert fallback_words("‘Robots’ don’t 'Rubik’s' ’ '' \"agents\"") == [
        "robots",
        "don't",
        "rubik's",
        "agents",
    ]


# --- "Did you mean" -------------------------------------------------------------------------


def test_did_you_mean_corrects_words_of_titles(client):
    live("An AI-Generated Kimi Benchmark Chart Used Invented Scores")

    assert suggested(client, "benchmrk") == "benchmark"
    assert suggested(client, "kimmi") == "kimi"
    assert titles(client.get(page(client, q="benchmrk").context["suggestion"].url)) == [
        "An AI-Generated Kimi Benchmark Chart Used Invented Scores"
    ]


def test_did_you_mean_corrects_words_of_the_thirty_second_texts(client):
    live("A chart", tldr="The benchmark scores were invented.")

    assert suggested(client, "benchmrk scores") == "benchmark scores"


@pytest.mark.parametrize("written", ["’", "'"])
def test_did_you_mean_never_proposes_a_possessive(client, written):
    live(f"Matthew Berman Examines Anthropic{written}s IPO Filing")

    assert suggested(client, "antropic") == "anthropic"
    assert suggested(client, "antropic’s ipo") == "anthropic ipo"
    assert suggested(client, "Anthropic's IPO") is None  # found: nothing to correct


def test_the_vocabulary_keeps_contractions_but_not_possessives():
    words = search_suggest.words_of("Anthropic’s IPO: don’t panic, it's Rubikʼs `Cube`")

    assert words == ["anthropic", "ipo", "don't", "panic", "it", "rubik", "cube"]


def test_the_vocabulary_leaves_out_drafts(client):
    derived.update_search_document(
        summary=SummaryFactory(tldr="Zeppelin benchmarks.", video__title="Secret")
    )
    live("Public news")

    assert suggested(client, "zepelin") is None


# --- Hostile input --------------------------------------------------------------------------

HOSTILE = [
    "'",
    "''''''''",
    "’’’",
    "ʼ ‘ ＇ `",
    "'s",
    "’s’s’s",
    "!@#$%^&*()_+=[]{};:',./<>?`~’‘ʼ＇",
    "-'-'-'-" * 20,
    "'-" * 100 + "robots",
    "Ünïcödé’s ｆｕｌｌｗｉｄｔｈ",
    "🤖’s robots",
    "日本語の’テスト’",
    "robots" + "’" * 10_000,
    "a'b'c'd'e'f'g'h'i'j'k",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_answer_on_the_page_and_the_api(client, query):
    live("Robots in factories", tldr="Robots don’t rest.")

    response = page(client, q=query)
    api = client.get("/api/v1/summaries/", {"search": query})

    assert response.context["searched"]
    assert api.status_code == 200
    assert isinstance(api.json()["results"], list)


def test_only_apostrophes_find_nothing_rather_than_everything(client):
    live("Robots in factories", tldr="Robots don't rest, don’t they?")

    assert found_titles("’’ '") == []
    assert titles(page(client, q="'")) == []


def test_a_said_line_is_shown_for_an_apostrophe_only_in_the_transcript(client):
    summary = live("A talk", tldr="A talk about models.")
    add_transcript(summary.video, speech=[(0, 4, "We can’t stop now.")])
    add_transcript(
        summary.video, speech=[(0, 4, "Not live.")], state=Transcript.State.DRAFT, language="de"
    )

    response = page(client, q="can't stop")

    assert titles(response) == ["A talk"]
    assert "Said in the video" in str(response.context["results"][0].snippet)


@pytest.mark.parametrize("typed", ["anthropic's", "Anthropic’s", "anthropicʼs", "anthropic`s"])
@pytest.mark.parametrize("written", ["Anthropic's", "Anthropic’s", "Anthropicʼs"])
def test_a_word_is_marked_in_snippets_whichever_apostrophe_either_side_has(typed, written):
    from django.utils.html import escape

    from summaries.reader.marks import excerpt, highlight

    marked = f"<mark>{escape(written)}</mark>"
    assert f"{marked} IPO" in highlight(f"{written} IPO filing", [typed])
    assert marked in excerpt(f"The {written} IPO filing", [typed])
