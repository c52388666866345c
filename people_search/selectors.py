"""Find people of a household: household members and address-book contacts."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Case, Count, F, Q, QuerySet, When, Window

from contacts.aggregates import addresses_array, channels_array
from contacts.models import DEFAULT_CONTACT_STATUSES, normalize_channel_value
from contacts.selectors import browse_contacts
from household.models import Household, LeadAccess, Membership
from household.selectors import visible_leads
from people_search.engine.matching import Query, matches, name_rank, parse_query
from people_search.engine.models import Subject
from people_search.engine.similar import find_similar_names
from people_search.engine.text import fold_name, search_document


@dataclass(frozen=True)
class Match:
    """A matching row with what orders it: its rank, then its folded name."""

    rank: int
    sort_name: str
    row: dict[str, Any]


@dataclass(frozen=True)
class Found:
    """The first matches and how many rows matched in all."""

    matches: list[Match]
    count: int


def _found(
    queryset: QuerySet, *, limit: int, to_row: Callable[[dict[str, Any]], dict]
) -> Found:
    """Evaluate a query annotated with rank, sort_key and total in one SELECT."""
    values = list(queryset[:limit])
    return Found(
        matches=[
            Match(rank=value["rank"], sort_name=value["sort_key"], row=to_row(value))
            for value in values
        ],
        count=values[0]["total"] if values else 0,
    )


def merge_found(founds: Sequence[Found], *, limit: int) -> tuple[list[dict], int]:
    """Return the best rows of several sources in one order, and the total count."""
    matches = sorted(
        (match for found in founds for match in found.matches),
        key=lambda match: (match.rank, match.sort_name),
    )
    return [match.row for match in matches[:limit]], sum(f.count for f in founds)


def find_contacts(
    *,
    household: Household,
    query: Query | None = None,
    kind: str | None = None,
    statuses: Sequence[str] = DEFAULT_CONTACT_STATUSES,
    channel: tuple[str, str] | None = None,
    limit: int = 10,
) -> Found:
    """Return the household's matching contacts, best first, with their channels
    and addresses, in one SELECT.

    `channel` is a (kind, normalised value) pair, answered from its index.
    """
    contacts = browse_contacts(
        household=household,
        query=query,
        statuses=statuses,
        kind=kind,
        channel=channel,
    )
    contacts = contacts.annotate(
        sort_key=F("sort_name"),
        total=Window(Count("pk")),
        channel_list=channels_array(),
        address_list=addresses_array(),
    )
    return _found(
        contacts.values(
            "id",
            "display_name",
            "relation",
            "kind",
            "rank",
            "sort_key",
            "total",
            "channel_list",
            "address_list",
        ),
        limit=limit,
        to_row=lambda value: {
            "source": "contacts",
            "id": value["id"],
            "display_name": value["display_name"],
            "relation": value["relation"],
            "kind": value["kind"],
            "channels": value["channel_list"],
            "addresses": value["address_list"],
        },
    )


@dataclass(frozen=True)
class PersonRows:
    """find_person's answer: the best rows of every source and how many matched.

    `contact_ids` are the contacts among the rows, for a picker card.
    """

    rows: list[dict[str, Any]]
    count: int
    contact_ids: list[int]


def find_person_rows(
    *,
    household: Household,
    query: str,
    source: str,
    statuses: Sequence[str],
    limit: int,
    kind: str | None = None,
    role: str | None = None,
    channel_kind: str | None = None,
    channel_value: str | None = None,
) -> PersonRows:
    """Return the household's people and contacts a query or channel finds, best first.

    One SELECT per source searched. A channel value that cannot be read
    raises a ValidationError naming `channel_value`.
    """
    parsed = parse_query(query, region=household.default_region) if query else None
    channel = None
    if channel_kind and channel_value:
        try:
            channel = (
                channel_kind,
                normalize_channel_value(
                    channel_kind, channel_value, household.default_region
                ),
            )
        except ValueError as error:
            raise ValidationError({"channel_value": str(error)}) from error
    found = []
    # A channel lookup is about contacts; in auto mode it must not list every
    # household member just because no query was given.
    if source == "household" or (source == "auto" and (parsed or not channel)):
        found.append(
            find_household_people(
                household=household, query=parsed, role=role, limit=limit
            )
        )
    contact_ids = []
    if source in ("contacts", "auto"):
        contacts = find_contacts(
            household=household,
            query=parsed,
            kind=kind,
            statuses=statuses,
            channel=channel,
            limit=limit,
        )
        found.append(contacts)
        if contacts.count > 1:
            contact_ids = [match.row["id"] for match in contacts.matches]
    rows, count = merge_found(found, limit=limit)
    return PersonRows(rows=rows, count=count, contact_ids=contact_ids)


def find_household_people(
    *,
    household: Household,
    query: Query | None = None,
    role: str | None = None,
    limit: int = 10,
) -> Found:
    """Return the household's matching people, best first, in one SELECT.

    Removed memberships and deleted profiles are never found.
    """
    memberships = Membership.objects.live(household=household)
    if role:
        memberships = memberships.filter(role=role)
    if query and not query.is_empty:
        memberships = memberships.filter(
            matches(
                query,
                text_field="profile__search_text",
                phone_field="profile__phone_nsn",
            )
        )
    memberships = memberships.annotate(
        rank=name_rank(query, name_field="profile__sort_name"),
        sort_key=F("profile__sort_name"),
        total=Window(Count("pk")),
    ).order_by("rank", "profile__sort_name", "pk")
    return _found(
        memberships.values(
            "role",
            "rank",
            "sort_key",
            "total",
            "profile_id",
            "profile__first_name",
            "profile__last_name",
            "profile__email",
        ),
        limit=limit,
        to_row=lambda value: {
            "source": "household",
            "id": value["profile_id"],
            "name": " ".join(
                filter(
                    None, [value["profile__first_name"], value["profile__last_name"]]
                )
            ),
            "first_name": value["profile__first_name"],
            "last_name": value["profile__last_name"],
            "role": value["role"],
            "email": value["profile__email"],
        },
    )


MAX_HITS = 8
FIRST_ROWS = 24
MIN_QUERY_LENGTH = 2


@dataclass(frozen=True)
class PeopleResults:
    members: list[dict[str, Any]]
    leads: list[dict[str, Any]]


def search_people(
    *, household: Household, actor: Membership, query: str
) -> PeopleResults:
    """Return the members and leads a query finds, as the actor may see them.

    Text, phone and similar-name matches; literal matches first, similar
    names after, each by name; at most 8 per group out of the first 24 rows.
    """
    parsed = parse_query(query, region=household.default_region)
    if len(parsed.text) < MIN_QUERY_LENGTH:
        return PeopleResults(members=[], leads=[])
    similar: dict[str, set[int]] = {Subject.MEMBER: set(), Subject.LEAD: set()}
    if parsed.has_letter and not parsed.looks_like_email:
        for candidate in find_similar_names(
            household_id=household.pk,
            name=parsed.text,
            subjects=[Subject.MEMBER, Subject.LEAD],
        ):
            similar[candidate.subject].add(candidate.subject_id)

    member_rows = _people_hits(
        Membership.objects.live(household=household),
        parsed,
        similar_ids=similar[Subject.MEMBER],
        prefix="profile__",
        fields=MEMBER_FIELDS,
        to_row=_member_row,
    )
    lead_rows = []
    if actor.lead_access != LeadAccess.NONE:
        lead_rows = _people_hits(
            visible_leads(actor=actor),
            parsed,
            similar_ids=similar[Subject.LEAD],
            prefix="",
            fields=LEAD_FIELDS,
            to_row=_lead_row,
        )
    return PeopleResults(members=member_rows, leads=lead_rows)


def people_with_ids(
    *,
    household: Household,
    actor: Membership | None,
    members: Sequence[Mapping[str, Any]],
    leads: Sequence[Mapping[str, Any]],
) -> PeopleResults:
    """Return stored hits ({membership_id or lead_id, match}) as the rows are now.

    Members no longer live and leads the actor may not see (all, without an
    actor) are left out; the stored order is kept.
    """
    member_values = {
        value["pk"]: value
        for value in Membership.objects.live(household=household)
        .filter(pk__in=[hit["membership_id"] for hit in members])
        .values(*MEMBER_FIELDS)
    }
    lead_values = {}
    if actor is not None:
        lead_values = {
            value["pk"]: value
            for value in visible_leads(actor=actor)
            .filter(pk__in=[hit["lead_id"] for hit in leads])
            .values(*LEAD_FIELDS)
        }
    return PeopleResults(
        members=[
            _member_row(member_values[hit["membership_id"]], hit["match"])
            for hit in members
            if hit["membership_id"] in member_values
        ],
        leads=[
            _lead_row(lead_values[hit["lead_id"]], hit["match"])
            for hit in leads
            if hit["lead_id"] in lead_values
        ],
    )


MEMBER_FIELDS = (
    "pk",
    "profile_id",
    "role",
    "status",
    "profile__first_name",
    "profile__last_name",
    "profile__username",
    "profile__email",
    "profile__phone",
)
LEAD_FIELDS = (
    "pk",
    "status",
    "archived",
    "first_name",
    "last_name",
    "email",
    "phone",
)


def _member_row(value: Mapping[str, Any], match: str) -> dict[str, Any]:
    return {
        "kind": "member",
        "membership_id": value["pk"],
        "profile_id": value["profile_id"],
        "name": _full_name(value["profile__first_name"], value["profile__last_name"])
        or value["profile__username"],
        "email": value["profile__email"],
        "phone": value["profile__phone"],
        "role": value["role"],
        "status": value["status"],
        "match": match,
    }


def _lead_row(value: Mapping[str, Any], match: str) -> dict[str, Any]:
    return {
        "kind": "lead",
        "lead_id": value["pk"],
        "name": _full_name(value["first_name"], value["last_name"]) or value["email"],
        "email": value["email"],
        "phone": value["phone"],
        "status": value["status"],
        "archived": value["archived"],
        "match": match,
    }


def search_everything(
    *,
    household: Household,
    actor: Membership,
    query: str,
    scopes: Sequence[str],
    limit: int,
) -> list[dict[str, Any]]:
    """Return members, then leads (people search's rules), then contacts."""
    items = []
    if {"members", "leads"} & set(scopes):
        found = search_people(household=household, actor=actor, query=query)
        items += [*found.members, *found.leads]
    parsed = parse_query(query, region=household.default_region)
    if "contacts" in scopes and len(parsed.text) >= MIN_QUERY_LENGTH:
        contacts = find_contacts(household=household, query=parsed, limit=limit)
        items += [
            {
                "kind": "contact",
                "contact_id": match.row["id"],
                "name": match.row["display_name"],
                "relation": match.row["relation"],
                "contact_kind": match.row["kind"],
            }
            for match in contacts.matches
        ]
    return items


def _full_name(first: str, last: str) -> str:
    return " ".join(part for part in (first, last) if part)


def _people_hits(
    queryset: QuerySet,
    query: Query,
    *,
    similar_ids: set[int],
    prefix: str,
    fields: Sequence[str],
    to_row: Callable[[Mapping[str, Any], str], dict[str, Any]],
) -> list[dict[str, Any]]:
    """Return up to 8 hits of one group, literal matches before similar names."""
    literal = matches(
        query, text_field=f"{prefix}search_text", phone_field=f"{prefix}phone_nsn"
    )
    similar = Q(pk__in=similar_ids)
    values = list(
        queryset.filter(literal | similar)
        .annotate(is_literal=Case(When(literal, then=True), default=False))
        .order_by("-is_literal", f"{prefix}sort_name", "pk")
        .values(
            "is_literal",
            f"{prefix}phone_nsn",
            *fields,
        )[:FIRST_ROWS]
    )
    return [
        to_row(
            value,
            _match_kind(query, value, prefix)
            if value["is_literal"]
            else "similar_name",
        )
        for value in values[:MAX_HITS]
    ]


def _match_kind(query: Query, value: dict[str, Any], prefix: str) -> str:
    """Return how a literal hit matched: phone, email or name."""
    if query.phone_digits and query.phone_digits in value[f"{prefix}phone_nsn"]:
        return "phone"
    email = fold_name(value[f"{prefix}email"])
    if email and all(term in email for term in query.terms):
        names = search_document(
            value[f"{prefix}first_name"], value[f"{prefix}last_name"]
        )
        if not all(term in names for term in query.terms):
            return "email"
    return "name"
