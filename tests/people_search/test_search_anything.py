import pytest

from tests.builders import build_contact, build_lead, build_member


@pytest.fixture
def danas(household, admin_membership):
    build_member(household, "dana", first_name="Dana", last_name="Becker")
    build_lead(
        household, "Dana", last_name="Levi", archived=True, owner=admin_membership
    )
    build_contact(household, "Dana Schulz", relation="Freundin")


def search(api, **inputs):
    response = api.call("search_anything", inputs)
    assert response.status_code == 200, response.content
    return [(item["kind"], item["name"]) for item in response.json()["items"]]


def test_all_scopes_by_default(api, danas):
    assert search(api, query="dana") == [
        ("member", "Dana Becker"),
        ("lead", "Dana Levi"),
        ("contact", "Dana Schulz"),
    ]


def test_any_people_scope_runs_both_groups(api, danas):
    assert search(api, query="dana", scopes=["members"]) == [
        ("member", "Dana Becker"),
        ("lead", "Dana Levi"),
    ]
    assert search(api, query="dana", scopes=["contacts"]) == [
        ("contact", "Dana Schulz")
    ]


def test_people_follow_people_search_rules(api, household, danas):
    for index in range(10):
        build_lead(household, "Dana", last_name=f"Z{index}")

    response = api.call("search_anything", {"query": "dana", "limit": 50})

    items = response.json()["items"]
    assert len([i for i in items if i["kind"] == "lead"]) == 8
    assert next(i for i in items if i["name"] == "Dana Levi")["archived"] is True


def test_one_character_finds_nothing(api, danas):
    assert search(api, query="d") == []


def test_lead_visibility_applies(api_as, household, danas):
    member = build_member(household, "jonas", lead_access="none")

    assert ("lead", "Dana Levi") not in search(api_as(member), query="dana")


def test_bad_scope_is_invalid_input(api):
    response = api.call("search_anything", {"query": "dana", "scopes": ["files"]})

    assert response.status_code == 400
    assert "scopes[0]" in response.json()["error"]["fields"]


def test_contacts_are_found_and_ranked_as_find_person_ranks_them(api, household):
    build_contact(household, "Thomas Müller", relation="Kollege")
    build_contact(household, "Ruth Adler", aliases=["Oma Ruth"])
    build_contact(household, "Gisela Becker", relation="Großmutter", aliases=["Oma"])
    build_contact(household, "Frank Neumann", relation="Steuerberater")

    assert search(api, query="Oma", scopes=["contacts"]) == [
        ("contact", "Gisela Becker"),
        ("contact", "Ruth Adler"),
    ]
    assert search(api, query="grandma", scopes=["contacts"]) == [
        ("contact", "Gisela Becker"),
        ("contact", "Ruth Adler"),
    ]
    assert search(api, query="mein Steuerberater") == [("contact", "Frank Neumann")]
