"""Querysets compiled to SQL once per process and run again with new values."""

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler

# Stand-ins for the values while compiling: found again among the parameters.
# Integers stay inside every integer column's range, ids and positives too.
_INTEGER_MARKER = 2_000_000_000
_ITEM_MARKER = re.compile(r"\x00compiled:(\w+):(\d+)\x00")


@dataclass(frozen=True)
class ItemMarkers:
    """Stand-ins for the items of a sequence value while compiling: the
    `index`th item's marker is `markers(index)`.

    For SQL written by hand inside a queryset (an expression's own
    parameters): it puts each item's marker among its parameters.
    """

    name: str

    def __call__(self, index: int) -> str:
        return f"\x00compiled:{self.name}:{index}\x00"


@dataclass(frozen=True)
class _Compiled:
    compiler: SQLCompiler
    # None for a query Django knows to match nothing (`pk__in=[]`): no SQL.
    sql: str | None
    params: tuple[Any, ...]
    # Where each value goes among the parameters: a name, or (name, item).
    slots: dict[int, str | tuple[str, int]]
    converters: dict[int, Any]
    names: tuple[str, ...]

    def bound(self, values: dict[str, Any]) -> list[Any]:
        """Return the parameters with these values in the markers' places."""
        bound = list(self.params)
        for index, slot in self.slots.items():
            if isinstance(slot, tuple):
                name, item = slot
                bound[index] = values[name][item]
            else:
                bound[index] = values[slot]
        return bound

    def converted(self, fetched: list[Any]) -> list[tuple[Any, ...]]:
        if self.converters:
            fetched = self.compiler.apply_converters(fetched, self.converters)
        return [tuple(row) for row in fetched]


def _check_kinds(kinds: dict[str, type], allowed: tuple[type, ...]) -> None:
    unknown = {name for name, kind in kinds.items() if kind not in allowed}
    if unknown:
        names = " or ".join(kind.__name__ for kind in allowed)
        raise TypeError(f"Values must be {names}: {sorted(unknown)}.")


def _check_values(kinds: dict[str, type], values: dict[str, Any]) -> None:
    if values.keys() != kinds.keys():
        raise TypeError(f"Give exactly the values {sorted(kinds)}.")
    for name, value in values.items():
        kind = kinds[name]
        if value is None and kind is not tuple:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            raise TypeError(f"{name} must be {kind.__name__}, not {value!r}.")


def _compile(
    build: Callable[..., QuerySet],
    kinds: dict[str, type],
    *,
    using: str,
    unused: frozenset[str] = frozenset(),
    once: bool,
) -> _Compiled:
    """Build the queryset with a marker for each value and compile it.

    A marker must reach the parameters as it is given: once each when `once`,
    else at least once, and never changed; a value in `unused` gets None
    instead of a marker and must not be needed.
    """
    markers: dict[str, Any] = {}
    for index, (name, kind) in enumerate(kinds.items()):
        if name in unused:
            markers[name] = None
        elif kind is str:
            markers[name] = f"\x00compiled:{name}\x00"
        elif kind is int:
            markers[name] = _INTEGER_MARKER + index
        else:
            markers[name] = ItemMarkers(name)
    queryset = build(**markers)
    compiler = queryset.query.get_compiler(using=using)
    query = compiler.query
    names = (
        tuple(query.selected)
        if query.selected
        else (*query.extra_select, *query.values_select, *query.annotation_select)
    )
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return _Compiled(compiler, None, (), {}, {}, names)
    expected = "exactly once" if once else "at least once"
    slots: dict[int, str | tuple[str, int]] = {}
    for index, param in enumerate(params):
        for name, marker in markers.items():
            if type(param) is type(marker) and param == marker:
                slots[index] = name
        if isinstance(param, str) and "\x00compiled:" in param and index not in slots:
            item = _ITEM_MARKER.fullmatch(param)
            if item is None or kinds.get(item[1]) is not tuple:
                raise ValueError(
                    f"Each value must appear {expected} among the query's "
                    f"parameters, as given; {param!r} was changed."
                )
            slots[index] = (item[1], int(item[2]))
    for name, kind in kinds.items():
        if kind is tuple or name in unused:
            continue
        found = sum(slot == name for slot in slots.values())
        if (found != 1) if once else (found == 0):
            raise ValueError(
                f"The value {name!r} must appear {expected} among the "
                f"query's parameters, as given; found {found}."
            )
    columns = [selected[0] for selected in compiler.select[: compiler.col_count]]
    return _Compiled(
        compiler=compiler,
        sql=sql,
        params=tuple(params),
        slots=slots,
        converters=compiler.get_converters(columns),
        names=names,
    )


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
        _check_kinds(kinds, (str, int))
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
        if any(value is None for value in values.values()):
            raise TypeError(f"Give a value for each of {sorted(self._kinds)}.")
        _check_values(self._kinds, values)
        compiled = self._compile()
        if compiled.sql is None:
            return None
        return compiled.sql, compiled.bound(values)

    def converted(self, fetched: list[Any]) -> list[tuple[Any, ...]]:
        return self._compile().converted(fetched)

    @property
    def columns(self) -> int:
        """How many columns the query selects."""
        return len(self._compile().names)

    def _compile(self) -> _Compiled:
        with self._lock:
            if self._compiled is None:
                self._compiled = _compile(
                    self._build, self._kinds, using=self._using, once=True
                )
            return self._compiled


