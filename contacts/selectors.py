"""Reads of the address book: browse lists, ranked picks, recent and single contacts."""

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import connection
from django.db.models import F, QuerySet

from contacts.models import (
    DEFAULT_CONTACT_STATUSES,
    Contact,
    ContactChannel,
    ContactStatus,
)
from household.models import Household
from people_search.engine.matching import array_text
from people_search.engine.query import Query
from people_search.engine.sql import Statement, compose
from people_search.engine.statements import Table
from people_search.index.models import Subject
from people_search.index.querysets import (
    MatchColumns,
    every_row,
    find_matches,
    without_weak_matches,
)
from people_search.index.similar import similar_name_ids
from yorik.indexes import as_bigint
from yorik.sizes import household_rows

MAX_PICKS = 10
PICKER_ROWS = 5


def statuses_for(status: str) -> tuple[str, ...]:
    """Return the contact statuses a filter means: 'any' is active and pending."""
    return tuple(DEFAULT_CONTACT_STATUSES) if status == "any" else (status,)


# Where a contact's derived columns are, for the matching engine's conditions
# on a queryset (the contact pages, admin search).
CONTACT_COLUMNS = MatchColumns(phone_digits="phone_digits", concepts="concepts")
# How a search's statement reads the household's contacts.
CONTACTS = Table(
    rows="contacts_contact AS c",
    households=("c.household_id",),
    key="c.id",
    sort_name="c.sort_name",
    search_text="c.search_text",
    match_text="c.match_text",
    phone_digits="c.phone_digits",
    concepts="c.concepts",
)


def contact_filters(
    *,
    household_id: int,
    statuses: Sequence[str],
    kind: str | None = None,
    channel: tuple[str, str] | None = None,
) -> Statement:
    """Return, on CONTACTS, the contacts of the statuses and kind, with the
    channel if given: a (kind, normalised value) pair answered from its index."""
    filters = compose(
        "c.status = ANY({statuses}::text[])", statuses=array_text(statuses)
    )
    if kind:
        filters = compose("{filters} AND c.kind = {kind}", filters=filters, kind=kind)
    if channel:
        filters = compose(
            """{filters} AND c.id IN (
                SELECT ch.contact_id FROM contacts_contactchannel AS ch
                WHERE ch.household_id = {household}::bigint
                    AND ch.kind = {kind} AND ch.value = {value}
            )""",
            filters=filters,
            household=household_id,
            kind=channel[0],
            value=channel[1],
        )
    return filters


# A contact as find_person answers it: its channels and addresses as JSON
# objects in id order (each a jsonb text, `json_list` reads them).
_CONTACT_DETAILS = """
    c.id, c.display_name, c.relation, c.kind,
    ARRAY(
        SELECT jsonb_build_object('kind', ch.kind, 'value', ch.value, 'label', ch.label)
        FROM contacts_contactchannel AS ch
        WHERE ch.contact_id = c.id AND ch.household_id = {household}::bigint
        ORDER BY ch.id
    ) AS channels,
    ARRAY(
        SELECT jsonb_build_object(
            'kind', a.kind, 'line1', a.line1, 'line2', a.line2,
            'postcode', a.postcode, 'city', a.city, 'country', a.country
        )
        FROM addresses AS a
        WHERE a.contact_id = c.id AND a.household_id = {household}::bigint
        ORDER BY a.id
    ) AS addresses
"""


def contact_details(*, household_id: int) -> Statement:
    """Return, on CONTACTS, what find_person reads of each contact it returns."""
    return compose(_CONTACT_DETAILS, household=household_id)


def match_contacts(
    *,
    household: Household,
    query: Query | None = None,
    statuses: Sequence[str] = DEFAULT_CONTACT_STATUSES,
    kind: str | None = None,
    channel: tuple[str, str] | None = None,
    similar_ids: Collection[int] = (),
) -> QuerySet[Contact]:
    """Return every contact of the statuses and kind the query matches, best first.

    Rows carry their `match_tier` and sort by the tier, whether they lack the
    query's title (`match_untitled`), then by `sort_name`, the folded display
    name (so "Ärztehaus" sorts with "A"). Those matching only inside a word
    are still here: `browse_contacts` leaves them out. `channel` is a (kind,
    normalised value) pair answered from its index.
    """
    contacts = Contact.objects.filter(
        household_id=as_bigint(household.pk), status__in=statuses
    )
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
        contacts = find_matches(
            contacts, query=query, columns=CONTACT_COLUMNS, similar_ids=similar_ids
        )
    else:
        contacts = every_row(contacts)
    return contacts.order_by("match_tier", "match_untitled", "sort_name", "pk")


