"""Find people of a household: household members and address-book contacts."""

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import F, Model, QuerySet

from contacts.aggregates import addresses_array, channels_array
from contacts.models import DEFAULT_CONTACT_STATUSES, Contact, normalize_channel_value
from contacts.selectors import CONTACT_COLUMNS, match_contacts
from household.models import Household, Lead, LeadAccess, Membership
from household.selectors import PERSON_COLUMNS, visible_leads
from people_search.engine.matching import (
    FirstMatches,
    MatchColumns,
    Reason,
    Tier,
    every_row,
    find_matches,
    match_columns,
    match_group,
    match_parameters,
    match_reason,
    match_shape,
    match_values,
    parameter_markers,
    returned_count,
    scanning_rows,
    similar_parameters,
    similar_rows,
    strongest_rows,
    trigram_served,
)
from people_search.engine.query import Query, parse_query
from people_search.index.models import Subject
from people_search.index.similar import find_similar_names, similar_name_ids
from yorik.compiled import CompiledShapes
from yorik.sizes import one_plan_fits


@dataclass(frozen=True)
class Match:
    """A matching row with what orders it: its tier, then its folded name."""

    tier: int
    sort_name: str
    row: dict[str, Any]


@dataclass(frozen=True)
class Found:
    """The first matches of one source, how many matched, and the best of them.

    `best_tier` is the strongest tier among all the source's matches (None
    when nothing matched) and `best_count` how many of the first matches share
    it: 2 or more when several do.
    """

    matches: list[Match]
    count: int
    best_tier: int | None = None
    best_count: int = 0


@dataclass(frozen=True)
class _Plan:
    """How a search's SELECT reads a household's rows, and how often it is
    planned.

    A household with few rows of the model (`one_plan_fits`) is read row by
    row (`scanning_rows`), with one plan per connection. A larger one is
    read through the indexes: with one plan per connection too when the
    trigram indexes answer every term whatever its value (`trigram_served`),
    else (a term of two letters, which has no trigram) with a plan for each
    call's values. The SQL differs by `scanning` only.
    """

    scanning: bool
    prepared: bool

    @classmethod
    def of(
        cls, model: type[Model], *, household: Household, query: Query | None
    ) -> "_Plan":
        scanning = one_plan_fits(model, household_id=household.pk)
        return cls(scanning=scanning, prepared=scanning or trigram_served(query))


def _found(
    shape: Hashable,
    build: Callable[..., QuerySet],
    *,
    first: FirstMatches,
    model: type[Model],
    household: Household,
    query: Query | None,
    similar_ids: Collection[int],
    limit: int,
    to_row: Callable[[dict[str, Any]], dict],
    channel_value: str | None = None,
) -> Found:
    """Evaluate a `find_matches` query with a sort_key in one SELECT (`first`).

    `build(household_id=…, channel_value=…)` makes the query, and is called
    once per `shape` (what the SQL depends on besides those values) and
    query shape: the SQL is kept compiled (`_SOURCE_ROWS`). Its LIMIT
    reaches the database, so the rows' details are read for the first rows
    only; the weak matches give way here. Two rows at least are read, to
    tell whether the best tier is shared. How the SELECT is written and
    planned depends on the household's size and the query (`_Plan`).
    """
    plan = _Plan.of(model, household=household, query=query)

    def narrow(*, household_id: int, channel_value: str | None, match: Any):
        with parameter_markers(match), scanning_rows(plan.scanning):
            return FirstMatches.narrow(
                build(household_id=household_id, channel_value=channel_value)
            )

    values = first.rows(
        _SOURCE_ROWS.statement(
            (shape, match_shape(query, similar_ids=similar_ids), plan.scanning),
            narrow,
            household_id=household.pk,
            channel_value=channel_value,
            match=match_parameters(query, similar_ids=similar_ids),
        ),
        limit=max(limit, 2),
        prepared=plan.prepared,
    )
    if not values:
        return Found(matches=[], count=0)
    first_value = values[0]
    return Found(
        matches=[
            Match(
                tier=value["match_tier"],
                sort_name=value["sort_key"],
                row=to_row(value),
            )
            for value in strongest_rows(values[:limit])
        ],
        count=returned_count(
            total=first_value["match_total"], strong=first_value["match_strong"]
        ),
        best_tier=first_value["match_tier"],
        best_count=sum(
            value["match_tier"] == first_value["match_tier"] for value in values
        ),
    )


# The narrow SELECT of find_person's sources, kept compiled for each shape:
# building and compiling it cost Django three quarters of the skill's CPU.
_SOURCE_ROWS = CompiledShapes(household_id=int, channel_value=str, match=tuple)


