"""Find the providers a household already uses, before anyone searches nearby.

Three sources, in order of trust: the address book, the Paperless-ngx mirror
and past calendar events. SQL finds each source's rows through what every
write stores beside them: a contact's concepts name the categories its
relation, business name or tags reveal (GIN index), and titles and names are
matched as folded copies (nothing is folded in SQL). provider_categories
decides word by word which Paperless and calendar rows really reveal the
category. The same provider found in several places becomes one candidate.

Which candidates are one provider, and their order, depend on every
candidate (a late, less trusted one may join a group and raise its
last_seen), so every candidate is read, but lean: only what decides
identity and order. Each distinct text is folded once a call, a candidate is
compared only with the members it shares a key with, and the addresses and
emails of contacts are read for the groups shown.
"""

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from django.db import connection
from django.utils import timezone

from contacts.addresses import best_postal_address
from contacts.aggregates import ADDRESS_FIELDS
from contacts.models import (
    ChannelKind,
    ContactKind,
    ContactStatus,
    one_line_address,
)
from contacts.providers.categories import (
    ProviderCategory,
    business_token,
    category_tokens,
    get_category,
    names_by_tag,
)
from household.models import Household
from people_search.engine.matching import relation_concept_token
from people_search.engine.text import fold_name, fold_words, folded_words
from yorik.bulk import cyclic_gc_paused

SOURCES = ("contact", "paperless", "calendar")
# Enough to ask the person which one; a household with more is cut, best first.
MAX_CANDIDATES = 10
# Words that say what a business is rather than who: two names that differ
# only in these ("Autohaus Krüger GmbH", "Autowerkstatt Krüger") are one.
_GENERIC_NAME_WORDS = frozenset(
    {
        "ag",
        "am",
        "an",
        "and",
        "co",
        "dent",
        "der",
        "die",
        "dr",
        "e",
        "ev",
        "fur",
        "gbr",
        "gmbh",
        "im",
        "in",
        "kg",
        "mbb",
        "mbh",
        "med",
        "ohg",
        "partner",
        "praxis",
        "prof",
        "s",
        "the",
        "ug",
        "und",
        "v",
        "vet",
    }
)
_STREET_ABBREVIATION = re.compile(r"str\.")
_ADDRESS_COLUMNS = ("kind", *ADDRESS_FIELDS)
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass
class Candidate:
    """A provider found in one source, or several merged into one.

    A contact's address and email are read only once it is shown (_add_details).
    """

    source: str
    name: str
    evidence: list[str]
    contact_id: int | None = None
    address: str | None = None
    phone: str | None = None
    email: str | None = None
    last_seen: date | None = None
    phones: frozenset[str] = frozenset()
    places: tuple[str, ...] = ()
    # " ".join(fold_words(name)), from a stored folded column where there is one.
    folded_name: str = ""

    def __post_init__(self) -> None:
        if not self.folded_name:
            self.folded_name = " ".join(fold_words(self.name))

    def as_output(self) -> dict[str, Any]:
        """Return the candidate as the skill answers it, without empty keys."""
        output = {
            "source": self.source,
            "contact_id": self.contact_id,
            "name": self.name,
            "address": self.address,
            "phone": self.phone,
            "email": self.email,
            "last_seen": self.last_seen.isoformat() if self.last_seen else None,
            "evidence": "; ".join(self.evidence),
        }
        return {key: value for key, value in output.items() if value is not None}


@dataclass(frozen=True)
class KnownProviders:
    candidates: list[Candidate]
    source_counts: dict[str, int]
    truncated: bool = False


def find_known_providers(
    *, household: Household, category: ProviderCategory, now: datetime | None = None
) -> KnownProviders:
    """Return the household's most trusted providers of a category, best first.

    At most MAX_CANDIDATES; `truncated` says more were found. Every candidate
    is read lean, with only what decides who is the same provider and the
    order; the addresses and emails of the contacts shown are read once the
    groups are ranked. Run four SELECTs (contacts, matching Paperless
    documents, Paperless correspondents, past events), a fifth when a contact
    is shown, and write nothing.
    """
    # Thousands of short-lived rows, keys and groups, none in a reference
    # cycle: a collection while they live would walk them all (or the whole
    # process) again; once the call returns they are freed as it goes.
    with cyclic_gc_paused():
        return _known_providers(household, category, now or timezone.now())


