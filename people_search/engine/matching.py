"""The one matching engine: which rows a query matches, how strongly, and why.

Every surface that finds people (find_person, people_search, search_anything,
the contact pages, admin search) parses its query with `parse_query` and
filters and ranks with `rank_matches` (or `find_matches` and
`strongest_rows` where its LIMIT should reach the database), so two surfaces
never disagree about who matches or who comes first.

A row matches when every term appears in its folded search text, names a
concept of its relation or an alias, or is a nickname of a word of its names
(or the query's phone digits are in its phone). How strongly, best first:

1. exact: the whole query is a name or an alias;
2. prefix: every term starts a word of a name or an alias;
3. concept: … or names the concept of the relation or an alias ("Omi" and
   "grandma" for a "Großmutter");
4. nickname: … or is a nickname or variant of a name word ("Sepp" for Josef);
5. other: … or starts a word of the relation or an email, or the phone matches;
6. inside: some term sits only inside a word ("oma" in "Thomas").

A match inside a word is the weakest evidence: such rows are returned only
while no row matches at a word start, so partial typing ("homas") still finds
Thomas but "Oma" finds the grandmothers alone. As they never appear beside
stronger rows, nothing ranks below them but similar names, whatever their
number says.

The tiers read columns that every write derives, never folding while a query
waits: the folded `search_text` (trigram indexed, the WHERE), a `match_text`
of the row's words by field (see `match_document`), and for contacts a
`concepts` array (GIN indexed) of the concepts their relation and aliases
name (see `concept_tokens`). The tiers are LIKEs on the matched rows only.

The engine writes the SQL of these conditions itself (`_Rendered`), once per
query: built from Q objects, the tiers' CASE cost Django more to resolve and
compile on every call than PostgreSQL spent answering it. The query's words
are parameters, one array per place a term is looked for, so the text
depends only on the query's shape and recurs from call to call. Only the
WHERE and the tier are SQL, each place of a term tested once; why a returned
row matched (`match_reason`) is read in Python from the same rules, on its
columns.
"""

