"""Name-quality benchmark: how well similar-name search finds misspelled people.

    .venv/bin/python bench/names.py [--roster 5000] [--queries 400] [--seed 7]
                                    [--scale 50000 100000] [--reps 200]
                                    [--orders 5000 50000]

Builds a census-style roster of leads (German, English, Israeli and other
names, some with a middle name, a long tail of rare surnames) and asks for
variants of them, `--queries` of each kind: keyboard typos, OCR confusions,
phonetic respellings, the name swapped (with an error), a part missing, the
first name replaced, and names nobody has. No query is a literal match of its
person (text search would find those). For each kind it reports recall@8 (the
person is among the rows returned, at most 8) and, for unknown names, the
rows returned, for the similar-name lane (`find_similar_names`) beside a
pg_trgm baseline: `similarity(folded full name, folded query)` over all rows
above a threshold, best 8. It then times the lane at the roster's size and in
households of `--scale` leads (kept for the next run; `--scale` alone skips
them). Last, for each size of `--orders` (the roster's by default; `--orders`
alone skips it), it imports the same roster a second time in another order and
asks both households every query: the answers, as names, must be the same.
Results: bench/results/names.{md,json}.
"""

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.django_setup import ROOT, setup

setup()

from django.db import connection  # noqa: E402

from bench.census_data import (  # noqa: E402
    COMPOUND_SURNAMES,
    FIRST_NAMES,
    KEYBOARD_ROWS,
    LAST_NAMES,
    OCR_CONFUSIONS,
    ORIGINS,
    PHONETIC_RESPELLINGS,
)
from bench.generate import Zipf, delete_household  # noqa: E402
from bench.run import Timing  # noqa: E402
from household.models import Household, Lead  # noqa: E402
from household.search_columns import person_columns  # noqa: E402
from household.services import index_lead_names  # noqa: E402
from people_search.engine.text import fold_name, search_document  # noqa: E402
from people_search.index.models import NameWord  # noqa: E402
from people_search.index.similar import (  # noqa: E402
    EXACT_SCAN_BELOW,
    find_similar_names,
)

SHOWN = 8
BASELINE_THRESHOLDS = [0.3, 0.4, 0.5]
TYPO_KINDS = ["keyboard", "ocr", "phonetic", "swapped"]
PART_KINDS = ["missing", "replaced"]
KINDS = [*TYPO_KINDS, *PART_KINDS, "unknown"]
BATCH = 5000
# Every tenth name of each list stays off the roster, so some names nobody
# has are made of words the household has never seen.
HELD_OUT_EVERY = 10
SYLLABLES = [
    "ba", "be", "bo", "da", "de", "di", "fa", "fe", "ga", "go", "ha", "he",
    "ka", "ke", "ko", "la", "le", "li", "lo", "ma", "me", "mi", "mo", "na",
    "ne", "no", "pa", "pe", "ra", "re", "ri", "ro", "sa", "se", "ta", "te",
    "to", "va", "ve", "wa", "we", "za", "ze", "bru", "gra", "kla", "sto",
    "tre", "ver", "win", "berg", "dorf", "mann", "son", "ley", "ton", "ski",
]  # fmt: skip


@dataclass(frozen=True)
class Person:
    first: str
    last: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass(frozen=True)
class Case:
    kind: str
    query: str
    wanted: int | None


class Roster:
    """Draw census-style names: origins, long tails, middle names, rare surnames."""

    def __init__(self, rng: random.Random, *, held_out: bool) -> None:
        self.rng = rng

        def keep(names: Sequence[str]) -> list[str]:
            if not held_out:
                return list(names)
            return [n for i, n in enumerate(names) if i % HELD_OUT_EVERY != 1]

        self.first = {o: Zipf(keep(n), rng, 0.6) for o, n in FIRST_NAMES.items()}
        self.last = {o: Zipf(keep(n), rng, 0.8) for o, n in LAST_NAMES.items()}
        self.origins = list(ORIGINS)
        self.weights = list(ORIGINS.values())

    def origin(self) -> str:
        return self.rng.choices(self.origins, weights=self.weights)[0]

    def first_name(self, origin: str) -> str:
        first = self.first[origin]()
        if origin == "english" and self.rng.random() < 0.2:
            return f"{first} {self.first[origin]()}"
        if origin == "german" and self.rng.random() < 0.08:
            return f"{first}-{self.first[origin]()}"
        return first

    def last_name(self, origin: str) -> str:
        draw = self.rng.random()
        if draw < 0.12:
            return "".join(
                self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 3))
            ).title()
        if draw < 0.35 and origin in COMPOUND_SURNAMES:
            starts, ends = COMPOUND_SURNAMES[origin]
            return self.rng.choice(starts) + self.rng.choice(ends)
        if origin == "israeli" and draw < 0.4:
            return f"Ben-{self.first['israeli']()}"
        return self.last[origin]()

    def person(self) -> Person:
        origin = self.origin()
        # One person in twenty has a first name of another origin.
        first_origin = self.origin() if self.rng.random() < 0.05 else origin
        return Person(self.first_name(first_origin), self.last_name(origin))


