"""The agent API: list skills, export them as tools, and call them."""

from typing import Any
from uuid import UUID

from django.http import HttpRequest
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from yorik.cards import card_link, create_card, find_card
from yorik.registry import (
    Answer,
    Skill,
    get_skill,
    manifests_for_tier,
    tools_for_tier,
)
from yorik.serializers import (
    StrictChoiceField,
    StrictSerializer,
    output_writer,
    validated_inputs,
)
from yorik.throttling import TokenRateThrottle


class ErrorSerializer(serializers.Serializer):
    error = inline_serializer(
        "ErrorDetail",
        fields={
            "code": serializers.CharField(),
            "message": serializers.CharField(),
            "fields": serializers.DictField(
                child=serializers.ListField(child=serializers.CharField()),
                required=False,
            ),
        },
    )


# 406: every answer is JSON, so an Accept header without it is refused.
ERRORS = {status: ErrorSerializer for status in (400, 401, 403, 404, 406, 429)}


class AgentApiView(APIView):
    """A view of the agent API, throttled per token."""

    throttle_classes = [TokenRateThrottle]
    throttle_scope = "skills"


def allowed_skill(request: Request | HttpRequest, name: str) -> Skill:
    """Return the named skill if the caller's tier may call it, else raise."""
    found = get_skill(name)
    if found is None:
        raise exceptions.NotFound(f"No skill named {name!r}.")
    if request.user.tier not in found.permissions:
        raise exceptions.PermissionDenied(
            f"Skill {name!r} is not available to the {request.user.tier} tier."
        )
    return found


ManifestSerializer = inline_serializer(
    "SkillManifest",
    fields={
        "name": serializers.CharField(),
        "description": serializers.CharField(),
        "when_to_use": serializers.CharField(),
        "inputs": serializers.DictField(),
        "outputs": serializers.DictField(),
        "cost": serializers.CharField(),
        "permissions": serializers.ListField(child=serializers.CharField()),
        "side_effects": serializers.CharField(),
        "tags": serializers.ListField(child=serializers.CharField()),
    },
)


class SkillListView(AgentApiView):
    @extend_schema(
        operation_id="list_skills",
        summary="The skills the caller may call, as manifests",
        responses={
            200: inline_serializer(
                "SkillList", fields={"skills": ManifestSerializer.__class__(many=True)}
            ),
            **ERRORS,
        },
    )
    def get(self, request: Request) -> Response:
        return Response({"skills": list(manifests_for_tier(request.user.tier))})


class SkillDetailView(AgentApiView):
    @extend_schema(
        operation_id="get_skill",
        summary="One skill's manifest",
        responses={200: ManifestSerializer, **ERRORS},
    )
    def get(self, request: Request, name: str) -> Response:
        found = allowed_skill(request, name)
        manifests = manifests_for_tier(request.user.tier)
        return Response(next(m for m in manifests if m["name"] == found.name))


class FlavorSerializer(StrictSerializer):
    flavor = StrictChoiceField(["openai", "anthropic"], default="openai")


class ToolListView(AgentApiView):
    @extend_schema(
        operation_id="list_tools",
        summary="The caller's skills as function-calling tool definitions",
        parameters=[
            OpenApiParameter("flavor", enum=["openai", "anthropic"], default="openai")
        ],
        responses={
            200: inline_serializer(
                "ToolList", fields={"tools": serializers.ListField()}
            ),
            **ERRORS,
        },
    )
    def get(self, request: Request) -> Response:
        # A plain dict: an empty ?flavor= is refused rather than read as unset.
        query = FlavorSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        flavor = query.validated_data["flavor"]
        return Response({"tools": list(tools_for_tier(request.user.tier, flavor))})


class SkillCallView(AgentApiView):
    """Validate the inputs, run the skill, add the card it emits."""

    skill_name: str | None = None

    def post(self, request: Request, name: str | None = None) -> Response:
        found = allowed_skill(request, self.skill_name or name or "")
        return Response(call_skill(request, found, request.data))


def call_skill(
    request: Request | HttpRequest, found: Skill, inputs: Any
) -> dict[str, Any]:
    """Validate the inputs, run the skill and return its answer as written out.

    REST and MCP both call skills through here, so they validate, answer and
    store cards alike; the caller's tier is checked before (allowed_skill).
    """
    if not isinstance(inputs, dict):
        raise exceptions.ValidationError(
            {"": ["The body must be a JSON object of the skill's inputs."]}
        )
    answer = found.run(request.user, **validated_inputs(found.input_serializer, inputs))
    return answer_data(request, answer, found.output_serializer)