import re
from collections.abc import (
    Callable,
    Collection,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from functools import lru_cache, reduce
from operator import and_, or_
from typing import Any, cast

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
from django.db.models.expressions import RawSQL
from django.db.models.functions import Greatest

from people_search.engine.query import Query, Term
from people_search.engine.text import fold_words
from people_search.engine.vocabulary import concepts_named_by
from yorik.compiled import CompiledValues, cursor_for


class Tier(IntEnum):
    """How strongly a row matches; lower is stronger."""

    EXACT = 0
    PREFIX = 1
    CONCEPT = 2
    NICKNAME = 3
    OTHER = 4
    INSIDE = 5
    SIMILAR = 6


class Reason(StrEnum):
    """Why a row matched, as find_person reports it."""

    NAME = "name"
    ALIAS = "alias"
    RELATION = "relation"
    NICKNAME = "nickname"
    EMAIL = "email"
    PHONE = "phone"
    CHANNEL = "channel"
    SIMILAR_NAME = "similar_name"


# The fields of a match document. Each segment is "|" then the field's
# separator before, between and after its words: names " anna becker ",
# aliases "~oma~gisela~", the relation "=grossmutter=", emails
# "@anna@example@org@". Folded words are letters and digits only, so a
# separator says which field a word is in, and every test of a tier is a
# LIKE: "% gis" starts a word of a name, "~oma~" is a whole alias word,
# "|~oma~|" a whole alias.
_NAME, _ALIAS, _RELATION, _EMAIL = " ", "~", "=", "@"
_RELATION_CONCEPT = "relation:"
_ALIAS_CONCEPT = "alias:"


def match_document(
    *,
    names: Iterable[str],
    aliases: Iterable[str] = (),
    relation: str = "",
    emails: Iterable[str] = (),
) -> str:
    """Return the words of a row's names, aliases, relation and emails by field."""
    fields = [
        *((_NAME, text) for text in names),
        *((_ALIAS, text) for text in aliases),
        (_RELATION, relation),
        *((_EMAIL, text) for text in emails),
    ]
    segments = list(
        dict.fromkeys(
            _segment(separator, words)
            for separator, text in fields
            if (words := fold_words(text or ""))
        )
    )
    return f"|{'|'.join(segments)}|" if segments else ""


def _segment(separator: str, words: Sequence[str]) -> str:
    return f"{separator}{separator.join(words)}{separator}"


def relation_concept_token(concept_id: str) -> str:
    """Return the token a row's concepts hold when its relation names the concept."""
    return _RELATION_CONCEPT + concept_id


def concept_tokens(*, relation: str, aliases: Iterable[str]) -> list[str]:
    """Return the concepts a row's relation and aliases name, tagged by field."""
    tokens = [relation_concept_token(c) for c in concepts_named_by(relation)]
    tokens += [
        _ALIAS_CONCEPT + concept
        for alias in aliases
        for concept in concepts_named_by(alias)
    ]
    return sorted(set(tokens))


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

    def column(self, slot: str) -> str | None:
        """Return the lookup of a column the conditions read ("pk" is the row's)."""
        return "pk" if slot == "pk" else getattr(self, slot)


def matches(query: Query, *, columns: MatchColumns) -> Expression:
    """Return the condition a row meets when the query matches it at all.

    Every term must appear in the folded search text (a trigram index serves
    each LIKE), name a concept of the row (its GIN index), or be a nickname
    of a name word; or the query's phone digits are inside the row's.
    """
    return _Rendered(_literal(query), columns, BooleanField())


def find_matches(
    queryset: QuerySet,
    *,
    query: Query,
    columns: MatchColumns,
    similar_ids: Collection[int] = (),
) -> QuerySet:
    """Return every row the query matches, with its `match_tier` (and with
    `match_values` selected, its `match_reason`).

    Rows among `similar_ids` (the similar-name lane's) are found too, as
    Tier.SIMILAR unless they match at a word start. Callers order by
    `match_tier` and their own name column, and leave out rows that match only
    inside a word while stronger ones exist: `without_weak_matches` in SQL, or
    `strongest_rows` on the first rows of a limited query.
    """
    sql = _match_sql(query, tuple(sorted(similar_ids)))
    return queryset.filter(sql.rendered("where", columns, BooleanField())).annotate(
        match_tier=sql.rendered("tier", columns, IntegerField())
    )


def similar_rows(queryset: QuerySet, *, similar_ids: Collection[int]) -> QuerySet:
    """Return the rows among `similar_ids` (the similar-name lane's).

    The ids are one array parameter, so the SQL does not depend on how many
    there are; inside `parameter_markers` its value is `similar_parameters`'.
    """
    condition = _is_similar(tuple(sorted(similar_ids)))
    return queryset.filter(
        _Rendered(condition, MatchColumns(), BooleanField(), first=0)
    )


def similar_parameters(similar_ids: Collection[int]) -> tuple[Any, ...]:
    """Return the values `similar_rows` binds, numbered as `parameter_markers`
    numbers them."""
    return _is_similar(tuple(sorted(similar_ids))).params


def every_row(queryset: QuerySet) -> QuerySet:
    """Return every row as `find_matches` would without a query: all at
    Tier.EXACT."""
    return queryset.annotate(match_tier=Value(int(Tier.EXACT)))


def match_values(columns: MatchColumns, *, grouped: bool = False) -> list[str]:
    """Return what a `find_matches` row is selected with for `match_reason`:
    its tier, or its `match_group` when `grouped`, and its `match_columns`."""
    strength = "match_group" if grouped else "match_tier"
    return [strength, *match_columns(columns)]


def match_columns(columns: MatchColumns) -> list[str]:
    """Return the columns the rules read, for `match_reason`."""
    slots = ("match_text", "concepts", "phone_digits")
    return list(filter(None, map(columns.column, slots)))


def match_reason(
    query: Query | None, value: Mapping[str, Any], columns: MatchColumns
) -> Reason | None:
    """Return why a `find_matches` row matched, from its `match_values`
    (None without a query).

    Only the tier is worked out in SQL, where it orders the rows; the reason
    matters for the few rows returned, so it is read here from the same
    rules, tested on the row's match document, concepts and phone.
    """
    if query is None or query.is_empty:
        return None
    if "match_tier" in value:
        tier = value["match_tier"]
    else:
        # A row of group 0 is of some tier stronger than Tier.INSIDE: the first
        # rule it meets is that tier's.
        tier = {g: t for t, g in _GROUPS.items()}.get(value["match_group"])
    if tier == Tier.SIMILAR:
        return Reason.SIMILAR_NAME

    def read(slot: str) -> Any:
        column = columns.column(slot)
        return value[column] if column else None

    row = _Evidence(
        document=read("match_text") or "",
        concepts=frozenset(read("concepts") or ()),
        phone=read("phone_digits") or "",
    )
    if tier == Tier.INSIDE:
        tests = _inside_reasons(query)
    else:
        tests = [
            t
            for of, tested in _reasons(query).items()
            if tier in (None, of)
            for t in tested
        ]
    return next((reason for test, reason in tests if test(row)), Reason.EMAIL)


def match_group(
    query: Query, *, columns: MatchColumns, similar_ids: Collection[int] = ()
) -> Expression:
    """Return how a `find_matches` row is listed by people search (to annotate
    as `match_group`): 0 when it matches at a word start, 1 when it is a
    similar name, 2 when it matches only inside a word.

    The same as grouping `match_tier`, without writing its CASE out again.
    """
    sql = _match_sql(query, tuple(sorted(similar_ids)))
    return sql.rendered("group", columns, IntegerField())


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


def strongest_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Return the first rows of a query ordered by `match_tier`, without those
    that match only inside a word unless they are all there is.

    The SQL-free twin of `without_weak_matches`, for a query whose LIMIT
    should reach the database.
    """
    if rows and rows[0]["match_tier"] < Tier.INSIDE:
        return [row for row in rows if row["match_tier"] != Tier.INSIDE]
    return list(rows)


class FirstMatches:
    """The first rows of `find_matches` queries over one model and how many
    each matches, in one SELECT.

    Only the rows' keys, tiers and sort keys are counted and ordered (the
    `narrow` values of a `find_matches` queryset with a `sort_key`), in a
    subquery the planner keeps as written (OFFSET 0): each row's tier is
    worked out once, the strong ones are told by it, and only the first rows
    are read whole, joined to `details`, a `values()` queryset of the model
    with what each returned row needs, compiled once. A 2-letter query
    matching 30,000 contacts costs little more than the LIKE that finds them.

    Each row has the details' values and its `match_tier`, `sort_key`,
    `match_total` (every row the query matches) and `match_strong` (those not
    only inside a word; all of them without a query).
    """

    _COUNTED = ("match_tier", "sort_key", "match_total", "match_strong")

    def __init__(self, details: Callable[[], QuerySet], *, using: str = "default"):
        self._details = CompiledValues(
            lambda: details().filter(pk=RawSQL('"first"."match_key"', ())),
            using=using,
        )
        self._using = using

    @staticmethod
    def narrow(matches: QuerySet) -> QuerySet:
        """Return what the rows of a `find_matches` queryset with a `sort_key`
        are counted and ordered by, to compile into the statement `rows` runs."""
        return matches.order_by().values("match_tier", "sort_key", match_key=F("pk"))

    def rows(
        self,
        narrow: tuple[str, Sequence[Any]] | None,
        *,
        limit: int,
        prepared: bool = False,
    ) -> list[dict[str, Any]]:
        """Return the first rows of the `narrow` query's SQL and parameters
        (None for a query that matches nothing); `prepared` plans the SELECT
        once per connection."""
        if narrow is None:
            return []
        narrow_sql, narrow_params = narrow
        detail_sql, detail_params = self._details.statement()
        order = '"match_tier", "sort_key", "match_key"'
        picked = ", ".join(f'"first"."{name}"' for name in self._COUNTED)
        sql = (
            f"SELECT {picked}, "  # noqa: S608 - compiled SQL and constants only
            '"details".* FROM (SELECT "narrow".*, COUNT(*) OVER () AS "match_total", '
            f'COUNT(*) FILTER (WHERE "narrow"."match_tier" < {int(Tier.INSIDE)}) '
            f'OVER () AS "match_strong" FROM ({narrow_sql} OFFSET 0) "narrow" '
            f'ORDER BY {order} LIMIT %s) "first" '
            f'CROSS JOIN LATERAL ({detail_sql}) "details" ORDER BY {order}'
        )
        with cursor_for(self._using, prepared=prepared) as cursor:
            cursor.execute(sql, (*narrow_params, limit, *detail_params))
            fetched = cursor.fetchall()
        counted = len(self._COUNTED)
        details = self._details.rows([row[counted:] for row in fetched])
        return [
            {**dict(zip(self._COUNTED, row[:counted], strict=True)), **detail}
            for row, detail in zip(fetched, details, strict=True)
        ]


def returned_count(*, total: int, strong: int) -> int:
    """Return how many rows are found once the weak ones give way, from the
    counts of `FirstMatches`."""
    return strong or total


def trigram_served(query: Query | None) -> bool:
    """Return whether the trigram indexes answer the WHERE of `find_matches`
    for every query of this one's shape, so that one plan made without its
    values serves them all: each term and the phone's digits hold three
    letters or digits in a row.

    A term of one or two letters ("mü") has no trigram: a plan that asks
    the index for it reads the whole index, every household's rows.
    """
    if query is None or query.is_empty:
        return False
    texts = [term.text for term in query.terms]
    if query.phone_digits:
        texts.append(query.phone_digits)
    return all(_TRIGRAM.search(text) for text in texts)


# Three letters or digits in a row: a trigram pg_trgm indexes.
_TRIGRAM = re.compile(r"[^\W_]{3}")


def match_shape(query: Query | None, *, similar_ids: Collection[int] = ()) -> Hashable:
    """Return what the SQL of `find_matches` and `match_group`
    depends on besides its values (`match_parameters`): the query's shape."""
    if query is None or query.is_empty:
        return None
    sql = _match_sql(query, tuple(sorted(similar_ids)))
    return tuple(getattr(sql, part).text for part in _PARTS)


