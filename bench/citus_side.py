"""One side of bench/citus.py: the app on one database (DATABASE_URL), in-process.

Reads one JSON request a line on stdin and answers one JSON line:
`{"result": …}` or `{"error": "…"}`. Operations:

- load: generate the template households and copy them with SQL into
  `households` households (plain side only, before a dump is taken);
- households: the large households and the sizes of the data;
- questions: bench/run.py's questions for a household, and search_anything's;
- token: issue a token for the household's admin (kept here), and return it;
- call: a skill call through the API, its milliseconds;
- answer: a skill call's JSON answer, the card (a new id every call) aside;
- tasks: a skill call's time and every statement it ran, with its time, the
  Citus task count of its EXPLAIN on this database (a coordinator's) and the
  household tables it names.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# Production settings, Django started on DATABASE_URL and migrated.
from bench.run import build_questions

# isort: split
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.generate import generate_household
from contacts.models import Contact
from household.models import Household, Lead, Membership, UserProfile
from yorik.tenancy import is_household_row
from yorik.tokens import issue_token, revoke_tokens

# Templates, (contacts, people) each: the households the others are copies
# of. One household in LARGE_EVERY is a copy of the large one.
SMALL_TEMPLATES = [(100, 10), (130, 12), (150, 15), (170, 16), (200, 20), (120, 18)]
LARGE_TEMPLATE = (2000, 200)
LARGE_EVERY = 100
LARGE_FROM_CONTACTS = 1000
# Not copied: each side issues its own tokens, and a card (keyed by a UUID)
# is written by each call.
NOT_COPIED = {"yorik_apitoken", "yorik_card", "household_household"}
# Columns that hold another row's id without a foreign key.
ID_COLUMNS = {("people_search_nameworduse", "subject_id")}
SEARCH_ANYTHING_INPUTS = 20

tokens: dict[int, str] = {}
client = Client()


def admin_username(slug: str) -> str:
    return f"{slug}-admin"  # as bench/generate.py names the caller


# Loading.


def load(households: int, seed: int) -> dict[str, Any]:
    templates = [*SMALL_TEMPLATES, LARGE_TEMPLATE]
    made = []
    for index, (contacts, people) in enumerate(templates):
        made.append(
            generate_household(
                f"cbt-{index}", contacts=contacts, people=people, seed=seed + index
            ).household
        )
    small, large = made[:-1], made[-1]
    copies = []
    for number in range(households - len(made)):
        template = (
            large if (number + 1) % LARGE_EVERY == 0 else small[number % len(small)]
        )
        copies.append((number + 1, template))
    with transaction.atomic(), connection.cursor() as cursor:
        created = Household.objects.bulk_create(
            Household(
                slug=f"cb-{number:04d}",
                name=f"Citus bench {number}: a copy of {template.slug}",
                default_region=template.default_region,
                language=template.language,
            )
            for number, template in copies
        )
        cursor.execute(
            "CREATE TEMPORARY TABLE copy_of (k bigint, template_id bigint, "
            "new_id bigint, template_slug text, new_slug text) ON COMMIT DROP"
        )
        cursor.executemany(
            "INSERT INTO copy_of VALUES (%s, %s, %s, %s, %s)",
            [
                (number, template.pk, household.pk, template.slug, household.slug)
                for (number, template), household in zip(copies, created, strict=True)
            ],
        )
        copy_rows(cursor)
    return {"households": Household.objects.count()}


def copy_rows(cursor) -> None:
    """Copy every template's rows into its copies, ids shifted by k * span.

    Foreign keys are composite (household_id, x_id) or point at a shared
    table copied alike, so shifting every id by the copy's offset keeps
    them pointing at the copy's own rows. Secondary indexes are dropped
    and built once after; foreign keys are not checked (replica role): the
    rows are copies of checked ones.
    """
    tables = [
        model._meta.db_table
        for model in _models()
        if model._meta.db_table not in NOT_COPIED
    ]
    largest = 0
    for table in tables:
        cursor.execute(f'SELECT max(id) FROM "{table}"')  # noqa: S608
        largest = max(largest, cursor.fetchone()[0] or 0)
    span = 10 ** len(str(largest))
    cursor.execute(
        "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
        "WHERE indrelid::regclass::text = ANY(%s) AND NOT EXISTS "
        "(SELECT 1 FROM pg_constraint WHERE conindid = indexrelid)",
        [tables],
    )
    indexes = cursor.fetchall()
    for name, _ in indexes:
        cursor.execute(f"DROP INDEX {name}")
    cursor.execute("SET LOCAL session_replication_role = replica")
    for table in tables:
        cursor.execute(_copy_statement(cursor, table, tables, span))
    cursor.execute("SET LOCAL session_replication_role = origin")
    cursor.execute("SET LOCAL maintenance_work_mem = '1GB'")
    for _, definition in indexes:
        cursor.execute(definition)
    for table in tables:
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "  # noqa: S608
            f'(SELECT max(id) FROM "{table}"))'
        )


def _models():
    from django.apps import apps

    return [
        model
        for model in apps.get_models(include_auto_created=True)
        if any(field.column == "household_id" for field in model._meta.concrete_fields)
    ]


def _copy_statement(cursor, table: str, copied: list[str], span: int) -> str:
    cursor.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
        "AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum",
        [table],
    )
    columns = [name for (name,) in cursor.fetchall()]
    cursor.execute(
        "SELECT a.attname, c.confrelid::regclass::text FROM pg_constraint c "
        "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey) "
        "WHERE c.contype = 'f' AND c.conrelid = %s::regclass",
        [table],
    )
    references = dict(cursor.fetchall())
    shift = "t.{} + m.k * " + str(span)
    values = []
    for column in columns:
        if column == "household_id":
            values.append("m.new_id")
        elif column == "id" or (table, column) in ID_COLUMNS:
            values.append(shift.format(column))
        elif column in references:
            target = references[column].strip('"')
            values.append(shift.format(column) if target in copied else "NULL")
        elif (table, column) == ("user_profiles", "username"):
            values.append(
                "CASE WHEN t.username = m.template_slug || '-admin' "
                "THEN m.new_slug || '-admin' ELSE t.username END"
            )
        else:
            values.append(f't."{column}"')
    names = ", ".join(f'"{column}"' for column in columns)
    return (
        f'INSERT INTO "{table}" ({names}) OVERRIDING SYSTEM VALUE '  # noqa: S608
        f'SELECT {", ".join(values)} FROM "{table}" t '
        "JOIN copy_of m ON t.household_id = m.template_id"
    )


# Asking.


def households() -> dict[str, Any]:
    from django.db.models import Count

    large = (
        Contact.objects.values("household")
        .annotate(contacts=Count("id"))
        .filter(contacts__gte=LARGE_FROM_CONTACTS)
    )
    return {
        "large": [row["household"] for row in large],
        "sizes": {
            "households": Household.objects.count(),
            "contacts": Contact.objects.count(),
            "people": Lead.objects.count() + Membership.objects.count(),
        },
    }


def questions(household: int, seed: int) -> list[list[Any]]:
    rng = random.Random(seed * 1_000_003 + household)
    household = Household.objects.get(pk=household)
    asked = [
        [question.key, question.skill, question.inputs]
        for question in build_questions(household, rng)
    ]
    names = list(
        Contact.objects.filter(household=household).values_list(
            "display_name", flat=True
        )
    ) + [
        f"{first} {last}"
        for first, last in Lead.objects.filter(household=household).values_list(
            "first_name", "last_name"
        )
    ]
    picked = rng.sample(names, min(SEARCH_ANYTHING_INPUTS, len(names)))
    asked.append(
        ["search_anything by name", "search_anything", [{"query": n} for n in picked]]
    )
    return asked


def token(household: int) -> str:
    household_id = household
    household = Household.objects.get(pk=household_id)
    profile = UserProfile.objects.get(
        household=household, username=admin_username(household.slug)
    )
    revoke_tokens(profile=profile)
    _, tokens[household_id] = issue_token(profile=profile, name="citus bench")
    return tokens[household_id]


def post(household: int, skill: str, inputs: dict[str, Any]):
    response = client.post(
        f"/api/skills/{skill}/call/",
        inputs,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {tokens[household]}",
    )
    if response.status_code != 200:
        raise RuntimeError(f"{response.status_code} {response.content[:500]!r}")
    return response


def call(household: int, skill: str, inputs: dict[str, Any]) -> float:
    started = time.perf_counter()
    post(household, skill, inputs)
    return (time.perf_counter() - started) * 1000


def answer(household: int, skill: str, inputs: dict[str, Any]) -> Any:
    data = post(household, skill, inputs).json()
    data.pop("card", None)
    return data


STATEMENT = re.compile(r"^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b", re.IGNORECASE)
WRITES = re.compile(r"\b(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


def tasks(household: int, skill: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Return the call's time and its statements, each with its time and plan's
    task count (None where no Citus node plans it)."""
    household_tables = {
        model._meta.db_table for model in _models() if is_household_row(model)
    }
    # Django keeps a statement's time in whole milliseconds; this keeps it to
    # the microsecond, in the order the statements ran.
    timed: list[float] = []

    def timing(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            timed.append((time.perf_counter() - started) * 1000)

    with (
        CaptureQueriesContext(connection) as captured,
        connection.execute_wrapper(timing),
    ):
        started = time.perf_counter()
        post(household, skill, inputs)
        elapsed = (time.perf_counter() - started) * 1000
    found = []
    for query, ms in zip(captured.captured_queries, timed, strict=True):
        sql = query["sql"]
        if not STATEMENT.match(sql):
            continue
        # A statement that writes is planned, not run again.
        reads = WRITES.search(sql) is None
        with connection.cursor() as cursor:
            cursor.execute(
                f"EXPLAIN ({'ANALYZE, SUMMARY, ' if reads else ''}FORMAT JSON) {sql}"
            )
            (plan,) = cursor.fetchone()[0]
        counts = list(_values(plan, "Task Count"))
        found.append(
            {
                "sql": sql,
                "tasks": max(counts) if counts else None,
                "ms": ms,
                "token_check": names("yorik_apitoken", sql)
                or names("yorik_ratecounter", sql),
                # Planned with its values: here, or on the coordinator and
                # again on the worker that runs it (Citus's remote plans).
                "planning_ms": plan.get("Planning Time"),
                "remote_planning_ms": sum(_values(plan["Plan"], "Planning Time")),
                "household_tables": sorted(
                    table for table in household_tables if names(table, sql)
                ),
            }
        )
    return {"ms": elapsed, "statements": found}


def names(table: str, sql: str) -> bool:
    """Return whether the statement reads or writes the table (quoted or not)."""
    return re.search(rf'(?<![\w."])"?{table}"?(?![\w])', sql) is not None


def _values(node: Any, name: str):
    """Yield every value of the key `name` in a JSON plan, however deep."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == name:
                yield value
            else:
                yield from _values(value, name)
    elif isinstance(node, list):
        for item in node:
            yield from _values(item, name)


OPERATIONS = {
    "load": load,
    "households": households,
    "questions": questions,
    "token": token,
    "call": call,
    "answer": answer,
    "tasks": tasks,
}


def serve() -> None:
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        operation = OPERATIONS[request.pop("op")]
        try:
            result = operation(**request)
        except Exception:  # reported to the orchestrator, which stops
            reply = {"error": traceback.format_exc(limit=8)}
        else:
            reply = {"result": result}
        print(json.dumps(reply, default=str), flush=True)


if __name__ == "__main__":
    serve()
