"""Route the user's messages before any model runs: the direct lane and the budget gate.

A new conversation that opens with just an email address or a complete, valid
phone number is answered by people search directly, without a model. Once a
member is over their monthly model budget, such lookups are all the
assistant can still answer, in any conversation.
"""

import re
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from household.models import Conversation, Membership
from household.selectors import conversation_of, is_over_budget
from household.services import start_conversation
from people_search.cards import PEOPLE_RESULTS, people_results_payload
from people_search.engine.phones import is_valid_phone
from people_search.selectors import search_people
from yorik.registry import Answer, CardRequest

_TRAILING_PUNCTUATION = "?!.,;:"
_EMAIL = re.compile(r"[^\s@]+@[^\s@]+")

BUDGET_BANNER = "You can still look someone up: type just their phone number or email."


def direct_people_query(message: str, *, region: str) -> str | None:
    """Return the lookup a message is, when it is only an email or a valid phone.

    Trailing ?!.,;: are dropped. A phone must start with 0 or + and be a
    complete, valid number; dates, amounts and partial numbers are not direct.
    """
    text = message.strip().rstrip(_TRAILING_PUNCTUATION).strip()
    if _EMAIL.fullmatch(text):
        return text
    if text[:1] in "0+" and is_valid_phone(text, region):
        return text
    return None


def people_search_answer(*, membership: Membership, query: str) -> Answer:
    """Return people search's answer and the people_results card that shows it."""
    found = search_people(household=membership.household, actor=membership, query=query)
    items = [*found.members, *found.leads]
    return Answer(
        {"items": items, "totalCount": len(items)},
        CardRequest(kind=PEOPLE_RESULTS, payload=people_results_payload(query, found)),
    )


@dataclass(frozen=True)
class Turn:
    """Which lane a message takes, and what the service answered itself."""

    lane: str
    conversation: Conversation
    answer: Answer | None = None

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "lane": self.lane,
            "conversation_id": self.conversation.pk,
        }
        if self.lane == "direct":
            data["title"] = self.conversation.title
        if self.lane == "blocked":
            data["error"] = {
                "code": "agent_budget_exceeded",
                "message": "This month's assistant budget is used up.",
            }
            data["banner"] = BUDGET_BANNER
        return data


@transaction.atomic
def take_turn(
    *, membership: Membership, conversation_id: int | None, message: str
) -> Turn:
    """Decide the lane of a user's message and answer direct lookups."""
    if conversation_id is None:
        conversation = start_conversation(membership=membership)
    else:
        try:
            conversation = conversation_of(
                membership=membership, conversation_id=conversation_id
            )
        except Conversation.DoesNotExist:
            raise Conversation.DoesNotExist(
                f"No conversation with id {conversation_id}."
            ) from None
    first = conversation.turn_count == 0
    conversation.turn_count += 1
    over_budget = is_over_budget(membership=membership)
    query = direct_people_query(message, region=membership.household.default_region)
    if query and (first or over_budget):
        if first:
            conversation.title = message[:200]
        conversation.save(update_fields=["turn_count", "title"])
        return Turn(
            "direct",
            conversation,
            people_search_answer(membership=membership, query=query),
        )
    conversation.save(update_fields=["turn_count"])
    return Turn("blocked" if over_budget else "router", conversation)
