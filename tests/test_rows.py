"""insert_rows: many rows in one statement, the same rows bulk_create would write."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from summaries.models import Citation, Source
from summaries.models.rows import insert_rows

from .factories import ChapterFactory, SummaryFactory

pytestmark = pytest.mark.django_db


def _fields(row):
    """Every value of the row but its id."""
    fields = type(row)._meta.concrete_fields
    return {f.attname: getattr(row, f.attname) for f in fields if not f.primary_key}


def test_rows_get_the_given_values_and_every_other_field_its_default():
    summary = SummaryFactory()
    chapter = ChapterFactory(summary=summary)
    source = Source.objects.create(url="https://example.org/a", host="example.org")
    columns = {
        "position": [1, 2],
        "url": ["https://example.org/a", "https://example.org/a#b"],
        "link_text": ["one", "two"],
        "claim": ["One.", ""],
        "chapter_id": [chapter.pk, None],
    }
    same = {"summary_id": summary.pk, "source_id": source.pk}

    with CaptureQueriesContext(connection) as queries:
        ids = insert_rows(Citation, columns, same=same)

    assert len(queries) == 1
    expected = [
        Citation(**same, **{name: values[n] for name, values in columns.items()}) for n in range(2)
    ]
    rows = Citation.objects.in_bulk(ids)
    assert [_fields(rows[pk]) for pk in ids] == [_fields(row) for row in expected]
    assert ids == sorted(ids)  # in the order given


def test_auto_now_fields_are_set_and_a_row_whose_unique_value_exists_keeps_its_id():
    before = Source.objects.create(url="https://example.org/old", host="old.example.org")
    urls = ["https://example.org/new", "https://example.org/old", "https://example.org/z"]

    ids = insert_rows(Source, {"url": urls, "host": ["example.org"] * 3}, unique="url")

    assert ids[1] == before.pk
    assert Source.objects.count() == 3
    old, new = Source.objects.get(pk=before.pk), Source.objects.get(pk=ids[0])
    assert old.host == "old.example.org"  # an existing row is not written
    assert (new.url, new.host, new.state, new.redirect_chain) == (
        urls[0],
        "example.org",
        Source.State.UNCHECKED,
        [],
    )
    assert new.created_at is not None and new.updated_at is not None
    assert new.created_at >= old.created_at


def test_no_rows_no_query_and_an_unknown_field_is_an_error():
    with CaptureQueriesContext(connection) as queries:
        assert insert_rows(Source, {"url": [], "host": []}) == []
    assert len(queries) == 0
    with pytest.raises(ValueError, match="no fields"):
        insert_rows(Source, {"address": ["https://example.org/"]})