def _known_providers(
    household: Household, category: ProviderCategory, now: datetime
) -> KnownProviders:
    found = [
        *_contact_candidates(household, category),
        *_paperless_candidates(household, category),
        *_calendar_candidates(household, category, now),
    ]
    counts = Counter(candidate.source for candidate in found)
    groups = _group_by_provider(found, category)
    groups.sort(key=_group_order)
    shown = groups[:MAX_CANDIDATES]
    _add_details(
        household, [member for group in shown for member in group if member.contact_id]
    )
    return KnownProviders(
        candidates=[_merge(group) for group in shown],
        source_counts={
            "contacts": counts["contact"],
            "paperless": counts["paperless"],
            "calendar": counts["calendar"],
        },
        truncated=len(groups) > MAX_CANDIDATES,
    )


# What a call folds and tests against its category. Titles, streets and the
# words of names repeat across an address book and its documents, and across
# calls; every answer depends on the text (and the category's fixed
# vocabulary) alone, so the process keeps the last _FOLDS_KEPT of each: a few
# households' names, titles and places.
_FOLDS_KEPT = 16_384


_fold = lru_cache(maxsize=_FOLDS_KEPT)(fold_name)


@lru_cache(maxsize=_FOLDS_KEPT)
def _reveals(category_id: str, folded: str) -> bool:
    return get_category(category_id).is_named_by_words(folded_words(folded))


@lru_cache(maxsize=_FOLDS_KEPT)
def _name(text: str) -> str:
    return " ".join(fold_words(text))


@lru_cache(maxsize=_FOLDS_KEPT)
def _place(address: str) -> str:
    street = _STREET_ABBREVIATION.sub("strasse ", _fold(address))
    return " ".join(fold_words(street))


@lru_cache(maxsize=_FOLDS_KEPT)
def _place_keys(place: str) -> tuple[tuple[str, ...], ...]:
    """Return keys every place that appears in this one, or it in, shares.

    A street address has a word with a number; within another place it is a
    run of its words, so it shares with it the number word and a neighbour
    (or the word alone when it has letters too).
    """
    words = place.split()
    flags = [_word_flags(word) for word in words]
    pairs = [
        ("pair", words[i], words[i + 1])
        for i in range(len(words) - 1)
        if flags[i][0] or flags[i + 1][0]
    ]
    whole = [
        ("word", word)
        for word, (digit, letter) in zip(words, flags, strict=True)
        if digit and letter
    ]
    return (*pairs, *whole)


@lru_cache(maxsize=_FOLDS_KEPT)
def _street_runs(place: str) -> frozenset[str]:
    """Return the runs of a place's words that are street addresses.

    Places are whole words joined by spaces, so a street address appears in
    a place when it is one of these.
    """
    words = place.split()
    flags = [_word_flags(word) for word in words]
    runs = set()
    for start in range(len(words)):
        digit = letter = False
        for end in range(start, len(words)):
            digit = digit or flags[end][0]
            letter = letter or flags[end][1]
            if digit and letter:
                runs.add(" ".join(words[start : end + 1]))
    return frozenset(runs)


@lru_cache(maxsize=_FOLDS_KEPT)
def _word_flags(word: str) -> tuple[bool, bool]:
    """Return whether a word has a digit, and whether it has a letter."""
    return _DIGIT.search(word) is not None, _LETTER.search(word) is not None


@lru_cache(maxsize=_FOLDS_KEPT)
def _core(category_id: str, folded_name: str) -> frozenset[str]:
    return frozenset(
        word
        for word in folded_name.split()
        if word not in _GENERIC_NAME_WORDS and not _word_reveals(category_id, word)
    )


@lru_cache(maxsize=_FOLDS_KEPT)
def _word_reveals(category_id: str, word: str) -> bool:
    return get_category(category_id).is_revealed_by(word)


