import itertools

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from household.models import MembershipStatus
from people_search.engine import similar as lane_statements
from people_search.index import similar
from people_search.index.embeddings import EmbeddingError
from people_search.index.models import NameWordUse
from tests.builders import build_lead, build_member


def search(api, query):
    response = api.call("people_search", {"query": query})
    assert response.status_code == 200, response.content
    return response.json()


def hits(body, key="name"):
    return [(item["kind"], item[key]) for item in body["items"]]


@pytest.fixture
def dana(household, admin_membership):
    return build_lead(
        household,
        "Dana",
        last_name="Levi",
        email="dana.levi@example.org",
        phone="+972 50 123 4567",
        owner=admin_membership,
    )


def test_text_terms_match_in_any_order(api, dana):
    assert hits(search(api, "Levi Dana")) == [("lead", "Dana Levi")]
    assert hits(search(api, "dana, levi")) == [("lead", "Dana Levi")]


def test_lead_row_shape(api, dana):
    body = search(api, "dana")

    assert body["totalCount"] == 1
    assert body["items"] == [
        {
            "kind": "lead",
            "lead_id": dana.pk,
            "name": "Dana Levi",
            "email": "dana.levi@example.org",
            "phone": "+972501234567",
            "status": "new",
            "archived": False,
            "match": "name",
        }
    ]


def test_member_row_shape(api, household):
    jonas = build_member(household, "jonas", last_name="Becker", phone="0171 1234567")

    body = search(api, "jonas")

    assert body["items"] == [
        {
            "kind": "member",
            "membership_id": jonas.pk,
            "profile_id": jonas.profile.pk,
            "name": "Jonas Becker",
            "email": "",
            "phone": "+491711234567",
            "role": "member",
            "status": "active",
            "match": "name",
        }
    ]


def test_email_match(api, dana):
    body = search(api, "dana.levi@example.org")

    assert [(i["name"], i["match"]) for i in body["items"]] == [("Dana Levi", "email")]


@pytest.mark.parametrize(
    "typed", ["050-123-4567", "+972 50 123 4567", "0501234567", "050-12", "123 45"]
)
def test_phone_queries_in_an_israeli_household(api_as, other_household, typed):
    admin = build_member(other_household, "yael", role="admin")
    build_lead(other_household, "Avi", phone="050-123-4567")

    body = search(api_as(admin), typed)

    assert [(i["name"], i["match"]) for i in body["items"]] == [("Avi", "phone")]


@pytest.mark.parametrize("typed", ["0171 1234567", "+49 171 1234567", "0171-123"])
def test_phone_queries_in_a_german_household(api, household, typed):
    build_member(household, "jonas", phone="+49 171 1234567")

    body = search(api, typed)

    assert [(i["name"], i["match"]) for i in body["items"]] == [("Jonas", "phone")]


def test_one_character_query_returns_no_items(api, dana):
    body = search(api, "D")

    assert body["items"] == []
    assert body["totalCount"] == 0


def test_query_over_100_characters_is_refused(api):
    response = api.call("people_search", {"query": "x" * 101})

    assert response.status_code == 400
    assert "query" in response.json()["error"]["fields"]


def test_removed_members_and_deleted_profiles_are_excluded(api, household):
    build_member(household, "rita", last_name="Roth", status=MembershipStatus.REMOVED)
    paused = build_member(household, "ronja", last_name="Roth", status="cancelled")
    deleted = build_member(household, "rolf", last_name="Roth")
    deleted.profile.deleted_at = timezone.now()
    deleted.profile.save()

    body = search(api, "roth")

    assert [(i["name"], i["status"]) for i in body["items"]] == [
        ("Ronja Roth", "cancelled")
    ]
    assert body["items"][0]["membership_id"] == paused.pk


def test_children_are_found_by_name_but_never_embedded(api, household):
    child = build_member(household, "mia", role="child", last_name="Becker")

    assert hits(search(api, "mia")) == [("member", "Mia Becker")]
    assert not NameWordUse.objects.filter(
        subject="member", subject_id=child.pk
    ).exists()
    assert NameWordUse.objects.filter(
        subject="member", subject_id=api.membership.pk
    ).exists()


