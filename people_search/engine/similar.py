"""Similar names, scored: the household's names closest to a misspelled one, as a whole.

Each distinct word of a household's names is embedded once (the name index,
people_search.index). A first statement fetches, for each query word, the
household's words near it by embedding or by trigram similarity; each is
scored against the query's words as the rows will be. A second fetches the
rows using the words worth it, ranked by those scores, and every word of the
best of them. Where the subjects have no more rows than are ranked, one
statement reads every row a near word reaches instead, each with the near
words it uses. Each row is then scored as a whole: the query's words are
aligned with the row's in any order, a missing or extra word costs instead of
excluding, and only the rows close to the best one are returned, followed by
the few rows sharing a rare surname that no close row has. A small
vocabulary is scanned exactly, which is both fast and complete; a large one
asks the HNSW index with iterative scan. bench/names.py measures the lane
against pg_trgm on the whole name and times both paths.

Pure: the statements are built here and run by people_search.index.similar,
which embeds the query's words first.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import jellyfish

from people_search.engine.query import Query, Term
from people_search.engine.sql import Statement
from people_search.engine.text import fold_words, sound_key

# Cosine similarity that makes a household word worth fetching for a query
# word: low, since the whole name decides (tuned in bench/names.py).
SIMILARITY_FLOOR = 0.35
# Trigram similarity that makes a household word worth fetching: a one-letter
# typo of a five-letter word keeps about a third of its trigrams.
TRIGRAM_FLOOR = 0.25
# A row scoring below this is no one the query could mean.
SCORE_FLOOR = 0.45
# Rows further than this below the best row are left out.
SCORE_MARGIN = 0.1
# People search shows at most 8 rows of a group; more similar names would
# only be cut there, in name order rather than by score.
CANDIDATES = 8

# For each query word, the household's words nearest to it by embedding and
# those similar by trigrams. The query words are materialised so each is cast
# to a vector once; inlined, the cast ran for every word it was compared with.
# They are a VALUES list of one row per word (`_near_sql`), not an unnest of
# arrays: the prepared statement's one generic plan then counts them right,
# where it took an array for ten words and tested `%` against every word of
# the household instead of asking the trigram index, three times slower.
_QUERY_WORDS = """
    WITH query_words AS MATERIALIZED (
        SELECT * FROM (VALUES {query_words}) AS query_word(word, vector)
    )
"""
_NEAR_WORDS = """
    SELECT near.id, near.word
    FROM query_words
    CROSS JOIN LATERAL (
        SELECT id, word, embedding <=> query_words.vector AS distance
        FROM people_search_nameword
        WHERE household_id = %(household)s::bigint
        ORDER BY embedding <=> query_words.vector
        LIMIT %(per_word)s
    ) AS near
    WHERE near.distance <= 1 - %(floor)s
    UNION
    SELECT name_word.id, name_word.word
    FROM query_words
    JOIN people_search_nameword AS name_word
        ON name_word.household_id = %(household)s::bigint
        AND name_word.word %% query_words.word
