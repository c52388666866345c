"""Propose contacts of a household that are likely the same person, and say why.

One SQL statement finds the candidate pairs through indexed joins, never by
comparing every contact with every other: contacts that share a phone or email
(a value on more than two contacts is a shared line and identifies nobody),
contacts with the same folded name, and contacts whose names share a word or
who share an address, whose names pg_trgm finds alike and who share an address,
a workplace or a city. Python then weighs each pair's evidence with the
matching engine's words and nicknames and says it in words.

The statement reads the candidates strongest first by what it sees, so a page
of the surest proposals reads a few thousand of them, not every pair of a
large address book; and the lane of similar names that share only a city,
the costliest and the weakest, runs only when that page needs it.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from django.db import connection, transaction
from django.utils.translation import gettext

from contacts.models import ContactStatus
from household.models import Household
from people_search.engine.nicknames import given_names_agree
from people_search.engine.phones import format_phone
from people_search.engine.similar import word_similarity

# A name word on more contacts than this ("gmbh", a very common first name)
# pairs too many of them to be worth comparing by its word alone.
CROWDED_WORD = 100
# Contacts living or working at one address: more than this is an office block.
CROWDED_ADDRESS = 50
# pg_trgm similarity of two folded names that makes them worth a closer look
# (names_alike): in one city, and at one address, where a nickname and the
# name it stands for ("Sepp Huber", "Josef Huber") share fewer letters.
CANDIDATE_NAMES = 0.4
HOUSEMATE_NAMES = 0.25
# How alike two words must be written or sound to be one name typed twice
# (people_search.engine.similar.word_similarity: Becker, Bekker 0.95).
ALIKE_WORDS = 0.8


class Clue(StrEnum):
    """A kind of evidence that two contacts are the same."""

    PHONE = "phone"
    EMAIL = "email"
    SAME_NAME = "same_name"
    SIMILAR_NAME = "similar_name"
    ADDRESS = "address"
    WORKPLACE = "workplace"
    CITY = "city"


# How sure each clue alone makes a proposal; clues combine as independent
# chances (1 - product of 1 - weight).
WEIGHTS = {
    Clue.PHONE: 0.55,
    Clue.EMAIL: 0.6,
    Clue.SAME_NAME: 0.6,
    Clue.SIMILAR_NAME: 0.35,
    Clue.ADDRESS: 0.3,
    Clue.WORKPLACE: 0.25,
    Clue.CITY: 0.1,
}
# The letters-only words of a folded name (sort_name is folded already).
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Evidence:
    """One reason to think two contacts are the same, with what they share."""

    clue: Clue
    value: str = ""

    def __str__(self) -> str:
        """Return the evidence in words, in the active language."""
        texts = {
            Clue.PHONE: gettext("Both have the phone number %(value)s"),
            Clue.EMAIL: gettext("Both have the email address %(value)s"),
            Clue.SAME_NAME: gettext("The same name"),
            Clue.SIMILAR_NAME: gettext("Similar names"),
            Clue.ADDRESS: gettext("The same address: %(value)s"),
            Clue.WORKPLACE: gettext("The same workplace: %(value)s"),
            Clue.CITY: gettext("Both in %(value)s"),
        }
        return texts[self.clue] % {"value": self.value}


@dataclass(frozen=True)
class PairedContact:
    """A contact of a proposal, as the list of proposals names it."""

    pk: int
    display_name: str
    sort_name: str
    ref: str

    def __str__(self) -> str:
        return self.display_name


@dataclass(frozen=True)
class Proposal:
    """Two contacts that are likely one: how sure (0 to 1) and why."""

    first: PairedContact
    second: PairedContact
    score: float
    evidence: tuple[Evidence, ...]

    @property
    def percent(self) -> int:
        return round(self.score * 100)


# Candidate pairs (first < second) with what they share, the strongest first
# by what the database sees; names and addresses are joined to the pairs
# read, not to every pair. Every join runs on one household's rows, hashed in
# memory. {in_one_city_words} and {in_one_city_pairs} take the lane of similar
# names in one city, or nothing.
_CANDIDATES = """
WITH book AS (
    -- A name's words alone: "hans-peter becker" is "hans peter becker".
    SELECT id, display_name, ref, sort_name,
           btrim(regexp_replace(sort_name, '[^[:alpha:]]+', ' ', 'g')) AS words
    FROM contacts_contact
    WHERE household_id = %(household)s AND status <> %(spam)s
),
held AS (
    -- Distinct first, so each value is then counted by hashing, not sorting.
    SELECT DISTINCT ch.kind, ch.value, ch.contact_id
    FROM contacts_contactchannel ch JOIN book ON book.id = ch.contact_id
    WHERE ch.household_id = %(household)s AND ch.kind IN ('phone', 'email')
),
lines AS (
    SELECT kind, value, min(contact_id) AS first, max(contact_id) AS second
    FROM held GROUP BY kind, value HAVING count(*) = 2
),
channel_pairs AS (
    SELECT first, second,
           min(value) FILTER (WHERE kind = 'phone') AS phone,
           min(value) FILTER (WHERE kind = 'email') AS email
    FROM lines GROUP BY 1, 2
),
name_pairs AS (
    -- The same name; or the same name words written apart ("Hans-Peter",
    -- "Hans Peter") in one city, where the words lane would have met them.
    SELECT a.id AS first, b.id AS second, a.sort_name AS first_sort,
           true AS same_name
    FROM book a JOIN book b ON b.words = a.words AND a.id < b.id
    WHERE a.words <> '' AND (
        a.sort_name = b.sort_name OR EXISTS (
            SELECT 1 FROM addresses x JOIN addresses y
                ON lower(trim(y.city)) = lower(trim(x.city))
            WHERE x.household_id = %(household)s AND x.contact_id = a.id
              AND y.household_id = %(household)s AND y.contact_id = b.id
              AND trim(x.city) <> ''))
),
places AS (
    SELECT contact_id AS id, book.sort_name, kind,
           lower(regexp_replace(trim(line1), '\\s+', ' ', 'g'))
             || '|' || lower(trim(postcode)) || '|' || lower(trim(city)) AS place,
           lower(trim(city)) AS city, line1, postcode, addresses.city AS city_written
    FROM addresses JOIN book ON book.id = addresses.contact_id
    WHERE addresses.household_id = %(household)s
),
common_places AS (
    -- An address of more contacts than this is an office block: it names
    -- nobody, as a pair's shared address nor as a reason to compare them.
    SELECT place FROM (
        SELECT DISTINCT place, id FROM places WHERE place NOT LIKE '|%%'
    ) residents
    GROUP BY place HAVING count(*) <= %(crowded_address)s
),{in_one_city_words}
near_pairs AS (
    -- Each pair carries both names, so similarity() runs on these rows only
    -- and the planner never weighs comparing every contact with every other.
    SELECT x.id AS first, y.id AS second, x.sort_name AS a, y.sort_name AS b,
           true AS housemates
    FROM places x JOIN common_places USING (place)
    JOIN places y ON y.place = x.place AND x.id < y.id{in_one_city_pairs}
),
similar_pairs AS (
    -- At one address a nickname ("Sepp", "Josef") is looked at from further
    -- away than in one city.
    SELECT first, second FROM near_pairs
    WHERE a <> b AND similarity(a, b) >= CASE
        WHEN housemates THEN %(housemate_names)s ELSE %(candidate_names)s END
),
pairs AS (
    SELECT first, second, first_sort, same_name FROM name_pairs
    UNION
    SELECT found.first, found.second, a.sort_name, a.words = b.words
    FROM (SELECT first, second FROM channel_pairs
          UNION SELECT first, second FROM similar_pairs) found
    JOIN book a ON a.id = found.first
    JOIN book b ON b.id = found.second
),
shared_places AS (
    -- An address is written out only for the pairs that share it.
    SELECT pairs.first, pairs.second,
           min(concat_ws(', ', nullif(trim(x.line1), ''),
                         nullif(trim(trim(x.postcode) || ' ' || trim(x.city_written)),
                                ''))) FILTER (
               WHERE x.place = y.place AND common_places.place IS NOT NULL
                 AND x.kind <> 'work' AND y.kind <> 'work') AS address,
           min(concat_ws(', ', nullif(trim(x.line1), ''),
                         nullif(trim(trim(x.postcode) || ' ' || trim(x.city_written)),
                                ''))) FILTER (
               WHERE x.place = y.place AND common_places.place IS NOT NULL
                 AND x.kind = 'work' AND y.kind = 'work') AS workplace,
           min(trim(x.city_written)) FILTER (
               WHERE x.city = y.city AND x.city <> '') AS city
    FROM pairs
    JOIN places x ON x.id = pairs.first
    JOIN places y ON y.id = pairs.second
    LEFT JOIN common_places ON common_places.place = x.place
    GROUP BY pairs.first, pairs.second
),
ranked AS (
    SELECT pairs.first, pairs.second, pairs.first_sort,
           cp.phone, cp.email, sp.address, sp.workplace, sp.city,
           -- What the pair would score if every clue held up (names alike,
           -- a phone no family's): weighed in Python, it scores no higher.
           1 - (1 - CASE WHEN cp.phone IS NULL THEN 0 ELSE %(phone)s END)
             * (1 - CASE WHEN cp.email IS NULL THEN 0 ELSE %(email)s END)
             * (1 - CASE WHEN pairs.same_name THEN %(same_name)s
                         ELSE %(similar_name)s END)
             * (1 - CASE WHEN sp.address IS NULL THEN 0 ELSE %(address)s END)
             * (1 - CASE WHEN sp.workplace IS NULL THEN 0 ELSE %(workplace)s END)
             * (1 - CASE WHEN sp.city IS NULL OR sp.address IS NOT NULL
                           OR sp.workplace IS NOT NULL THEN 0 ELSE %(city)s END)
             AS strength
    FROM pairs
    LEFT JOIN channel_pairs cp
        ON cp.first = pairs.first AND cp.second = pairs.second
    LEFT JOIN shared_places sp
        ON sp.first = pairs.first AND sp.second = pairs.second
    WHERE NOT EXISTS (
        SELECT 1 FROM contacts_dismissedduplicate d
        WHERE d.household_id = %(household)s
          AND d.first_id = pairs.first AND d.second_id = pairs.second
    )
    ORDER BY strength DESC, pairs.first_sort, pairs.first, pairs.second
    LIMIT %(limit)s
)
SELECT a.id, a.display_name, a.sort_name, a.ref,
       b.id, b.display_name, b.sort_name, b.ref,
       phone, email, address, workplace, city, strength
FROM ranked
JOIN book a ON a.id = ranked.first
JOIN book b ON b.id = ranked.second
ORDER BY strength DESC, ranked.first_sort, ranked.first, ranked.second
"""
# Pairs whose names share a word and whose initials are alike in one city: a
# blocking join over the name words of every contact with a city, the
# costliest lane. What it alone finds scores at most IN_ONE_CITY_AT_MOST (a
# shared phone, email, name or address is another lane's), so it runs only
# when proposals that weak are wanted.
_IN_ONE_CITY_WORDS = """
words AS (
    -- Each name word of a contact with a city, in that city.
    SELECT places.id, places.sort_name, places.city, word,
           -- "hans becker" -> "hb": a name typed wrong keeps its initials.
           regexp_replace(places.sort_name, '([[:alpha:]])[[:alpha:]]*|[^[:alpha:]]',
                          '\\1', 'g') AS initials
    FROM places, regexp_split_to_table(places.sort_name, '[^[:alpha:]]+') AS word
    WHERE length(word) > 1 AND places.city <> ''
),
common_words AS (
    SELECT word, city, initials FROM words GROUP BY word, city, initials
    HAVING count(*) <= %(crowded_word)s
),"""
_IN_ONE_CITY_PAIRS = """
    UNION
    SELECT x.id, y.id, x.sort_name, y.sort_name, false
    FROM words x JOIN common_words USING (word, city, initials)
    JOIN words y ON y.word = x.word AND y.city = x.city
        AND y.initials = x.initials AND x.id < y.id"""
IN_ONE_CITY_AT_MOST = 1 - (1 - WEIGHTS[Clue.SIMILAR_NAME]) * (1 - WEIGHTS[Clue.CITY])
# Candidates read per proposal asked for: weighing drops some (names not
# alike, a family's phone).
CANDIDATES_PER_PROPOSAL = 4


def candidate_statement(*, in_one_city: bool) -> str:
    """Return the candidate query, with or without similar names in one city."""
    return _CANDIDATES.format(
        in_one_city_words=_IN_ONE_CITY_WORDS if in_one_city else "",
        in_one_city_pairs=_IN_ONE_CITY_PAIRS if in_one_city else "",
    )


def propose_duplicates(
    *, household: Household, limit: int | None = None
) -> list[Proposal]:
    """Return the household's likely duplicate contacts, surest first.

    Spam is left out, and so are pairs an admin dismissed. With a limit, only
    the surest `limit`: the candidates are read strongest first by what the
    database sees, and similar names in one city, the costliest and weakest
    lane, are looked for only if stronger evidence proposes fewer pairs.
    """
    if limit is not None:
        # Weighing can only lower a candidate's score: once the limit-th
        # proposal scores at least what the next candidate could, no unread
        # candidate ranks higher.
        candidates = _candidates(
            household, in_one_city=False, limit=CANDIDATES_PER_PROPOSAL * limit
        )
        proposals = _weigh(candidates, household)
        read_all = len(candidates) < CANDIDATES_PER_PROPOSAL * limit
        surest = proposals[:limit]
        if (
            len(surest) == limit
            and surest[-1].score > IN_ONE_CITY_AT_MOST
            and (read_all or surest[-1].score >= round(candidates[-1][-1], 3))
        ):
            return surest
    return _weigh(_candidates(household, in_one_city=True, limit=None), household)[
        :limit
    ]


def _candidates(
    household: Household, *, in_one_city: bool, limit: int | None
) -> list[tuple]:
    with transaction.atomic(), connection.cursor() as cursor:
        # The pairs are hashed in memory; the default 4 MB spills them to disk.
        cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute(
            candidate_statement(in_one_city=in_one_city),
            {**candidate_parameters(household), "limit": limit},
        )
        return cursor.fetchall()


def _weigh(rows: list[tuple], household: Household) -> list[Proposal]:
    """Return the candidates that make proposals, surest first."""
    proposals = []
    for row in rows:
        first, second = PairedContact(*row[:4]), PairedContact(*row[4:8])
        phone, email, address, workplace, city = row[8:13]
        evidence = _evidence(
            _WORD.findall(first.sort_name),
            _WORD.findall(second.sort_name),
            region=household.default_region,
            phone=phone,
            email=email,
            places={Clue.ADDRESS: address, Clue.WORKPLACE: workplace, Clue.CITY: city},
        )
        if evidence:
            proposals.append(
                Proposal(
                    first=first,
                    second=second,
                    score=combined_score(clue.clue for clue in evidence),
                    evidence=tuple(evidence),
                )
            )
    proposals.sort(key=lambda p: (-p.score, p.first.sort_name, p.first.pk, p.second.pk))
    return proposals


def candidate_parameters(household: Household) -> dict[str, object]:
    """Return the parameters of the candidate query for a household."""
    return {
        "household": household.pk,
        "spam": ContactStatus.SPAM,
        "crowded_word": CROWDED_WORD,
        "crowded_address": CROWDED_ADDRESS,
        "candidate_names": CANDIDATE_NAMES,
        "housemate_names": HOUSEMATE_NAMES,
        "limit": None,
        **{clue.value: weight for clue, weight in WEIGHTS.items()},
    }


def combined_score(clues: Iterable[Clue]) -> float:
    """Return how sure the clues make a proposal, as independent chances."""
    doubt = 1.0
    for clue in clues:
        doubt *= 1 - WEIGHTS[clue]
    return round(1 - doubt, 3)


def _evidence(
    first: list[str],
    second: list[str],
    *,
    region: str,
    phone: str | None,
    email: str | None,
    places: dict[Clue, str | None],
) -> list[Evidence]:
    """Return what speaks for a pair with these name words, or nothing."""
    evidence: list[Evidence] = []
    same_name = first == second and bool(first)
    alike = same_name or names_alike(first, second)
    if phone and (alike or not relatives(first, second)):
        evidence.append(Evidence(Clue.PHONE, format_phone(phone, region)))
    if email:
        evidence.append(Evidence(Clue.EMAIL, email))
    if same_name:
        evidence.append(Evidence(Clue.SAME_NAME))
    elif alike:
        evidence.append(Evidence(Clue.SIMILAR_NAME))
    shared = [Evidence(clue, value) for clue, value in places.items() if value]
    if not evidence or (evidence == [Evidence(Clue.SIMILAR_NAME)] and not shared):
        return []
    # The city says little once the address itself is the same.
    if any(place.clue in (Clue.ADDRESS, Clue.WORKPLACE) for place in shared):
        shared = [place for place in shared if place.clue != Clue.CITY]
    return evidence + shared


def names_alike(first: list[str], second: list[str]) -> bool:
    """Return whether two names, as folded words, likely name one person.

    Their last words (the surname) are one word typed alike, and so are their
    first words, or one is a nickname of the other ("Sepp", "Josef") or its
    initial ("H.", "Hans"). A one-word name is alike only to one word typed
    alike.
    """
    if not first or not second or (len(first) == 1) != (len(second) == 1):
        return False
    if word_similarity(first[-1], second[-1]) < ALIKE_WORDS:
        return False
    if len(first) == 1:
        return True
    given, other = first[0], second[0]
    return word_similarity(given, other) >= ALIKE_WORDS or given_names_agree(
        given, other
    )


def relatives(first: list[str], second: list[str]) -> bool:
    """Return whether two names are of one family: one surname, two given names.

    Such contacts sharing a phone number share a line, not an identity.
    """
    return (
        len(first) > 1
        and len(second) > 1
        and first[-1] == second[-1]
        and not names_alike(first, second)
    )
