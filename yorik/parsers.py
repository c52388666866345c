"""The agent API's JSON reading: hostile bodies are client errors, never 500s."""

from collections.abc import Callable
from typing import Any

import orjson
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# The deepest arrays and objects may nest in a body, REST's and MCP's alike.
# Inputs nest three levels and MCP's envelope around them three more. Far
# below the recursion limit (about 1,000 levels), which JSON decoders, the
# repr() of an input quoted in an error and any other recursive walk hit.
MAX_NESTING = 32
TOO_DEEP = f"JSON nested deeper than {MAX_NESTING} levels."


def may_nest_too_deeply(body: bytes) -> bool:
    """Return whether the JSON text opens more arrays and objects than may nest."""
    # Counted in C: an upper bound of the nesting, and most bodies stay under it.
    return body.count(b"[") + body.count(b"{") > MAX_NESTING


def read_json(body: bytes, decode: Callable[[bytes], Any]) -> Any:
    """Return the body as `decode` reads it; raise ParseError if it nests too deeply.

    The decoder's own errors, for a body that is not JSON, pass through.
    """
    try:
        data = decode(body)
    except RecursionError as error:
        raise ParseError(TOO_DEEP) from error
    if not may_nest_too_deeply(body):
        return data
    # Level by level, without recursion: each round keeps the arrays and
    # objects one level deeper.
    level = [data] if isinstance(data, dict | list) else []
    for _ in range(MAX_NESTING):
        level = [
            inner
            for outer in level
            for inner in (outer.values() if isinstance(outer, dict) else outer)
            if isinstance(inner, dict | list)
        ]
        if not level:
            return data
    raise ParseError(TOO_DEEP)


class StrictJSONParser(JSONParser):
    """A JSON parser that reads with orjson and refuses bodies nested too deeply.

    orjson reads JSON as RFC 8259 sends it, UTF-8 and no NaN or Infinity (as
    DRF's STRICT_JSON), six times faster than Python's json module for a list
    of numbers: the most of a hostile body's cost that is left once its first
    faults end validation.
    """

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        try:
            return read_json(stream.read(), orjson.loads)
        except orjson.JSONDecodeError as error:
            raise ParseError(f"JSON parse error - {error}") from error
