"""A card's search field, and the contact pages its rows open through its link."""

import pytest
from django.test import Client

from tests.builders import PASSWORD, build_contact, build_lead, build_member
from yorik.cards import card_link, create_card


def emit(household, kind, payload, *, pick_to_chat=True):
    creator = household.memberships.filter(role="admin").first().profile
    return create_card(
        household=household,
        kind=kind,
        payload=payload,
        created_by=creator,
        pick_to_chat=pick_to_chat,
    )


def token_of(card):
    return card_link(card).split("?t=")[1]


@pytest.fixture
def book(household, admin_membership):
    return {
        "oma": build_contact(
            household,
            "Gisela Becker",
            relation="Großmutter",
            channels=[{"kind": "email", "value": "t.mueller.dresden@example.com"}],
        ),
        "arzt": build_contact(household, "Zahnarztpraxis Dr. Roth", kind="business"),
        "nachbar": build_contact(household, "Jürgen Müller", relation="Nachbar"),
    }


@pytest.fixture
def browse(household, book):
    return emit(household, "contacts_found", {"status": "any"}, pick_to_chat=False)


# Searching a card


def test_the_browse_card_has_a_search_field_that_keeps_the_link(client, browse):
    link = card_link(browse)
    page = client.get(link).text

    assert 'role="search"' in page
    assert '<label for="card-search">Auf dieser Karte suchen</label>' in page
    assert f'name="t" value="{link.split("?t=")[1]}"' in page
    # Each row carries its folded text for the script's filter.
    assert 'data-search="jurgen muller nachbar"' in page


def test_a_plain_get_search_narrows_the_browse_card(client, browse):
    response = client.get(f"{card_link(browse)}&q=Jurgen")

    page = response.text
    assert response.status_code == 200
    assert "Jürgen Müller" in page
    assert "Gisela Becker" not in page
    assert "1 Kontakt" in page
    assert 'value="Jurgen"' in page


def test_a_search_without_a_match_says_so_and_keeps_the_field(client, browse):
    page = client.get(f"{card_link(browse)}&q=Xaver").text

    assert "Nichts auf dieser Karte passt dazu." in page
    assert 'id="card-search"' in page
    assert "Keine Kontakte." not in page


def test_a_search_keeps_the_cards_own_filters(client, household, book):
    card = emit(household, "contacts_found", {"status": "any", "kind": "business"})

    page = client.get(f"{card_link(card)}&q=Roth").text
    assert "Zahnarztpraxis Dr. Roth" in page
    page = client.get(f"{card_link(card)}&q=Müller").text
    assert "Jürgen Müller" not in page


def test_the_people_results_card_is_searched_by_name_and_email(
    api, household, admin_membership
):
    build_member(household, "sabine", first_name="Sabine", last_name="Meier")
    build_lead(household, "Peter", last_name="Meyer", email="peter@example.org")
    url = api.call("people_search", {"query": "Meier"}).json()["card"]["url"]

    everyone = Client().get(url).text
    narrowed = Client().get(f"{url}&q=example").text

    assert "Sabine Meier" in everyone
    assert "Peter Meyer" in everyone
    assert 'data-search="peter meyer peter@example.org"' in everyone
    assert "Peter Meyer" in narrowed
    assert "Sabine Meier" not in narrowed


# Emails in rows


def test_emails_in_rows_may_wrap_after_the_at_and_the_dots(client, household, book):
    card = emit(
        household,
        "contact_picker",
        {"query": "", "ranked": False, "picks": [{"contact_id": book["oma"].pk}]},
    )

    page = client.get(card_link(card)).text

    assert "t.<wbr>mueller.<wbr>dresden@<wbr>example.<wbr>com</span>" in page


def test_an_email_is_escaped_before_it_is_given_breaks(household, admin_membership):
    from people_search.templatetags.emails import email_breaks

    assert email_breaks("<b>@x.org") == (
        '<span class="email">&lt;b&gt;@<wbr>x.<wbr>org</span>'
    )


# Contact pages through a card's link


def contact_link(card, contact, token):
    return f"/cards/{card.pk}/contacts/{contact.pk}/?t={token}"