def roster_name(*, rows: int, seed: int, order: int | None = None) -> str:
    name = f"Bench names: {rows} leads, seed {seed}"
    return name if order is None else f"{name}, written in order {order}"


def build_household(
    slug: str, *, rows: int, seed: int, order: int | None = None
) -> dict[int, Person]:
    """Return the household's leads, generating the household unless it exists.

    With `order`, the same roster is written shuffled by that seed, so its
    rows, name words and index are written in another order.
    """
    name = roster_name(rows=rows, seed=seed, order=order)
    household = Household.objects.filter(slug=slug, name=name).first()
    if household is None:
        delete_household(slug)
        household = Household.objects.create(
            slug=slug, name=name, default_region="DE", language="de"
        )
        roster = Roster(random.Random(seed), held_out=True)
        everyone = [roster.person() for _ in range(rows)]
        if order is not None:
            random.Random(order).shuffle(everyone)
        for start in range(0, rows, BATCH):
            people = everyone[start : start + BATCH]
            leads = Lead.objects.bulk_create(
                Lead(
                    household=household,
                    first_name=person.first,
                    last_name=person.last,
                    **person_columns(
                        first_name=person.first,
                        last_name=person.last,
                        email="",
                        fallback_name="",
                    ),
                )
                for person in people
            )
            index_lead_names(household_id=household.pk, lead_ids=[x.pk for x in leads])
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return {
        pk: Person(first, last)
        for pk, first, last in Lead.objects.filter(household=household).values_list(
            "pk", "first_name", "last_name"
        )
    }


def _neighbours() -> dict[str, str]:
    around: dict[str, set[str]] = defaultdict(set)
    for rows in KEYBOARD_ROWS.values():
        for r, row in enumerate(rows):
            for c, key in enumerate(row):
                for dr, dc in [(0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0)]:
                    if 0 <= r + dr < len(rows) and 0 <= c + dc < len(rows[r + dr]):
                        neighbour = rows[r + dr][c + dc]
                        if neighbour.isalpha():
                            around[key].add(neighbour)
    return {key: "".join(sorted(keys)) for key, keys in around.items()}


NEIGHBOURS = _neighbours()


def _same_case(new: str, old: str) -> str:
    return new.upper() if old.isupper() else new


def keyboard_typo(text: str, rng: random.Random) -> str:
    """Return text with one slip of a finger in one of its words of 3+ letters."""
    spans = _word_spans(text, minimum=3)
    start, end = rng.choice(spans)
    # The first letter is seldom the one mistyped.
    position = start if rng.random() < 0.1 else rng.randrange(start + 1, end)
    char = text[position]
    near = NEIGHBOURS.get(char.lower(), "") or "e"
    edit = rng.choices(["replace", "drop", "insert", "swap"], [35, 25, 20, 20])[0]
    if edit == "replace":
        return (
            text[:position] + _same_case(rng.choice(near), char) + text[position + 1 :]
        )
    if edit == "drop":
        return text[:position] + text[position + 1 :]
    if edit == "insert":
        extra = char.lower() if rng.random() < 0.4 else rng.choice(near)
        return text[:position] + char + extra + text[position + 1 :]
    if position + 1 >= end:
        position -= 1
    return text[:position] + text[position + 1] + text[position] + text[position + 2 :]


def _word_spans(text: str, *, minimum: int) -> list[tuple[int, int]]:
    spans, start = [], None
    for index, char in enumerate(text + " "):
        if char.isalpha() and start is None:
            start = index
        elif not char.isalpha() and start is not None:
            if index - start >= minimum:
                spans.append((start, index))
            start = None
    return spans or [(0, len(text))]


def replace_one(
    text: str, rules: Sequence[tuple[str, str]], rng: random.Random
) -> str | None:
    """Apply one applicable rule at one of its places; None when none applies."""
    options = []
    for written, instead in rules:
        at = text.find(written)
        while at >= 0:
            options.append((at, written, instead))
            at = text.find(written, at + 1)
    if not options:
        return None
    at, written, instead = rng.choice(options)
    return text[:at] + instead + text[at + len(written) :]


