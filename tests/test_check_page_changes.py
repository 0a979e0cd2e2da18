"""Recorded check results and the page cache: the content generation moves when, and only
when, a check changes what a reader is told about a cited source (its label)."""

from datetime import UTC, datetime, timedelta

import pytest

from summaries import checking
from summaries.editing import workflow
from summaries.linkcheck import CheckResult, ErrorClass, State
from summaries.models import Source
from summaries.pagecache.generation import current_generation
from tests.test_checking import cite

pytestmark = pytest.mark.django_db

URL = "https://example.com/fast"
DAY = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def record(source: Source, **found) -> None:
    """Claim the source and record one check of it that found `found`."""
    token, ids = checking.claim_sources(queryset=Source.objects.filter(pk=source.pk), limit=1)
    assert ids == [source.pk]
    found.setdefault("final_url", source.url)
    found.setdefault("checked_at", DAY)
    checking.record_results(token=token, results={source.pk: CheckResult(url=source.url, **found)})


@pytest.fixture
def source():
    summary, citations = cite(("It is fast", URL))
    workflow.publish_summary(summary=summary)
    return citations[0].source


@pytest.fixture
def summary_page(source, client):
    """The published summary page, fetched with the client (and so cached)."""
    url = source.citations.get().summary.get_absolute_url()
    return lambda: client.get(url).content.decode()


def test_a_source_moved_to_another_address_in_the_same_state_reaches_cached_pages(
    source, summary_page
):
    record(source, state=State.REDIRECTED, status=200, final_url="https://new.example.com/a")
    assert "new.example.com/a" in summary_page()  # now cached
    generation = current_generation()

    record(source, state=State.REDIRECTED, status=200, final_url="https://new.example.com/b")

    assert current_generation() != generation
    shown = summary_page()
    assert "new.example.com/b" in shown and "new.example.com/a" not in shown


def test_a_failure_of_another_kind_in_the_same_state_reaches_cached_pages(source):
    record(source, state=State.ERROR, error_class=ErrorClass.TIMEOUT)
    generation = current_generation()
    record(source, state=State.ERROR, error_class=ErrorClass.DNS)
    assert current_generation() != generation


def test_a_check_that_changes_nothing_shown_but_the_date_keeps_cached_pages(source):
    """The "checked on" date alone does not empty the page cache (see record.py)."""
    record(source, state=State.REDIRECTED, status=200, final_url="https://new.example.com/a")
    generation = current_generation()
    record(
        source,
        state=State.REDIRECTED,
        status=301,  # not shown to readers
        final_url="https://new.example.com/a",
        response_ms=120,
        checked_at=DAY + timedelta(days=3),
    )
    assert current_generation() == generation


def test_a_page_that_is_gone_with_another_status_keeps_cached_pages(source):
    record(source, state=State.BROKEN, status=404)
    generation = current_generation()
    record(source, state=State.BROKEN, status=410, checked_at=DAY + timedelta(days=1))
    assert current_generation() == generation
