import copy
import json
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from contacts.models import Contact, ContactChannel
from household.models import EventAttendee, Household, Lead, UserProfile
from people_search.index.models import NameWordUse
from yorik.bundles import (
    BundleError,
    export_household,
    import_household,
    validate_bundle,
)

BUNDLE = {
    "format": "yorik.household/1",
    "household": {
        "slug": "becker",
        "name": "Familie Becker",
        "default_region": "DE",
        "language": "de",
    },
    "people": [
        {
            "username": "anna",
            "first_name": "Anna",
            "last_name": "Becker",
            "email": "anna@example.org",
            "phone": "+49 30 1234567",
            "role": "admin",
            "status": "active",
            "lead_access": "all",
        },
        {
            "username": "mia",
            "first_name": "Mia",
            "last_name": "Becker",
            "email": "",
            "phone": "",
            "role": "child",
            "status": "active",
            "lead_access": "none",
        },
    ],
    "contacts": [
        {
            "ref": "c1",
            "display_name": "Hans Becker",
            "first_name": "Hans",
            "last_name": "Becker",
            "kind": "person",
            "relation": "Onkel",
            "status": "active",
            "aliases": ["Onkel Hans"],
            "tags": [],
            "notes": "",
            "last_contacted_at": "2026-10-01T10:00:00Z",
            "channels": [{"kind": "phone", "value": "030 1234567", "label": "mobil"}],
            "addresses": [
                {
                    "kind": "home",
                    "line1": "Hauptstr. 5",
                    "line2": "",
                    "postcode": "10115",
                    "city": "Berlin",
                    "country": "DE",
                }
            ],
        },
        {"display_name": "Zahnarztpraxis Dr. Schmidt", "kind": "business"},
    ],
    "leads": [
        {
            "first_name": "Dana",
            "last_name": "Levi",
            "email": "",
            "phone": "+972 50 123 4567",
            "status": "new",
            "archived": False,
            "owner": "anna",
        }
    ],
    "calendar_events": [
        {
            "title": "Zahnarzt",
            "starts_at": "2025-05-02T09:00:00+02:00",
            "ends_at": "2025-05-02T10:00:00+02:00",
            "location": "Hauptstr. 1, Berlin",
            "attendees": ["anna"],
        }
    ],
    "paperless": {
        "correspondents": [{"id": 3, "name": "Zahnarztpraxis Dr. Schmidt"}],
        "documents": [
            {
                "id": 17,
                "title": "Rechnung Prophylaxe",
                "correspondent": 3,
                "created": "2025-11-03",
            }
        ],
    },
    "letter_templates": [
        {
            "template_id": "kuendigung-mietvertrag-de",
            "title": "Kündigung Mietvertrag",
            "language": "de",
            "body": "Sehr geehrte Damen und Herren, …",
            "recipient_fields": ["line1", "postcode", "city"],
        }
    ],
}


def bundle(**changes):
    data = copy.deepcopy(BUNDLE)
    data.update(changes)
    return data


@pytest.mark.django_db
def test_import_normalises_phones_with_the_household_region():
    household = import_household(bundle=bundle())

    assert UserProfile.objects.get(username="anna").phone == "+49301234567"
    assert ContactChannel.objects.get().value == "+49301234567"
    assert Lead.objects.get().phone == "+972501234567"
    assert household.contacts.get(display_name="Hans Becker").aliases.get().name == (
        "Onkel Hans"
    )


@pytest.mark.django_db
def test_import_gives_logins_to_everyone_but_children():
    import_household(bundle=bundle())

    anna = UserProfile.objects.get(username="anna")
    mia = UserProfile.objects.get(username="mia")
    assert anna.user.username == "anna"
    assert anna.user.is_staff
    assert not anna.user.has_usable_password()
    assert mia.user is None


@pytest.mark.django_db
def test_contact_without_ref_gets_one_that_export_keeps():
    household = import_household(bundle=bundle())

    exported = export_household(household=household)
    refs = [contact["ref"] for contact in exported["contacts"]]
    assert refs[0] == "c1"
    assert refs[1].startswith("c-")


@pytest.mark.django_db
def test_export_import_export_is_identical(tmp_path):
    import_household(bundle=bundle())
    first = tmp_path / "first.json"
    call_command("export_household", "becker", out=first)

    # A fresh database: no household and no login of its people.
    Household.objects.all().delete()
    get_user_model().objects.all().delete()
    call_command("import_household", str(first))
    second = tmp_path / "second.json"
    call_command("export_household", "becker", out=second)

    assert first.read_text() == second.read_text()
    assert json.loads(first.read_text())["contacts"][0]["channels"] == [
        {"kind": "phone", "value": "+49301234567", "label": "mobil"}
    ]


