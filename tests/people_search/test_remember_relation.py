"""remember_relation, and find_person answering each member with their own words."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from household.callers import MemberCaller
from household.models import Membership
from tests.builders import build_contact, build_member
from tests.conftest import mcp_error
from yorik.registry import get_skill


@pytest.fixture
def anna(admin_membership):
    return admin_membership


@pytest.fixture
def tom(household):
    return build_member(household, "tom", first_name="Tom", last_name="Becker")


@pytest.fixture
def ruth(household):
    return build_contact(
        household,
        "Ruth Adler",
        first_name="Ruth",
        last_name="Adler",
        relation="Schwiegermutter",
        aliases=["Oma Ruth"],
    )


@pytest.fixture
def gisela(household):
    return build_contact(
        household,
        "Gisela Becker",
        first_name="Gisela",
        last_name="Becker",
        relation="Großmutter",
    )


def rows(response):
    assert response.status_code == 200, response.content
    return [
        (row["source"], row["id"], row["match"]) for row in response.json()["results"]
    ]


def test_toms_word_is_his_alone(api_as, anna, tom, ruth):
    taught = api_as(tom).call(
        "remember_relation", {"contact_id": ruth.pk, "word": "Mutter"}
    )

    assert taught.status_code == 200, taught.content
    assert taught.json() == {
        "remembered": True,
        "word": "Mutter",
        "target": {"source": "contacts", "id": ruth.pk, "name": "Ruth Adler"},
    }
    toms = api_as(tom).call("find_person", {"query": "meiner Mutter"})
    assert rows(toms)[0] == ("contacts", ruth.pk, "learned")
    assert toms.json()["ambiguous"] is False
    annas = api_as(anna).call("find_person", {"query": "meine Mutter"})
    assert "learned" not in {match for _, _, match in rows(annas)}


def test_annas_words_do_not_reach_toms_answers(api_as, anna, tom, ruth, gisela):
    api_as(anna).call("remember_relation", {"contact_id": gisela.pk, "word": "Oma"})
    api_as(tom).call("remember_relation", {"contact_id": ruth.pk, "word": "Oma"})

    annas = rows(api_as(anna).call("find_person", {"query": "Oma"}))
    toms = rows(api_as(tom).call("find_person", {"query": "Oma"}))

    assert annas[0] == ("contacts", gisela.pk, "learned")
    assert ("contacts", ruth.pk, "learned") not in annas
    assert toms[0] == ("contacts", ruth.pk, "learned")
    assert ("contacts", gisela.pk, "learned") not in toms


def test_the_other_candidates_follow_the_learned_row(api_as, tom, ruth, gisela):
    api_as(tom).call("remember_relation", {"contact_id": gisela.pk, "word": "Oma"})

    response = api_as(tom).call("find_person", {"query": "Oma", "source": "contacts"})

    assert rows(response) == [
        ("contacts", gisela.pk, "learned"),
        ("contacts", ruth.pk, "alias"),
    ]
    assert response.json()["ambiguous"] is False
    assert "card" not in response.json()


@pytest.mark.parametrize(
    ("word", "query"),
    [
        ("Mama", "Mutter"),
        ("meine Schwiegermutter", "mother-in-law"),
        ("Oma", "meine Omi"),
        ("mein Chef", "der Chef"),
    ],
)
def test_a_word_finds_its_concept_and_its_inflections(api_as, tom, ruth, word, query):
    api_as(tom).call("remember_relation", {"contact_id": ruth.pk, "word": word})

    response = api_as(tom).call("find_person", {"query": query})

    assert rows(response)[0] == ("contacts", ruth.pk, "learned")


def test_a_word_for_another_member_finds_them_as_a_household_row(api_as, anna, tom):
    taught = api_as(tom).call(
        "remember_relation", {"user_id": anna.profile_id, "word": "meine Frau"}
    )
    assert taught.json()["target"] == {
        "source": "household",
        "id": anna.profile_id,
        "name": "Anna Becker",
    }

    response = api_as(tom).call("find_person", {"query": "meine Frau"})

    assert rows(response)[0] == ("household", anna.profile_id, "learned")
    contacts_only = api_as(tom).call(
        "find_person", {"query": "meine Frau", "source": "contacts"}
    )
    assert ("household", anna.profile_id, "learned") not in rows(contacts_only)


def test_two_people_under_one_word_stay_ambiguous_with_a_picker(
    api_as, tom, ruth, gisela
):
    for contact in (ruth, gisela):
        api_as(tom).call("remember_relation", {"contact_id": contact.pk, "word": "Oma"})

    response = api_as(tom).call("find_person", {"query": "Oma"})

    assert rows(response)[:2] == [
        ("contacts", gisela.pk, "learned"),
        ("contacts", ruth.pk, "learned"),
    ]
    assert response.json()["ambiguous"] is True
    assert response.json()["card"]["kind"] == "contact_picker"
    page = Client().get(response.json()["card"]["url"]).content.decode()
    assert page.count("Dein Wort") == 2


def test_forget_removes_the_word_and_is_idempotent(api_as, tom, ruth):
    api_as(tom).call("remember_relation", {"contact_id": ruth.pk, "word": "Mutter"})
    again = api_as(tom).call(
        "remember_relation", {"contact_id": ruth.pk, "word": "Mutter"}
    )
    assert again.json()["remembered"] is True

    for _ in range(2):
        forgotten = api_as(tom).call(
            "remember_relation",
            {"contact_id": ruth.pk, "word": "Mutter", "forget": True},
        )
        assert forgotten.status_code == 200
        assert forgotten.json()["remembered"] is False

    response = api_as(tom).call("find_person", {"query": "Mutter"})
    assert "learned" not in {match for _, _, match in rows(response)}
    assert Membership.objects.get(pk=tom.pk).has_personal_words is False


@pytest.mark.parametrize(
    "inputs",
    [
        {"word": "Mutter"},
        {"word": "Mutter", "contact_id": 1, "user_id": 1},
        {"word": "!!! 42", "contact_id": 1},
        {"word": "x" * 61, "contact_id": 1},
        {"word": "Mutter", "contact_id": 1, "forget": "yes"},
    ],
)
def test_bad_inputs_are_invalid_and_change_nothing(api_as, tom, inputs):
    response = api_as(tom).call("remember_relation", inputs)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"
    assert not tom.personal_words.exists()


def test_the_callers_own_profile_is_invalid(api_as, tom):
    response = api_as(tom).call(
        "remember_relation", {"user_id": tom.profile_id, "word": "ich"}
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "user_id": ["Your own profile needs no word of yours."]
    }


def test_another_households_ids_are_not_found(api_as, tom, other_household):
    theirs = build_contact(other_household, "Dana Levi")
    member = build_member(other_household, "dana")

    for inputs in ({"contact_id": theirs.pk}, {"user_id": member.profile_id}):
        response = api_as(tom).call("remember_relation", {**inputs, "word": "Freundin"})
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert not tom.personal_words.exists()


def test_restricted_members_may_not_teach(api_as, household, ruth):
    child = build_member(household, "lina", role="child")
    viewer = build_member(household, "opa", role="viewer")

    for membership in (viewer,):
        response = api_as(membership).call(
            "remember_relation", {"contact_id": ruth.pk, "word": "Oma"}
        )
        assert response.status_code == 403
    assert get_skill("remember_relation").permissions == ("admin", "member")
    assert child.tier == "restricted"


def test_the_skill_over_mcp(mcp_as, tom, ruth):
    client = mcp_as(tom)
    tool = next(t for t in client.tools() if t["name"] == "remember_relation")

    assert tool["annotations"]["readOnlyHint"] is False
    assert tool["annotations"]["destructiveHint"] is False
    assert tool["annotations"]["idempotentHint"] is True
    result = client.call("remember_relation", {"contact_id": ruth.pk, "word": "Mama"})
    assert result.get("isError") is not True, result
    assert result["structuredContent"]["remembered"] is True
    found = client.call("find_person", {"query": "Mutter"})
    assert found["structuredContent"]["results"][0]["match"] == "learned"
    refused = client.call("remember_relation", {"user_id": tom.profile_id, "word": "x"})
    assert mcp_error(refused)["code"] == "invalid_input"


def test_the_skill_is_in_the_manifests_and_tools(api_as, tom):
    manifests = api_as(tom).get("/api/skills/").json()["skills"]
    manifest = next(m for m in manifests if m["name"] == "remember_relation")
    assert set(manifest["inputs"]) == {"contact_id", "user_id", "word", "forget"}
    assert manifest["inputs"]["word"]["maxLength"] == 60
    find_person = next(m for m in manifests if m["name"] == "find_person")
    match_enum = find_person["outputs"]["results"]["items"]
    assert "learned" in str(match_enum)
    for flavor in ("openai", "anthropic"):
        tools = api_as(tom).get("/api/skills/tools/", flavor=flavor).json()["tools"]
        assert "remember_relation" in str(tools)
    schema = api_as(tom).client.get("/api/schema/").content.decode()
    assert "/api/skills/remember_relation/call/" in schema


def selects(membership, inputs):
    caller = MemberCaller(
        membership=Membership.objects.select_related("household", "profile").get(
            pk=membership.pk
        )
    )
    found = get_skill("find_person")
    validated = found.input_serializer(data=inputs)
    validated.is_valid(raise_exception=True)
    with CaptureQueriesContext(connection) as context:
        found.run(caller, **validated.validated_data)
    return len(context.captured_queries)


def test_words_cost_one_select_and_nothing_for_who_taught_none(
    api_as, anna, tom, ruth, gisela
):
    inputs = {"query": "Oma", "source": "contacts"}
    selects(tom, inputs)  # The household's size is counted once in 5 minutes.
    untaught = selects(tom, inputs)
    api_as(anna).call("remember_relation", {"contact_id": ruth.pk, "word": "Oma"})

    assert selects(tom, inputs) == untaught
    api_as(tom).call("remember_relation", {"contact_id": gisela.pk, "word": "Opa"})
    assert selects(tom, inputs) == untaught + 1
    assert selects(anna, inputs) == untaught + 1


def test_a_word_for_a_member_is_read_in_one_select(api_as, anna, tom):
    """The members a word may name are read in the same statement as the
    words, not in one of their own."""
    api_as(tom).call(
        "remember_relation", {"user_id": anna.profile_id, "word": "Chefin"}
    )

    with CaptureQueriesContext(connection) as context:
        response = api_as(tom).call("find_person", {"query": "Chefin"})

    (row, *_) = response.json()["results"]
    assert (row["source"], row["id"], row["match"]) == (
        "household",
        anna.profile_id,
        "learned",
    )
    words = [
        q["sql"] for q in context.captured_queries if "FROM personal_words" in q["sql"]
    ]
    assert len(words) == 1


@pytest.mark.parametrize("forget", [False, True])
def test_remembering_costs_what_the_manifest_says(tom, ruth, forget):
    caller = MemberCaller(
        membership=Membership.objects.select_related("household", "profile").get(
            pk=tom.pk
        )
    )
    inputs = {"contact_id": ruth.pk, "word": "Mutter", "forget": forget}

    with CaptureQueriesContext(connection) as context:
        get_skill("remember_relation").run(caller, **inputs)

    statements = [query["sql"].split()[0] for query in context.captured_queries]
    assert statements.count("SELECT") == 2
    assert (
        get_skill("remember_relation")
        .manifest()["cost"]
        .startswith("2 indexed SELECTs")
    )
