"""find_known_provider: the category vocabulary, the three sources and merging."""

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from contacts.models import PaperlessCorrespondent, PaperlessDocument
from contacts.paperless.client import Correspondent, Document
from contacts.paperless.sync import write_paperless_mirror
from contacts.providers.categories import (
    CATEGORIES,
    UnknownCategory,
    categories_revealed_by,
    get_category,
    resolve_category,
)
from contacts.providers.search import _core, _reveals, find_known_providers
from contacts.services import update_contact
from household.services import create_calendar_event
from tests.builders import build_contact, build_household, build_member
from yorik.bundles import import_household

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
DEMO = Path(__file__).resolve().parents[2] / "household" / "demo" / "becker.json"


def revealed(text):
    return [category.id for category in categories_revealed_by(text)]


def find(household, category, now=NOW):
    return find_known_providers(
        household=household, category=resolve_category(category), now=now
    )


def outputs(found):
    return [candidate.as_output() for candidate in found.candidates]


def names(found):
    return [candidate.name for candidate in found.candidates]


def event(household, title, location, starts_at, **fields):
    return create_calendar_event(
        household=household,
        title=title,
        location=location,
        starts_at=starts_at,
        **fields,
    )


def correspondent(household, paperless_id, name, documents=()):
    """Add a correspondent and its documents to the household's Paperless mirror."""
    mirror = PaperlessCorrespondent.objects.filter(household=household)
    stored = PaperlessDocument.objects.filter(household=household)
    write_paperless_mirror(
        household=household,
        correspondents=[
            *(Correspondent(row.paperless_id, row.name) for row in mirror),
            Correspondent(paperless_id, name),
        ],
        documents=[
            *(
                Document(
                    row.paperless_id,
                    row.title,
                    row.correspondent.paperless_id if row.correspondent else None,
                    row.created,
                )
                for row in stored.select_related("correspondent")
            ),
            *(
                Document(paperless_id * 100 + index, title, paperless_id, created)
                for index, (title, created) in enumerate(documents)
            ),
        ],
    )
    return mirror.get(paperless_id=paperless_id)


# The vocabulary ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("category", "german", "english"),
    [
        ("dentist", "Zahnarztpraxis Müller", "Smile Dental Care"),
        ("doctor", "Hausärztin", "family doctor"),
        ("pharmacy", "Stadt-Apotheke", "Boots Pharmacy"),
        ("hospital", "Klinikum Friedrichshain", "St. Mary's Hospital"),
        ("veterinary", "Tierärztin (Bello)", "Riverside Veterinary Clinic"),
        ("optician", "Augenoptik Kaya", "Vision Express Opticians"),
        ("hairdresser", "Friseursalon Haarmonie", "Jonas' barber"),
        ("garage", "Autowerkstatt Krüger", "Joe's Garage"),
        ("lawyer", "Kanzlei Dr. Weber Rechtsanwälte", "Smith & Co, attorneys"),
        ("tax_advisor", "Steuerberatung Neumann", "our tax advisor"),
        ("accountant", "Buchhaltungsbüro Schulz", "Certified Accountants Ltd"),
    ],
)
def test_every_category_is_revealed_in_german_and_english(category, german, english):
    assert revealed(german) == [category]
    assert revealed(english) == [category]


def test_the_vocabulary_covers_the_spec_categories_with_both_names():
    assert sorted(category.id for category in CATEGORIES) == [
        "accountant",
        "dentist",
        "doctor",
        "garage",
        "hairdresser",
        "hospital",
        "lawyer",
        "optician",
        "pharmacy",
        "tax_advisor",
        "veterinary",
    ]
    for category in CATEGORIES:
        assert resolve_category(category.name_en) is category
        assert resolve_category(category.name_de) is category


