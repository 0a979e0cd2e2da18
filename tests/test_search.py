import datetime
import random

import pytest
from django.contrib.postgres.search import SearchQuery
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone

from summaries.editing import derived
from summaries.models import Summary
from summaries.reader import search, search_suggest
from summaries.reader.marks import START, STOP, excerpt, highlight, marked_html
from summaries.reader.search import (
    MAX_QUERY_CHARS,
    SEARCH_CONFIG,
    StoredSearchVector,
    clean_query,
    search_summaries,
)

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    ChapterFactory,
    KeyPointFactory,
    PersonFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
)

pytestmark = pytest.mark.django_db

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL full-text search only"
)


def indexed(summary):
    """The summary's search text, as the admin's save fills it."""
    return derived.update_search_document(summary=summary)


def found(query, **kwargs):
    return list(search_summaries(query, **kwargs))


def test_finds_by_title():
    summary = indexed(SummaryFactory(live=True, video__title="Inference chips compared"))
    indexed(SummaryFactory(live=True))

    assert found("inference chips") == [summary]


def test_finds_by_thirty_second_text():
    summary = indexed(SummaryFactory(live=True, tldr="Distillation makes small models useful."))

    assert found("distillation") == [summary]


def test_finds_by_takeaway_text():
    summary = SummaryFactory(live=True)
    TakeawayFactory(summary=summary, text="Quantisation halves **memory** use.")
    indexed(summary)

    assert found("quantisation memory") == [summary]


def test_finds_by_chapter_text():
    summary = SummaryFactory(live=True)
    ChapterFactory(summary=summary, body="The [tokenizer](https://example.com/t) is slow.")
    indexed(summary)

    assert found("tokenizer slow") == [summary]


def test_every_word_must_match():
    indexed(SummaryFactory(live=True, tldr="Distillation makes small models useful."))

    assert found("distillation zeppelin") == []


def test_never_finds_drafts_in_review_or_scheduled_summaries():
    tomorrow = timezone.now() + datetime.timedelta(days=1)
    for kwargs in (
        {},
        {"status": Summary.Status.IN_REVIEW},
        {"status": Summary.Status.PUBLISHED, "publish_at": tomorrow},
    ):
        indexed(SummaryFactory(tldr="Secret roadmap for robotics.", **kwargs))

    assert found("roadmap") == []
    assert len(found("roadmap", now=tomorrow + datetime.timedelta(seconds=1))) == 1


def test_newest_first_among_equal_matches():
    old = indexed(
        SummaryFactory(
            live=True,
            tldr="Robotics news.",
            publish_at=timezone.now() - datetime.timedelta(days=2),
        )
    )
    new = indexed(SummaryFactory(live=True, tldr="Robotics news."))

    assert found("robotics") == [new, old]


@on_postgresql
def test_title_match_ranks_above_body_only_match():
    title = indexed(
        SummaryFactory(
            live=True,
            video__title="Robotics in factories",
            publish_at=timezone.now() - datetime.timedelta(days=2),
        )
    )
    body = indexed(SummaryFactory(live=True, tldr="A short aside on robotics."))

    assert found("robotics") == [title, body]


@on_postgresql
def test_matching_can_use_the_gin_index():
    indexed(SummaryFactory(live=True, tldr="Robotics news."))
    matches = Summary.objects.alias(document=StoredSearchVector()).filter(
        document=SearchQuery("robotics", config=SEARCH_CONFIG, search_type="websearch")
    )
    with connection.cursor() as cursor:
        # Tiny tables are cheaper to scan; forbid that to see whether the index applies.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")

    plan = matches.explain()

    assert "Bitmap Index Scan on summary_search_vector_gin" in plan, plan


