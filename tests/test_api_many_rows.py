"""ManyRowsSerializer: citations and sources shown as DRF's ModelSerializer shows them."""

import datetime

import pytest
from rest_framework import serializers

from summaries.api.citation_serializers import (
    CitationSerializer,
    ManyRowsSerializer,
    SourceSerializer,
)
from summaries.api.summary_views import summary_details
from summaries.editing import derived
from summaries.models import Citation, Source, Summary

from .factories import ChapterFactory, EditorFactory, SummaryFactory, TakeawayFactory

pytestmark = pytest.mark.django_db

CHECKED = datetime.datetime(2026, 11, 30, 8, 15, 2, 123456, tzinfo=datetime.UTC)


def as_drf_shows(serializer, instance):
    """What ModelSerializer.to_representation gives (nested serializers included)."""
    return serializers.ModelSerializer.to_representation(serializer, instance)


@pytest.fixture
def citations():
    """A summary's citations in every shape they take: checked or not, confirmed or not,
    with a key phrase or with a suggestion, in a chapter or in a takeaway."""
    summary = SummaryFactory()
    ChapterFactory(
        summary=summary,
        position=1,
        body="[Anthropic says](https://www.anthropic.com/x) it is 2.5 times faster. "
        "[A post](https://example.org/post) said so too",
    )
    TakeawayFactory(summary=summary, text="[It](https://example.org/t) costs $3 billion.")
    derived.sync_citations(summary=summary)
    Source.objects.filter(url="https://www.anthropic.com/x").update(
        state=Source.State.REDIRECTED,
        status_code=200,
        final_url="https://www.anthropic.com/y",
        title="Fast mode",
        redirect_chain=[["https://www.anthropic.com/x", 301]],
        response_ms=210,
        last_checked_at=CHECKED,
    )
    Citation.objects.filter(link_text="Anthropic says").update(
        verdict=Citation.Verdict.SUPPORTED,
        verdict_excerpt="2.5 times faster",
        verdict_checked_at=CHECKED,
        confirmed_at=CHECKED,
        confirmed_by=EditorFactory(),
    )
    Citation.objects.filter(link_text="It").update(key_phrase="", key_phrase_edited=True)
    return summary


def test_citations_of_the_detail_query_are_shown_as_drf_shows_them(citations):
    summary = summary_details(Summary.objects.all()).get(pk=citations.pk)
    serializer = CitationSerializer()

    shown = [serializer.to_representation(c) for c in summary.citations.all()]

    assert shown == [as_drf_shows(serializer, c) for c in summary.citations.all()]
    assert {c["verdict_checked_at"] for c in shown} == {None, "2026-11-30T08:15:02.123456Z"}
    assert [c["source"] for c in shown] == [
        as_drf_shows(SourceSerializer(), c.source) for c in summary.citations.all()
    ]
    assert [c["chapter"] for c in shown] == [None, 1, 1]  # the takeaway is read first
    assert shown[0]["suggested_key_phrase"] == "costs 3 billion"


def test_a_value_drf_finds_no_attribute_for_is_shown_as_drf_shows_it(citations):
    citation = Citation.objects.select_related("source").get(link_text="A post")
    serializer = CitationSerializer()

    shown = serializer.to_representation(citation)  # no positions annotated: null

    assert shown == as_drf_shows(serializer, citation)
    assert (shown["chapter"], shown["takeaway"]) == (None, None)


def test_a_relation_or_a_plain_dict_is_left_to_drf():
    class WithRelation(ManyRowsSerializer):
        class Meta:
            model = Citation
            fields = ["id", "source"]

    assert WithRelation()._plan is None
    source = {"url": "https://example.org/", "host": "example.org", "state": "ok"}
    shown = SourceSerializer(source, partial=True).to_representation(source)
    assert shown["url"] == "https://example.org/"
