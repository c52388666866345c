"""What one vCard file may cost: linear reading, per-card caps, a timeout.

A card with a value over MAX_VALUE_LENGTH or more lines than MAX_CARD_LINES
is skipped with its reason and the rest of the file imported; an import past
its timeout stops and writes nothing. Reading a card takes time in
proportion to its length, however long one value is folded.
"""

import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from contacts.models import Contact
from contacts.vcard.reader import MAX_CARD_LINES, MAX_VALUE_LENGTH, logical_lines
from household.models import Membership

SAMPLES = Path(__file__).parent / "samples"
IMPORT_URL = reverse("admin:contacts_contact_import_vcard")


def vcard(*lines: str) -> str:
    return "\r\n".join(["BEGIN:VCARD", "VERSION:3.0", *lines, "END:VCARD", ""])


def folded(line: str) -> str:
    """Return a property folded at 75 characters, as exporters write it."""
    return "\r\n ".join(line[i : i + 74] for i in range(0, len(line), 74))


def oversized_cards() -> bytes:
    """Return a card with a value one character over the cap, one with one
    line too many, and one with a value just at the cap."""
    return (
        vcard("FN:Anna Roth", folded("NOTE:" + "a" * (MAX_VALUE_LENGTH + 1)))
        + vcard("FN:Ben Roth", *["CATEGORIES:Familie"] * (MAX_CARD_LINES - 3))
        + vcard("FN:Carla Roth", folded("NOTE:" + "c" * MAX_VALUE_LENGTH))
    ).encode()


@pytest.fixture
def anna(client: Client, admin_membership: Membership) -> Client:
    assert client.login(username="anna", password="correct-horse-battery")
    return client


def run(path: Path, **options) -> tuple[str, str]:
    """Import a file with the command; return its stdout and stderr."""
    out, err = StringIO(), StringIO()
    call_command(
        "import_vcard", str(path), household="becker", stdout=out, stderr=err, **options
    )
    return out.getvalue().strip(), err.getvalue()


# Reading


def test_logical_lines_unfold_folds_and_quoted_printable_soft_breaks():
    lines = [
        "BEGIN:VCARD",
        "NOTE:one",
        " two",
        "\tthree",
        "NOTE;ENCODING=QUOTED-PRINTABLE:=C3=",
        "=BC=",
        " x",
        "FN:a value that says quoted-printable=",
        "TEL:123",
        "",
        " an orphan fold",
        "END:VCARD",
    ]

    assert list(logical_lines(lines)) == [
        ("BEGIN:VCARD", 1),
        ("NOTE:onetwothree", 2),
        # The decoder takes "=" and the line break out again.
        ("NOTE;ENCODING=QUOTED-PRINTABLE:=C3=\n=BC=\n x", 5),
        ("FN:a value that says quoted-printable=", 8),
        ("TEL:123", 9),
        (" an orphan fold", 11),
        ("END:VCARD", 12),
    ]


def test_logical_lines_read_a_long_value_in_linear_time():
    # 1.2 MB of quoted-printable soft breaks: vobject's line reader, which
    # copied and searched the value again at every line, took 34 s for it.
    breaks = 200_000
    lines = ["NOTE;QUOTED-PRINTABLE:=41=", *["=41="] * (breaks - 1), "=41", "FN:A"]

    started = time.perf_counter()
    (note, first), (name, second) = logical_lines(lines)
    elapsed = time.perf_counter() - started

    assert note == "NOTE;QUOTED-PRINTABLE:" + "=41=\n" * breaks + "=41"
    assert (first, name, second) == (1, "FN:A", breaks + 2)
    assert elapsed < 5


def test_a_line_of_many_parameters_without_a_colon_is_named_quickly(
    household, tmp_path
):
    # vobject's line pattern backtracked over every way to split these
    # parameters: 2 s for 24 of them, twice that for each one more.
    line = "TEL;" + ";".join(["a"] * 28)
    path = tmp_path / "params.vcf"
    path.write_text(vcard("FN:Anna Roth", line))

    started = time.perf_counter()
    out, err = run(path)
    elapsed = time.perf_counter() - started

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.strip() == (
        f"card 1 (Anna Roth): line 4 ignored: cannot be read: {line[:40]!r}"
    )
    assert elapsed < 5


# Caps


def test_a_card_over_a_cap_is_skipped_and_the_rest_imported(household, tmp_path):
    path = tmp_path / "big.vcf"
    path.write_bytes(oversized_cards())

    out, err = run(path)

    assert out == "found 3: created 1, updated 0, unchanged 0, skipped 2"
    assert err.splitlines() == [
        "card 1 (Anna Roth): NOTE has 65,537 characters, more than the 65,536 a "
        "value may have",
        "card 2 (Ben Roth): has 5,001 lines, more than the 5,000 a card may have",
    ]
    [carla] = Contact.objects.filter(household=household)
    assert (carla.display_name, carla.notes) == ("Carla Roth", "c" * MAX_VALUE_LENGTH)


def test_admin_upload_names_the_cards_over_a_cap_in_german(anna, household):
    upload = SimpleUploadedFile("big.vcf", oversized_cards(), "text/vcard")

    response = anna.post(IMPORT_URL, {"file": upload}, follow=True)

    assert (
        "3 gefunden: 1 neu angelegt, 0 aktualisiert, 0 unverändert, 2 übersprungen"
        in response.text
    )
    assert (
        "Karte 1 (Anna Roth): NOTE hat 65.537 Zeichen, mehr als die 65.536, die "
        "ein Wert haben darf" in response.text
    )
    assert (
        "Karte 2 (Ben Roth): hat 5.001 Zeilen, mehr als die 5.000, die eine Karte "
        "haben darf" in response.text
    )
    assert Contact.objects.filter(household=household).count() == 1


# Timeout


def test_command_past_its_timeout_stops_and_imports_nothing(household):
    with pytest.raises(
        CommandError,
        match=r"google\.vcf: The import took longer than 0\.000000001 seconds "
        r"and was stopped at card 1 of 5\. Nothing was imported\.",
    ):
        run(SAMPLES / "google.vcf", timeout=1e-9)
    assert not Contact.objects.exists()


def test_admin_upload_past_the_timeout_imports_nothing(anna, settings):
    settings.YORIK_VCARD_IMPORT_TIMEOUT = 1e-9
    upload = SimpleUploadedFile(
        "google.vcf", (SAMPLES / "google.vcf").read_bytes(), "text/vcard"
    )

    response = anna.post(IMPORT_URL, {"file": upload}, follow=True)

    assert (
        "Der Import dauerte länger als 0,000000001 Sekunden und wurde bei Karte 1 "
        "von 5 abgebrochen. Es wurde nichts importiert." in response.text
    )
    assert not Contact.objects.exists()


def test_admin_upload_without_a_timeout_imports(anna, settings):
    settings.YORIK_VCARD_IMPORT_TIMEOUT = 0
    upload = SimpleUploadedFile(
        "google.vcf", (SAMPLES / "google.vcf").read_bytes(), "text/vcard"
    )

    anna.post(IMPORT_URL, {"file": upload})

    assert Contact.objects.count() == 5
