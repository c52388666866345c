"""SQL text and its parameters, and how the engine puts them together."""

import re
from collections.abc import Mapping
from dataclasses import dataclass
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
    params: list[Any] = []

    def fill(hole: re.Match[str]) -> str:
        part = parts[hole[1]]
        if isinstance(part, Statement):
            if isinstance(part.params, Mapping):
                raise TypeError("Only statements of positional parameters compose.")
            params.extend(part.params)
            return part.sql
        params.append(part)
        return "%s"

    return Statement(_HOLE.sub(fill, template), tuple(params))


def sql(text: str) -> Statement:
    """Return SQL text without parameters, to fill a hole of `compose`."""
    return Statement(text)
