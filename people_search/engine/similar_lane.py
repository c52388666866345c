"""The similar-name lane as a fallback: typos found when nothing matches literally."""

from collections.abc import Sequence

from people_search.engine.query import Query
from people_search.engine.similar import find_similar_names
from people_search.engine.text import fold_words


def similar_name_ids(
    *, household_id: int, query: Query | None, subjects: Sequence[str]
) -> dict[str, list[int]]:
    """Return, per subject, the ids of rows whose names are like the query's.

    One lookup for every subject; only for a query with letters that is no
    email. The words looked up are the query's own, articles and titles
    dropped ("Herr Bekker" looks for "bekker"), a comma kept.
    """
    found: dict[str, list[int]] = {subject: [] for subject in subjects}
    if query is None or query.is_empty or "@" in query.text:
        return found
    if not any(char.isalpha() for char in query.phrase):
        return found
    for candidate in find_similar_names(
        household_id=household_id, name=_name(query), subjects=list(subjects)
    ):
        found[candidate.subject].append(candidate.subject_id)
    return found


def _name(query: Query) -> str:
    """Return the query's words as a name, with its comma: "lindenlechner, peter"
    for "Herr Lindenlechner, Peter", whose surname is before the comma."""
    head, comma, tail = query.text.partition(",")
    if not comma:
        return query.phrase
    kept = set(query.phrase.split())
    return ", ".join(
        " ".join(word for word in fold_words(part) if word in kept)
        for part in (head, tail)
    )
