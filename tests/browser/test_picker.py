"""A picker people can finish on: none of these, a changed pick, a stale tab,
household rows and a search over long lists, on a phone and a desktop."""

import re
from collections.abc import Iterator

import pytest

from tests.browser.conftest import PHONE
from tests.builders import build_contact, build_member
from yorik.cards import card_link, create_card

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": PHONE, "desktop": {"width": 1280, "height": 800}}


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request) -> str:
    return request.param


@pytest.fixture
def open_tab(chromium, live_server) -> Iterator:
    """Return a function that opens a tab of a fresh browser session."""
    contexts = []

    def open_in(*, viewport="phone", locale="de-DE", javascript=True):
        context = chromium.new_context(
            base_url=live_server.url,
            viewport=VIEWPORTS[viewport],
            locale=locale,
            java_script_enabled=javascript,
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield open_in
    for context in contexts:
        context.close()


def relative(url):
    return url.split("testserver", 1)[-1]


def assert_fits(page):
    assert page.evaluate("document.scrollingElement.scrollWidth") <= page.evaluate(
        "innerWidth"
    )


@pytest.fixture
def grandparents(household):
    return {
        "oma": build_contact(household, "Gisela Becker", relation="Großmutter"),
        "opa": build_contact(household, "Walter Becker", relation="Großvater"),
    }


def emit_oma_card(api, grandparents):
    response = api.call(
        "list_contacts_for_picking",
        {
            "query": "Oma",
            "ranked_picks": [
                {"id": grandparents["oma"].pk, "confidence": 0.9, "reason": "Oma"},
                {"id": grandparents["opa"].pk, "confidence": 0.3, "reason": "Opa"},
            ],
        },
    )
    assert response.status_code == 200
    return response.json()["card"]


def test_none_of_these_is_read_back_through_the_api_in_german(
    open_tab, viewport, api, grandparents, screenshot
):
    card = emit_oma_card(api, grandparents)
    page = open_tab(viewport=viewport)
    page.goto(relative(card["url"]))
    screenshot(page, f"picker_de_{viewport}")

    page.get_by_role("button", name="Keiner davon").click()

    page.get_by_text("Du hast „Keiner davon“ gewählt.").wait_for()
    assert page.locator("button.row-action").count() == 0
    answer = api.get(f"/api/cards/{card['id']}/").json()
    assert answer["picked"] is None
    assert answer["declined"] is True
    assert_fits(page)
    screenshot(page, f"picker_none_of_these_de_{viewport}")


def test_none_of_these_is_read_back_through_the_api_in_english(
    open_tab, viewport, api_as, other_household, screenshot
):
    dana = build_member(other_household, "dana", role="admin")
    api = api_as(dana)
    levis = [build_contact(other_household, f"{name} Levi") for name in ("Tal", "Noa")]
    card = api.call(
        "list_contacts_for_picking",
        {
            "query": "Levi",
            "ranked_picks": [
                {"id": contact.pk, "confidence": 0.7, "reason": ""} for contact in levis
            ],
        },
    ).json()["card"]
    page = open_tab(viewport=viewport, locale="en-US")
    page.goto(relative(card["url"]))

    page.get_by_role("button", name="None of these").click()

    page.get_by_text("You chose “None of these”.").wait_for()
    assert page.get_by_role("link", name="Change my pick").is_visible()
    answer = api.get(f"/api/cards/{card['id']}/").json()
    assert (answer["picked"], answer["declined"]) == (None, True)
    assert_fits(page)
    screenshot(page, f"picker_none_of_these_en_{viewport}")


def test_the_pick_can_be_changed_and_the_api_shows_the_latest(
    open_tab, viewport, api, grandparents, screenshot
):
    card = emit_oma_card(api, grandparents)
    page = open_tab(viewport=viewport)
    page.goto(relative(card["url"]))
    page.get_by_role("button", name=re.compile("Gisela Becker")).click()
    page.get_by_text("Ausgewählt: Gisela Becker").wait_for()

    page.get_by_role("link", name="Auswahl ändern").click()
    page.get_by_text("Wähle neu oder behalte deine Auswahl.").wait_for()
    screenshot(page, f"picker_change_{viewport}")
    page.get_by_role("button", name=re.compile("Walter Becker")).click()

    page.get_by_text("Ausgewählt: Walter Becker").wait_for()
    answer = api.get(f"/api/cards/{card['id']}/").json()
    assert answer["picked"]["contact_id"] == grandparents["opa"].pk
    assert "declined" not in answer


def test_a_stale_tab_says_the_card_was_answered_meanwhile(
    open_tab, api, grandparents, screenshot
):
    card = emit_oma_card(api, grandparents)
    first = open_tab()
    first.goto(relative(card["url"]))
    second = first.context.new_page()
    second.goto(relative(card["url"]))
    first.get_by_role("button", name=re.compile("Gisela Becker")).click()
    first.get_by_text("Ausgewählt: Gisela Becker").wait_for()

    second.get_by_role("button", name=re.compile("Walter Becker")).click()

    alert = second.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text().startswith("Diese Karte wurde inzwischen beantwortet")
    assert second.get_by_text("Ausgewählt: Gisela Becker").is_visible()
    assert_fits(second)
    screenshot(second, "picker_stale_tab")
    # The stale tab now shows the card as it is and may change it.
    second.get_by_role("button", name=re.compile("Walter Becker")).click()
    second.get_by_text("Ausgewählt: Walter Becker").wait_for()
    answer = api.get(f"/api/cards/{card['id']}/").json()
    assert answer["picked"]["contact_id"] == grandparents["opa"].pk


def test_a_find_person_card_shows_and_picks_household_rows(
    open_tab, viewport, household, api, screenshot
):
    for name in ("Brigitte Becker", "Hans Becker", "Werner Becker"):
        build_contact(household, name)
    jonas = build_member(household, "jonas", last_name="Becker").profile
    build_member(household, "lena", role="viewer", last_name="Becker")
    card = api.call("find_person", {"query": "Becka"}).json()["card"]
    page = open_tab(viewport=viewport)
    page.goto(relative(card["url"]))

    members = page.locator("li.row", has_text="Haushaltsmitglied")
    assert members.locator(".row-title").all_inner_texts() == [
        "Anna Becker",
        "Jonas Becker",
        "Lena Becker",
    ]
    assert members.nth(2).locator(".row-subtitle").inner_text() == "Nur lesen"
    assert_fits(page)
    screenshot(page, f"picker_household_rows_{viewport}")
    page.get_by_role("button", name=re.compile("Jonas Becker")).click()

    page.get_by_text("Ausgewählt: Jonas Becker").wait_for()
    picked = api.get(f"/api/cards/{card['id']}/").json()["picked"]
    assert (picked["source"], picked["id"], picked["user_id"]) == (
        "household",
        jonas.pk,
        jonas.pk,
    )


@pytest.fixture
def long_card(household, admin_membership):
    contacts = [build_contact(household, f"Kontakt {n:02}") for n in range(24)]
    mueller = build_contact(household, "Jürgen Müller", relation="Nachbar")
    card = create_card(
        household=household,
        kind="contact_picker",
        payload={
            "query": "Wer?",
            "ranked": False,
            "picks": [{"contact_id": c.pk} for c in [*contacts, mueller]],
        },
        created_by=admin_membership.profile,
    )
    return card, mueller


def test_a_long_picker_filters_as_you_type_without_a_reload(
    open_tab, viewport, api, long_card, screenshot
):
    card, mueller = long_card
    page = open_tab(viewport=viewport)
    page.goto(card_link(card))
    page.evaluate("window.loadedOnce = true")
    search = page.get_by_role("searchbox", name="Auf dieser Karte suchen")

    search.press_sequentially("mull")

    visible = page.locator("li.row:visible .row-title")
    assert visible.all_inner_texts() == ["Jürgen Müller"]
    assert page.evaluate("window.loadedOnce") is True
    assert_fits(page)
    screenshot(page, f"picker_search_{viewport}")
    search.fill("zebra")
    assert page.get_by_text("Nichts auf dieser Karte passt dazu.").is_visible()
    assert page.get_by_role("status").inner_text() == "Passende Zeilen: 0"
    search.fill("")
    assert page.locator("li.row:visible").count() == 25
    search.fill("Jürgen")
    page.get_by_role("button", name=re.compile("Jürgen Müller")).click()
    page.get_by_text("Ausgewählt: Jürgen Müller").wait_for()
    answer = api.get(f"/api/cards/{card.pk}/").json()
    assert answer["picked"]["contact_id"] == mueller.pk


def test_a_long_picker_searches_without_javascript(
    open_tab, api, long_card, screenshot
):
    card, mueller = long_card
    page = open_tab(javascript=False)
    page.goto(card_link(card))

    page.get_by_role("searchbox", name="Auf dieser Karte suchen").fill("mueller")
    page.get_by_role("button", name="Suchen").click()

    page.wait_for_url(re.compile(r"[?&]q=mueller"))
    assert page.locator("li.row .row-title").all_inner_texts() == ["Jürgen Müller"]
    screenshot(page, "picker_search_without_javascript")
    page.get_by_role("button", name=re.compile("Jürgen Müller")).click()
    page.get_by_text("Ausgewählt: Jürgen Müller").wait_for()
    assert api.get(f"/api/cards/{card.pk}/").json()["picked"]["id"] == mueller.pk


def test_a_heading_hides_with_the_rows_under_it(open_tab, household, long_card):
    card, _ = long_card
    recent = build_contact(household, "Rita Zuletzt")
    card.payload["picks"].append({"contact_id": recent.pk, "padded": True})
    card.save()
    page = open_tab()
    page.goto(card_link(card))
    heading = page.get_by_role("heading", name="Zuletzt kontaktiert")
    search = page.get_by_role("searchbox", name="Auf dieser Karte suchen")

    search.fill("rita")
    assert heading.is_visible()
    assert page.locator("li.row:visible .row-title").all_inner_texts() == [
        "Rita Zuletzt"
    ]
    search.fill("mull")
    assert heading.is_hidden()
