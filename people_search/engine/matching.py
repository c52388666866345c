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
"""

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from functools import reduce
from operator import and_, or_
from typing import Any

from django.db.models import (
    Case,
    CharField,
    Count,
    F,
    IntegerField,
    Min,
    Q,
    QuerySet,
    Value,
    When,
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


def concept_tokens(*, relation: str, aliases: Iterable[str]) -> list[str]:
    """Return the concepts a row's relation and aliases name, tagged by field."""
    tokens = [_RELATION_CONCEPT + concept for concept in concepts_named_by(relation)]
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


def matches(query: Query, *, columns: MatchColumns) -> Q:
    """Return the condition a row meets when the query matches it at all.

    Every term must appear in the folded search text (a trigram index serves
    each LIKE), name a concept of the row (its GIN index), or be a nickname
    of a name word; or the query's phone digits are inside the row's.
    """
    conditions = _Conditions(query, columns)
    condition = (
        _all(conditions.found(term) for term in query.terms)
        if query.terms
        else Q(pk__in=[])
    )
    if phone := conditions.phone():
        condition |= phone
    return condition


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
    literal = matches(query, columns=columns)
    tier = match_tier(query, columns=columns)
    reason = match_reason(query, columns=columns)
    if not similar_ids:
        return queryset.filter(literal).annotate(match_tier=tier, match_reason=reason)
    similar = Q(pk__in=list(similar_ids))
    queryset = queryset.filter(literal | similar).annotate(
        literal_tier=Case(
            When(literal, then=tier),
            default=Value(int(Tier.SIMILAR)),
            output_field=IntegerField(),
        ),
    )
    # A similar name says more than a term found inside a word.
    return queryset.annotate(
        match_tier=Case(
            When(literal_tier__lt=Tier.INSIDE, then=F("literal_tier")),
            When(similar, then=Value(int(Tier.SIMILAR))),
            default=F("literal_tier"),
            output_field=IntegerField(),
        )
    ).annotate(
        match_reason=Case(
            When(match_tier=Tier.SIMILAR, then=Value(str(Reason.SIMILAR_NAME))),
            default=reason,
            output_field=CharField(),
        ),
    )


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


def match_counts() -> dict[str, Window]:
    """Return window annotations counting `find_matches` rows, in the same SELECT.

    `match_total` counts every row the query matches, `match_strong` those
    not only inside a word, `match_best` the rows of the row's own tier; on
    the first row, that is the best tier.
    """
    return {
        "match_total": Window(Count("pk")),
        "match_strong": Window(Count("pk", filter=Q(match_tier__lt=Tier.INSIDE))),
        "match_best": Window(Count("pk"), partition_by=[F("match_tier")]),
    }


def returned_count(*, total: int, strong: int) -> int:
    """Return how many rows are found once the weak ones give way, from the
    `match_counts` of a `find_matches` query."""
    return strong or total


def match_tier(query: Query, *, columns: MatchColumns) -> Case:
    """Return each matching row's Tier."""
    return Case(
        *(
            When(condition, then=Value(int(tier)))
            for condition, tier, _ in _rules(query, columns)
        ),
        default=Value(int(Tier.INSIDE)),
        output_field=IntegerField(),
    )


def match_reason(query: Query, *, columns: MatchColumns) -> Case:
    """Return each matching row's Reason."""
    return Case(
        *(
            When(condition, then=Value(str(reason)))
            for condition, _, reason in _rules(query, columns)
        ),
        *(
            When(condition, then=Value(str(reason)))
            for condition, reason in _inside_reasons(query, columns)
        ),
        default=Value(str(Reason.EMAIL)),
        output_field=CharField(),
    )


def _rules(query: Query, columns: MatchColumns) -> list[tuple[Q, Tier, Reason]]:
    """Return (condition, tier, reason) from the strongest match to the weakest."""
    conditions = _Conditions(query, columns)
    rules: list[tuple[Q, Tier, Reason]] = []
    terms = query.terms
    if terms:
        rules += [
            (conditions.exact(_NAME), Tier.EXACT, Reason.NAME),
            (conditions.exact(_ALIAS), Tier.EXACT, Reason.ALIAS),
            (
                _all(conditions.starts(t, _NAME) for t in terms),
                Tier.PREFIX,
                Reason.NAME,
            ),
        ]
        named = [conditions.starts(t, _NAME + _ALIAS) for t in terms]
        rules.append((_all(named), Tier.PREFIX, Reason.ALIAS))
        if any(term.concepts for term in terms):
            conceptual = [
                _any([name, conditions.concept(term)])
                for name, term in zip(named, terms, strict=True)
            ]
            relation = _any(conditions.concept(t, _RELATION_CONCEPT) for t in terms)
            rules += [
                (_all(conceptual) & relation, Tier.CONCEPT, Reason.RELATION),
                (_all(conceptual), Tier.CONCEPT, Reason.ALIAS),
            ]
        named = [
            _any([name, conditions.concept(term), conditions.nickname(term)])
            for name, term in zip(named, terms, strict=True)
        ]
        if any(term.nicknames for term in terms):
            rules.append((_all(named), Tier.NICKNAME, Reason.NICKNAME))
    if phone := conditions.phone():
        rules.append((phone, Tier.OTHER, Reason.PHONE))
    if terms:
        with_relation = [
            found | conditions.starts(term, _RELATION)
            for found, term in zip(named, terms, strict=True)
        ]
        with_email = [
            found | conditions.starts(term, _EMAIL)
            for found, term in zip(with_relation, terms, strict=True)
        ]
        rules += [
            (_all(with_relation), Tier.OTHER, Reason.RELATION),
            (_all(with_email), Tier.OTHER, Reason.EMAIL),
        ]
    return rules