def ocr_error(text: str, rng: random.Random) -> str | None:
    return replace_one(text, OCR_CONFUSIONS, rng)


def phonetic_error(text: str, rng: random.Random) -> str | None:
    changed = replace_one(text.lower(), PHONETIC_RESPELLINGS, rng)
    if changed is None:
        return None
    # Names keep their capitals, as people write them.
    capitals = [word[:1].isupper() for word in text.split(" ")]
    return " ".join(
        word[:1].upper() + word[1:] if capital else word
        for word, capital in zip(changed.split(" "), capitals, strict=False)
    )


def some_error(text: str, rng: random.Random) -> str:
    """Return text with one keyboard, OCR or phonetic error."""
    kind = rng.choice([keyboard_typo, phonetic_error, keyboard_typo, ocr_error])
    return kind(text, rng) or keyboard_typo(text, rng)


def repeat_error(
    error: Callable[[str, random.Random], str | None], text: str, rng: random.Random
) -> str | None:
    """Return one error, or two for a third of the names."""
    changed = error(text, rng)
    if changed is not None and rng.random() < 1 / 3:
        changed = error(changed, rng) or changed
    return changed


def variant(
    kind: str, person: Person, *, first_names: Sequence[str], rng: random.Random
) -> str | None:
    """Return a query of this kind for the person, or None when none can be made."""
    first, last = person.first, person.last
    if kind == "keyboard":
        return repeat_error(keyboard_typo, person.name, rng)
    if kind == "ocr":
        return repeat_error(ocr_error, person.name, rng)
    if kind == "phonetic":
        return repeat_error(phonetic_error, person.name, rng)
    if kind == "swapped":
        return some_error(f"{last} {first}", rng)
    if kind == "missing":
        # Left out: a middle name, the first name, or all but the last initial.
        parts = first.replace("-", " ").split()
        draw = rng.random()
        if len(parts) > 1 and draw < 0.3:
            return some_error(f"{parts[0]} {last}", rng)
        if draw < 0.6:
            return some_error(last, rng)
        return f"{some_error(first, rng) if draw < 0.8 else first} {last[0]}."
    if kind == "replaced":
        other = rng.choice(first_names)
        if fold_name(other) in fold_name(first):
            return None
        return f"{other} {some_error(last, rng) if rng.random() < 0.3 else last}"
    raise ValueError(kind)


def is_literal(query: str, person: Person) -> bool:
    """Return whether text search finds the person: every term in the name."""
    document = search_document(person.first, person.last)
    return all(term in document for term in fold_name(query).replace(",", " ").split())


def build_cases(
    people: dict[int, Person], *, per_kind: int, rng: random.Random
) -> list[Case]:
    """Return `per_kind` queries of each kind; none finds its person literally."""
    ids = sorted(people)
    first_names = sorted({p.first.split()[0] for p in people.values()})
    cases: list[Case] = []
    for kind in KINDS[:-1]:
        made = 0
        while made < per_kind:
            pk = rng.choice(ids)
            query = variant(kind, people[pk], first_names=first_names, rng=rng)
            if query is None or is_literal(query, people[pk]):
                continue
            cases.append(Case(kind, query, pk))
            made += 1
    known = [_folded_words(p.name) for p in people.values()]
    strangers = Roster(rng, held_out=False)
    made = 0
    while made < per_kind:
        stranger = strangers.person()
        # A name a person has, or has with a middle name, is not unknown.
        if any(_folded_words(stranger.name) <= name for name in known):
            continue
        query = stranger.name if rng.random() < 0.7 else some_error(stranger.name, rng)
        cases.append(Case("unknown", query, None))
        made += 1
    return cases


def _folded_words(name: str) -> frozenset[str]:
    return frozenset(fold_name(name).replace("-", " ").split())


_BASELINE = """
    SELECT id, similarity(sort_name, %(query)s) FROM household_lead
    WHERE household_id = %(household)s
        AND similarity(sort_name, %(query)s) >= %(threshold)s
    ORDER BY 2 DESC, id
    LIMIT %(limit)s
"""


def baseline(
    household_id: int, query: str, threshold: float
) -> list[tuple[int, float]]:
    """Return the leads whose folded name pg_trgm finds most similar to the
    folded query, best first, with their similarity."""
    parameters = {
        "household": household_id,
        "query": fold_name(query),
        "threshold": threshold,
        "limit": SHOWN,
    }
    with connection.cursor() as cursor:
        cursor.execute(_BASELINE, parameters)
        return cursor.fetchall()


