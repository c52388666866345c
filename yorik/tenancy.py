"""Rows that belong to a household, keyed so that Citus can distribute them.

Every household's rows can live on one node of a Citus cluster: tables with
a `household` column are distributed by it, and their keys name it. On plain
PostgreSQL the schema is the same.

- A household's row is keyed by (household_id, id) in the database, while
  Django keeps `id` as its primary key: the admin and every ForeignKey work
  on `id`, which stays unique on its own through its identity sequence.
- A reference between two such rows is a `HouseholdForeignKey`: Django joins
  it on the household as well as the id, and the database checks it with a
  composite foreign key (added by the `HouseholdKeys` migration operation).
- A saved row never changes its household: `HouseholdRow.save` leaves
  `household_id` out of every UPDATE, since Citus cannot move a row to
  another shard by updating it.

The tables every household shares (households, logins and their profiles,
memberships, API tokens, Django's own) stay on the coordinator as plain
PostgreSQL tables, unknown to Citus: `SHARED_MODELS` names Yorik's. Every
API call reads them first (its token), and a household's members are
searched there; PostgreSQL runs those statements on the plans it keeps, as
on one server. A household table keeps its foreign keys to them on one
PostgreSQL; on Citus, which checks no key from a distributed table to a
table it does not know, `manage.py distribute_tables` drops them, and
Django's `on_delete` keeps the rows in step.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.db import models
from django.db.migrations.operations.base import Operation
from django.db.models.lookups import Exact
from django.db.models.sql.where import AND, WhereNode

HOUSEHOLD_FIELD = "household"

# Small tables read by every request before its household is known (which
# household a token or a login belongs to); on Citus they stay on the
# coordinator with every other table that has no household.
SHARED_MODELS = frozenset(
    {
        "household.household",
        "household.userprofile",
        "household.membership",
        "yorik.apitoken",
    }
)


def is_household_row(model: type[models.Model]) -> bool:
    """Return whether the model's rows are distributed by their household."""
    if model._meta.label_lower in SHARED_MODELS:
        return False
    return any(field.name == HOUSEHOLD_FIELD for field in model._meta.concrete_fields)


def model_tables() -> dict[str, bool]:
    """Return the table of every model, each with whether its rows are a
    household's."""
    return {
        model._meta.db_table: is_household_row(model)
        for model in apps.get_models(include_auto_created=True)
        if model._meta.managed
    }


def household_tables() -> frozenset[str]:
    """Return the tables of every model whose rows are a household's."""
    return frozenset(table for table, household in model_tables().items() if household)


def joins_apart(model: type[models.Model], path: str) -> bool:
    """Return whether the relation path (`owner__profile`) reaches from the
    model's table to one on the other side of the household line: a
    household table and one that stays on the coordinator. On Citus no
    statement may join the two (yorik.citus), so such a relation is read
    in a statement of its own (`prefetch_related`), not joined
    (`select_related`, a filter across it)."""
    side = is_household_row(model)
    for name in path.split("__"):
        model = model._meta.get_field(name).related_model
        if is_household_row(model) != side:
            return True
    return False


class HouseholdForeignKey(models.ForeignKey):
    """A ForeignKey between two rows of one household.

    Joins through it compare the household columns as well as the ids, so a
    statement that names one side's household names the other's too: on
    Citus the join stays on one shard. The database constraint is the
    composite (household_id, <column>) → (household_id, id) that
    `HouseholdKeys` adds; Django's own single-column constraint would need
    `id` unique on its own, which a distributed table cannot have.

    get_extra_restriction and get_extra_descriptor_filter are the hooks of
    Django's ForeignObject that its own GenericRelation uses; they are not
    documented, so tests/yorik/test_tenancy.py fails if Django stops
    calling them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("db_constraint", False)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("db_constraint", None)
        return name, path, args, kwargs

    def get_extra_restriction(self, alias: str | None, related_alias: str | None):
        """Join condition: the target's household is the source's.

        Django calls this with `alias` None when it turns a join into a
        subquery (an exclude across the relation); the subquery then filters
        on the id alone, which is still correct.
        """
        if alias is None or related_alias is None:
            return None
        target = self.remote_field.model._meta.get_field(HOUSEHOLD_FIELD)
        source = self.model._meta.get_field(HOUSEHOLD_FIELD)
        condition = Exact(target.get_col(alias), source.get_col(related_alias))
        return WhereNode([condition], connector=AND)

    def get_extra_descriptor_filter(self, instance: models.Model) -> dict[str, Any]:
        """`row.related` reads the related row in the row's household."""
        return {f"{HOUSEHOLD_FIELD}_id": getattr(instance, f"{HOUSEHOLD_FIELD}_id")}


