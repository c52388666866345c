"""Generate a realistic household for the speed benchmarks, fast.

    .venv/bin/python bench/generate.py --contacts 10000 --people 10000 --slug bench-10k

German and Israeli names drawn with a long tail (a few names are common, most
are rare), phones valid for Germany and Israel, addresses (some incomplete),
aliases, relations (Oma, Zahnarzt, …), provider businesses, a Paperless-ngx
mirror, past calendar events and a letter template. People are 10 % members
(some of them managed children) and 90 % leads.

Rows are written with bulk_create in batches; the derived columns come from
the app's own code: profiles and leads get theirs from
household.search_columns.person_columns, contacts go through
contacts.services.refresh_search_columns and names are embedded by
household.services, as every write in the app does. The data lives in the
benchmark database (.yorik-bench), never in .yorik.
"""

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.django_setup import setup

if __name__ == "__main__":
    setup()

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from bench.names_data import (
    GERMAN_FIRST,
    GERMAN_LAST,
    ISRAELI_FIRST,
    ISRAELI_LAST,
)
from compose.models import LetterTemplate
from contacts.models import (
    Address,
    ChannelKind,
    Contact,
    ContactAlias,
    ContactChannel,
    ContactKind,
    ContactStatus,
    PaperlessCorrespondent,
    PaperlessDocument,
    normalize_channel_value,
)
from contacts.services import refresh_search_columns
from household.models import (
    CalendarEvent,
    Household,
    Lead,
    LeadStatus,
    Membership,
    MembershipStatus,
    Role,
    UserProfile,
)
from household.search_columns import person_columns
from household.services import (
    create_member,
    index_lead_names,
    index_member_names,
)
from people_search.engine.phones import InvalidPhoneNumber, parse_phone
from people_search.engine.text import fold_name
from people_search.index.models import NameWord

BATCH = 5000
# From this many new rows on, the vector index is built once after loading.
BULK_LOAD_ROWS = 20_000
VECTOR_INDEX = "name_word_hnsw"
REFRESH_BATCH = 500
TEMPLATE_ID = "kuendigung-mietvertrag-de"