@pytest.mark.parametrize(
    "text", ["zahnarzt", "Zahnärztin", "ZAHNARZT", "Zahnaerztin", "Kinderzahnarzt"]
)
def test_lookup_ignores_case_accents_and_umlaut_spelling(text):
    assert revealed(text) == ["dentist"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tierarzt", ["veterinary"]),
        ("Tierärztin", ["veterinary"]),
        ("Tierarztpraxis Dr. Vogel", ["veterinary"]),
        ("Dr. med. vet. Vogel", ["veterinary"]),
        ("Arzt", ["doctor"]),
        ("Hausarzt", ["doctor"]),
        ("Kinderärztin (Paul)", ["doctor"]),
        ("Arztpraxis am Markt", ["doctor"]),
        ("Dr. med. Petra Mueller", ["doctor"]),
        ("Augenarzt (Lena)", ["doctor"]),
        ("Zahnarzt", ["dentist"]),
        ("Dr. med. dent. Schmidt", ["dentist"]),
        ("Zahnarzt und Hausarzt im Ärztehaus", ["dentist", "doctor"]),
    ],
)
def test_vets_and_dentists_are_no_doctors(text, expected):
    assert revealed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fahrradwerkstatt", []),
        ("Fahrrad-Werkstatt Kiez", []),
        ("Holzwerkstatt Lichtenberg", []),
        ("Vermieter Garage (Stellplatz)", []),
        ("Versicherung (Hausrat, Haftpflicht, Kfz)", []),
        ("Versicherungsschein Kfz-Versicherung", []),
        ("Autovermietung Ostkreuz", []),
        ("unsere Werkstatt (Touran)", ["garage"]),
        ("Kfz-Meisterbetrieb Pohl", ["garage"]),
        ("Autohaus Krüger GmbH", ["garage"]),
        ("Reifenwechsel Winterreifen", ["garage"]),
    ],
)
def test_only_car_workshops_are_garages(text, expected):
    assert revealed(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tierklinik Kleintierzentrum Biesdorf", ["veterinary"]),
        ("Techniker Krankenkasse", []),
        ("Kinderklinik Sonnenhügel", ["hospital"]),
        ("Zahnklinik der Charité", ["dentist"]),
        ("Staatsanwaltschaft Berlin", []),
        ("Rechnung Gleitsichtbrille", ["optician"]),
        ("Hundefriseur Wuff", []),
        ("Schwarztee-Kontor", []),
        ("Finanzamt Friedrichshain", []),
        ("Physiotherapie (Jonas)", []),
    ],
)
def test_look_alikes_reveal_nothing_or_the_right_category(text, expected):
    assert revealed(text) == expected


@pytest.mark.parametrize(
    ("word", "category"),
    [
        ("dentist", "dentist"),
        ("Zahnärztin", "dentist"),
        ("Kieferorthopäde", "dentist"),
        ("Hausarzt", "doctor"),
        ("Arzt", "doctor"),
        ("Tierarzt", "veterinary"),
        ("vet", "veterinary"),
        ("Friseur", "hairdresser"),
        ("Frisör", "hairdresser"),
        ("Werkstatt", "garage"),
        ("tax advisor", "tax_advisor"),
        ("tax_advisor", "tax_advisor"),
        ("Steuerberater", "tax_advisor"),
        ("Buchhalter", "accountant"),
        ("Anwalt", "lawyer"),
        ("Apotheke", "pharmacy"),
        ("Krankenhaus", "hospital"),
        ("Optiker", "optician"),
    ],
)
def test_resolve_category_accepts_ids_names_and_synonyms(word, category):
    assert resolve_category(word).id == category


def test_resolve_category_refuses_unknown_and_ambiguous_words():
    with pytest.raises(UnknownCategory, match=r"Unknown category 'Bäcker'\. Known: "):
        resolve_category("Bäcker")
    with pytest.raises(UnknownCategory, match="ambiguous: dentist, doctor"):
        resolve_category("Zahnarzt oder Hausarzt")
    with pytest.raises(UnknownCategory):
        get_category("plumber")


# The sources ------------------------------------------------------------------


@pytest.mark.django_db
def test_contacts_count_by_relation_business_name_or_tag(household):
    build_contact(household, "Dr. Anna Roth", relation="mein Zahnarzt")
    build_contact(household, "Zahnarztpraxis Müller", kind="business")
    build_contact(household, "Praxis am Park", kind="business", tags=["dentist"])
    build_contact(household, "Gerd Zahnarzt")  # a surname is no evidence
    build_contact(household, "Old Dentist", relation="Zahnarzt", status="archived")
    build_contact(household, "Dental Spam", kind="business", status="spam")
    build_contact(household, "Neuer Zahnarzt", kind="business", status="pending")

    found = find(household, "Zahnarzt")

    evidence = {c["name"]: c["evidence"] for c in outputs(found)}
    assert evidence == {
        "Dr. Anna Roth": "relation: mein Zahnarzt",
        "Zahnarztpraxis Müller": "name: Zahnarztpraxis Müller",
        "Praxis am Park": "tag: dentist",
        "Neuer Zahnarzt": "name: Neuer Zahnarzt",
    }
    assert found.source_counts == {"contacts": 4, "paperless": 0, "calendar": 0}


