"""Search finds words said in a video's live transcript: after matches of the summaries'
own text, with the line said as the snippet and a link that plays the video from it."""

import pytest
from django.db import connection
from django.urls import reverse

from summaries.editing import derived, pinning
from summaries.editing.receipts import publish_transcripts
from summaries.models import Transcript, segments_digest
from summaries.reader.search import search_summaries

from .factories import EditorFactory, SummaryFactory
from .receipts_factories import vtt

pytestmark = pytest.mark.django_db

SPEECH = [
    (0, 4, "Welcome back to the channel."),
    (65, 70, "Today we talk about   sparse\nattention & <kernels>."),
    (130, 136, "The benchmark numbers surprised everyone."),
    (200, 205, "Quantisation halves the memory bill."),
]


def live(title="A video", tldr="What the video says, in thirty seconds."):
    summary = SummaryFactory(live=True, tldr=tldr, video__title=title)
    return derived.update_search_document(summary=summary)


def add_transcript(video, *, state=Transcript.State.LIVE, speech=SPEECH, language=None):
    """A transcript as an import leaves it (the parser is tested elsewhere)."""
    data = [{"start": float(start), "end": float(end), "text": text} for start, end, text in speech]
    return Transcript.objects.create(
        video=video,
        language=language or video.language,
        state=state,
        format="vtt",
        original=b"",
        segments=data,
        word_count=sum(len(s["text"].split()) for s in data),
        ends_at=max(s["end"] for s in data),
        digest=segments_digest(data),
    )


def found(query):
    return list(search_summaries(query))


def page(client, **params):
    response = client.get(reverse("summaries:search"), params)
    assert response.status_code == 200
    return response


def snippet_of(response, title):
    (result,) = [r for r in response.context["results"] if r.video["title"] == title]
    return str(result.snippet)


def test_finds_a_word_said_in_the_live_transcript():
    summary = live("Attention")
    add_transcript(summary.video)
    live("Other")

    assert found("benchmark surprised") == [summary]


def test_words_said_on_different_lines_are_found():
    summary = live("Attention")
    add_transcript(summary.video)

    assert found("welcome memory") == [summary]


def test_a_draft_transcript_is_never_searched():
    summary = live("Attention")
    add_transcript(summary.video, state=Transcript.State.DRAFT)

    assert found("benchmark") == []


def test_a_draft_summary_is_not_found_by_its_transcript():
    summary = SummaryFactory(tldr="Nothing.")
    derived.update_search_document(summary=summary)
    add_transcript(summary.video)

    assert found("benchmark") == []


def test_a_replaced_transcript_is_searched_by_its_new_words_only():
    summary = live("Attention")
    add_transcript(summary.video)
    add_transcript(
        summary.video,
        state=Transcript.State.DRAFT,
        speech=[(0, 5, "Robots fold the laundry now.")],
    )

    publish_transcripts(video=summary.video)

    assert found("benchmark") == []
    assert found("laundry") == [summary]


def test_a_video_said_in_two_languages_is_listed_once(client):
    summary = live("Attention")
    add_transcript(summary.video)
    add_transcript(summary.video, language="fr", speech=[(9, 12, "Le benchmark est clair.")])

    response = page(client, q="benchmark")

    assert found("benchmark") == [summary]
    assert len(response.context["results"]) == 1


def test_an_import_replaced_before_review_is_searched_by_its_last_words_once_published():
    summary = live("Attention")
    editor = EditorFactory()
    first = vtt([(0, 3, "Gradient descent, slowly.")])
    pinning.import_transcript(video=summary.video, data=first, user=editor, filename="a.vtt")
    second = vtt([(0, 3, "Robots fold the laundry.")])
    pinning.import_transcript(video=summary.video, data=second, user=editor, filename="b.vtt")

    assert found("laundry") == []  # waiting for review

    publish_transcripts(video=summary.video)

    assert found("laundry") == [summary]
    assert found("gradient") == []


