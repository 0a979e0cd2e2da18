"""insert_rows: many rows in one statement, the same rows bulk_create would write."""

import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from summaries.models import Citation, Source
from summaries.models.rows import insert_rows, insert_written_rows

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

    started = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        ids = insert_rows(Citation, columns, same=same)

    assert len(queries) == 1
    rows = Citation.objects.in_bulk(ids)
    # A default that is a callable (the time of linking) is called at the insert.
    linked_at = [rows[pk].linked_at for pk in ids]
    assert all(moment >= started for moment in linked_at)
    expected = [
        Citation(
            **same, linked_at=linked_at[n], **{name: values[n] for name, values in columns.items()}
        )
        for n in range(2)
    ]
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


def test_written_rows_are_the_rows_as_read_but_another_writers():
    """Each inserted row comes back as an instance equal, field by field, to the row read
    from the database; a row whose unique value another writer had stored comes back as
    its id alone (its mark, a new token, is not the one sent)."""
    before = Source.objects.create(url="https://example.org/old", host="old.example.org")
    urls = ["https://example.org/new", "https://example.org/old", "https://example.org/z"]
    columns = {"url": urls, "host": ["example.org"] * 3, "check_token": ["t1", "t1", "t2"]}
    claimed = datetime.datetime(2026, 12, 6, 1, 2, 3, 456789, tzinfo=datetime.UTC)

    with CaptureQueriesContext(connection) as queries:
        written = insert_written_rows(
            Source, columns, same={"claimed_until": claimed}, unique="url", mark="check_token"
        )

    assert len(queries) == (1 if connection.vendor == "postgresql" else 2)
    assert [pk for pk, _ in written][1] == before.pk and written[1][1] is None
    rows = Source.objects.in_bulk([pk for pk, _ in written])
    for pk, row in (written[0], written[2]):
        assert row.pk == pk and not row._state.adding
        assert _fields(row) == _fields(rows[pk])
    assert written[0][1].redirect_chain is not written[2][1].redirect_chain  # each its own
    with pytest.raises(ValueError, match="mark"):
        insert_written_rows(Source, {"url": urls, "host": urls}, unique="url", mark="check_token")
