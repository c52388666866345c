"""Writes that span the household and its address book: embedding every name anew."""

from collections.abc import Callable

from contacts.selectors import contact_names
from household.models import Household
from household.selectors import lead_names, member_names
from people_search.index.models import Subject
from people_search.index.names import (
    NameLoader,
    count_household_words,
    forget_household_words,
    store_name_words,
)

_CHUNK = 500


def index_household(
    *, household: Household, on_progress: Callable[[int], object] = lambda rows: None
) -> int:
    """Embed every name of the household again; return how many words were embedded.

    Rows are indexed in chunks; `on_progress` hears how many each chunk held.
    """
    forget_household_words(household_id=household.pk)
    subjects: list[tuple[str, NameLoader, list[int]]] = [
        (
            Subject.MEMBER,
            member_names,
            household.memberships.values_list("pk", flat=True),
        ),
        (Subject.LEAD, lead_names, household.leads.values_list("pk", flat=True)),
        (
            Subject.CONTACT,
            contact_names,
            household.contacts.values_list("pk", flat=True),
        ),
    ]
    for subject, load_names, ids in subjects:
        ids = list(ids)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            store_name_words(
                household_id=household.pk,
                subject=subject,
                names=load_names(household.pk, chunk),
            )
            on_progress(len(chunk))
    return count_household_words(household_id=household.pk)


def household_size(*, household: Household) -> int:
    """Return how many members, leads and contacts a household has."""
    return (
        household.memberships.count()
        + household.leads.count()
        + household.contacts.count()
    )
