"""Every URL pattern has an authorisation test, or is public for a stated reason.

Add a route, and test_every_route_has_an_authorisation_test fails until its
authorisation is tested and listed in COVERED_BY (or it is listed in
routes.PUBLIC_ROUTES). Django admin's URLs are one group, covered by
test_admin.py, which iterates every registered model.
"""

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import get_resolver

from tests.isolation import (
    test_admin,
    test_cross_household,
    test_hostile_text,
    test_mcp,
    test_pages,
    test_tiers,
    test_tokens,
)
from tests.isolation.routes import PUBLIC_ROUTES, SKILL_CALL, all_routes
from tests.isolation.world import shows_b

# The agent API's routes are all in the token matrix (test_tokens iterates them).
API_AUTH = [
    test_tokens.test_bad_authorization_is_401_json,
    test_tokens.test_a_logged_in_session_is_no_api_credential,
]
COVERED_BY: dict[str, list[Callable[..., None]]] = {
    "cards/<uuid:card_id>/": [
        test_pages.test_bs_card_page_is_404_for_as_session,
        test_pages.test_a_tampered_link_of_bs_card_is_404,
        test_pages.test_cards_need_a_session_or_link,
        test_hostile_text.test_card_pages_escape_hostile_names,
        test_pages.test_logins_without_an_acting_membership_see_nothing,
        test_pages.test_an_offboarded_members_card_links_open_nothing,
        test_pages.test_a_logged_in_member_sees_a_people_card_by_their_own_lead_access,
    ],
    "cards/<uuid:card_id>/pick/": [
        test_pages.test_bs_card_cannot_be_picked_from_as_session,
        test_pages.test_as_card_refuses_a_pick_of_bs_contact,
        test_pages.test_as_card_through_its_link_refuses_a_pick_of_bs_contact,
        test_pages.test_cards_need_a_session_or_link,
        test_pages.test_logins_without_an_acting_membership_cannot_pick,
        test_pages.test_an_offboarded_members_card_links_open_nothing,
    ],
    "cards/<uuid:card_id>/contacts/<int:contact_id>/": [
        test_pages.test_as_card_link_opens_none_of_bs_contacts,
        test_pages.test_bs_card_opens_no_contact_for_as_session_or_a_tampered_link,
        test_pages.test_a_card_contact_link_of_an_offboarded_creator_opens_nothing,
    ],
    "contacts/": [
        test_pages.test_contact_list_shows_nothing_of_b,
        test_pages.test_every_status_filter_stays_in_the_household,
        test_pages.test_anonymous_visitors_are_sent_to_log_in_or_get_404,
        test_pages.test_logins_without_an_acting_membership_see_nothing,
    ],
    "contacts/<int:contact_id>/": [
        test_pages.test_bs_contacts_are_404,
        test_pages.test_anonymous_visitors_are_sent_to_log_in_or_get_404,
        test_pages.test_logins_without_an_acting_membership_see_nothing,
    ],
    "^(?P<lang>de|en)/dashboard/members/(?P<membership_id>[0-9]+)$": [
        test_pages.test_bs_members_are_404_on_the_dashboard,
        test_pages.test_anonymous_visitors_are_sent_to_log_in_or_get_404,
        test_pages.test_logins_without_an_acting_membership_see_nothing,
    ],
    "^(?P<lang>de|en)/dashboard/words$": [
        test_pages.test_the_words_page_shows_nothing_of_b_and_deletes_none_of_bs_words,
        test_pages.test_a_members_words_page_lists_only_their_own,
        test_pages.test_anonymous_visitors_are_sent_to_log_in_or_get_404,
        test_pages.test_logins_without_an_acting_membership_see_nothing,
    ],
    "cards/<uuid:card_id>/forget/": [
        test_pages.test_bs_card_lesson_cannot_be_undone_from_as_session,
        test_pages.test_logins_without_an_acting_membership_cannot_undo_a_lesson,
    ],
    "^(?P<lang>de|en)/dashboard/leads$": [
        test_pages.test_leads_page_never_lists_or_highlights_bs_lead,
        test_pages.test_anonymous_visitors_are_sent_to_log_in_or_get_404,
        test_pages.test_logins_without_an_acting_membership_see_nothing,
    ],
    "api/cards/<uuid:card_id>/": [
        *API_AUTH,
        test_cross_household.test_bs_cards_are_404_on_the_card_api,
        test_cross_household.test_another_members_card_answers_as_a_missing_one,
    ],
    "api/agent/turns/": [
        *API_AUTH,
        test_cross_household.test_bs_conversation_is_404_on_the_agent_api,
        test_cross_household.test_another_members_conversation_is_404_too,
        test_cross_household.test_the_direct_lane_finds_nothing_of_b,
    ],
    "api/agent/usage/": [
        *API_AUTH,
        test_cross_household.test_bs_conversation_is_404_on_the_agent_api,
        test_cross_household.test_another_members_conversation_is_404_too,
    ],
    "api/skills/": [
        *API_AUTH,
        test_tiers.test_skill_list_holds_exactly_the_tiers_skills,
    ],
    "api/skills/tools/": [
        *API_AUTH,
        test_tiers.test_tools_are_exactly_the_tiers_skills,
    ],
    "api/skills/<str:name>/": [
        *API_AUTH,
        test_tiers.test_manifest_is_readable_exactly_for_the_manifests_tiers,
    ],
    # Every skill as an MCP tool: the REST matrices, sent through /mcp/.
    "mcp/": [
        test_mcp.test_bad_authorization_is_401_on_mcp,
        test_mcp.test_a_logged_in_session_is_no_mcp_credential,
        test_mcp.test_tools_list_holds_exactly_the_tiers_skills,
        test_mcp.test_tool_call_is_allowed_exactly_for_the_tiers,
        test_mcp.test_tool_queries_for_bs_data_find_nothing,
        test_mcp.test_ranked_picks_of_bs_contacts_are_dropped_from_the_tools_card,
        test_mcp.test_bs_ids_answer_exactly_as_missing_ids_do,
    ],
    # Names without a route of their own: unknown skills, refused or 404.
    "api/skills/<str:name>/call/": API_AUTH,
    SKILL_CALL: [
        *API_AUTH,
        test_tiers.test_call_is_allowed_exactly_for_the_manifests_tiers,
        test_cross_household.test_queries_for_bs_data_find_nothing,
        test_cross_household.test_ranked_picks_of_bs_contacts_are_dropped_never_rendered,
        test_cross_household.test_recipient_check_of_bs_rows_is_404,
    ],
}
ADMIN_COVERED_BY = [
    test_admin.test_bs_rows_are_out_of_reach,
    test_admin.test_model_views_show_nothing_of_b,
    test_admin.test_bs_rows_cannot_be_deleted,
    test_admin.test_changelists_show_nothing_of_b,
    test_admin.test_own_rows_views_show_nothing_of_b,
    test_admin.test_autocomplete_offers_nothing_of_b,
    test_admin.test_view_on_site_of_bs_rows_leads_nowhere,
]


