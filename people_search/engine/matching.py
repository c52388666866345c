"""The one matching engine: what a query means and which rows it matches.

Every surface that finds people (find_person, people_search, search_anything,
the contact pages) turns its query into a `Query` here and filters with
`matches`, so two surfaces never disagree about who matches.
"""

from dataclasses import dataclass

from django.db.models import Case, IntegerField, Q, Value, When

from people_search.engine.phones import phone_query_digits
from people_search.engine.text import search_terms


@dataclass(frozen=True)
class Query:
    """A parsed query: folded terms that must all appear, and phone digits."""

    text: str
    terms: tuple[str, ...]
    phone_digits: str | None

    @property
    def folded(self) -> str:
        return " ".join(self.terms)

    @property
    def is_empty(self) -> bool:
        return not self.terms and not self.phone_digits

    @property
    def has_letter(self) -> bool:
        return any(char.isalpha() for char in self.text)

    @property
    def looks_like_email(self) -> bool:
        return "@" in self.text


def parse_query(text: str, *, region: str) -> Query:
    """Return what a free-text query asks for in a household of the given region."""
    text = (text or "").strip()
    return Query(
        text=text,
        terms=tuple(search_terms(text)),
        phone_digits=phone_query_digits(text, region),
    )


def matches(
    query: Query,
    *,
    text_field: str = "search_text",
    phone_field: str | None = None,
) -> Q:
    """Return the condition a row meets when the query matches it.

    Every term must appear in the row's folded search text (a trigram index
    serves each LIKE), or the query's phone digits inside the row's digits.
    """
    condition = Q()
    if query.terms:
        for term in query.terms:
            condition &= Q(**{f"{text_field}__contains": term})
    else:
        condition = Q(pk__in=[])
    if phone_field and query.phone_digits:
        condition |= Q(**{f"{phone_field}__contains": query.phone_digits})
    return condition


def name_rank(query: Query | None, *, name_field: str = "sort_name") -> Case | Value:
    """Return 0 for an exact full-name match, 1 for a name prefix, 2 otherwise."""
    folded = query.folded if query else ""
    if not folded:
        return Value(2, output_field=IntegerField())
    return Case(
        When(**{name_field: folded}, then=Value(0)),
        When(
            Q(**{f"{name_field}__startswith": folded})
            | Q(**{f"{name_field}__contains": f" {folded}"}),
            then=Value(1),
        ),
        default=Value(2),
        output_field=IntegerField(),
    )