@pytest.mark.django_db
def test_bad_bundle_reports_every_problem_and_writes_nothing():
    data = bundle()
    data["contacts"][0]["channels"].append({"kind": "phone", "value": "kein Anschluss"})
    data["contacts"][1]["kind"] = "robot"
    data["leads"][0]["owner"] = "nobody"
    data["calendar_events"][0]["attendees"] = ["anna", "ghost"]
    data["paperless"]["documents"][0]["correspondent"] = 99
    data["letter_templates"][0]["recipient_fields"] = ["line1"]

    with pytest.raises(BundleError) as error:
        import_household(bundle=data)

    assert error.value.problems == [
        "contacts[0].channels[1].value: not a phone number for region DE",
        'contacts[1].kind: "robot" is not a valid choice.',
        "letter_templates[0].recipient_fields: must include line1 and city",
        "leads[0].owner: no person 'nobody' in people",
        "calendar_events[0].attendees[1]: no person 'ghost' in people",
        "paperless.documents[0].correspondent: no correspondent 99",
    ]
    assert not Household.objects.exists()
    assert not Contact.objects.exists()


@pytest.mark.django_db
def test_unknown_keys_are_reported_not_ignored():
    data = bundle()
    data["contacts"][0]["nickname"] = "Hansi"

    with pytest.raises(BundleError) as error:
        import_household(bundle=data)

    assert error.value.problems == ["contacts[0].nickname: Unknown field."]


@pytest.mark.django_db
def test_command_exits_non_zero_and_prints_paths(tmp_path, capsys):
    data = bundle()
    data["people"][0]["phone"] = "12"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))

    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_household", str(path))

    assert (
        "people[0].phone: not a phone number for region DE" in capsys.readouterr().err
    )
    assert not Household.objects.exists()


@pytest.mark.django_db
def test_existing_slug_is_refused_unless_replace():
    import_household(bundle=bundle())

    with pytest.raises(BundleError, match="pass --replace"):
        import_household(bundle=bundle())
    replaced = import_household(
        bundle=bundle(contacts=[{"display_name": "Neu"}]), replace=True
    )

    assert list(replaced.contacts.values_list("display_name", flat=True)) == ["Neu"]
    assert Household.objects.count() == 1


@pytest.mark.django_db
def test_login_of_another_household_cannot_be_taken():
    import_household(bundle=bundle())
    other = bundle(household={**BUNDLE["household"], "slug": "schulz"})

    with pytest.raises(BundleError) as error:
        import_household(bundle=other)

    assert "people[0].username: login 'anna' belongs to another household" in (
        error.value.problems
    )


@pytest.mark.django_db
@pytest.mark.parametrize("superuser", [True, False], ids=["superuser", "plain login"])
def test_an_existing_login_outside_any_household_is_refused_with_its_path(
    tmp_path, capsys, superuser
):
    """Importing a person of that name would hand the login to the household."""
    User = get_user_model()
    login = User.objects.create_user("anna", is_superuser=superuser, is_staff=superuser)
    path = tmp_path / "takeover.json"
    path.write_text(json.dumps(bundle()))

    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_household", str(path))

    assert (
        "people[0].username: login 'anna' exists already outside any household"
        in capsys.readouterr().err
    )
    assert not Household.objects.exists()
    login.refresh_from_db()
    assert (login.is_superuser, login.is_staff) == (superuser, superuser)
    assert not UserProfile.objects.filter(user=login).exists()


@pytest.mark.django_db
def test_replacing_a_household_keeps_its_own_logins():
    """The control: the household's own logins are reused on --replace."""
    first = import_household(bundle=bundle())
    anna = first.profiles.get(username="anna").user_id

    replaced = import_household(bundle=bundle(), replace=True)

    assert replaced.profiles.get(username="anna").user_id == anna


