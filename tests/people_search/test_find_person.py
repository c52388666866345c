import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from household.models import MembershipStatus
from tests.builders import build_contact, build_member
from yorik.models import Card


def names(response, key="display_name"):
    return [row[key] for row in response.json()["results"]]


@pytest.fixture
def uncle(household):
    return build_contact(
        household,
        "Hans Becker",
        first_name="Hans",
        last_name="Becker",
        relation="Onkel",
        aliases=["Onkel Hans"],
        channels=[
            {"kind": "phone", "value": "030 1234567", "label": "mobil"},
            {"kind": "email", "value": "hans@example.org"},
            {"kind": "whatsapp", "value": "491711234567@s.whatsapp.net"},
        ],
        addresses=[
            {
                "kind": "home",
                "line1": "Hauptstr. 5",
                "postcode": "10115",
                "city": "Berlin",
            },
            {"kind": "work", "line1": "Werkstr. 1", "city": "Potsdam"},
        ],
    )


def test_contact_rows_carry_channels_and_addresses(api, uncle):
    response = api.call("find_person", {"query": "Hans", "source": "contacts"})

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    assert body["ambiguous"] is False
    assert "card" not in body
    assert body["results"] == [
        {
            "source": "contacts",
            "id": uncle.pk,
            "display_name": "Hans Becker",
            "relation": "Onkel",
            "kind": "person",
            "channels": [
                {"kind": "phone", "value": "+49301234567", "label": "mobil"},
                {"kind": "email", "value": "hans@example.org", "label": ""},
                {
                    "kind": "whatsapp",
                    "value": "491711234567@s.whatsapp.net",
                    "label": "",
                },
            ],
            "addresses": [
                {
                    "kind": "home",
                    "line1": "Hauptstr. 5",
                    "line2": "",
                    "postcode": "10115",
                    "city": "Berlin",
                    "country": "",
                },
                {
                    "kind": "work",
                    "line1": "Werkstr. 1",
                    "line2": "",
                    "postcode": "",
                    "city": "Potsdam",
                    "country": "",
                },
            ],
            "match": "name",
        }
    ]


def test_household_rows_carry_the_user_id_and_role(api, household):
    jonas = build_member(household, "jonas", last_name="Becker", email="j@example.org")

    response = api.call("find_person", {"query": "jonas", "source": "household"})

    assert response.json()["results"] == [
        {
            "source": "household",
            "id": jonas.profile.pk,
            "name": "Jonas Becker",
            "first_name": "Jonas",
            "last_name": "Becker",
            "role": "member",
            "email": "j@example.org",
            "match": "name",
        }
    ]


def test_auto_searches_both_sources_and_tags_each_row(api, household, uncle):
    build_member(household, "hans", first_name="Hans", last_name="Meier")

    response = api.call("find_person", {"query": "hans"})

    body = response.json()
    assert sorted((row["source"], row["id"] > 0) for row in body["results"]) == [
        ("contacts", True),
        ("household", True),
    ]
    assert body["count"] == 2
    assert body["ambiguous"] is True


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("Jürgen Müller", "Mueller"),
        ("Jürgen Müller", "muller"),
        ("Jürgen Mueller", "Müller"),
        ("Johann Strauß", "strauss"),
        ("Johann Strauss", "Strauß"),
        ("Zoë Cohen", "Zoe"),
        ("Zoe Cohen", "ZOË"),
        ("Renée Dubois", "renee"),
    ],
)
def test_spellings_find_each_other(api, household, stored, query):
    build_contact(household, stored)

    assert names(api.call("find_person", {"query": query, "source": "contacts"})) == [
        stored
    ]


def test_every_term_must_match_some_column(api, household, uncle):
    build_contact(household, "Hans Meier")

    assert names(api.call("find_person", {"query": "becker, hans"})) == ["Hans Becker"]
    assert names(api.call("find_person", {"query": "onkel hans"})) == ["Hans Becker"]
    assert names(api.call("find_person", {"query": "hans@example"})) == ["Hans Becker"]
    assert names(api.call("find_person", {"query": "hans schmidt"})) == []


def test_relation_and_alias_match(api, household):
    build_contact(household, "Gisela Becker", relation="Großmutter", aliases=["Oma"])

    assert names(api.call("find_person", {"query": "oma"})) == ["Gisela Becker"]
    assert names(api.call("find_person", {"query": "grossmutter"})) == ["Gisela Becker"]


