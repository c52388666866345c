"""Count requests per key in fixed windows, atomically, in PostgreSQL."""

import math
import time
from dataclasses import dataclass

from django.db import connection

from yorik.models import RateCounter

_TABLE = RateCounter._meta.db_table
# The key's older windows go in the same statement, through its unique index,
# so the table holds about one row per active key.
_HIT = f"""
    WITH forget AS (
        DELETE FROM {_TABLE} WHERE key = %(key)s AND "window" < %(window)s
    )
    INSERT INTO {_TABLE} (key, "window", hits) VALUES (%(key)s, %(window)s, 1)
    ON CONFLICT (key, "window") DO UPDATE SET hits = {_TABLE}.hits + 1
    RETURNING hits
"""  # noqa: S608 - the table name is the model's own, never input


@dataclass(frozen=True)
class Hit:
    """A request counted: how many the window has seen, and when it ends."""

    hits: int
    retry_after: float


def count_request(*, key: str, window_seconds: int) -> Hit:
    """Add one request to the key's current window and return the window's count.

    One statement, atomic: concurrent requests each get their own count;
    prepared once per connection.
    """
    now = time.time()
    window = math.floor(now / window_seconds)
    with connection.preparing_cursor() as cursor:
        cursor.execute(_HIT, {"key": key, "window": window})
        (hits,) = cursor.fetchone()
    return Hit(hits=hits, retry_after=(window + 1) * window_seconds - now)