HOSTILE = [
    "",
    "   \t\n ",
    "x" * 10_000,
    "robotics " * 2_000,
    "'",
    '"',
    '"unclosed phrase',
    "\\",
    "\\\\'",
    "%",
    "_",
    "%_%",
    "'; DROP TABLE summaries_summary; --",
    "1' OR '1'='1",
    "robotics & | ! : * ( ) < >",
    "!!robotics",
    "robotics:*",
    "(robotics",
    "<->",
    "a <-> b",
    "-",
    "or",
    "the and of",
    "\x00",
    "robo\x00tics",
    "🤖 robotics 🦾",
    "日本語",
    "-" * 33,
    "-" * 40 + "robotics",
    "robotics " + "-" * 40 + "factories",
    "robotics(" + "-" * 40,
    "-!" * 40 + "robotics",
    "- " * 8 + "robotics",
    "-(-)-<-|-&" * 10 + "robotics",
    '-"' * 100,
    '"-' * 100 + "robotics",
    '""robotics"""',
    "!@#$%^&*()_+=[]{};:',./<>?`~",
    "\x00" * 100,
    "-" * 10_240,
    "robotics " + '-"' * 5_000,
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_harmless(query):
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    result = found(query)

    assert isinstance(result, list)
    assert all(summary.is_live() for summary in result)


@pytest.mark.parametrize("query", HOSTILE)
def test_search_page_answers_hostile_queries(client, query):
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    response = client.get(reverse("summaries:search"), {"q": query})

    assert response.status_code == 200


def test_long_queries_are_cut_and_nul_bytes_removed():
    assert len(clean_query("w" * 1_000)) == MAX_QUERY_CHARS
    assert clean_query("one two three four five six seven eight nine ten").split()[-1] == "eight"
    assert clean_query("  robo\x00tics \n ") == "robo tics"
    assert search_summaries("  ").count() == 0


# Hyphens (negation), alone or after a character web-search syntax skips, and what ends a
# run of them: spaces, quotes, punctuation, words.
QUERY_PIECES = [
    *("-", "-", "-" * 8, "-" * 8),
    *("-!", "-(", "-)", "-<", "-|", "-&"),
    *(" ", '"', ":", "'", "\\", "or", "robotics"),
]


def random_queries(count: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(rng.choice(QUERY_PIECES) for _ in range(rng.randint(1, 120))) for _ in range(count)
    ]


@on_postgresql
def test_no_mix_of_operators_and_words_makes_postgresql_fail():
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    for query in random_queries(400):
        with transaction.atomic():
            assert isinstance(found(query), list), query


@on_postgresql
def test_a_run_of_hyphens_before_a_word_excludes_it_like_one_hyphen():
    indexed(SummaryFactory(live=True, tldr="Robotics news."))
    other = indexed(SummaryFactory(live=True, tldr="Gardening news."))

    assert found("news ---robotics") == found("news -robotics") == [other]
    assert found("news -!- -(-robotics") == [other]


def test_results_can_be_counted_for_pagination():
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    assert search_summaries("robotics").count() == 1


@on_postgresql
def test_only_the_newest_matches_are_ranked(monkeypatch):
    monkeypatch.setattr(search, "MAX_RANKED", 2)
    hour = datetime.timedelta(hours=1)
    oldest = indexed(
        SummaryFactory(live=True, video__title="Robotics", publish_at=timezone.now() - 3 * hour)
    )
    newer = [
        indexed(
            SummaryFactory(
                live=True, tldr="Aside on robotics.", publish_at=timezone.now() - n * hour
            )
        )
        for n in (2, 1)
    ]

    assert found("robotics") == newer[::-1]
    assert oldest not in found("robotics")


def test_results_take_one_query(django_assert_num_queries):
    for n in range(5):
        indexed(SummaryFactory(live=True, tldr=f"Robotics news number {n}."))

    with django_assert_num_queries(1):
        results = found("robotics")

    assert len(results) == 5


def test_views_can_add_related_objects_to_the_results(django_assert_num_queries):
    indexed(SummaryFactory(live=True, tldr="Robotics news."))

    with django_assert_num_queries(1):
        (result,) = search_summaries("robotics").select_related("video", "video__channel")
        assert result.video.channel.name


# --- The search page: snippets, filters, pagination, "did you mean" -------------------------


def page(client, status=200, **params):
    response = client.get(reverse("summaries:search"), params)
    assert response.status_code == status, response.content.decode()[:3000]
    return response


def titles(response) -> list[str]:
    return [result.video["title"] for result in response.context["results"]]


def snippet_of(response, title: str) -> str:
    (result,) = [r for r in response.context["results"] if r.video["title"] == title]
    return str(result.snippet)


def live(title="A video", tldr="What the video says, in thirty seconds.", **kwargs):
    return indexed(SummaryFactory(live=True, tldr=tldr, video__title=title, **kwargs))


def test_snippet_marks_the_matched_words_of_the_thirty_second_text(client):
    live("Small models", tldr="Distillation makes small models useful on phones.")

    response = page(client, q="distillation")

    assert "<mark>Distillation</mark> makes small models useful" in snippet_of(
        response, "Small models"
    )


def test_snippet_comes_from_the_chapter_where_the_words_matched(client):
    summary = SummaryFactory(live=True, video__title="Tokens", tldr="About text input.")
    ChapterFactory(summary=summary, body="Today the **tokenizer** is slow on long inputs.")
    indexed(summary)

    snippet = snippet_of(page(client, q="tokenizer"), "Tokens")

    assert "<mark>tokenizer</mark> is slow" in snippet
    assert "About text input" not in snippet


def test_snippet_comes_from_the_key_point_where_the_words_matched(client):
    summary = SummaryFactory(live=True, video__title="Chips", tldr="About hardware.")
    KeyPointFactory(summary=summary, title="Memory", body="Bandwidth limits decoding speed.")
    indexed(summary)

    snippet = snippet_of(page(client, q="bandwidth"), "Chips")

    assert "<mark>Bandwidth</mark> limits decoding" in snippet


def test_snippet_prefers_the_thirty_second_text_when_both_match(client):
    summary = SummaryFactory(live=True, video__title="Agents", tldr="Agents need fast models.")
    ChapterFactory(summary=summary, body="Later, agents come back in a long aside.")
    indexed(summary)

    snippet = snippet_of(page(client, q="agents"), "Agents")

    assert snippet.startswith("<mark>Agents</mark> need fast models")


def test_snippets_and_titles_are_escaped_and_only_marks_are_added(client):
    hostile = f'<script>alert(1)</script> <b>robotics</b> {START}x{STOP} & "quotes" {STOP}'
    live(f"<img src=x onerror=alert(1)> robotics {START}", tldr=hostile)

    response = page(client, q="robotics")
    html = response.content.decode()
    (result,) = response.context["results"]

    assert "<script>alert" not in html and "<img src=x" not in html and "<b>" not in html
    # PostgreSQL's parser may leave tag-like words out of a snippet; whatever is shown is
    # escaped.
    assert "&amp; &quot;quotes" in str(result.snippet)
    assert "&lt;img src=x onerror=alert(1)&gt; robotics" in html
    snippet = str(result.snippet)
    assert START not in snippet and STOP not in snippet
    assert snippet.replace("<mark>", "").replace("</mark>", "").count("<") == 0
    assert snippet.count("<mark>") == snippet.count("</mark>") >= 1


def test_marked_html_escapes_and_turns_only_paired_markers_into_marks():
    text = f"a < b {START}word{STOP} {START}unclosed {STOP}{STOP} & {START}"

    assert marked_html(text) == "a &lt; b <mark>word</mark> <mark>unclosed </mark> &amp; "


def test_fallback_highlight_marks_every_word_in_any_case_and_escapes():
    assert highlight("Robots <b> robot ROBOT", ["robot"]) == (
        "<mark>Robot</mark>s &lt;b&gt; <mark>robot</mark> <mark>ROBOT</mark>"
    )
    assert highlight("a%b_c", ["%", "_"]) == "a<mark>%</mark>b<mark>_</mark>c"
    assert highlight("<i>", []) == "&lt;i&gt;"


def test_fallback_excerpt_starts_a_little_before_the_first_match():
    text = " ".join(f"w{n}" for n in range(200)) + " needle " + "tail " * 100

    snippet = excerpt(text, ["needle"])

    assert snippet.startswith("… ") and snippet.endswith(" …")
    assert "<mark>needle</mark>" in snippet
    assert len(snippet) < 320
    assert excerpt("Short text.", ["absent"]) == "Short text."


def test_drafts_never_appear_in_results_snippets_choices_or_suggestions(client):
    tomorrow = timezone.now() + datetime.timedelta(days=1)
    channel = ChannelFactory(name="Secret channel")
    person = PersonFactory(name="Hidden Person")
    for kwargs in ({}, {"status": Summary.Status.PUBLISHED, "publish_at": tomorrow}):
        draft = indexed(
            SummaryFactory(
                video__title="Zeppelin roadmap",
                video__channel=channel,
                tldr="Zeppelin roadmap.",
                **kwargs,
            )
        )
        AppearanceFactory(video=draft.video, person=person)
    live("Public news")

    response = page(client, q="zeppelin")
    assert response.context["results"] == []
    assert "Zeppelin" not in response.content.decode().replace("zeppelin", "")
    choices = response.context["choices"]
    assert "Secret channel" not in {name for _, name in choices["channel"]}
    assert "Hidden Person" not in {name for _, name in choices["person"]}
    assert page(client, q="zepelin").context["suggestion"] is None
    assert page(client, q="hiden person").context["suggestion"] is None


@pytest.fixture
def catalogue():
    """Four live summaries about robots across two channels, people, topics and languages."""
    berman, other = ChannelFactory(name="Matthew Berman"), ChannelFactory(name="Other")
    altman, amodei = PersonFactory(name="Sam Altman"), PersonFactory(name="Dario Amodei")
    agents, chips = TopicFactory(name="Agents"), TopicFactory(name="Chips")
    rows = [
        ("Robots one", berman, altman, agents, "en", datetime.date(2026, 1, 10)),
        ("Robots two", berman, amodei, chips, "en", datetime.date(2026, 3, 10)),
        ("Robots three", other, altman, chips, "de", datetime.date(2026, 5, 10)),
        ("Robots four", other, amodei, agents, "fr", datetime.date(2026, 7, 10)),
    ]
    made = {}
    for n, (title, channel, person, topic, language, day) in enumerate(rows):
        summary = live(
            title,
            tldr=f"Robots and more robots, part {n}.",
            video__channel=channel,
            video__language=language,
            video__published_on=day,
            publish_at=timezone.now() - datetime.timedelta(hours=10 - n),
        )
        AppearanceFactory(video=summary.video, person=person)
        summary.video.topics.add(topic)
        made[title] = summary
    return {
        "channel": berman.slug,
        "person": altman.slug,
        "topic": chips.slug,
        "summaries": made,
    }


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, ["Robots four", "Robots three", "Robots two", "Robots one"]),
        ({"channel": "channel"}, ["Robots two", "Robots one"]),
        ({"person": "person"}, ["Robots three", "Robots one"]),
        ({"topic": "topic"}, ["Robots three", "Robots two"]),
        ({"language": "de"}, ["Robots three"]),
        ({"published_after": "2026-03-10"}, ["Robots four", "Robots three", "Robots two"]),
        ({"published_before": "2026-03-10"}, ["Robots two", "Robots one"]),
        (
            {"published_after": "2026-02-01", "published_before": "2026-06-01"},
            ["Robots three", "Robots two"],
        ),
        ({"channel": "channel", "person": "person"}, ["Robots one"]),
        ({"channel": "channel", "language": "fr"}, []),
    ],
)
def test_filters_narrow_the_results(client, catalogue, params, expected):
    params = {name: catalogue.get(value, value) for name, value in params.items()}

    response = page(client, q="robots", **params)

    assert titles(response) == expected
    assert response.context["paginator"].count == len(expected)