@pytest.mark.parametrize(
    ("access", "expected"),
    [("all", ["Dana Levi", "Dana Mizrahi"]), ("own", ["Dana Levi"]), ("none", [])],
)
def test_lead_visibility_follows_lead_access(
    api_as, household, admin_membership, access, expected
):
    actor = build_member(household, "jonas", lead_access=access)
    build_lead(household, "Dana", last_name="Levi", owner=actor)
    build_lead(household, "Dana", last_name="Mizrahi", owner=admin_membership)

    body = search(api_as(actor), "dana")

    assert [i["name"] for i in body["items"] if i["kind"] == "lead"] == expected


def test_members_who_see_their_own_leads_each_see_theirs(
    api_as, household, other_household
):
    """The SELECT is compiled once per shape; each call binds its own actor."""
    jonas = build_member(household, "jonas", lead_access="own")
    mia = build_member(household, "mia", lead_access="own")
    noa = build_member(other_household, "noa", lead_access="own")
    for owner in (jonas, mia, noa):
        build_lead(
            owner.household, "Dana", last_name=owner.profile.username, owner=owner
        )

    found = {
        actor.profile.username: [
            item["name"]
            for item in search(api_as(actor), "dana")["items"]
            if item["kind"] == "lead"
        ]
        for actor in (jonas, mia, noa, jonas)
    }

    assert found == {"jonas": ["Dana jonas"], "mia": ["Dana mia"], "noa": ["Dana noa"]}


def test_every_tier_may_search(api_as, household, dana):
    for role in ("member", "child", "employee", "viewer"):
        caller = build_member(household, f"x-{role}", role=role)
        assert (
            api_as(caller).call("people_search", {"query": "dana"}).status_code == 200
        )


def test_archived_leads_are_included_and_marked(api, household):
    build_lead(household, "Tamar", last_name="Shapiro", archived=True)

    body = search(api, "tamar")

    assert body["items"][0]["archived"] is True


def test_similar_names_come_after_literal_matches(api, household):
    build_lead(household, "Anna", last_name="Meier")
    build_lead(household, "Peter", last_name="Mayer")
    build_lead(household, "Klaus", last_name="Meier")

    body = search(api, "Meier")

    assert [(i["name"], i["match"]) for i in body["items"]] == [
        ("Anna Meier", "name"),
        ("Klaus Meier", "name"),
        ("Peter Mayer", "similar_name"),
    ]


def test_members_found_by_text_and_as_similar_names_are_listed_once(api, household):
    build_member(household, "ines", last_name="Meier")
    lisa = build_member(household, "lisa", last_name="Meiers")
    # "Meiers" starts with the query (text) and is spelled like it (the lane).
    lane = similar.find_similar_names(
        household_id=household.pk, name="Meier", subjects=["member"]
    )
    assert [candidate.subject_id for candidate in lane] == [lisa.pk]

    body = search(api, "Meier")

    assert [(i["kind"], i["name"], i["match"]) for i in body["items"]] == [
        ("member", "Ines Meier", "name"),
        ("member", "Lisa Meiers", "name"),
    ]


def test_each_search_finds_its_own_similar_members(api, household):
    """The members' SELECT of literal and similar rows is compiled once per
    shape: another search of the same shape binds its own words and ids."""
    build_member(household, "paul", last_name="Mayer")
    build_member(household, "ines", last_name="Meier")
    build_member(household, "tom", last_name="Schmitt")
    build_member(household, "lena", last_name="Schmidt")

    found = [
        [(i["kind"], i["name"], i["match"]) for i in search(api, query)["items"]]
        for query in ("Mayer", "Schmitt", "Mayer")
    ]

    assert (
        found[0]
        == found[2]
        == [
            ("member", "Paul Mayer", "name"),
            ("member", "Ines Meier", "similar_name"),
        ]
    )
    assert found[1] == [
        ("member", "Tom Schmitt", "name"),
        ("member", "Lena Schmidt", "similar_name"),
    ]


@pytest.mark.parametrize(
    ("stored", "typed"),
    [("Schmidt", "Schmitt"), ("Cohen", "Kohen"), ("Müller", "Mueler")],
)
def test_spelling_variants_are_similar_names(api, household, stored, typed):
    build_lead(household, "Kim", last_name=stored)

    body = search(api, typed)

    assert [(i["name"], i["match"]) for i in body["items"]] == [
        (f"Kim {stored}", "similar_name")
    ]


