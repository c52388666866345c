"""Read and write a whole household as one JSON bundle (format `yorik.household/1`).

The file is composed of sections, one module per app that owns the keys:
household.bundles (household, people, leads, calendar_events), contacts.bundles
(contacts, contact_merges, dismissed_duplicates, paperless) and compose.bundles
(letter_templates), and people_search.bundles (people's own words, on their
people rows). Each offers the Section interface below; this module adds
the format, fixes the key order and runs them in layer order, so no app below
needs to know the others.
"""

import json
import re
from pathlib import Path
from typing import Any, Protocol

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework import serializers

from compose import bundles as compose_bundles
from contacts import bundles as contacts_bundles
from household import bundles as household_bundles
from household.models import Household
from people_search import bundles as people_search_bundles
from yorik.bulk import cyclic_gc_paused
from yorik.serializers import StrictSerializer, flatten_errors
from yorik.statistics import analyze_after_commit

BUNDLE_FORMAT = "yorik.household/1"

# The file's top-level keys in the order export writes them (DESIGN.md §6).
BUNDLE_KEYS = (
    "format",
    "household",
    "people",
    "contacts",
    "contact_merges",
    "dismissed_duplicates",
    "leads",
    "calendar_events",
    "paperless",
    "letter_templates",
)


class Section(Protocol):
    """What an app's `bundles` module offers for the top-level keys it owns."""

    def fields(self) -> dict[str, serializers.Field]:
        """Return new serializer fields for the section's keys.

        Phone fields read the household's region from `context["region"]`.
        """
        ...

    def problems(self, bundle: dict[str, Any], *, replace: bool) -> list[str]:
        """Return "path: message" for each problem spanning rows of the raw bundle.

        Run even when rows are malformed; `replace` says an existing household of
        the same slug may be overwritten.
        """
        ...

    def import_rows(self, *, household: Household, data: dict[str, Any]) -> None:
        """Write the section's rows from the validated bundle.

        Raise a ValidationError keyed by JSON path for a row the serializers
        let through but the models refuse.
        """
        ...

    def export_rows(self, *, household: Household) -> dict[str, Any]:
        """Return the section's keys as import_rows reads them back."""
        ...


# In layer order: a section's rows may refer to those of the sections before it.
SECTIONS: tuple[Section, ...] = (
    household_bundles,
    contacts_bundles,
    people_search_bundles,
    compose_bundles,
)


class BundleError(Exception):
    """The bundle cannot be imported; `problems` lists each one with its JSON path."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def read_bundle(path: Path) -> dict[str, Any]:
    """Return the parsed JSON of a bundle file, or raise BundleError."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise BundleError([f"$: cannot read {path}: {error}"]) from error
    except json.JSONDecodeError as error:
        raise BundleError([f"$: not valid JSON: {error}"]) from error
    if not isinstance(data, dict):
        raise BundleError(["$: a bundle is a JSON object"])
    return data


class BundleSerializer(StrictSerializer):
    """The whole bundle: the format and every section's keys, in file order."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields: dict[str, serializers.Field] = {
            "format": serializers.ChoiceField([BUNDLE_FORMAT])
        }
        for section in SECTIONS:
            fields |= section.fields()
        return {key: fields[key] for key in BUNDLE_KEYS}


def validate_bundle(bundle: dict[str, Any], *, replace: bool) -> dict[str, Any]:
    """Return the bundle's validated data, or raise BundleError with every problem."""
    serializer = BundleSerializer(
        data=bundle, context={"region": household_bundles.region_of(bundle)}
    )
    problems: list[str] = []
    if not serializer.is_valid():
        problems = [
            f"{path}: {message}" for path, message in flatten_errors(serializer.errors)
        ]
    # Cross-row checks read the raw input so they run even when a row is bad.
    cross_row = [
        problem
        for section in SECTIONS
        for problem in section.problems(bundle, replace=replace)
    ]
    # Like the serializer's errors, they follow the file's key order (stable sort).
    problems += sorted(cross_row, key=_key_position)
    if problems:
        raise BundleError(problems)
    return serializer.validated_data


def _key_position(problem: str) -> int:
    """Return the file position of the top-level key a problem's path starts with."""
    key = re.split(r"[.\[:]", problem, maxsplit=1)[0]
    return BUNDLE_KEYS.index(key) if key in BUNDLE_KEYS else len(BUNDLE_KEYS)


@transaction.atomic
def import_household(*, bundle: dict[str, Any], replace: bool = False) -> Household:
    """Create the household a bundle describes, all or nothing.

    Raise BundleError listing every problem, with its JSON path, and write nothing.
    """
    with cyclic_gc_paused():
        data = validate_bundle(bundle, replace=replace)
    try:
        household = household_bundles.create_household(data=data["household"])
        for section in SECTIONS:
            section.import_rows(household=household, data=data)
    except ValidationError as error:
        raise BundleError(
            [
                f"{path}: {message}"
                for path, messages in error.message_dict.items()
                for message in messages
            ]
        ) from error
    # A bundle may fill any table; those it barely changed are not analysed.
    analyze_after_commit(
        apps.get_models(include_auto_created=True), household_id=household.pk
    )
    return household


def export_household(*, household: Household) -> dict[str, Any]:
    """Return the household as a bundle that import_household reads back unchanged."""
    sections: dict[str, Any] = {"format": BUNDLE_FORMAT}
    for section in SECTIONS:
        sections |= section.export_rows(household=household)
    # People's words refer to contacts and to each other: written onto the
    # people rows once both are exported.
    people_search_bundles.add_personal_words(sections["people"], household=household)
    return {key: sections[key] for key in BUNDLE_KEYS}