def match_parameters(
    query: Query | None, *, similar_ids: Collection[int] = ()
) -> tuple[Any, ...]:
    """Return the values that SQL binds, numbered as `parameter_markers` numbers
    them."""
    if query is None or query.is_empty:
        return ()
    sql = _match_sql(query, tuple(sorted(similar_ids)))
    return tuple(param for part in _PARTS for param in getattr(sql, part).params)


_MARKERS: ContextVar[Callable[[int], Any] | None] = ContextVar(
    "matching_markers", default=None
)


@contextmanager
def parameter_markers(markers: Callable[[int], Any]) -> Iterator[None]:
    """Let the conditions built meanwhile bind `markers(n)` for the nth value of
    `match_parameters`, so that a compiled query can bind another query's
    values of the same shape (yorik.compiled.CompiledShapes)."""
    token = _MARKERS.set(markers)
    try:
        yield
    finally:
        _MARKERS.reset(token)


_SCANNING: ContextVar[bool] = ContextVar("matching_scanning", default=False)


@contextmanager
def scanning_rows(scanning: bool = True) -> Iterator[None]:
    """Let the conditions built meanwhile read each row's columns in a form no
    trigram or GIN index answers (`search_text || ''`), when `scanning`.

    A plan made once for every small household (yorik.sizes.one_plan_fits)
    then reads a household's own rows, as such a household is searched
    fastest: without its values PostgreSQL guessed a pattern rare and asked
    the trigram index, which for a word of two letters reads the whole
    index (a two-letter search of 1,000 contacts took 37 to 88 ms instead
    of 7).
    """
    token = _SCANNING.set(scanning)
    try:
        yield
    finally:
        _SCANNING.reset(token)