class CompiledValues:
    """A `values()` queryset without values of its own, compiled on first use,
    for SQL written around it.

    `statement` gives its SQL and parameters to put inside the caller's
    statement; `rows` turns the columns it selected, as that statement
    fetched them, into dicts through the fields' converters, as `values()`
    gives them.
    """

    def __init__(self, build: Callable[[], QuerySet], *, using: str = "default"):
        self._build = build
        self._using = using
        self._lock = threading.Lock()
        self._compiled: _Compiled | None = None

    def statement(self) -> tuple[str, tuple[Any, ...]]:
        compiled = self._compile()
        if compiled.sql is None:
            raise ValueError("A query that matches nothing has no SQL to embed.")
        return compiled.sql, compiled.params

    def rows(self, fetched: list[Sequence[Any]]) -> list[dict[str, Any]]:
        compiled = self._compile()
        return [
            dict(zip(compiled.names, row, strict=True))
            for row in compiled.converted([list(row) for row in fetched])
        ]

    def _compile(self) -> _Compiled:
        with self._lock:
            if self._compiled is None:
                self._compiled = _compile(self._build, {}, using=self._using, once=True)
            return self._compiled


class CompiledShapes:
    """A hot query of a few shapes, each compiled on its first use only.

    As `CompiledQuery`, for a query whose SQL depends on more than its
    values: a search's number of terms, which filters it has. The caller
    names the shape by a key (everything the SQL depends on but the values)
    and passes `build` with each call; it is called once per key, with a
    marker for each value. A value may be text, an integer, None where the
    shape does not use it, or a tuple of values for SQL the caller writes
    itself (the marker is an `ItemMarkers`). Rows come back as `values`
    gives them, as dicts. The SQL runs on Django's own cursor, bound on the
    client, so PostgreSQL plans it for each call's values. With `prepared`
    (where the caller knows one plan fits every value of the shape) it runs
    through the preparing cursor instead, planned once per connection. The
    `max_shapes` most recently used are kept.
    """

    def __init__(
        self, *, using: str = "default", max_shapes: int = 128, **kinds: type
    ) -> None:
        _check_kinds(kinds, (str, int, tuple))
        self._kinds = kinds
        self._using = using
        self._max_shapes = max_shapes
        self._lock = threading.Lock()
        self._compiled: OrderedDict[Hashable, _Compiled] = OrderedDict()

    def values(
        self,
        shape: Hashable,
        build: Callable[..., QuerySet],
        *,
        prepared: bool = False,
        **values: Any,
    ) -> list[dict[str, Any]]:
        """Run the query of this shape with these values; return its rows."""
        compiled = self._compiled_for(shape, build, values)
        if compiled.sql is None:
            return []
        with cursor_for(self._using, prepared=prepared) as cursor:
            cursor.execute(compiled.sql, compiled.bound(values))
            rows = compiled.converted(cursor.fetchall())
        return [dict(zip(compiled.names, row, strict=True)) for row in rows]

    def statement(
        self, shape: Hashable, build: Callable[..., QuerySet], **values: Any
    ) -> tuple[str, list[Any]] | None:
        """Return the SQL of this shape and its parameters with these values,
        for a statement of the caller's own around it (None for a query that
        matches nothing)."""
        compiled = self._compiled_for(shape, build, values)
        if compiled.sql is None:
            return None
        return compiled.sql, compiled.bound(values)

    def _compiled_for(
        self, shape: Hashable, build: Callable[..., QuerySet], values: dict[str, Any]
    ) -> _Compiled:
        _check_values(self._kinds, values)
        unused = frozenset(name for name, value in values.items() if value is None)
        key = (shape, unused)
        with self._lock:
            compiled = self._compiled.get(key)
            if compiled is not None:
                self._compiled.move_to_end(key)
        if compiled is None:
            compiled = _compile(
                build, self._kinds, using=self._using, unused=unused, once=False
            )
            with self._lock:
                self._compiled[key] = compiled
                while len(self._compiled) > self._max_shapes:
                    self._compiled.popitem(last=False)
        return compiled


def cursor_for(using: str, *, prepared: bool) -> Any:
    """Return the preparing cursor of the database `using`, or Django's own."""
    connection = connections[using]
    return connection.preparing_cursor() if prepared else connection.cursor()
