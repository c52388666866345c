"""Real-world vCard oddities (tests/data/vcards) through the command and admin.

Every card that has a name, an organisation or a usable channel is kept;
what cannot be used is dropped and named by card and property; nothing
ends in a traceback. The two family files are the exports of two phones of
one household, imported one after the other.
"""

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from contacts.models import Contact
from contacts.vcard.exporter import export_vcards
from contacts.vcard.importer import import_vcards
from household.models import Membership
from tests.builders import build_contact

CORPUS = Path(__file__).parents[2] / "data" / "vcards"
ICS = Path(__file__).parents[2] / "data" / "ics"
IMPORT_URL = reverse("admin:contacts_contact_import_vcard")


def run(path: Path) -> tuple[str, str]:
    """Import a file with the command; return its stdout and stderr."""
    out, err = StringIO(), StringIO()
    call_command("import_vcard", str(path), household="becker", stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue()


def book(household) -> dict[str, dict[str, Any]]:
    """Return each contact's names, aliases, notes and channels by display name."""
    return {
        contact.display_name: {
            "name": (contact.first_name, contact.last_name, contact.kind),
            "aliases": [alias.name for alias in contact.aliases.order_by("pk")],
            "notes": contact.notes,
            "channels": [
                (c.kind, c.value, c.label) for c in contact.channels.order_by("pk")
            ],
        }
        for contact in Contact.objects.filter(household=household)
    }


# One file per case, through `manage.py import_vcard`


@pytest.mark.django_db
def test_iphone_card_with_a_photo_folded_without_indent_is_kept(household):
    out, err = run(CORPUS / "iphone-photo.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.splitlines() == ["card 1 (Lena Becker): not kept: PHOTO"]
    assert book(household)["Lena Becker"]["channels"] == [
        ("email", "lena.becker@example.org", "privat"),
        ("phone", "+4917655501234", "mobil"),
    ]


@pytest.mark.django_db
def test_ios6_multi_line_values_are_read_and_an_unfolded_line_is_named(household):
    out, err = run(CORPUS / "ios6-multiline.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.splitlines() == [
        "card 1 (Erika Krause): line 9 ignored: not a vCard property: "
        "'Das gilt bis Ende Juni.'",
        "card 1 (Erika Krause): not kept: PHOTO",
    ]
    erika = Contact.objects.get(household=household)
    assert erika.notes == (
        "Schlüssel liegt beim Nachbarn.\nKlingel defekt: bitte anrufen."
    )
    address = erika.addresses.get()
    assert (address.line1, address.line2, address.city) == (
        "Lindenallee 4",
        "Hinterhaus, 2. OG",
        "Berlin",
    )


@pytest.mark.django_db
def test_outlook_placeholder_phone_is_dropped_and_the_card_kept(household):
    out, err = run(CORPUS / "outlook-2003.vcf")

    assert out == "found 3: created 3, updated 0, unchanged 0, skipped 0"
    assert err.splitlines() == [
        "card 3 (Anna Roth): TEL 'BusinessPhone' ignored: "
        "not a phone number for region DE",
        "card 3 (Anna Roth): not kept: X-MS-CARDPICTURE",
    ]
    contacts = book(household)
    assert contacts["Anna Roth"]["channels"] == [
        ("phone", "+491713344556", "mobil"),
        ("email", "anna.roth@example.com", ""),
    ]
    # Quoted-printable in Windows-1252, as Outlook writes names.
    assert contacts["Kläre Jürgens"]["name"] == ("Kläre", "Jürgens", "person")


@pytest.mark.django_db
def test_phones_are_read_every_way_address_books_write_them(household):
    out, err = run(CORPUS / "phones.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.splitlines() == [
        "card 1 (Praxis Dr. Weber): TEL '+5555555' kept as written: "
        "not a phone number for region DE",
        "card 1 (Praxis Dr. Weber): TEL '+49 151 40506070' ignored: "
        "the card has +4915140506070 already",
    ]
    assert book(household)["Praxis Dr. Weber"]["channels"] == [
        ("phone", "+49302977441", "geschäftlich, Durchwahl 12"),  # tel: URI ;ext=
        ("phone", "+49302977443", "geschäftlich, Durchwahl 15"),  # x15
        ("phone", "+49302977444", "geschäftlich, Durchwahl 16"),  # ext. 16
        ("phone", "+4930297744199", "Fax"),
        ("phone", "+49302977445", "Hauptnummer, danach p1234p5678w9 wählen"),
        ("phone", "+498003569377", ""),  # 0800 FLOWERS
        ("other", "empfang@praxis-weber.example", "SIP"),
        ("other", "4917012345@pager.example.net", "Pager"),
        ("phone", "+5555555", ""),  # kept as written
        ("phone", "+4915140506070", "mobil"),
    ]


@pytest.mark.django_db
def test_emails_with_a_name_are_read_and_a_non_address_is_named(household):
    out, err = run(CORPUS / "emails.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.strip() == (
        "card 1 (Omega Schulz): EMAIL 'omega at example dot com' ignored: "
        "not an email address"
    )
    assert book(household)["Omega Schulz"]["channels"] == [
        ("email", "omega@example.com", ""),
        ("email", "o.schulz@firma.example", "geschäftlich"),
    ]


@pytest.mark.django_db
def test_comment_lines_are_named_and_the_card_kept(household):
    out, err = run(CORPUS / "comment.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.strip() == (
        "card 1 (Paul Becker): line 6 ignored: not a vCard property: "
        "'# Gruppe: Familie'"
    )
    assert book(household)["Paul Becker"]["channels"] == [
        ("phone", "+4915733445566", "mobil")
    ]


@pytest.mark.django_db
def test_cards_without_a_name_are_named_after_their_organisation_or_channel(
    household,
):
    out, err = run(CORPUS / "no-name.vcf")

    assert out == "found 4: created 3, updated 0, unchanged 0, skipped 1"
    assert err.strip() == "card 4: has no name, organisation or channel"
    contacts = book(household)
    assert sorted(contacts) == [
        "0160 99887766",
        "Stadtwerke Musterstadt",
        "paket@nachbar.example",
    ]
    assert contacts["Stadtwerke Musterstadt"]["name"] == ("", "", "business")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "display_name", "notes"),
    [
        ("shift-jis-21.vcf", "安藤 ロイド", "東京の友人"),
        ("latin1-21.vcf", "Günther Weiß", ""),
    ],
)
def test_vcard_21_charsets_are_honoured(household, name, display_name, notes):
    out, err = run(CORPUS / name)

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err == ""
    assert list(book(household)) == [display_name]
    assert book(household)[display_name]["notes"] == notes