def answer_data(
    request: Request | HttpRequest, answer: Answer, output: type[serializers.Serializer]
) -> dict[str, Any]:
    """Return a skill's answer written by its output serializer, with its card.

    The card the answer asks for is stored and referenced by id, kind and a
    signed link. Only the fields the output serializer declares go out.
    """
    data: dict[str, Any] = dict(answer.data)
    if answer.card is not None:
        card = create_card(
            household=request.user.household,
            kind=answer.card.kind,
            payload=answer.card.payload,
            created_by=request.user.profile,
            pick_to_chat=answer.card.pick_to_chat,
        )
        data["card"] = {
            "id": card.pk,
            "kind": card.kind,
            "url": request.build_absolute_uri(card_link(card)),
        }
    return output_writer(output)(data)


@extend_schema(exclude=True)  # Each skill's own route is documented instead.
class AnySkillCallView(SkillCallView):
    """Answer calls to names that have no route of their own: unknown skills."""


def skill_call_view(skill: Skill) -> type[SkillCallView]:
    """Return a call view documented with this skill's request and response."""
    response = skill.output_serializer

    @extend_schema(
        operation_id=f"call_{skill.name}",
        summary=skill.description,
        description=skill.when_to_use,
        request=skill.input_serializer,
        responses={200: response, **ERRORS},
        tags=["skills"],
    )
    def post(self: SkillCallView, request: Request) -> Response:
        return SkillCallView.post(self, request)

    return type(
        f"{skill.name.title().replace('_', '')}CallView",
        (SkillCallView,),
        {"skill_name": skill.name, "post": post},
    )


class PickedSerializer(serializers.Serializer):
    source = serializers.ChoiceField(
        ["contacts", "household"],
        help_text="Which id space `id` is in, as on find_person's rows.",
    )
    id = serializers.IntegerField(
        help_text="A contact id, or for source household a user id."
    )
    contact_id = serializers.IntegerField(
        required=False, help_text="The contact's id; on contact picks only."
    )
    user_id = serializers.IntegerField(
        required=False, help_text="The member's user id; on household picks only."
    )
    display_name = serializers.CharField()
    picked_at = serializers.DateTimeField(help_text="When the latest pick was made.")


class CardReadSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField(help_text="The card's kind, e.g. contact_picker.")
    url = serializers.URLField(
        help_text="The card's page, through a fresh signed link."
    )
    pick_to_chat = serializers.BooleanField()
    query = serializers.CharField(
        required=False, help_text="The header text, on cards that have one."
    )
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    picked = PickedSerializer(
        allow_null=True,
        help_text=(
            "The contact (or household member) the person picked last, or null."
        ),
    )
    declined = serializers.BooleanField(
        required=False,
        help_text=(
            "Present (true) when the person chose none of the rows; picked is "
            "then null."
        ),
    )


class CardDetailView(AgentApiView):
    """Read back a card the caller emitted, to continue after a pick."""

    @extend_schema(
        operation_id="get_card",
        summary="A card the assistant emitted, with the contact picked on it",
        description=(
            "Poll after emitting a card with pick_to_chat: `picked` stays null "
            "until the person picks a contact on the card's page, and then "
            "follows the latest pick while the card's link lives (the person may "
            "change it). `declined: true` says they chose none of these. Only "
            "the card's creator reads it: other members' cards, like other "
            "households', are 404."
        ),
        responses={200: CardReadSerializer, **ERRORS},
        tags=["cards"],
    )
    def get(self, request: Request, card_id: UUID) -> Response:
        card = find_card(caller=request.user, card_id=card_id)
        if card is None:
            raise exceptions.NotFound("No such card.")
        data: dict[str, Any] = {
            "id": card.pk,
            "kind": card.kind,
            "url": request.build_absolute_uri(card_link(card)),
            "pick_to_chat": card.pick_to_chat,
            "created_at": card.created_at,
            "expires_at": card.expires_at,
            "picked": None,
        }
        if "query" in card.payload:
            data["query"] = card.payload["query"]
        if card.picked_contact is not None:
            data["picked"] = {
                "source": "contacts",
                "id": card.picked_contact.pk,
                "contact_id": card.picked_contact.pk,
                "display_name": str(card.picked_contact),
                "picked_at": card.picked_at,
            }
        elif card.picked_profile is not None:
            data["picked"] = {
                "source": "household",
                "id": card.picked_profile.pk,
                "user_id": card.picked_profile.pk,
                "display_name": str(card.picked_profile),
                "picked_at": card.picked_at,
            }
        if card.declined:
            data["declined"] = True
        return Response(CardReadSerializer(data).data)
