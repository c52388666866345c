"""Serializer building blocks shared by skills, pages and imports."""

import threading
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail
from rest_framework.settings import api_settings

# How many of its faults a refused input names (unknown keys, bad items of a
# list): a hostile body holds a million, and naming each one costs seconds of
# a worker and megabytes of answer, where the first few tell what is wrong.
FIRST_FAULTS = 5


class StrictSerializer(serializers.Serializer):
    """A serializer that rejects keys it does not declare instead of ignoring them.

    It names the first few unknown keys, in the order sent, and counts the rest.
    """

    def to_internal_value(self, data: Any) -> Any:
        errors = _unknown_keys(data, set(self.fields)) if isinstance(data, dict) else {}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as error:
            if not isinstance(error.detail, dict):
                raise
            raise serializers.ValidationError({**error.detail, **errors}) from error
        if errors:
            raise serializers.ValidationError(errors)
        return value


def _unknown_keys(data: dict[str, Any], known: set[str]) -> dict[str, list[str]]:
    unknown = [key for key in data if key not in known]
    errors = {key: ["Unknown field."] for key in unknown[:FIRST_FAULTS]}
    if len(unknown) > FIRST_FAULTS:
        more = len(unknown) - FIRST_FAULTS
        errors[api_settings.NON_FIELD_ERRORS_KEY] = [
            f"And {more:,} more unknown field{'s' if more > 1 else ''}."
        ]
    return errors


class StrictListField(serializers.ListField):
    """An input list that is refused by its length before any item is validated.

    DRF's ListField validates every item before it compares the count with
    max_length: a body of a million items would take half a minute to refuse.
    Items are validated until the first few bad ones; the rest are not read.
    Every input list declares its max_length.
    """

    def __init__(self, *, max_length: int, **kwargs: Any) -> None:
        super().__init__(max_length=max_length, **kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, list) and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)

    def run_child_validation(self, data: list[Any]) -> list[Any]:
        values = []
        errors: dict[int | str, Any] = {}
        for index, item in enumerate(data):
            try:
                values.append(self.child.run_validation(item))
            except serializers.ValidationError as error:
                errors[index] = error.detail
            except DjangoValidationError as error:
                errors[index] = get_error_detail(error)
            if len(errors) == FIRST_FAULTS and index + 1 < len(data):
                unchecked = len(data) - index - 1
                errors[api_settings.NON_FIELD_ERRORS_KEY] = [
                    f"The {unchecked:,} items after [{index}] were not checked."
                ]
                break
        if errors:
            raise serializers.ValidationError(errors)
        return values


_instances = threading.local()


def validated_inputs(
    serializer_class: type[serializers.Serializer], data: Any
) -> dict[str, Any]:
    """Return the data as the serializer validates it; raise its ValidationError.

    Each thread keeps one instance of each serializer class and runs its
    validation again; run_validation leaves nothing of a call on the instance.
    A new instance deep-copies every declared field, which costs ten times
    what validating find_person's phone lookup does. The serializer takes no
    context.
    """
    kept = _instances.__dict__
    serializer = kept.get(serializer_class)
    if serializer is None:
        serializer = kept[serializer_class] = serializer_class()
    return serializer.run_validation(data)