@pytest.fixture
def thomas(household):
    for first, last in [("Thomas", "Becker"), ("Anna", "Müller"), ("Jonas", "Weber")]:
        build_lead(household, first, last_name=last)
    return build_lead(household, "Thomas", last_name="Müller")


@pytest.mark.parametrize("typed", ["Tomas Müler", "Müler Tomas", "Thomaz Mueler"])
def test_a_misspelled_name_finds_the_person_as_similar(api, thomas, typed):
    body = search(api, typed)

    assert [(i["name"], i["match"]) for i in body["items"]] == [
        ("Thomas Müller", "similar_name")
    ]
    assert body["items"][0]["lead_id"] == thomas.pk


def test_a_swapped_name_is_found_by_text(api, thomas):
    assert [(i["name"], i["match"]) for i in search(api, "Müller Thomas")["items"]] == [
        ("Thomas Müller", "name")
    ]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("Tomas M.", ["Thomas Müller"]),
        ("Müler", ["Anna Müller", "Thomas Müller"]),
    ],
)
def test_a_name_with_a_part_missing_finds_the_person(api, thomas, typed, expected):
    body = search(api, typed)

    assert [i["name"] for i in body["items"]] == expected
    assert {i["match"] for i in body["items"]} == {"similar_name"}


def test_a_missing_middle_name_and_typos_still_find_the_person(api, household):
    build_lead(household, "Anna Maria", last_name="Schmidt")
    build_lead(household, "Anna", last_name="Weber")

    assert [(i["name"], i["match"]) for i in search(api, "Ana Schmitt")["items"]] == [
        ("Anna Maria Schmidt", "similar_name")
    ]


def test_a_name_read_by_ocr_finds_the_person(api, thomas):
    assert [i["name"] for i in search(api, "Th0mas Mu1ler")["items"]] == [
        "Thomas Müller"
    ]


@pytest.fixture
def lindenlechners(household):
    for first, last in [
        ("Erik", "Lindenlechner"),
        ("Anna", "Lindenlechner"),
        ("Peter", "Meier"),
        ("Peter", "Schulz"),
    ]:
        build_lead(household, first, last_name=last)
    return household


@pytest.mark.parametrize("typed", ["Peter Lindenlechner", "Peter Lindenlechnr"])
def test_a_replaced_first_name_finds_the_few_people_with_the_surname(
    api, lindenlechners, typed
):
    body = search(api, typed)

    assert [(i["name"], i["match"]) for i in body["items"]] == [
        ("Anna Lindenlechner", "similar_name"),
        ("Erik Lindenlechner", "similar_name"),
    ]


@pytest.mark.parametrize("typed", ["Peter Quast", "Gustav Lindenlechner-Huber"])
def test_a_name_nobody_has_is_not_answered_by_a_shared_word(api, lindenlechners, typed):
    """Neither a first name nor half of a double surname points at anyone."""
    assert search(api, typed)["items"] == []


def test_the_lane_returns_at_most_8_similar_rows(household):
    for index in range(12):
        build_lead(household, f"Kim{'i' * index}", last_name="Müller")

    found = similar.find_similar_names(
        household_id=household.pk, name="Müler", subjects=["lead"]
    )

    assert len(found) == 8
    assert {candidate.subject for candidate in found} == {"lead"}


@pytest.mark.parametrize(
    ("namesakes", "spelled_alike", "typed"),
    [
        # Every query word as written: the grouping of all rows.
        ("Müller", "Müler", "Kim Müller"),
        # One query word: each near word's first rows only, and the literal
        # matches among them (also spelled Mühler) make room for the rest.
        ("Müller-Mühler", "Mühler", "Müller"),
    ],
)
def test_literal_namesakes_leave_the_lane_room_for_similar_names(
    household, namesakes, spelled_alike, typed
):
    """More people have the query's name as written than the lane scores;
    text search finds them, and the lane still finds the one spelled alike."""
    for _ in range(60):
        build_lead(household, "Kim", last_name=namesakes)
    alike = build_lead(household, "Kim", last_name=spelled_alike)

    found = similar.find_similar_names(
        household_id=household.pk, name=typed, subjects=["lead"]
    )

    assert [candidate.subject_id for candidate in found] == [alike.pk]