@pytest.mark.django_db
def test_latin1_address_lines_are_decoded(household):
    run(CORPUS / "latin1-21.vcf")

    address = Contact.objects.get(household=household).addresses.get()
    assert (address.line1, address.city) == ("Große Straße 3", "Köln")


@pytest.mark.django_db
def test_undeclared_windows_1252_is_read_and_said(household):
    out, err = run(CORPUS / "windows-1252-undeclared.vcf")

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.strip() == (
        "The file is not UTF-8 and names no charset for lines 3, 4, 5: read as "
        "Windows-1252; check their accented letters."
    )
    assert book(household)["Jürgen Weiß"]["notes"] == (
        "Schlüssel beim Nachbarn \N{EN DASH} Hinterhof"
    )


@pytest.mark.django_db
def test_one_line_in_another_code_page_garbles_nothing_else(household):
    out, err = run(CORPUS / "mixed-utf8-one-cp1252-line.vcf")

    assert out == "found 2: created 2, updated 0, unchanged 0, skipped 0"
    assert "names no charset for line 11: read as Windows-1252" in err
    contacts = book(household)
    assert sorted(contacts) == ["Günther Weiß", "Jörg Bär"]
    assert contacts["Jörg Bär"]["notes"] == "Büro: Straße 3"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "message"),
    [
        (ICS / "empty.ics", "The file is empty."),
        (ICS / "no-dtstart.ics", "The file is an iCalendar file"),
    ],
    ids=["empty", "calendar"],
)
def test_a_file_without_cards_fails_and_imports_nothing(household, path, message):
    with pytest.raises(CommandError, match=message):
        run(path)
    assert not Contact.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(path.name for path in CORPUS.glob("*.vcf")))
def test_every_corpus_file_imports_and_changes_nothing_the_second_time(household, name):
    first, err = run(CORPUS / name)
    second, _ = run(CORPUS / name)

    assert first.startswith("found "), first
    assert "Traceback" not in err
    found, counts = second.split(": ", 1)
    assert counts.startswith("created 0, updated 0, unchanged "), second
    assert found == first.split(": ", 1)[0]


# Two phones of one family


@pytest.mark.django_db
def test_second_phones_export_never_renames_or_strips_a_contact(household):
    run(CORPUS / "family-jonas-iphone.vcf")

    out, _ = run(CORPUS / "family-lena-android.vcf")

    assert out == "found 4: created 1, updated 3, unchanged 0, skipped 0"
    contacts = book(household)
    # Hans shares only the family landline with Gisela: he is a new contact,
    # and Gisela keeps her name and every number.
    assert contacts["Hans Becker"]["channels"] == [("phone", "+494067745120", "privat")]
    assert contacts["Gisela Becker"]["channels"] == [
        ("phone", "+494067745120", "Festnetz"),
        ("phone", "+491624418307", "mobil"),
        ("email", "gisela.becker@example.net", "privat"),
        ("email", "gisela@oma-becker.example", "privat"),
    ]
    # Werner is found by his own mobile and gains the landline.
    assert contacts["Werner Becker"]["channels"] == [
        ("phone", "+491725509184", "mobil"),
        ("phone", "+494067745120", "privat"),
    ]
    # "Hans" is a short form of "Johannes": the neighbour is found by his
    # mobile, keeps his name and is also known as Hans Schulz.
    assert contacts["Johannes Schulz"]["aliases"] == ["Hans Schulz"]
    assert contacts["Johannes Schulz"]["notes"] == "Nachbar von gegenüber"
    assert "Hans Schulz" not in contacts


