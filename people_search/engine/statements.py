"""Each search's statement: SQL text and parameters, built from the parsed query.

A search reads one kind of row, which its app describes as a `Table` (its
tables, household columns, key and derived columns); the engine writes the
statement around the query's conditions (people_search.engine.matching) and
the app's own filters and columns, and the app runs it and maps its rows
(people_search.selectors). Every statement names the household on every
table it reads, joins and subqueries included.

The text depends on the query's shape only, never on its values, so a
statement recurs and the preparing cursor plans it once per connection when
one plan serves every value (`Statement.prepare`): in a household small
enough to read row by row (`scanning`), or when the trigram indexes answer
every term (`trigram_served`).
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from people_search.engine.matching import (
    EVIDENCE,
    Condition,
    Tier,
    is_similar,
    match_conditions,
    trigram_served,
)
from people_search.engine.query import Query
from people_search.engine.sql import Statement, compose, sql


@dataclass(frozen=True)
class Table:
    """How a search reads one kind of row: `rows` is the FROM clause (its
    tables with aliases), `households` the household column of each table,
    `key` the row's id; the other columns are those the conditions read
    (None where the rows have none)."""

    rows: str
    households: tuple[str, ...]
    key: str
    sort_name: str
    search_text: str
    match_text: str
    phone_digits: str | None = None
    concepts: str | None = None

    def columns(self, *, scanning: bool = False) -> Mapping[str, str]:
        """Return the SQL of each column the conditions read (NULL for one the
        rows lack, so that no condition on it holds).

        When `scanning`, each is read in a form no trigram or GIN index
        answers (`search_text || ''`): a plan made once for every small
        household then reads the household's own rows, as such a household
        is searched fastest. Without its values PostgreSQL guessed a pattern
        rare and asked the trigram index, which for a word of two letters
        reads the whole index (a two-letter search of 1,000 contacts took 37
        to 88 ms instead of 7).
        """
        return _columns(self, scanning)

    def of_household(self, household_id: int) -> Statement:
        """Return that every table's rows are the household's."""
        return Statement(_of_household(self), (household_id,) * len(self.households))

    def evidence(self) -> Statement:
        """Return the columns `match_reason` reads of a returned row."""
        return _evidence(self)


# Each table's SQL is written once per process: a search's statement is put
# together on every call, from pieces that depend on its shape only.
@lru_cache(maxsize=64)
def _columns(table: Table, scanning: bool) -> Mapping[str, str]:
    columns = {
        "key": table.key,
        "search_text": table.search_text,
        "match_text": table.match_text,
        "phone_digits": table.phone_digits,
        "concepts": table.concepts,
    }
    if scanning:
        columns = {
            slot: f"({column} || {_UNINDEXED[slot]})"
            if column and slot in _UNINDEXED
            else column
            for slot, column in columns.items()
        }
    return MappingProxyType(
        {slot: column or "NULL" for slot, column in columns.items()}
    )


@lru_cache(maxsize=64)
def _of_household(table: Table) -> str:
    return " AND ".join(f"{column} = %s::bigint" for column in table.households)


@lru_cache(maxsize=64)
def _evidence(table: Table) -> Statement:
    columns = table.columns()
    return sql(
        ", ".join(f"{columns[slot]} AS {name}" for name, slot in EVIDENCE.items())
    )


@lru_cache(maxsize=1024)
def _rendered(condition: Condition, table: Table, scanning: bool) -> Statement:
    return condition.render(table.columns(scanning=scanning))


# What each column is joined with so that no index answers it.
_UNINDEXED = {
    "search_text": "''",
    "match_text": "''",
    "phone_digits": "''",
    "concepts": "ARRAY[]::varchar[]",
}

_FIRST_MATCHES = """\
SELECT first.match_tier, first.match_untitled, first.sort_key, first.match_total,
    first.match_strong, details.*
