"""Yorik on a Citus cluster beside plain PostgreSQL: speed, task counts, a shard move.

    .venv/bin/python bench/citus.py [--households 1000] [--reps 5] [--sample 24]

Loads the same households into the bench's own PostgreSQL (database
`yorik_citus_bench` of .yorik-bench, kept between runs) and into a Citus
cluster started for the run (a coordinator and two workers on loopback,
tests.citus.cluster): a few households are generated (bench/generate.py),
copied with SQL under new household ids, dumped and restored into the
coordinator, which `manage.py distribute_tables` then distributes, as an
operator moves existing data (docs/operations.md, "Running on a Citus
cluster"). Then, for households spread over both workers:

- every skill question, plain and Citus in turns call by call, each side a
  process of its own pointed at its database by DATABASE_URL: p50 and p95
  and their ratios, once in-process through the API (Django's test client:
  the app's own time) and once over HTTP, each side served as production
  serves the app (granian, bench/servers.py), as the assistant calls it;
- the largest Citus task count of every statement a call runs (EXPLAIN on
  the coordinator), with the statements run by more than one task;
- a household's shards moved to the other worker
  (citus_move_shard_placement) while it is asked: its answers before and
  after, and the calls during the move.

Results: bench/results/citus.{md,json}. Without the Citus source
(tests.citus.build) it says so and stops.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# Django on one database, answering this process line by line.
SIDE = ROOT / "bench" / "citus_side.py"
PLAIN_DATA_DIR = ROOT / ".yorik-bench"
PLAIN_DATABASE = "yorik_citus_bench"
CLUSTER_DATABASE = "yorik"
SHARD_COUNT = 32
# Inputs a question takes from each household asked.
INPUTS_PER_HOUSEHOLD = 2
WARMUP_ROUNDS = 1
# Settings the app needs on a Citus coordinator (docs/operations.md).
CITUS_SETTINGS = {
    "YORIK_CITUS": "1",
}
SKILLS = (
    "find_person",
    "people_search",
    "search_anything",
    "find_known_provider",
    "list_contacts_for_picking",
    "compose_check_recipient",
)
GOAL_SKILLS = ("find_person", "people_search")
# What a call's time is taken apart into, on each side.
CALL_PARTS = (
    "call",
    "statements",
    "token check",
    "planned here",
    "planned on workers",
)
GOAL_RATIO = 1.5
SERVER_START_SECONDS = 60


# The orchestrator: no Django here; each database is asked by a side process.


def plain_url(households: int) -> str:
    """Start the bench's PostgreSQL; return the URL of the benchmark's database.

    A database that does not hold the households asked for (or holds them
    half loaded) is made afresh.
    """
    import psycopg

    from yorik.database import ensure_server

    socket_dir = ensure_server(PLAIN_DATA_DIR)
    url = f"postgres://postgres@{quote(str(socket_dir), safe='')}/{PLAIN_DATABASE}"
    with psycopg.connect(
        host=str(socket_dir), dbname="postgres", user="postgres", autocommit=True
    ) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [PLAIN_DATABASE]
        ).fetchone()
        if exists and not is_loaded(url, households):
            connection.execute(f'DROP DATABASE "{PLAIN_DATABASE}" WITH (FORCE)')
            exists = None
        if not exists:
            connection.execute(f'CREATE DATABASE "{PLAIN_DATABASE}"')
    return url


def loaded_marker(households: int) -> str:
    return f"Yorik Citus bench: {households} households"


def is_loaded(url: str, households: int) -> bool:
    import psycopg

    with psycopg.connect(url) as connection:
        comment = connection.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database "
            "WHERE datname = current_database()"
        ).fetchone()[0]
    return comment == loaded_marker(households)


def mark_loaded(url: str, households: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            f"COMMENT ON DATABASE \"{PLAIN_DATABASE}\" IS '{loaded_marker(households)}'"
        )


def side_environment(url: str, *, citus: bool) -> dict[str, str]:
    environment = {**os.environ, "DATABASE_URL": url}
    for key in CITUS_SETTINGS:
        environment.pop(key, None)
    if citus:
        environment.update(CITUS_SETTINGS)
    return environment


def run_step(title: str, command: list[str], **kwargs: Any) -> tuple[float, str]:
    """Run a command; return its seconds and output, or stop with its output."""
    print(f"{title} …", flush=True)
    started = time.perf_counter()
    result = subprocess.run(
        command, capture_output=True, text=True, check=False, cwd=ROOT, **kwargs
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{title} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    print(f"{title}: {seconds:.1f} s", flush=True)
    return seconds, result.stdout


class Side:
    """One database asked through the app in a process of its own (citus_side.py)."""

    def __init__(self, name: str, url: str, *, citus: bool) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, str(SIDE)],
            cwd=ROOT,
            env=side_environment(url, citus=citus),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lock = threading.Lock()
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the {name} side did not start")

    def ask(self, op: str, **arguments: Any) -> Any:
        with self.lock:
            self.process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} side stopped")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{self.name} {op} {arguments}: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


class Server:
    """One database served over HTTP as production serves the app: granian
    (bench/servers.py) with one worker of one thread, since the sides are
    asked in turns, and one kept-alive connection to it."""

    def __init__(self, name: str, url: str, *, citus: bool, secret: str) -> None:
        from bench.servers import LOOPBACK_PRODUCTION, free_port, start_server

        self.name = name
        port = free_port()
        RESULTS.mkdir(parents=True, exist_ok=True)
        self.log = RESULTS / f"citus-{name}-server.log"
        self.log.write_text("")
        self.process = start_server(
            port=port,
            workers=1,
            threads=1,
            log=self.log,
            environment={
                **side_environment(url, citus=citus),
                **LOOPBACK_PRODUCTION,
                "DJANGO_SECRET_KEY": secret,
                "YORIK_LOG_LEVEL": "WARNING",
            },
        )
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            try:
                self.connection.request("GET", "/api/schema/")
                self.connection.getresponse().read()
                return
            except OSError:
                self.connection.close()
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.close()
                    raise RuntimeError(
                        f"the {name} server did not start:\n{self.log.read_text()}"
                    ) from None
                time.sleep(0.2)

    def call(self, skill: str, inputs: dict[str, Any], token: str) -> float:
        """Call a skill; return its milliseconds, from request to the last byte."""
        body = json.dumps(inputs)
        started = time.perf_counter()
        self.connection.request(
            "POST",
            f"/api/skills/{skill}/call/",
            body=body,
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
            },
        )
        response = self.connection.getresponse()
        content = response.read()
        ms = (time.perf_counter() - started) * 1000
        if response.status != 200:
            raise RuntimeError(
                f"{self.name} {skill}: {response.status} {content[:500]!r}"
            )
        return ms

    def close(self) -> None:
        self.connection.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# A call of a skill on one side: (household, skill, inputs) -> milliseconds.
Caller = Callable[[int, str, dict[str, Any]], float]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, round(p / 100 * len(ordered) + 0.5) - 1)]


def timing(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(samples, 50), 2),
        "p95_ms": round(percentile(samples, 95), 2),
        "calls": len(samples),
    }


def household_nodes(url: str) -> dict[int, str]:
    """Return the worker ("host:port") that holds each household's shards."""
    import psycopg

    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT h.id, n.nodename || ':' || n.nodeport "
            "FROM household_household h "
            "JOIN pg_dist_placement p ON p.shardid = "
            "get_shard_id_for_distribution_column('contacts_contact', h.id) "
            "JOIN pg_dist_node n ON n.groupid = p.groupid"
        ).fetchall()
    return dict(rows)


