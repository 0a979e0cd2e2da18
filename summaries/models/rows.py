"""Many rows of one model inserted in one statement, each sending only what varies.

`bulk_create` sends every column of every row, each value prepared by its field: for the
thousands of citations (and sources) of a long chapter, most of a save's time went into
columns that hold the same default in every row. On PostgreSQL `insert_rows` sends each
varying column as one array and each other column's value once; elsewhere (SQLite) it is
`bulk_create`.
"""

import copy
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from django.db import connection, models
from django.db.models.fields import NOT_PROVIDED

M = TypeVar("M", bound=models.Model)


def insert_rows(
    model: type[models.Model],
    columns: Mapping[str, Sequence[Any]],
    *,
    same: Mapping[str, Any] | None = None,
    unique: str | None = None,
) -> list[int]:
    """Insert rows of `model` in one statement; their ids, in the order of the rows.

    `columns` maps a field's attname to its value in each row (every sequence as long);
    `same` a field's attname to its value in every row. Every other field takes the value
    a new instance gets (its default, now for an auto_now field), the same in every row:
    a default that must differ between rows (a random token) has to be given.

    With `unique` (the name of a field with a unique constraint), a row whose value of it
    another row already has is not inserted: that row's id comes back in its place (the
    existing row is "updated" to itself, which makes concurrent inserts of the same value
    wait for each other and never fail). Rows given in the same order by every writer lock
    the index entries in the same order.
    """
    return [pk for pk, _row in _inserted(model, columns, same, unique, mark=None)]


def insert_written_rows(
    model: type[M],
    columns: Mapping[str, Sequence[Any]],
    *,
    same: Mapping[str, Any] | None = None,
    unique: str,
    mark: str,
) -> list[tuple[int, M | None]]:
    """`insert_rows` with `unique`, each row also as an instance holding what was written
    (its id, the values given, every other field's default and auto_now time): for showing
    the rows without reading them back. (id, None) for a row another writer had inserted.

    `mark` is the attname of a column of `columns` whose value in each row no stored row
    has (a new random token): a row that comes back with another value was not written
    here, and only its id is known.
    """
    if mark not in columns:
        raise ValueError(f"the mark {mark!r} must be one of the columns")
    if any(f.generated or f.db_default is not NOT_PROVIDED for f in model._meta.concrete_fields):
        raise ValueError(f"{model.__name__} has values the database computes: read its rows")
    return _inserted(model, columns, same, unique, mark=mark)


def _inserted(model, columns, same, unique, *, mark) -> list[tuple[int, Any]]:
    count = len(next(iter(columns.values()), ()))
    if not count:
        return []
    given = {**(same or {})}
    fields = {field.attname for field in model._meta.concrete_fields}
    if unknown := (set(columns) | set(given)) - fields:
        raise ValueError(f"{model.__name__} has no fields {sorted(unknown)}")
    if connection.vendor != "postgresql":
        return _bulk_created(model, columns, given, count, unique, mark)
    return _unnest_inserted(model, columns, given, unique, mark)


def _bulk_created(model, columns, same, count, unique, mark) -> list[tuple[int, Any]]:
    rows = [
        model(**same, **{name: values[n] for name, values in columns.items()}) for n in range(count)
    ]
    conflicts = {"update_conflicts": True, "unique_fields": [unique], "update_fields": [unique]}
    model._default_manager.bulk_create(rows, **(conflicts if unique else {}))
    if mark is None:
        return [(row.pk, None) for row in rows]
    # bulk_create gives an existing row's id with this row's values: the stored mark tells.
    stored = dict(
        model._default_manager.filter(pk__in=[row.pk for row in rows]).values_list("pk", mark)
    )
    return [(row.pk, row if stored[row.pk] == getattr(row, mark) else None) for row in rows]


# Fields whose get_db_prep_save gives a value of this type (or None) back unchanged.
_UNCHANGED: dict[type[models.Field], type] = {
    models.CharField: str,
    models.URLField: str,
    models.TextField: str,
    models.IntegerField: int,
    models.PositiveSmallIntegerField: int,
    models.PositiveIntegerField: int,
    models.ForeignKey: int,  # to an integer primary key, as every one here
}


