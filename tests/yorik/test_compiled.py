"""A query compiled once runs with each call's values, and refuses what it cannot.

These fail when Django's SQL compiler changes what yorik.compiled uses of it:
its SQL with parameters, its columns' count and its converters."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from household.models import Household
from yorik.compiled import CompiledQuery
from yorik.models import Card


def households_by_slug(slug):
    return Household.objects.filter(slug=slug).values_list("pk", "name", "created_at")


def test_each_call_runs_the_sql_compiled_first_with_its_own_values(
    household, other_household
):
    built = []

    def build(slug):
        built.append(slug)
        return households_by_slug(slug)

    query = CompiledQuery(build, slug=str)

    with CaptureQueriesContext(connection) as context:
        becker = query.rows(slug="becker")
        levi = query.rows(slug="levi")
        nobody = query.rows(slug="nobody")

    assert becker == list(households_by_slug("becker"))
    assert levi == list(households_by_slug("levi"))
    assert nobody == []
    assert len(built) == 1
    assert len(context.captured_queries) == 3


def test_rows_pass_through_the_fields_converters(household):
    Card.objects.create(
        household=household,
        kind="note",
        payload={"picks": [{"contact_id": 7}]},
        expires_at=timezone.now(),
    )
    query = CompiledQuery(
        lambda kind: Card.objects.filter(kind=kind).values_list("payload"), kind=str
    )

    assert query.rows(kind="note") == [({"picks": [{"contact_id": 7}]},)]


@pytest.mark.parametrize(
    ("label", "build"),
    [
        ("changed", lambda slug: Household.objects.filter(slug__icontains=slug)),
        ("dropped", lambda slug: Household.objects.all()),
    ],
)
def test_a_value_that_does_not_reach_the_sql_as_given_is_refused(db, label, build):
    with pytest.raises(ValueError, match="must appear among the query's parameters"):
        CompiledQuery(build, slug=str).rows(slug="becker")


def test_a_value_used_twice_takes_both_places(household, other_household):
    query = CompiledQuery(
        lambda slug: (
            Household.objects.filter(slug=slug) | Household.objects.filter(name=slug)
        ).values_list("pk"),
        slug=str,
    )

    assert query.rows(slug=household.slug) == [(household.pk,)]
    assert query.rows(slug=other_household.name) == [(other_household.pk,)]


def test_integer_values_take_their_places_too(household, other_household):
    query = CompiledQuery(
        lambda pk, slug: Household.objects.filter(pk=pk, slug=slug).values_list("name"),
        pk=int,
        slug=str,
    )

    assert query.rows(pk=household.pk, slug="becker") == [(household.name,)]
    assert query.rows(pk=other_household.pk, slug="levi") == [(other_household.name,)]
    assert query.rows(pk=household.pk, slug="levi") == []


def test_every_value_must_be_given_and_of_its_kind(household):
    query = CompiledQuery(households_by_slug, slug=str)

    with pytest.raises(TypeError, match="slug"):
        query.rows()
    with pytest.raises(TypeError, match="slug must be str"):
        query.rows(slug=7)


def test_prepared_statements_show_in_the_query_log_with_their_values(household):
    """psycopg keeps no text of a prepared statement; the log still has it."""
    query = CompiledQuery(households_by_slug, slug=str)

    with CaptureQueriesContext(connection) as context:
        for _ in range(8):  # Past the prepare threshold.
            query.rows(slug="becker")

    logged = [entry["sql"] for entry in context.captured_queries]
    assert len(logged) == 8
    assert all("'becker'" in sql for sql in logged), logged


def test_it_knows_how_many_columns_the_query_selects(household):
    """count_found writes SQL around the query by its columns' count."""
    query = CompiledQuery(households_by_slug, slug=str)

    (row,) = query.rows(slug="becker")

    assert query.columns == len(row) == 3
