"""The agent API's turn routing and usage reporting; the pages of a member's
own words: undoing what a pick taught, and the list of their words."""

from urllib.parse import urlencode
from uuid import UUID

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods, require_POST
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from household.selectors import membership_for_user
from household.services import record_usage
from people_search.personal_words import delete_word, forget_lesson, words_of
from people_search.skills import PeopleSearchOutput
from people_search.turns import take_turn
from yorik.api import ERRORS, AgentApiView, answer_data
from yorik.cards import open_card
from yorik.serializers import StrictCharField, StrictIntegerField, StrictSerializer
from yorik.views import link_visits_throttled, personal_page, render_page


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


@require_POST
@personal_page
@link_visits_throttled
def forget_pick(request: HttpRequest, card_id: UUID) -> HttpResponse:
    """Forget what a card's pick taught, for whoever may open the card."""
    token = request.POST.get("t", "")
    opened = open_card(card_id=card_id, user=request.user, token=token)
    if opened is None:
        raise Http404("No such card.")
    forget_lesson(opened.card)
    query = urlencode({**({"t": token} if token else {}), "forgotten": 1}, safe=":")
    return redirect(f"{opened.card.get_absolute_url()}?{query}")


class DeleteWordForm(forms.Form):
    word_id = forms.IntegerField(min_value=1)


@require_http_methods(["GET", "POST"])
@login_required
@personal_page
def my_words(request: HttpRequest, lang: str) -> HttpResponse:
    """List the viewer's own words and name choices; POST deletes one."""
    member = membership_for_user(request.user)
    if member is None:
        raise PermissionDenied("You are not a member of a household.")
    if request.method == "POST":
        form = DeleteWordForm(request.POST)
        if form.is_valid():
            delete_word(member=member, word_id=form.cleaned_data["word_id"])
        return redirect(request.path)
    return render_page(
        request,
        "people_search/my_words.html",
        {"household": member.household, "words": words_of(member), "lang": lang},
        language=lang,
    )
