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
query, with its constants written out: built from Q objects, the tiers'
CASE cost Django more to resolve and compile on every call, and psycopg more
to bind, than PostgreSQL spent answering it.
"""

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from functools import lru_cache, reduce
from operator import and_, or_
from typing import Any

from django.db.models import (
    BooleanField,
    CharField,
    Count,
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

from people_search.engine.query import Query, Term
from people_search.engine.text import fold_words
from people_search.engine.vocabulary import concepts_named_by


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
    """Return every row the query matches, with `match_tier` and `match_reason`.

    Rows among `similar_ids` (the similar-name lane's) are found too, as
    Tier.SIMILAR unless they match at a word start. Callers order by
    `match_tier` and their own name column, and leave out rows that match only
    inside a word while stronger ones exist: `without_weak_matches` in SQL, or
    `strongest_rows` on the first rows of a limited query.
    """
    sql = _match_sql(query, tuple(sorted(similar_ids)))
    return queryset.filter(_Rendered(sql.where, columns, BooleanField())).annotate(
        match_tier=_Rendered(sql.tier, columns, IntegerField()),
        match_reason=_Rendered(sql.reason, columns, CharField()),
    )


def match_group(
    query: Query, *, columns: MatchColumns, similar_ids: Collection[int] = ()
) -> Expression:
    """Return how a `find_matches` row is listed by people search: 0 when it
    matches at a word start, 1 when it is a similar name, 2 when it matches
    only inside a word.

    The same as grouping `match_tier`, without writing its CASE out again.
    """
    sql = _match_sql(query, tuple(sorted(similar_ids)))
    return _Rendered(sql.group, columns, IntegerField())


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


def match_counts(
    query: Query | None,
    *,
    columns: MatchColumns,
    similar_ids: Collection[int] = (),
) -> dict[str, Window]:
    """Return window annotations counting `find_matches` rows, in the same SELECT.

    `match_total` counts every row the query matches, `match_strong` those
    not only inside a word (all of them without a query). The strong ones
    are told by the weakest rule alone, not by the tier's CASE again.
    """
    if query is None or query.is_empty:
        return {"match_total": Window(Count("pk")), "match_strong": Window(Count("pk"))}
    strong = _match_sql(query, tuple(sorted(similar_ids))).strong
    return {
        "match_total": Window(Count("pk")),
        "match_strong": Window(
            Count("pk", filter=_Rendered(strong, columns, BooleanField()))
        ),
    }


def returned_count(*, total: int, strong: int) -> int:
    """Return how many rows are found once the weak ones give way, from the
    `match_counts` of a `find_matches` query."""
    return strong or total


@dataclass(frozen=True)
class _MatchSql:
    where: "_Sql"
    tier: "_Sql"
    reason: "_Sql"
    group: "_Sql"
    # That a row is stronger than Tier.INSIDE, without the tier's CASE.
    strong: "_Sql"


@lru_cache(maxsize=256)
def _match_sql(query: Query, similar: tuple[int, ...]) -> _MatchSql:
    """Return the WHERE, tier, reason, group and strength conditions of a query,
    built once per query (at most 256 kept, a few KB each).

    With similar names a row is in when it matches literally or is similar;
    a row that is not a literal match, or is one only inside a word but is
    also similar, is Tier.SIMILAR.
    """
    literal = _literal(query)
    rules = _rules(query)
    # A term's places only grow from rule to rule, so a row that meets no
    # rule of Tier.OTHER meets none at all and matches only inside a word:
    # most rows of a broad query ("an") stop at this one test.
    weakest = _any(when for when, tier, _ in rules if tier == Tier.OTHER)
    weak = _Sql(f"NOT ({weakest.text})", weakest.params)
    inside = _case(
        [(when, str(reason)) for when, reason in _inside_reasons(query)],
        str(Reason.EMAIL),
    )
    where = literal
    tiers: list[tuple[_Sql, Tier]] = [(weak, Tier.INSIDE)]
    reasons: list[tuple[_Sql, str | _Sql]] = [(weak, inside)]
    if similar:
        is_similar = _Sql("{pk} = ANY(") + _array(similar, "int") + _Sql(")")
        not_literal = _Sql(f"NOT ({literal.text})", literal.params)
        where = literal | is_similar
        tiers = [(not_literal, Tier.SIMILAR), (weak & is_similar, Tier.SIMILAR), *tiers]
        reasons = [
            (not_literal, str(Reason.SIMILAR_NAME)),
            (weak & is_similar, str(Reason.SIMILAR_NAME)),
            *reasons,
        ]
    tiers += [(when, tier) for when, tier, _ in rules]
    reasons += [(when, str(reason)) for when, _, reason in rules]

    def tier_case(value: Callable[[Tier], int]) -> _Sql:
        return _case([(when, value(tier)) for when, tier in tiers], value(Tier.INSIDE))

    return _MatchSql(
        where=where,
        tier=tier_case(int),
        reason=_case(reasons, str(Reason.EMAIL)),
        group=tier_case(_group),
        strong=(literal & weakest) if similar else weakest,
    )


def _group(tier: Tier) -> int:
    return {Tier.SIMILAR: 1, Tier.INSIDE: 2}.get(tier, 0)


def _literal(query: Query) -> "_Sql":
    """Return the condition of a literal match: every term found, or the phone."""
    condition = _all(_found(term) for term in query.terms) if query.terms else _FALSE
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


def _inside_reasons(query: Query) -> list[tuple["_Sql", Reason]]:
    """Return where the terms of a row matching only inside words sit."""
    if not query.terms:
        return []
    return [
        (
            _all(
                _Sql("{match_text} ~ ANY(") + _array(_inside(term, fields)) + _Sql(")")
                for term in query.terms
            ),
            reason,
        )
        for fields, reason in (
            (_NAME, Reason.NAME),
            (_NAME + _ALIAS, Reason.ALIAS),
            (_NAME + _ALIAS + _RELATION, Reason.RELATION),
        )
    ]


def _inside(term: Term, fields: str) -> tuple[str, ...]:
    """Return patterns of the term anywhere in a segment of these fields."""
    # Folded words are letters and digits only: no regular-expression
    # operator comes from the term.
    return tuple(rf"\|{field}[^|]*{field.join(term.words)}" for field in fields)


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
        return self.named(term) + tuple(
            f"{field}{nickname}{field}"
            for nickname in term.nicknames
            for field in (_NAME, _ALIAS)
        )

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
    return _Sql("{concepts} && ") + _array(tokens, "varchar")


def _found(term: Term) -> "_Sql":
    """Return the WHERE condition of one term: its text, concept or nickname.

    Each nickname is first looked up in the indexed search text, so that the
    trigram index serves every branch.
    """
    nicknames = [
        _like("search_text", nickname)
        & _like_any((f"{_NAME}{nickname}{_NAME}", f"{_ALIAS}{nickname}{_ALIAS}"))
        for nickname in term.nicknames
    ]
    return _any([_like("search_text", term.text), _concept(term), *nicknames])


# The columns a condition reads, as `{slot}`s in its text, and where each is
# found from the queried model; a model without one never meets a condition
# on it.
_SLOTS = ("pk", "search_text", "match_text", "phone_digits", "concepts")


@dataclass(frozen=True)
class _Sql:
    """A condition or a value in SQL: `{slot}` for each column it reads,
    `%s` for each of `params` in order (see `_constant`)."""

    text: str
    params: tuple[Any, ...] = ()

    def __and__(self, other: "_Sql") -> "_Sql":
        return _Sql(f"({self.text} AND {other.text})", self.params + other.params)

    def __or__(self, other: "_Sql") -> "_Sql":
        return _Sql(f"({self.text} OR {other.text})", self.params + other.params)

    def __add__(self, other: "_Sql") -> "_Sql":
        return _Sql(self.text + other.text, self.params + other.params)


def _constant(value: str | int) -> _Sql:
    """Return a constant of the query in SQL: written out when it is a number or
    text without a quote (folded words, patterns, concepts), else a parameter.

    psycopg binds parameters on the client, one dump per parameter and
    call; a query's many patterns cost more that way than its SQL does. A
    literal without a quote cannot end early (PostgreSQL reads backslashes
    in it as plain characters, its default since 9.1); `%` and braces are
    doubled for psycopg's and `_Rendered`'s formatting.
    """
    if isinstance(value, int):
        return _Sql(str(int(value)))
    if "'" in value or "\x00" in value:
        return _Sql("%s", (value,))
    escaped = value.replace("%", "%%").replace("{", "{{").replace("}", "}}")
    return _Sql(f"'{escaped}'")


def _array(values: Sequence[str | int], element: str = "text") -> _Sql:
    """Return an array of constants, typed `element[]`."""
    items = [_constant(value) for value in values]
    return _Sql(
        f"ARRAY[{', '.join(item.text for item in items)}]::{element}[]",
        tuple(param for item in items for param in item.params),
    )


_FALSE = _Sql("FALSE")


def _like(slot: str, text: str) -> _Sql:
    """Return that the column's text contains this text."""
    return _Sql(f"{{{slot}}} LIKE ") + _constant(_containing(text))


def _like_any(texts: Sequence[str]) -> _Sql:
    """Return that the match document contains one of these texts."""
    patterns = _array(tuple(map(_containing, texts)))
    return _Sql("{match_text} LIKE ANY(") + patterns + _Sql(")")


def _containing(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _all(conditions: Iterable[_Sql]) -> _Sql:
    return reduce(and_, conditions)


def _any(conditions: Iterable[_Sql | None]) -> _Sql:
    present = [c for c in conditions if c is not None]
    return reduce(or_, present) if present else _FALSE


def _case(whens: Sequence[tuple[_Sql, int | str | _Sql]], default: int | str) -> _Sql:
    if not whens:
        return _constant(default)
    case = _Sql("(CASE")
    for when, value in whens:
        then = value if isinstance(value, _Sql) else _constant(value)
        case = case + _Sql(" WHEN ") + when + _Sql(" THEN ") + then
    return case + _Sql(" ELSE ") + _constant(default) + _Sql(" END)")


class _Rendered(Expression):
    """SQL the engine writes itself around the few columns it reads.

    Django resolves and compiles the column references only; the text around
    them is built once per query (`_match_sql`), so a long CASE costs a
    string format however often a surface's query refers to it.
    """

    def __init__(self, sql: _Sql, columns: MatchColumns, output_field: Field) -> None:
        super().__init__(output_field=output_field)
        self.sql = sql
        self.columns = columns
        self.slots = [slot for slot in _SLOTS if f"{{{slot}}}" in sql.text]
        self.sources: list[Any] = [
            F(column) if (column := columns.column(slot)) else Value(None)
            for slot in self.slots
        ]

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
        return self.sql.text.format_map(columns), list(self.sql.params)