# The sources' statements are written out: built with the ORM, building and
# compiling them cost more CPU than PostgreSQL spent answering them (3 ms of
# 3.5 at 1k contacts). Every one reads one household and names it on every
# table it reads, subqueries included; the stems are one LIKE ANY of an array,
# the dates are days in the current time zone (as timezone.localdate gives
# them) so no timestamp is parsed in Python.
_CONTACTS = """
SELECT c.id, c.display_name, c.sort_name, c.kind, c.relation, c.tags, c.concepts,
       (c.last_contacted_at AT TIME ZONE %(time_zone)s)::date,
       ARRAY(SELECT ch.value FROM contacts_contactchannel ch
             WHERE ch.contact_id = c.id AND ch.household_id = %(household)s::bigint
               AND ch.kind = %(phone)s ORDER BY ch.id),
       ARRAY(SELECT a.line1 FROM addresses a
             WHERE a.contact_id = c.id AND a.household_id = %(household)s::bigint
             ORDER BY a.id)
FROM contacts_contact c
WHERE c.household_id = %(household)s::bigint
  AND c.status = ANY(%(statuses)s)
  AND c.concepts && %(tokens)s::varchar(64)[]
  AND (c.search_text LIKE ANY(%(stems)s)
       OR c.tags && %(tag_spellings)s::varchar(64)[])
ORDER BY c.display_name, c.id
"""
# Each address as its _ADDRESS_COLUMNS.
_DETAILS = """
SELECT c.id,
       (SELECT ch.value FROM contacts_contactchannel ch
        WHERE ch.contact_id = c.id AND ch.household_id = %(household)s::bigint
          AND ch.kind = %(email)s ORDER BY ch.id LIMIT 1),
       ARRAY(SELECT ARRAY[a.kind, a.line1, a.line2, a.postcode, a.city, a.country]
             FROM addresses a
             WHERE a.contact_id = c.id AND a.household_id = %(household)s::bigint
             ORDER BY a.id)
FROM contacts_contact c
WHERE c.household_id = %(household)s::bigint AND c.id = ANY(%(ids)s::bigint[])
"""
_DOCUMENTS = """
SELECT d.correspondent_id, d.title, d.folded_title, d.created
FROM contacts_paperlessdocument d
WHERE d.household_id = %(household)s::bigint AND d.correspondent_id IS NOT NULL
  AND d.folded_title LIKE ANY(%(stems)s)
ORDER BY d.created DESC, d.id DESC
"""
# The join and the subquery name the household too: its documents only.
_CORRESPONDENTS = """
SELECT c.id, c.name, c.folded_name, count(d.id), max(d.created),
       (SELECT n.title FROM contacts_paperlessdocument n
        WHERE n.correspondent_id = c.id AND n.household_id = %(household)s::bigint
        ORDER BY n.created DESC NULLS LAST, n.id DESC LIMIT 1)
FROM contacts_paperlesscorrespondent c
LEFT JOIN contacts_paperlessdocument d
  ON d.correspondent_id = c.id AND d.household_id = %(household)s::bigint
WHERE c.household_id = %(household)s::bigint
  AND (c.folded_name LIKE ANY(%(stems)s) OR c.id = ANY(%(ids)s::bigint[]))
GROUP BY c.household_id, c.id
ORDER BY c.name, c.id
"""
_EVENTS = """
SELECT e.title, e.folded_title, e.location,
       (e.starts_at AT TIME ZONE %(time_zone)s)::date
FROM household_calendarevent e
WHERE e.household_id = %(household)s::bigint AND e.starts_at < %(now)s
  AND e.location <> '' AND e.folded_title LIKE ANY(%(stems)s)
ORDER BY e.starts_at DESC, e.id DESC
"""


def _narrowing(household: Household, category: ProviderCategory) -> dict[str, Any]:
    """Return the parameters every source's statement takes."""
    return {
        "household": household.pk,
        "stems": [
            f"%{connection.ops.prep_for_like_query(stem)}%"
            for stem in category.search_stems
        ],
        "time_zone": timezone.get_current_timezone_name(),
    }


def _rows(sql: str, parameters: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, parameters)
        return cursor.fetchall()


def _contact_candidates(
    household: Household, category: ProviderCategory
) -> list[Candidate]:
    """Return the contacts of the category, without their address and email.

    The concepts' GIN index finds those whose relation, business name or tag
    names the category, and says which; the stems and tag spellings narrow as
    they always did. Ties in the trust order keep name, then id order.
    """
    rows = _rows(
        _CONTACTS,
        {
            **_narrowing(household, category),
            "statuses": [ContactStatus.ACTIVE, ContactStatus.PENDING],
            "tokens": category_tokens(category),
            "tag_spellings": list(category.tag_spellings),
            "phone": ChannelKind.PHONE,
        },
    )
    relation_token = relation_concept_token(category.id)
    business = business_token(category)
    candidates = []
    for (
        id_,
        name,
        sort_name,
        kind,
        relation,
        tags,
        concepts,
        seen,
        phones,
        lines,
    ) in rows:
        evidence = []
        if relation_token in concepts:
            evidence.append(f"relation: {relation}")
        evidence += [f"tag: {tag}" for tag in tags if names_by_tag(category, tag)]
        if kind == ContactKind.BUSINESS and business in concepts:
            evidence.append(f"name: {name}")
        if not evidence:
            continue
        candidates.append(
            Candidate(
                source="contact",
                contact_id=id_,
                name=name,
                folded_name=" ".join(folded_words(sort_name)),
                evidence=evidence,
                phone=phones[0] if phones else None,
                last_seen=seen,
                phones=frozenset(phones),
                places=tuple(_place(line1) for line1 in lines if line1),
            )
        )
    return candidates


