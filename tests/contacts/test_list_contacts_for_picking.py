import itertools
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from contacts.models import Contact
from contacts.search_columns import contact_columns
from tests.builders import build_contact, build_member
from yorik.models import Card

SKILL = "list_contacts_for_picking"


def browse(api, **inputs):
    response = api.call(SKILL, inputs)
    assert response.status_code == 200, response.content
    return response.json()


def names(body):
    return [row["display_name"] for row in body["contacts"]]


def rank(api, picks, **inputs):
    return api.call(SKILL, {"ranked_picks": picks, **inputs})


def pick(contact, confidence, reason=""):
    return {"id": contact.pk, "confidence": confidence, "reason": reason}


def stored_card(response):
    return Card.objects.get(pk=response.json()["card"]["id"])


def row(contact, confidence=None, reason="", *, padded=False):
    """Return a pick as the contact_picker card stores it."""
    return {
        "contact_id": contact.pk,
        "confidence": confidence,
        "reason": reason,
        "padded": padded,
    }


# Browse shape


def test_browse_lists_active_and_pending_contacts_in_compact_rows(api, household):
    hans = build_contact(household, "Hans Becker", relation="Onkel")
    build_contact(
        household,
        "Praxis Dr. Roth",
        kind="business",
        status="pending",
        channels=[{"kind": "phone", "value": "030 1234567"}],
        addresses=[{"kind": "work", "line1": "Hauptstr. 1", "city": "Berlin"}],
    )
    build_contact(household, "Spam GmbH", status="spam")
    build_contact(household, "Alte Firma", status="archived")

    body = browse(api, defer_card=True)

    assert body["count"] == 2
    assert body["contacts"][0] == {
        "id": hans.pk,
        "display_name": "Hans Becker",
        "relation": "Onkel",
        "kind": "person",
    }
    assert names(body) == ["Hans Becker", "Praxis Dr. Roth"]
    assert all(
        set(row) == {"id", "display_name", "relation", "kind"}
        for row in body["contacts"]
    )
    assert "card" not in body


def test_browse_sorts_the_way_a_german_reader_expects(api, household):
    for name in [
        "Zahnarzt Weber",
        "ärztin Koch",
        "Ärztehaus Mitte",
        "Bäckerei",
        "Apotheke",
        "baumann",
    ]:
        build_contact(household, name)

    body = browse(api, defer_card=True)

    assert names(body) == [
        "Apotheke",
        "Ärztehaus Mitte",
        "ärztin Koch",
        "Bäckerei",
        "baumann",
        "Zahnarzt Weber",
    ]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("any", ["active", "pending"]),
        ("active", ["active"]),
        ("pending", ["pending"]),
        ("spam", ["spam"]),
        ("archived", ["archived"]),
    ],
)
def test_status_filter(api, household, status, expected):
    for name in ("active", "pending", "spam", "archived"):
        build_contact(household, name, status=name)

    assert names(browse(api, status=status, defer_card=True)) == expected


def test_kind_filter(api, household):
    build_contact(household, "Autohaus Klein", kind="business")
    build_contact(household, "Klaus Klein")

    businesses = browse(api, kind="business", defer_card=True)
    people = browse(api, kind="person", defer_card=True)

    assert names(businesses) == ["Autohaus Klein"]
    assert names(people) == ["Klaus Klein"]


def test_another_households_contacts_never_appear(api, household, other_household):
    build_contact(household, "Hans Becker")
    build_contact(other_household, "Dana Levi")

    body = browse(api, defer_card=True)

    assert names(body) == ["Hans Becker"]
    assert body["count"] == 1


def test_browse_emits_a_contacts_found_card_with_its_filters(api, household):
    build_contact(household, "Hans Becker")

    response = api.call(SKILL, {"kind": "person", "pick_to_chat": False})

    card = response.json()["card"]
    assert card["kind"] == "contacts_found"
    assert f"/cards/{card['id']}/?t=" in card["url"]
    stored = stored_card(response)
    assert stored.household == household
    assert stored.payload == {"status": "any", "kind": "person"}
    assert stored.pick_to_chat is False


