"""Count requests per key in fixed windows, atomically, in PostgreSQL."""

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.db import connection

from yorik.models import RateCounter

_TABLE = RateCounter._meta.db_table
# One request counted for the key `counted` selects (at most one; none counts
# nothing). The key's older windows go in the same statement, through its
# unique index, so the table holds about one row per active key. Its
# parameters: the key's (here, or what `found` needs and the key's prefix), then
# the window, twice.
_COUNT = """
    WITH {found}counted AS MATERIALIZED ({key}),
    forget AS (
        DELETE FROM {table}
        WHERE key = (SELECT key FROM counted) AND "window" < %s
    ),
    hit AS (
        INSERT INTO {table} (key, "window", hits)
        SELECT key, %s, 1 FROM counted
        ON CONFLICT (key, "window") DO UPDATE SET hits = {table}.hits + 1
        RETURNING hits
    )
"""
# The table name is the model's own, never input.
_HIT = (
    _COUNT.format(found="", key="SELECT %s::text AS key", table=_TABLE)  # noqa: S608
    + "SELECT hits FROM hit"
)


@dataclass(frozen=True)
class Hit:
    """A request counted: how many the window has seen, and when it ends."""

    hits: int
    retry_after: float


@dataclass(frozen=True)
class Counted:
    """A request counted by the statement that found who sent it (`count_found`)."""

    key_prefix: str
    window_seconds: int
    hit: Hit


def _window(window_seconds: int) -> tuple[int, float]:
    """Return the current window's number and the seconds until it ends."""
    now = time.time()
    window = math.floor(now / window_seconds)
    return window, (window + 1) * window_seconds - now


def count_request(*, key: str, window_seconds: int) -> Hit:
    """Add one request to the key's current window and return the window's count.

    One statement, atomic: concurrent requests each get their own count;
    prepared once per connection.
    """
    window, retry_after = _window(window_seconds)
    with connection.preparing_cursor() as cursor:
        cursor.execute(_HIT, [key, window, window])
        (hits,) = cursor.fetchone()
    return Hit(hits=hits, retry_after=retry_after)


@lru_cache(maxsize=16)
def _found_sql(select: str, columns: int, key_column: int) -> str:
    # Compiled SQL, the model's table and numbers only; every value is a parameter.
    names = ", ".join(f"c{number}" for number in range(columns))
    found = f"found ({names}) AS MATERIALIZED ({select}),\n"
    key = f"SELECT %s || c{key_column} AS key FROM found"  # noqa: S608
    counting = _COUNT.format(found=found, key=key, table=_TABLE)
    return counting + "SELECT found.*, (SELECT hits FROM hit) FROM found"  # noqa: S608


def count_found(
    statement: tuple[str, Sequence[Any]],
    *,
    columns: int,
    key_column: int,
    key_prefix: str,
    window_seconds: int,
) -> tuple[list[tuple[Any, ...]], Counted | None]:
    """Run a SELECT of at most one row, counting a request for the row it finds.

    The key is `key_prefix` and the row's value at `key_column` (0-based, of
    `columns`) after it, as `count_request` counts a key; the SELECT and the count
    are one statement, prepared once per connection, which spares a request
    a round trip. Return the row without the count, and the count (None when
    the SELECT found nothing and nothing was counted).
    """
    select, params = statement
    window, retry_after = _window(window_seconds)
    with connection.preparing_cursor() as cursor:
        cursor.execute(
            _found_sql(select, columns, key_column),
            [*params, key_prefix, window, window],
        )
        fetched = cursor.fetchall()
    if not fetched:
        return [], None
    hit = Hit(hits=fetched[0][-1], retry_after=retry_after)
    return [row[:-1] for row in fetched], Counted(key_prefix, window_seconds, hit)
