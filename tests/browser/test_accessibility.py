"""axe-core finds no critical or serious problem on the pages people reach."""

import pytest

from tests.browser.conftest import VIEWPORT_IDS, VIEWPORTS, log_in
from tests.builders import build_contact, build_lead
from yorik.cards import card_link, create_card

pytestmark = pytest.mark.browser


def relative(url):
    return url.split("testserver", 1)[-1]


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=VIEWPORT_IDS)
def test_card_and_error_pages_pass_axe(
    page, household, admin_membership, accessible, viewport
):
    page.set_viewport_size(viewport)
    oma = build_contact(household, "Gisela Becker", relation="Großmutter")
    opa = build_contact(household, "Walter Becker", relation="Großvater")
    picker = create_card(
        household=household,
        kind="contact_picker",
        payload={
            "query": "Oma",
            "ranked": True,
            "picks": [
                {"contact_id": oma.pk, "confidence": 0.95, "reason": "Alias: Oma"},
                {"contact_id": opa.pk, "confidence": 0.3, "reason": "Großvater"},
            ],
        },
        created_by=admin_membership.profile,
    )
    link = relative(card_link(picker))

    for path in [
        link,
        f"/cards/{picker.pk}/?t=x",
        "/no-such-page/",
        "/accounts/login/",
    ]:
        page.goto(path)
        accessible(page)


def test_member_pages_pass_axe(page, household, admin_membership, accessible):
    build_contact(household, "Gisela Becker", relation="Großmutter")
    lead = build_lead(household, "Dana", last_name="Levi", owner=admin_membership)
    log_in(page, "anna")

    for path in [
        "/contacts/",
        f"/de/dashboard/members/{admin_membership.pk}",
        f"/de/dashboard/leads?lead={lead.pk}",
    ]:
        page.goto(path)
        accessible(page)


def test_the_admin_lists_yorik_configures_pass_axe(
    page, household, admin_membership, accessible
):
    build_contact(household, "Gisela Becker", relation="Großmutter")
    build_lead(household, "Dana", last_name="Levi", owner=admin_membership)
    log_in(page, "anna", "/admin/login/")

    for path in [
        "/admin/",
        "/admin/contacts/contact/",
        "/admin/household/lead/",
        "/admin/household/calendarevent/",
        "/admin/household/userprofile/",
        "/admin/yorik/apitoken/",
    ]:
        page.goto(path)
        accessible(page)
