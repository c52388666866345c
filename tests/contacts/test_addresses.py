"""Which of a contact's postal addresses a letter goes to, and what it lacks."""

from contacts.addresses import best_postal_address, missing_fields

STREET_AND_CITY = ["line1", "city"]
WITH_POSTCODE = ["line1", "postcode", "city"]


def address(kind, **fields):
    return {
        "kind": kind,
        "line1": "",
        "line2": "",
        "postcode": "",
        "city": "",
        "country": "",
    } | fields


def test_home_wins_when_every_address_is_complete():
    addresses = [
        address("shipping", line1="Packstation 1", city="Berlin"),
        address("work", line1="Werkstr. 1", city="Potsdam"),
        address("home", line1="Hauptstr. 5", city="Berlin"),
    ]

    assert best_postal_address(addresses, STREET_AND_CITY)["kind"] == "home"


def test_a_complete_address_wins_over_a_more_preferred_partial_one():
    addresses = [
        address("home", line1="Hauptstr. 5", city="Berlin"),
        address("shipping", line1="Packstation 1", postcode="10115", city="Berlin"),
        address("billing", line1="Postfach 1", postcode="10117", city="Berlin"),
    ]

    assert best_postal_address(addresses, WITH_POSTCODE)["kind"] == "billing"


def test_without_a_complete_address_the_most_preferred_partial_one_is_chosen():
    addresses = [
        address("shipping", line1="Packstation 1"),
        address("work", city="Potsdam"),
    ]

    assert best_postal_address(addresses, STREET_AND_CITY)["kind"] == "work"


def test_no_addresses_give_no_address():
    assert best_postal_address([], STREET_AND_CITY) is None


def test_blank_and_whitespace_fields_are_missing_in_address_order():
    partial = address("home", line1="  ", postcode="10115")

    assert missing_fields(partial, ["city", "line1", "postcode"]) == ["line1", "city"]
    assert missing_fields(None, ["country", "line1"]) == ["line1", "country"]