def test_every_route_has_an_authorisation_test():
    missing = sorted(
        {
            route.pattern
            for route in all_routes()
            if route.inventory_key not in COVERED_BY
            and route.inventory_key not in PUBLIC_ROUTES
        }
    )

    assert not missing, (
        "These URL patterns have no authorisation test: "
        + ", ".join(missing)
        + ". Test who may and who may not reach them in tests/isolation and "
        "list the tests in COVERED_BY of test_route_inventory.py, or list a "
        "route that needs no login in routes.PUBLIC_ROUTES with the reason."
    )


def test_the_inventory_names_no_route_that_is_gone():
    keys = {route.inventory_key for route in all_routes()}

    assert not (set(COVERED_BY) | set(PUBLIC_ROUTES)) - keys


def test_every_listed_test_is_a_test_function():
    listed = [*ADMIN_COVERED_BY, *(t for tests in COVERED_BY.values() for t in tests)]

    assert all(test.__name__.startswith("test_") for test in listed)


def test_public_and_covered_routes_do_not_overlap():
    assert not set(COVERED_BY) & set(PUBLIC_ROUTES)


def test_the_admin_group_is_mounted_once():
    admin_resolvers = [
        entry
        for entry in get_resolver().url_patterns
        if getattr(entry, "namespace", None) == "admin"
    ]

    assert len(admin_resolvers) == 1
    assert ADMIN_COVERED_BY


# The public routes themselves


@pytest.mark.django_db
def test_the_login_page_shows_no_household_data(world):
    response = Client().get(
        "/accounts/login/", {"next": f"/contacts/{world.b.contact.pk}/"}
    )

    assert response.status_code == 200
    assert not shows_b(response.content.decode())


@pytest.mark.django_db
def test_logging_out_shows_nothing_and_takes_no_get(world, browser_of):
    browser = browser_of(world.b.admin)

    assert browser.get("/accounts/logout/").status_code == 405
    response = browser.post("/accounts/logout/", follow=True)
    assert not shows_b(response.content.decode())


@pytest.mark.django_db
def test_the_protected_resource_metadata_holds_no_household_data(world):
    response = Client().get("/.well-known/oauth-protected-resource")

    assert response.status_code == 200
    assert set(response.json()) == {
        "resource",
        "bearer_methods_supported",
        "resource_name",
    }
    assert not shows_b(response.content.decode())


@pytest.mark.django_db
def test_the_schema_holds_no_household_data(world):
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    assert not shows_b(response.content.decode())
    assert world.a.contact.display_name not in response.content.decode()