def test_filters_alone_list_the_matching_summaries_newest_first(client, catalogue):
    response = page(client, channel=catalogue["channel"])

    assert titles(response) == ["Robots two", "Robots one"]
    assert "2 results with these filters" in response.content.decode()
    assert page(client).context["results"] == []


def test_the_form_offers_the_live_choices_and_keeps_the_query_and_filters(client, catalogue):
    response = page(client, q="robots", channel=catalogue["channel"], published_after="2026-02-01")
    html = response.content.decode()

    assert 'name="q" value="robots"' in html
    assert f'<option selected value="{catalogue["channel"]}">Matthew Berman</option>' in html
    assert '<option value="de">German</option>' in html
    assert 'type="date" name="published_after" value="2026-02-01"' in html
    assert "1 result for “robots” with these filters" in html
    choices = response.context["choices"]
    assert [name for _, name in choices["channel"]] == ["Matthew Berman", "Other"]
    assert [name for _, name in choices["topic"]] == ["Agents", "Chips"]
    assert [code for code, _ in choices["language"]] == ["de", "en", "fr"]


@on_postgresql
def test_filters_apply_before_the_ranking_cap(client, catalogue, monkeypatch):
    monkeypatch.setattr(search, "MAX_RANKED", 1)

    response = page(client, q="robots", channel=catalogue["channel"])

    assert titles(response) == ["Robots two"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"channel": "no-such-channel"}, "channel"),
        ({"person": "x" * 10_000}, "person"),
        ({"topic": "'; DROP TABLE summaries_topic; --"}, "topic"),
        ({"language": "xx"}, "language"),
        ({"published_after": "yesterday"}, "published_after"),
        ({"published_before": "2026-02-30"}, "published_before"),
        ({"published_after": "10000-01-01"}, "published_after"),
        ({"published_after": "2026-12-03\x00"}, "published_after"),
        ({"published_after": "2026-05-01", "published_before": "2026-04-01"}, "published_before"),
    ],
)
def test_invalid_filters_answer_400_saying_which_field(client, catalogue, params, field):
    response = page(client, status=400, q="robots", **params)
    html = response.content.decode()

    assert response.context["results"] == []
    assert field in response.context["errors"]
    assert "correct them and search again" in html
    assert 'aria-invalid="true"' in html
    assert "DROP TABLE" not in html and "x" * 300 not in html


