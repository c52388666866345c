"""Importing a vCard file through Django admin, into the admin's own household."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from contacts.models import Contact
from household.models import Membership, UserProfile

SAMPLES = Path(__file__).parent / "samples"
PASSWORD = "correct-horse-battery"
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
    response = anna.post(
        IMPORT_URL, {"file": upload("google.vcf"), "dry_run": "on"}, follow=True
    )

    assert response.redirect_chain == [(IMPORT_URL, 302)]
    assert (
        "Probelauf, nichts gespeichert: 5 gefunden: 5 neu angelegt, "
        "0 aktualisiert, 0 unverändert, 0 übersprungen" in response.text
    )
    assert not Contact.objects.exists()


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
