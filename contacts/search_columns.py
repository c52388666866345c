"""The columns the matching engine reads, derived from a contact and its rows."""

from collections.abc import Sequence
from typing import TypedDict

from contacts.providers.categories import provider_tokens
from people_search.engine.matching import concept_tokens, match_document
from people_search.engine.phones import (
    InvalidPhoneNumber,
    parse_phone,
    written_phone_digits,
)
from people_search.engine.text import fold_name, search_document


class ContactColumns(TypedDict):
    """The derived columns of a contact."""

    sort_name: str
    search_text: str
    match_text: str
    concepts: list[str]
    phone_digits: str


def contact_columns(
    *,
    display_name: str,
    first_name: str,
    last_name: str,
    kind: str,
    relation: str,
    aliases: Sequence[str],
    tags: Sequence[str],
    emails: Sequence[str],
    phones: Sequence[str],
    region: str,
    written_phones: Sequence[str] = (),
    title: str = "",
    organization: str = "",
) -> ContactColumns:
    """Return a contact's folded sort name, search and match text, concepts and
    phone digits.

    `concepts` are those its relation and aliases name ("Großmutter", "Oma"
    → grandmother), so a query naming one finds it in any language, and the
    provider categories its business name or tags name. `phones`
    are the E.164 values of its phone channels, read in the household's
    `region`; `phone_digits` holds their national significant digits, which a
    phone query looks for with or without its country code. `written_phones`
    are numbers kept as written (no E.164 to be had): all their digits are
    kept, which hold what a query for such a number looks for. The job
    `title` and `organization` are in the match text only, as evidence for
    a query's title ("Dr. Kaya" and a Kaya whose title is "Dr. med.").
    """
    return ContactColumns(
        sort_name=fold_name(display_name),
        search_text=search_document(
            display_name, first_name, last_name, relation, *aliases, *emails
        ),
        match_text=match_document(
            names=[display_name, f"{first_name} {last_name}"],
            aliases=aliases,
            relation=relation,
            emails=emails,
            titles=[title, organization],
        ),
        concepts=sorted(
            [
                *concept_tokens(relation=relation, aliases=aliases),
                *provider_tokens(kind=kind, display_name=display_name, tags=tags),
            ]
        ),
        phone_digits=" ".join(
            [
                *(_national_digits(phone, region) for phone in phones),
                *(written_phone_digits(phone) for phone in written_phones),
            ]
        ),
    )


def _national_digits(e164: str, region: str) -> str:
    try:
        return parse_phone(e164, region).nsn
    except InvalidPhoneNumber:
        # A stored number parse_phone refuses (too short for its mobile range)
        # is still found by its digits.
        return written_phone_digits(e164)
