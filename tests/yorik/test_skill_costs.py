"""Every skill costs the SELECTs its manifest's `cost` claims, and no more.

The skills run as the registry runs them, after authentication, so only the
skill's own statements are counted; the card a skill asks for is stored by
the API layer and is not part of its cost.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from compose.models import LetterTemplate
from household.callers import MemberCaller
from household.models import Membership
from people_search.index import similar as similar_index
from tests.builders import build_contact, build_lead, build_member
from yorik.registry import get_skill


@pytest.fixture
def caller(admin_membership):
    membership = Membership.objects.select_related("household", "profile").get(
        pk=admin_membership.pk
    )
    return MemberCaller(membership=membership)


@pytest.fixture
def book(household):
    for index in range(5):
        build_contact(
            household,
            f"Hans Müller {index}",
            relation="Zahnarzt" if index == 0 else "Onkel",
            channels=[
                {"kind": "phone", "value": f"030 123456{index}"},
                {"kind": "email", "value": f"hans{index}@example.org"},
            ],
            addresses=[{"kind": "home", "line1": "Hauptstr. 5", "city": "Berlin"}],
        )
        build_member(household, f"mueller{index}", last_name="Müller")
        build_lead(household, "Dana", last_name=f"Müller{index}")
    return household.contacts.order_by("pk")


def selects(caller, name, inputs):
    """Return how many SELECTs the skill ran for these inputs."""
    found = get_skill(name)
    validated = found.input_serializer(data=inputs)
    validated.is_valid(raise_exception=True)
    with CaptureQueriesContext(connection) as context:
        found.run(caller, **validated.validated_data)
    return sum(
        query["sql"].lstrip().upper().startswith(("SELECT", "WITH", "(SELECT"))
        for query in context.captured_queries
    )


def cost(name):
    """Return what the skill's manifest says it costs."""
    return get_skill(name).manifest()["cost"]


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"query": "Müller", "source": "contacts"}, 1),
        ({"query": "Müller", "source": "household"}, 1),
        ({"query": "Müller", "source": "auto"}, 2),
        ({"channel_kind": "phone", "channel_value": "030 1234560"}, 1),
    ],
)
def test_find_person(caller, book, inputs, expected):
    first = selects(caller, "find_person", inputs)

    assert selects(caller, "find_person", inputs) == expected
    assert first == expected + 1  # The household's rows, counted every 5 minutes.
    assert cost("find_person").startswith(
        "1 indexed SELECT per source: 1 for household or contacts, 2 for auto"
    )


@pytest.mark.parametrize(
    ("source", "rows_past_the_ranked", "expected"),
    [
        ("contacts", False, 3),
        ("auto", False, 5),
        ("contacts", True, 4),
        ("auto", True, 6),
    ],
)
def test_find_person_adds_the_similar_name_lane_only_when_nobody_matches(
    caller, book, monkeypatch, source, rows_past_the_ranked, expected
):
    """Literal SELECTs, the similar-name lookup's one, or two where the rows
    searched are more than the lane ranks (and the managed children's names
    when household people are searched), one more for contacts."""
    if rows_past_the_ranked:
        monkeypatch.setattr(similar_index, "reads_every_row", lambda rows: False)
    inputs = {"query": "Hans Müllr", "source": source}
    selects(caller, "find_person", inputs)  # The vocabulary count is cached.

    assert selects(caller, "find_person", inputs) == expected
    assert "1 similar-name lookup (1 SELECT, 2 past 100 rows searched; and 1 of" in (
        cost("find_person")
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [("Hans Müller", 1), ("Hans Mü", 2), ("Hans Mue", 2), ("Katrin", 3)],
)
def test_find_person_looks_for_names_heard_alike_only_past_whole_words(
    caller, book, household, query, expected
):
    """Whole words answer with one SELECT; rows that only start with a term
    add the lookup of names heard alike, and one more SELECT when some are."""
    build_contact(household, "Katrina Berg")
    build_contact(household, "Catrin Vogel")
    inputs = {"query": query, "source": "contacts"}
    selects(caller, "find_person", inputs)

    assert selects(caller, "find_person", inputs) == expected
    assert "1 SELECT of the names heard alike" in cost("find_person")


def test_compose_check_recipient_reads_one_contact_and_one_template(
    caller, book, household
):
    LetterTemplate.objects.create(
        household=household,
        template_id="brief-de",
        title="Brief",
        body="…",
        recipient_fields=["line1", "city"],
    )
    inputs = {"contact_id": book[0].pk, "template_id": "brief-de"}

    assert selects(caller, "compose_check_recipient", inputs) == 2
    assert cost("compose_check_recipient") == "1 contact SELECT + 1 template SELECT"


