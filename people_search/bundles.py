"""People's own words in a bundle: people[].relation_words and name_choices.

The household section validates their shape on each person; this section
checks what they refer to, writes them once the contacts exist (it runs after
the contacts section) and writes them back onto the exported people.
"""

from collections.abc import Hashable
from typing import Any

from django.db.models import Prefetch
from rest_framework import serializers

from contacts.models import Contact
from household.bundles import is_among, rows_of
from household.models import Household, Membership
from people_search.engine.query import parse_query
from people_search.models import PersonalWord, PersonalWordKind
from people_search.personal_words import in_household, word_key


def fields() -> dict[str, serializers.Field]:
    """Return no keys of its own: the words are on the household section's people."""
    return {}


def problems(bundle: dict[str, Any], *, replace: bool) -> list[str]:
    """Return words naming a contact ref or a person not in the bundle, or oneself."""
    found = []
    people = rows_of(bundle.get("people"))
    usernames = {
        p.get("username") for p in people if isinstance(p.get("username"), Hashable)
    }
    refs = {
        contact.get("ref")
        for contact in rows_of(bundle.get("contacts"))
        if isinstance(contact.get("ref"), Hashable)
    }
    for index, person in enumerate(people):
        for key in ("relation_words", "name_choices"):
            for position, row in enumerate(rows_of(person.get(key))):
                path = f"people[{index}].{key}[{position}]"
                contact, other = row.get("contact"), row.get("person")
                if contact is not None and not is_among(contact, refs):
                    found.append(f"{path}.contact: no contact {contact!r} in contacts")
                if other is not None and not is_among(other, usernames):
                    found.append(f"{path}.person: no person {other!r} in people")
                if other is not None and other == person.get("username"):
                    found.append(f"{path}.person: a person's own word for themselves")
                text = row.get("word", row.get("query"))
                if isinstance(text, str) and not any(c.isalpha() for c in text):
                    found.append(f"{path}: a word needs at least one letter")
    return found


def import_rows(*, household: Household, data: dict[str, Any]) -> None:
    """Write the people's words, after their memberships and the contacts."""
    members = {
        member.profile.username: member
        for member in Membership.objects.filter(
            household=household, profile__household=household
        ).select_related("profile")
    }
    contacts = dict(
        Contact.objects.filter(household=household).values_list("ref", "pk")
    )
    words = []
    for person in data["people"]:
        member = members[person["username"]]
        rows = [
            (PersonalWordKind.RELATION, row["word"], row)
            for row in person.get("relation_words", [])
        ] + [
            (PersonalWordKind.NAME, row["query"], row)
            for row in person.get("name_choices", [])
        ]
        for kind, word, row in rows:
            key = word_key(parse_query(word, region=household.default_region))
            words.append(
                PersonalWord(
                    household=household,
                    member=member,
                    kind=kind,
                    word=word,
                    phrase=key.phrase,
                    concepts=list(key.concepts),
                    contact_id=contacts.get(row.get("contact")),
                    person=(
                        members[row["person"]].profile if "person" in row else None
                    ),
                )
            )
    # A word listed twice, or a second choice for one name, is kept once.
    PersonalWord.objects.bulk_create(words, ignore_conflicts=True)
    Membership.objects.filter(
        household=household, pk__in={word.member.pk for word in words}
    ).update(has_personal_words=True)


def export_rows(*, household: Household) -> dict[str, Any]:
    """Return no keys of its own: `add_personal_words` writes onto the people."""
    return {}


def add_personal_words(people: list[dict[str, Any]], *, household: Household) -> None:
    """Add each exported person's words and name choices, as import_rows reads them."""
    by_username: dict[str, dict[str, list[dict[str, str]]]] = {}
    for word in (
        PersonalWord.objects.filter(in_household(household.pk), household=household)
        .select_related("contact")
        .prefetch_related(
            Prefetch("member", Membership.objects.select_related("profile")), "person"
        )
        .order_by("pk")
    ):
        mine = by_username.setdefault(word.member.profile.username, {})
        if word.kind == PersonalWordKind.NAME:
            row = {"query": word.word, "contact": word.contact.ref}
            mine.setdefault("name_choices", []).append(row)
        elif word.contact_id:
            row = {"word": word.word, "contact": word.contact.ref}
            mine.setdefault("relation_words", []).append(row)
        else:
            row = {"word": word.word, "person": word.person.username}
            mine.setdefault("relation_words", []).append(row)
    for person in people:
        mine = by_username.get(person["username"], {})
        for key in ("relation_words", "name_choices"):
            if key in mine:
                person[key] = mine[key]