def _add_details(household: Household, contacts: list[Candidate]) -> None:
    """Set the address and email of contact candidates about to be shown."""
    if not contacts:
        return
    ids = [candidate.contact_id for candidate in contacts]
    details = {
        id_: (email, addresses)
        for id_, email, addresses in _rows(
            _DETAILS,
            {"household": household.pk, "ids": ids, "email": ChannelKind.EMAIL},
        )
    }
    for candidate in contacts:
        email, rows = details[candidate.contact_id]
        addresses = [dict(zip(_ADDRESS_COLUMNS, row, strict=True)) for row in rows]
        best_address = best_postal_address(addresses, ("line1", "city"))
        candidate.address = _postal_address(best_address) if best_address else None
        candidate.email = email


def _postal_address(address: Mapping[str, str]) -> str | None:
    line = one_line_address(address["line1"], address["postcode"], address["city"])
    return line or None


def _paperless_candidates(
    household: Household, category: ProviderCategory
) -> list[Candidate]:
    narrowing = _narrowing(household, category)
    documents_by_correspondent: dict[int, list[tuple[str, date | None]]] = {}
    for correspondent_id, title, folded_title, created in _rows(_DOCUMENTS, narrowing):
        if _reveals(category.id, folded_title):
            documents_by_correspondent.setdefault(correspondent_id, []).append(
                (title, created)
            )
    correspondents = _rows(
        _CORRESPONDENTS, {**narrowing, "ids": list(documents_by_correspondent)}
    )
    candidates = []
    for id_, name, folded_name, count, created, title in correspondents:
        if not _reveals(category.id, folded_name):
            if id_ not in documents_by_correspondent:
                continue
            documents = documents_by_correspondent[id_]
            title, created = max(documents, key=lambda d: d[1] or date.min)
            count = len(documents)
        candidates.append(
            Candidate(
                source="paperless",
                name=name,
                folded_name=" ".join(folded_words(folded_name)),
                evidence=[_documents_evidence(count, title, created)],
                last_seen=created,
            )
        )
    return candidates


def _documents_evidence(count: int, title: str | None, created: date | None) -> str:
    if not count:
        return "correspondent in Paperless, no documents"
    on = f" on {created.isoformat()}" if created else ""
    if count == 1:
        return f"1 document: '{title}'{on}"
    return f"{count} documents, latest '{title}'{on}"


def _calendar_candidates(
    household: Household, category: ProviderCategory, now: datetime
) -> list[Candidate]:
    events_by_place: dict[str, list[tuple[str, str, date]]] = {}
    for title, folded_title, location, day in _rows(
        _EVENTS, {**_narrowing(household, category), "now": now}
    ):
        if _reveals(category.id, folded_title):
            events_by_place.setdefault(_fold(location), []).append(
                (title, location, day)
            )

    candidates = []
    for events in events_by_place.values():
        title, location, seen = events[0]
        location = location.strip()
        name, address = _name_and_address(location, fallback=title)
        count = "1 past event" if len(events) == 1 else f"{len(events)} past events"
        candidates.append(
            Candidate(
                source="calendar",
                name=name,
                folded_name=_name(name),
                address=address,
                evidence=[
                    f"{count} at {location}, latest '{title}' on {seen.isoformat()}"
                ],
                last_seen=seen,
                places=(_place(location),),
            )
        )
    return candidates


def _name_and_address(location: str, *, fallback: str) -> tuple[str, str]:
    """Split "Praxis Dr. Schmidt, Hauptstr. 1, Berlin" into a name and an address.

    A first part without digits names the place; otherwise the location is
    only an address and the event's title names the provider.
    """
    first, _, rest = (part.strip() for part in location.partition(","))
    if rest and not any(map(str.isdigit, first)):
        return first, rest
    return fallback, location


def _place_within(short: str, long: str) -> bool:
    """Return whether a street address (with its number) appears in another."""
    return short in _street_runs(long)