# fmt: off
# More names than bench/names_data.py holds, so that a large household has
# the long tail of a real one instead of a few hundred names repeated.
MORE_GERMAN_FIRST = [
    "Alexander", "Benjamin", "Daniel", "David", "Dominik", "Elias", "Erik",
    "Fabian", "Finn", "Georg", "Hendrik", "Jakob", "Johannes", "Julian", "Kai",
    "Leon", "Lars", "Malte", "Marcel", "Moritz", "Niklas", "Oliver", "Patrick",
    "Robert", "Sven", "Timo", "Vincent", "Werner", "Manfred", "Helmut", "Rüdiger",
    "Karl-Heinz", "Hans-Peter", "Anja", "Birgit", "Brigitte", "Carina", "Doris",
    "Elke", "Eva", "Gabriele", "Heike", "Helga", "Ilse", "Jana", "Jessica",
    "Karin", "Kerstin", "Lea", "Lisa", "Luisa", "Marion", "Martina", "Melanie",
    "Nadine", "Nicole", "Renate", "Sandra", "Silke", "Simone", "Stefanie",
    "Susanne", "Tanja", "Ute", "Vanessa", "Yvonne", "Änne", "Jörn", "Sören",
    "Björn", "Maren", "Greta", "Ida", "Frieda", "Mathilda", "Charlotte",
]
MORE_GERMAN_LAST = [
    "Engel", "Sommer", "Graf", "Dietrich", "Haas", "Schreiber", "Ludwig",
    "Jäger", "Otto", "Simon", "Heinrich", "Brandt", "Schuster", "Böhme", "Kühn",
    "Pohl", "Horn", "Busch", "Thomas", "Wolff", "Sauer", "Bergmann", "Pfeiffer",
    "Voigt", "Ernst", "Arnold", "Kraus", "Stein", "Jahn", "Seidel", "Beyer",
    "Hübner", "Kuhn", "Zimmer", "Hein", "Fiedler", "Marx", "Kraft", "Lorenzen",
    "Ziegler", "Winter", "Schulte", "Martin", "Dörr", "Kühne", "Vogt", "Wendt",
    "Reuter", "Thiele", "Petersen", "Nowak", "Kowalski", "Yilmaz", "Öztürk",
    "Şahin", "Ahrens", "Barth", "Brinkmann", "Dittrich", "Eckert", "Fink",
    "Gebhardt", "Grimm", "Hesse", "Husmann", "Jansen", "Kaufmann", "Lindner",
    "Mertens", "Nagel", "Oswald", "Pape", "Quandt", "Rauch", "Rieger", "Ritter",
    "Sander", "Schütz", "Stahl", "Timm", "Ulrich", "Vetter", "Wegner", "Weiland",
    "Wendel", "Wilke", "Witt", "Zander", "Zeller", "Brückner", "Großmann",
    "Müller-Lüdenscheidt", "von Bülow", "Schulze-Delitzsch", "Schmidt-Rottluff",
]
MORE_ISRAELI_FIRST = [
    "Adi", "Alon", "Asaf", "Boaz", "Dafna", "Dror", "Einat", "Eli", "Elad",
    "Erez", "Gal", "Galit", "Guy", "Hadas", "Idan", "Ilan", "Keren", "Lior",
    "Liat", "Merav", "Meir", "Nadav", "Nava", "Ofer", "Ofra", "Rachel", "Roni",
    "Ruth", "Sagi", "Shai", "Shani", "Tal", "Uri", "Yehuda", "Yoav", "Ziv",
    "Zohar", "Elisheva", "Rivka", "Miriam", "Yosef", "Binyamin", "Netanel",
]
MORE_ISRAELI_LAST = [
    "Ben-Haim", "Ben-Shimon", "Shalom", "Elkayam", "Azoulay", "Vaknin", "Hazan",
    "Barak", "Carmi", "Golan", "Harel", "Klein", "Lavi", "Mor", "Nachmias",
    "Ofir", "Peled", "Rosen", "Sharon", "Tal", "Yaakov", "Zur", "Abergel",
    "Alon", "Ben-Ari", "Bar-On", "Dayan", "Eliyahu", "Gold", "Kaplan", "Lerner",
    "Mualem", "Nahum", "Rubin", "Sabag", "Shamir", "Tzur", "Weinberg", "Zilberman",
]
# The long tail: surnames built like German ones (Ackermann, Lindenberg).
SURNAME_STARTS = [
    "Acker", "Baum", "Berg", "Birken", "Brenn", "Brück", "Eich", "Eisen", "Feld",
    "Finken", "Gold", "Grün", "Hage", "Hart", "Hoch", "Holz", "Kessel", "Kirch",
    "Kloster", "Lang", "Linden", "Mühl", "Neu", "Ober", "Ross", "Sand", "Scharn",
    "Schön", "Stein", "Tannen", "Wald", "Weiden", "Wies", "Wolfs", "Zieg",
]
SURNAME_ENDS = [
    "mann", "berg", "feld", "bach", "hoff", "horst", "meier", "hauser", "brink",
    "kamp", "reuther", "stedt", "ecker", "huber", "lechner", "gruber", "ner",
]
NICKNAMES = {
    "Johannes": "Hannes", "Katharina": "Kathi", "Christian": "Chris",
    "Michael": "Micha", "Andreas": "Andi", "Sabine": "Bine", "Alexander": "Alex",
    "Franziska": "Franzi", "Maximilian": "Max", "Tobias": "Tobi",
    "Matthias": "Matze", "Yonatan": "Yoni", "Avraham": "Avi", "Yosef": "Yossi",
    "Elisheva": "Eli", "Shlomo": "Shlomi", "Stefanie": "Steffi",
    "Gabriele": "Gabi", "Wolfgang": "Wolle", "Binyamin": "Beni",
}
FAMILY = ["Mutter", "Vater", "Oma", "Opa", "Großmutter", "Großvater", "Tante",
          "Onkel", "Cousine", "Cousin", "Schwester", "Bruder", "Schwiegermutter"]