def browse_contacts(
    *,
    household: Household,
    query: Query | None = None,
    statuses: Sequence[str] = DEFAULT_CONTACT_STATUSES,
    kind: str | None = None,
    channel: tuple[str, str] | None = None,
    similar_ids: Collection[int] = (),
) -> QuerySet[Contact]:
    """Return the household's contacts of the statuses and kind, best match first.

    With a query, only the contacts the matching engine finds, as
    `match_contacts` orders them, without those that match only inside a
    word while others match more strongly.
    """
    contacts = match_contacts(
        household=household,
        query=query,
        statuses=statuses,
        kind=kind,
        channel=channel,
        similar_ids=similar_ids,
    )
    if query and not query.is_empty:
        contacts = without_weak_matches(contacts)
    return contacts


def search_contacts(
    *,
    household: Household,
    query: Query | None = None,
    statuses: Sequence[str] = DEFAULT_CONTACT_STATUSES,
    kind: str | None = None,
) -> QuerySet[Contact]:
    """Return browse_contacts' answer, or similar names when it finds nobody.

    For the contact pages: a typo ("Bekker") still finds Becker, marked as a
    similar name.
    """
    contacts = browse_contacts(
        household=household, query=query, statuses=statuses, kind=kind
    )
    if query is None or query.is_empty or contacts.exists():
        return contacts
    similar = similar_name_ids(
        household_id=household.pk,
        query=query,
        subjects=[Subject.CONTACT],
        rows=household_rows(Contact, household_id=household.pk),
    )[Subject.CONTACT]
    if not similar:
        return contacts
    return browse_contacts(
        household=household,
        query=query,
        statuses=statuses,
        kind=kind,
        similar_ids=similar,
    )


# A browse answer goes into a language model's context: past this many rows,
# or this many bytes of JSON, it stops and says so (docs/architecture.md,
# "Cards and pages").
BROWSE_ROWS = 2000
BROWSE_BYTES = 380_000
# The browse's statement, written out: built and compiled by the ORM it took
# about 0.7 ms of a 14 ms call at 1,000 contacts.
_BROWSE = """\
SELECT {columns} FROM contacts_contact AS c
WHERE c.household_id = {household}::bigint AND {filters}
"""
_BROWSE_ORDER = " ORDER BY c.sort_name, c.id LIMIT {limit}"


@dataclass(frozen=True)
class AddressBookPage:
    """The first browse rows, how many contacts match in all, and whether cut."""

    rows: list[dict[str, Any]]
    count: int
    truncated: bool