"""
_INDEXED_ORDER = "ORDER BY embedding <=> query_words.vector"
_EXACT_ORDER = "ORDER BY (embedding <=> query_words.vector) + 0, word"
# The rows of the subjects using a word of {words}. A fence: each word's rows
# come through its index, never from a scan of every household's words.
_USES = """CROSS JOIN LATERAL (
            SELECT subject, subject_id
            FROM people_search_nameworduse
            WHERE household_id = %(household)s::bigint
                AND word_id = {words}.id AND subject = ANY(%(subjects)s)
            OFFSET 0
        ) AS uses"""
# The rows using the near words, each word with its similarity to each query
# word as `word_similarity` has it; each query word's crowd (the rows with a
# word _SHARED_WORD like it, as `surname_rows` counts a surname's) and weight
# (`word_weight`); the rows ranked by the weighted sum of their best
# similarity to each query word; and every word of the best of them. The
# best are whole groups of one score: the rows of a score that would not all
# fit are left out with every row below them, so which rows are read never
# depends on their ids, which follow the order the rows were written in.
# Rows with every query word as written are literal matches, which text
# search finds: one of them is kept, to tell `pick_similar` that one exists,
# and none takes a similar name's place.
_ROWS = """
    WITH word_scores AS MATERIALIZED (
        SELECT *
        FROM unnest(
            %(ids)s::bigint[], %(positions)s::integer[],
            %(similarities)s::float8[], %(exact)s::boolean[]
        ) AS word_score(id, position, similarity, exact)
    ),
    reached AS MATERIALIZED (
        SELECT uses.subject, uses.subject_id, {best_per_word},
            %(literal)s AND {exact_per_word} AS literal
        FROM word_scores
        {word_score_uses}
        GROUP BY 1, 2
    ),
    crowds AS MATERIALIZED (
        SELECT {crowd_per_word}
        FROM reached
    ),
    weights AS MATERIALIZED (
        SELECT {weight_per_word}
        FROM crowds
    ),
    candidates AS MATERIALIZED (
        (
            SELECT subject, subject_id
            FROM (
                -- The rows scoring at least as much as each, its own included.
                SELECT subject, subject_id, count(*) OVER (ORDER BY {score} DESC)
                    AS reach
                FROM reached
                CROSS JOIN weights
                WHERE NOT literal
            ) AS ranked
            WHERE reach <= %(candidates)s
        )
        UNION ALL
        (
            SELECT subject, subject_id
            FROM reached
            WHERE literal
            LIMIT 1
        )
    )
    {names}
""".replace("{word_score_uses}", _USES.replace("{words}", "word_scores"))
# A query of one word scores a row by its best word alone, so the rows of a
# word all score alike: a word's first rows (one more than the rows scored)
# are read, less the literal matches (rows using the query word as written),
# probed one by one. A word whose rows were cut counts more rows than fit, so
# its whole group of rows, and every group below, is left out as in `_ROWS`:
# the best groups that fit whole are exactly those of every row. The crowd is
# counted over the close words' uses alone; a row using two of them counts
# once.
_ROWS_OF_ONE_WORD = """
    WITH word_scores AS MATERIALIZED (
        SELECT *
        FROM unnest(%(ids)s::bigint[], %(similarities)s::float8[])
            AS word_score(id, similarity)
    ),
    close_uses AS (
        SELECT uses.subject, uses.subject_id
        FROM word_scores
        {word_score_uses}
        WHERE word_scores.similarity >= %(close)s
    ),
    crowds AS MATERIALIZED (
        SELECT CASE
            WHEN (SELECT count(*) FROM word_scores WHERE similarity >= %(close)s) > 1
            THEN (
                SELECT count(*)
                FROM (SELECT DISTINCT subject, subject_id FROM close_uses) AS rows
            )
            ELSE (SELECT count(*) FROM close_uses)
        END AS crowd_1
    ),
    firsts AS MATERIALIZED (
        SELECT uses.subject, uses.subject_id, max(word_scores.similarity) AS best
        FROM word_scores
        CROSS JOIN LATERAL (
            SELECT subject, subject_id
            FROM people_search_nameworduse AS word_use
            WHERE household_id = %(household)s::bigint
                AND word_id = word_scores.id AND subject = ANY(%(subjects)s)
                AND (%(literal_word)s::bigint IS NULL OR NOT EXISTS (
                    SELECT FROM people_search_nameworduse AS literal_use
                    WHERE literal_use.household_id = %(household)s::bigint
                        AND literal_use.subject = word_use.subject
                        AND literal_use.subject_id = word_use.subject_id
                        AND literal_use.word_id = %(literal_word)s::bigint
                    -- A fence: probed row by row, where a hash of every
                    -- literal match would read all of a common name's rows.
                    OFFSET 0
                ))
            ORDER BY subject, subject_id
            LIMIT %(candidates)s + 1
        ) AS uses
        WHERE word_scores.id IS DISTINCT FROM %(literal_word)s::bigint
        GROUP BY 1, 2
    ),
    candidates AS MATERIALIZED (
        (
            SELECT subject, subject_id
            FROM (
                SELECT subject, subject_id, count(*) OVER (ORDER BY best DESC)
                    AS reach
                FROM firsts
            ) AS ranked
            WHERE reach <= %(candidates)s
        )
        UNION ALL
        (
            SELECT subject, subject_id
            FROM people_search_nameworduse
            WHERE household_id = %(household)s::bigint
                AND word_id = %(literal_word)s::bigint AND subject = ANY(%(subjects)s)
            LIMIT 1
        )
    )
    {names}