@pytest.mark.django_db
def test_a_contact_candidate_carries_its_reachability(household):
    contact = build_contact(
        household,
        "Zahnarztpraxis Dr. Schmidt",
        kind="business",
        relation="mein Zahnarzt",
        last_contacted_at=datetime(2026, 1, 13, 9, 0, tzinfo=UTC),
        channels=[
            {"kind": "email", "value": "Praxis@Zahnarzt-Schmidt.example"},
            {"kind": "phone", "value": "030 29774410"},
            {"kind": "phone", "value": "0171 1234567"},
        ],
        addresses=[
            {"kind": "billing", "line1": "Postfach 12", "city": "Berlin"},
            {
                "kind": "work",
                "line1": "Boxhagener Straße 52",
                "postcode": "10245",
                "city": "Berlin",
            },
        ],
    )

    [candidate] = outputs(find(household, "dentist"))

    assert candidate == {
        "source": "contact",
        "contact_id": contact.pk,
        "name": "Zahnarztpraxis Dr. Schmidt",
        "address": "Boxhagener Straße 52, 10245 Berlin",
        "phone": "+493029774410",
        "email": "praxis@zahnarzt-schmidt.example",
        "last_seen": "2026-01-13",
        "evidence": "relation: mein Zahnarzt; name: Zahnarztpraxis Dr. Schmidt",
    }


@pytest.mark.django_db
def test_paperless_counts_by_correspondent_name_or_document_titles(household):
    correspondent(
        household,
        2,
        "Zahnarztpraxis Dr. Schmidt",
        [
            ("Rechnung Prophylaxe", date(2025, 11, 3)),
            ("Heil- und Kostenplan", date(2024, 6, 3)),
            ("Rechnung Kontrolle", date(2025, 1, 25)),
        ],
    )
    correspondent(
        household,
        13,
        "Praxis Hoffmann",
        [
            ("Zahnärztliche Rechnung Füllung", date(2023, 3, 22)),
            ("Terminbestätigung", date(2023, 9, 1)),
        ],
    )
    correspondent(household, 14, "Hausverwaltung Brandt", [("Nebenkosten", None)])
    correspondent(household, 15, "Zahnklinik Nord")

    found = find(household, "dentist")

    assert outputs(found) == [
        {
            "source": "paperless",
            "name": "Zahnarztpraxis Dr. Schmidt",
            "last_seen": "2025-11-03",
            "evidence": "3 documents, latest 'Rechnung Prophylaxe' on 2025-11-03",
        },
        {
            "source": "paperless",
            "name": "Praxis Hoffmann",
            "last_seen": "2023-03-22",
            "evidence": "1 document: 'Zahnärztliche Rechnung Füllung' on 2023-03-22",
        },
        {
            "source": "paperless",
            "name": "Zahnklinik Nord",
            "evidence": "correspondent in Paperless, no documents",
        },
    ]
    assert found.source_counts == {"contacts": 0, "paperless": 3, "calendar": 0}