def lane(household_id: int, query: str) -> list[int]:
    found = find_similar_names(
        household_id=household_id, name=query, subjects=["lead"], limit=SHOWN
    )
    return [candidate.subject_id for candidate in found]


@dataclass
class Tally:
    hits: int = 0
    queries: int = 0
    rows: int = 0
    empty: int = 0

    def add(self, case: Case, found: list[int]) -> None:
        self.queries += 1
        self.rows += len(found)
        self.empty += not found
        if case.wanted is not None and case.wanted in found[:SHOWN]:
            self.hits += 1

    def __iadd__(self, other: "Tally") -> "Tally":
        self.hits += other.hits
        self.queries += other.queries
        self.rows += other.rows
        self.empty += other.empty
        return self

    @property
    def recall(self) -> float:
        return self.hits / self.queries if self.queries else 0.0


LANE = "similar-name lane"
BASELINE = "pg_trgm baseline"


def evaluate(
    household_id: int, cases: list[Case]
) -> tuple[dict[str, dict[str, Tally]], dict[str, Timing], list[Case]]:
    """Run every case through the lane and the baseline, timing each call.

    The baseline runs once at its lowest threshold: its best rows above a
    higher one are the first of those.
    """
    names = [LANE] + [baseline_name(t) for t in BASELINE_THRESHOLDS]
    tallies: dict[str, dict[str, Tally]] = {name: defaultdict(Tally) for name in names}
    timings = {LANE: Timing(), BASELINE: Timing()}
    misses = []
    for case in cases:
        started = time.perf_counter()
        found = lane(household_id, case.query)
        timings[LANE].samples.append((time.perf_counter() - started) * 1000)
        tallies[LANE][case.kind].add(case, found)
        if case.wanted is not None and case.wanted not in found:
            misses.append(case)
        started = time.perf_counter()
        similar = baseline(household_id, case.query, min(BASELINE_THRESHOLDS))
        timings[BASELINE].samples.append((time.perf_counter() - started) * 1000)
        for threshold in BASELINE_THRESHOLDS:
            tallies[baseline_name(threshold)][case.kind].add(
                case, [pk for pk, value in similar if value >= threshold]
            )
    return tallies, timings, misses


def baseline_name(threshold: float) -> str:
    return f"pg_trgm similarity ≥ {threshold:.1f}"


def table_rows(tallies: dict[str, dict[str, Tally]]) -> list[dict[str, object]]:
    rows = []
    for method, by_kind in tallies.items():
        typos, variants = Tally(), Tally()
        for kind in TYPO_KINDS:
            typos += by_kind[kind]
        for kind in KINDS[:-1]:
            variants += by_kind[kind]
        unknown = by_kind["unknown"]
        rows.append(
            {
                "method": method,
                **{kind: round(by_kind[kind].recall, 3) for kind in KINDS[:-1]},
                "typos": round(typos.recall, 3),
                "all variants": round(variants.recall, 3),
                "rows per unknown name": round(unknown.rows / unknown.queries, 2),
                "unknown names with no row": round(unknown.empty / unknown.queries, 3),
            }
        )
    return rows


