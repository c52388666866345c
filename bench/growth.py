"""How each skill question's time grows from one household size to another.

    .venv/bin/python bench/growth.py [--sizes 1k,50k] [--reps 10] [--only TEXT]

bench/run.py times one size after the other, so a change of load between
them moves the ratio: separate runs gave 1.25 and 1.89 for the same
question. Here the small and the large household answer their own inputs
(drawn as bench/run.py draws them) through the API in-process, each in a
worker process of its own, taking turns call by call and changing who goes
first every round, as bench/compare.py does for two revisions. A busy
machine slows both alike, and the ratio of their p50s holds. Results:
bench/results/growth.md.
"""

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# bench.run sets the production environment and starts Django on the bench data.
from bench.compare import Worker
from bench.run import (
    RESULTS,
    ROOT,
    SIZES,
    Skills,
    build_questions,
    cells,
    ensure_household,
    percentile,
    ratio,
)


def growth(
    small: str, large: str, reps: int, seed: int, only: str
) -> list[dict[str, Any]]:
    households = {
        label: ensure_household(
            f"bench-{label}", contacts=SIZES[label], people=SIZES[label], seed=seed
        )
        for label in (small, large)
    }
    workers = {
        label: Worker(ROOT, Skills(household).token)
        for label, household in households.items()
    }
    questions = {
        label: {
            question.key: question
            for question in build_questions(household, random.Random(seed))
        }
        for label, household in households.items()
    }
    rows = []
    try:
        for key, question in questions[small].items():
            if only not in key:
                continue
            asked = {small: question, large: questions[large][key]}
            samples: dict[str, list[float]] = {small: [], large: []}
            for label, worker in workers.items():  # warm both
                for inputs in asked[label].inputs:
                    worker.call(question.skill, inputs)
            pairs = list(zip(asked[small].inputs, asked[large].inputs, strict=False))
            for rep in range(reps):
                order = [small, large] if rep % 2 else [large, small]
                for inputs in pairs:
                    for label in order:
                        given = inputs[0] if label == small else inputs[1]
                        samples[label].append(
                            workers[label].call(question.skill, given)
                        )
            row = {
                "question": key,
                **{
                    label: {
                        "p50_ms": percentile(values, 50),
                        "p95_ms": percentile(values, 95),
                    }
                    for label, values in samples.items()
                },
            }
            rows.append(row)
            print(
                f"{key}: {large} p50 "
                f"{ratio(row[large]['p50_ms'], row[small]['p50_ms'])} of {small}'s",
                flush=True,
            )
    finally:
        for worker in workers.values():
            worker.close()
    return rows


def markdown(small: str, large: str, rows: list[dict[str, Any]]) -> str:
    lines = [
        f"Milliseconds through the API in-process, the {small} and {large} "
        "households taking turns call by call.",
        "",
        f"| question | {small} p50 | {small} p95 | {large} p50 | {large} p95 "
        f"| {small}→{large} p50 | {small}→{large} p95 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['question']} | {cells(row[small])} | {cells(row[large])} | "
            f"{ratio(row[large]['p50_ms'], row[small]['p50_ms'])} | "
            f"{ratio(row[large]['p95_ms'], row[small]['p95_ms'])} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1k,50k", help="two of " + ",".join(SIZES))
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default="", help="questions containing this")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    if len(sizes) != 2 or not set(sizes) <= SIZES.keys():
        parser.error(f"--sizes takes two of {', '.join(SIZES)}")
    small, large = sizes
    rows = growth(small, large, args.reps, args.seed, args.only)
    report = markdown(small, large, rows)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "growth.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
