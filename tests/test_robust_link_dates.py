"""Every cited link on a page carries Robust Links' date of linking, checked or not.

The date a reader's Robust Links tool looks for an archived copy near is when the link was
written into the summary: known from the moment it is written, kept across edits, never
moved by publishing a change.
"""

import datetime
import re
from importlib import import_module

import pytest
from django.apps import apps
from django.core.cache import cache
from django.utils import timezone

from summaries.editing import derived
from summaries.models import Chapter, Citation, CitationEvidence, EvidenceRecord, Summary

from .factories import ChapterFactory, SummaryFactory, publish_edit

pytestmark = pytest.mark.django_db

URL = "https://bench.example/speed"
CLAIM = "Model X is 2.5x faster, [per the benchmark](https://bench.example/speed)."
WRITTEN = timezone.make_aware(datetime.datetime(2026, 3, 9, 12, 0))


def live_summary() -> Summary:
    summary = SummaryFactory(live=True, tldr="Speed matters.")
    ChapterFactory(summary=summary, position=1, title="One", body=CLAIM, start_time=0)
    derived.refresh_derived_data(summary=summary)
    return summary


def robust_attributes(page: str) -> list[str]:
    return re.findall(r'<a href="https://bench\.example/speed[^"]*"([^>]*)>', page)


def test_a_link_never_checked_nor_confirmed_carries_the_date_it_was_written(client):
    summary = live_summary()
    citation = Citation.objects.get(summary=summary)
    assert citation.verdict == Citation.Verdict.UNCHECKED and citation.confirmed_at is None
    Citation.objects.filter(pk=citation.pk).update(linked_at=WRITTEN)
    cache.clear()

    page = client.get(summary.get_absolute_url()).text

    # In the chapter's text and in the list of cited sources.
    found = robust_attributes(page)
    assert len(found) == 2, found
    assert all('data-originalurl="https://bench.example/speed"' in a for a in found), found
    assert all('data-versiondate="2026-03-09"' in a for a in found), found


def test_publishing_a_change_keeps_the_date_the_link_was_written():
    summary = live_summary()
    Citation.objects.filter(summary=summary).update(linked_at=WRITTEN)

    def rewrite(chapters):
        return [Chapter(title="One, again", body="First. " + CLAIM, start_time=0)]

    publish_edit(summary, tldr="Speed matters!")
    publish_edit(summary, parts={Chapter: rewrite})

    assert Citation.objects.get(summary=summary).linked_at == WRITTEN


def test_a_new_link_is_dated_when_written():
    summary = live_summary()
    before = timezone.now()

    def add(chapters):
        chapters[0].body += " Also [a second source](https://other.example/page)."
        return chapters

    publish_edit(summary, parts={Chapter: add})

    added = Citation.objects.get(summary=summary, url="https://other.example/page")
    assert added.linked_at >= before


def _evidence(citation: Citation, at: datetime.datetime) -> None:
    record = EvidenceRecord.objects.create(
        digest="a" * 64,
        name="a.warc.gz",
        size=1,
        url=URL,
        status_code=200,
        captured_at=at,
        last_used_at=at,
    )
    CitationEvidence.objects.create(
        citation=citation,
        kind=CitationEvidence.Kind.CITED,
        record=record,
        passage="2.5x faster",
        digest="a" * 64,
        url=URL,
        captured_at=at,
    )


def test_links_stored_before_are_dated_by_what_is_known_of_them():
    migration = import_module("summaries.migrations.0043_citation_linked_at")
    first_live = timezone.make_aware(datetime.datetime(2026, 2, 1, 9, 0))
    checked = live_summary()
    never_checked = live_summary()
    Summary.objects.filter(pk=never_checked.pk).update(first_published_at=first_live)
    confirmed = live_summary()
    cited = timezone.make_aware(datetime.datetime(2026, 4, 2, 9, 0))
    _evidence(Citation.objects.get(summary=checked), cited)
    Citation.objects.filter(summary=confirmed).update(confirmed_at=WRITTEN)

    migration.fill_linked_at(apps, None)

    def linked_at(summary):
        return Citation.objects.get(summary=summary).linked_at

    assert linked_at(checked) == cited
    assert linked_at(never_checked) == first_live
    assert linked_at(confirmed) == WRITTEN