@dataclass(frozen=True)
class Merged:
    """The best rows of several sources in one order, and what they add up to."""

    rows: list[dict[str, Any]]
    count: int
    ambiguous: bool


def merge_found(founds: Sequence[Found], *, limit: int) -> Merged:
    """Return the best rows of several sources, ordered by tier, then by name.

    A source whose matches all sit inside words gives way to a source with
    stronger ones, as inside one source. The answer is ambiguous when more
    than one row shares the best tier.
    """
    best = min((f.best_tier for f in founds if f.best_tier is not None), default=None)
    if best is not None and best < Tier.INSIDE:
        founds = [found for found in founds if found.best_tier != Tier.INSIDE]
    matches = sorted(
        (match for found in founds for match in found.matches),
        key=lambda match: (match.tier, match.sort_name),
    )
    return Merged(
        rows=[match.row for match in matches[:limit]],
        count=sum(found.count for found in founds),
        ambiguous=sum(f.best_count for f in founds if f.best_tier == best) > 1,
    )


def find_contacts(
    *,
    household: Household,
    query: Query | None = None,
    kind: str | None = None,
    statuses: Sequence[str] = DEFAULT_CONTACT_STATUSES,
    channel: tuple[str, str] | None = None,
    limit: int = 10,
    similar_ids: Collection[int] = (),
) -> Found:
    """Return the household's matching contacts, best first, with their channels
    and addresses, in one SELECT.

    `channel` is a (kind, normalised value) pair, answered from its index;
    `similar_ids` are contacts the similar-name lane found.
    """

    def build(*, household_id: int, channel_value: str | None) -> QuerySet:
        contacts = match_contacts(
            household=Household(pk=household_id),
            query=query,
            statuses=statuses,
            kind=kind,
            channel=(channel[0], channel_value) if channel else None,
            similar_ids=similar_ids,
        )
        return contacts.annotate(sort_key=F("sort_name"))

    return _found(
        ("contacts", tuple(statuses), kind, channel[0] if channel else None),
        build,
        first=_FIRST_CONTACTS,
        model=Contact,
        household=household,
        query=query,
        similar_ids=similar_ids,
        limit=limit,
        channel_value=channel[1] if channel else None,
        to_row=lambda value: {
            "source": "contacts",
            "id": value["id"],
            "display_name": value["display_name"],
            "relation": value["relation"],
            "kind": value["kind"],
            "channels": value["channel_list"],
            "addresses": value["address_list"],
            "match": (
                Reason.CHANNEL
                if channel
                else match_reason(query, value, CONTACT_COLUMNS)
            ),
        },
    )


@dataclass(frozen=True)
class PersonRows:
    """find_person's answer: the best rows of every source and how many matched.

    `ambiguous` when more than one row shares the best match strength;
    `contact_ids` are the contacts among the rows when several contacts do,
    for a picker card.
    """

    rows: list[dict[str, Any]]
    count: int
    ambiguous: bool
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

    Rows of every source are ordered by how strongly they match, then by
    name. One SELECT per source searched; when nobody matches by name, the
    similar-name lane looks for typos and each source it found candidates in
    is read once more. A channel value that cannot be read raises a
    ValidationError naming `channel_value`.
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
    # A channel lookup is about contacts; in auto mode it must not list every
    # household member just because no query was given.
    people = source == "household" or (
        source == "auto" and (parsed is not None or not channel)
    )

    def lookup(members: Collection[int] | None, contacts: Collection[int] | None):
        """Search the sources given ids for (None: skip it), one SELECT each."""
        household_found = contacts_found = None
        if members is not None:
            household_found = find_household_people(
                household=household,
                query=parsed,
                role=role,
                limit=limit,
                similar_ids=members,
            )
        if contacts is not None:
            contacts_found = find_contacts(
                household=household,
                query=parsed,
                kind=kind,
                statuses=statuses,
                channel=channel,
                limit=limit,
                similar_ids=contacts,
            )
        return household_found, contacts_found

    contacts_too = source in ("contacts", "auto")
    household_found, contacts = lookup(
        () if people else None, () if contacts_too else None
    )
    nobody = not (household_found and household_found.count) and not (
        contacts and contacts.count
    )
    if nobody and parsed and not channel:
        # Nobody by name: the typo lane, in the sources it has candidates in.
        subjects = [
            subject
            for subject, searched in (
                (Subject.MEMBER, people),
                (Subject.CONTACT, contacts_too),
            )
            if searched
        ]
        similar = similar_name_ids(
            household_id=household.pk, query=parsed, subjects=subjects
        )
        members, similar_contacts = (
            similar.get(Subject.MEMBER),
            similar.get(Subject.CONTACT),
        )
        if members or similar_contacts:
            household_found, contacts = lookup(
                members or None, similar_contacts or None
            )
    found = [f for f in (household_found, contacts) if f is not None]
    merged = merge_found(found, limit=limit)
    contact_ids = []
    best = min((f.best_tier for f in found if f.best_tier is not None), default=None)
    if contacts and contacts.best_tier == best and contacts.best_count > 1:
        contact_ids = [row["id"] for row in merged.rows if row["source"] == "contacts"]
    return PersonRows(
        rows=merged.rows,
        count=merged.count,
        ambiguous=merged.ambiguous,
        contact_ids=contact_ids,
    )


