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
from django.core.management import call_command
from django.db import connection

from household.models import Membership, Role
from people_search.index.embeddings import DIMENSIONS
from people_search.index.models import NameWord
from tests.builders import committed
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


def test_household_tables_are_distributed_together_and_shared_ones_copied():
    placed = placements()
    models = apps.get_models(include_auto_created=True)
    household_tables = {m._meta.db_table for m in models if is_household_row(m)}
    shared_tables = {apps.get_model(label)._meta.db_table for label in SHARED_MODELS}

    assert {placed[table][0] for table in household_tables} == {"h"}
    assert len({placed[table][1] for table in household_tables}) == 1
    assert {placed[table][0] for table in shared_tables} == {"n"}


def test_distributing_again_places_nothing():
    output = StringIO()

    call_command("distribute_tables", stdout=output)

    assert output.getvalue().endswith("0 table(s) placed.\n")
    assert "contacts_contact: already distributed" in output.getvalue()


def test_a_local_table_citus_knows_is_given_back_to_the_coordinator_alone():
    """The request counts are read and written alone, by PostgreSQL's own
    planner, once Citus does not know their table."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT citus_add_local_table_to_metadata('yorik_ratecounter')")
    output = StringIO()

    call_command("distribute_tables", stdout=output)

    assert "yorik_ratecounter: given back to the coordinator alone" in output.getvalue()
    assert "yorik_ratecounter" not in placements()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence FROM pg_class WHERE relname = 'yorik_ratecounter'"
        )
        assert cursor.fetchone() == ("u",)


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