def pick_households(
    nodes: dict[int, str], large: set[int], sample: int, rng: random.Random
) -> list[int]:
    """Return `sample` households, half on each worker, one large one on each."""
    picked = []
    workers = sorted(set(nodes.values()))
    for worker in workers:
        on_worker = sorted(h for h, node in nodes.items() if node == worker)
        big = [h for h in on_worker if h in large]
        small = [h for h in on_worker if h not in large]
        share = sample // len(workers)
        picked += rng.sample(big, min(1, len(big)))
        picked += rng.sample(small, min(share - min(1, len(big)), len(small)))
    return sorted(picked)


def compare_speed(
    plain: Caller, cluster: Caller, questions: dict[str, list[list[Any]]], reps: int
) -> list[dict[str, Any]]:
    """Ask every question of both sides in turns; return timings per question."""
    rows = []
    for key, calls in questions.items():
        samples: dict[str, list[float]] = {"plain": [], "citus": []}
        for round_number in range(WARMUP_ROUNDS + reps):
            pair = [("plain", plain), ("citus", cluster)]
            for household, skill, inputs in calls:
                for name, call in pair if round_number % 2 else pair[::-1]:
                    ms = call(household, skill, inputs)
                    if round_number >= WARMUP_ROUNDS:
                        samples[name].append(ms)
        row = {
            "question": key,
            "skill": calls[0][1],
            "plain": timing(samples["plain"]),
            "citus": timing(samples["citus"]),
            "samples": samples,
        }
        rows.append(row)
        print(
            f"{key}: p50 {row['plain']['p50_ms']} ms plain, "
            f"{row['citus']['p50_ms']} ms Citus",
            flush=True,
        )
    return rows