@pytest.mark.django_db
def test_calendar_counts_past_events_with_a_location(household):
    practice = "Zahnarztpraxis Dr. Schmidt, Boxhagener Straße 52, 10245 Berlin"
    event(household, "Zahnreinigung", practice, datetime(2026, 1, 13, 9, tzinfo=UTC))
    event(household, "Zahnarzt", practice, datetime(2025, 5, 2, 7, tzinfo=UTC))
    event(household, "Zahnarzt Kontrolle", practice, NOW + timedelta(days=40))
    event(household, "Zahnarzt anrufen", "", datetime(2025, 2, 1, tzinfo=UTC))
    event(
        household,
        "Zahnarzt Lena",
        "Hauptstr. 1, Potsdam",
        datetime(2024, 3, 5, 8, tzinfo=UTC),
    )

    found = find(household, "Zahnarzt")

    assert outputs(found) == [
        {
            "source": "calendar",
            "name": "Zahnarztpraxis Dr. Schmidt",
            "address": "Boxhagener Straße 52, 10245 Berlin",
            "last_seen": "2026-01-13",
            "evidence": (
                f"2 past events at {practice}, latest 'Zahnreinigung' on 2026-01-13"
            ),
        },
        {
            "source": "calendar",
            "name": "Zahnarzt Lena",
            "address": "Hauptstr. 1, Potsdam",
            "last_seen": "2024-03-05",
            "evidence": (
                "1 past event at Hauptstr. 1, Potsdam, latest 'Zahnarzt Lena' "
                "on 2024-03-05"
            ),
        },
    ]


@pytest.mark.django_db
def test_no_candidate_for_a_category_nobody_uses(household):
    build_contact(household, "Oma", relation="Großmutter")

    found = find(household, "Steuerberater")

    assert found.candidates == []
    assert found.source_counts == {"contacts": 0, "paperless": 0, "calendar": 0}


# Merging and order -------------------------------------------------------------


@pytest.mark.django_db
def test_one_provider_in_three_sources_is_one_candidate(household):
    contact = build_contact(
        household,
        "Zahnarztpraxis Dr. Schmidt",
        kind="business",
        relation="mein Zahnarzt",
        last_contacted_at=datetime(2025, 9, 1, tzinfo=UTC),
        addresses=[{"line1": "Boxhagener Str. 52", "postcode": "10245"}],
    )
    correspondent(
        household,
        2,
        "Zahnarztpraxis Dr. Schmidt",
        [("Rechnung Prophylaxe", date(2025, 11, 3))],
    )
    event(
        household,
        "Zahnreinigung",
        "Boxhagener Straße 52, 10245 Berlin",
        datetime(2026, 1, 13, 9, tzinfo=UTC),
    )

    found = find(household, "dentist")

    assert outputs(found) == [
        {
            "source": "contact",
            "contact_id": contact.pk,
            "name": "Zahnarztpraxis Dr. Schmidt",
            "address": "Boxhagener Str. 52, 10245",
            "last_seen": "2026-01-13",
            "evidence": (
                "relation: mein Zahnarzt; name: Zahnarztpraxis Dr. Schmidt; "
                "1 document: 'Rechnung Prophylaxe' on 2025-11-03; "
                "1 past event at Boxhagener Straße 52, 10245 Berlin, "
                "latest 'Zahnreinigung' on 2026-01-13"
            ),
        }
    ]
    assert found.source_counts == {"contacts": 1, "paperless": 1, "calendar": 1}


@pytest.mark.django_db
def test_sources_merge_by_name_core_and_by_phone(household):
    build_contact(household, "Autowerkstatt Krüger", kind="business")
    correspondent(
        household,
        4,
        "Autohaus Krüger GmbH",
        [("Rechnung Inspektion", date(2026, 4, 10))],
    )
    build_contact(
        household,
        "Frank Neumann",
        relation="Steuerberater",
        channels=[{"kind": "phone", "value": "+49 30 5579 2240"}],
    )
    build_contact(
        household,
        "Steuerberatung Neumann",
        kind="business",
        channels=[{"kind": "phone", "value": "030 55792240"}],
    )

    [garage] = outputs(find(household, "Werkstatt"))
    [tax_advisor] = outputs(find(household, "Steuerberater"))

    assert garage["source"] == "contact"
    assert garage["evidence"] == (
        "name: Autowerkstatt Krüger; Autohaus Krüger GmbH: "
        "1 document: 'Rechnung Inspektion' on 2026-04-10"
    )
    assert tax_advisor["name"] == "Frank Neumann"
    assert tax_advisor["evidence"] == (
        "relation: Steuerberater; contact Steuerberatung Neumann"
    )


