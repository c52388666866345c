"""Querysets compiled to SQL once per process and run again with new values."""

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler

# Stand-ins for the values while compiling: found again among the parameters.
# Integers stay inside every integer column's range, ids and positives too.
_INTEGER_MARKER = 2_000_000_000


@dataclass(frozen=True)
class _Compiled:
    compiler: SQLCompiler
    sql: str
    params: tuple[Any, ...]
    slots: dict[str, int]
    converters: dict[int, Any]


class CompiledQuery:
    """A hot query whose shape never changes, compiled on first use only.

    Building and compiling a queryset costs Django a millisecond or two of
    CPU, several times what PostgreSQL needs to find a row by its key
    (bench/README.md, "Where a request's time goes"). `build` makes the
    queryset from its named values, each text (`str`) or an integer (`int`);
    it is called once, with a marker for each, and each call's values take
    the markers' places among the compiled parameters. So a value must reach
    the SQL as it is given (compared with `=`, not made a pattern): compiling
    refuses a marker that Django changed, dropped or repeated. Rows come back
    as `values_list` gives them, through the fields' converters. The SQL runs
    through the preparing cursor, so PostgreSQL plans it once per connection.
    """

    def __init__(
        self, build: Callable[..., QuerySet], *, using: str = "default", **kinds: type
    ) -> None:
        unknown = {name for name, kind in kinds.items() if kind not in (str, int)}
        if unknown:
            raise TypeError(f"Values must be str or int: {sorted(unknown)}.")
        self._build = build
        self._kinds = kinds
        self._using = using
        self._lock = threading.Lock()
        self._compiled: _Compiled | None = None

    def rows(self, **values: Any) -> list[tuple[Any, ...]]:
        """Run the query with these values; return its rows."""
        if values.keys() != self._kinds.keys():
            raise TypeError(f"Give exactly the values {sorted(self._kinds)}.")
        for name, value in values.items():
            kind = self._kinds[name]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise TypeError(f"{name} must be {kind.__name__}, not {value!r}.")
        compiled = self._compile()
        bound = list(compiled.params)
        for name, value in values.items():
            bound[compiled.slots[name]] = value
        with connections[self._using].preparing_cursor() as cursor:
            cursor.execute(compiled.sql, bound)
            fetched = cursor.fetchall()
        if compiled.converters:
            fetched = compiled.compiler.apply_converters(fetched, compiled.converters)
        return [tuple(row) for row in fetched]

    def _compile(self) -> _Compiled:
        with self._lock:
            if self._compiled is None:
                self._compiled = self._compile_now()
            return self._compiled

    def _compile_now(self) -> _Compiled:
        markers = {
            name: f"\x00compiled:{name}\x00" if kind is str else _INTEGER_MARKER + index
            for index, (name, kind) in enumerate(self._kinds.items())
        }
        compiler = self._build(**markers).query.get_compiler(using=self._using)
        sql, params = compiler.as_sql()
        slots = {}
        for name, marker in markers.items():
            found = [
                index
                for index, param in enumerate(params)
                if type(param) is type(marker) and param == marker
            ]
            if len(found) != 1:
                raise ValueError(
                    f"The value {name!r} must appear exactly once among the "
                    f"query's parameters, as given; found {len(found)}."
                )
            slots[name] = found[0]
        columns = [selected[0] for selected in compiler.select[: compiler.col_count]]
        return _Compiled(
            compiler=compiler,
            sql=sql,
            params=tuple(params),
            slots=slots,
            converters=compiler.get_converters(columns),
        )
