"""The engine's match conditions on a queryset, for the contact pages and admin.

Hot searches are statements the engine writes out whole
(people_search.engine.statements). The contact pages and admin search keep
Django's queryset, which they filter further, count and paginate: they read
the same conditions (people_search.engine.matching) through `Matched`, which
puts the engine's SQL around the columns Django resolves.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import (
    BooleanField,
    Expression,
    F,
    Field,
    IntegerField,
    Min,
    Q,
    QuerySet,
    Value,
    Window,
)
from django.db.models.functions import Greatest

from people_search.engine.matching import (
    SLOTS,
    Condition,
    Tier,
    match_conditions,
)
from people_search.engine.query import Query


@dataclass(frozen=True)
class MatchColumns:
    """Where a model's derived columns are, as lookups from the queried model."""

    search_text: str = "search_text"
    match_text: str = "match_text"
    phone_digits: str | None = None
    concepts: str | None = None

    def under(self, relation: str) -> "MatchColumns":
        """Return the same columns read through a relation ("profile")."""

        def prefixed(name: str | None) -> str | None:
            return f"{relation}__{name}" if name else None

        return MatchColumns(
            search_text=f"{relation}__{self.search_text}",
            match_text=f"{relation}__{self.match_text}",
            phone_digits=prefixed(self.phone_digits),
            concepts=prefixed(self.concepts),
        )

    def lookup(self, slot: str) -> str | None:
        """Return the lookup of a column a condition reads (its `slot`)."""
        return "pk" if slot == "key" else getattr(self, slot)


class Matched(Expression):
    """A condition of the engine, reading the columns Django resolves.

    A column the model lacks is NULL, so that no condition on it holds.
    """

    def __init__(
        self, condition: Condition, columns: MatchColumns, output_field: Field
    ) -> None:
        super().__init__(output_field=output_field)
        self.condition = condition
        self.slots = [slot for slot in SLOTS if f"{{{slot}}}" in condition.text]
        self.sources: list[Any] = [
            F(lookup) if (lookup := columns.lookup(slot)) else Value(None)
            for slot in self.slots
        ]

    def get_source_expressions(self) -> list[Any]:
        return self.sources

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        self.sources = list(exprs)

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        # A column reference or NULL: neither takes parameters.
        columns = {
            slot: compiler.compile(source)[0]
            for slot, source in zip(self.slots, self.sources, strict=True)
        }
        statement = self.condition.render(columns)
        return statement.sql, list(statement.params)


def find_matches(
    queryset: QuerySet,
    *,
    query: Query,
    columns: MatchColumns,
    similar_ids: Collection[int] = (),
) -> QuerySet:
    """Return every row the query matches, with its `match_tier` and
    `match_untitled` (0 when it carries the query's title, or the query has
    none).

    Rows among `similar_ids` (the similar-name lane's) are found too, as
    Tier.SIMILAR unless they match at a word start. Callers order by
    `match_tier`, `match_untitled` and their own name column, and leave out
    rows that match only inside a word while stronger ones exist
    (`without_weak_matches`).
    """
    conditions = match_conditions(query, similar_ids=similar_ids)
    return queryset.filter(Matched(conditions.where, columns, BooleanField())).annotate(
        match_tier=Matched(conditions.tier, columns, IntegerField()),
        match_untitled=Matched(conditions.untitled, columns, IntegerField()),
    )


def every_row(queryset: QuerySet) -> QuerySet:
    """Return every row as `find_matches` would without a query: all at
    Tier.EXACT."""
    return queryset.annotate(match_tier=Value(int(Tier.EXACT)), match_untitled=Value(0))


def without_weak_matches(queryset: QuerySet) -> QuerySet:
    """Leave out rows that match only inside a word while any row matches more
    strongly; similar names stay.

    Still one SELECT: the strongest tier is a window over every match.
    """
    strongest = Window(Min("match_tier"))
    return queryset.filter(
        Q(match_tier__lte=Greatest(strongest, Value(int(Tier.OTHER))))
        | Q(match_tier=Tier.SIMILAR)
    )


def rank_matches(
    queryset: QuerySet,
    *,
    query: Query,
    columns: MatchColumns,
    similar_ids: Collection[int] = (),
) -> QuerySet:
    """Return the rows the query matches as every surface lists them.

    Those of `find_matches`, without the weak ones (`without_weak_matches`).
    """
    return without_weak_matches(
        find_matches(queryset, query=query, columns=columns, similar_ids=similar_ids)
    )