def test_key_names_of_the_segments_are_not_searched():
    summary = live("Attention")
    add_transcript(summary.video)

    assert found("speaker") == []
    assert found("start") == []


def test_summary_text_matches_come_before_transcript_matches():
    said = live("Said only", tldr="Nothing about it.")
    add_transcript(said.video)
    written = live("Written", tldr="The benchmark numbers, explained.")
    # The transcript match is the newer: it still comes second.
    written.publish_at = said.publish_at.replace(year=said.publish_at.year - 1)
    written.save(update_fields=["publish_at"])

    assert found("benchmark") == [written, said]


def test_a_summary_matching_both_ways_is_listed_once():
    summary = live("Both", tldr="The benchmark numbers, explained.")
    add_transcript(summary.video)

    assert found("benchmark") == [summary]


def test_snippet_is_the_line_said_with_a_link_to_its_moment(client):
    summary = live("Attention")
    add_transcript(summary.video)

    html = snippet_of(page(client, q="benchmark"), "Attention")

    assert "<mark>benchmark</mark> numbers surprised everyone" in html
    assert "▶ 2:10" in html
    assert f"{summary.video.source_url}&amp;t=130" in html or "t=130" in html
    assert "Play from 2:10" in html


def test_snippet_of_a_line_is_escaped(client):
    summary = live("Attention")
    add_transcript(summary.video)

    html = snippet_of(page(client, q="sparse attention"), "Attention")

    assert "&amp; &lt;kernels" in html
    assert "<kernels" not in html
    assert "▶ 1:05" in html


def test_snippet_prefers_a_line_saying_every_word(client):
    summary = live("Attention")
    add_transcript(
        summary.video,
        speech=[(0, 4, "Memory first."), (30, 34, "Then memory and kernels together.")],
    )

    html = snippet_of(page(client, q="memory kernels"), "Attention")

    assert "▶ 0:30" in html


def test_summary_text_match_keeps_its_own_snippet(client):
    summary = live("Both", tldr="The benchmark numbers, explained.")
    add_transcript(summary.video)

    html = snippet_of(page(client, q="benchmark"), "Both")

    assert "▶" not in html
    assert "explained" in html


def test_search_text_follows_the_segments():
    summary = live("Attention")
    transcript = add_transcript(summary.video)

    transcript.segments = [{"start": 1.0, "end": 2.0, "text": "Gradient descent"}]
    transcript.save(update_fields=["segments"])

    transcript.refresh_from_db()
    assert transcript.search_text == "Gradient descent"
    assert found("gradient") == [summary]
    assert found("benchmark") == []


def test_page_query_count_does_not_grow_with_transcript_matches(
    client, django_assert_max_num_queries
):
    for n in range(5):
        summary = live(f"Said {n}", tldr="Nothing about it.")
        add_transcript(summary.video)
    page(client, q="benchmark")  # the filter choices are now in the fragment cache

    # content generation, ids, card rows (with the lines said on PostgreSQL), people,
    # and elsewhere the transcripts' lines
    extra = 0 if connection.vendor == "postgresql" else 1
    with django_assert_max_num_queries(4 + extra):
        response = page(client, q="benchmark")

    assert len(response.context["results"]) == 5
    assert all("▶ 2:10" in str(result.snippet) for result in response.context["results"])


def three_hours():
    words = "model weights token kernel memory chip latency training data scale".split()
    return [
        (second, second + 3, " ".join(words[(second + i) % len(words)] for i in range(12)))
        for second in range(0, 3 * 3600, 3)
    ]


def test_search_with_three_hour_transcripts(client):
    speech = [*three_hours(), (3 * 3600, 3 * 3600 + 3, "The zebra finch sings.")]
    for n in range(4):
        summary = live(f"Long {n}", tldr="Nothing about it.")
        add_transcript(summary.video, speech=speech)
    page(client, q="zebra")

    response = page(client, q="zebra finch")  # how fast: bench/run_search_snippets.py

    assert len(response.context["results"]) == 4
    assert "▶ 3:00:00" in str(response.context["results"][0].snippet)
