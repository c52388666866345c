"""Creating many contacts at once: checked in Python, written in bulk, indexed once."""

from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils import translation

from contacts.models import Address, Contact, ContactAlias, ContactChannel
from contacts.services import (
    check_contact,
    create_checked_contacts,
    create_contact,
    create_contacts,
    refresh_search_columns,
)
from people_search.index.models import NameWordUse


def person(index, **fields):
    return {
        "display_name": f"Anna Muster{index}",
        "first_name": "Anna",
        "last_name": f"Muster{index}",
        "channels": [
            {"kind": "phone", "value": f"0151 2345{index:04d}", "label": "mobil"},
            {"kind": "email", "value": f"Anna.Muster{index}@Example.ORG"},
        ],
        "addresses": [{"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"}],
        **fields,
    }


def test_a_bad_row_is_reported_with_its_path_and_nothing_is_written(household):
    rows = [person(index) for index in range(5)]
    rows[3]["channels"][0]["value"] = "kein Anschluss"
    rows[4]["aliases"] = ["Anni", "Anni"]

    with pytest.raises(ValidationError) as error:
        create_contacts(household=household, rows=rows)

    assert error.value.message_dict == {
        "[3].channels[0].value": ["not a phone number for region DE"],
        "[4].aliases[1].name": ["is listed twice"],
    }
    for model in (Contact, ContactAlias, ContactChannel, Address):
        assert not model.objects.exists()


def test_errors_have_the_keys_create_contact_gives_them(household):
    row = person(0, kind="robot")

    with pytest.raises(ValidationError) as bulk:
        create_contacts(household=household, rows=[row])
    with pytest.raises(ValidationError) as single:
        create_contact(household=household, **person(0, kind="robot"))

    assert bulk.value.message_dict == {
        "[0].kind": ["Value 'robot' is not a valid choice."]
    }
    assert single.value.message_dict == {
        "kind": ["Value 'robot' is not a valid choice."]
    }


def test_a_contact_keeps_several_addresses_of_one_kind_in_their_order(household):
    homes = [
        {"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"},
        {"kind": "work", "line1": "Am Hafen 1", "city": "Kiel"},
        {"kind": "home", "po_box": "12 34", "city": "Sylt", "region": "SH"},
    ]

    (contact,) = create_contacts(household=household, rows=[person(0, addresses=homes)])

    assert [
        (a.kind, a.line1, a.po_box, a.city, a.region)
        for a in contact.addresses.order_by("pk")
    ] == [
        ("home", "Hauptstr. 5", "", "Berlin", ""),
        ("work", "Am Hafen 1", "", "Kiel", ""),
        ("home", "", "12 34", "Sylt", "SH"),
    ]


def test_a_ref_or_vcard_uid_given_twice_is_an_error(household):
    rows = [person(0, ref="c1", vcard_uid="u1"), person(1, ref="c1", vcard_uid="u1")]

    with pytest.raises(ValidationError) as error:
        create_contacts(household=household, rows=rows)

    assert error.value.message_dict == {
        "[1].ref": ["'c1' is also the ref of row 0"],
        "[1].vcard_uid": ["'u1' is also the vcard_uid of row 0"],
    }


def test_the_errors_are_in_the_active_language(household):
    row = person(0, ref="c1", aliases=["Anni", "Anni"])

    with translation.override("de"), pytest.raises(ValidationError) as children:
        create_contacts(household=household, rows=[row])
    with translation.override("de"), pytest.raises(ValidationError) as twice:
        create_contacts(household=household, rows=[person(0, ref="c1")] * 2)

    assert children.value.message_dict == {
        "[0].aliases[1].name": ["steht doppelt in der Liste"],
    }
    assert twice.value.message_dict == {
        "[1].ref": ["'c1' steht schon als ref in Zeile 0"]
    }


def test_a_day_that_is_none_is_refused_in_the_active_language(household):
    with translation.override("de"), pytest.raises(ValidationError) as error:
        create_contacts(household=household, rows=[person(0, birthday="1980-02-30")])

    assert error.value.message_dict == {
        "[0].birthday": ["Datum als 1980-04-15 angeben, oder ohne Jahr als --04-15."]
    }


def test_the_database_still_refuses_a_ref_the_household_has(household):
    create_contacts(household=household, rows=[person(0, ref="c1")])

    with pytest.raises(IntegrityError):
        create_contacts(household=household, rows=[person(1, ref="c1")])


def test_rows_are_stored_as_given_in_order_with_their_derived_columns(household):
    rows = [
        person(
            index,
            aliases=["Anni"],
            tags=["a,b", 'say "hi"', "back\\slash", "{x}", "NULL"],
            notes="line\nnext\ttab \\ backslash",
            last_contacted_at=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
        )
        for index in range(3)
    ]

    contacts = create_contacts(household=household, rows=rows)

    assert [c.pk for c in contacts] == sorted(c.pk for c in contacts)
    stored = Contact.objects.get(pk=contacts[1].pk)
    assert stored.ref.startswith("c-")
    assert stored.tags == ["a,b", 'say "hi"', "back\\slash", "{x}", "NULL"]
    assert stored.notes == "line\nnext\ttab \\ backslash"
    assert stored.last_contacted_at == datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    assert stored.created_at is not None
    assert list(stored.channels.values_list("value", flat=True)) == [
        "+4915123450001",
        "anna.muster1@example.org",
    ]
    assert list(stored.aliases.values_list("name", flat=True)) == ["Anni"]
    assert stored.addresses.get().city == "Berlin"
    derived = ("sort_name", "search_text", "phone_digits")
    before = list(Contact.objects.order_by("pk").values_list(*derived))
    refresh_search_columns(
        household_id=household.pk, contact_ids=[c.pk for c in contacts]
    )
    assert list(Contact.objects.order_by("pk").values_list(*derived)) == before
    assert before[1][2] == "15123450001"


def test_names_are_embedded_once_the_write_commits(
    household, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        contacts = create_contacts(
            household=household,
            rows=[
                person(index, display_name=f"Anna {last}")
                for index, last in enumerate(("Roth", "Rothe", "Roder"))
            ],
        )

        assert not NameWordUse.objects.exists()

    assert len(callbacks) == 1
    uses = NameWordUse.objects.filter(subject="contact")
    assert {
        contact.pk: set(
            uses.filter(subject_id=contact.pk).values_list("word__word", flat=True)
        )
        for contact in contacts
    } == {
        contacts[0].pk: {"anna", "roth"},
        contacts[1].pk: {"anna", "rothe"},
        contacts[2].pk: {"anna", "roder"},
    }
    assert household.nameword_set.filter(word="anna").count() == 1


def test_checked_contacts_go_only_to_their_own_household(household, other_household):
    checked = check_contact(household=other_household, display_name="Dana Levi")

    with pytest.raises(ValueError, match="this household"):
        create_checked_contacts(household=household, checked=[checked])

    assert not Contact.objects.exists()
