"""Every skill question of bench/run.py, this checkout beside another revision.

    .venv/bin/python bench/compare.py --against REV [--sizes 1k,10k] [--reps 10]
                                      [--only TEXT] [--own-schema]

Both versions answer the same calls through the API in-process (Django test
client: token check, rate limit, skill, card, JSON), each in a process of its
own on the same benchmark data, and take turns call by call, so a busy machine
slows both alike and the ratio holds where single timings do not. The other
revision is checked out into a temporary git worktree and runs with this
checkout's virtualenv on this checkout's database: it must still read the
columns it knows (true while migrations only add). With --own-schema it runs
on a copy of the data migrated back to its own schema instead. Results:
bench/results/compare.md.
"""

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.checkouts import checkout_of

# bench.run sets the production environment and starts Django on the bench data.
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

# Runs inside each checkout: reads [skill, inputs] lines, answers [status, ms].
WORKER = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
import django
django.setup()
from django.test import Client
client, token = Client(), os.environ["BENCH_TOKEN"]
print("ready", flush=True)
for line in sys.stdin:
    skill, inputs = json.loads(line)
    started = time.perf_counter()
    response = client.post(
        f"/api/skills/{skill}/call/", inputs, content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    elapsed = (time.perf_counter() - started) * 1000
    print(json.dumps([response.status_code, elapsed]), flush=True)
"""


class Worker:
    """One checkout answering calls in a process of its own."""

    def __init__(self, checkout: Path, token: str, database_url: str = "") -> None:
        database = {"DATABASE_URL": database_url} if database_url else {}
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            cwd=checkout,
            env={**os.environ, "BENCH_TOKEN": token, **database},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{checkout} did not start")

    def call(self, skill: str, inputs: dict[str, Any]) -> float:
        self.process.stdin.write(json.dumps([skill, inputs]) + "\n")
        self.process.stdin.flush()
        status, elapsed = json.loads(self.process.stdout.readline())
        if status != 200:
            raise RuntimeError(f"{skill} {inputs} answered {status}")
        return elapsed

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def schema_copy(checkout: Path) -> str:
    """Copy the bench database and migrate the copy back to the checkout's
    schema, with this checkout's migrations; return the copy's DATABASE_URL.

    For a revision whose migrations change keys or constraints rather than
    only add: each version then reads the schema it was written for.
    """
    from urllib.parse import quote

    import psycopg
    from django.db import connection, connections

    params = connection.get_connection_params()
    name = connection.settings_dict["NAME"]
    copy = f"{name}_compared"
    connections.close_all()
    server = {key: params[key] for key in ("host", "port", "user") if key in params}
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{copy}"')
        admin.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{name}"')
    url = (
        f"postgres://{params.get('user', 'postgres')}@{quote(params['host'], safe='')}"
    )
    url += f":{params['port']}/{copy}" if "port" in params else f"/{copy}"
    for migrations in sorted(checkout.glob("*/migrations")):
        latest = max((path.stem for path in migrations.glob("[0-9]*.py")), default=None)
        if latest:
            subprocess.run(
                [
                    sys.executable,
                    "manage.py",
                    "migrate",
                    migrations.parent.name,
                    latest,
                    "--verbosity",
                    "0",
                ],
                cwd=ROOT,
                env={**os.environ, "DATABASE_URL": url},
                check=True,
            )
    return url


def compare(
    revision: str,
    checkout: Path,
    sizes: list[str],
    reps: int,
    seed: int,
    only: str = "",
    own_schema: bool = False,
) -> list[dict[str, Any]]:
    rows = []
    for label in sizes:
        household = ensure_household(
            f"bench-{label}", contacts=SIZES[label], people=SIZES[label], seed=seed
        )
        token = Skills(household).token
        their_database = schema_copy(checkout) if own_schema else ""
        ours, theirs = Worker(ROOT, token), Worker(checkout, token, their_database)
        try:
            for question in build_questions(household, random.Random(seed)):
                if only not in question.key:
                    continue
                samples: dict[str, list[float]] = {"ours": [], "theirs": []}
                for inputs in question.inputs:  # warm both
                    ours.call(question.skill, inputs)
                    theirs.call(question.skill, inputs)
                for rep in range(reps):
                    # Take turns, and change who goes first every round.
                    pair = [("ours", ours), ("theirs", theirs)]
                    for inputs in question.inputs:
                        for name, worker in pair if rep % 2 else pair[::-1]:
                            samples[name].append(worker.call(question.skill, inputs))
                row = {
                    "size": label,
                    "question": question.key,
                    **{
                        name: {
                            "p50_ms": percentile(values, 50),
                            "p95_ms": percentile(values, 95),
                        }
                        for name, values in samples.items()
                    },
                }
                rows.append(row)
                print(
                    f"{label} {question.key}: p50 "
                    f"{ratio(row['ours']['p50_ms'], row['theirs']['p50_ms'])} "
                    f"of {revision}'s",
                    flush=True,
                )
        finally:
            ours.close()
            theirs.close()
    return rows


def markdown(revision: str, rows: list[dict[str, Any]]) -> str:
    lines = [
        f"| size | question | p50 ms | p95 ms | {revision} p50 ms | {revision} p95 ms "
        "| p50 ratio | p95 ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ours, theirs = row["ours"], row["theirs"]
        lines.append(
            f"| {row['size']} | {row['question']} | {cells(ours)} | {cells(theirs)} "
            f"| {ratio(ours['p50_ms'], theirs['p50_ms'])} "
            f"| {ratio(ours['p95_ms'], theirs['p95_ms'])} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="A git revision.")
    parser.add_argument(
        "--sizes", default="1k,10k", help="Comma-separated: 1k, 10k, 50k, 100k."
    )
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--only", default="", help="Only the questions whose name contains this."
    )
    parser.add_argument(
        "--own-schema",
        action="store_true",
        help="Run the revision on a copy of the data migrated back to its schema.",
    )
    args = parser.parse_args()
    with checkout_of(args.against) as checkout:
        rows = compare(
            args.against,
            checkout,
            args.sizes.split(","),
            args.reps,
            args.seed,
            args.only,
            args.own_schema,
        )
    output = markdown(args.against, rows)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "compare.md").write_text(output)
    print(output)


if __name__ == "__main__":
    main()