def _within_bytes(rows: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Return the first rows whose JSON, as the API writes it, stays within
    the budget.

    orjson writes the answers (yorik.renderers), so it measures them: a
    thousand rows take it a few tenths of a millisecond, less than adding up
    a bound of their sizes in Python did.
    """
    if len(orjson.dumps(rows)) <= budget:
        return rows
    size = 0
    for index, row in enumerate(rows):
        size += len(orjson.dumps(row)) + 1
        if size > budget:
            return rows[:index]
    return rows


def list_address_book(
    *, household: Household, statuses: Sequence[str], kind: str | None = None
) -> AddressBookPage:
    """Return the compact browse rows {id, display_name, relation, kind}, in order.

    One SELECT, and a COUNT when the book is longer: a very large address book
    is cut after BROWSE_ROWS rows, or sooner when the rows' JSON would pass
    BROWSE_BYTES.
    """
    filters = contact_filters(household_id=household.pk, statuses=statuses, kind=kind)

    def browse(columns: str, order: str = "", **values: int) -> list[tuple]:
        statement = compose(
            _BROWSE + order,
            columns=Statement(columns),
            household=household.pk,
            filters=filters,
            **values,
        )
        with connection.cursor() as cursor:
            cursor.execute(statement.sql, statement.params)
            return cursor.fetchall()

    names = ("id", "display_name", "relation", "kind")
    rows = [
        dict(zip(names, row, strict=True))
        for row in browse(
            "c.id, c.display_name, c.relation, c.kind",
            _BROWSE_ORDER,
            limit=BROWSE_ROWS + 1,
        )
    ]
    count = len(rows)
    if count > BROWSE_ROWS:
        ((count,),) = browse("count(*)")
        rows = rows[:BROWSE_ROWS]
    rows = _within_bytes(rows, BROWSE_BYTES)
    return AddressBookPage(rows=rows, count=count, truncated=len(rows) < count)


@dataclass(frozen=True)
class PickerRow:
    """A row of a contact picker: a ranked pick, or a neutral padding row."""

    contact_id: int
    confidence: float | None = None
    reason: str = ""
    padded: bool = False
    # Why find_person found the contact (a people_search Reason value); empty
    # for ranked and padding rows, which explain themselves otherwise.
    match: str = ""

    def as_payload(self) -> dict[str, Any]:
        payload = {
            "contact_id": self.contact_id,
            "confidence": self.confidence,
            "reason": self.reason,
            "padded": self.padded,
        }
        if self.match:
            payload["match"] = self.match
        return payload


@dataclass(frozen=True)
class MemberPickerRow:
    """A household member on a contact picker: one of find_person's household rows."""

    user_id: int
    match: str = ""

    def as_payload(self) -> dict[str, Any]:
        return {"source": "household", "user_id": self.user_id, "match": self.match}


@dataclass(frozen=True)
class PickerRows:
    """The rows of a ranked picker and the ids left out because they are unseen."""

    rows: list[PickerRow]
    dropped: list[int]

    @property
    def rendered(self) -> int:
        return sum(not row.padded for row in self.rows)

    @property
    def padded(self) -> int:
        return sum(row.padded for row in self.rows)


def find_picker_rows(
    *, household: Household, ranked_picks: Iterable[Mapping[str, Any]]
) -> PickerRows:
    """Return the best picks the household can see, padded with recent contacts.

    Picks are {id, confidence, reason}, at most MAX_PICKS (the skill refuses
    more). A repeated id keeps its most confident pick; ids outside the
    household are dropped; the rest go most confident first (ties keep their
    input order); fewer than 5 are padded. Two SELECTs at most.
    """
    best: dict[int, Mapping[str, Any]] = {}
    for pick in ranked_picks:
        kept = best.get(pick["id"])
        if kept is None or pick["confidence"] > kept["confidence"]:
            best[pick["id"]] = pick
    visible = (
        set(
            Contact.objects.filter(household=household, pk__in=list(best)).values_list(
                "pk", flat=True
            )
        )
        if best
        else set()
    )
    ranked = sorted(
        (pick for contact_id, pick in best.items() if contact_id in visible),
        key=lambda pick: -pick["confidence"],
    )
    rows = [
        PickerRow(
            contact_id=pick["id"],
            confidence=pick["confidence"],
            reason=pick.get("reason", ""),
        )
        for pick in ranked
    ]
    if len(rows) < PICKER_ROWS:
        rows += [
            PickerRow(contact_id=contact_id, padded=True)
            for contact_id in recent_contact_ids(
                household=household,
                exclude=[row.contact_id for row in rows],
                limit=PICKER_ROWS - len(rows),
            )
        ]
    return PickerRows(
        rows=rows,
        dropped=[contact_id for contact_id in best if contact_id not in visible],
    )


def recent_contact_ids(
    *, household: Household, exclude: Sequence[int], limit: int
) -> list[int]:
    """Return the ids of the most recently contacted active contacts."""
    return list(
        Contact.objects.filter(household=household, status=ContactStatus.ACTIVE)
        .exclude(pk__in=exclude)
        .order_by(F("last_contacted_at").desc(nulls_last=True), "sort_name", "pk")
        .values_list("pk", flat=True)[:limit]
    )


def contacts_with_ids(
    *, household: Household, contact_ids: Iterable[int]
) -> QuerySet[Contact]:
    """Return the household's contacts among the ids; others' ids match nothing."""
    return Contact.objects.filter(household=household, pk__in=list(contact_ids))


def find_contact(*, household: Household, contact_id: int) -> Contact | None:
    """Return a contact of the household with aliases, channels and addresses."""
    return (
        Contact.objects.filter(household=household, pk=contact_id)
        .prefetch_related("aliases", "channels", "addresses")
        .first()
    )


def contact_names(household_id: int, contact_ids: list[int]) -> dict[int, str | None]:
    """Return the names to embed for these contacts: their display names."""
    return dict(
        Contact.objects.filter(
            household_id=household_id, pk__in=contact_ids
        ).values_list("pk", "display_name")
    )
