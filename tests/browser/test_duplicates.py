import pytest

from contacts.models import Contact, ContactMerge
from tests.builders import PASSWORD, build_contact

pytestmark = pytest.mark.browser


def test_a_household_admin_merges_two_contacts(
    page, household, admin_membership, screenshot
):
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
        channels=[{"kind": "phone", "value": "+49 171 1234567"}],
    )
    page.set_viewport_size({"width": 1280, "height": 900})

    page.goto("/admin/login/?next=/admin/contacts/contact/")
    page.fill("#id_username", "anna")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.get_by_role("link", name="Mögliche Duplikate").click()
    row = page.locator("#duplicates tbody tr")
    assert row.count() == 1
    assert "Beide haben die Telefonnummer 0171 1234567" in row.inner_text()
    screenshot(page, "admin_possible_duplicates")
    row.get_by_role("link", name="Vergleichen").click()

    page.get_by_label("Mutter", exact=True).check()
    screenshot(page, "admin_duplicate_pair")
    page.get_by_role("button", name="Zusammenführen").click()

    page.get_by_text("„Mama“ in „Gisela Becker“ zusammengeführt.").wait_for()
    assert page.url.endswith(f"/admin/contacts/contact/{gisela.pk}/change/")
    assert page.locator("html").get_attribute("lang") == "de"
    screenshot(page, "admin_merged_contact")
    assert not Contact.objects.filter(pk=mama.pk).exists()
    gisela.refresh_from_db()
    assert gisela.relation == "Mutter"
    assert ContactMerge.objects.get().merged_by == "anna"
