"""The sources report in the admin: from a source, the summaries citing it; failing sources
among a summary's "Things to check"."""

import pytest
from django.urls import reverse

from summaries.editing import copies, derived
from summaries.models import Citation, Source

from .factories import ChapterFactory, SummaryFactory, TakeawayFactory

pytestmark = pytest.mark.django_db

URL = "https://example.org/report"


def cite(summary, text, *, where="chapter"):
    if where == "chapter":
        ChapterFactory(summary=summary, title="Speed", position=1, body=text)
    else:
        TakeawayFactory(summary=summary, position=1, text=text)
    return derived.sync_citations(summary=summary)


def source_page(client, source):
    response = client.get(reverse("admin:summaries_source_change", args=[source.pk]))
    assert response.status_code == 200
    return response.text


def test_a_source_lists_the_summaries_citing_it_with_claim_and_verdict(editor_client):
    first = SummaryFactory(video__title="Fast models")
    second = SummaryFactory(video__title="Agents at work")
    elsewhere = SummaryFactory(video__title="Not citing it")
    cite(first, f"It is [2.5 times faster]({URL}) than before.")
    cite(second, f"[The report]({URL}) found 3 agents.", where="takeaway")
    cite(elsewhere, "[Another page](https://example.org/other) says so.")
    Citation.objects.filter(summary=first).update(verdict=Citation.Verdict.NOT_FOUND)
    source = Source.objects.get(url=URL)

    page = source_page(editor_client, source)

    assert "Cited by" in page
    for summary in (first, second):
        link = reverse("admin:summaries_summary_change", args=[summary.pk])
        assert f'href="{link}"' in page
        assert summary.video.title in page
    assert "It is 2.5 times faster than before." in page
    assert "The report found 3 agents." in page
    assert "Chapter 1 “Speed”" in page
    assert "Takeaway 1" in page
    assert "Not found on source" in page
    assert "Not citing it" not in page


def test_claims_on_the_source_page_are_escaped(editor_client):
    summary = SummaryFactory(video__title="<b>Bold title</b>")
    cite(summary, f"A claim with a &lt;script&gt; tag in it, [see]({URL}).")
    page = source_page(editor_client, Source.objects.get(url=URL))
    assert "<b>Bold title</b>" not in page
    assert "&lt;b&gt;Bold title&lt;/b&gt;" in page
    assert "<script>" not in page


def test_pending_changes_that_cite_the_source_are_named_as_such(editor_client):
    live = SummaryFactory(live=True, video__title="Live one")
    cite(live, f"Still [cited]({URL}) here.")
    copies.start_working_copy(summary=live)
    page = source_page(editor_client, Source.objects.get(url=URL))
    link = reverse("admin:summaries_summary_change", args=[live.pk])
    assert page.count(f'href="{link}"') == 2
    assert "unpublished changes" in page


def test_the_source_page_shows_citations_without_editing_them(editor_client):
    summary = SummaryFactory()
    cite(summary, f"[see]({URL}) 5 times.")
    page = source_page(editor_client, Source.objects.get(url=URL))
    assert "Cited by" in page
    for field in ("claim", "key_phrase", "link_text", "DELETE"):
        assert f'name="citations-0-{field}"' not in page  # shown, never edited here


def test_things_to_check_names_a_broken_source(editor_client):
    summary = SummaryFactory()
    cite(summary, f"It is [2.5 times faster]({URL}).")
    Source.objects.filter(url=URL).update(state=Source.State.BROKEN, status_code=410)
    page = editor_client.get(reverse("admin:summaries_summary_change", args=[summary.pk])).text
    assert "Link “2.5 times faster”</strong>: Unavailable when last checked." in page
    assert f"<summary>Technical reason</summary>{URL} is broken (HTTP 410)" in page


def test_editors_see_each_cited_page_title_and_description_beside_the_link(editor_client):
    summary = SummaryFactory()
    cite(summary, f"It is [2.5 times faster]({URL}).")
    Source.objects.filter(url=URL).update(
        state=Source.State.OK,
        title="Pricing <b>page</b>",
        description="Plans & prices for teams.",
    )
    page = editor_client.get(reverse("admin:summaries_summary_change", args=[summary.pk])).text
    assert "<cite>Pricing &lt;b&gt;page&lt;/b&gt;</cite>" in page  # a wrong link shows
    assert "<small>Plans &amp; prices for teams.</small>" in page
    listing = editor_client.get(reverse("admin:summaries_source_changelist")).text
    assert "<cite>Pricing &lt;b&gt;page&lt;/b&gt;</cite>" in listing


def test_a_source_not_yet_read_says_it_has_no_title(editor_client):
    summary = SummaryFactory()
    cite(summary, f"It is [2.5 times faster]({URL}).")
    page = editor_client.get(reverse("admin:summaries_summary_change", args=[summary.pk])).text
    assert '<span class="source-page-unknown">no title</span>' in page