def _prepared(field: models.Field, values: Sequence[Any]) -> list[Any]:
    """The values as the field writes them: unchanged when they already are (an str of a
    CharField), saving a call per value."""
    plain = _UNCHANGED.get(type(field))
    if plain is not None and all(type(value) is plain or value is None for value in values):
        return list(values)
    return [field.get_db_prep_save(value, connection) for value in values]


def _base_type(field: models.Field) -> str:
    """The column's type without its length (varchar, not varchar(500)): a cast to it
    never truncates (as Django's own UNNEST inserts do)."""
    return str(field.db_type(connection)).split("(")[0]


def _unnest_inserted(model, columns, same, unique, mark) -> list[tuple[int, Any]]:
    quote = connection.ops.quote_name
    template = model(**same)  # what a new row holds, as bulk_create would write it
    names: list[str] = []  # the columns written, in the order of `selected`
    selected: list[str] = []  # what the SELECT gives each: an array's element or a value
    arrays: list[list] = []  # one per varying column, unnested side by side
    casts: list[str] = []  # the type of each array
    values: list[Any] = []  # one per other column
    for field in model._meta.concrete_fields:
        if field.primary_key or field.generated or field.db_default is not NOT_PROVIDED:
            continue
        prepare = field.get_db_prep_save
        if field.attname in columns:
            selected.append(f"r.c{len(arrays)}")
            casts.append(f"%s::{_base_type(field)}[]")
            arrays.append(_prepared(field, columns[field.attname]))
        else:
            value = prepare(field.pre_save(template, add=True), connection)
            if value is None:  # NULL: the column's default (Django sets no other in the database)
                continue
            selected.append(f"%s::{_base_type(field)}")
            values.append(value)
        names.append(quote(field.column))
    aliases = ", ".join(f"c{n}" for n in range(len(arrays)))
    # Table and column names come from the model, quoted; every value is a parameter. The
    # rows are inserted, and their ids returned, in the order of the arrays.
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(names)}) "  # noqa: S608
        f"SELECT {', '.join(selected)} "
        f"FROM unnest({', '.join(casts)}) WITH ORDINALITY AS r({aliases}, n) ORDER BY r.n"
    )
    if unique:
        column = quote(model._meta.get_field(unique).column)
        sql += f" ON CONFLICT ({column}) DO UPDATE SET {column} = EXCLUDED.{column}"
    sql += f" RETURNING {quote(model._meta.pk.column)}"
    if mark is not None:
        sql += f", {quote(model._meta.get_field(mark).column)}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, *arrays])
        returned = cursor.fetchall()
    if mark is None:
        return [(pk, None) for (pk,) in returned]
    return _as_written(model, template, columns, same, returned, mark)


def _as_written(model, template, columns, same, returned, mark) -> list[tuple[int, Any]]:
    """(id, instance) of each row as the template and its columns wrote it; (id, None) for a
    row whose mark came back different (another writer's row)."""
    fields = model._meta.concrete_fields
    base = [getattr(template, field.attname) for field in fields]
    varying = [(n, columns[f.attname]) for n, f in enumerate(fields) if f.attname in columns]
    # A list or dict (a JSONField's default) is each row's own, as read from the database.
    mutable = [
        (n, field)
        for n, (field, value) in enumerate(zip(fields, base, strict=True))
        if isinstance(value, list | dict) and field.attname not in columns
    ]
    pk_index = next(n for n, field in enumerate(fields) if field.primary_key)
    marks = columns[mark]
    written: list[tuple[int, Any]] = []
    for row, (pk, stored_mark) in enumerate(returned):
        if stored_mark != marks[row]:
            written.append((pk, None))
            continue
        values = list(base)
        for n, column in varying:
            values[n] = column[row]
        for n, field in mutable:
            given = field.attname in same
            values[n] = copy.deepcopy(values[n]) if given else field.get_default()
        values[pk_index] = pk
        instance = model(*values)  # as Model.from_db builds a row it read
        instance._state.adding, instance._state.db = False, connection.alias
        written.append((pk, instance))
    return written