""".replace("{word_score_uses}", _USES.replace("{words}", "word_scores"))
# Every word of the name of a row of {rows}.
_NAME_WORDS = """ARRAY(
        SELECT name_word.word
        FROM people_search_nameworduse AS name_use
        JOIN people_search_nameword AS name_word
            ON name_word.household_id = %(household)s::bigint
            AND name_word.id = name_use.word_id
        WHERE name_use.household_id = %(household)s::bigint
            AND name_use.subject = {rows}.subject
            AND name_use.subject_id = {rows}.subject_id
    )"""
# The candidates with every word of their names, and the crowds.
_NAMES = """
    SELECT candidates.subject, candidates.subject_id, {candidate_words},
        ARRAY[{crowds}]
    FROM candidates
    CROSS JOIN crowds
""".replace("{candidate_words}", _NAME_WORDS.replace("{rows}", "candidates"))
# Every row a near word reaches, with the near words it uses and every word
# of its name: the lane in one statement where the subjects have no more
# rows than `_rows_sql` would rank (`near_words_statement`'s `reaching`).
_REACHED_ROWS = """
    , near AS MATERIALIZED ({near_words}),
    reached AS MATERIALIZED (
        SELECT uses.subject, uses.subject_id, array_agg(near.word) AS near_words
        FROM near
        {near_word_uses}
        GROUP BY 1, 2
    )
    SELECT reached.subject, reached.subject_id, reached.near_words,
        {reached_words}
    FROM reached
