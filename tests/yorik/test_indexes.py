"""Every GIN index keeps its pending list short, and a household's searches
read only its rows from the household-first ones (yorik.indexes)."""

import re

from django.db import connection, transaction

from contacts.selectors import match_contacts
from household.models import Membership
from household.selectors import visible_leads
from people_search.engine.query import parse_query
from tests.builders import build_contact, build_lead, build_member
from yorik.indexes import PENDING_LIST_LIMIT


def gin_indexes() -> dict[str, list[str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT index.relname, coalesce(index.reloptions, '{}')
            FROM pg_index
            JOIN pg_class AS index ON index.oid = pg_index.indexrelid
            JOIN pg_am ON pg_am.oid = index.relam
            WHERE pg_am.amname = 'gin'
            """
        )
        return dict(cursor.fetchall())


def test_every_gin_index_keeps_a_short_pending_list(db) -> None:
    indexes = gin_indexes()

    assert "contact_search_trgm" in indexes
    assert "lead_search_trgm" in indexes
    assert {
        name: options
        for name, options in indexes.items()
        if f"gin_pending_list_limit={PENDING_LIST_LIMIT}" not in options
    } == {}


def _plan(queryset, index: str, *joined: str) -> str:
    """Return the plan of the queryset when the index is the only one of its
    table, the `joined` tables have only their primary keys, and every other
    way to read a table is off (a test's few rows would otherwise get one):
    what it reads through the index. (The table's own primary key, which
    leads with household_id, would otherwise find the household's rows.)

    The other indexes are dropped in a transaction that is rolled back.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT other.indrelid::regclass::text, index.relname, constraint_.conname
            FROM pg_index AS other
            JOIN pg_class AS index ON index.oid = other.indexrelid
            LEFT JOIN pg_constraint AS constraint_
                ON constraint_.conindid = other.indexrelid
                AND constraint_.conrelid = other.indrelid
            WHERE (
                other.indrelid = (
                    SELECT indrelid FROM pg_index WHERE indexrelid = %s::regclass
                )
                OR other.indrelid::regclass::text = ANY(%s)
            )
            AND index.relname <> %s
            AND NOT (other.indisprimary AND other.indrelid::regclass::text = ANY(%s))
            """,
            [index, list(joined), index, list(joined)],
        )
        others = cursor.fetchall()
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            # The test's rows leave deferred checks that ALTER TABLE waits on.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for table, name, constraint in others:
                if constraint:
                    cursor.execute(
                        f'ALTER TABLE {table} DROP CONSTRAINT "{constraint}" CASCADE'
                    )
                else:
                    cursor.execute(f'DROP INDEX "{name}"')
            for path in ("seqscan", "indexscan", "indexonlyscan", "nestloop"):
                cursor.execute(f"SET LOCAL enable_{path} = off")
            raise _RolledBack(queryset.explain())
    except _RolledBack as rolled_back:
        return rolled_back.plan


class _RolledBack(Exception):
    def __init__(self, plan: str) -> None:
        self.plan = plan


# The household is an index condition beside the trigrams, not a filter of
# the rows the trigrams found in every household.
_HOUSEHOLD_AND_TRIGRAMS = re.compile(
    r"Index Cond: \(\(household_id = '\d+'::bigint\) AND \(search_text ~~"
)


def test_a_contacts_search_reads_its_household_from_the_trigram_index(household):
    build_contact(household, "Jonas Müller")

    plan = _plan(
        match_contacts(household=household, query=parse_query("Müller", region="DE")),
        "contact_search_trgm",
    )

    assert _HOUSEHOLD_AND_TRIGRAMS.search(plan)


def test_a_members_search_reads_its_household_from_the_trigram_index(household):
    build_member(household, "jonas", last_name="Müller")
    members = Membership.objects.live(household=household).filter(
        profile__search_text__contains="muller"
    )

    plan = _plan(members, "profile_search_trgm", "household_membership")

    assert _HOUSEHOLD_AND_TRIGRAMS.search(plan)


def test_a_leads_search_reads_its_household_from_the_trigram_index(household):
    actor = build_member(household, "anna", role="admin", lead_access="all")
    build_lead(household, "Jonas", last_name="Müller")
    leads = visible_leads(actor=actor).filter(search_text__contains="muller")

    plan = _plan(leads, "lead_search_trgm")

    assert _HOUSEHOLD_AND_TRIGRAMS.search(plan)
