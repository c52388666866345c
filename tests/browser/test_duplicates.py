import pytest

from contacts.models import Contact, ContactMerge
from tests.browser.conftest import DESKTOP, PHONE
from tests.builders import PASSWORD, build_contact

pytestmark = pytest.mark.browser


def log_in_to_admin(page):
    page.goto("/admin/login/?next=/admin/contacts/contact/")
    page.fill("#id_username", "anna")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


@pytest.fixture
def pair(household):
    gisela = build_contact(
        household,
        "Gisela Becker",
        relation="Großmutter",
        channels=[{"kind": "phone", "value": "0171 1234567"}],
    )
    mama = build_contact(
        household,
        "Mama",
        relation="Mutter",
        vcard_uid="uid-mama",
        channels=[{"kind": "phone", "value": "+49 171 1234567"}],
    )
    return gisela, mama


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_household_admin_merges_two_contacts_confirms_and_undoes(
    page, household, admin_membership, pair, screenshot, accessible, viewport
):
    gisela, mama = pair
    size = "phone" if viewport == PHONE else "desktop"
    page.set_viewport_size(viewport)
    log_in_to_admin(page)
    page.get_by_role("link", name="Mögliche Duplikate").click()
    row = page.locator("#duplicates tbody tr")
    assert row.count() == 1
    assert "Beide haben die Telefonnummer 0171 1234567" in row.inner_text()
    accessible(page)
    screenshot(page, f"admin_possible_duplicates_{size}")
    row.get_by_role("link", name="Vergleichen").click()

    # Each side says where it came from, and the keep radios say whom.
    origins = page.locator("tr.field-origin td").all_inner_texts()
    assert origins[0].startswith("Haushaltsimport, angelegt am")
    assert origins[1].startswith("vCard-Import, angelegt am")
    page.get_by_label("„Gisela Becker“ behalten").check()
    page.get_by_label("Mutter", exact=True).check()
    accessible(page)
    screenshot(page, f"admin_duplicate_pair_{size}")
    page.get_by_role("button", name="Zusammenführen").click()

    # Nothing is merged before the confirmation.
    page.get_by_role("heading", name="Diese zwei Kontakte zusammenführen?").wait_for()
    assert Contact.objects.filter(pk=mama.pk).exists()
    accessible(page)
    screenshot(page, f"admin_merge_confirmation_{size}")
    page.get_by_role("button", name="Jetzt zusammenführen").click()

    page.get_by_text("„Mama“ in „Gisela Becker“ zusammengeführt.").first.wait_for()
    assert "/admin/contacts/contact/duplicates/" in page.url
    assert page.locator("html").get_attribute("lang") == "de"
    assert not Contact.objects.filter(pk=mama.pk).exists()
    gisela.refresh_from_db()
    assert gisela.relation == "Mutter"
    assert ContactMerge.objects.get().merged_by == "anna"
    accessible(page)
    screenshot(page, f"admin_merged_with_undo_{size}")

    page.get_by_role("button", name="Zusammenführung rückgängig machen").click()

    page.get_by_text("„Mama“ und „Gisela Becker“ sind wieder zwei Kontakte.").wait_for()
    assert Contact.objects.get(pk=mama.pk).relation == "Mutter"
    gisela.refresh_from_db()
    assert gisela.relation == "Großmutter"


def test_the_admin_contact_form_passes_axe(
    page, household, admin_membership, pair, screenshot, accessible
):
    gisela, _ = pair
    page.set_viewport_size(DESKTOP)
    log_in_to_admin(page)

    for path in [
        f"/admin/contacts/contact/{gisela.pk}/change/",
        "/admin/contacts/contact/add/",
        "/admin/contacts/contact/import-vcard/",
    ]:
        page.goto(path)
        accessible(page)
    screenshot(page, "admin_import_vcard")


def test_a_vcard_dry_run_lists_names_and_imports_with_one_click(
    page, household, admin_membership, pair, screenshot, accessible, tmp_path
):
    gisela, _ = pair
    vcf = tmp_path / "familie.vcf"
    vcf.write_text(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ben Neu\r\nEND:VCARD\r\n"
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Gisela Becker\r\nTEL:0171 1234567\r\n"
        "NOTE:Kommt sonntags\r\nEND:VCARD\r\n"
        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Hanna Halbfertig\r\n"
    )
    log_in_to_admin(page)
    page.goto("/admin/contacts/contact/import-vcard/")
    page.get_by_label("vCard-Datei").set_input_files(vcf)
    page.get_by_label("Probelauf").check()
    page.get_by_role("button", name="Importieren").click()

    page.get_by_role("heading", name="Neue Kontakte").wait_for()
    assert page.get_by_text("Ben Neu").is_visible()
    assert page.get_by_text("Gisela Becker").is_visible()
    assert page.get_by_text("Karte 3 (Hanna Halbfertig)").is_visible()
    accessible(page)
    screenshot(page, "admin_vcard_dry_run_phone")
    assert not Contact.objects.filter(display_name="Ben Neu").exists()

    page.get_by_role("button", name="Jetzt importieren").click()

    page.get_by_text("Neu angelegt: Ben Neu").wait_for()
    assert page.get_by_text("Aktualisiert: Gisela Becker").is_visible()
    screenshot(page, "admin_vcard_imported_phone")
    gisela.refresh_from_db()
    assert gisela.notes == "Kommt sonntags"