def test_browse_card_picks_to_chat_by_default(api, household):
    response = api.call(SKILL, {})

    assert stored_card(response).pick_to_chat is True


FIRST_NAMES = [
    "Anna", "Jürgen", "Sabine", "Thomas", "Katharina", "Mehmet", "Lena", "Wolfgang",
    "Ursula", "Maximilian", "Sophie", "Dieter", "Elif", "Friedrich", "Zoë", "Jan",
    "Charlotte", "Heinz", "Renée", "Paul",
]  # fmt: skip
LAST_NAMES = [
    "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner",
    "Becker", "Schulz", "Hoffmann", "Schäfer", "Koch", "Bauer", "Richter", "Klein",
    "Wolf", "Schröder", "Neumann", "Schwarz", "Zimmermann", "Braun", "Krüger",
    "Hofmann", "Hartmann", "Lange", "Schmitt", "Werner", "Krause", "Meier",
    "Lehmann", "Özdemir", "Öztürk", "Kowalski", "Nowak", "Dubois", "Rossi",
    "Großmann", "Lüdenscheidt", "Bergmann", "Köhler", "Pfeiffer", "Jäger",
    "Vogel", "Friedrich", "Keller", "Günther", "Frank", "Berger", "Winkler",
    "Roth",
]  # fmt: skip
BUSINESSES = [
    "Zahnarztpraxis Dr. {}", "Autohaus {} GmbH", "Steuerkanzlei {}", "Bäckerei {}",
    "Elektro {} & Söhne",
]  # fmt: skip
RELATIONS = [
    "", "", "", "", "", "Kollegin", "Nachbar", "Tante", "Zahnärztin", "Schulfreund",
]  # fmt: skip


def realistic_address_book(household, size):
    """Bulk-create a varied address book with the columns the services derive.

    Ids are fixed at four digits, as a household's thousand contacts would have,
    so the measured size does not drift with the test database's sequence.
    """
    people = itertools.cycle(itertools.product(FIRST_NAMES, LAST_NAMES))
    contacts = []
    for index in range(size):
        if index % 10 == 9:
            business = BUSINESSES[index % len(BUSINESSES)]
            name, kind = (
                business.format(LAST_NAMES[index % len(LAST_NAMES)]),
                "business",
            )
        else:
            name, kind = " ".join(next(people)), "person"
        relation = RELATIONS[index % len(RELATIONS)]
        contacts.append(
            Contact(
                pk=1000 + index,
                household=household,
                display_name=name,
                kind=kind,
                relation=relation,
                ref=f"c-{index}",
                **contact_columns(
                    display_name=name,
                    first_name="",
                    last_name="",
                    kind=kind,
                    relation=relation,
                    aliases=[],
                    tags=[],
                    emails=[],
                    phones=[],
                    region=household.default_region,
                ),
            )
        )
    Contact.objects.bulk_create(contacts)


def test_a_thousand_contacts_answer_in_under_80_bytes_a_row(api, household):
    realistic_address_book(household, 1000)

    response = api.call(SKILL, {"defer_card": True})

    assert response.json()["count"] == 1000
    assert b", " not in response.content
    assert b'": ' not in response.content
    bytes_per_row = len(response.content) / 1000
    assert bytes_per_row < 80, bytes_per_row


# Render shape


@pytest.fixture
def book(household):
    """Eight contacts of the household, named a to h."""
    return {
        letter: build_contact(household, f"Kontakt {letter.upper()}")
        for letter in "abcdefgh"
    }


def test_ranked_picks_render_in_confidence_order(api, household, book):
    response = rank(
        api,
        [
            pick(book["a"], 0.4, "Vielleicht"),
            pick(book["b"], 0.95, "Relation: Großmutter"),
            pick(book["c"], 0.7),
            pick(book["d"], 0.7, "gleich sicher, später genannt"),
            pick(book["e"], 0.1),
        ],
        query="Oma",
    )

    assert response.status_code == 200
    body = response.json()
    assert {key: body[key] for key in ("rendered", "dropped", "padded")} == {
        "rendered": 5,
        "dropped": [],
        "padded": 0,
    }
    assert "contacts" not in body
    assert body["card"]["kind"] == "contact_picker"
    stored = stored_card(response)
    assert stored.pick_to_chat is True
    assert stored.payload == {
        "query": "Oma",
        "ranked": True,
        "picks": [
            row(book["b"], 0.95, "Relation: Großmutter"),
            row(book["c"], 0.7),
            row(book["d"], 0.7, "gleich sicher, später genannt"),
            row(book["a"], 0.4, "Vielleicht"),
            row(book["e"], 0.1),
        ],
    }


