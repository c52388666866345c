"""Every GIN index keeps its pending list short (yorik.indexes)."""

from django.db import connection

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