def test_list_contacts_for_picking(caller, book):
    browse = selects(caller, "list_contacts_for_picking", {"defer_card": True})
    render = selects(
        caller,
        "list_contacts_for_picking",
        {"ranked_picks": [{"id": book[0].pk, "confidence": 0.9}]},
    )

    assert (browse, render) == (1, 2)
    assert cost("list_contacts_for_picking").startswith("Browse: 1 indexed SELECT")
    assert cost("list_contacts_for_picking").endswith("Render: 2 SELECTs")


def test_find_known_provider(caller, book):
    assert selects(caller, "find_known_provider", {"category": "dentist"}) == 5
    assert selects(caller, "find_known_provider", {"category": "garage"}) == 4
    assert cost("find_known_provider").startswith("5 indexed SELECTs")


def test_people_search_with_the_shared_database_cache(caller, book, settings):
    """Production may share Django's cache through the database
    (YORIK_CACHE=database): the vocabulary's count still costs no round
    trip on later calls, as it stays in the process."""
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "yorik_cache",
        },
    }
    first = selects(caller, "people_search", {"query": "Mueler"})
    then = selects(caller, "people_search", {"query": "Mueler"})

    assert then <= 4
    assert first <= then + 1


@pytest.mark.parametrize("query", ["Müller", "Dana", "030 1234560", "Mueler"])
def test_people_search(caller, book, query):
    """Members, leads, similar names; the household's rows and name words are
    counted every 5 minutes."""
    first = selects(caller, "people_search", {"query": query})
    then = selects(caller, "people_search", {"query": query})

    assert then <= 4
    assert first <= then + 1
    assert cost("people_search").startswith("2-4 indexed SELECTs")


@pytest.mark.parametrize("query", ["Müller", "Dana Mueler"])
def test_search_anything(caller, book, query):
    first = selects(caller, "search_anything", {"query": query})
    then = selects(caller, "search_anything", {"query": query})

    assert then <= (5 if query == "Müller" else 7)
    assert first <= then + 1
    assert cost("search_anything").startswith(
        "Up to 4 indexed SELECTs, 2-3 more (a similar-name lookup of 1, or 2 past "
        "100 contacts, and a SELECT) when no contact matches by name"
    )


def test_search_anything_adds_names_heard_alike_past_whole_words(
    caller, book, household
):
    build_contact(household, "Katrina Berg")
    build_contact(household, "Catrin Vogel")
    selects(caller, "search_anything", {"query": "Katrin"})

    # Members and leads by people search (at most 4), contacts, names heard
    # alike, and contacts again with them.
    assert selects(caller, "search_anything", {"query": "Katrin"}) <= 7
    assert "2 at most (names heard alike, and a SELECT if there are any)" in cost(
        "search_anything"
    )


@pytest.mark.parametrize(
    ("skill", "inputs"),
    [
        ("find_person", {"query": "Müller", "source": "contacts"}),
        ("find_person", {"query": "Müller", "source": "auto"}),
        ("compose_check_recipient", None),
    ],
)
def test_over_http_a_call_adds_one_statement_for_the_token_and_its_rate_limit(
    api, caller, book, household, skill, inputs
):
    if inputs is None:
        LetterTemplate.objects.create(
            household=household,
            template_id="brief-de",
            title="Brief",
            body="…",
            recipient_fields=["line1", "city"],
        )
        inputs = {"contact_id": book[0].pk, "template_id": "brief-de"}
    api.call(skill, inputs)  # The token's last use is recorded once in 5 minutes.
    own = selects(caller, skill, inputs)
    card_writes = 1 if skill == "find_person" and inputs["source"] != "household" else 0

    with CaptureQueriesContext(connection) as context:
        response = api.call(skill, inputs)

    assert response.status_code == 200
    assert len(context.captured_queries) == own + card_writes + 1


def test_listing_the_skills_runs_one_statement_for_the_token_and_its_rate_limit(api):
    api.get("/api/skills/")  # The token's last use is recorded once in 5 minutes.

    with CaptureQueriesContext(connection) as context:
        response = api.get("/api/skills/")

    assert response.status_code == 200
    (statement,) = [query["sql"] for query in context.captured_queries]
    assert "yorik_apitoken" in statement
    assert "yorik_ratecounter" in statement


def test_the_statements_of_every_call_are_prepared_once_per_connection(
    api, book, household
):
    """The token lookup with its rate limit, and the card INSERT: PostgreSQL
    plans each once per connection instead of on every call."""
    for _ in range(6):
        assert api.call("find_person", {"query": "Müller"}).status_code == 200

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [statement for (statement,) in cursor.fetchall()]

    assert any(
        "user_profiles" in s and "yorik_apitoken" in s and "yorik_ratecounter" in s
        for s in prepared
    )
    assert any(s.startswith('INSERT INTO "yorik_card"') for s in prepared)