# The conditions of a query in the order of their values.
_PARTS = ("where", "tier", "group")


@dataclass(frozen=True)
class _MatchSql:
    where: "_Sql"
    tier: "_Sql"
    group: "_Sql"

    def rendered(self, part: str, columns: MatchColumns, output: Field) -> "_Rendered":
        """Return one condition as an expression; its values come after those
        of the conditions before it in `_PARTS`."""
        before = _PARTS[: _PARTS.index(part)]
        first = sum(len(getattr(self, other).params) for other in before)
        return _Rendered(getattr(self, part), columns, output, first=first)


@lru_cache(maxsize=256)
def _match_sql(query: Query, similar: tuple[int, ...]) -> _MatchSql:
    """Return the WHERE, tier and group conditions of a query, built
    once per query (at most 256 kept, a few KB each).

    With similar names a row is in when it matches literally or is similar;
    a row that is not a literal match, or is one only inside a word but is
    also similar, is Tier.SIMILAR.
    """
    literal = _literal(query)
    return _MatchSql(
        where=literal | _is_similar(similar) if similar else literal,
        tier=_tier(query, similar, int, literal),
        group=_tier(query, similar, _group, literal),
    )


def _tier(
    query: Query,
    similar: tuple[int, ...],
    value: Callable[[Tier], int],
    literal: "_Sql",
) -> "_Sql":
    """Return a row's tier (or another value of it that keeps its order).

    The tier of the rules (`_rules`), written so that each place a term may
    stand in is tested once: a term's tier is its strongest place, a row's
    the weakest of its terms', unless the whole query is a name or the
    phone matches. A term found in no place sits inside a word, or is a
    similar name's; as a row is one or the other for all its terms, the
    order holds whether `value` puts similar names before or after. A
    similar name that is no literal match is one whatever its words ("Tomas
    M." finds Thomas Müller by its words, not by the text "m.").
    """
    words = _Patterns(query)
    rest = _constant(value(Tier.INSIDE))
    if similar:
        rest = _case([(_is_similar(similar), value(Tier.SIMILAR))], rest)

    def term_tier(term: Term, named: int | _Sql) -> _Sql:
        places = [
            (_like_any(words.named(term)), named),
            (_concept(term), value(Tier.CONCEPT)),
            (
                _like_any(words.nicknames(term)) if term.nicknames else None,
                value(Tier.NICKNAME),
            ),
            (_like_any(words.elsewhere(term)), value(Tier.OTHER)),
        ]
        return _case([(when, tier) for when, tier in places if when], rest)

    tier = rest
    if query.terms:
        # A name or alias that is the whole query has every term at the start
        # of its words: the first term's name place tells Tier.EXACT from
        # Tier.PREFIX, looking for the whole query in those rows alone, and
        # the other terms' name places weigh nothing beside it.
        first = others = value(Tier.PREFIX)
        exact = words.exact(_NAME) + words.exact(_ALIAS)
        if exact:
            first = _case([(_like_any(exact), value(Tier.EXACT))], first)
            others = value(Tier.EXACT)
        tier = _call(
            "GREATEST",
            [
                term_tier(term, others if number else first)
                for number, term in enumerate(query.terms)
            ],
        )
    if query.phone_digits:
        phone = _case(
            [(_like("phone_digits", query.phone_digits), value(Tier.OTHER))], rest
        )
        tier = _call("LEAST", [tier, phone]) if query.terms else phone
    if similar:
        not_literal = _Sql(f"NOT ({literal.text})", literal.params)
        tier = _case([(not_literal, value(Tier.SIMILAR))], tier)
    return tier


