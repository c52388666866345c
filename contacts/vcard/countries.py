"""Which country an address's country line names, as a phone region.

A vCard's ADR writes its country as text: a code (`US`, `USA`), an English
name, or a name in the language of whoever typed it (`Vereinigte Staaten`).
The ISO 3166 names and their translations come from pycountry; a few names
people use that are no ISO name are listed here.
"""

import functools
import gettext

import phonenumbers
import pycountry

from people_search.engine.text import fold_name

# Names in use that ISO 3166 does not list, by the region they name.
_COLLOQUIAL = {
    "GB": ("UK", "U.K.", "England", "Scotland", "Wales", "Great Britain"),
    "NL": ("Holland",),
    "US": ("U.S.", "United States of America", "America", "Amerika"),
    "DE": ("BRD",),
}


def region_for_country(text: str, *, language: str) -> str | None:
    """Return the phone region (ISO 3166 alpha-2) a country line names, or None.

    Codes, English names and names in `language` are understood; a line that
    names no country phonenumbers knows gives None.
    """
    key = _key(text)
    if not key:
        return None
    return _regions(language).get(key)


def _key(text: str) -> str:
    return fold_name(text.replace(".", ""))


@functools.cache
def _regions(language: str) -> dict[str, str]:
    """Return the regions by folded name: codes, English and `language` names."""
    translation = gettext.translation(
        "iso3166-1", pycountry.LOCALES_DIR, languages=[language], fallback=True
    )
    regions: dict[str, str] = {}
    for country in pycountry.countries:
        region = country.alpha_2
        if region not in phonenumbers.SUPPORTED_REGIONS:
            continue
        names = [
            getattr(country, attribute, "")
            for attribute in ("name", "official_name", "common_name")
        ]
        for name in (
            country.alpha_2,
            country.alpha_3,
            *names,
            *(translation.gettext(name) for name in names if name),
        ):
            if name:
                regions.setdefault(_key(name), region)
    for region, names in _COLLOQUIAL.items():
        for name in names:
            regions.setdefault(_key(name), region)
    return regions
