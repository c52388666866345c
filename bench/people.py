"""People search at scale: similar names among 100k members + leads.

    .venv/bin/python bench/people.py [--seed 1] [--reps 30]

One big household (bench-100k: 100,000 members + leads and as many contacts)
shares the tables with smaller ones (bench-1k and bench-10k, and households
of 3k and 30k people that place the crossover). For each household the
similar-name lane runs both ways: an exact scan of the household's rows and
the HNSW index with iterative scan. It reports their p50/p95, the index the
planner took, recall of the index path against the exact scan (of the rows fetched
for scoring, and of the rows returned: a row as similar as the exact scan's
last counts as a hit, since equal names tie), and
people search's p50/p95 for text, phone and similar-name queries as the app
runs them. Where the two latencies cross is where EXACT_SCAN_BELOW in
people_search/similar.py belongs. Results: bench/results/people.{md,json}.
"""

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# First: it sets Django up with the benchmark's settings.
from bench import run
from bench.generate import ensure_household
from bench.names_data import VARIANT_FAMILIES
from household.models import Household, Lead, Membership
from people_search.engine.phones import format_phone
from people_search.index import similar
from people_search.index.models import NameWord, Subject
from people_search.selectors import search_people

# (slug, contacts, members + leads), smallest first.
HOUSEHOLDS = [
    ("bench-1k", 1_000, 1_000),
    ("bench-people-3k", 0, 3_000),
    ("bench-10k", 10_000, 10_000),
    ("bench-people-30k", 0, 30_000),
    ("bench-100k", 100_000, 100_000),
]
QUERIES = 30
K = similar.CANDIDATES
SUBJECTS = [Subject.MEMBER, Subject.LEAD]
ALWAYS_EXACT = 10**12
TIE = 1e-6
GOOD_RECALL = 0.95
VECTOR_INDEX = "name_word_hnsw"


def similar_queries(household: Household, rng: random.Random) -> list[str]:
    """Return spelling variants of names, half of them after a first name."""
    first_names = list(
        Lead.objects.filter(household=household).values_list("first_name", flat=True)
    )
    spellings = [spelling for family in VARIANT_FAMILIES for spelling in family]
    return [
        f"{rng.choice(first_names)} {spelling}" if index % 2 else spelling
        for index, spelling in enumerate(rng.sample(spellings, QUERIES))
    ]


def find(household: Household, query: str, *, exact: bool) -> list:
    threshold = ALWAYS_EXACT if exact else 0
    with mock.patch.object(similar, "EXACT_SCAN_BELOW", threshold):
        return similar.find_similar_names(
            household_id=household.pk, name=query, subjects=SUBJECTS
        )


def tie_aware_recall(exact: list[float], found: list[float]) -> float | None:
    """Return the share of the exact result the index path found.

    Similarities, best first. Equal names tie, so any row as similar as the
    exact result's last counts as a hit.
    """
    if not exact:
        return None
    floor = exact[-1] - TIE
    return min(sum(1 for value in found if value >= floor), len(exact)) / len(exact)


def candidates(household: Household, query: str) -> tuple[list, list]:
    """Return find_similar_names' candidates by exact scan and by the index path."""
    return (
        find(household, query, exact=True)[:K],
        find(household, query, exact=False)[:K],
    )


def word_recalls(household: Household, query: str, bare: run.BareSql) -> list[float]:
    """Return the share of the rows the exact scan fetches for scoring that the
    index path fetches too (none when the exact scan fetches none)."""

    def fetched(exact: bool) -> set[tuple[str, int]]:
        _, statements = run.count_selects(lambda: find(household, query, exact=exact))
        return {(row[0], row[1]) for row in bare.rows(statements)}

    exact_rows, found_rows = fetched(exact=True), fetched(exact=False)
    if not exact_rows:
        return []
    return [len(exact_rows & found_rows) / len(exact_rows)]


def mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def vector_plan(household: Household, query: str, bare: run.BareSql) -> str:
    """Return the index the planner takes for the index path's query."""
    _, statements = run.count_selects(lambda: find(household, query, exact=False))
    plans = bare.explain(statements)
    names = [
        node["Index Name"]
        for plan in plans
        for node in run.plan_nodes(plan["Plan"])
        if "Index Name" in node and "nameword" in node.get("Relation Name", "")
    ]
    if not names:
        names = [
            node["Index Name"]
            for plan in plans
            for node in run.plan_nodes(plan["Plan"])
            if "Index Name" in node
        ]
    return ", ".join(dict.fromkeys(names)) or "none"


def people_queries(household: Household, rng: random.Random) -> dict[str, list[str]]:
    leads = list(
        Lead.objects.filter(household=household).values_list(
            "first_name", "last_name", "phone"
        )
    )
    picked = rng.sample(leads, min(QUERIES, len(leads)))
    phones = [phone for _, _, phone in leads if phone]
    region = household.default_region
    return {
        "text": [f"{first} {last}" for first, last, _ in picked],
        "phone": [
            format_phone(phone, region)
            for phone in rng.sample(phones, min(QUERIES, len(phones)))
        ],
        "similar name": similar_queries(household, rng),
    }