def _is_similar(similar: tuple[int, ...]) -> "_Sql":
    return _Sql("{pk} = ANY(") + _array(similar, "int") + _Sql(")")


@lru_cache(maxsize=256)
def _reasons(query: Query) -> dict[Tier, list[tuple["_Test", Reason]]]:
    """Return the tests of a row's reason by tier, first come first."""
    rules: dict[Tier, list[tuple[_Test, Reason]]] = {}
    for when, tier, reason in _rules(query):
        # Every rule reads the match document, concepts or phone only.
        rules.setdefault(tier, []).append((cast(_Test, when.test), reason))
    return rules


# People search's groups of the tiers; every other tier is group 0.
_GROUPS = {Tier.SIMILAR: 1, Tier.INSIDE: 2}


def _group(tier: Tier) -> int:
    return _GROUPS.get(tier, 0)


def _literal(query: Query) -> "_Sql":
    """Return the condition of a literal match: every term found, or the phone.

    The term with the fewest alternatives is tested first: PostgreSQL keeps
    the order of an AND inside an OR (the similar names'), and most rows
    fail the cheapest test ("schmidt") before "anna" and its eleven
    nicknames are looked for.
    """
    terms = sorted(
        query.terms, key=lambda term: len(term.nicknames) + len(term.concepts)
    )
    condition = _all(map(_found, terms)) if terms else _FALSE
    if query.phone_digits:
        condition |= _like("phone_digits", query.phone_digits)
    return condition


