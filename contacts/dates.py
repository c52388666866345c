"""Days address books keep: a birthday or an anniversary, with or without its year.

Stored as ISO 8601 text: `1980-04-15`, or `--04-15` when the year is not
known (the form vCard 4.0 and the household bundle write). Text keeps the
missing year explicit, sorts by month and day within each form, and is what
a person types in the admin.
"""

import re
from datetime import date

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# A stored day: the year's four digits or "-", then month and day.
STORED_DAY = r"^([0-9]{4}|-)-[0-9]{2}-[0-9]{2}$"
_STORED_DAY = re.compile(STORED_DAY)
# A leap year: a day without a year may be February 29.
_ANY_YEAR = 2000
# What vCard writes: 19800415, 1980-04-15, --0415, --04-15, each maybe
# followed by a time (Apple writes 1980-04-15T00:00:00Z).
_VCARD_DAY = re.compile(
    r"^(?:(?P<year>[0-9]{4})-?|--)(?P<month>[0-9]{2})-?(?P<day>[0-9]{2})"
    r"(?:T[0-9:.]*(?:Z|[+-][0-9:]+)?)?$"
)


def is_day(value: str) -> bool:
    """Return whether value is a stored day: a real date, or month and day."""
    if not _STORED_DAY.match(value):
        return False
    year, month, day = value.rsplit("-", 2)
    try:
        date(int(year) if year != "-" else _ANY_YEAR, int(month), int(day))
    except ValueError:
        return False
    return True


def validate_day(value: str) -> None:
    """Raise a ValidationError unless value is a stored day (blank is allowed)."""
    if value and not is_day(value):
        raise ValidationError(
            _("Enter a date as 1980-04-15, or --04-15 without the year."),
            code="invalid_day",
        )


def day_from_vcard(text: str, *, omit_year: str = "") -> str | None:
    """Return a vCard date value as a stored day, or None when it is none.

    `omit_year` is Apple's X-APPLE-OMIT-YEAR parameter: Apple Contacts writes
    a day without its year in that year (1604), which then means none.
    """
    match = _VCARD_DAY.match(text.strip())
    if match is None:
        return None
    year = match["year"]
    if year is None or year == omit_year:
        year = "-"
    value = f"{year}-{match['month']}-{match['day']}"
    return value if is_day(value) else None


def day_for_vcard(value: str) -> str:
    """Return a stored day as vCard 4.0 writes it: 19800415, or --0415.

    vCard 3.0 writes the stored form itself (1980-04-15, --04-15).
    """
    if value.startswith("--"):
        return value.replace("-", "").rjust(6, "-")
    return value.replace("-", "")
