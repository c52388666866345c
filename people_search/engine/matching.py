"""The one matching engine: which rows a query matches, how strongly, and why.

Every surface that finds people (find_person, people_search, search_anything,
the contact pages, admin search) parses its query with `parse_query` and
matches with the conditions written here, so two surfaces never disagree
about who matches or who comes first.

A row matches when every term appears in its folded search text, names a
concept of its relation or an alias, or is a nickname of a word of its names
(or the query's phone digits are in its phone). How strongly, best first:

1. exact: the whole query is a name or an alias, or a one-word query starts a
   name (a given name: "Tal" for "Tal Avidan");
2. word: every term is a whole word of a name or an alias, or a word of a
   name heard the same but spelled otherwise ("Catrin" for "Katrin",
   "Stefan" for "Stephan");
3. prefix: every term starts a word of a name or an alias;
4. concept: … or names the concept of the relation or an alias ("Omi" and
   "grandma" for a "Großmutter");
5. nickname: … or is a nickname or variant of a name word ("Sepp" for Josef);
6. other: … or starts a word of the relation or an email, names the provider
   category a tag or a business's name files the row under ("Werkstatt" for
   "Autohaus Brandt", or for a contact tagged "garage"), or the phone matches;
7. inside: some term sits only inside a word ("oma" in "Thomas").

So several people of one given name are ambiguous however one of them is
stored ("Tal" alone, "Tal Avidan"). Within a tier, the rows that carry the
query's title ("Dr." of "Dr. Kaya": in the name, the job title, or a
relation to a doctor) come first.

A match inside a word is the weakest evidence: such rows are returned only
while no row matches at a word start, so partial typing ("homas") still finds
Thomas but "Oma" finds the grandmothers alone. As they never appear beside
stronger rows, nothing ranks below them but similar names, whatever their
number says.

These rules are one table, `RULES`: each says where every term of a query
must stand in a row for a tier and a reason. The SQL of a row's tier is
generated from it (`match_conditions`), and why a returned row matched
(`match_reason`) is read from it in Python, on the row's columns; the WHERE
that finds the rows at all is written apart, as the indexes can answer it.

The tiers read columns that every write derives, never folding while a query
waits: the folded `search_text` (trigram indexed, the WHERE), a `match_text`
of the row's words by field (see `match_document`), and for contacts a
`concepts` array (GIN indexed) of the concepts their relation and aliases
name (see `concept_tokens`). The tiers are LIKEs on the matched rows only.

The conditions are SQL text with a `{slot}` for each column they read
(`SLOTS`), filled in by whoever places them in a statement
(people_search.engine.statements, or an ORM query). The query's words are
parameters, one array per place a term is looked for, so the text depends
only on the query's shape and recurs from call to call.
"""

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum, StrEnum
from functools import lru_cache, reduce
from operator import and_, or_
from typing import Any

from people_search.engine.query import Query, Term
from people_search.engine.sql import Statement
from people_search.engine.text import fold_words
from people_search.engine.vocabulary import concepts_named_by, concepts_titled


class Tier(IntEnum):
    """How strongly a row matches; lower is stronger."""

    EXACT = 0
    WORD = 1
    PREFIX = 2
    CONCEPT = 3
    NICKNAME = 4
    OTHER = 5
    INSIDE = 6
    SIMILAR = 7


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
    # One of the caller's own words or name choices names the row.
    LEARNED = "learned"


# The fields of a match document. Each segment is "|" then the field's
# separator before, between and after its words: names " anna becker ",
# aliases "~oma~gisela~", the relation "=grossmutter=", emails
# "@anna@example@org@", job titles and organizations "^dr^med^". Folded
# words are letters and digits only, so a separator says which field a word
# is in, and every test of a tier is a LIKE: "% gis" starts a word of a name,
# "~oma~" is a whole alias word, "|~oma~|" a whole alias. Job titles are
# evidence for a query's title only, never a match of their own.
_NAME, _ALIAS, _RELATION, _EMAIL, _TITLE = " ", "~", "=", "@", "^"
_RELATION_CONCEPT = "relation:"
_ALIAS_CONCEPT = "alias:"
# A business whose name reveals a provider category, and a row a tag files
# under one (contacts.providers.categories writes them).
_BUSINESS_CONCEPT = "business:"
_TAG_CONCEPT = "tag:"


