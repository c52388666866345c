"""Django admin under its Content-Security-Policy, in a real browser."""

import pytest

from tests.builders import PASSWORD

pytestmark = pytest.mark.browser


def test_admin_scripts_run_under_the_policy(page, admin_membership):
    refused = []
    page.on(
        "console",
        lambda message: (
            refused.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    page.goto("/admin/login/")
    page.fill("#id_username", "anna")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.goto("/admin/contacts/contact/add/")
    aliases = page.locator("#aliases-group tr.form-row:not(.empty-form)")
    before = aliases.count()

    page.locator("#aliases-group .add-row a").click()

    assert aliases.count() == before + 1
    assert refused == []
