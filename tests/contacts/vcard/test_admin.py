"""Importing a vCard file through Django admin, into the admin's own household."""

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from contacts.models import Contact, VCardUpload
from contacts.vcard.uploads import KEPT_UPLOAD_LIFETIME
from household.models import Membership, UserProfile
from tests.builders import PASSWORD, LoginClient, build_contact, build_member

SAMPLES = Path(__file__).parent / "samples"
IMPORT_URL = reverse("admin:contacts_contact_import_vcard")


def upload(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(
        name, (SAMPLES / name).read_bytes(), content_type="text/vcard"
    )


@pytest.fixture
def anna(client: Client, admin_membership: Membership) -> Client:
    """Return a client logged in as the Becker household's admin."""
    assert client.login(username="anna", password=PASSWORD)
    return client


def test_contact_list_offers_the_import(anna):
    response = anna.get(reverse("admin:contacts_contact_changelist"))

    assert response.status_code == 200
    assert f'href="{IMPORT_URL}"' in response.text
    assert "vCard importieren" in response.text


def test_import_page_asks_a_household_admin_only_for_the_file(anna):
    response = anna.get(IMPORT_URL)

    assert response.status_code == 200
    assert 'enctype="multipart/form-data"' in response.text
    assert 'name="file"' in response.text
    assert 'name="dry_run"' in response.text
    assert 'name="household"' not in response.text


def test_upload_imports_into_the_admins_household(anna, household, other_household):
    response = anna.post(IMPORT_URL, {"file": upload("google.vcf")}, follow=True)

    assert response.redirect_chain == [
        (reverse("admin:contacts_contact_changelist"), 302)
    ]
    assert (
        "Die vCard-Datei ist importiert: 5 gefunden: 5 neu angelegt, "
        "0 aktualisiert, 0 unverändert, 0 übersprungen" in response.text
    )
    assert "Zahnarztpraxis Dr. Schmidt" in response.text
    assert Contact.objects.filter(household=household).count() == 5
    assert not Contact.objects.filter(household=other_household).exists()


def test_dry_run_upload_shows_the_summary_and_writes_nothing(anna):
    response = anna.post(IMPORT_URL, {"file": upload("google.vcf"), "dry_run": "on"})

    assert response.status_code == 200
    assert (
        "Probelauf, nichts gespeichert: 5 gefunden: 5 neu angelegt, "
        "0 aktualisiert, 0 unverändert, 0 übersprungen" in response.text
    )
    assert not Contact.objects.exists()


# A dry run kept for one click


def vcard(*lines: str) -> str:
    return "\r\n".join(["BEGIN:VCARD", "VERSION:3.0", *lines, "END:VCARD", ""])


def mixed_file() -> SimpleUploadedFile:
    """Return a file of new contacts (one with a value to ignore), one known to
    the book, and an unfinished card."""
    data = (
        vcard("FN:Ben Neu", "TEL:+49 151 23456789")
        + vcard("FN:Gisela Becker", "NOTE:Kommt sonntags")
        + vcard("FN:Max Mustermann", "TEL:abc")
        + vcard("FN:Carla Neu", "EMAIL:carla@example.org")
        + "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Hanna Halbfertig\r\n"
    )
    return SimpleUploadedFile("mixed.vcf", data.encode(), content_type="text/vcard")


@pytest.fixture
def gisela(household):
    return build_contact(household, "Gisela Becker", relation="Großmutter")


def dry_run(client: Client) -> tuple[str, str]:
    """Post a dry run of the mixed file; return the page and its confirm token."""
    response = client.post(IMPORT_URL, {"file": mixed_file(), "dry_run": "on"})
    assert response.status_code == 200
    return response.text, confirm_token(response.text)


def confirm_token(page: str) -> str:
    """Return the token of the page's "import now" form."""
    return page.split('name="upload" value="')[1].split('"')[0]


def section(page: str, heading: str) -> list[str]:
    """Return the list items under a heading of the dry run's page."""
    part = page.split(f"<h2>{heading}</h2>")[1].split("</ul>")[0]
    return [item.split("</li>")[0] for item in part.split("<li>")[1:]]


def test_dry_run_lists_the_names_it_would_create_update_and_skip(anna, gisela):
    page, token = dry_run(anna)

    assert section(page, "Neue Kontakte") == ["Ben Neu", "Max Mustermann", "Carla Neu"]
    assert section(page, "Aktualisierte Kontakte") == ["Gisela Becker"]
    assert section(page, "Übersprungene Karten") == [
        "Karte 5 (Hanna Halbfertig): kein END:VCARD am Ende der Datei"
    ]
    assert section(page, "Ignorierte Werte") == [
        "Karte 3 (Max Mustermann): TEL &#x27;abc&#x27; ignoriert: "
        "keine Telefonnummer für die Region DE"
    ]
    assert 'value="Jetzt importieren"' in page
    assert "30 Minuten" in page
    assert token
    assert list(Contact.objects.values_list("display_name", flat=True)) == [
        "Gisela Becker"
    ]


def test_import_now_imports_exactly_what_the_dry_run_listed(anna, household, gisela):
    _, token = dry_run(anna)

    response = anna.post(IMPORT_URL, {"upload": token}, follow=True)

    assert response.redirect_chain == [
        (reverse("admin:contacts_contact_changelist"), 302)
    ]
    assert "Neu angelegt: Ben Neu, Max Mustermann, Carla Neu" in response.text
    assert "Aktualisiert: Gisela Becker" in response.text
    assert sorted(
        Contact.objects.filter(household=household).values_list(
            "display_name", flat=True
        )
    ) == ["Ben Neu", "Carla Neu", "Gisela Becker", "Max Mustermann"]
    gisela.refresh_from_db()
    assert gisela.notes == "Kommt sonntags"


def test_the_kept_file_imports_once(anna, household, gisela):
    _, token = dry_run(anna)
    anna.post(IMPORT_URL, {"upload": token})

    again = anna.post(IMPORT_URL, {"upload": token}, follow=True)

    assert "Dieser Probelauf ist abgelaufen" in again.text
    assert Contact.objects.filter(display_name="Ben Neu").count() == 1


def test_a_book_changed_since_the_dry_run_is_listed_again_not_imported(
    anna, household, gisela
):
    _, token = dry_run(anna)
    build_contact(
        household,
        "Carla Neu",
        channels=[{"kind": "email", "value": "carla@example.org"}],
    )

    response = anna.post(IMPORT_URL, {"upload": token})

    assert response.status_code == 200
    assert "Das Adressbuch hat sich seit dem Probelauf geändert" in response.text
    assert section(response.text, "Neue Kontakte") == ["Ben Neu", "Max Mustermann"]
    assert not Contact.objects.filter(display_name="Ben Neu").exists()
    anna.post(IMPORT_URL, {"upload": confirm_token(response.text)})
    assert Contact.objects.filter(display_name="Ben Neu").exists()


@pytest.mark.parametrize("how", ["foreign", "stale", "tampered"])
def test_a_foreign_stale_or_tampered_token_is_refused(
    anna, client, household, other_household, gisela, how
):
    _, token = dry_run(anna)
    if how == "foreign":
        build_member(other_household, "dana", role="admin")
        client.logout()
        assert client.login(username="dana", password=PASSWORD)
    elif how == "stale":
        VCardUpload.objects.update(
            created_at=timezone.now() - KEPT_UPLOAD_LIFETIME - timedelta(seconds=1)
        )
    else:
        token = token[:-1] + ("A" if token[-1] != "A" else "B")

    response = client.post(IMPORT_URL, {"upload": token}, follow=True)

    assert response.redirect_chain == [(IMPORT_URL, 302)]
    assert (
        "This dry run has expired" in response.text
        or "Dieser Probelauf ist abgelaufen" in response.text
    )
    assert not Contact.objects.exclude(pk=gisela.pk).exists()


def test_the_daily_job_deletes_the_files_of_expired_dry_runs_only(
    anna, household, other_household
):
    """A kept file no token can import goes without waiting for the admin's
    next dry run; another household's live one stays importable."""
    build_member(other_household, "dana", role="admin")
    dana = LoginClient()
    assert dana.login(username="dana", password=PASSWORD)
    _, token = dry_run(dana)
    dry_run(anna)
    VCardUpload.objects.filter(household=household).update(
        created_at=timezone.now() - KEPT_UPLOAD_LIFETIME - timedelta(seconds=1)
    )
    out = io.StringIO()

    call_command("delete_expired_uploads", stdout=out)

    assert out.getvalue().strip() == "Deleted 1 expired vCard upload(s)."
    assert list(VCardUpload.objects.values_list("household", flat=True)) == [
        other_household.pk
    ]
    dana.post(IMPORT_URL, {"upload": token})
    assert Contact.objects.filter(household=other_household, display_name="Ben Neu")


def test_skipped_cards_are_listed_with_number_and_name(anna):
    response = anna.post(IMPORT_URL, {"file": upload("broken.vcf")}, follow=True)

    assert (
        "8 gefunden: 6 neu angelegt, 0 aktualisiert, 0 unverändert, 2 übersprungen"
        in response.text
    )
    assert (
        "Karte 4 (Max Mustermann): TEL &#x27;abc&#x27; ignoriert: "
        "keine Telefonnummer für die Region DE" in response.text
    )
    assert "Karte 5 (Hanna Halbfertig): kein END:VCARD vor Zeile 31" in response.text
    assert "Karte 8 (Otto Ohneanfang): kein BEGIN:VCARD vor Zeile 46" in response.text


def test_an_admin_preferring_english_reads_the_report_in_english(
    anna, admin_membership
):
    UserProfile.objects.filter(pk=admin_membership.profile_id).update(language="en")

    response = anna.post(IMPORT_URL, {"file": upload("broken.vcf")}, follow=True)

    assert "found 8: created 6, updated 0, unchanged 0, skipped 2" in response.text
    # Admin messages start with a capital letter.
    assert (
        "Card 4 (Max Mustermann): TEL &#x27;abc&#x27; ignored: not a phone number"
        in response.text
    )
    assert "Card 5 (Hanna Halbfertig): no END:VCARD" in response.text


def test_file_over_the_size_cap_is_a_form_error(anna, settings):
    settings.YORIK_VCARD_MAX_BYTES = 1024

    response = anna.post(IMPORT_URL, {"file": upload("apple.vcf")})

    assert response.status_code == 200
    assert "YORIK_VCARD_MAX_BYTES" in response.text
    assert not Contact.objects.exists()


def test_superuser_chooses_the_household(client, household, other_household):
    get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.login(username="root", password=PASSWORD)

    page = client.get(IMPORT_URL)
    response = client.post(
        IMPORT_URL, {"household": other_household.pk, "file": upload("v4.vcf")}
    )

    assert 'name="household"' in page.text
    assert response.status_code == 302
    assert Contact.objects.filter(household=other_household).count() == 5
    assert not Contact.objects.filter(household=household).exists()


def test_staff_without_a_household_cannot_import(client, household):
    get_user_model().objects.create_user("temp", password=PASSWORD, is_staff=True)
    client.login(username="temp", password=PASSWORD)

    page = client.get(IMPORT_URL)
    response = client.post(IMPORT_URL, {"file": upload("google.vcf")})

    assert (page.status_code, response.status_code) == (403, 403)
    assert not Contact.objects.exists()
