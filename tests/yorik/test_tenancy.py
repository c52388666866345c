"""Every household table is keyed so that Citus can distribute it by household."""

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.models import Contact, ContactChannel
from tests.builders import build_contact
from yorik.tenancy import (
    SHARED_MODELS,
    HouseholdForeignKey,
    is_household_row,
    joins_apart,
)

HOUSEHOLD_TABLES = sorted(
    model._meta.db_table
    for model in apps.get_models(include_auto_created=True)
    if is_household_row(model)
)


@pytest.mark.parametrize(
    ("label", "path", "apart"),
    [
        ("household.lead", "owner", True),
        ("household.lead", "owner__profile", True),
        ("yorik.card", "household", True),
        ("yorik.card", "picked_contact", False),
        ("contacts.contactchannel", "contact", False),
        ("household.membership", "profile__household", False),
        ("people_search.personalword", "contact__household", True),
    ],
)
def test_a_relation_across_the_household_line_is_read_apart(label, path, apart):
    assert joins_apart(apps.get_model(label), path) is apart


def constraints(table: str) -> dict[str, dict]:
    with connection.cursor() as cursor:
        return connection.introspection.get_constraints(cursor, table)


def test_the_household_tables_are_the_ones_with_a_household_column():
    shared = {
        label
        for label in SHARED_MODELS
        if any(
            field.name == "household"
            for field in apps.get_model(label)._meta.concrete_fields
        )
        or label == "household.household"
    }

    assert shared == set(SHARED_MODELS)
    assert "contacts_contact" in HOUSEHOLD_TABLES
    assert "household_calendarevent_attendees" in HOUSEHOLD_TABLES
    assert "user_profiles" not in HOUSEHOLD_TABLES


@pytest.mark.django_db
@pytest.mark.parametrize("table", HOUSEHOLD_TABLES)
def test_a_household_table_is_keyed_by_household_and_id(table):
    keys = [c["columns"] for c in constraints(table).values() if c["primary_key"]]

    assert keys == [["household_id", "id"]]


@pytest.mark.django_db
@pytest.mark.parametrize("table", HOUSEHOLD_TABLES)
def test_every_unique_constraint_of_a_household_table_names_the_household(table):
    unique = {
        name: c["columns"]
        for name, c in constraints(table).items()
        if c["unique"] and "household_id" not in c["columns"]
    }

    assert unique == {}


@pytest.mark.django_db
@pytest.mark.parametrize("table", HOUSEHOLD_TABLES)
def test_references_between_household_tables_are_composite(table):
    references = [
        (c["columns"], c["foreign_key"])
        for c in constraints(table).values()
        if c["foreign_key"] and c["foreign_key"][0] in HOUSEHOLD_TABLES
    ]
    model = next(
        m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.db_table == table
    )
    declared = {
        field.column
        for field in model._meta.concrete_fields
        if isinstance(field, HouseholdForeignKey)
    }

    assert all(columns[0] == "household_id" for columns, _ in references)
    assert {columns[1] for columns, _ in references} == declared
    assert all(len(columns) == 2 for columns, _ in references)


def test_a_foreign_key_between_household_tables_is_a_household_foreign_key():
    plain = [
        f"{model._meta.label}.{field.name}"
        for model in apps.get_models(include_auto_created=True)
        if is_household_row(model)
        for field in model._meta.concrete_fields
        if field.is_relation
        and not isinstance(field, HouseholdForeignKey)
        and is_household_row(field.related_model)
    ]

    assert plain == []


def test_saving_a_row_never_writes_its_household(household):
    contact = build_contact(household, "Hans Becker")
    contact = Contact.objects.get(pk=contact.pk)
    contact.display_name = "Hans P. Becker"

    with CaptureQueriesContext(connection) as queries:
        contact.save()

    (update,) = [q["sql"] for q in queries if q["sql"].startswith("UPDATE")]
    assert '"household_id" =' not in update.split("WHERE")[0]
    assert Contact.objects.get(pk=contact.pk).display_name == "Hans P. Becker"


def test_a_join_between_household_tables_compares_the_households(household):
    rows = ContactChannel.objects.filter(
        household=household, contact__display_name="Hans"
    )

    sql = str(rows.query)

    assert (
        '"contacts_contact"."household_id" = ("contacts_contactchannel"."household_id")'
        in sql
    )


def test_reading_a_related_row_names_its_household(
    household, django_assert_num_queries
):
    contact = build_contact(household, "Hans Becker")
    channel = ContactChannel.objects.create(
        household=household, contact=contact, kind="email", value="h@example.org"
    )
    channel = ContactChannel.objects.get(pk=channel.pk)

    with CaptureQueriesContext(connection) as queries:
        assert channel.contact == contact

    assert '"contacts_contact"."household_id" =' in queries[0]["sql"]


@pytest.mark.django_db
def test_distributing_needs_a_citus_coordinator():
    with pytest.raises(CommandError, match="no citus extension"):
        call_command("distribute_tables")


def test_a_new_row_given_its_id_is_inserted_without_an_update(household):
    """Restoring a merged contact under its old id: one look in the household,
    then an INSERT; never an UPDATE by id alone that writes the household."""
    gone = build_contact(household, "Hans Becker")
    contact_id = gone.pk
    gone.delete()

    with CaptureQueriesContext(connection) as queries:
        Contact(id=contact_id, household=household, display_name="Hans Becker").save()

    statements = [q["sql"].split()[0] for q in queries]
    assert statements == ["SELECT", "INSERT"]
    assert Contact.objects.get(pk=contact_id).display_name == "Hans Becker"


def test_reading_a_row_again_names_its_household(household):
    contact = build_contact(household, "Hans Becker")

    with CaptureQueriesContext(connection) as queries:
        contact.refresh_from_db(fields=["display_name"])

    assert '"contacts_contact"."household_id" =' in queries[0]["sql"]
