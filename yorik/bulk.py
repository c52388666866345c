"""Writing many rows at once: COPY for new rows, the cyclic collector paused."""

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from django.db import connections, router
from django.db.models import Model


def copy_new_rows(rows: Sequence[Model]) -> None:
    """Insert new rows of one model with COPY, giving each an id from its sequence.

    The rows are stored as bulk_create stores them (defaults, auto_now,
    prepared values, ids of related rows) and come back saved, with ids
    ascending in row order. bulk_create composes its statements in Python,
    which costs several times COPY's whole insert: four times for a table
    with an array column, where it writes a placeholder per value, twice for
    one it inserts through UNNEST. COPY shows in Django's statement log but
    passes no execute wrapper.
    """
    if not rows:
        return
    meta = rows[0]._meta
    connection = connections[router.db_for_write(type(rows[0]))]
    quote = connection.ops.quote_name
    # As bulk_create: the database computes generated columns itself.
    fields = [field for field in meta.concrete_fields if not field.generated]
    columns = ", ".join(quote(field.column) for field in fields)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) "
            "FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(rows)],
        )
        # Sorted, so the order by id that reads rows back keeps theirs.
        ids = sorted(pk for (pk,) in cursor.fetchall())
        for row, pk in zip(rows, ids, strict=True):
            row.pk = pk
        with (
            connection.wrap_database_errors,
            cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy,
        ):
            for row in rows:
                # Like bulk_create: a related row saved since it was assigned
                # lends its new id.
                row._prepare_related_fields_for_save(operation_name="copy_new_rows")
                copy.write_row(
                    [
                        field.get_db_prep_save(field.pre_save(row, True), connection)
                        for field in fields
                    ]
                )
    for row in rows:
        row._state.adding = False
        row._state.db = connection.alias


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while many rows are built and written.

    A bulk write holds hundreds of thousands of objects at once, and every
    full collection walks them all again: a third of the CPU time of a
    50,000-contact import, growing faster than the import. Reference counting
    still frees what is dropped; reference cycles wait for the collector.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