def test_ranking_exact_then_prefix_then_other(api, household):
    build_contact(household, "Anna Schmidt")
    build_contact(household, "Annabell Zorn")
    build_contact(household, "Zahnarzt", relation="Anna's dentist", aliases=[])
    build_contact(household, "Anna")

    response = api.call("find_person", {"query": "anna", "source": "contacts"})

    assert names(response) == ["Anna", "Anna Schmidt", "Annabell Zorn", "Zahnarzt"]


def test_no_query_lists_everyone_in_the_source(api, household):
    build_member(household, "jonas")
    build_member(household, "mia", role="child")

    response = api.call("find_person", {"source": "household"})

    assert names(response, "first_name") == ["Anna", "Jonas", "Mia"]
    assert response.json()["count"] == 3


def test_household_skips_removed_members_and_deleted_profiles(api, household):
    from django.utils import timezone

    build_member(household, "rita", status=MembershipStatus.REMOVED)
    build_member(household, "paula", status=MembershipStatus.PAUSED)
    gone = build_member(household, "dora")
    gone.profile.deleted_at = timezone.now()
    gone.profile.save()

    response = api.call("find_person", {"source": "household"})

    assert names(response, "first_name") == ["Anna", "Paula"]


def test_role_filter_applies_to_household_and_kind_to_contacts(api, household):
    build_member(household, "jonas")
    build_contact(household, "Anna Zahnarztpraxis", kind="business")
    build_contact(household, "Anna Person")

    response = api.call(
        "find_person", {"query": "anna", "role": "admin", "kind": "business"}
    )

    assert [
        (r["source"], r.get("role") or r["kind"]) for r in response.json()["results"]
    ] == [
        ("household", "admin"),
        ("contacts", "business"),
    ]


def test_status_defaults_to_active_and_pending(api, household):
    for status in ("active", "pending", "spam", "archived"):
        build_contact(household, f"Müller {status}", status=status)

    default = api.call("find_person", {"query": "muller", "source": "contacts"})
    spam = api.call("find_person", {"query": "muller", "status": "spam"})

    assert names(default) == ["Müller active", "Müller pending"]
    assert names(spam) == ["Müller spam"]


@pytest.mark.parametrize(
    "typed", ["030 1234567", "+49 30 1234567", "0049301234567", "(030) 123-45-67"]
)
def test_channel_lookup_reads_phones_in_the_household_region(api, uncle, typed):
    response = api.call(
        "find_person",
        {"source": "contacts", "channel_kind": "phone", "channel_value": typed},
    )

    assert names(response) == ["Hans Becker"]


def test_channel_lookup_of_an_email_ignores_case(api, uncle):
    response = api.call(
        "find_person", {"channel_kind": "email", "channel_value": "HANS@example.org"}
    )

    assert names(response) == ["Hans Becker"]


def test_shared_landline_finds_both_contacts(api, household):
    for name in ("Gisela Becker", "Walter Becker"):
        build_contact(
            household, name, channels=[{"kind": "phone", "value": "030 555666"}]
        )

    response = api.call(
        "find_person", {"channel_kind": "phone", "channel_value": "030555666"}
    )

    assert names(response) == ["Gisela Becker", "Walter Becker"]
    assert response.json()["ambiguous"] is True


def test_channel_value_without_kind_is_invalid(api):
    response = api.call("find_person", {"channel_value": "030 1234567"})

    assert response.status_code == 400
    assert "channel_kind" in response.json()["error"]["fields"]


def test_channel_kind_without_value_is_invalid(api):
    response = api.call("find_person", {"channel_kind": "phone"})

    assert response.status_code == 400
    assert "channel_value" in response.json()["error"]["fields"]


def test_unparseable_channel_phone_is_invalid(api):
    response = api.call(
        "find_person", {"channel_kind": "phone", "channel_value": "abc"}
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"]["channel_value"] == [
        "not a phone number for region DE"
    ]


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"source": "everywhere"}, "source"),
        ({"kind": "robot"}, "kind"),
        ({"role": "king"}, "role"),
        ({"status": "deleted"}, "status"),
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"limit": "10"}, "limit"),
        ({"limit": True}, "limit"),
        ({"query": ["a"]}, "query"),
        ({"query": "x" * 201}, "query"),
        ({"channel_kind": "fax", "channel_value": "1"}, "channel_kind"),
    ],
)
def test_bad_inputs_are_400_naming_the_field(api, inputs, field):
    response = api.call("find_person", inputs)

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_count_is_not_capped_by_limit(api, household):
    for index in range(7):
        build_contact(household, f"Müller {index}")

    response = api.call(
        "find_person", {"query": "muller", "limit": 3, "source": "contacts"}
    )

    assert len(response.json()["results"]) == 3
    assert response.json()["count"] == 7