def test_the_date_error_explains_the_format(client, catalogue):
    response = page(client, status=400, published_after="03/12/2026")

    assert response.context["errors"]["published_after"] == "Enter a date such as 2026-12-03."


@pytest.fixture
def many():
    """25 live summaries about robots, the newest first by publish time."""
    now = timezone.now()
    return [
        live(
            f"Robots {n:02d}",
            tldr="Robots again.",
            publish_at=now - datetime.timedelta(minutes=n + 1),
        )
        for n in range(25)
    ]


def test_results_are_paginated_with_links_that_keep_the_query_and_filters(client, many):
    first = page(client, q="robots", language="en")
    second = page(client, q="robots", language="en", page="2")

    assert len(first.context["results"]) == 20
    assert len(second.context["results"]) == 5
    html = first.content.decode()
    assert '<nav class="pagination" aria-label="Pages">' in html
    assert '<a rel="next" href="?language=en&amp;page=2&amp;q=robots">Next</a>' in html
    assert "Page 1 of 2" in html
    assert '<a rel="prev" href="?language=en&amp;q=robots">Previous</a>' in second.content.decode()
    assert "25 results for “robots”" in html
    assert set(titles(first)).isdisjoint(titles(second))


@pytest.mark.parametrize(
    ("number", "shown"),
    # Paginator.get_page: not a number is the first page, out of range the last.
    [("abc", 1), ("1.5", 1), ("", 1), ("99999", 2), ("0", 2), ("-1", 2)],
)
def test_a_page_number_that_is_not_one_or_past_the_end_still_answers(client, many, number, shown):
    response = page(client, q="robots", page=number)

    assert response.context["page_obj"].number == shown


