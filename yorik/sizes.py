"""How many rows a household has in the tables searches read, and what that decides.

A household with a few hundred rows is always searched best through its
own rows, so there one plan fits every search of a shape, whatever its
words, and PostgreSQL can make it once per connection; a larger one is
searched through its indexes (people_search.selectors). Which side of
that line a household is on is counted here: every counted table in one
statement, each count stopping at COUNTED_UP_TO rows, kept in this
process's memory for a few minutes.
"""

from django.core.cache import caches
from django.db import connection
from django.db.models import Model

# Below this many rows of a table, one generic plan serves a household's
# searches of it (bench/README.md: planned once per connection).
ONE_PLAN_BELOW = 2_000
# Counting stops here: enough for every line drawn by a count (the similar-name
# lane's exact scan ends at 5,000 words), cheap in a household of 100,000 rows.
COUNTED_UP_TO = 5_000
_TTL = 300
_COUNTED: list[type[Model]] = []


def count_rows_of(*models: type[Model]) -> None:
    """Count these household tables too (each has a `household` foreign key).

    The app that searches them names them once, when it is ready, so that one
    statement counts all of a household's tables whichever is asked for first.
    """
    for model in models:
        if model not in _COUNTED:
            _COUNTED.append(model)


def household_rows(model: type[Model], *, household_id: int) -> int:
    """Return how many rows of `model` the household has, up to COUNTED_UP_TO.

    From this process's memory when counted in the last five minutes; else
    one statement counts `model` and every table named by `count_rows_of`.
    """
    counted = _COUNTED if model in _COUNTED else [*_COUNTED, model]
    local = caches["local"]
    keys = {table: _key(table, household_id) for table in counted}
    rows = local.get(keys[model])
    if rows is None:
        counts = _count(list(keys), household_id=household_id)
        local.set_many({keys[table]: count for table, count in counts.items()}, _TTL)
        rows = counts[model]
    return rows


def one_plan_fits(model: type[Model], *, household_id: int) -> bool:
    """Return whether one generic plan serves the household's searches of
    `model`: it has fewer than ONE_PLAN_BELOW rows of it."""
    return household_rows(model, household_id=household_id) < ONE_PLAN_BELOW


def _key(model: type[Model], household_id: int) -> str:
    return f"sizes:{model._meta.label_lower}:{household_id}"


def _count(models: list[type[Model]], *, household_id: int) -> dict[type[Model], int]:
    quote = connection.ops.quote_name
    # Table and column names are the models' own, never input.
    counts = ", ".join(
        f"(SELECT count(*) FROM (SELECT 1 FROM {quote(model._meta.db_table)} "  # noqa: S608
        f"WHERE {quote(model._meta.get_field('household').column)} = %s "
        "LIMIT %s) AS counted)"
        for model in models
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {counts}", [household_id, COUNTED_UP_TO] * len(models))
        return dict(zip(models, cursor.fetchone(), strict=True))