def by_skill(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pool every question's samples by skill."""
    pooled = []
    for skill in SKILLS:
        mine = [row for row in rows if row["skill"] == skill]
        if not mine:
            continue
        pooled.append(
            {
                "skill": skill,
                **{
                    side: timing([ms for row in mine for ms in row["samples"][side]])
                    for side in ("plain", "citus")
                },
            }
        )
    return pooled


def shape(sql: str) -> str:
    """Return a statement with its values left out."""
    return re.sub(r"\b\d+\b|'[^']*'", "?", sql)


def task_counts(
    plain: Side, cluster: Side, questions: dict[str, list[list[Any]]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return per question the largest task count, the statements above 1 and
    where a call's time goes on each side; and the statements by what Citus
    adds to their time."""
    rows = []
    by_shape: dict[str, dict[str, list[float]]] = {}
    for key, calls in questions.items():
        statements = []
        spent: dict[str, dict[str, list[float]]] = {
            side: {part: [] for part in CALL_PARTS} for side in ("plain", "citus")
        }
        for household, skill, inputs in calls:
            for name, side in (("plain", plain), ("citus", cluster)):
                ran = side.ask("tasks", household=household, skill=skill, inputs=inputs)
                ran_statements = ran["statements"]
                for part, value in (
                    ("call", ran["ms"]),
                    ("statements", sum(s["ms"] for s in ran_statements)),
                    (
                        "token check",
                        sum(s["ms"] for s in ran_statements if s["token_check"]),
                    ),
                    (
                        "planned here",
                        sum(s["planning_ms"] or 0 for s in ran_statements),
                    ),
                    (
                        "planned on workers",
                        sum(s["remote_planning_ms"] for s in ran_statements),
                    ),
                ):
                    spent[name][part].append(value)
                for statement in ran["statements"]:
                    by_shape.setdefault(
                        shape(statement["sql"]), {"plain": [], "citus": []}
                    )[name].append(statement["ms"])
            statements += ran["statements"]
        named = [s for s in statements if s["household_tables"]]
        rows.append(
            {
                "question": key,
                "skill": calls[0][1],
                "statements": len(statements),
                "calls": len(calls),
                "max_tasks": max((s["tasks"] or 0 for s in named), default=0),
                "fanning_out": [s for s in named if (s["tasks"] or 0) > 1],
                "unrouted": [s for s in named if s["tasks"] is None],
                "time": {
                    name: {
                        part: round(percentile(values, 50), 2)
                        for part, values in parts.items()
                    }
                    for name, parts in spent.items()
                },
            }
        )
    costs = sorted(
        (
            {
                "sql": sql,
                "runs": len(times["citus"]),
                "plain_ms": round(percentile(times["plain"], 50), 2),
                "citus_ms": round(percentile(times["citus"], 50), 2),
            }
            for sql, times in by_shape.items()
            if times["plain"] and times["citus"]
        ),
        key=lambda row: (row["citus_ms"] - row["plain_ms"]) * row["runs"],
        reverse=True,
    )
    return rows, costs


def move_household(
    url: str,
    cluster: Side,
    household: int,
    questions: dict[str, list[list[Any]]],
    transfer_mode: str,
) -> dict[str, Any]:
    """Move the household's shards to the other worker while asking it."""
    import psycopg

    calls = [
        [key, skill, inputs]
        for key, entries in questions.items()
        for h, skill, inputs in entries
        if h == household
    ]

    def answers() -> list[Any]:
        return [
            cluster.ask("answer", household=household, skill=skill, inputs=inputs)
            for _, skill, inputs in calls
        ]

    before = answers()
    with psycopg.connect(url, autocommit=True) as connection:
        shard, source = connection.execute(
            "SELECT s.shardid, s.nodename || ':' || s.nodeport FROM citus_shards s "
            "WHERE s.table_name = 'contacts_contact'::regclass AND s.shardid = "
            "get_shard_id_for_distribution_column('contacts_contact', %s)",
            [household],
        ).fetchone()
        target = connection.execute(
            "SELECT nodename || ':' || nodeport FROM pg_dist_node "
            "WHERE noderole = 'primary' AND shouldhaveshards "
            "AND nodename || ':' || nodeport <> %s ORDER BY nodeport LIMIT 1",
            [source],
        ).fetchone()[0]
        colocated = connection.execute(
            "SELECT count(*), sum(shard_size) FROM citus_shards WHERE shardid IN "
            "(SELECT unnest(array_agg(shardid)) FROM pg_dist_shard s "
            "JOIN pg_dist_partition p USING (logicalrelid) WHERE p.colocationid = "
            "(SELECT colocationid FROM pg_dist_partition "
            "WHERE logicalrelid = 'contacts_contact'::regclass) AND "
            "s.shardminvalue::int <= hashint8(%s) AND s.shardmaxvalue::int >= "
            "hashint8(%s))",
            [household, household],
        ).fetchone()
        during: list[float] = []
        errors: list[str] = []
        moving = threading.Event()
        moving.set()

        def keep_asking() -> None:
            while moving.is_set():
                for _, skill, inputs in calls[:: max(1, len(calls) // 6)]:
                    try:
                        during.append(
                            cluster.ask(
                                "call", household=household, skill=skill, inputs=inputs
                            )
                        )
                    except RuntimeError as error:
                        errors.append(str(error)[:300])

        asker = threading.Thread(target=keep_asking)
        asker.start()
        started = time.perf_counter()
        source_host, source_port = source.rsplit(":", 1)
        target_host, target_port = target.rsplit(":", 1)
        connection.execute(
            "SELECT citus_move_shard_placement(%s, %s, %s, %s, %s, "
            "shard_transfer_mode => %s)",
            [
                shard,
                source_host,
                int(source_port),
                target_host,
                int(target_port),
                transfer_mode,
            ],
        )
        seconds = time.perf_counter() - started
        moving.clear()
        asker.join()
        now = connection.execute(
            "SELECT nodename || ':' || nodeport FROM citus_shards WHERE shardid = %s",
            [shard],
        ).fetchone()[0]
    after = answers()
    return {
        "household": household,
        "shard": shard,
        "shards_moved": colocated[0],
        "bytes_moved": int(colocated[1] or 0),
        "from": source,
        "to": now,
        "transfer_mode": transfer_mode,
        "seconds": round(seconds, 2),
        "calls_during": len(during),
        "slowest_during_ms": round(max(during), 1) if during else None,
        "errors_during": errors,
        "answers": len(before),
        "same_answers": before == after,
    }


def same_as_plain(
    plain: Side, cluster: Side, questions: dict[str, list[list[Any]]]
) -> dict[str, Any]:
    """Return how many calls answer the same on both sides, with the others."""
    differing = []
    total = 0
    for key, calls in questions.items():
        for household, skill, inputs in calls:
            total += 1
            arguments = {"household": household, "skill": skill, "inputs": inputs}
            answers = [side.ask("answer", **arguments) for side in (plain, cluster)]
            if answers[0] != answers[1]:
                differing.append(
                    {
                        "call": f"{key} {json.dumps(inputs, ensure_ascii=False)}",
                        "plain": answers[0],
                        "citus": answers[1],
                    }
                )
    return {"calls": total, "differing": differing}


def ratio(row: dict[str, Any], key: str) -> str:
    return f"{row['citus'][key] / row['plain'][key]:.2f}"


def speed_rows(rows: list[dict[str, Any]], label: str) -> list[str]:
    """Return markdown rows of p50 and p95 on both sides, the first cell `label`'s."""
    return [
        f"| {row[label]} | {row['plain']['p50_ms']:.1f} | "
        f"{row['plain']['p95_ms']:.1f} | {row['citus']['p50_ms']:.1f} | "
        f"{row['citus']['p95_ms']:.1f} | {ratio(row, 'p50_ms')} | "
        f"{ratio(row, 'p95_ms')} |"
        for row in rows
    ]


SPEED_HEADER = "plain p50 | plain p95 | Citus p50 | Citus p95 | p50 ratio | p95 ratio |"


def markdown(report: dict[str, Any]) -> str:
    load = report["load"]
    lines = [
        "# Yorik on Citus beside plain PostgreSQL",
        "",
        f"{report['households']} households ({load['contacts']:,} contacts, "
        f"{load['people']:,} members and leads); a Citus {report['citus_version']} "
        f"coordinator and two workers on loopback, {report['shards']} shards, "
        f"PostgreSQL {report['postgresql']}, {report['cpu_count']} cores. "
        f"Asked: {len(report['asked'])} households "
        f"({', '.join(f'{n} on {w}' for w, n in report['asked_per_worker'].items())}), "
        f"{INPUTS_PER_HOUSEHOLD} inputs each per question, {report['reps']} rounds, "
        "plain and Citus in turns call by call: over HTTP, each side served as "
        "production serves the app (granian, one worker of one thread), as the "
        "assistant calls a skill; and in-process through the API (Django's test "
        "client), the app's own time without the server's.",
        "",
        "Load: "
        + ", ".join(
            f"{step} {seconds:.0f} s" for step, seconds in load["steps"].items()
        )
        + ".",
        "",
        "## Over HTTP",
        "",
        f"| skill | {SPEED_HEADER}",
        "|---|---:|---:|---:|---:|---:|---:|",
        *speed_rows(report["skills_over_http"], "skill"),
        "",
        f"| question | {SPEED_HEADER}",
        "|---|---:|---:|---:|---:|---:|---:|",
        *speed_rows(report["questions_over_http"], "question"),
        "",
        "## In-process",
        "",
        f"| skill | {SPEED_HEADER} max tasks |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    tasks = {}
    for row in report["tasks"]:
        tasks[row["skill"]] = max(tasks.get(row["skill"], 0), row["max_tasks"])
    lines += [
        f"{line} {tasks.get(row['skill'], '-')} |"
        for line, row in zip(
            speed_rows(report["skills"], "skill"), report["skills"], strict=True
        )
    ]
    lines += [
        "",
        f"| question | {SPEED_HEADER} statements a call | max tasks |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    counted = {row["question"]: row for row in report["tasks"]}
    for line, row in zip(
        speed_rows(report["questions"], "question"), report["questions"], strict=True
    ):
        count = counted[row["question"]]
        lines.append(
            f"{line} {count['statements'] / count['calls']:.1f} | "
            f"{count['max_tasks']} |"
        )
    lines += ["", "Times in ms. Goal: find_person and people_search p50 ratio ≤ 1.5."]
    for skill in GOAL_SKILLS:
        verdicts = []
        for key, how in (("skills_over_http", "over HTTP"), ("skills", "in-process")):
            row = next(row for row in report[key] if row["skill"] == skill)
            value = row["citus"]["p50_ms"] / row["plain"]["p50_ms"]
            verdict = "met" if value <= GOAL_RATIO else "MISSED"
            verdicts.append(f"{value:.2f} {how} ({verdict})")
        lines.append(f"- {skill}: {', '.join(verdicts)}")
    lines += [
        "",
        "## Where a call's time goes",
        "",
        "p50 ms of one call of each question (once, outside the rounds above), "
        "plain / Citus: the whole call; the sum of its statements' times "
        "(sent, run, rows fetched; the rest is Python and commits); of them, "
        "the token check's. Then how long the call's reading statements take "
        "to plan with their values, from `EXPLAIN (ANALYZE, SUMMARY)`: on "
        "the server asked (plain PostgreSQL runs the statements of the "
        "preparing cursor on plans it keeps, so not every call pays this "
        "there), and on Citus again on the worker for the shard.",
        "",
        "| question | call | statements | token check | planning | "
        "planning on the worker |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in report["tasks"]:
        plain_time, citus_time = row["time"]["plain"], row["time"]["citus"]
        cells = [
            f"{plain_time[part]:.1f} / {citus_time[part]:.1f}"
            for part in CALL_PARTS[:-1]
        ]
        lines.append(
            f"| {row['question']} | {' | '.join(cells)} | "
            f"{citus_time['planned on workers']:.2f} |"
        )
    lines += [
        "",
        "Statements by the time Citus adds in all (p50 ms a run):",
        "",
        "| runs | plain | Citus | statement |",
        "|---:|---:|---:|---|",
    ]
    for row in report["statement_costs"][:8]:
        lines.append(
            f"| {row['runs']} | {row['plain_ms']:.2f} | {row['citus_ms']:.2f} "
            f"| `{row['sql'][:160].replace('|', '/')}…` |"
        )
    fanning = [
        (row["question"], statement)
        for row in report["tasks"]
        for statement in row["fanning_out"] + row["unrouted"]
    ]
    lines += ["", "## Statements on household tables run by more than one task", ""]
    if not fanning:
        lines.append("None: every statement naming a household table ran as 1 task.")
    seen = set()
    for question, statement in fanning:
        # One entry a statement, whatever its values.
        if shape(statement["sql"]) in seen:
            continue
        seen.add(shape(statement["sql"]))
        lines += [
            f"- {question}: {statement['tasks'] or 'no Citus plan'} tasks, "
            f"tables {', '.join(statement['household_tables'])}",
            "",
            "  ```sql",
            f"  {statement['sql'][:1500]}",
            "  ```",
        ]
    same = report["same_as_plain"]
    lines += [
        "",
        "## Same answers as plain PostgreSQL",
        "",
        f"{same['calls'] - len(same['differing'])} of {same['calls']} calls "
        "answered the same (card ids aside).",
        *(f"- differs: {entry['call']}" for entry in same["differing"][:20]),
    ]
    move = report["move"]
    lines += [
        "",
        "## A household moved to the other worker",
        "",
        f"Household {move['household']}: shard {move['shard']} and its "
        f"{move['shards_moved'] - 1} co-located shards "
        f"({move['bytes_moved'] / 1e6:.1f} MB) moved from {move['from']} "
        f"to {move['to']} with "
        f"citus_move_shard_placement (shard_transfer_mode {move['transfer_mode']}) "
        f"in {move['seconds']} s. {move['calls_during']} calls during the move "
        f"(slowest {move['slowest_during_ms']} ms, {len(move['errors_during'])} "
        f"errors); {move['answers']} answers after the move "
        + (
            "the same as before." if move["same_answers"] else "NOT the same as before."
        ),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--households", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5, help="Rounds of every call.")
    parser.add_argument(
        "--sample", type=int, default=24, help="Households asked, half on each worker."
    )
    parser.add_argument("--shards", type=int, default=SHARD_COUNT)
    parser.add_argument(
        "--transfer-mode",
        choices=["block_writes", "force_logical"],
        default="block_writes",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from tests.citus.build import CitusUnavailable, ensure_citus
    from tests.citus.cluster import temporary_cluster

    try:
        ensure_citus(say=lambda message: print(message, flush=True))
    except CitusUnavailable as reason:
        print(f"Skipped: {reason}. See tests/citus/build.py.")
        return
    plain = plain_url(args.households)
    python = [sys.executable]
    steps: dict[str, float] = {}
    if not is_loaded(plain, args.households):
        print(f"Loading {args.households} households into {PLAIN_DATABASE} …")
        started = time.perf_counter()
        loader = Side("plain", plain, citus=False)
        try:
            loader.ask("load", households=args.households, seed=args.seed)
        finally:
            loader.close()
        mark_loaded(plain, args.households)
        steps["generate and copy (plain)"] = time.perf_counter() - started
    with temporary_cluster() as cluster:
        cluster.create_database(CLUSTER_DATABASE)
        coordinator = cluster.url(CLUSTER_DATABASE)
        from tests.citus.build import pginstall

        binaries = pginstall() / "bin"
        steps["pg_dump | psql into the coordinator"], _ = run_step(
            "Restoring a dump into the coordinator",
            [
                "sh",
                "-c",
                f'"{binaries}/pg_dump" --no-owner "$SOURCE" | '
                f'"{binaries}/psql" -q -v ON_ERROR_STOP=1 "$TARGET" >/dev/null',
            ],
            env={**os.environ, "SOURCE": plain, "TARGET": coordinator},
        )
        citus_env = side_environment(coordinator, citus=True)
        steps["migrate"], _ = run_step(
            "manage.py migrate",
            [*python, "manage.py", "migrate", "-v0"],
            env=citus_env,
        )
        steps["distribute_tables"], distributed = run_step(
            "manage.py distribute_tables",
            [*python, "manage.py", "distribute_tables", f"--shard-count={args.shards}"],
            env=citus_env,
        )
        print(distributed.splitlines()[-1])
        started = time.perf_counter()
        freed = truncate_local_data(coordinator)
        steps["ANALYZE, local copies dropped"] = time.perf_counter() - started
        report = bench(args, plain, coordinator, steps, distributed, freed)
    output = markdown(report)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "citus.md").write_text(output)
    (RESULTS / "citus.json").write_text(
        json.dumps(
            {
                **report,
                **{
                    key: [
                        {k: v for k, v in row.items() if k != "samples"}
                        for row in report[key]
                    ]
                    for key in ("questions", "questions_over_http")
                },
            },
            indent=2,
            ensure_ascii=False,
        )
    )
    print(output)


def in_process(side: Side) -> Caller:
    """Return a call of a skill through the API in the side's process."""

    def call(household: int, skill: str, inputs: dict[str, Any]) -> float:
        return side.ask("call", household=household, skill=skill, inputs=inputs)

    return call


def speed_over_http(
    databases: dict[str, str],
    tokens: dict[str, dict[int, str]],
    questions: dict[str, list[list[Any]]],
    reps: int,
) -> list[dict[str, Any]]:
    """Serve each database (plain, citus) and ask both in turns over HTTP."""
    secret = secrets.token_urlsafe(40)
    servers: dict[str, Server] = {}
    try:
        for name, url in databases.items():
            servers[name] = Server(name, url, citus=name == "citus", secret=secret)

        def over_http(name: str) -> Caller:
            def call(household: int, skill: str, inputs: dict[str, Any]) -> float:
                return servers[name].call(skill, inputs, tokens[name][household])

            return call

        return compare_speed(over_http("plain"), over_http("citus"), questions, reps)
    finally:
        for server in servers.values():
            server.close()


def truncate_local_data(url: str) -> list[str]:
    """Drop the coordinator's copy of the data Citus has distributed, then ANALYZE.

    create_distributed_table copies a table's rows to the shards and leaves
    them on the coordinator, unread.
    """
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        tables = [
            table
            for (table,) in connection.execute(
                "SELECT logicalrelid::regclass::text FROM pg_dist_partition "
                "WHERE partmethod = 'h'"
            )
        ]
        for table in tables:
            connection.execute(
                "SELECT truncate_local_data_after_distributing_table(%s)", [table]
            )
        connection.execute("ANALYZE")
    return tables


def bench(
    args: argparse.Namespace,
    plain_database: str,
    coordinator: str,
    steps: dict[str, float],
    distributed: str,
    freed: list[str],
) -> dict[str, Any]:
    import psycopg

    rng = random.Random(args.seed)
    plain = Side("plain", plain_database, citus=False)
    cluster = Side("citus", coordinator, citus=True)
    try:
        info = plain.ask("households")
        nodes = household_nodes(coordinator)
        asked = pick_households(nodes, set(info["large"]), args.sample, rng)
        questions: dict[str, list[list[Any]]] = {}
        for household in asked:
            for key, skill, inputs in plain.ask(
                "questions", household=household, seed=args.seed
            ):
                for one in inputs[:INPUTS_PER_HOUSEHOLD]:
                    questions.setdefault(key, []).append([household, skill, one])
        tokens = {
            side.name: {
                household: side.ask("token", household=household) for household in asked
            }
            for side in (plain, cluster)
        }
        print("Same answers on both sides …", flush=True)
        same = same_as_plain(plain, cluster, questions)
        print("Task counts …", flush=True)
        tasks, statement_costs = task_counts(plain, cluster, questions)
        print("Speed, in turns, in-process …", flush=True)
        rows = compare_speed(
            *(in_process(side) for side in (plain, cluster)), questions, args.reps
        )
        print("Speed, in turns, over HTTP …", flush=True)
        rows_over_http = speed_over_http(
            {"plain": plain_database, "citus": coordinator},
            tokens,
            questions,
            args.reps,
        )
        print("Moving a household …", flush=True)
        move = move_household(
            coordinator, cluster, asked[0], questions, args.transfer_mode
        )
        with psycopg.connect(coordinator) as connection:
            citus_version = connection.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'citus'"
            ).fetchone()[0]
            postgresql = connection.execute("SHOW server_version").fetchone()[0]
    finally:
        plain.close()
        cluster.close()
    return {
        "households": args.households,
        "shards": args.shards,
        "reps": args.reps,
        "cpu_count": os.cpu_count(),
        "citus_version": citus_version,
        "postgresql": postgresql,
        "load": {**info["sizes"], "steps": steps},
        "distribute_tables_output": distributed,
        "local_copies_truncated": freed,
        "asked": asked,
        "asked_per_worker": {
            worker: sum(1 for h in asked if nodes[h] == worker)
            for worker in sorted(set(nodes.values()))
        },
        "skills": by_skill(rows),
        "questions": rows,
        "skills_over_http": by_skill(rows_over_http),
        "questions_over_http": rows_over_http,
        "tasks": tasks,
        "statement_costs": statement_costs,
        "same_as_plain": same,
        "move": move,
    }


if __name__ == "__main__":
    main()