def test_a_misspelled_surname_is_found_among_many_sharing_the_first_name(
    api, household
):
    """More people share the first name than the lane scores; the one whose
    surname is like the query's comes first all the same."""
    for stem, ending in itertools.product(
        ["Bau", "Berg", "Dorn", "Eich", "Feld", "Holz", "Kamp", "Lind", "Mohr"],
        ["er", "ner", "mann", "hoff", "stein", "ling", "bach", "meier"],
    ):
        build_lead(household, "Anna", last_name=stem + ending)
    build_lead(household, "Anna", last_name="Stephens")

    body = search(api, "Anna Stepehns")

    assert [(i["name"], i["match"]) for i in body["items"]] == [
        ("Anna Stephens", "similar_name")
    ]


def test_unknown_name_finds_no_one(api, household):
    for first, last in [("Anna", "Meier"), ("Jonas", "Becker"), ("Dana", "Levi")]:
        build_lead(household, first, last_name=last)

    assert search(api, "Gustav Pfeiffer")["items"] == []


def test_at_most_8_per_group(api, household):
    for index in range(12):
        build_lead(household, "Dana", last_name=f"Levi{index:02}")
        build_member(
            household, f"dana{index}", first_name="Dana", last_name=f"B{index:02}"
        )

    body = search(api, "dana")

    assert [i["kind"] for i in body["items"]] == ["member"] * 8 + ["lead"] * 8
    assert body["totalCount"] == 16
    assert [i["name"] for i in body["items"][8:]] == [
        f"Dana Levi{i:02}" for i in range(8)
    ]


def test_search_degrades_to_text_and_phone_when_embedding_fails(
    api, household, monkeypatch, caplog
):
    build_lead(household, "Peter", last_name="Mayer")
    build_lead(household, "Anna", last_name="Meier")

    class Broken:
        def embed(self, names):
            raise EmbeddingError("provider down")

    monkeypatch.setattr(similar, "embedding_provider", lambda: Broken())

    body = search(api, "Meier")

    assert [i["name"] for i in body["items"]] == ["Anna Meier"]
    assert "embedding failed" in caplog.text


def failing_near_words(words: int, *, exact: bool, reached: bool = False) -> str:
    return "SELECT * FROM no_such_table"


def test_search_degrades_when_the_vector_query_fails(
    api, household, monkeypatch, caplog
):
    build_lead(household, "Anna", last_name="Meier")
    monkeypatch.setattr(lane_statements, "_near_sql", failing_near_words)

    assert [i["name"] for i in search(api, "Meier")["items"]] == ["Anna Meier"]
    assert "vector query failed" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_search_on_its_own_sends_only_the_lanes_two_selects(household):
    """As a skill call runs it, outside any transaction: the trigram
    threshold and the plans come with the connection, so the exact scan
    needs no transaction and no settings of its own."""
    mayer = build_lead(household, "Peter", last_name="Mayer")
    similar.vocabulary_size(household.pk)

    with CaptureQueriesContext(connection) as context:
        found = similar.find_similar_names(
            household_id=household.pk, name="Meier", subjects=["lead"]
        )

    assert [candidate.subject_id for candidate in found] == [mayer.pk]
    statements = [query["sql"].split()[0].upper() for query in context.captured_queries]
    assert statements == ["WITH", "WITH"]


def test_a_household_of_few_people_has_similar_names_found_in_one_statement(
    api, household
):
    """Its members and leads are fewer than the lane ranks: every row a near
    word reaches is read with the near words, and scored here."""
    build_lead(household, "Peter", last_name="Mayer")
    search(api, "Meier")  # The household's rows are counted.

    with CaptureQueriesContext(connection) as context:
        body = search(api, "Meier")

    assert hits(body, "match") == [("lead", "similar_name")]
    lane = [q for q in context.captured_queries if "people_search_name" in q["sql"]]
    assert len(lane) == 1