def test_duplicate_ids_keep_their_highest_confidence(api, household, book):
    response = rank(
        api,
        [
            pick(book["a"], 0.3, "low"),
            pick(book["b"], 0.5),
            pick(book["a"], 0.9, "high"),
            pick(book["a"], 0.6, "middle"),
            pick(book["c"], 0.4),
            pick(book["d"], 0.2),
            pick(book["e"], 0.1),
        ],
    )

    picks = stored_card(response).payload["picks"]
    assert [(p["contact_id"], p["confidence"], p["reason"]) for p in picks[:2]] == [
        (book["a"].pk, 0.9, "high"),
        (book["b"].pk, 0.5, ""),
    ]
    assert response.json()["rendered"] == 5


def test_ten_picks_render_most_confident_first(api, household):
    contacts = [build_contact(household, f"Person {index:02}") for index in range(10)]

    response = rank(
        api, [pick(contact, index / 20) for index, contact in enumerate(contacts)]
    )

    body = response.json()
    assert body["rendered"] == 10
    assert body["padded"] == 0
    picks = stored_card(response).payload["picks"]
    assert [p["contact_id"] for p in picks] == [c.pk for c in reversed(contacts)]


def test_more_picks_than_the_card_shows_are_refused(api, household):
    contact = build_contact(household, "Person")
    before = Card.objects.count()

    response = rank(api, [pick(contact, 0.5)] * 11)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert list(error["fields"]) == ["ranked_picks"]
    assert "10" in error["fields"]["ranked_picks"][0]
    assert Card.objects.count() == before


def test_the_manifest_says_how_many_picks_are_taken(api):
    inputs = api.get(f"/api/skills/{SKILL}/").json()["inputs"]

    assert inputs["ranked_picks"]["maxItems"] == 10


def test_foreign_and_unknown_ids_are_dropped_once_in_input_order(
    api, household, other_household, book
):
    foreign = build_contact(other_household, "Dana Levi")
    unknown = Contact.objects.order_by("-pk").values_list("pk", flat=True)[0] + 1000

    response = rank(
        api,
        [
            {"id": unknown, "confidence": 0.99, "reason": ""},
            pick(book["a"], 0.8),
            pick(foreign, 0.9),
            {"id": unknown, "confidence": 0.5, "reason": ""},
            *(pick(book[letter], 0.5) for letter in "bcde"),
        ],
    )

    body = response.json()
    assert body["dropped"] == [unknown, foreign.pk]
    assert body["rendered"] == 5
    picks = stored_card(response).payload["picks"]
    assert foreign.pk not in {p["contact_id"] for p in picks}


def test_few_picks_are_padded_with_recently_contacted_active_contacts(
    api, household, other_household
):
    now = timezone.now()

    def contacted(name, days_ago, **fields):
        when = now - timedelta(days=days_ago) if days_ago is not None else None
        return build_contact(household, name, last_contacted_at=when, **fields)

    oma = contacted("Gisela Becker", 1)
    yesterday = contacted("Yvonne Gestern", 1)
    last_week = contacted("Lars Woche", 7)
    contacted("Paula Pending", 0, status="pending")
    contacted("Sam Spam", 0, status="spam")
    never = contacted("Nie Kontaktiert", None)
    last_month = contacted("Mona Monat", 30)
    build_contact(other_household, "Dana Levi", last_contacted_at=now)

    response = rank(api, [pick(oma, 0.97, "Alias: Oma")], query="Oma")

    body = response.json()
    assert body["rendered"] == 1
    assert body["padded"] == 4
    picks = stored_card(response).payload["picks"]
    assert picks == [
        row(oma, 0.97, "Alias: Oma"),
        row(yesterday, padded=True),
        row(last_week, padded=True),
        row(last_month, padded=True),
        row(never, padded=True),
    ]