FROM (
    SELECT narrow.*, count(*) OVER () AS match_total,
        count(*) FILTER (WHERE narrow.match_tier < {inside}) OVER () AS match_strong
    FROM (
        SELECT {tier} AS match_tier, {untitled} AS match_untitled,
            {sort_name} AS sort_key, {key} AS match_key
        FROM {rows}
        WHERE {of_household} AND {filters} AND {where}
        OFFSET 0
    ) AS narrow
    ORDER BY match_tier, match_untitled, sort_key, match_key
    LIMIT {limit}
) AS first
CROSS JOIN LATERAL (
    SELECT {evidence}, {details}
    FROM {rows}
    WHERE {key} = first.match_key AND {of_household}
) AS details
ORDER BY first.match_tier, first.match_untitled, first.sort_key, first.match_key
"""


def first_matches(
    table: Table,
    *,
    household_id: int,
    query: Query | None,
    filters: Statement,
    details: Statement,
    limit: int,
    scanning: bool,
    similar_ids: Collection[int] = (),
) -> Statement:
    """Return the first rows the query matches among the household's rows
    that meet `filters`, and how many it matches, in one statement.

    Only the rows' keys, tiers and sort keys are counted and ordered, in a
    subquery the planner keeps as written (OFFSET 0): each row's tier is
    worked out once, the strong ones are told by it, and only the first
    `limit` rows are read whole, with the `details` columns (SQL on the
    table's aliases). A 2-letter query matching 30,000 contacts costs little
    more than the LIKE that finds them.

    Each row has the details and the evidence columns, its `match_tier`,
    `match_untitled` (0 when the row carries the query's title, or the query
    has none; it orders the rows within a tier), `sort_key`, `match_total`
    (every row the query matches) and `match_strong` (those not only inside a
    word; all of them without a query). Without a query every row matches, at
    Tier.EXACT. Rows among
    `similar_ids` (the similar-name lane's) are found too (`match_conditions`).
    """
    if query is None or query.is_empty:
        tier, where = sql(str(int(Tier.EXACT))), sql("TRUE")
        untitled = sql("0")
    else:
        conditions = match_conditions(query, similar_ids=similar_ids)
        tier = _rendered(conditions.tier, table, scanning)
        where = _rendered(conditions.where, table, scanning)
        untitled = _rendered(conditions.untitled, table, scanning)
    statement = compose(
        _FIRST_MATCHES,
        inside=sql(str(int(Tier.INSIDE))),
        tier=tier,
        untitled=untitled,
        sort_name=sql(table.sort_name),
        key=sql(table.key),
        rows=sql(table.rows),
        of_household=table.of_household(household_id),
        filters=filters,
        where=where,
        limit=limit,
        evidence=table.evidence(),
        details=details,
    )
    return _prepared(statement, query=query, scanning=scanning)


_GROUP = """\
SELECT {group} AS match_group, {evidence}, {fields},
    {sort_name} AS sort_key, {key} AS match_key
FROM {rows}
WHERE {of_household} AND {filters} AND {where}
"""
_GROUP_ORDER = " ORDER BY match_group, sort_key, match_key LIMIT {limit}"


def grouped_matches(
    table: Table,
    *,
    household_id: int,
    query: Query,
    filters: Statement,
    fields: Statement,
    limit: int,
    scanning: bool,
    similar_ids: Collection[int] = (),
    similar_apart: bool = False,
) -> Statement:
    """Return the first rows the query matches, by people search's group of
    their tier (`match_group`), then by name.

    Each row has the `fields` columns (SQL on the table's aliases), the
    evidence columns, `match_group`, `sort_key` and `match_key`. With
    `similar_apart` the literal matches and the rows among `similar_ids` are
    read as a UNION, each through its own index: where the name is on
    another table than the key (a member's profile), one WHERE testing both
    reads every row of both.
    """
    conditions = match_conditions(query, similar_ids=similar_ids)

    def group(where: Condition) -> Statement:
        return compose(
            _GROUP,
            group=_rendered(conditions.group, table, scanning),
            evidence=table.evidence(),
            fields=fields,
            sort_name=sql(table.sort_name),
            key=sql(table.key),
            rows=sql(table.rows),
            of_household=table.of_household(household_id),
            filters=filters,
            where=_rendered(where, table, scanning),
        )

    if similar_ids and similar_apart:
        literal = match_conditions(query).where
        statement = compose(
            "({literal}) UNION ({similar})" + _GROUP_ORDER,
            literal=group(literal),
            similar=group(is_similar(similar_ids)),
            limit=limit,
        )
    else:
        statement = compose(
            "{rows}" + _GROUP_ORDER, rows=group(conditions.where), limit=limit
        )
    return _prepared(statement, query=query, scanning=scanning)


def _prepared(
    statement: Statement, *, query: Query | None, scanning: bool
) -> Statement:
    """Return the statement, prepared where one plan serves every value."""
    return Statement(
        statement.sql,
        statement.params,
        prepare=scanning or trigram_served(query),
    )