class HouseholdRow(models.Model):
    """A row that keeps the household it was created in, and is read again
    from its household's rows."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if (
            self._state.adding
            and self.pk is not None
            and not kwargs.get("force_insert")
            and not kwargs.get("force_update")
            and kwargs.get("update_fields") is None
        ):
            # A new row given its id (a merged contact restored): Django would
            # first UPDATE the id, household and all, across every household.
            # Look in the row's household instead, and insert or update it.
            self._state.adding = not (
                type(self)
                ._base_manager.filter(
                    **{f"{HOUSEHOLD_FIELD}_id": getattr(self, f"{HOUSEHOLD_FIELD}_id")},
                    pk=self.pk,
                )
                .exists()
            )
            if self._state.adding:
                kwargs["force_insert"] = True
        if (
            not self._state.adding
            and kwargs.get("update_fields") is None
            and not kwargs.get("force_insert")
        ):
            deferred = self.get_deferred_fields()
            kwargs["update_fields"] = [
                field.name
                for field in self._meta.concrete_fields
                if not field.primary_key
                and not field.generated
                and field.name != HOUSEHOLD_FIELD
                and field.attname not in deferred
            ]
        super().save(*args, **kwargs)

    def refresh_from_db(self, using=None, fields=None, from_queryset=None) -> None:
        household_id = getattr(self, f"{HOUSEHOLD_FIELD}_id")
        if from_queryset is None and household_id is not None:
            from_queryset = type(self)._base_manager.filter(
                **{f"{HOUSEHOLD_FIELD}_id": household_id}
            )
        super().refresh_from_db(using, fields, from_queryset)


def household_keys_sql(model: type[models.Model]) -> tuple[list[str], list[str]]:
    """Return the statements that key a household's table by household, and
    the statements that undo them."""
    table = model._meta.db_table
    pk = model._meta.pk.column
    household = model._meta.get_field(HOUSEHOLD_FIELD).column
    forwards = [
        f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey", '
        f'ADD CONSTRAINT "{table}_pkey" PRIMARY KEY ("{household}", "{pk}")'
    ]
    backwards = []
    for field in model._meta.concrete_fields:
        if not isinstance(field, HouseholdForeignKey):
            continue
        target = field.remote_field.model._meta
        name = f"{table}_{field.column}_household_fk"[:63]
        forwards.append(
            f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" '
            f'FOREIGN KEY ("{household}", "{field.column}") '
            f'REFERENCES "{target.db_table}" ("{household}", "{target.pk.column}")'
            " DEFERRABLE INITIALLY DEFERRED"
        )
        backwards.append(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
    backwards.append(
        f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey", '
        f'ADD CONSTRAINT "{table}_pkey" PRIMARY KEY ("{pk}")'
    )
    return forwards, backwards


class HouseholdKeys(Operation):
    """Key a household's table by (household_id, id) and add the composite
    foreign keys of its `HouseholdForeignKey`s.

    Run it after the fields are in their final shape and after the same
    operation on every table its foreign keys point to. The primary key
    keeps Django's constraint name, `<table>_pkey`. Like Django's own
    foreign keys, the composite ones take no action on delete: Django
    cascades and sets to null itself (Citus refuses SET NULL on a key that
    includes the distribution column).
    """

    reduces_to_sql = True
    reversible = True

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return self.__class__.__qualname__, [self.model_name], {}

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass

    def _statements(self, app_label: str, state: Any, index: int) -> list[str]:
        model = state.apps.get_model(app_label, self.model_name)
        return household_keys_sql(model)[index]

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        for statement in self._statements(app_label, to_state, 0):
            schema_editor.execute(statement)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        for statement in self._statements(app_label, from_state, 1):
            schema_editor.execute(statement)

    def describe(self) -> str:
        return f"Key {self.model_name} by household"

    @property
    def migration_name_fragment(self) -> str:
        return f"{self.model_name.lower()}_household_keys"