class TaggedUnionField(serializers.Field):
    """An output object of one of several shapes, told apart by its tag field.

    Rows are written by the serializer their tag names, so each keeps exactly
    its declared fields; the schemas document it as a oneOf.
    """

    def __init__(
        self,
        *,
        component_name: str,
        tag: str,
        shapes: dict[str, type[serializers.Serializer]],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.component_name = component_name
        self.tag = tag
        self.shapes = shapes
        self._writers = {name: shape() for name, shape in shapes.items()}

    def to_representation(self, value: Any) -> Any:
        return self._writers[value[self.tag]].to_representation(value)


Writer = Callable[[Any], Any]


@cache
def output_writer(serializer_class: type[serializers.Serializer]) -> Writer:
    """Return a function that writes data as the output serializer declares it.

    It keeps exactly the declared fields, each written by its own field's
    to_representation, like `serializer_class(data).data`; compiled once per
    class, it skips DRF's per-field attribute lookup: a thousand browse rows
    take 1.2 ms here against 6.9 ms through `serializer_class(data).data`.
    """
    return _writer(serializer_class())


def _writer(field: serializers.Field) -> Writer:
    if isinstance(field, TaggedUnionField):
        shapes = {tag: _writer(shape()) for tag, shape in field.shapes.items()}
        return lambda value: shapes[value[field.tag]](value)
    if isinstance(field, serializers.ListSerializer):
        item = _writer(field.child)
        return lambda values: [item(value) for value in values]
    if isinstance(field, serializers.ListField):
        item = _writer(field.child)
        return lambda values: [None if v is None else item(v) for v in values]
    if isinstance(field, serializers.Serializer):
        return _object_writer(field)
    return field.to_representation


# Fields whose to_representation gives a value of this exact type back
# unchanged: str(text), int(number), float(number), and a bool as it is.
_UNCHANGED = {
    serializers.CharField: str,
    serializers.IntegerField: int,
    serializers.FloatField: float,
    serializers.BooleanField: bool,
    serializers.ChoiceField: str,
}


def _unchanged_type(field: serializers.Field) -> type | None:
    """Return the type of the values the field writes as they are, if any.

    Only while its class keeps the base class's to_representation, and for
    a choice field only when every choice is text (its writing maps "1" to
    the choice 1).
    """
    for base, kind in _UNCHANGED.items():
        if isinstance(field, base):
            kept = type(field).to_representation is base.to_representation
            if isinstance(field, serializers.ChoiceField):
                kept = kept and all(isinstance(key, str) for key in field.choices)
            return kind if kept else None
    return None


def _object_writer(serializer: serializers.Serializer) -> Writer:
    parts = [
        (name, _writer(field), field.required, _unchanged_type(field))
        for name, field in serializer.fields.items()
        if not field.write_only
    ]

    def write(data: Mapping[str, Any]) -> dict[str, Any]:
        written = {}
        for name, write_field, required, unchanged in parts:
            if name in data:
                value = data[name]
                # Most values are already what their field writes: a thousand
                # browse rows take a third of the time without the calls.
                if value is None or type(value) is unchanged:
                    written[name] = value
                else:
                    written[name] = write_field(value)
            elif required:
                raise KeyError(f"The answer lacks its required field {name!r}.")
        return written

    return write


class CardSerializer(serializers.Serializer):
    """The card a skill emitted: open its url to show it to the person."""

    id = serializers.UUIDField()
    kind = serializers.CharField()
    url = serializers.URLField()


def flatten_errors(detail: Any, path: str = "") -> list[tuple[str, str]]:
    """Return (path, message) pairs for DRF's nested error detail.

    Paths read like `contacts[3].channels[0].value`.
    """
    if isinstance(detail, dict):
        pairs = []
        for key, value in detail.items():
            if isinstance(key, int):
                child = f"{path}[{key}]"
            elif key == "non_field_errors":
                child = path
            else:
                child = f"{path}.{key}" if path else key
            pairs += flatten_errors(value, child)
        return pairs
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return [(path, str(item)) for item in detail]
        pairs = []
        for index, item in enumerate(detail):
            if item:
                pairs += flatten_errors(item, f"{path}[{index}]")
        return pairs
    return [(path, str(detail))]


class StrictCharField(serializers.CharField):
    """A string field that refuses numbers and booleans instead of coercing them.

    Its maximum length holds for the text as sent, as the schema says, not
    only once surrounding whitespace is trimmed.
    """

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """An integer field that refuses strings, floats and booleans."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A number field that refuses strings and booleans."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A boolean field that takes only JSON true and false."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data