@pytest.mark.parametrize("first", ["dentist", "garage"])
def test_what_a_call_folds_is_kept_per_category(first):
    """The process keeps what calls fold and test; a category's answers stay its own."""
    expected = {
        "dentist": (True, frozenset({"kruger"})),
        "garage": (False, frozenset({"zahnarztpraxis", "kruger"})),
    }
    order = [first, *(category for category in expected if category != first)]
    for category in order:
        category_id = get_category(category).id
        answers = (
            _reveals(category_id, "zahnarztpraxis"),
            _core(category_id, "zahnarztpraxis kruger"),
        )
        assert answers == expected[category]


@pytest.mark.django_db
def test_two_practices_at_one_address_stay_apart(household):
    """An address links a contact to an event, never two contacts to each other."""
    building = [{"line1": "Karl-Marx-Allee 90", "city": "Berlin"}]
    build_contact(household, "Dr. Bauer", relation="Frauenärztin", addresses=building)
    build_contact(household, "Dr. Kaya", relation="Hausarzt", addresses=building)
    event(
        household,
        "Arzttermin",
        "Karl-Marx-Allee 90, Berlin",
        datetime(2026, 3, 1, 8, tzinfo=UTC),
    )

    found = find(household, "doctor")

    assert sorted(names(found)) == ["Dr. Bauer", "Dr. Kaya"]
    assert found.source_counts == {"contacts": 2, "paperless": 0, "calendar": 1}


@pytest.mark.django_db
def test_similar_names_of_different_providers_stay_apart(household):
    build_contact(household, "Zahnarztpraxis Dr. Schmidt", kind="business")
    correspondent(household, 7, "Zahnarztpraxis Dr. Ernst", [("Rechnung", None)])
    event(
        household,
        "Zahnarzt",
        "Hauptstraße 12, Berlin",
        datetime(2025, 1, 1, tzinfo=UTC),
    )
    build_contact(
        household,
        "Zahnarzt Hauptstraße",
        relation="Zahnarzt",
        addresses=[{"line1": "Hauptstraße 1", "city": "Berlin"}],
    )

    event(
        household,
        "Zahnarzt",
        "Zahnklinik Berlin, Parkweg 3, Berlin",
        datetime(2025, 3, 1, tzinfo=UTC),
    )
    build_contact(
        household,
        "Zahnarztpraxis Berlin",
        kind="business",
        addresses=[{"line1": "Hauptstraße 1", "city": "Berlin"}],
    )

    found = find(household, "dentist")

    assert found.source_counts == {"contacts": 3, "paperless": 1, "calendar": 2}
    assert sorted(names(found)) == [
        "Zahnarzt",  # the event at Hauptstraße 12, not 1
        "Zahnarzt Hauptstraße",
        "Zahnarztpraxis Berlin",
        "Zahnarztpraxis Dr. Ernst",
        "Zahnarztpraxis Dr. Schmidt",
        "Zahnklinik Berlin",
    ]


@pytest.mark.django_db
def test_candidates_are_ordered_by_trust_then_last_seen(household):
    event(household, "Friseur", "Salon Eins, Weg 1", datetime(2026, 11, 1, tzinfo=UTC))
    correspondent(household, 9, "Friseur Zwei", [("Rechnung", date(2026, 10, 1))])
    build_contact(household, "Friseur Drei", kind="business")
    build_contact(
        household,
        "Barbier Vier",
        kind="business",
        last_contacted_at=datetime(2024, 1, 1, tzinfo=UTC),
    )
    build_contact(
        household,
        "Coiffeur Fünf",
        kind="business",
        last_contacted_at=datetime(2025, 1, 1, tzinfo=UTC),
    )

    found = find(household, "hairdresser")

    assert names(found) == [
        "Coiffeur Fünf",
        "Barbier Vier",
        "Friseur Drei",
        "Friseur Zwei",
        "Salon Eins",
    ]
    assert "last_seen" not in outputs(found)[2]


# Many providers: what is shown depends on every candidate ----------------------


def dentists(household, count, *, newest=NOW):
    """Add `count` dentists, one contacted a day earlier than the one before."""
    return [
        build_contact(
            household,
            f"Praxis {day:02}",
            relation="Zahnarzt",
            last_contacted_at=newest - timedelta(days=day),
            addresses=[{"line1": f"Weg {day}", "city": "Berlin"}],
        )
        for day in range(count)
    ]