@pytest.mark.django_db
def test_not_json_is_reported(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")

    with pytest.raises(CommandError):
        call_command("import_household", str(path))


@pytest.mark.django_db
def test_duplicates_in_a_large_address_book_are_reported_with_their_paths():
    contacts = [{"ref": f"c{index}", "display_name": "X"} for index in range(20_000)]
    contacts[5]["ref"] = contacts[19_999]["ref"] = "twice"
    data = bundle(contacts=contacts, letter_templates=[])

    with pytest.raises(BundleError) as error:
        validate_bundle(data, replace=False)

    assert error.value.problems == [
        "contacts[5].ref: 'twice' is listed twice",
        "contacts[19999].ref: 'twice' is listed twice",
    ]


@pytest.mark.django_db
def test_lists_where_values_belong_are_reported_not_crashed_on():
    data = bundle()
    data["people"][1]["username"] = ["mia"]
    data["contacts"][0]["ref"] = {"id": "c1"}
    data["paperless"]["correspondents"][0]["id"] = [3]

    with pytest.raises(BundleError) as error:
        validate_bundle(data, replace=False)

    assert error.value.problems == [
        "people[1].username: This value does not match the required pattern.",
        "contacts[0].ref: Not a valid string.",
        "paperless.correspondents[0].id: A valid integer is required.",
        "paperless.documents[0].correspondent: no correspondent 3",
    ]


# Large address books are written in bulk


def contacts_named(count):
    """Return `count` contacts with a phone, an email and an address each."""

    def word(number):
        return "".join(chr(ord("a") + int(digit)) for digit in str(number)).title()

    return [
        {
            "display_name": f"Kontakt {word(index)}mann",
            "channels": [
                {"kind": "phone", "value": f"0151 2345{index:04d}", "label": "mobil"},
                {"kind": "email", "value": f"kontakt{index}@example.org"},
            ],
            "addresses": [{"kind": "home", "line1": f"Hauptstr. {index}"}],
        }
        for index in range(count)
    ]


def leads_named(count):
    return [
        {"first_name": "Dana", "last_name": f"Levi{index}"} for index in range(count)
    ]


@pytest.mark.django_db
def test_a_bad_channel_in_a_large_bundle_is_reported_by_path_and_nothing_written():
    contacts = contacts_named(5)
    contacts[3]["channels"][0]["value"] = "kein Anschluss"

    with pytest.raises(BundleError) as error:
        import_household(bundle=bundle(contacts=contacts))

    assert error.value.problems == [
        "contacts[3].channels[0].value: not a phone number for region DE"
    ]
    assert not Household.objects.exists()
    assert not Contact.objects.exists()


@pytest.mark.django_db
def test_rows_the_models_refuse_are_reported_with_their_bundle_path():
    from contacts import bundles as contacts_bundles

    household = Household.objects.create(slug="becker", name="Familie Becker")
    contacts = contacts_named(5)
    contacts[3]["channels"][0]["value"] = "kein Anschluss"

    with pytest.raises(ValidationError) as error:
        contacts_bundles.import_rows(
            household=household, data={"contacts": contacts, "paperless": {}}
        )

    assert error.value.message_dict == {
        "contacts[3].channels[0].value": ["not a phone number for region DE"]
    }
    assert not Contact.objects.exists()


@pytest.mark.django_db
def test_import_statements_do_not_grow_with_contacts_leads_and_events(
    django_capture_on_commit_callbacks,
):
    def statements(count):
        data = bundle(
            contacts=contacts_named(count),
            leads=leads_named(count),
            calendar_events=[
                {**BUNDLE["calendar_events"][0], "attendees": ["anna", "mia", "anna"]}
            ]
            * count,
        )
        with (
            CaptureQueriesContext(connection) as queries,
            django_capture_on_commit_callbacks(execute=True),
        ):
            household = import_household(bundle=data, replace=True)
        assert household.contacts.count() == count
        assert household.leads.count() == count
        mia = household.profiles.get(username="mia")
        assert (
            EventAttendee.objects.filter(household=household, userprofile=mia).count()
            == count
        )
        return len(queries.captured_queries)

    statements(1)  # The first import creates anna's login, replacing reuses it.
    assert statements(40) == statements(10)


@pytest.mark.django_db
def test_names_of_imported_contacts_are_embedded_after_commit(
    django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        household = import_household(bundle=bundle(contacts=contacts_named(12)))

        assert not NameWordUse.objects.filter(subject="contact").exists()

    for contact in household.contacts.all():
        words = NameWordUse.objects.filter(subject="contact", subject_id=contact.pk)
        assert set(words.values_list("word__word", flat=True)) == set(
            contact.display_name.lower().split()
        )
    assert household.nameword_set.filter(word="kontakt").count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_import_of_the_same_new_household_loses_with_a_message(
    tmp_path, capsys
):
    """The second of two imports running at once says why, without a traceback."""
    path = tmp_path / "becker.json"
    path.write_text(json.dumps(bundle()))
    first_imported, first_may_commit = threading.Event(), threading.Event()

    def first_import():
        try:
            # Held open: the household row exists but is not committed yet.
            with transaction.atomic():
                import_household(bundle=bundle())
                first_imported.set()
                first_may_commit.wait(timeout=30)
        finally:
            connection.close()

    def commit_once_second_waits():
        with connection.cursor() as cursor:
            # On Citus the second import waits on a worker, where the
            # household's row is copied: the cluster's view of lock waits.
            cursor.execute("SELECT to_regclass('citus_lock_waits') IS NOT NULL")
            waits = (
                "SELECT count(*) FROM citus_lock_waits"
                if cursor.fetchone()[0]
                else "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            for _ in range(300):
                cursor.execute(waits)
                if cursor.fetchone()[0]:
                    break
                time.sleep(0.05)
        first_may_commit.set()
        connection.close()

    first = threading.Thread(target=first_import)
    first.start()
    assert first_imported.wait(timeout=30)
    releaser = threading.Thread(target=commit_once_second_waits)
    releaser.start()
    try:
        with pytest.raises(CommandError, match="nothing was imported"):
            call_command("import_household", str(path))
    finally:
        first_may_commit.set()
        first.join()
        releaser.join()

    err = capsys.readouterr().err
    assert "household.slug: household 'becker' was created meanwhile" in err
    assert "Traceback" not in err
    assert "IntegrityError" not in err
    assert Household.objects.count() == 1
    assert UserProfile.objects.filter(username="anna").count() == 1
