"""Statements: SQL text and its parameters, as the engine writes them out."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Statement:
    """SQL text and its parameters, for a cursor's `execute(sql, params)`.

    Parameters are positional (`%s` in the text, a tuple) or named
    (`%(name)s`, a dict); a literal percent sign is written `%%`.
    """

    sql: str
    params: tuple[Any, ...] | Mapping[str, Any] = ()