OTHER_RELATIONS = [
    "Nachbar", "Nachbarin", "Kollege", "Kollegin", "Freundin", "Freund",
    "Babysitter", "Vermieter", "Hausverwaltung", "Trainer", "Lehrerin",
    "Zahnarzt", "mein Zahnarzt", "Hausärztin", "Kinderarzt", "Steuerberater",
    "Friseurin", "Klempner", "Elektriker", "Tierärztin",
]
BUSINESSES = [
    ("Zahnarztpraxis Dr. {last}", "dentist"), ("Zahnärzte am {street}", "dentist"),
    ("Hausarztpraxis Dr. {last}", "doctor"), ("Dr. med. {first} {last}", "doctor"),
    ("Autowerkstatt {last}", "garage"), ("Kfz-Meisterbetrieb {last}", "garage"),
    ("Friseursalon {first}", "hairdresser"), ("Salon {last}", "hairdresser"),
    ("Kanzlei {last} & Partner", "lawyer"), ("Steuerberatung {last}", "tax_advisor"),
    ("Augenoptik {last}", "optician"), ("Apotheke am {street}", "pharmacy"),
    ("Tierarztpraxis {last}", "veterinary"), ("Elektro {last} GmbH", ""),
    ("Bäckerei {last}", ""), ("Sanitär {last}", ""), ("Malerbetrieb {last}", ""),
]
DOCUMENT_SENDERS = [
    "Finanzamt {city}", "AOK Nordost", "Techniker Krankenkasse", "Stadtwerke {city}",
    "Allianz Versicherung", "Deutsche Bahn", "Vodafone", "Telekom",
    "Zahnarztpraxis Dr. {last}", "Praxis Dr. {last}", "Autohaus {last}",
    "Hausverwaltung {last}", "Rechtsanwalt {last}", "Steuerkanzlei {last}",
]
DOCUMENT_TITLES = [
    "Rechnung {month}", "Kontoauszug {month}", "Beitragsbescheid {year}",
    "Vertrag", "Mahnung", "Kostenvoranschlag", "Rechnung Zahnreinigung",
    "Befund", "Steuerbescheid {year}", "Rechnung Inspektion", "Lieferschein",
]
EVENT_TITLES = [
    ("Zahnarzttermin", "Zahnarztpraxis Dr. {last}, {street} {number}, {city}"),
    ("Kontrolle beim Zahnarzt", "{street} {number}, {postcode} {city}"),
    ("Friseur", "Salon {last}, {street} {number}, {city}"),
    ("Werkstatt: Reifenwechsel", "Autowerkstatt {last}, {street} {number}, {city}"),
    ("Hausarzt", "Praxis Dr. {last}, {street} {number}, {city}"),
    ("Elternabend", "Grundschule am {street}"),
    ("Geburtstag Oma", ""),
    ("Yoga", "Studio {last}, {street} {number}"),
    ("Steuerberater", "Steuerberatung {last}, {street} {number}, {city}"),
]
GERMAN_STREETS = [
    "Hauptstraße", "Bahnhofstraße", "Gartenstraße", "Schulstraße", "Dorfstraße",
    "Bergstraße", "Birkenweg", "Lindenstraße", "Kirchstraße", "Waldstraße",
    "Ringstraße", "Goethestraße", "Schillerstraße", "Mozartstraße", "Am Markt",
    "Friedrichstr.", "Kastanienallee", "Müllerstraße", "Sonnenallee",
]
GERMAN_TOWNS = [
    ("10115", "Berlin"), ("10437", "Berlin"), ("12049", "Berlin"),
    ("20095", "Hamburg"), ("22765", "Hamburg"), ("80331", "München"),
    ("81667", "München"), ("50667", "Köln"), ("60311", "Frankfurt am Main"),
    ("70173", "Stuttgart"), ("40213", "Düsseldorf"), ("01067", "Dresden"),
    ("04109", "Leipzig"), ("28195", "Bremen"), ("30159", "Hannover"),
    ("90402", "Nürnberg"), ("14467", "Potsdam"), ("79098", "Freiburg"),
]
ISRAELI_STREETS = ["Herzl", "Dizengoff", "Rothschild", "Ben Yehuda", "Allenby",
                   "Jabotinsky", "Weizmann", "HaNasi", "Sokolov", "Bialik"]
