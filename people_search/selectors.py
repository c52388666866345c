"""Find people of a household: household members and address-book contacts."""

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import F, Model, Q

from contacts.models import DEFAULT_CONTACT_STATUSES, Contact, normalize_channel_value
from contacts.selectors import (
    CONTACTS,
    contact_details,
    contact_filters,
)
from household.models import Household, Lead, LeadAccess, Membership, Role
from household.selectors import (
    LEADS,
    MEMBERS,
    leads_visible_to,
    live_members,
    visible_leads,
)
from people_search.engine.matching import (
    Reason,
    Tier,
    match_reason,
    returned_count,
    strongest_rows,
)
from people_search.engine.query import Query, parse_query
from people_search.engine.similar import lane_name, query_words
from people_search.engine.sql import Statement, sql
from people_search.engine.statements import Table, first_matches, grouped_matches
from people_search.index.models import Subject
from people_search.index.similar import (
    find_similar_names,
    similar_name_ids,
    with_heard_words,
)
from people_search.personal_words import learned_rows, learned_statement
from yorik.sizes import household_rows, one_plan_fits


def _rows(statement: Statement) -> list[dict[str, Any]]:
    """Run a search's statement; return its rows as dicts by column name.

    Through the preparing cursor where one plan serves every value of its
    text (`Statement.prepare`), so PostgreSQL plans it once per connection;
    else through Django's cursor, planned for each call's values.
    """
    with (
        connection.preparing_cursor() if statement.prepare else connection.cursor()
    ) as cursor:
        cursor.execute(statement.sql, statement.params)
        names = [column.name for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@dataclass(frozen=True)
class Match:
    """A matching row with what orders it: its tier, whether it lacks the
    query's title, then its folded name."""

    tier: int
    untitled: int
    sort_name: str
    row: dict[str, Any]


@dataclass(frozen=True)
class Found:
    """The first matches of one source, how many matched, and the best of them.

    `best_tier` is the strongest tier among all the source's matches (None
    when nothing matched), `best_untitled` whether its first row lacks the
    query's title, and `best_count` how many of the first matches share both:
    2 or more when several do.
    """

    matches: list[Match]
    count: int
    best_tier: int | None = None
    best_untitled: int = 0
    best_count: int = 0

    @property
    def best(self) -> tuple[int, int] | None:
        """Return what orders the source's best rows: tier, then title."""
        if self.best_tier is None:
            return None
        return (self.best_tier, self.best_untitled)


def _found(
    table: Table,
    *,
    model: type[Model],
    household: Household,
    query: Query | None,
    filters: Statement,
    details: Statement,
    similar_ids: Collection[int],
    limit: int,
    to_row: Callable[[dict[str, Any]], dict],
) -> Found:
    """Return the first matches of one source, read in one statement.

    Its LIMIT reaches the database, so the rows' details are read for the
    first rows only; the weak matches give way here. Two rows at least are
    read, to tell whether the best tier is shared. A household with few rows
    of the model (`one_plan_fits`) is read row by row.
    """
    values = _rows(
        first_matches(
            table,
            household_id=household.pk,
            query=query,
            filters=filters,
            details=details,
            similar_ids=similar_ids,
            limit=max(limit, 2),
            scanning=one_plan_fits(model, household_id=household.pk),
        )
    )
    if not values:
        return Found(matches=[], count=0)
    first_value = values[0]

    def best(value: dict[str, Any]) -> tuple[int, int]:
        return (value["match_tier"], value["match_untitled"])

    return Found(
        matches=[
            Match(
                tier=value["match_tier"],
                untitled=value["match_untitled"],
                sort_name=value["sort_key"],
                row=to_row(value),
            )
            for value in strongest_rows(values[:limit])
        ],
        count=returned_count(
            total=first_value["match_total"], strong=first_value["match_strong"]
        ),
        best_tier=first_value["match_tier"],
        best_untitled=first_value["match_untitled"],
        best_count=sum(best(value) == best(first_value) for value in values),
    )


@dataclass(frozen=True)
class Merged:
    """The best rows of several sources in one order, and what they add up to."""

    rows: list[dict[str, Any]]
    count: int
    ambiguous: bool


def merge_found(founds: Sequence[Found], *, limit: int) -> Merged:
    """Return the best rows of several sources, ordered by tier, title, then name.

    A source whose matches all sit inside words gives way to a source with
    stronger ones, as inside one source. The answer is ambiguous when more
    than one row shares the best tier (and title, when the query has one).
    """
    best = _best(founds)
    if best is not None and best[0] < Tier.INSIDE:
        founds = [found for found in founds if found.best_tier != Tier.INSIDE]
    matches = sorted(
        (match for found in founds for match in found.matches),
        key=lambda match: (match.tier, match.untitled, match.sort_name),
    )
    return Merged(
        rows=[match.row for match in matches[:limit]],
        count=sum(found.count for found in founds),
        ambiguous=sum(f.best_count for f in founds if f.best == best) > 1,
    )


def _best(founds: Sequence[Found]) -> tuple[int, int] | None:
    """Return what orders the best rows of several sources."""
    return min((f.best for f in founds if f.best is not None), default=None)


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
    return _found(
        CONTACTS,
        model=Contact,
        household=household,
        query=query,
        filters=contact_filters(
            household_id=household.pk, statuses=statuses, kind=kind, channel=channel
        ),
        details=contact_details(household_id=household.pk),
        similar_ids=similar_ids,
        limit=limit,
        to_row=lambda value: _contact_row(
            value, Reason.CHANNEL if channel else match_reason(query, value)
        ),
    )


def _contact_row(value: Mapping[str, Any], match: str | None) -> dict[str, Any]:
    return {
        "source": "contacts",
        "id": value["id"],
        "display_name": value["display_name"],
        "relation": value["relation"],
        "kind": value["kind"],
        "channels": _json_list(value["channels"]),
        "addresses": _json_list(value["addresses"]),
        "match": match,
    }


def _household_row(value: Mapping[str, Any], match: str | None) -> dict[str, Any]:
    return {
        "source": "household",
        "id": value["profile_id"],
        "name": _full_name(value["first_name"], value["last_name"]),
        "first_name": value["first_name"],
        "last_name": value["last_name"],
        "role": value["role"],
        "email": value["email"],
        "match": match,
    }


def _json_list(texts: Sequence[str]) -> list[Any]:
    """Return the JSON objects of an array of jsonb, which comes as their texts."""
    return [json.loads(text) for text in texts]


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
    speaker: Membership | None = None,
) -> PersonRows:
    """Return the household's people and contacts a query or channel finds, best first.

    The rows the speaker's own words name come first (`find_learned`); then
    rows of every source, ordered by how strongly they match, then by name.
    One SELECT per source searched; when nobody matches by name, the
    similar-name lane looks for typos (managed children, whose names are
    never embedded, scored beside its rows) and each source it found
    candidates in is read once more. When the rows found only start with a
    term ("Katrina" for "Katrin"), the household's names heard as it but
    spelled otherwise ("Catrin") are looked up, and the sources read once
    more with them. A channel value that cannot be read raises a
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

    def lookup(
        members: Collection[int] | None,
        contacts: Collection[int] | None,
        query: Query | None = parsed,
    ):
        """Search the sources given ids for (None: skip it), one SELECT each."""
        household_found = contacts_found = None
        if members is not None:
            household_found = find_household_people(
                household=household,
                query=query,
                role=role,
                limit=limit,
                similar_ids=members,
            )
        if contacts is not None:
            contacts_found = find_contacts(
                household=household,
                query=query,
                kind=kind,
                statuses=statuses,
                channel=channel,
                limit=limit,
                similar_ids=contacts,
            )
        return household_found, contacts_found

    contacts_too = source in ("contacts", "auto")
    learned = find_learned(
        household=household,
        speaker=speaker,
        query=None if channel else parsed,
        contact_filters=(
            contact_filters(household_id=household.pk, statuses=statuses, kind=kind)
            if contacts_too
            else None
        ),
        member_filters=live_members(role=role) if people else None,
    )
    household_found, contacts = lookup(
        () if people else None, () if contacts_too else None
    )
    nobody = not (household_found and household_found.count) and not (
        contacts and contacts.count
    )
    if nobody and parsed and not channel and not learned:
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
            household_id=household.pk,
            query=parsed,
            subjects=subjects,
            unembedded=_child_names(household, query=parsed, role=role)
            if people
            else None,
            rows=subject_rows(household.pk, subjects),
        )
        members, similar_contacts = (
            similar.get(Subject.MEMBER),
            similar.get(Subject.CONTACT),
        )
        if members or similar_contacts:
            household_found, contacts = lookup(
                members or None, similar_contacts or None
            )
    elif parsed and not channel and not learned:
        best = _best([f for f in (household_found, contacts) if f is not None])
        if best is not None and best[0] > Tier.WORD:
            heard = with_heard_words(household_id=household.pk, query=parsed)
            if heard is not None:
                household_found, contacts = lookup(
                    () if people else None, () if contacts_too else None, heard
                )
    found = [f for f in (household_found, contacts) if f is not None]
    merged = merge_found(found, limit=limit)
    contact_ids = []
    if contacts and contacts.best == _best(found) and contacts.best_count > 1:
        contact_ids = [row["id"] for row in merged.rows if row["source"] == "contacts"]
    return learned_first(
        learned,
        PersonRows(
            rows=merged.rows,
            count=merged.count,
            ambiguous=merged.ambiguous,
            contact_ids=contact_ids,
        ),
        limit=limit,
    )


def find_learned(
    *,
    household: Household,
    speaker: Membership | None,
    query: Query | None,
    contact_filters: Statement | None,
    member_filters: Statement | None,
) -> list[dict[str, Any]]:
    """Return the rows the speaker's own words name for the query, by name.

    One SELECT, none when the speaker taught nothing; a source whose filters
    are None is not searched.
    """
    values = learned_rows(
        speaker=speaker,
        query=query,
        read=lambda key: _rows(
            learned_statement(
                household_id=household.pk,
                member_id=speaker.pk,
                key=key,
                contact_details=contact_details(household_id=household.pk),
                contact_filters=contact_filters,
                member_filters=member_filters,
            )
        ),
    )
    rows: dict[tuple[str, int], tuple[str, dict[str, Any]]] = {}
    for value in values:
        if value["id"] is not None:
            row = _contact_row(value, Reason.LEARNED)
            sort_name = value["display_name"].casefold()
        elif value["profile_id"] is not None:
            row = _household_row(value, Reason.LEARNED)
            sort_name = value["person_sort_name"]
        else:  # A contact or member the query's source and filters leave out.
            continue
        rows.setdefault((row["source"], row["id"]), (sort_name, row))
    return [row for _, row in sorted(rows.values(), key=lambda pair: pair[0])]


def learned_first(
    learned: list[dict[str, Any]], found: PersonRows, *, limit: int
) -> PersonRows:
    """Return the learned rows first, then the other rows found.

    The answer is not ambiguous when exactly one row is learned; several
    learned contacts are the picker's rows.
    """
    if not learned:
        return found
    seen = {(row["source"], row["id"]) for row in learned}
    others = [row for row in found.rows if (row["source"], row["id"]) not in seen]
    learned_contacts = [row["id"] for row in learned if row["source"] == "contacts"]
    return PersonRows(
        rows=[*learned, *others][:limit],
        count=found.count + len(learned) - (len(found.rows) - len(others)),
        ambiguous=len(learned) > 1,
        contact_ids=learned_contacts if len(learned_contacts) > 1 else [],
    )


def _child_names(
    household: Household, *, query: Query, role: str | None
) -> dict[tuple[str, int], str]:
    """Return the names of the household's live managed children by
    membership, as the similar-name lane's unembedded rows (none when `role`
    asks for another role).

    Only names with a word starting as each word of the query does are
    read: a typo seldom hits the first letter, and scoring every child of a
    large household would cost more than the lane itself.
    """
    name = lane_name(query)
    initials = sorted({word[0] for word in query_words(name or "")})
    if role not in (None, Role.CHILD) or not initials:
        return {}
    starts = Q()
    for initial in initials:
        starts &= Q(profile__match_text__contains=f" {initial}")
    return {
        (Subject.MEMBER, pk): " ".join(filter(None, (first, last)))
        for pk, first, last in Membership.objects.live(household=household)
        .filter(starts, role=Role.CHILD)
        .values_list("pk", "profile__first_name", "profile__last_name")
    }


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
    return _found(
        MEMBERS,
        model=Membership,
        household=household,
        query=query,
        filters=live_members(role=role),
        details=sql("m.role, m.profile_id, p.first_name, p.last_name, p.email"),
        similar_ids=similar_ids,
        limit=limit,
        to_row=lambda value: _household_row(value, match_reason(query, value)),
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
        subjects = [Subject.MEMBER, Subject.LEAD]
        for candidate in find_similar_names(
            household_id=household.pk,
            name=parsed.text,
            subjects=subjects,
            rows=subject_rows(household.pk, subjects),
        ):
            similar[candidate.subject].add(candidate.subject_id)

    member_rows = _people_hits(
        MEMBERS,
        parsed,
        model=Membership,
        household=household,
        filters=live_members(),
        fields=_MEMBER_FIELDS,
        similar_ids=similar[Subject.MEMBER],
        to_row=_member_row,
        similar_apart=True,
    )
    lead_rows = []
    if actor.lead_access != LeadAccess.NONE:
        lead_rows = _people_hits(
            LEADS,
            parsed,
            model=Lead,
            household=household,
            filters=leads_visible_to(actor),
            fields=_LEAD_FIELDS,
            similar_ids=similar[Subject.LEAD],
            to_row=_lead_row,
        )
    return PeopleResults(members=member_rows, leads=lead_rows)


_SUBJECT_MODELS: dict[str, type[Model]] = {
    Subject.MEMBER: Membership,
    Subject.LEAD: Lead,
    Subject.CONTACT: Contact,
}


def subject_rows(household_id: int, subjects: Sequence[str]) -> int:
    """Return how many rows of the name index's subjects the household has,
    as yorik.sizes counts them: with few, the similar-name lane reads them
    all in one statement."""
    return sum(
        household_rows(_SUBJECT_MODELS[subject], household_id=household_id)
        for subject in subjects
    )


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
        .values(
            "pk",
            "profile_id",
            "role",
            "status",
            **{field: F(f"profile__{field}") for field in _PROFILE_FIELDS},
        )
    }
    lead_values = {
        value["pk"]: value
        for value in visible_leads(actor=actor)
        .filter(pk__in=[hit["lead_id"] for hit in leads])
        .values("pk", *_LEAD_COLUMNS)
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


# What people search reads of each member and lead, as their rows and as SQL.
_PROFILE_FIELDS = ("first_name", "last_name", "username", "email", "phone")
_LEAD_COLUMNS = ("status", "archived", "first_name", "last_name", "email", "phone")
_MEMBER_FIELDS = sql(
    "m.id AS pk, m.profile_id, m.role, m.status, "
    + ", ".join(f"p.{field}" for field in _PROFILE_FIELDS)
)
_LEAD_FIELDS = sql("l.id AS pk, " + ", ".join(f"l.{c}" for c in _LEAD_COLUMNS))


def _member_row(value: Mapping[str, Any], match: str) -> dict[str, Any]:
    return {
        "kind": "member",
        "membership_id": value["pk"],
        "profile_id": value["profile_id"],
        "name": _full_name(value["first_name"], value["last_name"])
        or value["username"],
        "email": value["email"],
        "phone": value["phone"],
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
    table: Table,
    query: Query,
    *,
    model: type[Model],
    household: Household,
    filters: Statement,
    fields: Statement,
    similar_ids: set[int],
    to_row: Callable[[Mapping[str, Any], str], dict[str, Any]],
    similar_apart: bool = False,
) -> list[dict[str, Any]]:
    """Return up to 8 hits of one group, literal matches before similar names.

    Within each, by name: people search keeps its spec's order rather than
    the match tiers, whose rules decide who is found. Rows that match only
    inside a word give way to stronger ones (`strongest_rows`' rule): they
    sort last here, after the at most 8 similar names, so the first 24 rows
    hold every hit either way. `similar_apart` reads the literal matches and
    the similar names apart (`grouped_matches`): a member's name is on its
    profile while the similar names are membership ids.
    """
    values = _rows(
        grouped_matches(
            table,
            household_id=household.pk,
            query=query,
            filters=filters,
            fields=fields,
            similar_ids=similar_ids,
            similar_apart=similar_apart,
            limit=FIRST_ROWS,
            scanning=one_plan_fits(model, household_id=household.pk),
        )
    )
    strong = [value for value in values if value["match_group"] == 0]
    similar = [value for value in values if value["match_group"] == 1]
    literal = strong or [value for value in values if value["match_group"] == 2]
    return [
        to_row(value, _people_match(match_reason(query, value)))
        for value in [*literal, *similar][:MAX_HITS]
    ]


def _people_match(reason: str) -> str:
    """Return people search's match for a row: phone, email, name or similar_name.

    Aliases, relations and nicknames are ways a name matched.
    """
    if reason in (Reason.PHONE, Reason.EMAIL, Reason.SIMILAR_NAME):
        return reason
    return Reason.NAME
