"""The skill registry: what the assistant may call, discovered from apps' skills.py."""

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from rest_framework import serializers

from yorik.schema import serializer_schema


@dataclass(frozen=True)
class CardRequest:
    """A card a skill asks to emit alongside its answer."""

    kind: str
    payload: dict[str, Any]
    pick_to_chat: bool = True


@dataclass(frozen=True)
class Answer:
    """What a skill returns: its outputs, and the card to show, if any."""

    data: dict[str, Any]
    card: CardRequest | None = None


@dataclass(frozen=True)
class ToolAnnotations:
    """What a skill does to the world, as MCP's tool annotations tell clients.

    The defaults describe a read-only skill; a skill that writes declares its
    own, so clients can ask before calling it.
    """

    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False


READ_ONLY = ToolAnnotations()


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    when_to_use: str
    input_serializer: type[serializers.Serializer]
    output_serializer: type[serializers.Serializer]
    run: Callable[..., Answer]
    cost: str
    permissions: tuple[str, ...]
    side_effects: str
    tags: tuple[str, ...] = field(default=())
    annotations: ToolAnnotations = READ_ONLY

    @property
    def title(self) -> str:
        """Return the name as a person reads it: find_person is "Find person"."""
        return self.name.replace("_", " ").capitalize()

    def manifest(self) -> dict[str, Any]:
        """Return the manifest, its inputs and outputs read off the serializers."""
        inputs = serializer_schema(self.input_serializer())
        outputs = serializer_schema(self.output_serializer())
        return {
            "name": self.name,
            "description": self.description,
            "when_to_use": self.when_to_use,
            "inputs": _manifest_fields(inputs),
            "outputs": _manifest_fields(outputs),
            "cost": self.cost,
            "permissions": list(self.permissions),
            "side_effects": self.side_effects,
            "tags": list(self.tags),
        }

    def parameters(self) -> dict[str, Any]:
        """Return the JSON Schema of the inputs, for function-calling tools."""
        return serializer_schema(self.input_serializer())

    def output_schema(self) -> dict[str, Any]:
        """Return the JSON Schema of the answer, as the output serializer writes it."""
        return serializer_schema(self.output_serializer())

    def tool(self, flavor: str) -> dict[str, Any]:
        """Return the skill as a function-calling tool of the given vendor."""
        description = f"{self.description}\n\nWhen to use: {self.when_to_use}"
        if flavor == "anthropic":
            return {
                "name": self.name,
                "description": description,
                "input_schema": self.parameters(),
            }
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": description,
                "parameters": self.parameters(),
            },
        }


def _manifest_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """Return the per-field view the spec's manifests use: type, required, …"""
    required = set(schema.get("required", []))
    return {
        name: {"required": name in required, **prop}
        for name, prop in schema["properties"].items()
    }


_skills: dict[str, Skill] = {}


def skill(
    *,
    name: str,
    description: str,
    when_to_use: str,
    input_serializer: type[serializers.Serializer],
    output_serializer: type[serializers.Serializer],
    cost: str,
    permissions: list[str],
    side_effects: str,
    tags: list[str],
    annotations: ToolAnnotations = READ_ONLY,
) -> Callable[[Callable[..., Answer]], Callable[..., Answer]]:
    """Register the decorated function as a skill called with (caller, **inputs)."""

    def register(run: Callable[..., Answer]) -> Callable[..., Answer]:
        if name in _skills:
            raise ValueError(f"Skill {name!r} is registered twice.")
        _skills[name] = Skill(
            name=name,
            description=description,
            when_to_use=when_to_use,
            input_serializer=input_serializer,
            output_serializer=output_serializer,
            run=run,
            cost=cost,
            permissions=tuple(permissions),
            side_effects=side_effects,
            tags=tuple(tags),
            annotations=annotations,
        )
        manifests_for_tier.cache_clear()
        tools_for_tier.cache_clear()
        return run

    return register


def all_skills() -> list[Skill]:
    return sorted(_skills.values(), key=lambda s: s.name)


def get_skill(name: str) -> Skill | None:
    return _skills.get(name)


def skills_for_tier(tier: str) -> list[Skill]:
    """Return the skills a caller of the tier may call."""
    return [s for s in all_skills() if tier in s.permissions]


@cache
def manifests_for_tier(tier: str) -> tuple[dict[str, Any], ...]:
    """Return the manifests of the tier's skills, built once per tier.

    Treat them as read-only: they are shared by every request.
    """
    return tuple(s.manifest() for s in skills_for_tier(tier))


@cache
def tools_for_tier(tier: str, flavor: str) -> tuple[dict[str, Any], ...]:
    """Return the tier's skills as function-calling tools, built once per flavor."""
    return tuple(s.tool(flavor) for s in skills_for_tier(tier))
