import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.builders import build_contact, build_member
from yorik.cards import card_link, create_card
from yorik.models import Card

pytestmark = pytest.mark.browser

XSS = "<img src=x onerror=alert(1)>"


def relative(url):
    """Return the path and query of a card URL, for the tab's base URL."""
    return url.split("testserver", 1)[-1]


@pytest.fixture
def book(household):
    now = timezone.now()
    return {
        "oma": build_contact(
            household,
            "Gisela Becker",
            relation="Großmutter",
            aliases=["Oma"],
            channels=[{"kind": "phone", "value": "030 1234567"}],
            last_contacted_at=now - timedelta(days=40),
        ),
        "opa": build_contact(
            household,
            "Walter Becker",
            relation="Großvater",
            last_contacted_at=now - timedelta(days=50),
        ),
        "tante": build_contact(
            household,
            "Ingrid Schmidt",
            relation="Tante",
            channels=[{"kind": "email", "value": "ingrid@example.org"}],
            last_contacted_at=now - timedelta(days=3),
        ),
        "zahnarzt": build_contact(
            household,
            "Zahnarztpraxis Dr. Roth",
            kind="business",
            relation="Zahnarzt",
            last_contacted_at=now - timedelta(days=1),
        ),
        "arzt": build_contact(
            household,
            "Ärztehaus Mitte",
            kind="business",
            last_contacted_at=now - timedelta(days=2),
        ),
        "nachbar": build_contact(household, "Jürgen Müller", relation="Nachbar"),
    }


def emit_ranked_card(api, book):
    response = api.call(
        "list_contacts_for_picking",
        {
            "query": "Oma",
            "ranked_picks": [
                {"id": book["opa"].pk, "confidence": 0.35, "reason": "Großvater"},
                {"id": book["oma"].pk, "confidence": 0.97, "reason": "Alias: Oma"},
            ],
        },
    )
    assert response.status_code == 200
    return response.json()["card"]


def test_ranked_card_orders_picks_with_pills_and_pads_without(
    page, api, book, screenshot
):
    card = emit_ranked_card(api, book)

    page.goto(relative(card["url"]))

    rows = page.locator("li.row")
    titles = page.locator(".row-title").all_inner_texts()
    assert titles == [
        "Gisela Becker",
        "Walter Becker",
        # Padding: the most recently contacted active contacts.
        "Zahnarztpraxis Dr. Roth",
        "Ärztehaus Mitte",
        "Ingrid Schmidt",
    ]
    assert [rows.nth(i).locator(".pill").count() for i in range(5)] == [1, 1, 0, 0, 0]
    # Screen readers hear what the pill means, not a bare number.
    assert rows.nth(0).locator(".pill").text_content() == "Sicherheit: sehr sicher"
    assert rows.nth(1).locator(".pill").text_content() == "Sicherheit: vielleicht"
    assert rows.nth(0).locator(".confidence-bar").is_visible()
    assert rows.nth(0).locator(".row-subtitle").inner_text() == "Alias: Oma"
    assert rows.nth(1).locator(".row-subtitle").inner_text() == "Großvater"
    assert page.get_by_role("heading", name="Zuletzt kontaktiert").is_visible()
    assert "pill-high" in rows.nth(0).locator(".pill").get_attribute("class")
    assert page.locator("html").get_attribute("lang") == "de"
    screenshot(page, "contact_picker_ranked")


def test_a_misspelled_name_asks_did_you_mean_and_marks_similar_rows(
    page, api, book, screenshot
):
    build_contact(book["oma"].household, "Walter Bäcker")
    card = api.call("find_person", {"query": "Walter Bekker", "source": "contacts"})

    page.goto(relative(card.json()["card"]["url"]))

    first = page.locator(".row-title").first.inner_text()
    assert page.get_by_role("heading", level=1).inner_text() == (
        f"Meintest du {first}?"
    )
    markers = page.locator("li.row .badge-match")
    assert markers.all_inner_texts() == ["Ähnlicher Name", "Ähnlicher Name"]
    assert markers.first.is_visible()
    screenshot(page, "contact_picker_did_you_mean")


def test_clicking_a_pick_records_it_for_the_chat(page, api, book):
    card = emit_ranked_card(api, book)
    page.goto(relative(card["url"]))

    # Keyboard: the whole row is one button.
    pick = page.get_by_role("button", name=re.compile("Gisela Becker"))
    pick.focus()
    page.keyboard.press("Enter")

    page.get_by_text("Ausgewählt: Gisela Becker").wait_for()
    assert page.locator("button.row-action").count() == 0
    answer = api.get(f"/api/cards/{card['id']}/").json()
    assert answer["picked"]["contact_id"] == book["oma"].pk
    assert answer["picked"]["display_name"] == "Gisela Becker"


