"""The issue's lookups on the demo household, as a new user would try them."""

import json
from pathlib import Path

import pytest

from household.models import Membership, Role
from tests.builders import build_contact, committed
from yorik.bundles import import_household

DEMO = Path(__file__).resolve().parents[2] / "household" / "demo" / "becker.json"


@pytest.fixture
def demo(db, api_as):
    household = committed(import_household)(bundle=json.loads(DEMO.read_text()))
    build_contact(household, "Josef Huber", relation="Nachbar (Erdgeschoss)")
    anna = Membership.objects.get(household=household, role=Role.ADMIN)
    return api_as(anna)


def find(api, query, **inputs):
    response = api.call("find_person", {"query": query, **inputs})
    assert response.status_code == 200, response.content
    body = response.json()
    rows = [
        (row.get("display_name") or row["name"], row["match"])
        for row in body["results"]
    ]
    return rows, body["ambiguous"]


def test_the_issues_lookups_find_whom_they_mean(demo):
    assert find(demo, "mein Steuerberater") == (
        [("Frank Neumann", "relation"), ("Steuerberatung Neumann", "name")],
        False,
    )
    assert find(demo, "der Klempner") == ([("Dirk Lehmann", "relation")], False)
    assert find(demo, "Sepp Huber") == ([("Josef Huber", "nickname")], False)
    assert find(demo, "Tomas Müller") == ([("Thomas Müller", "nickname")], False)
    assert find(demo, "Johannes Becker") == ([("Hans Becker", "nickname")], False)


def test_the_grandmothers_are_found_in_german_and_english(demo):
    grandmothers = [("Gisela Becker", "relation"), ("Ruth Adler", "alias")]

    assert find(demo, "grandma") == (grandmothers, True)
    assert find(demo, "Omi") == (grandmothers, True)


def test_oma_is_gisela_first_and_never_thomas_mueller(demo):
    rows, ambiguous = find(demo, "Oma")

    assert rows == [("Gisela Becker", "alias"), ("Ruth Adler", "alias")]
    assert ambiguous is False


def test_frau_dr_schmidt_is_the_schmidt_with_the_title(demo):
    rows, ambiguous = find(demo, "Frau Dr. Schmidt")

    assert rows == [
        ("Zahnarztpraxis Dr. Schmidt", "name"),
        ("Claudia Schmidt", "name"),
        ("Daniel Schmidt", "name"),
    ]
    assert ambiguous is False


def test_schmidt_without_a_title_asks_which_schmidt(demo):
    rows, ambiguous = find(demo, "Frau Schmidt")

    assert rows == [
        ("Claudia Schmidt", "name"),
        ("Daniel Schmidt", "name"),
        ("Zahnarztpraxis Dr. Schmidt", "name"),
    ]
    assert ambiguous is True


def test_lena_is_lena_not_every_contact_that_mentions_her(demo):
    rows, ambiguous = find(demo, "Lena", limit=50)

    assert rows[0] == ("Lena Becker", "name")
    assert len(rows) == 17
    assert {match for _, match in rows[1:]} == {"relation"}
    assert ambiguous is False