def _inside_reasons(query: Query, columns: MatchColumns) -> list[tuple[Q, Reason]]:
    """Return where the terms of a row matching only inside words sit."""
    conditions = _Conditions(query, columns)
    reasons = []
    for tags, reason in (
        (_NAME, Reason.NAME),
        (_NAME + _ALIAS, Reason.ALIAS),
        (_NAME + _ALIAS + _RELATION, Reason.RELATION),
    ):
        if query.terms:
            reasons.append(
                (_all(conditions.inside(t, tags) for t in query.terms), reason)
            )
    return reasons


class _Conditions:
    """The conditions on one model's columns that the tiers are made of."""

    def __init__(self, query: Query, columns: MatchColumns) -> None:
        self.query = query
        self.columns = columns

    def found(self, term: Term) -> Q:
        """Return the WHERE condition of one term: its text, concept or nickname."""
        condition = Q(**{f"{self.columns.search_text}__contains": term.text})
        if (concept := self.concept(term)) is not None:
            condition |= concept
        if (nickname := self.nickname(term, narrowed=True)) is not None:
            condition |= nickname
        return condition

    def phone(self) -> Q | None:
        if not (self.columns.phone_digits and self.query.phone_digits):
            return None
        return Q(**{f"{self.columns.phone_digits}__contains": self.query.phone_digits})

    def exact(self, field: str) -> Q:
        """Return that a whole segment of the field is the query."""
        return _any(
            self._contains(f"|{_segment(field, phrase.split())}|")
            for phrase in self.query.exact_phrases
        )

    def starts(self, term: Term, fields: str) -> Q:
        """Return that the term starts a word of one of these fields."""
        return _any(self._contains(field + field.join(term.words)) for field in fields)

    def inside(self, term: Term, fields: str) -> Q:
        """Return that the term appears anywhere in a segment of these fields."""
        # Folded words are letters and digits only: no regular-expression
        # operator comes from the term.
        return _any(
            Q(
                **{
                    f"{self.columns.match_text}__regex": (
                        rf"\|{field}[^|]*{field.join(term.words)}"
                    )
                }
            )
            for field in fields
        )

    def concept(self, term: Term, field: str | None = None) -> Q | None:
        """Return that the row's relation or an alias names the term's concept."""
        if not (self.columns.concepts and term.concepts):
            return None
        fields = (field,) if field else (_RELATION_CONCEPT, _ALIAS_CONCEPT)
        tokens = [prefix + concept for prefix in fields for concept in term.concepts]
        return Q(**{f"{self.columns.concepts}__overlap": tokens})

    def nickname(self, term: Term, *, narrowed: bool = False) -> Q | None:
        """Return that a word of a name or alias is one of the term's nicknames.

        Narrowed, each nickname is first looked up in the indexed search text.
        """
        if not term.nicknames:
            return None
        conditions = []
        for nickname in term.nicknames:
            condition = self._contains(f"{_NAME}{nickname}{_NAME}") | self._contains(
                f"{_ALIAS}{nickname}{_ALIAS}"
            )
            if narrowed:
                # First: most rows fail this one LIKE, which an index serves.
                condition = (
                    Q(**{f"{self.columns.search_text}__contains": nickname}) & condition
                )
            conditions.append(condition)
        return _any(conditions)

    def _contains(self, text: str) -> Q:
        return Q(**{f"{self.columns.match_text}__contains": text})


def _all(conditions: Iterable[Q]) -> Q:
    return reduce(and_, conditions)


def _any(conditions: Iterable[Q | None]) -> Q:
    present: Sequence[Q] = [c for c in conditions if c is not None]
    return reduce(or_, present) if present else Q(pk__in=[])
