"""Each search's statement, as the engine writes it: composed plainly, and naming
the household on every table it reads (DESIGN.md §1), as PostgreSQL plans it."""

import pytest
from django.db import connection
from django.utils import timezone

from contacts.providers import search as providers
from contacts.selectors import CONTACTS, contact_details, contact_filters
from household.models import Membership
from household.selectors import LEADS, MEMBERS, leads_visible_to, live_members
from people_search.engine import similar
from people_search.engine.query import parse_query
from people_search.engine.sql import Statement, compose, sql
from people_search.engine.statements import first_matches, grouped_matches
from people_search.index.embeddings import embedding_provider
from tests.builders import build_contact, build_lead, build_member

TENANT_TABLES = {
    "contacts_contact",
    "contacts_contactchannel",
    "addresses",
    "household_membership",
    "user_profiles",
    "household_lead",
    "people_search_nameword",
    "people_search_nameworduse",
    "contacts_paperlessdocument",
    "contacts_paperlesscorrespondent",
    "household_calendarevent",
}


def test_a_hole_takes_a_statements_sql_and_its_parameters_where_it_stands():
    inner = Statement("a = %s AND b = %s", (1, 2))

    statement = compose("{x} OR c = {value} OR {x}", x=inner, value="v")

    assert statement == Statement(
        "a = %s AND b = %s OR c = %s OR a = %s AND b = %s", (1, 2, "v", 1, 2)
    )


def test_statements_of_named_parameters_do_not_compose():
    with pytest.raises(TypeError, match="positional"):
        compose("{x}", x=Statement("a = %(a)s", {"a": 1}))


def test_a_small_households_statement_reads_its_columns_past_their_indexes():
    scanning = CONTACTS.columns(scanning=True)
    indexed = MEMBERS.columns()

    assert scanning["search_text"] == "(c.search_text || '')"
    assert scanning["concepts"] == "(c.concepts || ARRAY[]::varchar[])"
    assert scanning["key"] == "c.id"
    assert indexed["concepts"] == "NULL"


def scanned_tables(statement: Statement) -> dict[str, list[str]]:
    """Return the conditions of each scan of a table in the statement's plan."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + statement.sql, statement.params)
        (plan,) = cursor.fetchone()[0]
    scans: dict[str, list[str]] = {}

    def walk(node: dict) -> None:
        if "Relation Name" in node:
            conditions = " ".join(
                node.get(key, "") for key in ("Index Cond", "Filter", "Recheck Cond")
            )
            scans.setdefault(node["Relation Name"], []).append(conditions)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan["Plan"])
    return scans


def unnamed(statement: Statement) -> dict[str, list[str]]:
    """Return the scans of tenant tables whose conditions do not name the household."""
    return {
        table: conditions
        for table, conditions in scanned_tables(statement).items()
        if table in TENANT_TABLES
        and not all("household_id" in condition for condition in conditions)
    }


@pytest.fixture
def people(household):
    anna = build_member(household, "anna", first_name="Anna", last_name="Müller")
    build_lead(household, "Dana", last_name="Müller", owner=anna)
    contact = build_contact(
        household,
        "Hans Müller",
        relation="Oma",
        channels=[{"kind": "phone", "value": "030 1234567"}],
        addresses=[{"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"}],
    )
    return household, Membership.objects.get(pk=anna.pk), contact


@pytest.mark.parametrize("scanning", [True, False])
def test_every_search_names_the_household_on_every_table(people, scanning):
    household, anna, contact = people
    query = parse_query("Müller", region="DE")
    shared = {"household_id": household.pk, "scanning": scanning, "limit": 10}
    statements = [
        first_matches(
            CONTACTS,
            query=query,
            filters=contact_filters(
                household_id=household.pk,
                statuses=["active"],
                channel=("phone", "+49301234567"),
            ),
            details=contact_details(household_id=household.pk),
            similar_ids=[contact.pk],
            **shared,
        ),
        first_matches(
            MEMBERS,
            query=None,
            filters=live_members(role="admin"),
            details=sql("m.role, p.first_name"),
            **shared,
        ),
        grouped_matches(
            MEMBERS,
            query=query,
            filters=live_members(),
            fields=sql("m.id AS pk, p.email"),
            similar_ids={anna.pk},
            similar_apart=True,
            **shared,
        ),
        grouped_matches(
            LEADS,
            query=query,
            filters=leads_visible_to(anna),
            fields=sql("l.id AS pk, l.email"),
            **shared,
        ),
    ]

    for statement in statements:
        assert unnamed(statement) == {}, statement.sql


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("words", [["mular"], ["ana", "mular"]])
def test_the_similar_name_lanes_statements_name_the_household_on_every_table(
    people, exact, words
):
    household = people[0]
    vectors = embedding_provider().embed(words)
    near = similar.near_words_statement(
        household_id=household.pk, words=words, vectors=vectors, exact=exact
    )
    with connection.cursor() as cursor:
        cursor.execute(near.sql, near.params)
        scores = similar.word_scores(words, cursor.fetchall())
    rows = similar.rows_statement(
        scores,
        household_id=household.pk,
        words=len(words),
        literal=False,
        subjects=["member", "lead", "contact"],
    )

    reached = similar.near_words_statement(
        household_id=household.pk,
        words=words,
        vectors=vectors,
        exact=exact,
        reaching=["member", "lead", "contact"],
    )

    assert scores.ids
    for statement in (near, rows, reached):
        assert unnamed(statement) == {}, statement.sql


def test_find_known_providers_statements_name_the_household_on_every_table(people):
    household = people[0]
    narrowing = {
        "household": household.pk,
        "stems": ["%zahnarzt%"],
        "time_zone": "UTC",
        "tokens": ["relation:dentist"],
        "tag_spellings": ["dentist"],
        "statuses": ["active"],
        "phone": "phone",
        "email": "email",
        "ids": [people[2].pk],
        "now": timezone.now(),
    }

    for sql_text in (
        providers._CONTACTS,
        providers._DETAILS,
        providers._DOCUMENTS,
        providers._CORRESPONDENTS,
        providers._EVENTS,
    ):
        assert unnamed(Statement(sql_text, narrowing)) == {}, sql_text