@pytest.mark.django_db
def test_a_late_event_lifts_an_old_contact_into_the_answer(household):
    """A calendar candidate raises its contact's last_seen past the tenth."""
    dentists(household, 12)
    old = build_contact(
        household,
        "Dr. Anna Roth",
        relation="mein Zahnarzt",
        last_contacted_at=NOW - timedelta(days=400),
        addresses=[{"line1": "Boxhagener Str. 52", "city": "Berlin"}],
    )
    event(
        household,
        "Zahnreinigung",
        "Boxhagener Straße 52, Berlin",
        NOW - timedelta(hours=2),
    )

    found = find(household, "dentist")

    assert names(found) == ["Dr. Anna Roth", *(f"Praxis {day:02}" for day in range(9))]
    assert outputs(found)[0] == {
        "source": "contact",
        "contact_id": old.pk,
        "name": "Dr. Anna Roth",
        "address": "Boxhagener Str. 52, Berlin",
        "last_seen": NOW.date().isoformat(),
        "evidence": (
            "relation: mein Zahnarzt; 1 past event at Boxhagener Straße 52, Berlin, "
            "latest 'Zahnreinigung' on 2026-12-02"
        ),
    }
    assert found.truncated is True
    assert found.source_counts == {"contacts": 13, "paperless": 0, "calendar": 1}


@pytest.mark.django_db
def test_an_old_document_adds_its_evidence_to_a_shown_contact(household):
    """A shown group lists every member, however old and however far down."""
    dentists(household, 11)
    correspondent(
        household,
        5,
        "Praxis 03",
        [
            ("Zahnärztliche Rechnung", date(2019, 5, 1)),
            ("Zahnarzt Mahnung", date(2019, 6, 1)),
            ("Kontoauszug", date(2024, 6, 1)),
        ],
    )

    found = find(household, "dentist")

    assert outputs(found)[3]["evidence"] == (
        "relation: Zahnarzt; 2 documents, latest 'Zahnarzt Mahnung' on 2019-06-01"
    )
    assert outputs(found)[3]["last_seen"] == "2026-11-29"
    assert found.source_counts == {"contacts": 11, "paperless": 1, "calendar": 0}


@pytest.mark.django_db
def test_contacts_merged_by_phone_are_one_group_and_leave_room(household):
    """Eleven contacts, two of them one practice by phone: ten groups, not cut."""
    practices = dentists(household, 10)
    phone = [{"kind": "phone", "value": "030 5579 2240"}]
    update_contact(
        contact=practices[9],
        aliases=[],
        channels=phone,
        addresses=[{"line1": "Weg 9", "city": "Berlin"}],
    )
    build_contact(
        household,
        "Zahnarztpraxis Neumann",
        kind="business",
        last_contacted_at=NOW - timedelta(days=300),
        channels=[
            {"kind": "phone", "value": "+49 30 55792240"},
            {"kind": "email", "value": "praxis@neumann.example"},
        ],
    )

    found = find(household, "dentist")

    assert names(found) == [f"Praxis {day:02}" for day in range(10)]
    assert outputs(found)[9] == {
        "source": "contact",
        "contact_id": practices[9].pk,
        "name": "Praxis 09",
        "address": "Weg 9, Berlin",
        "phone": "+493055792240",
        "email": "praxis@neumann.example",
        "last_seen": "2026-11-23",
        "evidence": ("relation: Zahnarzt; contact Zahnarztpraxis Neumann"),
    }
    assert found.truncated is False
    assert found.source_counts == {"contacts": 11, "paperless": 0, "calendar": 0}


@pytest.mark.django_db
def test_counts_are_exact_however_many_groups_are_cut(household):
    dentists(household, 14)
    for number in range(3):
        correspondent(
            household,
            number + 1,
            f"Kieferorthopädie {number}",
            [("Rechnung", date(2020, 1, number + 1))],
        )
        event(
            household,
            "Zahnarzt",
            f"Dentalklinik {number}, Ring {number}, Berlin",
            datetime(2021, 1, number + 1, tzinfo=UTC),
        )

    found = find(household, "dentist")

    assert len(found.candidates) == 10
    assert found.truncated is True
    assert found.source_counts == {"contacts": 14, "paperless": 3, "calendar": 3}


