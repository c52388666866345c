"""Teach drf-spectacular about the agent API's bearer tokens and strict inputs."""

from typing import Any

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import PolymorphicProxySerializer


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "household.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A token from `manage.py issue_token USERNAME`.",
        }


class StrictSerializerExtension(OpenApiSerializerExtension):
    """Document that a StrictSerializer refuses keys it does not declare."""

    target_class = "yorik.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: AutoSchema, direction: str) -> Any:
        schema = auto_schema._map_serializer(
            self.target, direction, bypass_extensions=True
        )
        schema["additionalProperties"] = False
        return schema


class TaggedUnionFieldExtension(OpenApiSerializerFieldExtension):
    """Document a TaggedUnionField as a oneOf with its tag as discriminator."""

    target_class = "yorik.serializers.TaggedUnionField"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> Any:
        proxy = PolymorphicProxySerializer(
            component_name=self.target.component_name,
            serializers=self.target.shapes,
            resource_type_field_name=self.target.tag,
        )
        return auto_schema.resolve_serializer(proxy, direction).ref