def test_a_row_of_a_linked_card_opens_the_contact_without_a_login(client, browse, book):
    card_url = card_link(browse)
    page = client.get(card_url).text
    token = card_url.split("?t=")[1]
    link = contact_link(browse, book["oma"], token)
    assert f'href="{link}"' in page

    response = client.get(link)

    assert response.status_code == 200
    details = response.text
    assert "<h1>Gisela Becker</h1>" in details
    assert "Großmutter" in details
    assert "mailto:t.mueller.dresden@example.com" in details
    assert f'href="/cards/{browse.pk}/?t={token}"' in details
    assert "Zurück zur Karte" in details
    assert response.headers["Cache-Control"].startswith("max-age=0")


def test_a_member_without_the_link_opens_the_address_books_page(client, browse, book):
    client.login(username="anna", password=PASSWORD)

    page = client.get(f"/cards/{browse.pk}/").text

    assert f'href="/contacts/{book["oma"].pk}/"' in page


def test_a_contact_the_card_does_not_list_is_not_found(client, household, book):
    card = emit(
        household,
        "contact_picker",
        {"query": "", "ranked": False, "picks": [{"contact_id": book["oma"].pk}]},
        pick_to_chat=False,
    )

    assert (
        client.get(contact_link(card, book["oma"], token_of(card))).status_code == 200
    )
    response = client.get(contact_link(card, book["nachbar"], token_of(card)))

    assert response.status_code == 404
    assert "Jürgen" not in response.text


def test_another_households_contact_is_not_found(client, browse, other_household):
    foreign = build_contact(other_household, "Dana Levi")

    response = client.get(contact_link(browse, foreign, token_of(browse)))

    assert response.status_code == 404
    assert "Dana" not in response.text


def test_a_tampered_link_to_a_contact_gets_the_closed_link_page(client, browse, book):
    response = client.get(contact_link(browse, book["oma"], token_of(browse) + "x"))

    assert response.status_code == 404
    assert "Diese Karte lässt sich nicht öffnen" in response.text
    assert "Gisela" not in response.text


def test_without_a_token_a_visitor_gets_the_closed_link_page(client, browse, book):
    response = client.get(f"/cards/{browse.pk}/contacts/{book['oma'].pk}/")

    assert response.status_code == 404
    assert "Gisela" not in response.text


# The login a members' page asks for


@pytest.mark.parametrize(
    ("path", "sentence"),
    [
        ("/de/dashboard/members/1", "Melde dich an, um dieses Mitglied des Haushalts"),
        ("/de/dashboard/leads", "Melde dich an, um die Leads des Haushalts zu sehen."),
        ("/contacts/1/", "Melde dich an, um diesen Kontakt zu sehen."),
    ],
)
def test_a_members_page_asks_for_a_login_saying_why(client, db, path, sentence):
    response = client.get(path, HTTP_ACCEPT_LANGUAGE="de", follow=True)

    assert response.redirect_chain[-1][0].startswith("/accounts/login/?next=")
    assert sentence in response.text


def test_after_the_login_the_member_is_back_where_the_row_led(
    client, household, admin_membership
):
    sabine = build_member(household, "sabine", last_name="Meier")
    target = f"/de/dashboard/members/{sabine.pk}"

    response = client.post(
        f"/accounts/login/?next={target}",
        {"username": "anna", "password": PASSWORD, "next": target},
    )

    assert response.status_code == 302
    assert response.url == target


def test_a_visitors_row_asks_for_a_login_saying_why_and_returns_to_the_card(
    api, household, admin_membership
):
    import html
    import re

    sabine = build_member(household, "sabine", first_name="Sabine", last_name="Meier")
    url = api.call("people_search", {"query": "Sabine"}).json()["card"]["url"]
    card_path = url.split("testserver", 1)[-1]
    visitor = Client()

    card = visitor.get(card_path).text
    (row,) = re.findall(r'href="([^"]*)"[^>]*>\s*<span class="row-text">', card)
    login = visitor.get(html.unescape(row))
    back = visitor.post(html.unescape(row), {"username": "anna", "password": PASSWORD})

    assert "Log in to see this member of the household." in login.text
    assert back.status_code == 302
    assert back.url == card_path
    member_card = visitor.get(card_path).text
    assert f'href="/de/dashboard/members/{sabine.pk}"' in member_card


def test_a_login_of_its_own_gives_no_reason(client, db):
    page = client.get("/accounts/login/").text

    assert "Log in to" not in page
