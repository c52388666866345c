"""The agent API's turn routing and usage reporting."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from household.services import record_usage
from people_search.skills import PeopleSearchOutput
from people_search.turns import take_turn
from yorik.api import ERRORS, AgentApiView, answer_data
from yorik.serializers import StrictCharField, StrictIntegerField, StrictSerializer


class TurnInput(StrictSerializer):
    conversation_id = StrictIntegerField(
        required=False, min_value=1, help_text="Leave out to start a conversation."
    )
    message = StrictCharField(max_length=4000, trim_whitespace=False)


class TurnView(AgentApiView):
    @extend_schema(
        operation_id="take_turn",
        summary="Route a user's message: direct lookup, model router, or blocked",
        request=TurnInput,
        responses={
            200: inline_serializer(
                "Turn",
                fields={
                    "lane": serializers.ChoiceField(["direct", "router", "blocked"]),
                    "conversation_id": serializers.IntegerField(),
                    "title": serializers.CharField(required=False),
                    "result": serializers.DictField(required=False),
                    "card": serializers.DictField(required=False),
                    "error": serializers.DictField(required=False),
                    "banner": serializers.CharField(required=False),
                },
            ),
            **ERRORS,
        },
        tags=["agent"],
    )
    def post(self, request: Request) -> Response:
        inputs = TurnInput(data=request.data)
        inputs.is_valid(raise_exception=True)
        turn = take_turn(
            membership=request.user.membership,
            conversation_id=inputs.validated_data.get("conversation_id"),
            message=inputs.validated_data["message"],
        )
        data = turn.data()
        if turn.answer is not None:
            answer = answer_data(request, turn.answer, PeopleSearchOutput)
            data["card"] = answer.pop("card")
            data["result"] = answer
        return Response(data)


class UsageInput(StrictSerializer):
    conversation_id = StrictIntegerField(required=False, min_value=1)
    tokens = StrictIntegerField(min_value=1, max_value=10_000_000)


class UsageView(AgentApiView):
    @extend_schema(
        operation_id="report_usage",
        summary="Report model tokens spent for the caller",
        request=UsageInput,
        responses={
            200: inline_serializer(
                "Usage",
                fields={
                    "used": serializers.IntegerField(),
                    "allowance": serializers.IntegerField(),
                    "over_budget": serializers.BooleanField(),
                },
            ),
            **ERRORS,
        },
        tags=["agent"],
    )
    def post(self, request: Request) -> Response:
        inputs = UsageInput(data=request.data)
        inputs.is_valid(raise_exception=True)
        used, allowance = record_usage(
            membership=request.user.membership,
            conversation_id=inputs.validated_data.get("conversation_id"),
            tokens=inputs.validated_data["tokens"],
        )
        return Response(
            {"used": used, "allowance": allowance, "over_budget": used >= allowance}
        )