def test_no_picks_at_all_give_a_card_of_recent_contacts(api, household, book):
    response = rank(api, [])

    body = response.json()
    assert (body["rendered"], body["padded"], body["dropped"]) == (0, 5, [])


def test_five_picks_are_not_padded(api, household, book):
    response = rank(api, [pick(book[letter], 0.5) for letter in "abcde"])

    assert response.json()["padded"] == 0
    assert len(stored_card(response).payload["picks"]) == 5


def test_ranked_card_carries_pick_to_chat(api, household, book):
    response = rank(api, [pick(book["a"], 0.5)], pick_to_chat=False)

    assert stored_card(response).pick_to_chat is False


def test_query_is_a_header_and_filters_nothing(api, household, book):
    response = rank(api, [pick(book["a"], 0.5)], query="der Klempner")

    assert response.json()["rendered"] == 1
    assert stored_card(response).payload["query"] == "der Klempner"


@pytest.mark.parametrize(
    ("bad_pick", "field"),
    [
        ({"id": 1, "confidence": 1.5, "reason": ""}, "ranked_picks[1].confidence"),
        ({"id": 1, "confidence": -0.1, "reason": ""}, "ranked_picks[1].confidence"),
        ({"id": 1, "confidence": "0.5", "reason": ""}, "ranked_picks[1].confidence"),
        ({"id": 1, "confidence": True, "reason": ""}, "ranked_picks[1].confidence"),
        ({"id": 1, "reason": ""}, "ranked_picks[1].confidence"),
        ({"id": "1", "confidence": 0.5}, "ranked_picks[1].id"),
        ({"id": 1.5, "confidence": 0.5}, "ranked_picks[1].id"),
        ({"confidence": 0.5}, "ranked_picks[1].id"),
        ({"id": 1, "confidence": 0.5, "reason": "x" * 201}, "ranked_picks[1].reason"),
        ({"id": 1, "confidence": 0.5, "reason": 7}, "ranked_picks[1].reason"),
        ({"id": 1, "confidence": 0.5, "why": "?"}, "ranked_picks[1].why"),
    ],
)
def test_invalid_picks_are_refused_naming_the_pick(api, book, bad_pick, field):
    response = rank(api, [pick(book["a"], 0.9), bad_pick])

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert list(error["fields"]) == [field]
    assert field in error["message"]
    assert not Card.objects.exists()


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"status": "deleted"}, "status"),
        ({"kind": "robot"}, "kind"),
        ({"pick_to_chat": "yes"}, "pick_to_chat"),
        ({"defer_card": 1}, "defer_card"),
        ({"ranked_picks": {"id": 1}}, "ranked_picks"),
        ({"query": 3}, "query"),
        ({"limit": 3}, "limit"),
    ],
)
def test_invalid_inputs_are_refused(api, inputs, field):
    response = api.call(SKILL, inputs)

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_rendering_reads_the_contacts_in_constant_queries(api, household):
    contacts = [build_contact(household, f"Person {index:02}") for index in range(10)]

    def contact_selects(picks):
        with CaptureQueriesContext(connection) as queries:
            assert rank(api, picks).status_code == 200
        return [
            q["sql"]
            for q in queries.captured_queries
            if q["sql"].startswith("SELECT") and 'FROM "contacts_contact"' in q["sql"]
        ]

    few = contact_selects([pick(c, 0.5) for c in contacts[:2]])
    many = contact_selects([pick(c, 0.5) for c in contacts])

    assert len(few) == 2  # resolve the picks, then the padding
    assert len(many) == 1  # ten picks need no padding


def test_restricted_members_may_call_it(api_as, household, book):
    viewer = api_as(build_member(household, "lena", role="viewer"))

    response = viewer.call(SKILL, {"defer_card": True})

    assert response.status_code == 200
    assert response.json()["count"] == 8


