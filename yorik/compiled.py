"""Querysets compiled to SQL once per process and run again with new values."""

import threading
from collections.abc import Callable
from typing import Any

from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler


class CompiledQuery:
    """A hot query whose shape never changes, compiled on first use only.

    Building and compiling a queryset costs Django a millisecond or two of
    CPU, several times what PostgreSQL needs to find a row by a unique key
    (bench/README.md, "Where a request's time goes"). `build` makes the
    queryset from its named values; it is called once, with a marker string
    for each, and each call's values take the markers' places among the
    compiled parameters. So a value must reach the SQL as it is given: text
    compared with `=`, not a pattern; compiling refuses a marker that Django
    changed, dropped or repeated. Rows come back as `values_list` gives them,
    through the fields' converters. The SQL runs through the preparing
    cursor, so PostgreSQL plans it once per connection, too.
    """

    def __init__(
        self, build: Callable[..., QuerySet], *names: str, using: str = "default"
    ) -> None:
        self._build = build
        self._names = names
        self._using = using
        self._lock = threading.Lock()
        self._compiled: tuple[SQLCompiler, str, list[Any], dict[str, int]] | None = None

    def rows(self, **values: Any) -> list[tuple[Any, ...]]:
        """Run the query with these values; return its rows."""
        compiler, sql, params, slots = self._compile()
        if values.keys() != slots.keys():
            raise TypeError(f"Give exactly the values {sorted(slots)}.")
        bound = list(params)
        for name, value in values.items():
            bound[slots[name]] = value
        with connections[self._using].preparing_cursor() as cursor:
            cursor.execute(sql, bound)
            fetched = cursor.fetchall()
        return list(compiler.results_iter(results=[fetched], tuple_expected=True))

    def _compile(self) -> tuple[SQLCompiler, str, list[Any], dict[str, int]]:
        with self._lock:
            if self._compiled is None:
                markers = {name: f"\x00compiled:{name}\x00" for name in self._names}
                queryset = self._build(**markers)
                compiler = queryset.query.get_compiler(using=self._using)
                sql, params = compiler.as_sql()
                slots = {}
                for name, marker in markers.items():
                    found = [i for i, param in enumerate(params) if param == marker]
                    if len(found) != 1:
                        raise ValueError(
                            f"The value {name!r} must appear exactly once among "
                            f"the query's parameters, as given; found {len(found)}."
                        )
                    slots[name] = found[0]
                self._compiled = (compiler, sql, list(params), slots)
            return self._compiled