@pytest.mark.django_db(transaction=True)
def test_search_outside_a_transaction_degrades_when_the_vector_query_fails(
    api, household, monkeypatch, caplog
):
    build_lead(household, "Anna", last_name="Meier")
    monkeypatch.setattr(lane_statements, "_near_sql", failing_near_words)

    body = search(api, "Meier")

    assert [i["name"] for i in body["items"]] == ["Anna Meier"]
    assert body["card"]["kind"] == "people_results"
    assert "vector query failed" in caplog.text


def test_connections_come_with_the_lanes_settings_and_generic_plans(db):
    settings = {}
    with connection.cursor() as cursor:
        for name in [
            "pg_trgm.similarity_threshold",
            "hnsw.iterative_scan",
            "hnsw.ef_search",
            "plan_cache_mode",
        ]:
            cursor.execute(f"SHOW {name}")
            (settings[name],) = cursor.fetchone()

    assert float(settings["pg_trgm.similarity_threshold"]) == similar.TRIGRAM_FLOOR
    assert settings["hnsw.iterative_scan"] == "relaxed_order"
    assert int(settings["hnsw.ef_search"]) == similar.PER_WORD
    assert settings["plan_cache_mode"] == "force_generic_plan"


@pytest.mark.django_db(transaction=True)
def test_large_households_use_the_vector_index_in_two_selects(household, monkeypatch):
    """The HNSW index's settings come with the connection: the lane sends
    its two SELECTs and nothing else, as the exact scan does."""
    mayer = build_lead(household, "Peter", last_name="Mayer")
    monkeypatch.setattr(similar, "EXACT_SCAN_BELOW", 0)
    similar.vocabulary_size(household.pk)

    with CaptureQueriesContext(connection) as context:
        found = similar.find_similar_names(
            household_id=household.pk, name="Meier", subjects=["lead"]
        )

    assert [candidate.subject_id for candidate in found] == [mayer.pk]
    statements = [query["sql"] for query in context.captured_queries]
    assert [sql.split()[0].upper() for sql in statements] == ["WITH", "WITH"]
    # Ordered by distance as the index is, not by a sum no index serves.
    assert lane_statements._INDEXED_ORDER in statements[0]


def test_emits_a_people_results_card(api, dana):
    body = search(api, "dana")

    assert body["card"]["kind"] == "people_results"


def test_another_households_people_never_appear(api, other_household):
    build_lead(other_household, "Dana", last_name="Levi")
    build_member(other_household, "dana", first_name="Dana")

    assert search(api, "dana")["items"] == []


def test_nicknames_and_titles_find_members_and_leads_as_names(api, household):
    build_member(household, "sepp", first_name="Josef", last_name="Huber")
    build_lead(household, "Robert", last_name="Katz")

    assert hits(search(api, "Sepp Huber"), "match") == [("member", "name")]
    assert hits(search(api, "Mr. Bob Katz")) == [("lead", "Robert Katz")]
    assert hits(search(api, "Frau Dr. Huber")) == [("member", "Josef Huber")]


def test_a_term_inside_a_word_gives_way_to_word_starts(api, household):
    build_lead(household, "Omar", last_name="Said")
    build_lead(household, "Thomas", last_name="Müller")

    assert hits(search(api, "oma")) == [("lead", "Omar Said")]
    assert hits(search(api, "homas")) == [("lead", "Thomas Müller")]


def test_literal_matches_keep_name_order_whatever_their_strength(api, household):
    build_lead(household, "Anna", last_name="Zorn")
    build_lead(household, "Bert", last_name="Anna")

    assert hits(search(api, "anna zorn")) == [("lead", "Anna Zorn")]
    assert hits(search(api, "anna")) == [
        ("member", "Anna Becker"),
        ("lead", "Anna Zorn"),
        ("lead", "Bert Anna"),
    ]


@pytest.mark.parametrize("query", ["¬𚌳?", "?!", "--"])
def test_query_without_words_or_digits_finds_nobody(api, dana, query):
    assert search(api, query)["items"] == []
    response = api.call("search_anything", {"query": query})
    assert response.status_code == 200, response.content


def test_a_query_longer_than_100_characters_is_refused_even_with_spaces_around(api):
    response = api.call("people_search", {"query": "\u00a0" + "a" * 100})

    assert response.status_code == 400
    assert response.json()["error"]["fields"]["query"]