ISRAELI_TOWNS = [("6473921", "Tel Aviv-Yafo"), ("9414201", "Jerusalem"),
                 ("3303000", "Haifa"), ("4366101", "Ra'anana"),
                 ("7650001", "Rehovot")]
# Area or mobile prefixes and how many subscriber digits follow them.
GERMAN_PHONES = [("151", 8), ("152", 8), ("157", 8), ("160", 7), ("162", 7),
                 ("170", 7), ("171", 7), ("172", 7), ("176", 8), ("177", 7),
                 ("30", 8), ("40", 8), ("89", 8), ("221", 7), ("69", 8),
                 ("711", 7), ("351", 7)]
ISRAELI_PHONES = [("50", 7), ("52", 7), ("53", 7), ("54", 7), ("58", 7),
                  ("2", 7), ("3", 7), ("4", 7), ("9", 7)]
MAIL_DOMAINS = ["gmail.com", "web.de", "gmx.de", "t-online.de", "posteo.de",
                "walla.co.il", "outlook.com", "example.org"]
# fmt: on

T = TypeVar("T")


class Zipf:
    """Draw from a list with a long tail: item k weighs 1 / (k + 1) ** exponent."""

    def __init__(
        self, items: Sequence[T], rng: random.Random, exponent: float = 0.7
    ) -> None:
        self.items = list(items)
        self.rng = rng
        self.cumulative = list(
            accumulate(1 / (rank + 1) ** exponent for rank in range(len(self.items)))
        )

    def __call__(self) -> T:
        return self.rng.choices(self.items, cum_weights=self.cumulative)[0]


@dataclass
class Person:
    first: str
    last: str
    israeli: bool


