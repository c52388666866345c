"""Answers are written exactly as their output serializers declare them."""

import json
import uuid

import pytest
from rest_framework.utils.encoders import JSONEncoder

from tests.yorik.test_skill_costs import book, caller  # noqa: F401 - fixtures
from yorik.registry import get_skill
from yorik.serializers import output_writer

CALLS = [
    ("find_person", {"query": "Müller"}),
    ("find_person", {"query": "Müller", "source": "household"}),
    ("find_person", {"channel_kind": "phone", "channel_value": "030 1234560"}),
    ("people_search", {"query": "Dana"}),
    ("search_anything", {"query": "Müller"}),
    ("list_contacts_for_picking", {"defer_card": True}),
    ("find_known_provider", {"category": "dentist"}),
]


def as_json(data):
    return json.loads(json.dumps(data, cls=JSONEncoder))


@pytest.mark.parametrize(("name", "inputs"), CALLS)
def test_the_writer_writes_what_the_serializer_writes(caller, book, name, inputs):  # noqa: F811
    found = get_skill(name)
    validated = found.input_serializer(data=inputs)
    validated.is_valid(raise_exception=True)
    answer = found.run(caller, **validated.validated_data)
    data = dict(answer.data)
    if answer.card is not None:
        data["card"] = {"id": uuid.uuid4(), "kind": answer.card.kind, "url": "/c"}
    data["undeclared"] = "dropped"

    written = output_writer(found.output_serializer)(data)

    assert as_json(written) == as_json(found.output_serializer(data).data)
    assert "undeclared" not in written


def test_a_missing_required_field_is_an_error_not_a_silent_gap():
    with pytest.raises(KeyError, match="count"):
        output_writer(get_skill("find_person").output_serializer)({"results": []})
