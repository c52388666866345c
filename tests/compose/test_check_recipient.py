"""compose_check_recipient: does a contact have the postal address a letter needs?"""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from compose.models import LetterTemplate
from compose.selectors import check_recipient
from contacts.models import Contact
from household.models import Household
from tests.builders import build_contact, build_member

STREET_AND_CITY = ["line1", "city"]
WITH_POSTCODE = ["line1", "postcode", "city"]


def build_template(household, template_id, recipient_fields, title="Brief"):
    return LetterTemplate.objects.create(
        household=household,
        template_id=template_id,
        title=title,
        body="{{empfaenger_adresse}}\n\nSehr geehrte Damen und Herren,",
        recipient_fields=recipient_fields,
    )


@pytest.fixture
def letter(household):
    return build_template(household, "brief-de", STREET_AND_CITY)


@pytest.fixture
def lease_letter(household):
    return build_template(household, "kuendigung-mietvertrag-de", WITH_POSTCODE)


def check(api, contact, template):
    return api.call(
        "compose_check_recipient",
        {"contact_id": contact.pk, "template_id": template.template_id},
    )


# The skill


def test_a_full_home_address_is_complete(api, household, letter):
    # Given a contact with a complete home address
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[
            {
                "kind": "home",
                "line1": "Hauptstr. 5",
                "line2": "Hinterhaus",
                "postcode": "10115",
                "city": "Berlin",
                "country": "DE",
            }
        ],
    )

    # When the assistant checks the recipient
    response = check(api, hans, letter)

    # Then the address is complete and nothing is missing
    assert response.status_code == 200
    assert response.json() == {
        "complete": True,
        "address": {
            "line1": "Hauptstr. 5",
            "line2": "Hinterhaus",
            "postcode": "10115",
            "city": "Berlin",
            "country": "DE",
            "po_box": "",
            "extended": "",
            "region": "",
        },
        "missing": [],
        "contact_name": "Hans Becker",
    }


def test_a_complete_work_address_wins_over_an_incomplete_home(api, household, letter):
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[
            {"kind": "home", "postcode": "10115", "city": "Berlin"},
            {"kind": "work", "line1": "Werkstr. 1", "city": "Potsdam"},
        ],
    )

    response = check(api, hans, letter)

    body = response.json()
    assert body["complete"] is True
    assert body["address"] == {
        "line1": "Werkstr. 1",
        "line2": "",
        "postcode": "",
        "city": "Potsdam",
        "country": "",
        "po_box": "",
        "extended": "",
        "region": "",
    }
    assert body["missing"] == []


def test_a_letter_gets_the_po_box_extended_address_and_state(api, household, letter):
    # Given a contact whose first home address is incomplete and whose second,
    # read from a US address book, has a PO box, an extended address and a state
    ruth = build_contact(
        household,
        "Ruth Adler",
        addresses=[
            {"kind": "home", "city": "Köln"},
            {
                "kind": "home",
                "line1": "1 Main Street",
                "extended": "Apt. 4B",
                "po_box": "PO Box 17",
                "city": "Springfield",
                "region": "IL",
                "postcode": "62704",
                "country": "USA",
            },
        ],
    )

    response = check(api, ruth, letter)

    # Then the complete one of the two is chosen, with everything a letter needs
    assert response.json()["address"] == {
        "line1": "1 Main Street",
        "line2": "",
        "postcode": "62704",
        "city": "Springfield",
        "country": "USA",
        "po_box": "PO Box 17",
        "extended": "Apt. 4B",
        "region": "IL",
    }
    assert response.json()["complete"] is True


def test_with_nothing_complete_the_preferred_partial_address_is_completed(
    api, household, lease_letter
):
    # Given only partial billing and shipping addresses
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[
            {"kind": "shipping", "line1": "Packstation 187", "city": "Berlin"},
            {"kind": "billing", "line1": "Postfach 35 02 11"},
        ],
    )

    response = check(api, hans, lease_letter)

    # Then billing, the more preferred one, is offered with its gaps in German
    body = response.json()
    assert body["complete"] is False
    assert body["address"]["line1"] == "Postfach 35 02 11"
    assert body["missing"] == [
        {"key": "postcode", "label": "PLZ", "required": True},
        {"key": "city", "label": "Ort", "required": True},
    ]


