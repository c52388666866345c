"""The similar-name lane read two ways gives the same answers, and how fast each is.

    .venv/bin/python bench/lane_paths.py [--households 12] [--variants 7] [--seed 1]

Households of few people (generate.py: 50 contacts and 10 to 100 members
and leads, kept between runs) are asked, for every member's and lead's
name, the name itself and `--variants` typos of it (a letter dropped,
swapped, replaced or added, in one word or each), over members and leads,
members alone and leads alone. Each lookup runs both ways the lane has
(people_search.engine.similar): the near words, scored in Python, then a
statement ranking the rows they reach; and, for subjects with no more rows
than that statement ranks, every row reached read with the near words in
one statement. Both with the exact scan and through the HNSW index. It
reports the lookups whose answers differ (the goal is none), how many found
someone, and each way's p50 and p95, in turns. Results:
bench/results/lane_paths.{md,json}.
"""

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# First: it sets Django up with the benchmark's settings.
from bench import run
from bench.generate import ensure_household
from household.models import Lead, Membership
from people_search.engine.similar import reads_every_row
from people_search.index import similar
from people_search.index.models import Subject
from people_search.selectors import subject_rows

RESULTS = Path(__file__).resolve().parent / "results"
SUBJECTS = [[Subject.MEMBER, Subject.LEAD], [Subject.MEMBER], [Subject.LEAD]]
CONTACTS = 50
LETTERS = "aeiouklmnrst"
# Exact scan or the HNSW index, whatever the vocabulary's size.
SCANS = {"exact scan": 10**12, "HNSW index": 0}


def typo(word: str, rng: random.Random) -> str:
    """Return the word with one letter dropped, swapped, replaced or added."""
    if len(word) < 3:
        return word
    at = rng.randrange(len(word) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return word[:at] + word[at + 1 :]
    if kind == 1:
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if kind == 2:
        return word[:at] + rng.choice(LETTERS) + word[at + 1 :]
    return word[:at] + rng.choice(LETTERS) + word[at:]


def variants(name: str, count: int, rng: random.Random) -> list[str]:
    """Return the name and `count` typos of it: in one word, or in each."""
    words = name.split()
    found = [name]
    for index in range(count):
        if index % 2:
            found.append(" ".join(typo(word, rng) for word in words))
        else:
            at = rng.randrange(len(words))
            found.append(
                " ".join(typo(w, rng) if i == at else w for i, w in enumerate(words))
            )
    return found


def names(household_id: int) -> list[str]:
    leads = Lead.objects.filter(household_id=household_id)
    members = Membership.objects.filter(household_id=household_id).select_related(
        "profile"
    )
    found = [f"{lead.first_name} {lead.last_name}" for lead in leads]
    found += [f"{m.profile.first_name} {m.profile.last_name}" for m in members]
    return [name for name in found if name.strip()]


def timed(**arguments: Any) -> tuple[list[Any], float]:
    started = time.perf_counter()
    found = similar.find_similar_names(**arguments)
    return found, (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--households", type=int, default=12)
    parser.add_argument("--variants", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sizes = [
        10 + (90 * index) // max(1, args.households - 1)
        for index in range(args.households)
    ]
    households = [
        ensure_household(
            f"bench-lane-{people}", contacts=CONTACTS, people=people, seed=args.seed
        )
        for people in sizes
    ]
    report: dict[str, Any] = {"households": sizes, "scans": {}}
    for scan, threshold in SCANS.items():
        lookups = found_someone = 0
        differing: list[dict[str, Any]] = []
        times: dict[str, list[float]] = {"ranked": [], "read with the near words": []}
        with mock.patch.object(similar, "EXACT_SCAN_BELOW", threshold):
            for household in households:
                for subjects in SUBJECTS:
                    rows = subject_rows(household.pk, subjects)
                    if not reads_every_row(rows):
                        continue
                    for name in names(household.pk):
                        for query in variants(name, args.variants, rng):
                            asked = {
                                "household_id": household.pk,
                                "name": query,
                                "subjects": subjects,
                            }
                            ways = [
                                ("ranked", None),
                                ("read with the near words", rows),
                            ]
                            if lookups % 2:
                                ways.reverse()
                            answers = {}
                            for way, counted in ways:
                                answers[way], ms = timed(**asked, rows=counted)
                                times[way].append(ms)
                            lookups += 1
                            found_someone += bool(answers["ranked"])
                            if answers["ranked"] != answers["read with the near words"]:
                                differing.append({"query": query, "subjects": subjects})
        report["scans"][scan] = {
            "lookups": lookups,
            "found someone": found_someone,
            "differing": differing,
            "p50 / p95 ms": {
                way: [
                    round(statistics.median(values), 2),
                    round(run.percentile(values, 95), 2),
                ]
                for way, values in times.items()
            },
        }
        print(scan, json.dumps(report["scans"][scan]["p50 / p95 ms"]), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "lane_paths.json").write_text(json.dumps(report, indent=2))
    lines = [
        "# The similar-name lane, two ways",
        "",
        f"Households of {CONTACTS} contacts and "
        f"{', '.join(map(str, sizes))} members and leads; "
        f"every name and {args.variants} typos of it.",
        "",
        "| near words by | lookups | found someone | differing | ranked p50 / p95 "
        "| read with the near words p50 / p95 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for scan, row in report["scans"].items():
        ms = row["p50 / p95 ms"]
        lines.append(
            f"| {scan} | {row['lookups']} | {row['found someone']} | "
            f"{len(row['differing'])} | {ms['ranked'][0]} / {ms['ranked'][1]} | "
            f"{ms['read with the near words'][0]} / "
            f"{ms['read with the near words'][1]} |"
        )
    output = "\n".join(lines) + "\n"
    (RESULTS / "lane_paths.md").write_text(output)
    print(output)


if __name__ == "__main__":
    main()
