"""JSON Schema of DRF serializers: manifests and tools are read off the validators."""

from typing import Any

from rest_framework import fields, serializers

from yorik.serializers import TaggedUnionField


def serializer_schema(serializer: serializers.Serializer) -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12 subset) of an object serializer."""
    properties = {}
    required = []
    for name, field in serializer.fields.items():
        if field.read_only:
            continue
        properties[name] = field_schema(field)
        if field.required:
            required.append(name)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def field_schema(field: fields.Field) -> dict[str, Any]:
    """Return the JSON Schema of one serializer field."""
    schema = _type_schema(field)
    if field.help_text:
        schema["description"] = str(field.help_text)
    if field.default is not fields.empty and not callable(field.default):
        schema["default"] = field.default
    if getattr(field, "allow_null", False):
        schema["type"] = [schema["type"], "null"]
    return schema


def _type_schema(field: fields.Field) -> dict[str, Any]:
    if isinstance(field, TaggedUnionField):
        return {
            "oneOf": [serializer_schema(shape()) for shape in field.shapes.values()]
        }
    if isinstance(field, serializers.Serializer):
        return serializer_schema(field)
    if isinstance(field, serializers.ListSerializer | serializers.ListField):
        items = (
            serializer_schema(field.child)
            if isinstance(field, serializers.ListSerializer)
            else field_schema(field.child)
        )
        schema = {"type": "array", "items": items}
        if field.min_length is not None:
            schema["minItems"] = field.min_length
        if field.max_length is not None:
            schema["maxItems"] = field.max_length
        return schema
    if isinstance(field, serializers.ChoiceField):
        choices = list(field.choices)
        kind = "integer" if all(isinstance(c, int) for c in choices) else "string"
        return {"type": kind, "enum": choices}
    if isinstance(field, serializers.BooleanField):
        return {"type": "boolean"}
    if isinstance(field, serializers.IntegerField):
        return _bounded({"type": "integer"}, field)
    if isinstance(field, serializers.FloatField | serializers.DecimalField):
        return _bounded({"type": "number"}, field)
    if isinstance(field, serializers.DateTimeField):
        return {"type": "string", "format": "date-time"}
    if isinstance(field, serializers.DateField):
        return {"type": "string", "format": "date"}
    if isinstance(field, serializers.UUIDField):
        return {"type": "string", "format": "uuid"}
    if isinstance(field, serializers.DictField | serializers.JSONField):
        return {"type": "object"}
    if isinstance(field, serializers.CharField):
        schema: dict[str, Any] = {"type": "string"}
        if field.max_length is not None:
            schema["maxLength"] = field.max_length
        if field.min_length is not None:
            schema["minLength"] = field.min_length
        return schema
    raise TypeError(f"No JSON Schema for {type(field).__name__}.")


def _bounded(schema: dict[str, Any], field: fields.Field) -> dict[str, Any]:
    if field.min_value is not None:
        schema["minimum"] = field.min_value
    if field.max_value is not None:
        schema["maximum"] = field.max_value
    return schema