@pytest.mark.django_db
def test_both_phones_again_change_nothing(household):
    run(CORPUS / "family-jonas-iphone.vcf")
    run(CORPUS / "family-lena-android.vcf")
    before = book(household)

    first, _ = run(CORPUS / "family-jonas-iphone.vcf")
    second, _ = run(CORPUS / "family-lena-android.vcf")

    assert first == "found 3: created 0, updated 0, unchanged 3, skipped 0"
    assert second == "found 4: created 0, updated 0, unchanged 4, skipped 0"
    assert book(household) == before


@pytest.mark.django_db
def test_a_phone_two_contacts_share_identifies_neither(household):
    for name in ("Gisela Becker", "Hans Becker"):
        build_contact(
            household,
            name,
            channels=[{"kind": "phone", "value": "040 67745120", "label": ""}],
        )
    card = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:G. Becker\r\n"
        "TEL:040 67745120\r\nEND:VCARD\r\n"
    )

    summary = import_vcards(household=household, data=card.encode())

    # "G. Becker" agrees with Gisela alone, but the landline is Hans's too.
    assert (summary.created, summary.updated) == (1, 0)
    assert sorted(book(household)) == ["G. Becker", "Gisela Becker", "Hans Becker"]


@pytest.mark.django_db
def test_a_card_without_a_name_adds_to_its_contact_but_never_names_it(household):
    paul = build_contact(
        household,
        "Paul Becker",
        channels=[{"kind": "phone", "value": "0157 33445566", "label": "mobil"}],
    )
    card = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nTEL;TYPE=CELL:0157 33445566\r\n"
        "EMAIL:paul@example.org\r\nEND:VCARD\r\n"
    )

    summary = import_vcards(household=household, data=card.encode())

    assert (summary.created, summary.updated) == (0, 1)
    assert book(household) == {
        "Paul Becker": {
            "name": ("", "", "person"),
            "aliases": [],
            "notes": "",
            "channels": [
                ("phone", "+4915733445566", "mobil"),
                ("email", "paul@example.org", ""),
            ],
        }
    }
    assert paul.channels.count() == 2


@pytest.mark.django_db
def test_a_utf16_file_is_read_by_its_byte_order_mark(household, tmp_path):
    utf16 = tmp_path / "utf16.vcf"
    utf16.write_bytes((CORPUS / "comment.vcf").read_text().encode("utf-16"))

    out, _ = run(utf16)

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert list(book(household)) == ["Paul Becker"]


@pytest.mark.django_db
def test_reimporting_the_households_own_export_changes_nothing(household):
    for name in ("Gisela Becker", "Werner Becker", "Zahnarztpraxis Dr. Schmidt"):
        build_contact(
            household,
            name,
            channels=[{"kind": "email", "value": f"{name[:4]}@example.org"}],
        )
    exported = export_vcards(household=household)

    summary = import_vcards(household=household, data=exported.encode())

    assert str(summary) == "found 3: created 0, updated 0, unchanged 3, skipped 0"
    assert set(
        Contact.objects.filter(household=household).values_list("vcard_uid", flat=True)
    ) == {""}


# Through Django admin


@pytest.fixture
def anna(client: Client, admin_membership: Membership) -> Client:
    assert client.login(username="anna", password="correct-horse-battery")
    return client


def upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes(), content_type="text/vcard")


@pytest.mark.django_db
def test_admin_upload_reports_ignored_values_in_the_households_language(
    anna, household
):
    response = anna.post(
        IMPORT_URL, {"file": upload(CORPUS / "outlook-2003.vcf")}, follow=True
    )

    assert (
        "3 gefunden: 3 neu angelegt, 0 aktualisiert, 0 unverändert, 0 übersprungen"
        in response.text
    )
    assert (
        "Karte 3 (Anna Roth): TEL &#x27;BusinessPhone&#x27; ignoriert: "
        "keine Telefonnummer für die Region DE" in response.text
    )
    assert Contact.objects.filter(household=household).count() == 3


@pytest.mark.django_db
def test_admin_upload_of_a_photo_card_and_a_code_page_file(anna, household):
    anna.post(IMPORT_URL, {"file": upload(CORPUS / "iphone-photo.vcf")})
    response = anna.post(
        IMPORT_URL,
        {"file": upload(CORPUS / "windows-1252-undeclared.vcf")},
        follow=True,
    )

    assert (
        "nennt für die Zeilen 3, 4, 5 keinen Zeichensatz: als Windows-1252 gelesen"
        in response.text
    )
    assert sorted(book(household)) == ["Jürgen Weiß", "Lena Becker"]


@pytest.mark.django_db
def test_admin_upload_of_a_calendar_is_an_error(anna, household):
    response = anna.post(
        IMPORT_URL, {"file": upload(ICS / "no-dtstart.ics")}, follow=True
    )

    assert (
        "Die Datei ist eine iCalendar-Datei (BEGIN:VCALENDAR), keine vCard-Datei. "
        "Es wurde nichts importiert." in response.text
    )
    assert not Contact.objects.exists()