"""
_REACHED_ROWS = (
    _REACHED_ROWS.replace("{near_words}", _NEAR_WORDS)
    .replace("{near_word_uses}", _USES.replace("{words}", "near"))
    .replace("{reached_words}", _NAME_WORDS.replace("{rows}", "reached"))
)
# Distinct words near one query word: spelling variants, not a crowd.
PER_WORD = 40
# Rows scored in Python. The statement ranks them nearly as Python scores
# them (not pairing words one to one, not charging a word left out), so few
# are needed; with 200 ranked by embedding and trigrams, names.py found as
# many (docs/performance.md, "Ranking the lane's rows by their final scores").
_SCORED_ROWS = 100
_MAX_WORDS = 5


@lru_cache(maxsize=4 * _MAX_WORDS)
def _near_sql(words: int, *, exact: bool, reached: bool = False) -> str:
    """Return the near words' statement for this many query words, each
    bound as `word_N` and `vector_N`, sorting by distance exactly or through
    the HNSW index; `reached`, the rows they reach instead (_REACHED_ROWS)."""
    rows = ", ".join(
        f"(%(word_{position})s::text, %(vector_{position})s::vector)"
        for position in range(1, words + 1)
    )
    sql = _QUERY_WORDS.replace("{query_words}", rows) + (
        _REACHED_ROWS if reached else _NEAR_WORDS
    )
    # An order no HNSW index serves: the household's words sorted by their
    # distance, exactly.
    return sql.replace(_INDEXED_ORDER, _EXACT_ORDER) if exact else sql


def _near_parameters(words: Sequence[str], vectors: Sequence[Any]) -> dict[str, str]:
    """Return `_near_sql`'s `word_N` and `vector_N` for the query's words."""
    parameters = {}
    for position, (word, vector) in enumerate(zip(words, vectors, strict=True), 1):
        parameters[f"word_{position}"] = word
        parameters[f"vector_{position}"] = str(vector)
    return parameters


@lru_cache(maxsize=_MAX_WORDS)
def _rows_sql(words: int) -> str:
    """Return the rows' statement for this many query words: a row's best
    similarity to each is a column of one grouping of the rows reached, and
    its score their sum, each weighted by the rows sharing it."""
    positions = range(1, words + 1)
    columns = {
        "{best_per_word}": ", ".join(
            "max(word_scores.similarity) FILTER (WHERE word_scores.position = "
            f"{position}) AS best_{position}"
            for position in positions
        ),
        "{exact_per_word}": " AND ".join(
            "coalesce(bool_or(word_scores.exact) FILTER (WHERE "
            f"word_scores.position = {position}), false)"
            for position in positions
        ),
        "{crowd_per_word}": ", ".join(
            f"count(*) FILTER (WHERE best_{position} >= %(close)s) AS crowd_{position}"
            for position in positions
        ),
        "{weight_per_word}": ", ".join(
            f"1 / sqrt(ln(3 + crowd_{position})) AS weight_{position}"
            for position in positions
        ),
        "{score}": " + ".join(
            f"coalesce(best_{position}, 0) * weight_{position}"
            for position in positions
        ),
        "{crowds}": ", ".join(f"crowd_{position}" for position in positions),
    }
    sql = _ROWS.replace("{names}", _NAMES)
    for marker, text in columns.items():
        sql = sql.replace(marker, text)
    return sql


_ONE_WORD_SQL = _ROWS_OF_ONE_WORD.replace("{names}", _NAMES).replace(
    "{crowds}", "crowd_1"
)


# Words less alike than this are different words, not a misspelling.
_WORD_FLOOR = 0.6
# What a first letter is worth against the name word it starts ("M." for Müller).
_INITIAL = 0.6
# An initial says less about who is meant than a word of the name.
_INITIAL_WEIGHT = 0.3
# A row's word the query leaves out costs this share of the score.
_MISSING_WORD = 0.1
# Below this score a row is shown only if no other row is as close.
_LONE_SCORE = 0.6
# A query's surname that at most _FEW_ROWS rows share points at them when no
# row answers the whole query: "Peter Lindenlechner" finds Erik, the only
# Lindenlechner. A row shares a word this alike: one typo in a word of seven
# letters or more, or a respelling of its sound, but not a one-letter typo of
# a shorter word (Kahn is not Kuhn). More rows would be a guess: on the
# bench's names nobody has, each shared row comes back too.
_SHARED_WORD = 0.85
_FEW_ROWS = 3
# Spellings that sound alike agree once respelled, but less than written alike.
_SOUND_DISCOUNT = 0.95
_DIGIT_LETTERS = str.maketrans("0134578", "oleastb")
_PRINTED = [("rn", "m"), ("cl", "d"), ("vv", "w")]


@dataclass(frozen=True)
class SimilarName:
    subject: str
    subject_id: int
    similarity: float


@dataclass
class WordScores:
    """The household's words worth a row's look, as four parallel columns:
    each word's id, the query word (1-based) it is like, how alike, and
    whether it is that word as written."""

    ids: list[int]
    positions: list[int]
    similarities: list[float]
    exact: list[bool]


def word_scores(query: Sequence[str], near: Sequence[tuple[int, str]]) -> WordScores:
    """Return each near word's `word_similarity` to each query word it is like.

    The statement that found them judged by embedding and trigrams; the
    rows are ranked by what scores them in the end, so a word found but
    unlike every query word reaches no row.
    """
    scores = WordScores([], [], [], [])
    for word_id, word in near:
        for position, query_word in enumerate(query, start=1):
            similarity = word_similarity(query_word, word)
            if similarity:
                scores.ids.append(word_id)
                scores.positions.append(position)
                scores.similarities.append(similarity)
                scores.exact.append(word == query_word)
    return scores


def near_words_statement(
    *,
    household_id: int,
    words: Sequence[str],
    vectors: Sequence[Any],
    exact: bool,
    floor: float = SIMILARITY_FLOOR,
    reaching: Sequence[str] | None = None,
) -> Statement:
    """Return the statement that finds the household's words near the query's,
    given each word's embedding: sorted by distance exactly (`exact`, for a
    small vocabulary) or through the HNSW index.

    With `reaching` subjects, it reads instead every row of theirs using a
    near word, with the near words it uses and every word of its name
    (`reached_names` scores them); only where they have few rows
    (`reads_every_row`).
    """
    parameters = {
        "household": household_id,
        "per_word": PER_WORD,
        "floor": floor,
        **_near_parameters(words, vectors),
    }
    if reaching is not None:
        parameters["subjects"] = list(reaching)
    return Statement(
        _near_sql(len(words), exact=exact, reached=reaching is not None), parameters
    )


def reads_every_row(rows: int | None) -> bool:
    """Return whether the subjects' rows, this many at most (None: not
    counted), are read with the near words (`near_words_statement`).

    So they are when no more than `rows_statement` scores: it would rank
    every row reached among its candidates, so reading them all gives the
    same answers in one statement instead of two. A count minutes old
    (yorik.sizes) at worst reads a few more rows, every one scored.
    """
    return rows is not None and rows <= _SCORED_ROWS


def reached_names(
    query: Sequence[str], rows: Sequence[tuple[str, int, list[str], list[str]]]
) -> tuple[dict[tuple[str, int], list[str]], dict[str, int]]:
    """Return the names of the rows a near word like a query word reaches,
    and each query word's crowd, as `rows_statement` has them.

    `rows` are those `near_words_statement` reads when `reaching`: subject,
    id, the near words the row uses, every word of its name. A row counts in
    a word's crowd when one of its near words is _SHARED_WORD like it; no
    row reached, no crowds.
    """
    names = {}
    crowds = dict.fromkeys(query, 0)
    for subject, subject_id, near, words in rows:
        best = [
            max((word_similarity(query_word, word) for word in near), default=0.0)
            for query_word in query
        ]
        if not any(best):
            continue
        names[subject, subject_id] = words
        for query_word, similarity in zip(query, best, strict=True):
            if similarity >= _SHARED_WORD:
                crowds[query_word] += 1
    return names, crowds if names else {}


def rows_statement(
    scores: WordScores,
    *,
    household_id: int,
    words: int,
    literal: bool,
    subjects: Sequence[str],
) -> Statement:
    """Return the statement that reads the rows of the near words' `scores`
    against this many query words, with every word of the best rows.

    `literal` says whether a row can be told literal by the query's words
    (only when they are all looked up).
    """
    shared = {
        "household": household_id,
        "ids": scores.ids,
        "similarities": scores.similarities,
        "subjects": list(subjects),
        "candidates": _SCORED_ROWS,
        "close": _SHARED_WORD,
    }
    if words == 1:
        as_written = [
            word_id
            for word_id, exact in zip(scores.ids, scores.exact, strict=True)
            if exact
        ]
        literal_word = as_written[0] if literal and as_written else None
        return Statement(_ONE_WORD_SQL, {**shared, "literal_word": literal_word})
    return Statement(
        _rows_sql(words),
        {
            **shared,
            "positions": scores.positions,
            "exact": scores.exact,
            "literal": literal,
        },
    )


def lane_name(query: Query) -> str | None:
    """Return the name the lane looks up for a query, or None for a query it
    does not answer: one without letters, or an email.

    The words are the query's own, articles and titles dropped ("Herr
    Bekker" looks for "bekker"), with its comma: "lindenlechner, peter" for
    "Herr Lindenlechner, Peter", whose surname is before the comma.
    """
    if query.is_empty or "@" in query.text:
        return None
    if not any(char.isalpha() for char in query.phrase):
        return None
    head, comma, tail = query.text.partition(",")
    if not comma:
        return query.phrase
    kept = set(query.phrase.split())
    return ", ".join(
        " ".join(word for word in fold_words(part) if word in kept)
        for part in (head, tail)
    )


def query_words(name: str) -> list[str]:
    """Return the distinct folded words of a typed name, digits read as letters.

    OCR reads "l" as "1" and "O" as "0": a word mixing letters and digits is
    a misread name word. Single letters stay, as initials.
    """
    words = []
    for word in fold_words(name):
        if not word.isalpha():
            if not any(char.isalpha() for char in word):
                continue
            word = word.translate(_DIGIT_LETTERS)
        if word.isalpha() and word not in words:
            words.append(word)
    return words[:_MAX_WORDS]


def typed_words(name: str) -> set[str]:
    """Return the folded words of a name as typed, as text search sees them."""
    return set(fold_words(name))


def word_weight(*, crowd: int | None) -> float:
    """Return how much a query word says about who is meant.

    `crowd` counts the rows with a word close to it, None for an initial. A
    rare surname says more than a first name many people share; a word no
    row comes close to says most, so a row that lacks it scores low.
    """
    if crowd is None:
        return _INITIAL_WEIGHT
    return 1 / math.sqrt(math.log(3 + crowd))


def pick_similar(
    *,
    query: Sequence[str],
    typed: set[str],
    names: dict[tuple[str, int], list[str]],
    crowds: dict[str, int],
    surname: Sequence[str] = (),
    score_floor: float = SCORE_FLOOR,
    margin: float = SCORE_MARGIN,
    limit: int = CANDIDATES,
) -> list[SimilarName]:
    """Return the rows whose names score near the best one and above the floor,
    then the few rows sharing the query's surname, best first: `limit` of
    them, and any more rows alike the last (the same score and words).

    `crowds` counts, for each query word but initials, the household's rows
    with a word close to it; `surname` holds the query's surname words.
    Rows with every typed word among their own are literal matches, which
    text search finds; they must not take a similar name's place. A weak
    best row is shown only when no other row comes as close: several rows
    matching as weakly are a crowd, not the person meant. A surname only a
    few rows share says who is meant even when the first name matches none
    of them (a first name replaced by another), so when neither a literal
    match nor a close row has it, those rows come after the close ones.
    """
    score = _NameScores(
        query, {word: word_weight(crowd=crowds.get(word)) for word in query}
    )
    scored = [
        SimilarName(subject, subject_id, score(words))
        for (subject, subject_id), words in names.items()
        if not typed <= set(words)
    ]

    def alike(candidate: SimilarName) -> tuple[float, list[str]]:
        """Return what tells rows apart here: the score, then the words (the
        index keeps a name's words, not their order)."""
        words = sorted(set(names[candidate.subject, candidate.subject_id]))
        return (-candidate.similarity, words)

    # Rows of one score come by their words, then id: ids follow the order
    # rows were written in, which an answer must not depend on.
    scored.sort(
        key=lambda candidate: (
            *alike(candidate),
            candidate.subject,
            candidate.subject_id,
        )
    )
    if not scored:
        return []
    best = scored[0].similarity
    close = [c for c in scored if c.similarity >= max(score_floor, best - margin)]
    if best < _LONE_SCORE and len(close) > 1:
        close = []
    answered = [words for words in names.values() if typed <= set(words)]
    answered += [names[c.subject, c.subject_id] for c in close]
    family = surname_rows(
        surname=surname, names=names, crowds=crowds, answered=answered
    )
    shared = [c for c in scored if (c.subject, c.subject_id) in family]
    picked = list(dict.fromkeys(close + shared))
    # The rows alike the last that fits come too: the surfaces show similar
    # names by name, so which of them are shown never depends on their ids.
    end = limit
    while 0 < end < len(picked) and alike(picked[end]) == alike(picked[limit - 1]):
        end += 1
    return picked[:end]


def surname_rows(
    *,
    surname: Sequence[str],
    names: dict[tuple[str, int], list[str]],
    crowds: dict[str, int],
    answered: Sequence[Sequence[str]] = (),
) -> set[tuple[str, int]]:
    """Return the rows that share the query's surname, if at most _FEW_ROWS do.

    A row shares it when each of its words (two for Ben-David) is at least
    _SHARED_WORD like one of the row's words. The rows counted are those
    fetched or, when more, those the query found close to the surname's
    rarest word (`crowds`), so a surname is not taken for rare because only
    a few of its many rows were fetched. A surname that a row `answered`
    (a literal match, a close row) already has, or an initial, points at
    no one.
    """
    words = [word for word in surname if len(word) > 1]
    if not words:
        return set()

    # Which surname words each word of a name is like, once per distinct word:
    # the rows fetched share many words.
    alike: dict[str, tuple[bool, ...]] = {}

    def like(other: str) -> tuple[bool, ...]:
        if other not in alike:
            alike[other] = tuple(
                word_similarity(word, other) >= _SHARED_WORD for word in words
            )
        return alike[other]

    def shares(name: Sequence[str]) -> bool:
        found = [like(other) for other in name]
        return all(any(row[index] for row in found) for index in range(len(words)))

    if any(shares(name) for name in answered):
        return set()
    sharing = {key for key, name in names.items() if shares(name)}
    counted = max(len(sharing), min(crowds.get(word, 0) for word in words))
    return sharing if counted <= _FEW_ROWS else set()


def surname_words(name: str) -> list[str]:
    """Return the query words of a typed name's surname.

    That is its last part ("Thomas Müller", "Yael Ben-David"), or all before
    a comma ("van der Berg, Anna").
    """
    head, comma, _ = name.partition(",")
    if comma:
        return query_words(head)
    parts = name.split()
    return query_words(parts[-1]) if parts else []


def name_score(
    *,
    query: Sequence[str],
    name: Sequence[str],
    weights: dict[str, float] | None = None,
) -> float:
    """Return how well a name matches the query, from 0 to 1, words in any order.

    Each query word is paired with a different word of the name so that the
    pairs' similarities add up to the most; the score is their mean,
    weighted by what each query word says (`weights`, 1 when not given),
    less a share for each word of the name left unpaired.
    """
    return _NameScores(query, weights or {})(name)


class _NameScores:
    """`name_score` of one query for many names: each distinct name is scored
    once, and each distinct word compared with the query once (the rows a
    large household's lane scores share many names and words)."""

    def __init__(self, query: Sequence[str], weights: dict[str, float]) -> None:
        self.query = query
        self.weighed = [weights.get(word, 1.0) for word in query]
        self.weight = sum(self.weighed)
        self.columns: dict[str, list[float]] = {}
        self.scores: dict[tuple[str, ...], float] = {}

    def __call__(self, name: Sequence[str]) -> float:
        key = tuple(name)
        score = self.scores.get(key)
        if score is None:
            score = self.scores[key] = self._score(name)
        return score

    def _score(self, name: Sequence[str]) -> float:
        if not self.query or not name:
            return 0.0
        columns = [self._column(word) for word in name]
        similarities = [
            [column[row] for column in columns] for row in range(len(self.query))
        ]
        total, paired = _best_pairing(similarities, len(name))
        missing = len(name) - paired
        return total / self.weight * (1 - _MISSING_WORD) ** missing

    def _column(self, word: str) -> list[float]:
        """Return the weighted similarity of each query word to a name's word."""
        column = self.columns.get(word)
        if column is None:
            column = self.columns[word] = [
                weight * word_similarity(q, word)
                for q, weight in zip(self.query, self.weighed, strict=True)
            ]
        return column


def _best_pairing(similarities: list[list[float]], width: int) -> tuple[float, int]:
    """Return the largest total of pairs, one name word per query word, and
    how many name words were paired.

    Names and queries have a few words, so every assignment is tried; for a
    query of one or two words, without recursion.
    """
    if len(similarities) == 1:
        top = max(similarities[0], default=0.0)
        return (top, 1) if top else (0.0, 0)
    if len(similarities) == 2:
        return _best_of_two(*similarities)
    best = (0.0, 0)

    def extend(row: int, used: frozenset[int], total: float) -> None:
        nonlocal best
        if row == len(similarities):
            best = max(best, (total, len(used)))
            return
        extend(row + 1, used, total)
        for column in range(width):
            value = similarities[row][column]
            if value and column not in used:
                extend(row + 1, used | {column}, total + value)

    extend(0, frozenset(), 0.0)
    return best


def _best_of_two(first: list[float], second: list[float]) -> tuple[float, int]:
    """Return `_best_pairing` of two query words."""
    best = (0.0, 0)
    for alone in (max(first, default=0.0), max(second, default=0.0)):
        if alone:
            best = max(best, (alone, 1))
    for column, value in enumerate(first):
        if value:
            for other, added in enumerate(second):
                if added and other != column:
                    best = max(best, (value + added, 2))
    return best


@lru_cache(maxsize=16_384)
def word_similarity(query_word: str, name_word: str) -> float:
    """Return how alike two folded words are written, sound or print, 0 to 1.

    A single letter is an initial: it matches the words it starts.
    """
    if query_word == name_word:
        return 1.0
    if len(query_word) == 1 or len(name_word) == 1:
        return _INITIAL if name_word[0] == query_word[0] else 0.0
    similarity = _edit_similarity(query_word, name_word)
    printed = _printed(query_word), _printed(name_word)
    if printed != (query_word, name_word):
        similarity = max(similarity, _edit_similarity(*printed))
    sounds = sound_key(query_word), sound_key(name_word)
    if similarity < _SOUND_DISCOUNT and sounds != (query_word, name_word):
        similarity = max(similarity, _SOUND_DISCOUNT * _edit_similarity(*sounds))
    return similarity if similarity >= _WORD_FLOOR else 0.0


def _edit_similarity(first: str, second: str) -> float:
    """Return 1 less the edits (a swap of neighbours is one) per letter."""
    if first == second:
        return 1.0
    distance = jellyfish.damerau_levenshtein_distance(first, second)
    return max(0.0, 1 - distance / max(len(first), len(second)))


@lru_cache(maxsize=4096)
def _printed(word: str) -> str:
    """Return the word with letter pairs OCR merges read as one: "rn" -> "m"."""
    for pair, letter in _PRINTED:
        word = word.replace(pair, letter)
    return word


# -- Words heard as a query's, spelled otherwise --------------------------------

# The household's name words trigram-like a query word (the connection's
# pg_trgm.similarity_threshold, TRIGRAM_FLOOR): every respelling of a word of
# three letters or more keeps enough of its trigrams ("catrin" for "katrin").
_HEARD_WORDS = """
    SELECT query_word.word, name_word.word
    FROM unnest(%(words)s::text[]) AS query_word(word)
    JOIN people_search_nameword AS name_word
        ON name_word.household_id = %(household)s::bigint
        AND name_word.word %% query_word.word
"""
# Shorter words are typed in part ("an" for Anna), not heard.
_HEARD_LENGTH = 3


def heard_terms(query: Query) -> list[str]:
    """Return the query's words that may be heard as another spelling: each
    term of one word of letters, three or more."""
    return [word for term in query.terms if (word := _one_word(term)) is not None]


def _one_word(term: Term) -> str | None:
    if len(term.words) != 1:
        return None
    word = term.words[0]
    return word if word.isalpha() and len(word) >= _HEARD_LENGTH else None


def heard_words_statement(*, household_id: int, words: Sequence[str]) -> Statement:
    """Return the statement that finds the household's name words near these."""
    return Statement(_HEARD_WORDS, {"household": household_id, "words": list(words)})


def with_sounds(query: Query, near: Sequence[tuple[str, str]]) -> Query | None:
    """Return the query whose terms carry the near words heard as them, or
    None when no term has one.

    A word is heard as a term when both sound the same (`sound_key`: Catrin
    for Katrin), the word does not start with the term (text search finds it
    as it is) and is none of its nicknames (found as one, at the same tier:
    Thomas for Tomas, Stefan for Stephan).
    """
    heard: dict[str, set[str]] = {}
    for query_word, word in near:
        if not word.startswith(query_word) and sound_key(word) == sound_key(query_word):
            heard.setdefault(query_word, set()).add(word)
    terms = [
        replace(
            term,
            sounds=tuple(
                sorted(heard.get(_one_word(term) or "", set()) - set(term.nicknames))
            ),
        )
        for term in query.terms
    ]
    if not any(term.sounds for term in terms):
        return None
    return replace(query, terms=tuple(terms))