def markdown_table(rows: list[dict[str, object]]) -> list[str]:
    return [
        "| " + " | ".join(rows[0]) + " |",
        "|---" + "|---:" * (len(rows[0]) - 1) + "|",
        *("| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows),
    ]


def scale_timings(*, rows: int, seed: int, reps: int) -> dict[str, object]:
    """Time the lane and the baseline in a household of `rows` leads."""
    slug = f"bench-names-{rows // 1000}k"
    people = build_household(slug, rows=rows, seed=seed)
    household = Household.objects.get(slug=slug)
    cases = build_cases(people, per_kind=10, rng=random.Random(seed))
    queries = [case.query for case in cases]
    timings = {LANE: Timing(), BASELINE: Timing()}
    for index in range(reps):
        query = queries[index % len(queries)]
        started = time.perf_counter()
        lane(household.pk, query)
        timings[LANE].samples.append((time.perf_counter() - started) * 1000)
        # The baseline reads every row: once per query is enough.
        if index < len(queries):
            started = time.perf_counter()
            baseline(household.pk, query, min(BASELINE_THRESHOLDS))
            timings[BASELINE].samples.append((time.perf_counter() - started) * 1000)
    return timing_row(household.pk, leads=len(people), timings=timings)


def order_comparison(
    slug: str, *, rows: int, seed: int, per_kind: int
) -> dict[str, object]:
    """Ask every query of two imports of one roster, written in two orders.

    Answers are compared as the names they list: two people of one name are
    one answer, and the surfaces list similar names by name. Recall counts a
    query found when its person's name is among the names returned, in both
    households alike.
    """
    people = build_household(slug, rows=rows, seed=seed)
    shuffled = build_household(f"{slug}-shuffled", rows=rows, seed=seed, order=seed)
    households = [Household.objects.get(slug=s) for s in (slug, f"{slug}-shuffled")]
    cases = build_cases(people, per_kind=per_kind, rng=random.Random(seed))
    identical = 0
    found = {household.pk: defaultdict(int) for household in households}
    for case in cases:
        answers = [
            sorted(rows_of[pk].name for pk in lane(household.pk, case.query))
            for household, rows_of in zip(households, (people, shuffled), strict=True)
        ]
        identical += answers[0] == answers[1]
        if case.wanted is not None:
            for household, answer in zip(households, answers, strict=True):
                found[household.pk][case.kind] += people[case.wanted].name in answer
    words = [
        NameWord.objects.filter(household=household).count() for household in households
    ]

    def recall(household: Household, kinds: Sequence[str]) -> float:
        hits = sum(found[household.pk][kind] for kind in kinds)
        return round(hits / (per_kind * len(kinds)), 3)

    return {
        "household": f"{len(people):,} leads",
        "distinct words": f"{words[0]:,}",
        "near words by": "exact scan" if words[0] < EXACT_SCAN_BELOW else "HNSW index",
        "queries": len(cases),
        "identical answers": identical,
        "typos, as written": recall(households[0], TYPO_KINDS),
        "typos, shuffled": recall(households[1], TYPO_KINDS),
        "all variants, as written": recall(households[0], KINDS[:-1]),
        "all variants, shuffled": recall(households[1], KINDS[:-1]),
    }


def timing_row(
    household_id: int, *, leads: int, timings: dict[str, Timing]
) -> dict[str, object]:
    words = NameWord.objects.filter(household_id=household_id).count()
    return {
        "household": f"{leads:,} leads",
        "distinct words": f"{words:,}",
        "lane p50 ms": round(timings[LANE].p50, 1),
        "lane p95 ms": round(timings[LANE].p95, 1),
        "baseline p50 ms": round(timings[BASELINE].p50, 1),
        "baseline p95 ms": round(timings[BASELINE].p95, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roster", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=400, help="queries per kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--scale", type=int, nargs="*", default=[50_000], help="leads; none skips it"
    )
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument(
        "--orders",
        type=int,
        nargs="*",
        default=None,
        help="leads of rosters imported twice in two orders (default: the "
        "roster's); none skips it",
    )
    parser.add_argument("--misses", type=int, default=0, help="print this many misses")
    args = parser.parse_args()
    started = time.perf_counter()
    people = build_household("bench-names", rows=args.roster, seed=args.seed)
    household = Household.objects.get(slug="bench-names")
    cases = build_cases(people, per_kind=args.queries, rng=random.Random(args.seed))
    tallies, timings, misses = evaluate(household.pk, cases)
    rows = table_rows(tallies)
    timing_rows = [timing_row(household.pk, leads=len(people), timings=timings)]
    timing_rows += [
        scale_timings(rows=rows, seed=args.seed, reps=args.reps) for rows in args.scale
    ]
    header = (
        f"{len(people):,} leads; {args.queries} queries of each kind "
        f"({len(cases):,} in all), seed {args.seed}. Recall@{SHOWN} per kind; "
        f"typos = keyboard, OCR, phonetic and swapped; all variants adds missing "
        f"and replaced parts."
    )
    orders = [args.roster] if args.orders is None else args.orders
    order_rows = [
        order_comparison(
            "bench-names" if size == args.roster else f"bench-names-{size // 1000}k",
            rows=size,
            seed=args.seed,
            per_kind=args.queries,
        )
        for size in orders
    ]
    lines = [header, "", *markdown_table(rows), "", *markdown_table(timing_rows)]
    if order_rows:
        lines += [
            "",
            "Two imports of one roster in two orders, "
            f"{args.queries} queries of each kind:",
            "",
            *markdown_table(order_rows),
        ]
    for case in misses[: args.misses]:
        lines.append(f"miss {case.kind}: {case.query!r} -> {people[case.wanted].name}")
    lines += ["", f"{time.perf_counter() - started:.0f} s"]
    output = "\n".join(lines)
    print(output)
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "names.md").write_text(output + "\n")
    (results / "names.json").write_text(
        json.dumps(
            {
                "summary": header,
                "rows": rows,
                "timings": timing_rows,
                "orders": order_rows,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