def test_several_contacts_emit_a_stored_contact_picker_card(api, household):
    first = build_contact(household, "Sabine Müller")
    second = build_contact(household, "Thomas Müller")

    response = api.call("find_person", {"query": "müller", "source": "contacts"})

    card = response.json()["card"]
    assert card["kind"] == "contact_picker"
    assert f"/cards/{card['id']}/" in card["url"]
    stored = Card.objects.get(pk=card["id"])
    assert stored.household == household
    assert stored.payload["picks"] == [
        {
            "contact_id": contact.pk,
            "confidence": None,
            "reason": "",
            "padded": False,
            "match": "name",
        }
        for contact in (first, second)
    ]
    assert stored.payload["ranked"] is False


def test_several_household_rows_emit_no_card(api, household):
    build_member(household, "annika", first_name="Annika")

    response = api.call("find_person", {"query": "ann", "source": "household"})

    assert response.json()["ambiguous"] is True
    assert "card" not in response.json()


def test_another_households_people_never_appear_not_even_in_count(
    api, household, other_household
):
    build_contact(other_household, "Hans Levi")
    build_member(other_household, "hansi", first_name="Hans")
    build_contact(
        other_household,
        "Dana Levi",
        channels=[{"kind": "phone", "value": "030 1234567"}],
    )

    by_name = api.call("find_person", {"query": "hans"}).json()
    everyone = api.call("find_person", {}).json()
    by_channel = api.call(
        "find_person", {"channel_kind": "phone", "channel_value": "030 1234567"}
    ).json()

    assert by_name == {"results": [], "count": 0, "ambiguous": False}
    assert {row["first_name"] for row in everyone["results"]} == {"Anna"}
    assert by_channel["count"] == 0


def lookups(queries):
    """Return the SELECTs that read people, leaving out the token check."""
    tables = ("FROM contacts_contact", "FROM household_membership")
    return [
        q["sql"]
        for q in queries
        if q["sql"].startswith("SELECT")
        and "yorik_apitoken" not in q["sql"]
        and any(table in q["sql"].replace('"', "") for table in tables)
    ]


@pytest.mark.parametrize(
    ("source", "selects"), [("contacts", 1), ("household", 1), ("auto", 2)]
)
def test_one_select_per_source_whatever_the_channels(api, household, source, selects):
    for index in range(5):
        build_contact(
            household,
            f"Müller {index}",
            channels=[
                {"kind": "phone", "value": f"030 123456{index}"},
                {"kind": "email", "value": f"m{index}@example.org"},
            ],
            addresses=[{"kind": "home", "line1": "A", "city": "B"}],
        )
        build_member(household, f"mueller{index}", last_name="Müller")
    api.call("find_person", {"query": "müller"})  # The household's rows are counted.

    with CaptureQueriesContext(connection) as context:
        response = api.call("find_person", {"query": "müller", "source": source})

    assert response.status_code == 200
    assert len(lookups(context.captured_queries)) == selects


def test_searches_of_one_shape_each_find_their_own_rows(
    api, api_as, household, other_household
):
    """The SQL of a search is compiled once per shape (here one surname without
    nicknames); each call binds its own words and household."""
    build_contact(household, "Hans Becker")
    build_contact(household, "Greta Krause")
    build_contact(other_household, "Dana Krause")
    levi = api_as(build_member(other_household, "dana", role="admin"))

    found = [
        names(client.call("find_person", {"query": query, "source": "contacts"}))
        for client, query in [
            (api, "Becker"),
            (api, "Krause"),
            (levi, "Krause"),
            (levi, "Becker"),
            (api, "Fischer"),
            (api, "Becker"),
        ]
    ]

    assert found == [
        ["Hans Becker"],
        ["Greta Krause"],
        ["Dana Krause"],
        [],
        [],
        ["Hans Becker"],
    ]
