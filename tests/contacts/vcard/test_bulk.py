"""A vCard import creates its new contacts together: statements do not grow per card."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.models import Contact
from contacts.vcard.importer import import_vcards


def cards(count: int) -> bytes:
    """Return a file of `count` people with a phone, an email and an address."""

    def word(number: int) -> str:
        return "".join(chr(ord("a") + int(digit)) for digit in str(number)).title()

    return "".join(
        "\r\n".join(
            [
                "BEGIN:VCARD",
                "VERSION:3.0",
                f"FN:Karte {word(index)}mann",
                f"N:{word(index)}mann;Karte;;;",
                f"TEL;TYPE=CELL:+49 151 2345{index:04d}",
                f"EMAIL:karte{index}@example.org",
                "ADR;TYPE=HOME:;;Hauptstr. 1;Berlin;;10115;Deutschland",
                "END:VCARD",
                "",
            ]
        )
        for index in range(count)
    ).encode()


def statements(household, count: int) -> int:
    with CaptureQueriesContext(connection) as queries:
        summary = import_vcards(household=household, data=cards(count))
    assert str(summary) == (
        f"found {count}: created {count}, updated 0, unchanged 0, skipped 0"
    )
    return len(queries.captured_queries)


def test_a_first_import_takes_as_many_statements_for_40_cards_as_for_10(
    household, other_household
):
    assert statements(household, 40) == statements(other_household, 10)
    assert Contact.objects.filter(household=household).count() == 40


def test_new_contacts_keep_the_order_of_their_cards(household):
    import_vcards(household=household, data=cards(12))

    names = Contact.objects.filter(household=household).order_by("pk")
    assert [c.first_name for c in names] == ["Karte"] * 12
    assert [c.channels.get(kind="phone").value for c in names] == [
        f"+4915123450{index:03d}" for index in range(12)
    ]