def _rules(query: Query) -> list[tuple["_Sql", Tier, Reason]]:
    """Return (condition, tier, reason) from the strongest match to the weakest.

    Every tier here is stronger than Tier.INSIDE, the tier of the rest. Each
    term's condition is one LIKE ANY of the places its words may start (and
    the row's concepts), so a tier costs one short test per term.
    """
    words = _Patterns(query)
    rules: list[tuple[_Sql, Tier, Reason]] = []
    terms = query.terms

    def every_term(
        places: Callable[[Term], tuple[str, ...]], *, concepts: bool = False
    ) -> _Sql:
        return _all(
            _any([_like_any(places(t)), _concept(t) if concepts else None])
            for t in terms
        )

    if terms:
        rules += [
            (_like_any(words.exact(_NAME)), Tier.EXACT, Reason.NAME),
            (_like_any(words.exact(_ALIAS)), Tier.EXACT, Reason.ALIAS),
            (every_term(words.names), Tier.PREFIX, Reason.NAME),
            (every_term(words.named), Tier.PREFIX, Reason.ALIAS),
        ]
        if any(term.concepts for term in terms):
            conceptual = every_term(words.named, concepts=True)
            relation = _any(_concept(t, _RELATION_CONCEPT) for t in terms)
            rules += [
                (conceptual & relation, Tier.CONCEPT, Reason.RELATION),
                (conceptual, Tier.CONCEPT, Reason.ALIAS),
            ]
        if any(term.nicknames for term in terms):
            rules.append(
                (
                    every_term(words.nicknamed, concepts=True),
                    Tier.NICKNAME,
                    Reason.NICKNAME,
                )
            )
    if query.phone_digits:
        rules.append(
            (_like("phone_digits", query.phone_digits), Tier.OTHER, Reason.PHONE)
        )
    if terms:
        rules += [
            (every_term(words.related, concepts=True), Tier.OTHER, Reason.RELATION),
            (every_term(words.anywhere, concepts=True), Tier.OTHER, Reason.EMAIL),
        ]
    return rules


@lru_cache(maxsize=256)
def _inside_reasons(query: Query) -> list[tuple["_Test", Reason]]:
    """Return where the terms of a row matching only inside words sit: all in
    names, in names and aliases, or with the relation too.

    Apart from `_reasons`, so that its regular expressions are compiled only
    for a query some row matches only inside a word.
    """
    if not query.terms:
        return []

    def within(fields: str) -> "_Test":
        by_term = [
            [
                re.compile(rf"\|{re.escape(field)}[^|]*{re.escape(field.join(words))}")
                for field in fields
            ]
            for words in (term.words for term in query.terms)
        ]
        return lambda row: all(
            any(pattern.search(row.document) for pattern in term) for term in by_term
        )

    return [
        (within(_NAME), Reason.NAME),
        (within(_NAME + _ALIAS), Reason.ALIAS),
        (within(_NAME + _ALIAS + _RELATION), Reason.RELATION),
    ]


class _Patterns:
    """Where a query's words may stand in a match document, as LIKE patterns."""

    def __init__(self, query: Query) -> None:
        self.query = query

    def exact(self, field: str) -> tuple[str, ...]:
        """A whole segment of the field is the query."""
        return tuple(
            f"|{_segment(field, phrase.split())}|"
            for phrase in self.query.exact_phrases
        )

    def names(self, term: Term) -> tuple[str, ...]:
        """The term starts a word of a name."""
        return self._starts(term, _NAME)

    def named(self, term: Term) -> tuple[str, ...]:
        """… of a name or an alias."""
        return self._starts(term, _NAME + _ALIAS)

    def nicknamed(self, term: Term) -> tuple[str, ...]:
        """… or a word of a name or an alias is one of the term's nicknames."""
        return self.named(term) + self.nicknames(term)

    def nicknames(self, term: Term) -> tuple[str, ...]:
        """A word of a name or an alias is one of the term's nicknames."""
        return tuple(
            f"{field}{nickname}{field}"
            for nickname in term.nicknames
            for field in (_NAME, _ALIAS)
        )

    def elsewhere(self, term: Term) -> tuple[str, ...]:
        """The term starts a word of the relation or an email."""
        return self._starts(term, _RELATION + _EMAIL)

    def related(self, term: Term) -> tuple[str, ...]:
        """… or the term starts a word of the relation."""
        return self.nicknamed(term) + self._starts(term, _RELATION)

    def anywhere(self, term: Term) -> tuple[str, ...]:
        """… or of an email."""
        return self.related(term) + self._starts(term, _EMAIL)

    @staticmethod
    def _starts(term: Term, fields: str) -> tuple[str, ...]:
        return tuple(field + field.join(term.words) for field in fields)


