"""The agent API's JSON parser: hostile bodies are client errors, never 500s."""

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class StrictJSONParser(JSONParser):
    """DRF's JSON parser that refuses bodies nested too deeply to decode."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as error:
            # json decodes nesting recursively; 1,000 levels exhaust the stack.
            raise ParseError("JSON nested too deeply.") from error
