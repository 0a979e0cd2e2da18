"""Reader queries whose SQL is built once per process, then run with new values.

Turning a queryset into SQL (lookups resolved to joins, expressions compiled) costs Django
more than PostgreSQL spends running the small queries of a reader page: for the summary
page's citations, 0.7 of 1.3 ms, and the ORM was over half of the whole page rendered
with no cache (bench/profile_page.py). The shape of such a query never changes, only its
values (a video's id, the time "now" that decides what is live), so a CompiledQuery builds
its queryset once per thread and database with stand-in values, notes where each one
stands among the SQL's parameters, and from then on runs that SQL with the real values in
those places.

It runs through Django's cursor, so query counting and logging still see it, and its rows
go through the same converters as the queryset's own (JSON, dates on SQLite), shaped as
model instances, values() (dicts) or values_list() (tuples) as the queryset would be.

On PostgreSQL its parameters are bound on the server (the ORM's own queries are bound in
the client, as Django does by default), so that PostgreSQL plans each compiled query once
per connection: a prepared statement, when the connection's `prepare_threshold` allows
it, with one generic plan (`plan_cache_mode=force_generic_plan`; settings:
DATABASE_PREPARED_STATEMENTS). The summary page's seven queries spent about 2 ms being
planned again on every request, and client-side binding another 1-2 ms quoting values into
the SQL text.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connections, router
from django.db.models import QuerySet
from django.db.models.query import ModelIterable, ValuesIterable, get_related_populators
from django.utils import timezone

# Stand-ins no real query passes: ids are positive, no slug holds a NUL, and nothing is
# published in 1971.
_SENTINEL_IDS = itertools.count(-7_340_000_000_001, -1)
_SENTINEL_TEXT = "\x00compiled-stand-in-{}"
_NOW_SENTINEL = datetime(1971, 2, 3, 4, 5, 6, 789012, tzinfo=UTC)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: list
    slots: dict[str, list[int]]  # stand-in name -> its positions in params
    compiler: object  # the SQLCompiler: converters, columns, what makes a model instance
    shape: str  # "models", "dicts" (values()) or "tuples" (values_list())
    names: list[str] | None  # values() keys


class CompiledQuery:
    """`build(**values)` returns a queryset of `model`: of instances (select_related
    included), values() or values_list().

    `ids` names the build's integer arguments, `texts` its string arguments; `id_lists`
    names its arguments that are lists of ids, each with the largest length the query is
    compiled for (shorter lists are padded with a repeat of their last id, harmless in
    `IN`; longer ones run the queryset itself); `now=True` passes the build a `now`
    datetime (the time that decides what is published).
    """

    def __init__(
        self,
        model,
        build: Callable[..., QuerySet],
        *,
        ids: tuple[str, ...] = (),
        texts: tuple[str, ...] = (),
        id_lists: dict[str, int] | None = None,
        now: bool = False,
    ):
        self.model = model
        self.build = build
        self.ids = ids
        self.texts = texts
        self.id_lists = id_lists or {}
        self.now = now
        self._local = threading.local()

    def _stand_ins(self) -> dict:
        values = {name: next(_SENTINEL_IDS) for name in self.ids}
        for name in self.texts:
            values[name] = _SENTINEL_TEXT.format(-next(_SENTINEL_IDS))
        for name, size in self.id_lists.items():
            values[name] = [next(_SENTINEL_IDS) for _ in range(size)]
        if self.now:
            values["now"] = _NOW_SENTINEL
        return values

    def _compile(self, alias: str) -> _Compiled:
        stand_ins = self._stand_ins()
        queryset = self.build(**stand_ins).using(alias)
        connection = connections[alias]
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        params = list(params)
        slots = {}
        for name, value in stand_ins.items():
            wanted = value if isinstance(value, list) else [value]
            for n, one in enumerate(wanted):
                prepared = self._prepare(connection, name, one)
                positions = [i for i, param in enumerate(params) if param == prepared]
                if not positions or str(one) in sql:
                    raise ValueError(f"{name} is not a parameter of the compiled query")
                slots[name if not isinstance(value, list) else f"{name}[{n}]"] = positions
        query, names = queryset.query, None
        if queryset._iterable_class is ModelIterable:
            if queryset._known_related_objects or queryset._prefetch_related_lookups:
                raise ValueError("a compiled query loads no related objects but select_related")
            shape = "models"
        elif queryset._iterable_class is ValuesIterable:
            shape = "dicts"
            names = (
                list(query.selected)
                if query.selected
                else [*query.extra_select, *query.values_select, *query.annotation_select]
            )
        else:
            shape = "tuples"
        return _Compiled(sql, params, slots, compiler, shape, names)

    def _prepare(self, connection, name: str, value):
        if name == "now" and self.now:
            return connection.ops.adapt_datetimefield_value(value)
        return value

    def _compiled(self, alias: str) -> _Compiled:
        cache = self._local.__dict__.setdefault("by_alias", {})
        if alias not in cache:
            cache[alias] = self._compile(alias)
        return cache[alias]

    def _params(self, compiled: _Compiled, connection, values: dict) -> list:
        params = list(compiled.params)
        for name, value in values.items():
            if name in self.id_lists:
                padded = [*value, *[value[-1]] * (self.id_lists[name] - len(value))]
                for n, one in enumerate(padded):
                    for i in compiled.slots[f"{name}[{n}]"]:
                        params[i] = one
            else:
                for i in compiled.slots[name]:
                    params[i] = self._prepare(connection, name, value)
        return params

    def run(self, **values) -> list:
        """The rows for these values: model instances, dicts or tuples, as the queryset."""
        if self.now:
            values.setdefault("now", timezone.now())
        for name, size in self.id_lists.items():
            if not values[name]:
                return []
            if len(values[name]) > size:  # longer than compiled for: the queryset itself
                return list(self.build(**values))
        alias = router.db_for_read(self.model)
        compiled = self._compiled(alias)
        connection = connections[alias]
        with _cursor(connection) as cursor:
            cursor.execute(compiled.sql, self._params(compiled, connection, values))
            rows = cursor.fetchall()
        compiler = compiled.compiler
        if compiler.has_extra_select:  # columns selected only to order by
            rows = [row[: compiler.col_count] for row in rows]
        rows = compiler.results_iter([rows], tuple_expected=compiled.shape == "tuples")
        if compiled.shape == "models":
            return _instances(compiler, rows, alias)
        if compiled.shape == "dicts":
            names = compiled.names
            return [dict(zip(names, row, strict=True)) for row in rows]
        return list(rows)


def _cursor(connection):
    """A Django cursor (logged and counted as any other); on PostgreSQL one binding
    parameters on the server, which psycopg prepares as the connection's threshold says."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    from django.db.backends.postgresql.base import ServerBindingCursor  # psycopg 3 only

    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        # What connection.cursor() does, with this cursor class instead of the default.
        return connection._prepare_cursor(ServerBindingCursor(connection.connection))


def _instances(compiler, rows, alias: str) -> list:
    """Model instances from converted rows, with their select_related objects: what
    django.db.models.query.ModelIterable makes of them."""
    select, klass_info = compiler.select, compiler.klass_info
    start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
    init_list = [column[0].target.attname for column in select[start:end]]
    populators = get_related_populators(klass_info, select, alias)
    model = klass_info["model"]
    instances = []
    for row in rows:
        instance = model.from_db(alias, init_list, row[start:end])
        for populator in populators:
            populator.populate(row, instance)
        for name, position in compiler.annotation_col_map.items():
            setattr(instance, name, row[position])
        instances.append(instance)
    return instances