def _same_provider(a: Candidate, b: Candidate, category: ProviderCategory) -> bool:
    if a.folded_name == b.folded_name or a.phones & b.phones:
        return True
    same_place = any(
        _place_within(x, y) or _place_within(y, x) for x in a.places for y in b.places
    )
    core = _core(category.id, a.folded_name)
    # "Zahnarzt Berlin" and "Zahnklinik Berlin" share a core but not a street.
    if (
        core
        and core == _core(category.id, b.folded_name)
        and (same_place or not (a.places and b.places))
    ):
        return True
    # Two address-book entries at one address may be two practices in one
    # building; an address links only a contact to what another source saw.
    return same_place and not a.source == b.source == "contact"


def _group_by_provider(
    found: list[Candidate], category: ProviderCategory
) -> list[list[Candidate]]:
    """Group what the sources found per provider, each group led by its most trusted.

    A candidate joins the first group it matches, so one event at a shared
    address cannot chain two different providers together. _same_provider
    needs an equal name, a shared phone, an equal name core, or one place
    inside another; each is a key, so a candidate is compared only with the
    members it shares a key with. An equal name or a shared phone is enough
    (a sure key: the lowest group holding it is enough to know); a core or a
    place may be (a maybe key: its members are compared). The work grows with
    the candidates, not with their square nor with the size of a group.
    """
    groups: list[list[Candidate]] = []
    lowest_group: dict[Any, int] = {}
    # A maybe key's members, by the number of their group.
    members_by_key: dict[Any, dict[int, list[Candidate]]] = {}
    for candidate in sorted(found, key=_trust_order):
        sure = [("name", candidate.folded_name), *candidate.phones]
        maybe = _maybe_keys(candidate, category)
        held = [lowest_group[key] for key in sure if key in lowest_group]
        index = min(held) if held else None
        suspects: dict[int, list[list[Candidate]]] = {}
        for key in maybe:
            for number, members in members_by_key.get(key, {}).items():
                if index is None or number < index:
                    suspects.setdefault(number, []).append(members)
        for number in sorted(suspects):
            if any(
                _same_provider(candidate, member, category)
                for members in suspects[number]
                for member in members
            ):
                index = number
                break
        if index is None:
            index = len(groups)
            groups.append([])
        groups[index].append(candidate)
        for key in sure:
            lowest_group[key] = min(lowest_group.get(key, index), index)
        for key in maybe:
            members_by_key.setdefault(key, {}).setdefault(index, []).append(candidate)
    return groups


def _maybe_keys(candidate: Candidate, category: ProviderCategory) -> list[Any]:
    """Return the keys of a candidate's name core and places."""
    core = _core(category.id, candidate.folded_name)
    keys: list[Any] = [("core", core)] if core else []
    for place in candidate.places:
        keys += _place_keys(place)
    return keys


def _merge(group: list[Candidate]) -> Candidate:
    """Return one candidate with the leader's identity and everyone's evidence."""
    leader, *others = group
    if not others:
        return leader
    evidence = list(leader.evidence)
    for other in others:
        evidence += _evidence_beside(other, leader)
    return Candidate(
        source=leader.source,
        contact_id=leader.contact_id,
        name=leader.name,
        folded_name=leader.folded_name,
        evidence=evidence,
        address=next((m.address for m in group if m.address), None),
        phone=next((m.phone for m in group if m.phone), None),
        email=next((m.email for m in group if m.email), None),
        last_seen=_last_seen(group),
    )


def _last_seen(group: list[Candidate]) -> date | None:
    return max((m.last_seen for m in group if m.last_seen), default=None)


def _evidence_beside(other: Candidate, leader: Candidate) -> list[str]:
    """Return another source's evidence, saying under which name it was found."""
    if other.source == "calendar" or other.folded_name == leader.folded_name:
        return other.evidence
    if other.source == "contact":
        reasons = [part for part in other.evidence if part != f"name: {other.name}"]
        return [
            f"contact {other.name}" + (f" ({'; '.join(reasons)})" if reasons else "")
        ]
    return [f"{other.name}: {part}" for part in other.evidence]


def _trust_order(candidate: Candidate) -> tuple[int, int, str]:
    """Order by source trust, then newest last_seen (none last), then name."""
    return _order(candidate.source, candidate.last_seen, candidate.folded_name)


def _group_order(group: list[Candidate]) -> tuple[int, int, str]:
    """Order groups as _trust_order orders their merged candidates."""
    leader = group[0]
    return _order(leader.source, _last_seen(group), leader.folded_name)


def _order(
    source: str, last_seen: date | None, folded_name: str
) -> tuple[int, int, str]:
    seen = -last_seen.toordinal() if last_seen else 0
    return SOURCES.index(source), seen, folded_name