def test_page_query_count_is_fixed_whatever_the_number_of_results(
    client, django_assert_num_queries
):
    def results_page(count: int):
        for n in range(count):
            summary = live(f"Robots {count}-{n}", tldr="Robots again.")
            AppearanceFactory(video=summary.video)
            AppearanceFactory(video=summary.video, organisation=None)
            summary.video.topics.add(TopicFactory())
        page(client, q="robots")  # the filter choices are now in the fragment cache
        # the content generation (which the cached filter choices are checked against),
        # the ids, the page's card rows with their snippets, the people of the cards
        with django_assert_num_queries(4):
            response = page(client, q="robots")
        return response

    assert len(results_page(2).context["results"]) == 2
    assert len(results_page(19).context["results"]) == 20


def test_page_query_count_with_a_cold_cache(client, django_assert_num_queries):
    live("Robots", tldr="Robots again.")

    # The content generation, the four filter choice lists and the next scheduled
    # publication (how long they may be kept), then the page's three queries.
    with django_assert_num_queries(9):
        page(client, q="robots", channel="")


def test_no_results_page_query_count(client, django_assert_num_queries):
    live("Robots in factories", tldr="Robots again.")
    page(client, q="x")  # choices and the vocabulary cached

    # the content generation, the count, then the corrected query's one search.
    with django_assert_num_queries(3):
        response = page(client, q="robts")

    assert response.context["suggestion"].label == "robots"