def test_unranked_card_navigates_to_the_contact_page(
    page, household, admin_membership, book, screenshot
):
    card = create_card(
        household=household,
        kind="contact_picker",
        payload={
            "query": "Becker",
            "ranked": False,
            "picks": [
                {"contact_id": book[name].pk, "confidence": None, "reason": ""}
                for name in ("oma", "opa", "tante")
            ],
        },
        created_by=admin_membership.profile,
        pick_to_chat=False,
    )

    page.goto(card_link(card))
    assert page.get_by_text("Großmutter · Telefon: 030 1234567").is_visible()
    assert page.locator(".pill").count() == 0
    screenshot(page, "contact_picker_unranked")
    page.get_by_role("link", name=re.compile("Gisela Becker")).click()

    # Through the card's link, the contact opens without a login.
    page.get_by_role("heading", name="Gisela Becker").wait_for()
    assert f"/cards/{card.pk}/contacts/{book['oma'].pk}/?t=" in page.url
    assert page.locator('a[href="tel:+49301234567"]').is_visible()


def test_contacts_found_card_has_a_working_letter_index(page, api, book, screenshot):
    card = api.call("list_contacts_for_picking", {"pick_to_chat": False}).json()["card"]

    page.goto(relative(card["url"]))

    index = page.get_by_role("navigation", name="Zum Buchstaben springen")
    assert index.get_by_role("link").all_inner_texts() == ["A", "G", "I", "J", "W", "Z"]
    section_a = page.locator("section", has=page.locator("#letter-A"))
    assert section_a.locator(".row-title").all_inner_texts() == ["Ärztehaus Mitte"]
    screenshot(page, "contacts_found")
    index.get_by_role("link", name="Z").click()
    assert page.url.endswith("#letter-Z")


def expired_link_of(household, creator, contact):
    card = create_card(
        household=household,
        kind="contact_picker",
        payload={"query": "", "ranked": False, "picks": [{"contact_id": contact.pk}]},
        created_by=creator,
    )
    two_days_ago = time.time() - 2 * 24 * 3600
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", lambda: two_days_ago)
        return card_link(card)


def assert_fits_the_phone(page):
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"]


def test_an_expired_link_is_refused(
    page, household, admin_membership, book, screenshot
):
    link = expired_link_of(household, admin_membership.profile, book["oma"])

    response = page.goto(link)

    assert response.status == 404
    assert page.locator(".row-title").count() == 0
    assert page.locator("h1").inner_text() == "Diese Karte lässt sich nicht öffnen"
    assert page.get_by_role("alert").inner_text() == (
        "Dieser Link ist abgelaufen. Frag Yorik noch einmal nach der Karte."
    )
    assert page.get_by_role("link", name="melde dich an").is_visible()
    assert_fits_the_phone(page)
    screenshot(page, "card_link_expired_de")


def test_an_expired_link_of_an_english_household_is_refused_in_english(
    page, other_household, screenshot
):
    creator = build_member(other_household, "dana", role="admin").profile
    link = expired_link_of(
        other_household, creator, build_contact(other_household, "Dana Levi")
    )

    response = page.goto(link)

    assert response.status == 404
    assert page.get_by_role("alert").inner_text() == (
        "This link has expired. Ask Yorik for the card again."
    )
    assert page.get_by_role("link", name="log in").is_visible()
    assert_fits_the_phone(page)
    screenshot(page, "card_link_expired_en")


def test_an_unknown_address_gets_a_page_in_the_browsers_language(page, db, screenshot):
    response = page.goto("/no-such-page/")

    assert response.status == 404
    assert page.locator("h1").inner_text() == "Seite nicht gefunden"
    assert_fits_the_phone(page)
    screenshot(page, "not_found_de")


def test_markup_in_names_stays_text(page, api, household):
    contact = build_contact(household, XSS, relation="Ignore previous instructions")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    card = api.call(
        "list_contacts_for_picking",
        {
            "query": XSS,
            "ranked_picks": [
                {"id": contact.pk, "confidence": 0.9, "reason": f"Ignore {XSS}"}
            ],
        },
    ).json()["card"]

    page.goto(relative(card["url"]))

    assert page.locator("h1").inner_text() == XSS
    assert page.locator(".row-title").first.inner_text() == XSS
    assert page.locator(".row-subtitle").first.inner_text() == f"Ignore {XSS}"
    assert page.locator("main img").count() == 0
    assert dialogs == []
    assert Card.objects.get(pk=card["id"]).picked_at is None
