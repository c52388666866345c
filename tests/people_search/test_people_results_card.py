import pytest
from django.test import Client

from tests.builders import PASSWORD, build_lead, build_member


def open_card(api, query):
    card = api.call("people_search", {"query": query}).json()["card"]
    return Client().get(card["url"])


@pytest.fixture
def people(household, admin_membership):
    build_member(
        household,
        "sabine",
        first_name="Sabine",
        last_name="Meier",
        email="sabine@example.org",
        phone="0171 1234567",
        status="cancelled",
    )
    build_lead(
        household,
        "Peter",
        last_name="Mayer",
        email="peter@example.org",
        status="qualified",
        archived=True,
        owner=admin_membership,
    )


def test_rows_show_contact_role_status_and_similar_names_in_german(api, people):
    response = open_card(api, "Meier")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Sabine Meier" in page
    assert "sabine@<wbr>example.<wbr>org</span> · 0171 1234567" in page
    assert "Mitglied" in page
    assert "Gekündigt" in page
    assert "Peter Mayer" in page
    assert "Qualifiziert" in page
    assert "Archiviert" in page
    assert "Ähnlicher Name" in page


def test_rows_of_a_visitor_log_in_for_the_dashboard_and_come_back(
    api, people, household
):
    page = open_card(api, "Meier").content.decode()

    member = household.memberships.get(profile__username="sabine")
    lead = household.leads.get()
    assert f"for=%2Fde%2Fdashboard%2Fmembers%2F{member.pk}" in page
    assert f"for=%2Fde%2Fdashboard%2Fleads%3Flead%3D{lead.pk}" in page
    assert 'href="/accounts/login/?next=%2Fcards%2F' in page


def test_no_hit_says_no_one_matches(api_as, other_household):
    admin = build_member(other_household, "yael", role="admin")

    page = open_card(api_as(admin), "Gustav").content.decode()

    assert "No one matches that." in page


def test_no_hit_in_german(api):
    assert "Niemand passt dazu." in open_card(api, "Gustav").content.decode()


def test_names_are_escaped(api, household):
    build_lead(household, "<script>alert(1)</script>", last_name="Evil")

    page = open_card(api, "evil").content.decode()

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page


@pytest.fixture
def browser(client, admin_membership):
    client.login(username="anna", password=PASSWORD)
    return client


def test_member_page(browser, household):
    sabine = build_member(household, "sabine", last_name="Meier", email="s@example.org")

    response = browser.get(f"/en/dashboard/members/{sabine.pk}")

    assert response.status_code == 200
    assert "Sabine Meier" in response.content.decode()
    assert "s@example.org" in response.content.decode()


def test_member_page_of_another_household_is_404(browser, other_household):
    stranger = build_member(other_household, "dana")

    assert browser.get(f"/en/dashboard/members/{stranger.pk}").status_code == 404


def test_removed_member_page_is_404(browser, household):
    gone = build_member(household, "rita", status="removed")

    assert browser.get(f"/de/dashboard/members/{gone.pk}").status_code == 404


def test_leads_page_highlights_the_lead(browser, household, admin_membership):
    build_lead(household, "Anna", last_name="Adler", owner=admin_membership)
    dana = build_lead(household, "Dana", last_name="Levi", owner=admin_membership)

    response = browser.get(f"/de/dashboard/leads?lead={dana.pk}")

    page = response.content.decode()
    assert response.status_code == 200
    assert "Anna Adler" in page
    assert f'id="lead-{dana.pk}"' in page
    assert 'aria-current="true"' in page
    assert page.index('aria-current="true"') > page.index(f'id="lead-{dana.pk}"')


def test_leads_page_opens_the_page_holding_the_lead(browser, household):
    for index in range(60):
        build_lead(household, "Lead", last_name=f"{index:03}")
    last = household.leads.get(last_name="059")

    page = browser.get(f"/en/dashboard/leads?lead={last.pk}").content.decode()

    assert "Lead 059" in page
    assert "Page 2 of 2" in page


def test_leads_page_shows_only_visible_leads(client, household, admin_membership):
    build_member(household, "jonas", lead_access="own")
    build_lead(household, "Dana", last_name="Levi", owner=admin_membership)
    client.login(username="jonas", password=PASSWORD)

    page = client.get("/en/dashboard/leads").content.decode()

    assert "Dana Levi" not in page
    assert "No leads to show." in page


def test_dashboard_needs_a_login(client, household, admin_membership):
    response = client.get("/en/dashboard/leads")

    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_members_see_only_the_leads_their_access_allows(api, client, household):
    build_lead(household, "Dana", last_name="Levi", owner=api.membership)
    card = api.call("people_search", {"query": "dana"}).json()["card"]
    build_member(household, "jonas", lead_access="none")
    client.login(username="jonas", password=PASSWORD)

    as_jonas = client.get(f"/cards/{card['id']}/").content.decode()
    through_the_link = Client().get(card["url"]).content.decode()

    assert "Dana Levi" not in as_jonas
    assert "Dana Levi" in through_the_link


def test_the_link_shows_what_the_creator_may_see_now(api, household):
    build_lead(household, "Dana", last_name="Levi", owner=api.membership)
    card = api.call("people_search", {"query": "dana"}).json()["card"]
    api.membership.lead_access = "none"
    api.membership.save()

    assert "Dana Levi" not in Client().get(card["url"]).content.decode()