@pytest.mark.django_db
def test_last_seen_is_the_day_in_the_households_time_zone(household, settings):
    """Half past eleven in UTC is already the next day in Berlin."""
    settings.TIME_ZONE = "Europe/Berlin"
    build_contact(
        household,
        "Dr. Roth",
        relation="Zahnarzt",
        last_contacted_at=datetime(2026, 3, 1, 23, 30, tzinfo=UTC),
    )
    event(
        household,
        "Zahnarzt",
        "Praxis Ost, Weg 1, Berlin",
        datetime(2026, 4, 30, 22, 30, tzinfo=UTC),
    )

    found = find(household, "dentist")

    assert [c["last_seen"] for c in outputs(found)] == ["2026-03-02", "2026-05-01"]


@pytest.mark.django_db
def test_a_contact_is_found_by_what_it_is_now(household):
    """The category's tokens follow every write of the name, kind and tags."""
    contact = build_contact(household, "Praxis am Park", kind="business")
    assert find(household, "dentist").candidates == []

    update_contact(
        contact=contact, aliases=[], channels=[], addresses=[], tags=["Zahnarzt"]
    )
    assert outputs(find(household, "dentist"))[0]["evidence"] == "tag: Zahnarzt"

    update_contact(
        contact=contact,
        aliases=[],
        channels=[],
        addresses=[],
        display_name="Zahnklinik am Park",
        tags=[],
    )
    assert outputs(find(household, "dentist"))[0]["evidence"] == (
        "name: Zahnklinik am Park"
    )

    update_contact(
        contact=contact, aliases=[], channels=[], addresses=[], kind="person"
    )
    assert find(household, "dentist").candidates == []


# Isolation, cost, the skill ------------------------------------------------------


@pytest.mark.django_db
def test_another_households_providers_never_show(household, other_household):
    build_contact(other_household, "Levi Dental", kind="business")
    correspondent(other_household, 2, "Dental Clinic Haifa", [("Invoice", None)])
    event(
        other_household,
        "Dentist",
        "Herzl St 1, Haifa",
        datetime(2025, 1, 1, tzinfo=UTC),
    )

    found = find(household, "dentist")

    assert found.candidates == []
    assert found.source_counts == {"contacts": 0, "paperless": 0, "calendar": 0}
    assert len(find(other_household, "dentist").candidates) == 3


@pytest.mark.django_db
def test_the_number_of_queries_does_not_grow_with_the_data(household):
    for number in range(6):
        build_contact(
            household,
            f"Zahnarztpraxis {number}",
            kind="business",
            channels=[{"kind": "phone", "value": f"030 1234567{number}"}],
            addresses=[{"line1": f"Weg {number}", "city": "Berlin"}],
        )
        correspondent(
            household,
            number + 1,
            f"Praxis {number}",
            [("Zahnärztliche Rechnung", date(2025, 1, number + 1))],
        )
        event(
            household,
            "Zahnarzt",
            f"Platz {number}, Berlin",
            datetime(2025, 2, number + 1, tzinfo=UTC),
        )

    with CaptureQueriesContext(connection) as queries:
        found = find(household, "dentist")

    # Contacts, documents, correspondents, events; then the shown contacts'
    # addresses and emails.
    assert len(queries) == 5
    assert found.source_counts == {"contacts": 6, "paperless": 6, "calendar": 6}
    assert outputs(found)[0]["address"] == "Weg 5, Berlin"


@pytest.mark.django_db
def test_the_skill_answers_with_candidates_and_counts(api, household):
    build_contact(household, "Autowerkstatt Krüger", kind="business")
    event(
        household,
        "Reifenwechsel Werkstatt",
        "Autowerkstatt Krüger, Persiusstraße 7, 10245 Berlin",
        timezone.now() - timedelta(days=30),
    )
    event(
        household,
        "Werkstatt",
        "Kfz Pohl, Herzbergstraße 82",
        timezone.now() + timedelta(days=30),
    )

    response = api.call("find_known_provider", {"category": "Werkstatt"})

    assert response.status_code == 200
    body = response.json()
    assert body["source_counts"] == {"contacts": 1, "paperless": 0, "calendar": 1}
    assert [c["name"] for c in body["candidates"]] == ["Autowerkstatt Krüger"]
    assert "card" not in body


