"""The columns people search reads, derived from a person's or a lead's fields."""

from typing import TypedDict

from people_search.engine.matching import match_document
from people_search.engine.text import fold_name, search_document


class PersonColumns(TypedDict):
    """The derived columns of a user profile or a lead."""

    sort_name: str
    search_text: str
    match_text: str


def person_columns(
    *, first_name: str, last_name: str, email: str, fallback_name: str
) -> PersonColumns:
    """Return the folded sort name, search text and match text of a profile or a lead.

    A person with neither a first nor a last name sorts by `fallback_name`:
    a profile's username, a lead's email.
    """
    full_name = f"{first_name} {last_name}".strip()
    return PersonColumns(
        sort_name=fold_name(full_name or fallback_name),
        search_text=search_document(first_name, last_name, email),
        match_text=match_document(
            names=[f"{first_name} {last_name}"], emails=[email] if email else []
        ),
    )