class Faker:
    """Realistic German and Israeli names, phones, emails and addresses."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        # The lists begin with the most common names.
        self.german_first = Zipf(GERMAN_FIRST + MORE_GERMAN_FIRST, rng, exponent=0.5)
        self.german_last = Zipf(GERMAN_LAST + MORE_GERMAN_LAST, rng)
        self.israeli_first = Zipf(ISRAELI_FIRST + MORE_ISRAELI_FIRST, rng, exponent=0.5)
        self.israeli_last = Zipf(ISRAELI_LAST + MORE_ISRAELI_LAST, rng)
        self.serial = 0

    def person(self) -> Person:
        """Return a German (70 %) or Israeli name; a third of surnames are rare."""
        rare = self.rng.random() < 0.35
        if self.rng.random() < 0.7:
            last = (
                self.rng.choice(SURNAME_STARTS) + self.rng.choice(SURNAME_ENDS)
                if rare
                else self.german_last()
            )
            return Person(self.german_first(), last, israeli=False)
        last = (
            f"{self.rng.choice(['Ben', 'Bar'])}-{self.israeli_first()}"
            if rare
            else self.israeli_last()
        )
        return Person(self.israeli_first(), last, israeli=True)

    def phone(self, israeli: bool) -> str:
        """Return a possible number as a person would write it down."""
        country, prefixes = (
            ("972", ISRAELI_PHONES) if israeli else ("49", GERMAN_PHONES)
        )
        while True:
            prefix, length = self.rng.choice(prefixes)
            subscriber = "".join(self.rng.choice("0123456789") for _ in range(length))
            subscriber = str(self.rng.randint(1, 9)) + subscriber[1:]
            raw = (
                f"0{prefix} {subscriber}"
                if not israeli and self.rng.random() < 0.6
                else f"+{country} {prefix} {subscriber}"
            )
            try:
                parse_phone(raw, "DE")
            except InvalidPhoneNumber:
                continue
            return raw

    def email(self, person: Person) -> str:
        self.serial += 1
        local = ".".join(
            "".join(char for char in fold_name(part) if char.isalnum())
            for part in (person.first, person.last)
        )
        return f"{local}{self.serial}@{self.rng.choice(MAIL_DOMAINS)}"

    def street(self, israeli: bool) -> tuple[str, str]:
        if israeli:
            return f"Rehov {self.rng.choice(ISRAELI_STREETS)}", str(
                self.rng.randint(1, 120)
            )
        return self.rng.choice(GERMAN_STREETS), str(self.rng.randint(1, 180))

    def address(self, israeli: bool, kind: str) -> dict[str, str]:
        """Return an address; one in seven lacks its street, postcode or city."""
        street, number = self.street(israeli)
        postcode, city = self.rng.choice(ISRAELI_TOWNS if israeli else GERMAN_TOWNS)
        address = {
            "kind": kind,
            "line1": f"{street} {number}",
            "line2": "2. OG" if self.rng.random() < 0.05 else "",
            "postcode": postcode,
            "city": city,
            "country": "Israel" if israeli else "Deutschland",
        }
        if self.rng.random() < 1 / 7:
            address[self.rng.choice(["line1", "postcode", "city"])] = ""
        return address

    def place(self, template: str) -> str:
        street, number = self.street(israeli=False)
        postcode, city = self.rng.choice(GERMAN_TOWNS)
        person = self.person()
        return template.format(
            first=person.first,
            last=person.last,
            street=street,
            number=number,
            postcode=postcode,
            city=city,
            month=f"{self.rng.randint(1, 12):02d}/{self.rng.randint(2019, 2025)}",
            year=self.rng.randint(2018, 2025),
        )

    def past(self, days: int = 3 * 365) -> Any:
        return timezone.now() - timedelta(
            days=self.rng.uniform(1, days), minutes=self.rng.randint(0, 1440)
        )


@dataclass
class Generated:
    household: Household
    admin: Membership
    seconds: dict[str, float] = field(default_factory=dict)


def household_name(*, contacts: int, people: int, seed: int) -> str:
    """Return the name that records how a benchmark household was generated."""
    return f"Bench: {contacts} contacts, {people} people, seed {seed}"


def ensure_household(
    slug: str, *, contacts: int, people: int, seed: int = 1, region: str = "DE"
) -> Household:
    """Return the benchmark household, generating it unless it exists as asked."""
    existing = Household.objects.filter(
        slug=slug, name=household_name(contacts=contacts, people=people, seed=seed)
    ).first()
    if existing is not None:
        return existing
    return generate_household(
        slug, contacts=contacts, people=people, seed=seed, region=region
    ).household


def generate_household(
    slug: str,
    *,
    contacts: int,
    people: int,
    seed: int = 1,
    region: str = "DE",
    on_step: Callable[[str, float], object] = lambda step, seconds: None,
) -> Generated:
    """Replace the household `slug` with a generated one of this many rows.

    `people` counts members and leads together; `on_step` hears each step's
    name and seconds as it ends.
    """
    rng = random.Random(seed)
    faker = Faker(rng)
    seconds: dict[str, float] = {}

    def step(name: str, started: float) -> None:
        seconds[name] = round(time.perf_counter() - started, 1)
        on_step(name, seconds[name])

    started = time.perf_counter()
    delete_household(slug)
    household = Household.objects.create(
        slug=slug,
        name=household_name(contacts=contacts, people=people, seed=seed),
        default_region=region,
        language="de",
    )
    step("delete and create", started)

    started = time.perf_counter()
    admin = create_member(
        household=household,
        username=f"{slug}-admin",
        role=Role.ADMIN,
        first_name="Anna",
        last_name="Becker",
        email=f"{slug}-admin@example.org",
    )
    members = _generate_members(household, faker, count=max(0, people // 10 - 1))
    step("members", started)

    started = time.perf_counter()
    lead_ids = _generate_leads(
        household, faker, count=people - people // 10, owners=[admin, *members]
    )
    step("leads", started)

    with vector_index_built_after(rows=people + contacts, on_build=step):
        started = time.perf_counter()
        for chunk in _chunks([admin.pk, *(m.pk for m in members)]):
            index_member_names(household_id=household.pk, membership_ids=chunk)
        for chunk in _chunks(lead_ids):
            index_lead_names(household_id=household.pk, lead_ids=chunk)
        step("member and lead embeddings", started)

        started = time.perf_counter()
        _generate_contacts(household, faker, count=contacts)
        step("contacts, their search columns and embeddings", started)

    started = time.perf_counter()
    _generate_paperless(household, faker, documents=max(20, contacts // 10))
    _generate_events(household, faker, count=max(20, contacts // 20))
    LetterTemplate.objects.create(
        household=household,
        template_id=TEMPLATE_ID,
        title="Kündigung des Mietvertrags",
        language="de",
        body="Sehr geehrte Damen und Herren,\n\nhiermit kündige ich …",
        recipient_fields=["line1", "postcode", "city"],
    )
    with connection.cursor() as cursor:
        # Fresh statistics, so the planner sees the new rows at once.
        cursor.execute("ANALYZE")
    step("paperless, events, template, analyze", started)
    return Generated(household=household, admin=admin, seconds=seconds)


@contextmanager
def vector_index_built_after(
    *, rows: int, on_build: Callable[[str, float], object]
) -> Iterator[None]:
    """Drop the HNSW index while many rows are loaded, and build it once after.

    Building it over all rows is several times faster than growing it row by
    row. The index comes from the model, so it is the one the app migrates.
    """
    index = next(i for i in NameWord._meta.indexes if i.name == VECTOR_INDEX)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [VECTOR_INDEX])
        present = cursor.fetchone() is not None
    if present and rows < BULK_LOAD_ROWS:
        yield
        return
    if present:
        with connection.schema_editor() as editor:
            editor.remove_index(NameWord, index)
    try:
        yield
    finally:
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '2GB'")
            cursor.execute("SET max_parallel_maintenance_workers = 2")
        with connection.schema_editor() as editor:
            editor.add_index(NameWord, index)
        with connection.cursor() as cursor:
            cursor.execute("RESET maintenance_work_mem")
            cursor.execute("RESET max_parallel_maintenance_workers")
        on_build("vector index build", started)


def delete_household(slug: str) -> None:
    """Delete a household and everything in it with set-based DELETEs."""
    household = Household.objects.filter(slug=slug).first()
    if household is None:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT user_id FROM user_profiles WHERE household_id = %s "
            "AND user_id IS NOT NULL",
            [household.pk],
        )
        logins = [row[0] for row in cursor.fetchall()]
        # Django's cascade would load every row first; children before parents.
        cursor.execute(
            "DELETE FROM household_calendarevent_attendees WHERE calendarevent_id IN "
            "(SELECT id FROM household_calendarevent WHERE household_id = %s)",
            [household.pk],
        )
        for table in (
            "people_search_nameworduse",
            "people_search_nameword",
            "yorik_card",
            "yorik_apitoken",
            "household_modelusage",
            "household_conversation",
            "contacts_contactalias",
            "contacts_contactchannel",
            "addresses",
            "contacts_paperlessdocument",
            "contacts_paperlesscorrespondent",
            "compose_lettertemplate",
            "household_calendarevent",
            "contacts_contact",
            "household_lead",
            "household_membership",
            "user_profiles",
        ):
            cursor.execute(
                f"DELETE FROM {table} WHERE household_id = %s",  # noqa: S608
                [household.pk],
            )
        household.delete()
        # The household's logins go too, or importing it again finds them
        # taken ("exists already outside any household").
        get_user_model().objects.filter(pk__in=logins).delete()


def _chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def _generate_members(
    household: Household, faker: Faker, *, count: int
) -> list[Membership]:
    rng = faker.rng
    profiles, roles = [], []
    for index in range(count):
        person = faker.person()
        role = rng.choices(
            [Role.MEMBER, Role.CHILD, Role.EMPLOYEE, Role.VIEWER, Role.ADMIN],
            weights=[50, 15, 20, 12, 3],
        )[0]
        username = f"{fold_name(person.first).replace(' ', '')}.{index}"
        email = "" if role == Role.CHILD else faker.email(person)
        profile = UserProfile(
            household=household,
            username=username,
            first_name=person.first,
            last_name=person.last,
            email=email,
            phone=faker.phone(person.israeli) if rng.random() < 0.7 else "",
            **person_columns(
                first_name=person.first,
                last_name=person.last,
                email=email,
                fallback_name=username,
            ),
        )
        # What validation stores, which bulk_create skips.
        profile.normalize_phone()
        profiles.append(profile)
        roles.append(role)
    memberships = []
    for chunk_start in range(0, count, BATCH):
        chunk = UserProfile.objects.bulk_create(
            profiles[chunk_start : chunk_start + BATCH]
        )
        memberships += Membership.objects.bulk_create(
            Membership(
                household=household,
                profile=profile,
                role=role,
                status=rng.choices(MembershipStatus.values, weights=[85, 5, 3, 4, 3])[
                    0
                ],
            )
            for profile, role in zip(
                chunk, roles[chunk_start : chunk_start + BATCH], strict=True
            )
        )
    return memberships


def _generate_leads(
    household: Household, faker: Faker, *, count: int, owners: Sequence[Membership]
) -> list[int]:
    rng = faker.rng
    ids: list[int] = []
    for chunk_start in range(0, count, BATCH):
        leads = []
        for _ in range(min(BATCH, count - chunk_start)):
            person = faker.person()
            email = faker.email(person) if rng.random() < 0.8 else ""
            lead = Lead(
                household=household,
                first_name=person.first,
                last_name=person.last,
                email=email,
                phone=faker.phone(person.israeli) if rng.random() < 0.8 else "",
                status=rng.choice(LeadStatus.values),
                archived=rng.random() < 0.1,
                owner=rng.choice(owners) if rng.random() < 0.3 else None,
                **person_columns(
                    first_name=person.first,
                    last_name=person.last,
                    email=email,
                    fallback_name=email,
                ),
            )
            # What validation stores, which bulk_create skips.
            lead.normalize_phone()
            leads.append(lead)
        ids += [lead.pk for lead in Lead.objects.bulk_create(leads)]
    return ids


def _generate_contacts(household: Household, faker: Faker, *, count: int) -> None:
    for chunk_start in range(0, count, BATCH):
        with transaction.atomic():
            rows = [
                _contact_row(household, faker)
                for _ in range(min(BATCH, count - chunk_start))
            ]
            contacts = Contact.objects.bulk_create(contact for contact, _ in rows)
            aliases, channels, addresses = [], [], []
            for contact, children in rows:
                aliases += [
                    ContactAlias(household=household, contact=contact, name=name)
                    for name in children["aliases"]
                ]
                channels += [
                    ContactChannel(
                        household=household,
                        contact=contact,
                        kind=channel["kind"],
                        # What validation stores, which bulk_create skips.
                        value=normalize_channel_value(
                            channel["kind"], channel["value"], household.default_region
                        ),
                        label=channel["label"],
                    )
                    for channel in children["channels"]
                ]
                addresses += [
                    Address(household=household, contact=contact, **address)
                    for address in children["addresses"]
                ]
            ContactAlias.objects.bulk_create(aliases)
            ContactChannel.objects.bulk_create(channels)
            Address.objects.bulk_create(addresses)
            ids = [contact.pk for contact in contacts]
            # Its bulk_update grows with the square of the rows it is given.
            for start in range(0, len(ids), REFRESH_BATCH):
                refresh_search_columns(
                    household_id=household.pk,
                    contact_ids=ids[start : start + REFRESH_BATCH],
                )


def _contact_row(household: Household, faker: Faker) -> tuple[Contact, dict]:
    rng = faker.rng
    person = faker.person()
    children: dict[str, list] = {"aliases": [], "channels": [], "addresses": []}
    tags: list[str] = []
    relation = ""
    if rng.random() < 0.05:
        template, category = rng.choice(BUSINESSES)
        display_name = faker.place(template)
        kind, first, last = ContactKind.BUSINESS, "", ""
        if category and rng.random() < 0.3:
            tags.append(category)
    else:
        kind, first, last = ContactKind.PERSON, person.first, person.last
        display_name = f"{first} {last}"
        if rng.random() < 0.15:
            relation = rng.choice(FAMILY if rng.random() < 0.4 else OTHER_RELATIONS)
            if relation in FAMILY and rng.random() < 0.5:
                children["aliases"].append(f"{relation} {first}")
        if first in NICKNAMES and rng.random() < 0.5:
            children["aliases"].append(NICKNAMES[first])
        if rng.random() < 0.05:
            tags.append(rng.choice(["familie", "arbeit", "sport", "schule"]))
    for number in range(rng.choices([0, 1, 2], weights=[15, 60, 25])[0]):
        children["channels"].append(
            {
                "kind": ChannelKind.PHONE,
                "value": faker.phone(person.israeli),
                "label": ["mobil", "Festnetz"][number],
            }
        )
    if rng.random() < 0.6:
        children["channels"].append(
            {"kind": ChannelKind.EMAIL, "value": faker.email(person), "label": ""}
        )
    if rng.random() < 0.05:
        children["channels"].append(
            {
                "kind": ChannelKind.SIGNAL,
                "value": faker.phone(person.israeli),
                "label": "",
            }
        )
    if rng.random() < 0.7:
        children["addresses"].append(faker.address(person.israeli, "home"))
        if rng.random() < 0.1:
            children["addresses"].append(faker.address(person.israeli, "work"))
    contact = Contact(
        household=household,
        display_name=display_name,
        first_name=first,
        last_name=last,
        kind=kind,
        relation=relation,
        status=rng.choices(ContactStatus.values, weights=[90, 5, 2, 3])[0],
        tags=tags,
        last_contacted_at=faker.past() if rng.random() < 0.6 else None,
    )
    return contact, children


def _generate_paperless(household: Household, faker: Faker, *, documents: int) -> None:
    names = [
        faker.place(faker.rng.choice(DOCUMENT_SENDERS))
        for _ in range(max(10, documents // 5))
    ]
    correspondents = PaperlessCorrespondent.objects.bulk_create(
        PaperlessCorrespondent(
            household=household,
            paperless_id=index + 1,
            name=name,
            # What contacts.paperless.sync.write_paperless_mirror derives.
            folded_name=fold_name(name),
        )
        for index, name in enumerate(names)
    )
    for chunk_start in range(0, documents, BATCH):
        chunk = []
        for index in range(chunk_start, min(documents, chunk_start + BATCH)):
            title = faker.place(faker.rng.choice(DOCUMENT_TITLES))
            chunk.append(
                PaperlessDocument(
                    household=household,
                    paperless_id=index + 1,
                    title=title,
                    folded_title=fold_name(title),
                    correspondent=faker.rng.choice(correspondents),
                    created=faker.past().date(),
                )
            )
        PaperlessDocument.objects.bulk_create(chunk)


def _generate_events(household: Household, faker: Faker, *, count: int) -> None:
    events = []
    for _ in range(count):
        title, location = faker.rng.choice(EVENT_TITLES)
        starts_at = faker.past()
        events.append(
            CalendarEvent(
                household=household,
                title=title,
                # What household.calendar.create_calendar_event derives.
                folded_title=fold_name(title),
                starts_at=starts_at,
                ends_at=starts_at + timedelta(hours=1),
                location=faker.place(location) if location else "",
            )
        )
    CalendarEvent.objects.bulk_create(events, batch_size=BATCH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contacts", type=int, default=1000)
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--slug", default="bench-1k")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--region", default="DE")
    args = parser.parse_args()
    started = time.perf_counter()
    generate_household(
        args.slug,
        contacts=args.contacts,
        people=args.people,
        seed=args.seed,
        region=args.region,
        on_step=lambda name, seconds: print(f"{name}: {seconds} s", flush=True),
    )
    print(f"{args.slug}: done in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
