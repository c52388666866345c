"""People search's card: people_results, the members and leads a search found."""

from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from household.callers import MemberCaller
from people_search.engine.text import holding_every_term, search_document
from people_search.selectors import PeopleResults, people_with_ids
from yorik.cards import CardType, card_search, card_type
from yorik.models import Card

PEOPLE_RESULTS = "people_results"


def people_results_payload(query: str, found: PeopleResults) -> dict[str, Any]:
    """Return what a people_results card stores: the query and the hits' ids."""
    return {
        "query": query,
        "members": [
            {"membership_id": hit["membership_id"], "match": hit["match"]}
            for hit in found.members
        ],
        "leads": [
            {"lead_id": hit["lead_id"], "match": hit["match"]} for hit in found.leads
        ],
    }


def _context(
    card: Card, reader: MemberCaller, params: Mapping[str, str]
) -> dict[str, Any]:
    """Show the hits as they are now; leads as far as the reader may see them.

    A logged-in member sees what their own lead access allows; a visitor
    through the signed link, what the card's creator may see now. `q` keeps
    the rows whose name or email holds every folded term: a card holds a
    few rows, all of them already found by the engine.
    """
    found = people_with_ids(
        household=card.household,
        actor=reader.membership,
        members=card.payload.get("members", []),
        leads=card.payload.get("leads", []),
    )
    search = card_search(params)
    members = _searched(found.members, search)
    leads = _searched(found.leads, search)
    return {
        "members": members,
        "leads": leads,
        "rows": members + leads,
        "searchable": bool(found.members or found.leads),
        "search": search,
        "found_nothing": bool(search) and not (members or leads),
    }


def _searched(hits: list[dict[str, Any]], search: str) -> list[dict[str, Any]]:
    """Return the hits that hold every term, each with its folded `search_text`."""
    documented = [
        {**hit, "search_text": search_document(hit["name"], hit["email"])}
        for hit in hits
    ]
    return holding_every_term(documented, search, document=itemgetter("search_text"))


card_type(
    CardType(
        kind=PEOPLE_RESULTS, template="cards/people_results.html", context=_context
    )
)
