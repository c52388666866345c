"""The app on a Citus cluster: its tables distributed by household, every
skill call routed to its household's shard.

These run in `python -m tests.citus.suite`, where the test database is on a
cluster's coordinator and tests/conftest.py has distributed it.
"""

import json
import os
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from household.icalendar_import import import_ics
from household.models import Membership, Role
from people_search.index.embeddings import DIMENSIONS
from people_search.index.models import NameWord
from tests.builders import build_household, committed
from tests.yorik.test_statistics import calendar_of
from yorik.bundles import import_household
from yorik.tenancy import SHARED_MODELS, is_household_row

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("YORIK_CITUS_SUITE") != "1",
        reason="needs the Citus cluster of `python -m tests.citus.suite`",
    ),
    pytest.mark.django_db,
]

DEMO = Path(__file__).resolve().parents[2] / "household" / "demo" / "becker.json"


def placements() -> dict[str, tuple[str, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT logicalrelid::regclass::text, partmethod, colocationid "
            "FROM pg_dist_partition"
        )
        return {table: (method, group) for table, method, group in cursor.fetchall()}


def test_household_tables_are_distributed_together_the_rest_stay_on_the_coordinator():
    placed = placements()
    models = apps.get_models(include_auto_created=True)
    household_tables = {m._meta.db_table for m in models if is_household_row(m)}
    shared_tables = {apps.get_model(label)._meta.db_table for label in SHARED_MODELS}

    assert placed.keys() == household_tables
    assert {method for method, _ in placed.values()} == {"h"}
    assert len({group for _, group in placed.values()}) == 1
    assert not shared_tables & placed.keys()


def foreign_keys_between() -> set[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text "
            "FROM pg_constraint WHERE contype = 'f' "
            "AND connamespace = 'public'::regnamespace"
        )
        return set(cursor.fetchall())


def test_only_foreign_keys_citus_can_check_are_kept():
    """Between a household's tables (co-located, checked on their node) and
    between the coordinator's; none from one to the other."""
    placed = placements()
    keys = foreign_keys_between()

    assert ("contacts_contactchannel", "contacts_contact") in keys
    assert ("household_membership", "household_household") in keys
    assert not {
        (table, parent)
        for table, parent in keys
        if (table in placed) != (parent in placed)
    }


def test_distributing_again_distributes_nothing():
    output = StringIO()

    call_command("distribute_tables", stdout=output)

    assert output.getvalue().endswith("0 table(s) distributed.\n")
    assert "contacts_contact: already distributed" in output.getvalue()
    assert "dropped" not in output.getvalue()


def test_a_table_kept_on_the_coordinator_that_citus_places_is_refused():
    with connection.cursor() as cursor:
        cursor.execute("SELECT citus_add_local_table_to_metadata('yorik_ratecounter')")

    with pytest.raises(CommandError, match="Citus places yorik_ratecounter"):
        call_command("distribute_tables", stdout=StringIO())


@pytest.mark.parametrize(
    "name", ["work_mem", "random_page_cost", "max_parallel_workers_per_gather"]
)
def test_workers_plan_a_households_statements_with_the_apps_settings(name):
    """A statement routed to a worker runs in a session Citus opened there,
    which takes its settings from its database, not from the app's session."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT result FROM run_command_on_workers(format('SHOW %%I', %s::text))",
            [name],
        )
        shown = {result for (result,) in cursor.fetchall()}

    assert shown == {settings.YORIK_PLANNER_SETTINGS[name]}


def test_a_households_shard_compares_words_as_the_similar_name_lane_does(household):
    """A statement routed to a worker runs in a session Citus opened there,
    which has the lane's settings from its database, not from the app's
    session: "wolf" and "wulf" share a quarter of their trigrams, which is
    enough for the lane (TRIGRAM_FLOOR) and not for pg_trgm's default."""
    NameWord.objects.create(
        household=household, word="wulf", embedding=[0.0] * (DIMENSIONS - 1) + [1.0]
    )

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT word %% 'wolf' FROM people_search_nameword WHERE household_id = %s",
            [household.pk],
        )
        assert cursor.fetchall() == [(True,)]


def shard_statistics(table: str, household_id: int) -> tuple[float, int]:
    """Return the rows the planner believes the household's shard of the table
    holds, and that shard's ANALYZE count, as its worker has them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT result FROM run_command_on_shards(%s, $$"
            "SELECT reltuples || ' ' || analyze_count FROM pg_class "
            "JOIN pg_stat_user_tables ON relid = pg_class.oid "
            "WHERE pg_class.oid = '%%s'::regclass$$) "
            "WHERE shardid = get_shard_id_for_distribution_column(%s, %s)",
            [table, table, household_id],
        )
        rows, analyses = cursor.fetchone()[0].split()
    return float(rows), int(analyses)


@pytest.mark.django_db(transaction=True)
def test_an_import_has_its_households_shards_analysed_as_it_commits():
    """As on one PostgreSQL (yorik.statistics), on the worker that holds the
    household's shard, that shard alone; a small import after it, nothing."""
    household = build_household("kalender")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE household_calendarevent")
    _, analyses = shard_statistics("household_calendarevent", household.pk)

    import_ics(household=household, data=calendar_of(600))
    rows, analysed = shard_statistics("household_calendarevent", household.pk)
    import_ics(household=household, data=calendar_of(3, first=600))

    assert (analysed, rows >= 600) == (analyses + 1, True)
    assert shard_statistics("household_calendarevent", household.pk) == (
        rows,
        analysed,
    )


@pytest.fixture
def demo(db, api_as):
    household = committed(import_household)(bundle=json.loads(DEMO.read_text()))
    anna = Membership.objects.get(household=household, role=Role.ADMIN)
    return api_as(anna)


CALLS = [
    ("find_person", {"query": "Oma"}),
    ("find_person", {"query": "Hanz Meyer"}),
    ("find_person", {"query": "0171 4829316"}),
    ("find_person", {"query": "Anna", "source": "household"}),
    ("people_search", {"query": "Becker"}),
    ("people_search", {"query": "Bekcer"}),
    ("search_anything", {"query": "Zahnarzt"}),
    ("find_known_provider", {"category": "dentist"}),
    ("list_contacts_for_picking", {}),
]


@pytest.mark.parametrize(("skill", "inputs"), CALLS)
def test_every_skill_call_runs_on_its_households_shard_alone(demo, skill, inputs):
    with connection.cursor() as cursor:
        # Any statement that needs more than one shard now fails the call.
        cursor.execute("SET LOCAL citus.multi_task_query_log_level = 'error'")

    response = demo.call(skill, inputs)

    assert response.status_code == 200, response.content


def test_skill_calls_stay_on_their_households_shard_once_their_plans_are_kept(demo):
    # Past psycopg's preparing (after 5 runs) and PostgreSQL's five custom
    # plans of a prepared statement, when it may keep a generic one.
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL citus.multi_task_query_log_level = 'error'")

    for _ in range(12):
        for skill, inputs in CALLS:
            response = demo.call(skill, inputs)
            assert response.status_code == 200, response.content