def _concept(term: Term, field: str | None = None) -> "_Sql | None":
    """Return that the row's relation or an alias names the term's concept."""
    if not term.concepts:
        return None
    fields = (field,) if field else (_RELATION_CONCEPT, _ALIAS_CONCEPT)
    tokens = tuple(prefix + concept for prefix in fields for concept in term.concepts)
    return _tested(
        _Sql("{concepts} && ") + _array(tokens, "varchar"),
        lambda row: not row.concepts.isdisjoint(tokens),
    )


def _found(term: Term) -> "_Sql":
    """Return the WHERE condition of one term: its text, concept or nickname.

    Each nickname is looked up in the indexed search text too, so that the
    trigram index serves every branch (`_may_hold_word`). Where the rows are
    filtered instead, its places in the match document are tested first:
    PostgreSQL keeps the order of an AND inside an OR, and the short LIKE ANY
    rules out most rows before a word-similarity test ("ma" for Marie) reads
    the search text's trigrams (881 Hubers at 50k: 6.6 ms, then 3.0).
    """
    nicknames = [
        _like_any((f"{_NAME}{nickname}{_NAME}", f"{_ALIAS}{nickname}{_ALIAS}"))
        & _may_hold_word(nickname)
        for nickname in term.nicknames
    ]
    return _any([_like("search_text", term.text), _concept(term), *nicknames])


def _may_hold_word(word: str) -> "_Sql":
    """Return that the search text may hold this word, as the trigram index
    can tell: it contains the word, or for a word of one or two letters
    ("ab", "ed"), which has no trigram of its own, holds it as a word
    (pg_trgm's strict word similarity is 1 for a whole word, whatever the
    threshold). A LIKE of "ab" would read every row of the household, and
    with it the whole OR of the query's WHERE.
    """
    if len(word) >= 3:
        return _like("search_text", word)
    return _Sql("%s <<%% {search_text}", (word,))


# The columns a condition reads, as `{slot}`s in its text, and where each is
# found from the queried model; a model without one never meets a condition
# on it.
_SLOTS = ("pk", "search_text", "match_text", "phone_digits", "concepts")
# What each column is joined with so that no index answers it (`scanning_rows`).
_UNINDEXED = {
    "search_text": "''",
    "match_text": "''",
    "phone_digits": "''",
    "concepts": "ARRAY[]::varchar[]",
}


@dataclass(frozen=True)
class _Evidence:
    """What `match_reason` reads of a row: its match document, concepts and phone."""

    document: str
    concepts: frozenset[str]
    phone: str


_Test = Callable[[_Evidence], bool]


@dataclass(frozen=True)
class _Sql:
    """A condition or a value in SQL: `{slot}` for each column it reads,
    `%s` for each of `params` in order (see `_array`).

    A condition on the match document, concepts or phone also carries its
    `test` in Python, the same condition on a row's `_Evidence`.
    """

    text: str
    params: tuple[Any, ...] = ()
    test: _Test | None = field(default=None, compare=False)

    def __and__(self, other: "_Sql") -> "_Sql":
        return _Sql(
            f"({self.text} AND {other.text})",
            self.params + other.params,
            _both(self.test, other.test, all),
        )

    def __or__(self, other: "_Sql") -> "_Sql":
        return _Sql(
            f"({self.text} OR {other.text})",
            self.params + other.params,
            _both(self.test, other.test, any),
        )

    def __add__(self, other: "_Sql") -> "_Sql":
        return _Sql(self.text + other.text, self.params + other.params)


def _both(
    one: _Test | None, other: _Test | None, combine: Callable[[Iterable[bool]], bool]
) -> _Test | None:
    if one is None or other is None:
        return None
    return lambda row: combine(test(row) for test in (one, other))


def _tested(sql: _Sql, test: _Test) -> _Sql:
    return _Sql(sql.text, sql.params, test)


def _constant(value: int) -> _Sql:
    """Return a number of the query's shape (a tier), written out."""
    return _Sql(str(int(value)))


