"""refresh_search_columns derives the contacts' columns again, e.g. after the
vocabulary grew."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from contacts.models import Contact
from tests.builders import build_contact


def test_stale_concepts_are_derived_again(household, other_household):
    gisela = build_contact(household, "Gisela Becker", relation="Großmutter")
    rivka = build_contact(other_household, "Rivka Cohen", aliases=["Savta"])
    Contact.objects.update(concepts=[], match_text="")
    out = StringIO()

    call_command("refresh_search_columns", "--household", "becker", stdout=out)

    gisela.refresh_from_db()
    rivka.refresh_from_db()
    assert gisela.concepts == ["relation:grandmother"]
    assert gisela.match_text == "| gisela becker |=grossmutter=|"
    assert rivka.concepts == []
    assert "Refreshed the search columns of 1 contacts." in out.getvalue()


def test_provider_categories_are_derived_again(household):
    """find_known_provider finds businesses and tagged contacts by these."""
    practice = build_contact(household, "Zahnklinik Nord", kind="business")
    salon = build_contact(household, "Haarmonie", tags=["Friseur"])
    Contact.objects.update(concepts=[])

    call_command("refresh_search_columns", stdout=StringIO())

    practice.refresh_from_db()
    salon.refresh_from_db()
    assert practice.concepts == ["business:dentist"]
    assert salon.concepts == ["tag:hairdresser"]


def test_an_unknown_household_is_an_error(db):
    with pytest.raises(CommandError, match="No household 'nobody'"):
        call_command("refresh_search_columns", "--household", "nobody")
