"""Lookups the ORM lacks, used as expressions in filters."""

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Lookup
from django.db.models.sql.compiler import SQLCompiler


class ContainsAny(Lookup):
    """The text contains one of the strings: `LIKE ANY` of one array parameter.

    Means what OR-ed `__contains` lookups mean, but compiles as one
    expression however many strings there are.
    """

    lookup_name = "contains_any"
    prepare_rhs = False

    def as_sql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, list[Any]]:
        lhs, params = self.process_lhs(compiler, connection)
        patterns = [f"%{connection.ops.prep_for_like_query(s)}%" for s in self.rhs]
        return f"{lhs} LIKE ANY(%s)", [*params, patterns]