def test_did_you_mean_a_title_word_links_to_the_corrected_search(client):
    live("Quantisation explained", tldr="Smaller numbers, same answers.")
    live("Other news")

    response = page(client, q="quantizaton explained")
    suggestion = response.context["suggestion"]
    html = response.content.decode()

    assert titles(response) == []
    assert "No results for “quantizaton explained”" in html
    assert suggestion.kind == "words"
    assert suggestion.label == "quantisation explained"
    assert f'Did you mean <a href="{suggestion.url.replace("&", "&amp;")}">' in html
    corrected = client.get(suggestion.url)
    assert titles(corrected) == ["Quantisation explained"]


def test_did_you_mean_keeps_the_filters(client, catalogue):
    response = page(client, q="robts", channel=catalogue["channel"])
    suggestion = response.context["suggestion"]

    corrected = client.get(suggestion.url)

    assert f"channel={catalogue['channel']}" in suggestion.url
    assert titles(corrected) == ["Robots two", "Robots one"]


def test_did_you_mean_a_person_links_to_their_videos(client, catalogue):
    response = page(client, q="sam altmann")
    suggestion = response.context["suggestion"]

    assert (suggestion.kind, suggestion.label) == ("person", "Sam Altman")
    assert "the videos with <a href=" in response.content.decode()
    assert titles(client.get(suggestion.url)) == ["Robots three", "Robots one"]


def test_did_you_mean_a_channel_or_topic(client, catalogue):
    assert page(client, q="mathew berman").context["suggestion"].kind == "channel"
    assert page(client, q="chipz").context["suggestion"].label == "Chips"


def test_no_suggestion_when_nothing_is_close_or_the_correction_finds_nothing(client):
    live("Robots in factories")

    assert page(client, q="zzzzqqq").context["suggestion"] is None
    # Both words are title words, but no title has both: no suggestion that finds nothing.
    live("Zebras at home")
    assert page(client, q="robots zebrs").context["suggestion"] is None
    assert "Did you mean" not in page(client, q="zzzzqqq").content.decode()


def test_suggestions_compare_only_words_of_a_similar_length():
    vocabulary = {5: ["robot"], 6: ["robots"], 12: ["quantisation"]}

    assert search_suggest.corrected_words(["robts"], vocabulary) == ["robots"]
    assert search_suggest.corrected_words(["robots"], vocabulary) is None
    assert search_suggest.corrected_words(["quantizaton"], vocabulary) == ["quantisation"]
    assert search_suggest.corrected_words(["x" * 200, "qqq"], vocabulary) is None


@pytest.mark.parametrize("query", HOSTILE)
def test_no_results_page_answers_hostile_queries(client, query):
    live("Robots in factories")

    response = page(client, q=query, channel="", published_after="")

    assert query.strip("\x00 \t\n") == "" or response.context["searched"]


def test_filters_only_page_query_count(client, catalogue, django_assert_num_queries):
    page(client, channel=catalogue["channel"])

    # the content generation, the count, the page's ids, their card rows, the people of
    # the cards
    with django_assert_num_queries(5):
        response = page(client, channel=catalogue["channel"])

    assert len(response.context["results"]) == 2


def test_choice_names_are_escaped_in_the_form(client):
    live("Robots", video__channel=ChannelFactory(name='<script>alert("x")</script>'))

    html = page(client, q="robots").content.decode()

    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</option>" in html


def test_a_title_only_match_shows_the_start_of_the_thirty_second_text(client):
    summary = SummaryFactory(live=True, video__title="Zeppelins", tldr="Airships return.")
    ChapterFactory(summary=summary, body="Hydrogen is no longer used.")
    indexed(summary)

    assert snippet_of(page(client, q="zeppelins"), "Zeppelins") == "Airships return."


def test_snippets_keep_text_that_looks_like_markup(client):
    live("Markup", tldr="Wrap the reasoning in <think> tags & close them with </think>.")

    snippet = snippet_of(page(client, q="reasoning"), "Markup")

    assert "&lt;think&gt; tags &amp; close them with &lt;/think&gt;" in snippet


def test_marked_html_shows_the_hidden_characters_again():
    text = f"a \ue002b\ue003 \ue004 {START}c{STOP}"

    assert marked_html(text) == "a &lt;b&gt; &amp; <mark>c</mark>"
