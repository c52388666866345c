"""A query compiled once runs with each call's values, and refuses what it cannot."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from household.models import Household
from yorik.compiled import CompiledQuery, CompiledShapes, CompiledValues
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
        (
            "repeated",
            lambda slug: (
                Household.objects.filter(slug=slug)
                | Household.objects.filter(name=slug)
            ),
        ),
        ("dropped", lambda slug: Household.objects.all()),
    ],
)
def test_a_value_that_does_not_reach_the_sql_as_given_is_refused(db, label, build):
    with pytest.raises(ValueError, match="exactly once"):
        CompiledQuery(build, slug=str).rows(slug="becker")


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


def test_each_shape_is_built_once_and_runs_with_each_calls_values(
    household, other_household
):
    shapes = CompiledShapes(slug=str, pk=int, names=tuple)
    built = []

    def build(*, slug, pk, names):
        built.append(slug is None)
        households = Household.objects.filter(pk=pk)
        if slug is not None:
            households = households.filter(slug=slug)
        return households.extra(
            where=["name = ANY(%s::text[])"], params=[names(0)]
        ).values("slug")

    def run(shape, **values):
        return shapes.values(shape, build, **values)

    levi = [other_household.name]
    assert run("by slug", slug="becker", pk=household.pk, names=([household.name],))
    assert run("by slug", slug="levi", pk=other_household.pk, names=(levi,)) == [
        {"slug": "levi"}
    ]
    assert run("by slug", slug="becker", pk=household.pk, names=(levi,)) == []
    assert run("any slug", slug=None, pk=other_household.pk, names=(levi,)) == [
        {"slug": "levi"}
    ]
    assert built == [False, True]


def test_a_shape_whose_value_is_changed_or_dropped_is_refused(db):
    shapes = CompiledShapes(slug=str)

    with pytest.raises(ValueError, match="at least once"):
        shapes.values(
            "changed",
            lambda slug: Household.objects.filter(slug__icontains=slug).values("pk"),
            slug="becker",
        )
    with pytest.raises(ValueError, match="at least once"):
        shapes.values(
            "dropped", lambda slug: Household.objects.values("pk"), slug="becker"
        )


def test_a_shape_that_matches_nothing_runs_no_sql(household):
    shapes = CompiledShapes(pk=int)

    with CaptureQueriesContext(connection) as context:
        rows = shapes.values(
            "none",
            lambda pk: Household.objects.filter(pk=pk, slug__in=[]).values("slug"),
            pk=household.pk,
        )

    assert rows == []
    assert context.captured_queries == []


def test_a_shape_gives_its_statement_for_sql_around_it(household, other_household):
    shapes = CompiledShapes(slug=str)

    def build(*, slug):
        return Household.objects.filter(slug=slug).values("name")

    def wrapped(slug):
        sql, params = shapes.statement("by slug", build, slug=slug)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM ({sql}) AS found", params)  # noqa: S608
            return cursor.fetchone()[0]

    assert wrapped("becker") == 1
    assert wrapped("nobody") == 0
    assert (
        shapes.statement("none", lambda slug: Household.objects.none(), slug="x")
        is None
    )


def test_compiled_values_are_read_back_through_their_converters(household):
    values = CompiledValues(
        lambda: Household.objects.filter(slug="becker").values("name", "created_at")
    )

    sql, params = values.statement()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1, found.* FROM ({sql}) AS found", params)  # noqa: S608
        fetched = cursor.fetchall()

    assert values.rows([row[1:] for row in fetched]) == [
        {"name": household.name, "created_at": household.created_at}
    ]