def find_household_people(
    *,
    household: Household,
    query: Query | None = None,
    role: str | None = None,
    limit: int = 10,
    similar_ids: Collection[int] = (),
) -> Found:
    """Return the household's matching people, best first, in one SELECT.

    Removed memberships and deleted profiles are never found; `similar_ids`
    are memberships the similar-name lane found.
    """

    def build(*, household_id: int, channel_value: None) -> QuerySet:
        memberships = Membership.objects.live(household=Household(pk=household_id))
        if role:
            memberships = memberships.filter(role=role)
        if query and not query.is_empty:
            memberships = find_matches(
                memberships,
                query=query,
                columns=MEMBER_COLUMNS,
                similar_ids=similar_ids,
            )
        else:
            memberships = every_row(memberships)
        return memberships.annotate(sort_key=F("profile__sort_name"))

    return _found(
        ("household", role),
        build,
        first=_FIRST_PEOPLE,
        model=Membership,
        household=household,
        query=query,
        similar_ids=similar_ids,
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
            "match": match_reason(query, value, MEMBER_COLUMNS),
        },
    )


MEMBER_COLUMNS = PERSON_COLUMNS.under("profile")
# What find_person reads of each first contact and member.
_FIRST_CONTACTS = FirstMatches(
    lambda: Contact.objects.annotate(
        channel_list=channels_array(), address_list=addresses_array()
    ).values(
        "id",
        "display_name",
        "relation",
        "kind",
        *match_columns(CONTACT_COLUMNS),
        "channel_list",
        "address_list",
    )
)
_FIRST_PEOPLE = FirstMatches(
    lambda: Membership.objects.values(
        "role",
        *match_columns(MEMBER_COLUMNS),
        "profile_id",
        "profile__first_name",
        "profile__last_name",
        "profile__email",
    )
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
        ("members",),
        lambda household_id, actor_id: Membership.objects.live(
            household=Household(pk=household_id)
        ),
        parsed,
        model=Membership,
        household=household,
        similar_ids=similar[Subject.MEMBER],
        columns=MEMBER_COLUMNS,
        sort_name="profile__sort_name",
        fields=MEMBER_FIELDS,
        to_row=_member_row,
        similar_apart=True,
    )
    lead_rows = []
    if actor.lead_access != LeadAccess.NONE:
        lead_access = actor.lead_access
        lead_rows = _people_hits(
            ("leads", lead_access),
            lambda household_id, actor_id: visible_leads(
                actor=Membership(
                    pk=actor_id, household_id=household_id, lead_access=lead_access
                )
            ),
            parsed,
            model=Lead,
            household=household,
            # Only the leads the actor owns name the actor.
            actor_id=actor.pk if lead_access == LeadAccess.OWN else None,
            similar_ids=similar[Subject.LEAD],
            columns=PERSON_COLUMNS,
            sort_name="sort_name",
            fields=LEAD_FIELDS,
            to_row=_lead_row,
        )
    return PeopleResults(members=member_rows, leads=lead_rows)


def people_with_ids(
    *,
    household: Household,
    actor: Membership,
    members: Sequence[Mapping[str, Any]],
    leads: Sequence[Mapping[str, Any]],
) -> PeopleResults:
    """Return stored hits ({membership_id or lead_id, match}) as the rows are now.

    Members no longer live and leads the actor may not see are left out; the
    stored order is kept.
    """
    member_values = {
        value["pk"]: value
        for value in Membership.objects.live(household=household)
        .filter(pk__in=[hit["membership_id"] for hit in members])
        .values(*MEMBER_FIELDS)
    }
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
        # find_person's contacts lane, typo fallback included.
        contacts = find_person_rows(
            household=household,
            query=query,
            source="contacts",
            statuses=DEFAULT_CONTACT_STATUSES,
            limit=limit,
        )
        items += [
            {
                "kind": "contact",
                "contact_id": row["id"],
                "name": row["display_name"],
                "relation": row["relation"],
                "contact_kind": row["kind"],
            }
            for row in contacts.rows
        ]
    return items