def test_a_contact_without_any_address_needs_every_field(api, household, letter):
    hans = build_contact(household, "Hans Becker")

    response = check(api, hans, letter)

    assert response.status_code == 200
    assert response.json() == {
        "complete": False,
        "address": None,
        "missing": [
            {"key": "line1", "label": "Straße und Hausnummer", "required": True},
            {"key": "city", "label": "Ort", "required": True},
        ],
        "contact_name": "Hans Becker",
    }


def test_a_template_that_needs_a_postcode(api, household, letter, lease_letter):
    # Given a home address without postcode and a work address with one
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[
            {"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"},
            {
                "kind": "work",
                "line1": "Werkstr. 1",
                "postcode": "14467",
                "city": "Potsdam",
            },
        ],
    )

    # Then street and city are enough for the plain letter, from home
    plain = check(api, hans, letter).json()
    assert plain["complete"] is True
    assert plain["address"]["line1"] == "Hauptstr. 5"
    # And the lease letter takes the work address, which has a postcode
    lease = check(api, hans, lease_letter).json()
    assert lease["complete"] is True
    assert lease["address"]["postcode"] == "14467"


def test_a_missing_postcode_alone_is_listed(api, household, lease_letter):
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[{"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"}],
    )

    body = check(api, hans, lease_letter).json()

    assert body["complete"] is False
    assert body["address"]["line1"] == "Hauptstr. 5"
    assert body["missing"] == [{"key": "postcode", "label": "PLZ", "required": True}]


def test_a_template_that_needs_a_country(api, household):
    abroad = build_template(
        household, "brief-ausland-de", [*STREET_AND_CITY, "country"]
    )
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[{"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"}],
    )

    body = check(api, hans, abroad).json()

    assert body["missing"] == [{"key": "country", "label": "Land", "required": True}]


def test_a_business_contact_works_like_a_person(api, household, letter):
    landlord = build_contact(
        household,
        "Hausverwaltung Brandt GmbH",
        kind="business",
        addresses=[{"kind": "work", "line1": "Mühlenstraße 8", "city": "Berlin"}],
    )

    body = check(api, landlord, letter).json()

    assert body["complete"] is True
    assert body["contact_name"] == "Hausverwaltung Brandt GmbH"
    assert body["address"]["line1"] == "Mühlenstraße 8"


def test_labels_follow_an_english_household(api_as, other_household):
    # Given an English-speaking household with its own template and contact
    dana = build_member(other_household, "dana", role="admin")
    template = build_template(other_household, "lease-termination-en", WITH_POSTCODE)
    yossi = build_contact(other_household, "Yossi Levi")

    body = check(api_as(dana), yossi, template).json()

    assert body["missing"] == [
        {"key": "line1", "label": "Street and number", "required": True},
        {"key": "postcode", "label": "Postcode", "required": True},
        {"key": "city", "label": "City", "required": True},
    ]


def test_a_member_may_check(api_as, household, letter):
    member = build_member(household, "ben", role="member")
    hans = build_contact(household, "Hans Becker")

    assert check(api_as(member), hans, letter).status_code == 200


@pytest.mark.parametrize("role", ["child", "employee", "viewer"])
def test_restricted_callers_neither_see_nor_call_the_skill(
    api_as, household, letter, role
):
    restricted = api_as(build_member(household, "kim", role=role))
    hans = build_contact(household, "Hans Becker")

    response = check(restricted, hans, letter)
    listed = restricted.get("/api/skills/").json()["skills"]

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert "compose_check_recipient" not in {s["name"] for s in listed}


def test_unknown_contact_is_404(api, letter):
    response = api.call(
        "compose_check_recipient",
        {"contact_id": 999_999_999, "template_id": letter.template_id},
    )

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_unknown_template_is_404_naming_it(api, household):
    hans = build_contact(household, "Hans Becker")

    response = api.call(
        "compose_check_recipient",
        {"contact_id": hans.pk, "template_id": "liebesbrief-de"},
    )

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert "liebesbrief-de" in response.json()["error"]["message"]


def test_another_households_contact_is_404(api, letter, other_household):
    yossi = build_contact(
        other_household,
        "Yossi Levi",
        addresses=[{"kind": "home", "line1": "Sheinkin St 32", "city": "Tel Aviv"}],
    )

    response = check(api, yossi, letter)

    assert response.status_code == 404
    assert "Yossi" not in response.content.decode()


