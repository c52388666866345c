"""Serializer building blocks shared by skills, pages and imports."""

from typing import Any

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """A serializer that rejects keys it does not declare instead of ignoring them."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {key: ["Unknown field."] for key in unknown}
                )
        return super().to_internal_value(data)


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