def test_manifest_lists_the_spec_inputs_and_outputs(api):
    manifest = api.get(f"/api/skills/{SKILL}/").json()

    assert set(manifest["inputs"]) == {
        "pick_to_chat",
        "status",
        "kind",
        "defer_card",
        "ranked_picks",
        "query",
    }
    assert manifest["inputs"]["pick_to_chat"]["default"] is True
    assert manifest["inputs"]["status"]["default"] == "any"
    assert manifest["inputs"]["status"]["enum"] == [
        "any",
        "active",
        "pending",
        "spam",
        "archived",
    ]
    assert manifest["inputs"]["defer_card"]["default"] is False
    assert manifest["inputs"]["ranked_picks"]["required"] is False
    pick_schema = manifest["inputs"]["ranked_picks"]["items"]
    assert pick_schema["required"] == ["id", "confidence"]
    assert pick_schema["properties"]["confidence"]["minimum"] == 0
    assert pick_schema["properties"]["confidence"]["maximum"] == 1
    assert pick_schema["properties"]["reason"]["maxLength"] == 200
    assert set(manifest["outputs"]) >= {"count", "contacts", "rendered", "dropped"}
    assert manifest["permissions"] == ["admin", "member", "restricted"]
    assert manifest["tags"] == ["contacts", "lookup", "fallback"]


# Very large address books


def test_a_browse_over_the_cap_lists_the_first_rows_and_says_it_is_cut(
    api, household, monkeypatch
):
    monkeypatch.setattr("contacts.selectors.BROWSE_ROWS", 5)
    for name in ["Hanna", "Bert", "Gisela", "Anna", "Erik", "Dora", "Carl", "Fritz"]:
        build_contact(household, name)

    body = browse(api, defer_card=True)

    assert body["count"] == 8
    assert [row["display_name"] for row in body["contacts"]] == [
        "Anna",
        "Bert",
        "Carl",
        "Dora",
        "Erik",
    ]
    assert body["truncated"] is True


def test_a_browse_within_the_cap_has_no_truncated_flag(api, household, monkeypatch):
    monkeypatch.setattr("contacts.selectors.BROWSE_ROWS", 5)
    for name in ["Anna", "Bert"]:
        build_contact(household, name)

    body = browse(api, defer_card=True)

    assert (body["count"], len(body["contacts"])) == (2, 2)
    assert "truncated" not in body


def test_two_thousand_and_one_contacts_are_cut_at_two_thousand(api, household):
    realistic_address_book(household, 2001)

    response = api.call(SKILL, {"defer_card": True})

    body = response.json()
    assert (body["count"], len(body["contacts"]), body["truncated"]) == (
        2001,
        2000,
        True,
    )
    assert len(response.content) <= 400_000


def test_long_names_cut_the_answer_before_it_passes_the_byte_budget(
    api, household, monkeypatch
):
    monkeypatch.setattr("contacts.selectors.BROWSE_BYTES", 2_000)
    for index in range(20):
        build_contact(household, f"{chr(65 + index)} {'Ä' * 150}")

    response = api.call(SKILL, {"defer_card": True})

    body = response.json()
    assert body["truncated"] is True
    assert body["count"] == 20
    assert 0 < len(body["contacts"]) < 20
    assert len(response.content) < 2_500


def test_the_manifest_lists_truncated(api):
    outputs = api.get(f"/api/skills/{SKILL}/").json()["outputs"]

    assert outputs["truncated"]["type"] == "boolean"


def test_the_alphabetical_card_pages_through_a_long_address_book(
    api, client, household, monkeypatch
):
    monkeypatch.setattr("contacts.cards.LETTERS_PAGE", 3)
    for name in ["Anna", "Bert", "Carl", "Dora", "Erik", "Fritz", "Gisela"]:
        build_contact(household, name)
    url = browse(api)["card"]["url"]

    first = client.get(url)
    last = client.get(url, {"page": 3, "t": url.split("?t=")[1]})

    assert first.status_code == 200
    assert "Anna" in first.text
    assert "Dora" not in first.text
    assert "7 Kontakte" in first.text
    next_link = first.text.split('rel="next"')[0].rsplit('href="', 1)[1]
    assert "page=2" in next_link
    assert "t=" in next_link
    assert "Gisela" in last.text
    assert "Anna" not in last.text
