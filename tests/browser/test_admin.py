"""Django admin under its Content-Security-Policy, in a real browser."""

import pytest

from tests.browser.conftest import log_in
from tests.builders import build_lead, build_member

pytestmark = pytest.mark.browser


def policy_refusals(page) -> list[str]:
    """Return a list that collects what the Content-Security-Policy refuses."""
    refused: list[str] = []
    page.on(
        "console",
        lambda message: (
            refused.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    return refused


def test_admin_scripts_run_under_the_policy(page, admin_membership):
    refused = policy_refusals(page)
    log_in(page, "anna", "/admin/login/")
    page.goto("/admin/contacts/contact/add/")
    aliases = page.locator("#aliases-group tr.form-row:not(.empty-form)")
    before = aliases.count()

    page.locator("#aliases-group .add-row a").click()

    assert aliases.count() == before + 1
    assert refused == []


def test_leads_are_filtered_by_an_owner_typed_into_the_search_box(
    page, household, admin_membership
):
    ben = build_member(household, "ben", first_name="Ben", last_name="Becker")
    build_lead(household, "Dana", last_name="Levi", owner=ben)
    build_lead(household, "Eli", last_name="Cohen", owner=admin_membership)
    refused = policy_refusals(page)
    log_in(page, "anna", "/admin/login/")
    page.goto("/admin/household/lead/")

    page.locator("#changelist-filter .select2-selection").click()
    page.locator(".select2-search__field").fill("Ben")
    page.locator(".select2-results__option", has_text="Ben Becker").click()
    page.locator("#changelist-filter input[type=submit]").click()

    page.wait_for_url(f"**owner__id__exact={ben.pk}**")
    results = page.locator("#result_list").inner_text()
    assert "Levi" in results
    assert "Cohen" not in results
    assert refused == []
