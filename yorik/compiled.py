"""Querysets of a fixed shape, compiled to SQL once per process and run again
with new values.

The one module that uses Django's SQL compiler past its documented API: a
queryset's compiler (`query.get_compiler`), its SQL (`as_sql`), the columns
it selects (`select`, `col_count`) and their converters (`get_converters`,
`apply_converters`), found once and applied to each call's rows as
`results_iter` would. tests/yorik/test_compiled.py fails when Django changes
any of them.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler

# Stand-ins for the values while compiling, found again among the parameters:
# a text no value has, and integers inside every integer column's range.
_INTEGER_MARKER = 2_000_000_000


@dataclass(frozen=True)
class _Compiled:
    compiler: SQLCompiler
    # None for a query Django knows to match nothing (`pk__in=[]`): no SQL.
    sql: str | None
    params: tuple[Any, ...]
    # Where each value goes among the parameters.
    slots: dict[int, str]
    columns: int
    converters: dict[int, Any]

    def bound(self, values: dict[str, Any]) -> list[Any]:
        """Return the parameters with these values in the markers' places."""
        bound = list(self.params)
        for index, name in self.slots.items():
            bound[index] = values[name]
        return bound

    def converted(self, fetched: list[Any]) -> list[tuple[Any, ...]]:
        if self.converters:
            fetched = self.compiler.apply_converters(fetched, self.converters)
        return [tuple(row) for row in fetched]


def _compile(
    build: Callable[..., QuerySet], kinds: dict[str, type], *, using: str
) -> _Compiled:
    """Build the queryset with a marker for each value and compile it.

    Each marker must reach the parameters as it is given, once or more
    (a household named in a subquery too).
    """
    markers: dict[str, Any] = {
        name: f"\x00compiled:{name}\x00" if kind is str else _INTEGER_MARKER + index
        for index, (name, kind) in enumerate(kinds.items())
    }
    compiler = build(**markers).query.get_compiler(using=using)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return _Compiled(compiler, None, (), {}, compiler.col_count, {})
    slots: dict[int, str] = {}
    for index, param in enumerate(params):
        for name, marker in markers.items():
            if type(param) is type(marker) and param == marker:
                slots[index] = name
    for name in kinds:
        found = sum(slot == name for slot in slots.values())
        if not found:
            raise ValueError(
                f"The value {name!r} must appear among the query's parameters, "
                "as given."
            )
    # Converters are looked up once: per call they cost a hundred times
    # their applying (24 us against 0.8 for the token lookup's 31 columns).
    columns = [selected[0] for selected in compiler.select[: compiler.col_count]]
    return _Compiled(
        compiler,
        sql,
        tuple(params),
        slots,
        compiler.col_count,
        compiler.get_converters(columns),
    )


class CompiledQuery:
    """A hot query whose shape never changes, compiled on first use only.

    Building and compiling a queryset costs Django a millisecond or two of
    CPU, several times what PostgreSQL needs to find a row by its key
    (docs/performance.md, "Where a request's time goes"). `build` makes the
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
        statement = self.statement(**values)
        if statement is None:
            return []
        with connections[self._using].preparing_cursor() as cursor:
            cursor.execute(*statement)
            return self.converted(cursor.fetchall())

    def statement(self, **values: Any) -> tuple[str, list[Any]] | None:
        """Return the SQL and its parameters with these values, for a statement
        of the caller's own around it (None for a query that matches nothing);
        `converted` turns the query's columns of its rows into what `rows`
        returns."""
        if values.keys() != self._kinds.keys():
            raise TypeError(f"Give exactly the values {sorted(self._kinds)}.")
        for name, value in values.items():
            kind = self._kinds[name]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise TypeError(f"{name} must be {kind.__name__}, not {value!r}.")
        compiled = self._compile()
        if compiled.sql is None:
            return None
        return compiled.sql, compiled.bound(values)

    def converted(self, fetched: list[Any]) -> list[tuple[Any, ...]]:
        return self._compile().converted(fetched)

    @property
    def columns(self) -> int:
        """How many columns the query selects."""
        return self._compile().columns

    def _compile(self) -> _Compiled:
        with self._lock:
            if self._compiled is None:
                self._compiled = _compile(self._build, self._kinds, using=self._using)
            return self._compiled