def test_another_households_template_is_404(api, household, other_household):
    hans = build_contact(household, "Hans Becker")
    levi_letter = build_template(other_household, "lease-termination-en", WITH_POSTCODE)

    response = check(api, hans, levi_letter)

    assert response.status_code == 404
    assert "lease-termination-en" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"template_id": "brief-de"}, "contact_id"),
        ({"contact_id": 1}, "template_id"),
        ({"contact_id": "1", "template_id": "brief-de"}, "contact_id"),
        ({"contact_id": 1, "template_id": 7}, "template_id"),
        ({"contact_id": 1, "template_id": "brief-de", "kind": "home"}, "kind"),
    ],
)
def test_bad_inputs_are_400_naming_the_field(api, inputs, field):
    response = api.call("compose_check_recipient", inputs)

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_the_manifest_states_inputs_cost_and_permissions(api):
    response = api.get("/api/skills/compose_check_recipient/")

    manifest = response.json()
    assert manifest["inputs"]["contact_id"]["type"] == "integer"
    assert manifest["inputs"]["contact_id"]["required"] is True
    assert manifest["inputs"]["template_id"]["type"] == "string"
    assert manifest["inputs"]["template_id"]["required"] is True
    assert set(manifest["outputs"]) == {
        "complete",
        "address",
        "missing",
        "contact_name",
    }
    assert manifest["permissions"] == ["admin", "member"]
    assert manifest["cost"] == "1 contact SELECT + 1 template SELECT"
    assert manifest["side_effects"] == "none — read only"
    assert manifest["tags"] == ["compose", "contacts", "address"]


# Queries


def test_the_check_reads_one_contact_and_one_template(
    django_assert_num_queries, household, lease_letter
):
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[
            {"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"},
            {"kind": "work", "line1": "Werkstr. 1", "city": "Potsdam"},
            {"kind": "billing", "line1": "Postfach 1", "city": "Berlin"},
        ],
    )

    with django_assert_num_queries(2):
        check_recipient(
            household=household,
            contact_id=hans.pk,
            template_id=lease_letter.template_id,
        )


def test_the_call_selects_the_contact_and_the_template_once_each(
    api, household, lease_letter
):
    hans = build_contact(
        household,
        "Hans Becker",
        addresses=[
            {"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"},
            {"kind": "work", "line1": "Werkstr. 1", "city": "Potsdam"},
        ],
    )

    with CaptureQueriesContext(connection) as context:
        response = check(api, hans, lease_letter)

    assert response.status_code == 200
    selects = [
        query["sql"]
        for query in context.captured_queries
        if query["sql"].startswith("SELECT")
    ]
    assert sum('FROM "contacts_contact"' in sql for sql in selects) == 1
    assert sum('FROM "compose_lettertemplate"' in sql for sql in selects) == 1
    assert not any(
        query["sql"].startswith(("INSERT", "UPDATE", "DELETE"))
        and "yorik_apitoken" not in query["sql"]
        for query in context.captured_queries
    )


# Demo data


@pytest.mark.django_db
def test_the_demo_landlord_and_gym_make_sense(api_as):
    # Given the demo households
    call_command("seed_demo")
    becker = Household.objects.get(slug="becker")
    ben = api_as(build_member(becker, "demo-caller", role="member"))
    landlord = Contact.objects.get(
        household=becker, display_name="Hausverwaltung Brandt & Söhne GmbH"
    )
    gym = Contact.objects.get(
        household=becker, display_name="Fitnessstudio Kraftwerk Friedrichshain"
    )
    templates = {t.template_id: t for t in becker.letter_templates.all()}

    # Then the landlord can be written to with the lease termination
    lease = check(ben, landlord, templates["kuendigung-mietvertrag-de"]).json()
    assert lease["complete"] is True
    assert lease["address"]["line1"] == "Mühlenstraße 8"
    # And the gym has street and city for its own letter, but lacks a postcode
    gym_letter = check(ben, gym, templates["kuendigung-fitnessstudio-de"]).json()
    assert gym_letter["complete"] is True
    gym_lease = check(ben, gym, templates["kuendigung-mietvertrag-de"]).json()
    assert gym_lease["complete"] is False
    assert gym_lease["missing"] == [
        {"key": "postcode", "label": "PLZ", "required": True}
    ]
    # And the three German letters are there
    assert {
        "kuendigung-mietvertrag-de",
        "kuendigung-fitnessstudio-de",
        "widerspruch-bescheid-de",
    } <= set(templates)
