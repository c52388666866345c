"""A card's search field, its sticky index, and the pages its rows open."""

import pytest

from people_search.engine.text import fold_name
from tests.browser.conftest import VIEWPORT_IDS, VIEWPORTS
from tests.builders import PASSWORD, build_contact, build_member
from yorik.cards import card_link, create_card

pytestmark = pytest.mark.browser

TRADES = ["Bau", "Druck", "Elektrik", "Fenster", "Garten", "Heizung", "Haus", "Kfz"]
NAMES = [
    f"{family} {trade}"
    for family in ["Adler", "Becker", "Müller", "Schmidt", "Weber", "Zander"]
    for trade in TRADES
]


def relative(url):
    return url.split("testserver", 1)[-1]


def browse_card(household, *, pick_to_chat=True):
    for name in NAMES:
        build_contact(household, name)
    return create_card(
        household=household,
        kind="contacts_found",
        payload={"status": "any"},
        created_by=household.memberships.get(profile__username="anna").profile,
        pick_to_chat=pick_to_chat,
    )


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=VIEWPORT_IDS)
def test_the_browse_card_filters_as_you_type_without_a_reload(
    page, household, admin_membership, screenshot, accessible, viewport
):
    page.set_viewport_size(viewport)
    card = browse_card(household)
    page.goto(relative(card_link(card)))
    rows = page.locator("li.row:visible")
    assert rows.count() == len(NAMES)
    accessible(page)
    page.evaluate("window.notReloaded = true")

    page.get_by_label("Auf dieser Karte suchen").press_sequentially("mull")

    assert rows.count() == 8
    assert all("Müller" in title for title in rows.all_inner_texts())
    # Only the letter that still has rows stays in the index.
    assert page.locator(".letter-index li:visible").all_inner_texts() == ["M"]
    assert page.get_by_role("status").inner_text() == "Passende Zeilen: 8"
    assert page.evaluate("window.notReloaded") is True
    name = "phone" if viewport["width"] < 600 else "desktop"
    screenshot(page, f"browse_card_search_{name}")

    page.get_by_label("Auf dieser Karte suchen").fill("xaver")
    assert rows.count() == 0
    assert page.get_by_text("Nichts auf dieser Karte passt dazu.").is_visible()


def test_the_letter_index_stays_in_view_while_the_list_scrolls(
    page, household, admin_membership, screenshot
):
    card = browse_card(household)
    page.goto(relative(card_link(card)))
    index = page.locator(".letter-index")

    page.mouse.wheel(0, 3000)
    page.wait_for_function("scrollY > 2000")

    assert index.evaluate("element => element.getBoundingClientRect().top") == 0
    assert index.is_visible()
    height = index.evaluate("element => element.getBoundingClientRect().height")
    assert height < 70  # one row of letters, scrolled sideways on a phone
    screenshot(page, "browse_card_scrolled", full_page=False)

    index.get_by_role("link", name="W").click()
    heading = page.locator("#letter-W")
    top = heading.evaluate("element => element.getBoundingClientRect().top")
    assert top >= height


def test_the_search_works_as_a_plain_get_without_javascript(
    chromium, live_server, household, admin_membership
):
    card = browse_card(household)
    context = chromium.new_context(
        base_url=live_server.url,
        viewport=VIEWPORTS[0],
        locale="de-DE",
        java_script_enabled=False,
    )
    page = context.new_page()
    try:
        page.goto(relative(card_link(card)))
        page.get_by_label("Auf dieser Karte suchen").fill("Zander")
        page.get_by_role("button", name="Suchen").click()

        page.wait_for_url("**q=Zander**")
        titles = page.locator(".row-title").all_inner_texts()
        assert len(titles) == 8
        assert all(title.startswith("Zander") for title in titles)
        assert "8 Kontakte" in page.locator(".intro").inner_text()
    finally:
        context.close()


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=VIEWPORT_IDS)
def test_a_row_opens_its_contact_through_the_cards_link(
    page, household, admin_membership, screenshot, accessible, viewport
):
    page.set_viewport_size(viewport)
    card = browse_card(household, pick_to_chat=False)
    build_contact(
        household,
        "Thomas Müller-Lüdenscheidt",
        relation="Steuerberater",
        channels=[
            {"kind": "email", "value": "t.mueller.luedenscheidt@example.com"},
            {"kind": "phone", "value": "030 1234567"},
        ],
        addresses=[{"kind": "work", "line1": "Hauptstr. 5", "city": "Berlin"}],
    )
    page.goto(relative(card_link(card)))

    page.get_by_role("link", name="Thomas Müller-Lüdenscheidt").click()

    page.get_by_role("heading", level=1, name="Thomas Müller-Lüdenscheidt").wait_for()
    assert "/accounts/login/" not in page.url
    assert page.get_by_text("Steuerberater").is_visible()
    assert page.get_by_role("link", name="030 1234567").is_visible()
    accessible(page)
    name = "phone" if viewport["width"] < 600 else "desktop"
    screenshot(page, f"card_contact_page_{name}")
    page.get_by_role("link", name="Zurück zur Karte").click()
    page.get_by_role("heading", level=1, name="Kontakte").wait_for()


def test_a_people_results_row_asks_for_a_login_saying_why_and_returns_to_the_card(
    page, api, household, screenshot, accessible
):
    build_member(household, "sabine", first_name="Sabine", last_name="Meier")
    url = api.call("people_search", {"query": "Sabine"}).json()["card"]["url"]
    page.goto(relative(url))
    accessible(page)

    page.get_by_role("link", name="Sabine Meier").click()

    page.wait_for_url("**/accounts/login/?next=**")
    assert page.get_by_text(
        "Melde dich an, um dieses Mitglied des Haushalts zu sehen."
    ).is_visible()
    accessible(page)
    screenshot(page, "login_says_why")
    page.get_by_label("Benutzername").fill("anna")
    page.get_by_label("Passwort").fill(PASSWORD)
    page.get_by_role("button", name="Anmelden").click()

    # Back on the card, now as a member: the row opens the member's page.
    page.wait_for_url(f"**{relative(url)}")
    page.get_by_role("link", name="Sabine Meier").click()
    page.get_by_role("heading", level=1, name="Sabine Meier").wait_for()
    assert "/de/dashboard/members/" in page.url
    accessible(page)


def test_the_scripts_fold_is_the_servers_fold(page, household, admin_membership):
    """A typed query is folded as the rows' data-search, or a row never matches."""
    page.goto(relative(card_link(browse_card(household))))
    samples = [
        "Jürgen MÜLLER",
        "Straße STRASSE ẞ",
        "Ærø Œuvre Łódź Đorđe",
        "Þórður Eyjólfsdóttir",
        "I\u011fd\u0131r \u0131l\u0131k",  # dotless i
        "O\u2019Brien O\u2018Neil O`Hara O\u00b4Dea",  # apostrophes
        "Ångström Çelik Zoë Dvořák",
    ]

    folded = page.evaluate("samples => samples.map(fold)", samples)

    assert folded == [fold_name(sample) for sample in samples]