def _full_name(first: str, last: str) -> str:
    return " ".join(part for part in (first, last) if part)


def _people_hits(
    shape: Hashable,
    group: Callable[[int, int | None], QuerySet],
    query: Query,
    *,
    model: type[Model],
    household: Household,
    actor_id: int | None = None,
    similar_ids: set[int],
    columns: MatchColumns,
    sort_name: str,
    fields: Sequence[str],
    to_row: Callable[[Mapping[str, Any], str], dict[str, Any]],
    similar_apart: bool = False,
) -> list[dict[str, Any]]:
    """Return up to 8 hits of one group, literal matches before similar names.

    Within each, by name: people search keeps its spec's order rather than
    the match tiers, whose rules decide who is found. Rows that match only
    inside a word give way to stronger ones (`rank_matches`' rule): they sort
    last here, after the at most 8 similar names, so the first 24 rows hold
    every hit either way. `group(household_id, actor_id)` makes the group's
    rows of `model`; the SELECT is kept compiled per `shape` and query shape
    (`_GROUP_ROWS`), and written and planned as `_Plan` says.

    With `similar_apart` the literal matches and the similar names are read
    in one SELECT as a UNION, each through its own index: a member's name is
    on its profile while the similar names are membership ids, and one WHERE
    testing both tables read every membership and profile of the household.
    That SELECT is kept compiled too (`_APART_ROWS`), the ids bound as one
    array: built and compiled per call it cost Django 3 to 4 ms, and the larger
    the household, the more often the lane finds similar members.
    """

    def hits(rows: QuerySet) -> QuerySet:
        return rows.annotate(
            match_group=match_group(query, columns=columns, similar_ids=similar_ids),
            sort_key=F(sort_name),
        ).values(*match_values(columns, grouped=True), *fields, "sort_key")

    order = ("match_group", "sort_key", "pk")
    plan = _Plan.of(model, household=household, query=query)
    if similar_ids and similar_apart:

        def union(
            *,
            household_id: int,
            actor_id: int | None,
            literal: Any,
            similar: Any,
            ids: Any,
        ) -> QuerySet:
            rows = group(household_id, actor_id)
            with scanning_rows(plan.scanning):
                with parameter_markers(literal):
                    found = find_matches(rows, query=query, columns=columns)
                with parameter_markers(ids):
                    apart = similar_rows(rows, similar_ids=similar_ids)
                with parameter_markers(similar):
                    both = hits(found).union(hits(apart))
            return both.order_by(*order)[:FIRST_ROWS]

        values = _APART_ROWS.values(
            (
                shape,
                match_shape(query),
                match_shape(query, similar_ids=similar_ids),
                plan.scanning,
            ),
            union,
            prepared=plan.prepared,
            household_id=household.pk,
            actor_id=actor_id,
            literal=match_parameters(query),
            similar=match_parameters(query, similar_ids=similar_ids),
            ids=similar_parameters(similar_ids),
        )
    else:

        def build(*, household_id: int, actor_id: int | None, match: Any) -> QuerySet:
            with parameter_markers(match), scanning_rows(plan.scanning):
                rows = find_matches(
                    group(household_id, actor_id),
                    query=query,
                    columns=columns,
                    similar_ids=similar_ids,
                )
                return hits(rows).order_by(*order)[:FIRST_ROWS]

        values = _GROUP_ROWS.values(
            (shape, match_shape(query, similar_ids=similar_ids), plan.scanning),
            build,
            prepared=plan.prepared,
            household_id=household.pk,
            actor_id=actor_id,
            match=match_parameters(query, similar_ids=similar_ids),
        )
    strong = [value for value in values if value["match_group"] == 0]
    similar = [value for value in values if value["match_group"] == 1]
    literal = strong or [value for value in values if value["match_group"] == 2]
    return [
        to_row(value, _people_match(match_reason(query, value, columns)))
        for value in [*literal, *similar][:MAX_HITS]
    ]


# People search's SELECT of one group, kept compiled for each shape; and of
# a group whose literal matches and similar names are read apart.
_GROUP_ROWS = CompiledShapes(household_id=int, actor_id=int, match=tuple)
_APART_ROWS = CompiledShapes(
    household_id=int, actor_id=int, literal=tuple, similar=tuple, ids=tuple
)


def _people_match(reason: str) -> str:
    """Return people search's match for a row: phone, email, name or similar_name.

    Aliases, relations and nicknames are ways a name matched.
    """
    if reason in (Reason.PHONE, Reason.EMAIL, Reason.SIMILAR_NAME):
        return reason
    return Reason.NAME
