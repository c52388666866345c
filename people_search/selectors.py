"""Find people of a household: household members and address-book contacts."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import Count, F, OuterRef, QuerySet, Window
from django.db.models.functions import JSONObject

from contacts.models import Address, Contact, ContactChannel, ContactStatus
from household.models import Household, Membership, MembershipStatus
from people_search.matching import Query, matches, name_rank

DEFAULT_CONTACT_STATUSES = (ContactStatus.ACTIVE, ContactStatus.PENDING)


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
    contacts = Contact.objects.filter(household=household, status__in=statuses)
    if kind:
        contacts = contacts.filter(kind=kind)
    if channel:
        channel_kind, channel_value = channel
        contacts = contacts.filter(
            pk__in=ContactChannel.objects.filter(
                household=household, kind=channel_kind, value=channel_value
            ).values("contact_id")
        )
    if query and not query.is_empty:
        contacts = contacts.filter(matches(query, phone_field="phone_digits"))
    contacts = contacts.annotate(
        rank=name_rank(query),
        sort_key=F("sort_name"),
        total=Window(Count("pk")),
        channel_list=ArraySubquery(
            ContactChannel.objects.filter(contact=OuterRef("pk"))
            .order_by("pk")
            .values(json=JSONObject(kind="kind", value="value", label="label"))
        ),
        address_list=ArraySubquery(
            Address.objects.filter(contact=OuterRef("pk"))
            .order_by("pk")
            .values(
                json=JSONObject(
                    kind="kind",
                    line1="line1",
                    line2="line2",
                    postcode="postcode",
                    city="city",
                    country="country",
                )
            )
        ),
    ).order_by("rank", "sort_name", "pk")
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
    memberships = Membership.objects.filter(
        household=household, profile__deleted_at__isnull=True
    ).exclude(status=MembershipStatus.REMOVED)
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