def measure_at_scale(
    *, seed: int = 1, reps: int = 30, bare: run.BareSql | None = None
) -> dict:
    """Measure the similar-name lane and people search in every household."""
    bare = bare or run.BareSql()
    rows = []
    for slug, contacts, people in HOUSEHOLDS:
        print(f"people at scale: {slug} …", flush=True)
        household = ensure_household(slug, contacts=contacts, people=people, seed=seed)
        rng = random.Random(seed)
        queries = similar_queries(household, rng)
        exact = measure_lane(household, queries, exact=True, reps=reps)
        indexed = measure_lane(household, queries, exact=False, reps=reps)
        found = [candidates(household, query) for query in queries]
        recalls = [
            value
            for exact_found, index_found in found
            if (
                value := tie_aware_recall(
                    [c.similarity for c in exact_found],
                    [c.similarity for c in index_found],
                )
            )
            is not None
        ]
        words = [
            value for query in queries for value in word_recalls(household, query, bare)
        ]
        actor = Membership.objects.select_related("household").get(
            household=household, profile__username=f"{slug}-admin"
        )
        searches = {
            kind: run.measure(
                lambda query, actor=actor: search_people(
                    household=actor.household, actor=actor, query=query
                ),
                kind_queries,
                reps,
            ).as_dict()
            for kind, kind_queries in people_queries(household, rng).items()
        }
        household_words = NameWord.objects.filter(household=household).count()
        rows.append(
            {
                "household": slug,
                "people": people,
                "contacts": contacts,
                "household_words": household_words,
                "exact": exact.as_dict(),
                "hnsw": indexed.as_dict(),
                "hnsw_plan": vector_plan(household, queries[0], bare),
                "word_recall": mean(words),
                "recall_at_24": mean(recalls),
                "candidates_exact": mean([len(e) for e, _ in found]),
                "candidates_index": mean([len(i) for _, i in found]),
                "path_now": "exact"
                if household_words < similar.EXACT_SCAN_BELOW
                else "hnsw",
                "people_search": searches,
            }
        )
    return {
        "table_embeddings": NameWord.objects.count(),
        "exact_scan_below": similar.EXACT_SCAN_BELOW,
        "households": rows,
        "summary": summarise(rows),
    }


def measure_lane(
    household: Household, queries: list[str], *, exact: bool, reps: int
) -> run.Timing:
    return run.measure(lambda query: find(household, query, exact=exact), queries, reps)


def summarise(rows: list[dict[str, Any]]) -> dict[str, int | None]:
    """Return where the HNSW index first pays: faster, and as complete."""

    def first(condition: Callable[[dict[str, Any]], bool]) -> int | None:
        return next((row["household_words"] for row in rows if condition(row)), None)

    def on_index(row: dict[str, Any]) -> bool:
        return VECTOR_INDEX in row["hnsw_plan"]

    return {
        "hnsw_faster_from": first(
            lambda row: on_index(row) and row["hnsw"]["p95_ms"] < row["exact"]["p95_ms"]
        ),
        "hnsw_complete_from": first(
            lambda row: on_index(row) and (row["recall_at_24"] or 0) >= GOOD_RECALL
        ),
    }


def markdown(report: dict[str, Any]) -> list[str]:
    lines = [
        "## People search at scale",
        "",
        f"{report['table_embeddings']:,} distinct name words embedded in the "
        "table, all households together; EXACT_SCAN_BELOW is "
        f"{report['exact_scan_below']:,} distinct name words. The similar-name "
        "lane (find_similar_names, milliseconds) both ways: the exact scan of the "
        "household's name words, and the index path (HNSW with iterative scan, "
        "unless the planner prefers the household B-tree). Recall of the index "
        "path against the exact scan: of the rows the lane fetches for scoring, "
        f"and of the {K} rows it returns (ties counted); and how many rows "
        "a query got on average each way.",
        "",
        "| household | members + leads | distinct words | exact p50 | exact p95 "
        "| index path p50 | index path p95 | index path's plan | fetched-row recall "
        f"| recall@{K} | candidates exact / index | path taken |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for row in report["households"]:
        lines.append(
            f"| {row['household']} | {row['people']:,} | {row['household_words']:,} "
            f"| {row['exact']['p50_ms']} | {row['exact']['p95_ms']} "
            f"| {row['hnsw']['p50_ms']} | {row['hnsw']['p95_ms']} "
            f"| {row['hnsw_plan']} | {row['word_recall']} "
            f"| {row['recall_at_24']} "
            f"| {row['candidates_exact']} / {row['candidates_index']} "
            f"| {row['path_now']} |"
        )
    lines += [
        "",
        "People search as the app runs it (search_people in-process, milliseconds):",
        "",
        "| household | text p50 | text p95 | phone p50 | phone p95 "
        "| similar name p50 | similar name p95 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["households"]:
        searches = row["people_search"]
        lines.append(
            f"| {row['household']} "
            + " ".join(
                f"| {searches[kind]['p50_ms']} | {searches[kind]['p95_ms']}"
                for kind in ("text", "phone", "similar name")
            )
            + " |"
        )
    summary = report["summary"]
    faster, complete = summary["hnsw_faster_from"], summary["hnsw_complete_from"]
    lines += [
        "",
        (
            f"On the HNSW index the lane is faster from {faster:,} distinct words on"
            if faster
            else "The exact scan was faster wherever the planner took the index"
        )
        + "; "
        + (
            f"its recall@{K} reaches {GOOD_RECALL} from {complete:,} on."
            if complete
            else f"its recall@{K} stays below {GOOD_RECALL} wherever it is used."
        ),
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    report = measure_at_scale(seed=args.seed, reps=args.reps)
    run.RESULTS.mkdir(parents=True, exist_ok=True)
    (run.RESULTS / "people.json").write_text(json.dumps(report, indent=2) + "\n")
    output = "\n".join(markdown(report)) + "\n"
    (run.RESULTS / "people.md").write_text(output)
    print(output)


if __name__ == "__main__":
    main()
