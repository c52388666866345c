"""The API's answers are written exactly as DRF's own JSON renderer writes them."""

import datetime
import decimal
import json
import uuid
import zoneinfo

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from people_search.engine.matching import Reason
from yorik.renderers import FastJSONRenderer

BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")

VALUES = {
    "text": {"name": "Jürgen Müller-Lüdenscheidt", "quote": 'say "hi"\n\\'},
    "numbers": [0, -7, 2**40, 1.5, 0.1 + 0.2, True, False, None],
    "beyond 64 bits": {"big": 2**70},
    "datetimes": [
        datetime.datetime(2026, 12, 3, 14, 5, tzinfo=datetime.UTC),
        datetime.datetime(2026, 12, 3, 14, 5, 0, 120, tzinfo=BERLIN),
        datetime.datetime(2026, 12, 3, 14, 5),  # noqa: DTZ001 - naive, as DRF may get one
        datetime.date(2026, 12, 3),
        datetime.time(14, 5, 30),
        datetime.timedelta(days=1, seconds=3),
    ],
    "other types": {
        "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "decimal": decimal.Decimal("12.50"),
        "lazy": gettext_lazy("Something"),
        "enum": Reason.NICKNAME,
        "tuple": (1, "a"),
        "set": {3},
    },
    "line separators": ["a\u2028b", "c\u2029d"],
    "empty": {},
}


@pytest.mark.parametrize("kind", VALUES)
def test_the_fast_renderer_writes_what_drf_writes(kind):
    value = VALUES[kind]

    assert FastJSONRenderer().render(value) == JSONRenderer().render(value)


def test_a_float_in_exponent_form_is_the_same_number():
    value = [1e-7, 1e16, -2.5e-300]

    written = FastJSONRenderer().render(value)

    assert json.loads(written) == json.loads(JSONRenderer().render(value)) == value


def test_nothing_is_written_as_nothing_and_indent_is_honoured():
    assert FastJSONRenderer().render(None) == b""
    indented = "application/json; indent=2"
    assert FastJSONRenderer().render({"a": [1]}, indented) == JSONRenderer().render(
        {"a": [1]}, indented
    )
