"""SQL text and its parameters, and how the engine puts them together."""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class Statement:
    """SQL text and its parameters, for a cursor's `execute(sql, params)`.

    Parameters are positional (`%s` in the text, a tuple) or named
    (`%(name)s`, a dict); a literal percent sign is written `%%`. `prepare`
    says that one plan serves every value of this text: run through the
    preparing cursor, PostgreSQL plans it once per connection.
    """

    sql: str
    params: tuple[Any, ...] | Mapping[str, Any] = ()
    prepare: bool = False


_HOLE = re.compile(r"\{(\w+)\}")


def compose(template: str, **parts: Any) -> Statement:
    """Return the template with each `{name}` hole filled: by a Statement's
    SQL, its parameters bound where it stands, or by any other value bound as
    one parameter. A hole may appear more than once."""
    text: list[str] = []
    params: list[Any] = []
    for literal, hole in _pieces(template):
        text.append(literal)
        if hole is None:
            continue
        part = parts[hole]
        if isinstance(part, Statement):
            if isinstance(part.params, Mapping):
                raise TypeError("Only statements of positional parameters compose.")
            text.append(part.sql)
            params.extend(part.params)
        else:
            text.append("%s")
            params.append(part)
    return Statement("".join(text), tuple(params))


@lru_cache(maxsize=256)
def _pieces(template: str) -> tuple[tuple[str, str | None], ...]:
    """Return the template's text before each hole, and the hole's name (None
    after the last)."""
    pieces = []
    start = 0
    for hole in _HOLE.finditer(template):
        pieces.append((template[start : hole.start()], hole[1]))
        start = hole.end()
    pieces.append((template[start:], None))
    return tuple(pieces)


def sql(text: str) -> Statement:
    """Return SQL text without parameters, to fill a hole of `compose`."""
    return Statement(text)