def _array(values: Sequence[str | int], element: str = "text") -> _Sql:
    """Return an array of the query's values, one parameter typed `element[]`.

    The values are parameters, never written out, so a statement's text
    depends on the query's shape only (its terms, their nicknames and
    concepts, the phone, similar names): psycopg parses each text once, and
    the text recurs. The parameter is the array's text ("{"a","b"}"), which
    psycopg binds as one string: as a list, each of a statement's thirty
    arrays cost it a search for the elements' type, a third of find_person's
    remaining CPU.
    """
    items = (
        '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
        for value in values
    )
    return _Sql(f"%s::{element}[]", ("{" + ",".join(items) + "}",))


_FALSE = _Sql("FALSE", test=lambda row: False)


def _like(slot: str, text: str) -> _Sql:
    """Return that the column's text contains this text."""
    sql = _Sql(f"{{{slot}}} LIKE %s", (_containing(text),))
    if slot == "phone_digits":
        return _tested(sql, lambda row: text in row.phone)
    return sql


def _like_any(texts: Sequence[str]) -> _Sql:
    """Return that the match document contains one of these texts."""
    patterns = _array(tuple(map(_containing, texts)))
    return _tested(
        _Sql("{match_text} LIKE ANY(") + patterns + _Sql(")"),
        lambda row: any(text in row.document for text in texts),
    )


def _containing(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _all(conditions: Iterable[_Sql]) -> _Sql:
    return reduce(and_, conditions)


def _any(conditions: Iterable[_Sql | None]) -> _Sql:
    present = [c for c in conditions if c is not None]
    return reduce(or_, present) if present else _FALSE


def _case(whens: Sequence[tuple[_Sql, int | _Sql]], default: int | _Sql) -> _Sql:
    def sql(value: int | _Sql) -> _Sql:
        return value if isinstance(value, _Sql) else _constant(value)

    if not whens:
        return sql(default)
    case = _Sql("(CASE")
    for when, value in whens:
        case = case + _Sql(" WHEN ") + when + _Sql(" THEN ") + sql(value)
    return case + _Sql(" ELSE ") + sql(default) + _Sql(" END)")


def _call(function: str, arguments: Sequence[_Sql]) -> _Sql:
    """Return a function of several values; of one, the value itself."""
    if len(arguments) == 1:
        return arguments[0]
    sql = _Sql(f"{function}(")
    for number, argument in enumerate(arguments):
        sql = sql + (_Sql(", ") if number else _Sql("")) + argument
    return sql + _Sql(")")


class _Rendered(Expression):
    """SQL the engine writes itself around the few columns it reads.

    Django resolves and compiles the column references only; the text around
    them is built once per query (`_match_sql`), so a long CASE costs a
    string format however often a surface's query refers to it. Built
    inside `parameter_markers`, it binds markers in place of its values,
    numbered from `first`.
    """

    def __init__(
        self,
        sql: _Sql,
        columns: MatchColumns,
        output_field: Field,
        *,
        first: int | None = None,
    ) -> None:
        super().__init__(output_field=output_field)
        self.sql = sql
        self.columns = columns
        self.slots = [slot for slot in _SLOTS if f"{{{slot}}}" in sql.text]
        self.sources: list[Any] = [
            F(column) if (column := columns.column(slot)) else Value(None)
            for slot in self.slots
        ]
        self.markers = _MARKERS.get()
        # Only a column is read past its index; NULL for a model without one
        # stays NULL, so that a condition on it keeps its value.
        self.unindexed = {
            slot
            for slot in self.slots
            if _SCANNING.get() and slot in _UNINDEXED and columns.column(slot)
        }
        if self.markers is not None and first is None:
            raise ValueError("This condition's values are not numbered.")
        self.first = first or 0

    def get_source_expressions(self) -> list[Any]:
        return self.sources

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        self.sources = list(exprs)

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        columns = {}
        for slot, source in zip(self.slots, self.sources, strict=True):
            # A column reference, or NULL where the model has no such column,
            # so that no condition on it holds. Neither takes parameters.
            columns[slot], _ = compiler.compile(source)
            if slot in self.unindexed:
                columns[slot] = f"({columns[slot]} || {_UNINDEXED[slot]})"
        if self.markers is not None:
            params = [
                self.markers(self.first + number)
                for number in range(len(self.sql.params))
            ]
        else:
            params = list(self.sql.params)
        return self.sql.text.format_map(columns), params