@pytest.mark.django_db
def test_the_skill_refuses_an_unknown_category(api):
    response = api.call("find_known_provider", {"category": "Bäcker"})

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["fields"] == {
        "category": [
            "Unknown category 'Bäcker'. Known: accountant, dentist, doctor, garage, "
            "hairdresser, hospital, lawyer, optician, pharmacy, tax_advisor, "
            "veterinary."
        ]
    }


@pytest.mark.django_db
def test_the_skill_refuses_a_missing_or_non_string_category(api):
    assert api.call("find_known_provider", {}).status_code == 400
    assert api.call("find_known_provider", {"category": 3}).status_code == 400
    assert (
        api.call("find_known_provider", {"category": "x", "near": "Berlin"}).status_code
        == 400
    )


@pytest.mark.django_db
def test_restricted_members_may_ask_and_see_only_their_household(api_as, household):
    viewer = build_member(household, "lena", role="viewer")
    build_contact(household, "Apotheke am Markt", kind="business")
    other = build_household("weber")
    build_contact(other, "Weber Apotheke", kind="business")

    response = api_as(viewer).call("find_known_provider", {"category": "Apotheke"})

    assert response.status_code == 200
    assert [c["name"] for c in response.json()["candidates"]] == ["Apotheke am Markt"]


@pytest.mark.django_db
def test_the_manifest_describes_the_skill(api):
    manifests = {m["name"]: m for m in api.get("/api/skills/").json()["skills"]}

    manifest = manifests["find_known_provider"]
    assert manifest["permissions"] == ["admin", "member", "restricted"]
    assert manifest["side_effects"] == "none — read only."
    assert manifest["tags"] == [
        "contacts",
        "paperless",
        "calendar",
        "provider",
        "search",
    ]
    assert manifest["inputs"]["category"]["required"] is True
    assert (
        "tax_advisor (tax advisor, Steuerberater)"
        in (manifest["inputs"]["category"]["description"])
    )
    assert set(manifest["outputs"]) == {"candidates", "source_counts", "truncated"}


# The demo household ---------------------------------------------------------------


@pytest.mark.django_db
def test_the_demo_household_answers_dentist_friseur_and_werkstatt():
    """One import for the three answers: loading the demo takes seconds."""
    demo = import_household(bundle=json.loads(DEMO.read_text()))

    dentists = find(demo, "dentist")
    hairdressers = find(demo, "Friseur")
    garages = find(demo, "Werkstatt")

    assert names(dentists) == [
        "Kieferorthopädie Dr. Lange",
        "Zahnarztpraxis Dr. Schmidt",
        "Praxis Hoffmann",
    ]
    schmidt = outputs(dentists)[1]["evidence"]
    assert schmidt.startswith("relation: mein Zahnarzt; tag: dentist")
    assert "6 documents, latest 'Rechnung Prophylaxe' on 2026-01-20" in schmidt
    assert names(hairdressers) == ["Friseursalon Haarmonie", "Ali's Barber Lounge"]
    assert hairdressers.source_counts == {"contacts": 2, "paperless": 1, "calendar": 1}
    # Not the bike shop, the parking space's landlord nor the car insurance.
    assert names(garages) == ["Autowerkstatt Krüger", "Kfz-Meisterbetrieb Pohl"]
    assert "Autohaus Krüger GmbH: 4 documents" in outputs(garages)[0]["evidence"]
    assert garages.source_counts == {"contacts": 2, "paperless": 2, "calendar": 2}


def test_many_providers_are_cut_to_the_most_trusted_with_a_flag(api, household):
    for day in range(12):
        build_contact(
            household,
            f"Praxis {day:02}",
            relation="Zahnarzt",
            last_contacted_at=NOW - timedelta(days=day),
        )

    body = api.call("find_known_provider", {"category": "dentist"}).json()

    assert [c["name"] for c in body["candidates"]] == [
        f"Praxis {day:02}" for day in range(10)
    ]
    assert body["truncated"] is True
    assert body["source_counts"]["contacts"] == 12


def test_a_short_answer_carries_no_truncated_flag(api, household):
    build_contact(household, "Dr. Roth", relation="Zahnarzt")

    body = api.call("find_known_provider", {"category": "dentist"}).json()

    assert len(body["candidates"]) == 1
    assert "truncated" not in body