def match_document(
    *,
    names: Iterable[str],
    aliases: Iterable[str] = (),
    relation: str = "",
    emails: Iterable[str] = (),
    titles: Iterable[str] = (),
) -> str:
    """Return the words of a row's names, aliases, relation, emails and job
    titles by field."""
    fields = [
        *((_NAME, text) for text in names),
        *((_ALIAS, text) for text in aliases),
        (_RELATION, relation),
        *((_EMAIL, text) for text in emails),
        *((_TITLE, text) for text in titles),
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


def business_concept_token(concept_id: str) -> str:
    """Return the token of a business whose name reveals the concept."""
    return _BUSINESS_CONCEPT + concept_id


def tag_concept_token(concept_id: str) -> str:
    """Return the token of a row that a tag files under the concept."""
    return _TAG_CONCEPT + concept_id


def concept_tokens(*, relation: str, aliases: Iterable[str]) -> list[str]:
    """Return the concepts a row's relation and aliases name, tagged by field."""
    tokens = [relation_concept_token(c) for c in concepts_named_by(relation)]
    tokens += [
        _ALIAS_CONCEPT + concept
        for alias in aliases
        for concept in concepts_named_by(alias)
    ]
    return sorted(set(tokens))


class Place(Enum):
    """Where a term of the query may stand in a row."""

    WORD_NAME = "is a whole word of a name"
    WORD_ALIAS = "is a whole word of an alias"
    SPELLING = "is a nickname or variant heard as a word of a name or an alias"
    SOUND = "is heard as a whole word of a name spelled otherwise"
    NAME = "starts a word of a name"
    ALIAS = "starts a word of an alias"
    NICKNAME = "is a nickname or variant of a word of a name or an alias"
    RELATION = "starts a word of the relation"
    EMAIL = "starts a word of an email"
    RELATION_CONCEPT = "names the concept the relation names"
    ALIAS_CONCEPT = "names the concept an alias names"
    BUSINESS_CONCEPT = "names the provider category a business's name reveals"
    TAG_CONCEPT = "names the provider category a tag files the row under"
    INSIDE_NAME = "sits inside a word of a name"
    INSIDE_ALIAS = "sits inside a word of an alias"
    INSIDE_RELATION = "sits inside a word of the relation"


@dataclass(frozen=True)
class Rule:
    """A row is of `tier`, and matched for `reason`, when the whole query is a
    segment of its `whole` field, or its phone has the query's digits
    (`phone`), or every term stands in one of `every_term`'s places and, if
    any are given, some term in one of `some_term`'s."""

    tier: Tier
    reason: Reason
    whole: str = ""
    phone: bool = False
    every_term: frozenset[Place] = frozenset()
    some_term: frozenset[Place] = frozenset()


_WORDS = frozenset({Place.WORD_NAME, Place.WORD_ALIAS})
_NAMED = frozenset({Place.NAME, Place.ALIAS})
_HEARD = _NAMED | {Place.SPELLING, Place.SOUND}
_CONCEPTS = frozenset({Place.RELATION_CONCEPT, Place.ALIAS_CONCEPT})
_PROVIDED = frozenset({Place.TAG_CONCEPT, Place.BUSINESS_CONCEPT})
_CONCEPT_PLACES = tuple(place for place in Place if place in _CONCEPTS | _PROVIDED)
_NICKNAMED = _HEARD | _CONCEPTS | {Place.NICKNAME}
_RELATED = _NICKNAMED | {Place.RELATION}
# The rules, strongest first: a row is of the first tier whose rules it meets
# (Tier.INSIDE when it meets none but the last three), and matched for the
# first reason of its tier that holds. The tier's SQL tests each place of a
# term once: a term's tier is its strongest place's (the first rule naming
# it), a row's the weakest of its terms', unless the whole query is a name or
# an alias, or the phone matches. A whole word also starts a word, so the
# word tier's places hold wherever the prefix tier's do.
RULES = (
    Rule(Tier.EXACT, Reason.NAME, whole=_NAME),
    Rule(Tier.EXACT, Reason.ALIAS, whole=_ALIAS),
    Rule(Tier.WORD, Reason.NAME, every_term=frozenset({Place.WORD_NAME})),
    Rule(Tier.WORD, Reason.ALIAS, every_term=_WORDS),
    Rule(Tier.WORD, Reason.NICKNAME, every_term=_WORDS | {Place.SPELLING}),
    Rule(
        Tier.WORD,
        Reason.SIMILAR_NAME,
        every_term=_WORDS | {Place.SPELLING, Place.SOUND},
    ),
    Rule(Tier.PREFIX, Reason.NAME, every_term=frozenset({Place.NAME})),
    Rule(Tier.PREFIX, Reason.ALIAS, every_term=_NAMED),
    Rule(Tier.PREFIX, Reason.NICKNAME, every_term=_NAMED | {Place.SPELLING}),
    Rule(Tier.PREFIX, Reason.SIMILAR_NAME, every_term=_HEARD),
    Rule(
        Tier.CONCEPT,
        Reason.RELATION,
        every_term=_HEARD | _CONCEPTS,
        some_term=frozenset({Place.RELATION_CONCEPT}),
    ),
    Rule(Tier.CONCEPT, Reason.ALIAS, every_term=_HEARD | _CONCEPTS),
    Rule(Tier.NICKNAME, Reason.NICKNAME, every_term=_NICKNAMED),
    Rule(Tier.OTHER, Reason.PHONE, phone=True),
    Rule(Tier.OTHER, Reason.RELATION, every_term=_RELATED | {Place.TAG_CONCEPT}),
    Rule(Tier.OTHER, Reason.NAME, every_term=_RELATED | _PROVIDED),
    Rule(Tier.OTHER, Reason.EMAIL, every_term=_RELATED | _PROVIDED | {Place.EMAIL}),
    Rule(Tier.INSIDE, Reason.NAME, every_term=frozenset({Place.INSIDE_NAME})),
    Rule(
        Tier.INSIDE,
        Reason.ALIAS,
        every_term=frozenset({Place.INSIDE_NAME, Place.INSIDE_ALIAS}),
    ),
    Rule(
        Tier.INSIDE,
        Reason.RELATION,
        every_term=frozenset(
            {Place.INSIDE_NAME, Place.INSIDE_ALIAS, Place.INSIDE_RELATION}
        ),
    ),
)
# Where a term stands as a word or a word's start, as LIKE patterns on the
# match document; and the concept tokens each concept place holds.
_WORD_STARTS = {
    Place.NAME: _NAME,
    Place.ALIAS: _ALIAS,
    Place.RELATION: _RELATION,
    Place.EMAIL: _EMAIL,
}
_WHOLE_WORDS = {Place.WORD_NAME: _NAME, Place.WORD_ALIAS: _ALIAS}
_CONCEPT_FIELDS = {
    Place.RELATION_CONCEPT: _RELATION_CONCEPT,
    Place.ALIAS_CONCEPT: _ALIAS_CONCEPT,
    Place.BUSINESS_CONCEPT: _BUSINESS_CONCEPT,
    Place.TAG_CONCEPT: _TAG_CONCEPT,
}
_INSIDE = {
    Place.INSIDE_NAME: _NAME,
    Place.INSIDE_ALIAS: _ALIAS,
    Place.INSIDE_RELATION: _RELATION,
}


def _texts(term: Term, place: Place) -> tuple[str, ...]:
    """Return what the match document contains where the term stands in place."""
    separator = _WORD_STARTS.get(place)
    if separator is not None:
        return (separator + separator.join(term.words),)
    separator = _WHOLE_WORDS.get(place)
    if separator is not None:
        return (_segment(separator, term.words),)
    if place is Place.SOUND:
        return tuple(_segment(_NAME, (sound,)) for sound in term.sounds)
    nicknames = {Place.NICKNAME: term.nicknames, Place.SPELLING: term.spellings}
    if place in nicknames:
        return tuple(
            f"{field}{nickname}{field}"
            for nickname in nicknames[place]
            for field in (_NAME, _ALIAS)
        )
    return ()


def _tokens(term: Term, place: Place) -> tuple[str, ...]:
    """Return the concept tokens a row holds where the term stands in place."""
    field = _CONCEPT_FIELDS.get(place)
    if field is None or not term.concepts:
        return ()
    return tuple(field + concept for concept in term.concepts)


@lru_cache(maxsize=4096)
def _inside(term: Term, place: Place) -> re.Pattern[str] | None:
    """Return where the term sits inside a word of the place's field."""
    if place not in _INSIDE:
        return None
    field = _INSIDE[place]
    return re.compile(rf"\|{re.escape(field)}[^|]*{re.escape(field.join(term.words))}")


def _whole(query: Query, field: str) -> tuple[str, ...]:
    """Return the segments of the field that are the whole query.

    A query of one word is a whole name as much when it starts a name as
    when it is all of it: "Tal" means Tal Avidan as much as the contact
    stored as "Tal", while "Zoe Hans" merely has the word "Hans".
    """
    return tuple(
        f"|{field}{words[0]}{field}"
        if len(words := phrase.split()) == 1 and field == _NAME
        else f"|{_segment(field, words)}|"
        for phrase in query.exact_phrases
    )


# -- Why a returned row matched, read from the rules ---------------------------


@dataclass(frozen=True)
class Evidence:
    """What the rules read of a row: its match document, concepts and phone."""

    document: str
    concepts: frozenset[str]
    phone: str


def evidence_of(row: Mapping[str, Any]) -> Evidence:
    """Return the evidence of a row a statement returned (`EVIDENCE` columns)."""
    return Evidence(
        document=row["match_document"] or "",
        concepts=frozenset(row["match_concepts"] or ()),
        phone=row["match_phone"] or "",
    )


@dataclass(frozen=True)
class _Sought:
    """Where a row holds a term in some places: texts of its match document,
    concept tokens, or words its document has the term inside."""

    texts: tuple[str, ...]
    tokens: frozenset[str]
    inside: tuple[re.Pattern[str], ...]

    def found(self, row: Evidence) -> bool:
        return (
            any(text in row.document for text in self.texts)
            or not row.concepts.isdisjoint(self.tokens)
            or any(pattern.search(row.document) for pattern in self.inside)
        )


def _sought(term: Term, places: Collection[Place]) -> _Sought:
    return _Sought(
        texts=tuple(text for place in places for text in _texts(term, place)),
        tokens=frozenset(token for place in places for token in _tokens(term, place)),
        inside=tuple(filter(None, (_inside(term, place) for place in places))),
    )


@dataclass(frozen=True)
class _RuleTest:
    """What a rule looks for in a row, for one query."""

    whole: tuple[str, ...] = ()
    phone: str = ""
    every_term: tuple[_Sought, ...] = ()
    some_term: tuple[_Sought, ...] = ()

    def holds(self, row: Evidence) -> bool:
        if self.phone:
            return self.phone in row.phone
        if self.whole:
            return any(text in row.document for text in self.whole)
        return (
            bool(self.every_term)
            and all(sought.found(row) for sought in self.every_term)
            and (not self.some_term or any(s.found(row) for s in self.some_term))
        )


def _rule_test(query: Query, rule: Rule) -> _RuleTest:
    """Return what the rule looks for in a row, for this query."""
    if rule.phone:
        return _RuleTest(phone=query.phone_digits or "")
    if not query.terms:
        return _RuleTest()
    if rule.whole:
        return _RuleTest(whole=_whole(query, rule.whole))
    return _RuleTest(
        every_term=tuple(_sought(term, rule.every_term) for term in query.terms),
        some_term=tuple(_sought(term, rule.some_term) for term in query.terms)
        if rule.some_term
        else (),
    )


@lru_cache(maxsize=256)
def _rule_tests(query: Query) -> dict[Rule, _RuleTest]:
    """Return the query's rule tests worked out so far: each is worked out
    the first time a row needs it (those of Tier.INSIDE compile patterns)."""
    return {}


def _tested(query: Query, rule: Rule, row: Evidence) -> bool:
    tests = _rule_tests(query)
    test = tests.get(rule)
    if test is None:
        test = tests[rule] = _rule_test(query, rule)
    return test.holds(row)


def holds(rule: Rule, query: Query, row: Evidence) -> bool:
    """Return whether the row meets the rule for this query."""
    return _tested(query, rule, row)


# People search's groups of the tiers; every other tier is group 0.
_GROUPS = {Tier.SIMILAR: 1, Tier.INSIDE: 2}


def match_reason(query: Query | None, row: Mapping[str, Any]) -> Reason | None:
    """Return why a returned row matched (None without a query).

    The row has its `match_tier`, or people search's `match_group`, and the
    `EVIDENCE` columns. Only the tier is worked out in SQL, where it orders
    the rows; the reason matters for the few rows returned, so it is the
    reason of the first rule of the row's tier that holds on its columns. A
    row of group 0 is of some tier stronger than Tier.INSIDE: the first rule
    it meets is that tier's.
    """
    if query is None or query.is_empty:
        return None
    if "match_tier" in row:
        tier: Tier | None = Tier(row["match_tier"])
    else:
        tier = {g: t for t, g in _GROUPS.items()}.get(row["match_group"])
    if tier == Tier.SIMILAR:
        return Reason.SIMILAR_NAME
    evidence = evidence_of(row)
    for rule in RULES:
        of_tier = rule.tier == tier if tier is not None else rule.tier < Tier.INSIDE
        if of_tier and _tested(query, rule, evidence):
            return rule.reason
    return Reason.EMAIL


# -- The conditions in SQL ------------------------------------------------------

# The columns a condition reads, as `{slot}`s in its text: the row's key, its
# folded search text, its match document, its phone digits and its concepts.
SLOTS = ("key", "search_text", "match_text", "phone_digits", "concepts")
# What a row's match evidence is selected as, for `match_reason`.
EVIDENCE = {
    "match_document": "match_text",
    "match_concepts": "concepts",
    "match_phone": "phone_digits",
}


@dataclass(frozen=True)
class Condition:
    """A condition or a value in SQL: `{slot}` for each column it reads,
    `%s` for each of `params` in order (see `_array`)."""

    text: str
    params: tuple[Any, ...] = ()

    def __and__(self, other: "Condition") -> "Condition":
        return Condition(f"({self.text} AND {other.text})", self.params + other.params)

    def __or__(self, other: "Condition") -> "Condition":
        return Condition(f"({self.text} OR {other.text})", self.params + other.params)

    def __add__(self, other: "Condition") -> "Condition":
        return Condition(self.text + other.text, self.params + other.params)

    def render(self, columns: Mapping[str, str]) -> Statement:
        """Return the condition reading these columns (SQL for each slot used)."""
        return Statement(self.text.format_map(columns), self.params)


@dataclass(frozen=True)
class MatchConditions:
    """A query's conditions: which rows it finds (`where`), each row's tier,
    and people search's group of the tier (0 word start, 1 similar name, 2
    inside a word only)."""

    where: Condition
    tier: Condition
    group: Condition
    untitled: Condition


def match_conditions(
    query: Query, *, similar_ids: Collection[int] = ()
) -> MatchConditions:
    """Return the query's conditions; rows among `similar_ids` (the
    similar-name lane's) are found too, as Tier.SIMILAR unless they match at a
    word start."""
    return _match_conditions(query, tuple(sorted(similar_ids)))


@lru_cache(maxsize=256)
def _match_conditions(query: Query, similar: tuple[int, ...]) -> MatchConditions:
    """Return the conditions of a query, built once per query (at most 256
    kept, a few KB each).

    With similar names a row is in when it matches literally or is similar;
    a row that is not a literal match, or is one only inside a word but is
    also similar, is Tier.SIMILAR.
    """
    literal = _literal(query)
    return MatchConditions(
        where=literal | is_similar(similar) if similar else literal,
        tier=_tier(query, similar, int, literal),
        group=_tier(query, similar, lambda tier: _GROUPS.get(tier, 0), literal),
        untitled=_untitled(query),
    )


def _untitled(query: Query) -> Condition:
    """Return 0 for a row that carries one of the query's titles, else 1 (0
    for every row of a query without one).

    A row carries a title that is a word of its names or its job title
    ("Dr. Ayşe Kaya", "Dr. med."), or that people of its relation's or an
    alias's concept carry ("Hausärztin" for "Dr.").
    """
    texts = _title_texts(query)
    tokens = _title_tokens(query)
    if not texts and not tokens:
        return _constant(0)
    carries = _any(
        [
            _like_any(texts) if texts else _FALSE,
            Condition("{concepts} && ") + _array(tokens, "varchar")
            if tokens
            else _FALSE,
        ]
    )
    return _case([(carries, 0)], 1)


def _title_texts(query: Query) -> tuple[str, ...]:
    return tuple(
        _segment(field, (title,)) for title in query.titles for field in (_NAME, _TITLE)
    )


def _title_tokens(query: Query) -> tuple[str, ...]:
    return tuple(
        field + concept
        for title in query.titles
        for concept in concepts_titled(title)
        for field in (_RELATION_CONCEPT, _ALIAS_CONCEPT, _TAG_CONCEPT)
    )


def is_similar(similar_ids: Collection[int]) -> Condition:
    """Return that the row is among `similar_ids`, bound as one array, so the
    text does not depend on how many there are."""
    return Condition("{key} = ANY(") + _array(sorted(similar_ids), "int") + _CLOSE


def _literal(query: Query) -> Condition:
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


def _found(term: Term) -> Condition:
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
    sounds = [
        _like_any((_segment(_NAME, (sound,)),)) & _may_hold_word(sound)
        for sound in term.sounds
    ]
    return _any(
        [
            _like("search_text", term.text),
            _in_places(term, _CONCEPT_PLACES),
            *nicknames,
            *sounds,
        ]
    )


def _may_hold_word(word: str) -> Condition:
    """Return that the search text may hold this word, as the trigram index
    can tell: it contains the word, or for a word of one or two letters
    ("ab", "ed"), which has no trigram of its own, holds it as a word
    (pg_trgm's strict word similarity is 1 for a whole word, whatever the
    threshold). A LIKE of "ab" would read every row of the household, and
    with it the whole OR of the query's WHERE.
    """
    if len(word) >= 3:
        return _like("search_text", word)
    return Condition("%s <<%% {search_text}", (word,))


def _place_tiers() -> tuple[tuple[Tier, tuple[Place, ...]], ...]:
    """Return each tier with the places whose tier it is: that of the first
    rule whose terms may all stand there (Tier.INSIDE's places are never
    tested in SQL), strongest first."""
    tiers: dict[Place, Tier] = {}
    for rule in RULES:
        if rule.tier < Tier.INSIDE:
            for place in rule.every_term:
                tiers.setdefault(place, rule.tier)
    return tuple(
        (tier, tuple(place for place in Place if tiers.get(place) == tier))
        for tier in sorted(set(tiers.values()))
    )


_PLACE_TIERS = _place_tiers()
_WHOLE_WORD = next(tier for tier, places in _PLACE_TIERS if Place.WORD_NAME in places)
_WHOLE_RULES = [rule for rule in RULES if rule.whole]
_PHONE_RULE = next(rule for rule in RULES if rule.phone)


def _tier(
    query: Query,
    similar: tuple[int, ...],
    value: Callable[[Tier], int],
    literal: Condition,
) -> Condition:
    """Return a row's tier (or another value of it that keeps its order).

    The tier of `RULES`, written so that each place a term may stand in is
    tested once: a term's tier is its strongest place's, a row's the weakest
    of its terms', unless the whole query is a name or the phone matches. A
    term found in no place sits inside a word, or is a similar name's; as a
    row is one or the other for all its terms, the order holds whether
    `value` puts similar names before or after. A similar name that is no
    literal match is one whatever its words ("Tomas M." finds Thomas Müller
    by its words, not by the text "m.").
    """
    rest = _constant(value(Tier.INSIDE))
    if similar:
        rest = _case([(is_similar(similar), value(Tier.SIMILAR))], rest)

    def term_tier(term: Term, as_whole_word: int | Condition) -> Condition:
        places = []
        for tier, where in _PLACE_TIERS:
            condition = _in_places(term, where)
            if condition is not _FALSE:
                at = as_whole_word if tier == _WHOLE_WORD else value(tier)
                places.append((condition, at))
        return _case(places, rest)

    tier = rest
    if query.terms:
        # A name or alias that is the whole query has every term as a whole
        # word: the first term's whole-word place tells Tier.EXACT from
        # Tier.WORD, looking for the whole query in those rows alone, and the
        # other terms' whole-word places weigh nothing beside it.
        first = others = value(_WHOLE_WORD)
        whole = [text for rule in _WHOLE_RULES for text in _whole(query, rule.whole)]
        if whole:
            exact = min(rule.tier for rule in _WHOLE_RULES)
            first = _case([(_like_any(whole), value(exact))], first)
            others = value(exact)
        tier = _call(
            "GREATEST",
            [
                term_tier(term, others if number else first)
                for number, term in enumerate(query.terms)
            ],
        )
    if query.phone_digits:
        phone = _case(
            [(_like("phone_digits", query.phone_digits), value(_PHONE_RULE.tier))],
            rest,
        )
        tier = _call("LEAST", [tier, phone]) if query.terms else phone
    if similar:
        not_literal = Condition(f"NOT ({literal.text})", literal.params)
        tier = _case([(not_literal, value(Tier.SIMILAR))], tier)
    return tier


def _in_places(term: Term, places: Sequence[Place]) -> Condition:
    """Return that the term stands in one of the places: one LIKE ANY of the
    match document, and one overlap of the concepts."""
    texts = [text for place in places for text in _texts(term, place)]
    tokens = [token for place in places for token in _tokens(term, place)]
    conditions = []
    if texts:
        conditions.append(_like_any(texts))
    if tokens:
        conditions.append(Condition("{concepts} && ") + _array(tokens, "varchar"))
    return _any(conditions)


def _constant(value: int) -> Condition:
    """Return a number of the query's shape (a tier), written out."""
    return Condition(str(int(value)))


def _array(values: Sequence[str | int], element: str = "text") -> Condition:
    """Return an array of the query's values, one parameter typed `element[]`.

    The values are parameters, never written out, so a statement's text
    depends on the query's shape only (its terms, their nicknames and
    concepts, the phone, similar names): psycopg parses each text once, and
    the text recurs. The parameter is the array's text (`array_text`), which
    psycopg binds as one string: as a list, each of a statement's thirty
    arrays cost it a search for the elements' type, a third of find_person's
    remaining CPU.
    """
    return Condition(f"%s::{element}[]", (array_text(values),))


def array_text(values: Iterable[str | int]) -> str:
    """Return PostgreSQL's text of an array of these values: {"a","b"}."""
    items = (
        '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
        for value in values
    )
    return "{" + ",".join(items) + "}"


_FALSE = Condition("FALSE")
_CLOSE = Condition(")")


def _like(slot: str, text: str) -> Condition:
    """Return that the column's text contains this text."""
    return Condition(f"{{{slot}}} LIKE %s", (_containing(text),))


def _like_any(texts: Sequence[str]) -> Condition:
    """Return that the match document contains one of these texts."""
    patterns = _array(tuple(map(_containing, texts)))
    return Condition("{match_text} LIKE ANY(") + patterns + _CLOSE


def _containing(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _all(conditions: Iterable[Condition]) -> Condition:
    return reduce(and_, conditions)


def _any(conditions: Iterable[Condition]) -> Condition:
    present = [c for c in conditions if c is not _FALSE]
    return reduce(or_, present) if present else _FALSE


def _case(
    whens: Sequence[tuple[Condition, int | Condition]], default: int | Condition
) -> Condition:
    def sql(value: int | Condition) -> Condition:
        return value if isinstance(value, Condition) else _constant(value)

    if not whens:
        return sql(default)
    case = Condition("(CASE")
    for when, value in whens:
        case = case + Condition(" WHEN ") + when + Condition(" THEN ") + sql(value)
    return case + Condition(" ELSE ") + sql(default) + Condition(" END)")


def _call(function: str, arguments: Sequence[Condition]) -> Condition:
    """Return a function of several values; of one, the value itself."""
    if len(arguments) == 1:
        return arguments[0]
    sql = Condition(f"{function}(")
    for number, argument in enumerate(arguments):
        sql = sql + (Condition(", ") if number else Condition("")) + argument
    return sql + _CLOSE


def strongest_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Return the first rows of a statement ordered by `match_tier`, without
    those that match only inside a word unless they are all there is."""
    if rows and rows[0]["match_tier"] < Tier.INSIDE:
        return [row for row in rows if row["match_tier"] != Tier.INSIDE]
    return list(rows)


def returned_count(*, total: int, strong: int) -> int:
    """Return how many rows are found once the weak ones give way, from the
    counts of `first_matches` (people_search.engine.statements)."""
    return strong or total


def trigram_served(query: Query | None) -> bool:
    """Return whether the trigram indexes answer a query's WHERE for every
    query of this one's shape, so that one plan made without its values
    serves them all: each term and the phone's digits hold three letters or
    digits in a row.

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
