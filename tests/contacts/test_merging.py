"""Possible duplicates in admin: listed, compared, merged or told apart."""

import json
from datetime import UTC, datetime

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from contacts.documents import contact_document, document_children
from contacts.merging import UNDO_WINDOW, dismiss_duplicate, merge_contacts
from contacts.models import Contact, ContactMerge, DismissedDuplicate
from contacts.vcard.importer import import_vcards
from household.models import Household
from tests.builders import PASSWORD, LoginClient, build_contact, build_member
from yorik.bundles import BundleError, export_household, import_household
from yorik.cards import create_card
from yorik.models import Card

pytestmark = pytest.mark.django_db

DUPLICATES = reverse("admin:contacts_contact_duplicates")
UNDO = reverse("admin:contacts_contact_undo_merge")


def pair_url(first, second):
    return reverse("admin:contacts_contact_duplicate_pair", args=[first.pk, second.pk])


@pytest.fixture
def anna(admin_membership) -> Client:
    client = LoginClient()
    assert client.login(username="anna", password=PASSWORD)
    return client


@pytest.fixture
def dana(other_household) -> Client:
    build_member(other_household, "dana", role="admin", last_name="Levi")
    client = LoginClient()
    assert client.login(username="dana", password=PASSWORD)
    return client


@pytest.fixture
def gisela(household):
    return build_contact(
        household,
        "Gisela Becker",
        first_name="Gisela",
        last_name="Becker",
        relation="Großmutter",
        aliases=["Oma"],
        tags=["familie"],
        notes="Mag Tulpen.",
        vcard_uid="uid-gisela",
        last_contacted_at=datetime(2026, 9, 1, tzinfo=UTC),
        channels=[{"kind": "phone", "value": "0171 1234567", "label": "mobil"}],
        addresses=[
            {
                "kind": "home",
                "line1": "Hauptstr. 5",
                "postcode": "10115",
                "city": "Berlin",
            }
        ],
    )


@pytest.fixture
def mama(household):
    return build_contact(
        household,
        "Mama",
        relation="Mutter",
        aliases=["Oma"],
        tags=["familie", "geburtstag"],
        notes="Geburtstag am 3. Mai.",
        vcard_uid="uid-mama",
        last_contacted_at=datetime(2026, 11, 20, tzinfo=UTC),
        channels=[
            {"kind": "phone", "value": "+49 171 1234567", "label": ""},
            {"kind": "email", "value": "gisela@example.org", "label": ""},
        ],
        addresses=[
            {
                "kind": "home",
                "line1": "Gartenweg 2",
                "postcode": "14467",
                "city": "Potsdam",
            },
            {
                "kind": "work",
                "line1": "Markt 1",
                "postcode": "14467",
                "city": "Potsdam",
            },
        ],
    )


def test_the_list_shows_each_pair_with_its_score_and_reasons(anna, gisela, mama):
    page = anna.get(DUPLICATES)

    assert page.status_code == 200
    text = page.content.decode()
    assert "Mögliche Duplikate" in text
    assert "Beide haben die Telefonnummer 0171 1234567" in text
    assert "55\u202f%" in text
    assert pair_url(gisela, mama) in text
    changelist = anna.get(reverse("admin:contacts_contact_changelist"))
    assert DUPLICATES in changelist.content.decode()


def test_the_list_is_paginated_best_first(anna, household):
    for number in range(30):
        build_contact(household, f"Kunde {number:02}")
        build_contact(household, f"Kunde {number:02}")
    build_contact(
        household, "Eva Roth", channels=[{"kind": "phone", "value": "0171 5550000"}]
    )
    build_contact(
        household, "Eva Roth", channels=[{"kind": "phone", "value": "0171 5550000"}]
    )

    first = anna.get(DUPLICATES).content.decode()
    second = anna.get(DUPLICATES, {"p": 2}).content.decode()

    assert "31 Paare" in first
    assert first.index("Eva Roth") < first.index("Kunde 00")
    assert "Seite 1 von 2" in first
    assert second.count("Kunde ") == 2 * 6


def test_the_pair_page_shows_both_contacts_field_by_field(anna, gisela, mama):
    page = anna.get(pair_url(gisela, mama)).content.decode()

    assert "Gisela Becker" in page
    assert "Mama" in page
    assert 'name="relation" value="first"' in page  # both have one: a choice
    assert "Großmutter" in page
    assert "Mutter" in page
    assert "Hauptstr. 5, 10115 Berlin" in page
    assert "Gartenweg 2, 14467 Potsdam" in page
    assert 'name="first_name"' not in page  # only one has a value: no choice
    assert "0171 1234567" in page
    assert "Zusammenführen" in page
    assert "Kein Duplikat" in page


def test_merging_keeps_the_survivor_with_both_contacts_data(
    anna, household, gisela, mama
):
    response = anna.post(
        pair_url(gisela, mama),
        {
            "survivor": "first",
            "relation": "second",
            "address:home": "second",
            "confirm": "1",
        },
    )

    assert response.status_code == 302
    # No pair is left: back to the list of possible duplicates.
    assert response.url == f"{DUPLICATES}?household={household.pk}"
    assert not Contact.objects.filter(pk=mama.pk).exists()
    gisela.refresh_from_db()
    assert gisela.display_name == "Gisela Becker"
    assert gisela.relation == "Mutter"
    assert sorted(a.name for a in gisela.aliases.all()) == ["Mama", "Oma"]
    assert gisela.tags == ["familie", "geburtstag"]
    assert gisela.notes == "Mag Tulpen.\n\nGeburtstag am 3. Mai."
    assert gisela.last_contacted_at == datetime(2026, 11, 20, tzinfo=UTC)
    assert [(c.kind, c.value, c.label) for c in gisela.channels.order_by("pk")] == [
        ("phone", "+491711234567", "mobil"),
        ("email", "gisela@example.org", ""),
    ]
    assert sorted((a.kind, a.line1) for a in gisela.addresses.all()) == [
        ("home", "Gartenweg 2"),
        ("work", "Markt 1"),
    ]
    assert gisela.vcard_uid == "uid-gisela"
    merge = ContactMerge.objects.get()
    assert (merge.survivor, merge.ref, merge.vcard_uid, merge.merged_by) == (
        gisela,
        mama.ref,
        "uid-mama",
        "anna",
    )
    assert merge.choices["taken_from_merged"] == ["address:home", "relation"]


def test_a_merge_is_in_the_survivors_history(anna, gisela, mama):
    anna.post(pair_url(gisela, mama), {"survivor": "second", "confirm": "1"})

    change = anna.get(reverse("admin:contacts_contact_change", args=[mama.pk]))
    history = anna.get(reverse("admin:contacts_contact_history", args=[mama.pk]))

    assert "In diesen Kontakt zusammengeführt" in change.content.decode()
    assert "Gisela Becker" in change.content.decode()
    entry = LogEntry.objects.get(object_id=str(mama.pk))
    assert entry.user.username == "anna"
    assert "Gisela Becker" in entry.get_change_message()
    assert "Gisela Becker" in history.content.decode()


def test_the_history_names_the_fields_taken_in_the_admins_language(anna, gisela, mama):
    anna.post(
        pair_url(gisela, mama),
        {
            "survivor": "first",
            "relation": "second",
            "address:home": "second",
            "confirm": "1",
        },
    )

    change = anna.get(reverse("admin:contacts_contact_change", args=[gisela.pk]))
    history = anna.get(reverse("admin:contacts_contact_history", args=[gisela.pk]))

    taken = "davon übernommen: Adresse (Privat), Beziehung"
    assert taken in change.content.decode()
    assert taken in history.content.decode()
    assert "address:home" not in change.content.decode()
    assert "address:home" not in history.content.decode()


def test_the_survivor_is_found_by_the_merged_contacts_name(anna, api, gisela, mama):
    anna.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})

    found = api.call("find_person", {"query": "Mama"}).json()

    assert [row["id"] for row in found["results"] if row["source"] == "contacts"] == [
        gisela.pk
    ]


def test_cards_and_links_naming_the_merged_contact_resolve_to_the_survivor(
    anna, admin_membership, household, gisela, mama
):
    picked = create_card(
        household=household,
        kind="contact_picker",
        payload={"query": "Mama", "ranked": False, "picks": [{"contact_id": mama.pk}]},
        created_by=admin_membership.profile,
        pick_to_chat=True,
    )
    picked.picked_contact = mama
    picked.save()
    open_card = create_card(
        household=household,
        kind="contact_picker",
        payload={
            "query": "Oma",
            "ranked": False,
            "picks": [{"contact_id": mama.pk}, {"contact_id": gisela.pk}],
        },
        created_by=admin_membership.profile,
        pick_to_chat=True,
    )

    anna.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})

    picked.refresh_from_db()
    assert picked.picked_contact_id == gisela.pk
    page = anna.get(open_card.get_absolute_url()).content.decode()
    assert page.count("Gisela Becker") == 1
    assert f'value="{gisela.pk}"' in page
    pick = anna.post(f"/cards/{open_card.pk}/pick/", {"contact_id": mama.pk})
    assert pick.status_code == 302
    open_card.refresh_from_db()
    assert open_card.picked_contact_id == gisela.pk
    link = anna.get(f"/contacts/{mama.pk}/")
    assert link.status_code == 302
    assert link.url == f"/contacts/{gisela.pk}/"


def test_a_later_vcard_import_updates_the_survivor(household, gisela, mama):
    merge_contacts(survivor=gisela, merged=mama)
    vcard = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:uid-mama\r\nFN:Mama\r\n"
        "TEL:0171 9999999\r\nEND:VCARD\r\n"
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:yorik-" + mama.ref + "\r\nFN:Mutti\r\n"
        "END:VCARD\r\n"
    )

    summary = import_vcards(household=household, data=vcard.encode())

    assert summary.created == 0
    assert list(Contact.objects.filter(household=household)) == [gisela]
    assert "+491719999999" in {c.value for c in gisela.channels.all()}


def test_not_a_duplicate_is_remembered(anna, gisela, mama):
    response = anna.post(pair_url(gisela, mama), {"survivor": "first", "dismiss": "1"})

    assert response.status_code == 302
    assert Contact.objects.filter(pk__in=[gisela.pk, mama.pk]).count() == 2
    assert DismissedDuplicate.objects.get().dismissed_by == "anna"
    page = anna.get(DUPLICATES).content.decode()
    assert "Keine möglichen Duplikate." in page


def test_another_households_admin_sees_and_merges_nothing_of_ours(
    dana, other_household, gisela, mama
):
    build_contact(other_household, "Yossi Levi")
    build_contact(other_household, "Yossi Levi")

    listing = dana.get(DUPLICATES).content.decode()
    pair = dana.get(pair_url(gisela, mama))
    merge = dana.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})
    dismiss = dana.post(pair_url(gisela, mama), {"survivor": "first", "dismiss": "1"})

    assert "Yossi Levi" in listing
    assert "Gisela" not in listing
    assert "Mama" not in listing
    assert "One pair" in listing
    assert pair.status_code == 404
    assert merge.status_code == 404
    assert dismiss.status_code == 404
    assert Contact.objects.filter(pk__in=[gisela.pk, mama.pk]).count() == 2
    assert not ContactMerge.objects.exists()
    assert not DismissedDuplicate.objects.exists()


def test_a_pair_across_households_cannot_be_merged(anna, other_household, gisela):
    levi = build_contact(other_household, "Gisela Becker")

    response = anna.post(pair_url(gisela, levi), {"survivor": "first", "confirm": "1"})

    assert response.status_code == 404
    assert Contact.objects.filter(pk=levi.pk).exists()


def test_the_bundle_round_trips_merges_and_dismissals(
    tmp_path, household, gisela, mama
):
    ingrid = build_contact(household, "Ingrid Schmidt")
    ida = build_contact(household, "Ida Schmidt")
    merge_contacts(
        survivor=gisela, merged=mama, take_from_merged={"relation"}, merged_by="anna"
    )
    dismiss_duplicate(first=ida, second=ingrid, dismissed_by="anna")
    first = tmp_path / "first.json"
    call_command("export_household", "becker", out=first)

    Household.objects.all().delete()
    call_command("import_household", str(first))
    second = tmp_path / "second.json"
    call_command("export_household", "becker", out=second)

    assert first.read_text() == second.read_text()
    bundle = json.loads(first.read_text())
    assert bundle["contact_merges"] == [
        {
            "survivor": gisela.ref,
            "ref": mama.ref,
            "vcard_uid": "uid-mama",
            "display_name": "Mama",
            "merged_by": "anna",
            "merged_at": bundle["contact_merges"][0]["merged_at"],
            "taken_from_merged": ["relation"],
        }
    ]
    assert bundle["dismissed_duplicates"][0]["contacts"] == [ingrid.ref, ida.ref]
    household = Household.objects.get(slug="becker")
    survivor = household.contacts.get(ref=gisela.ref)
    assert survivor.merges.get().ref == mama.ref


def test_a_bundle_listing_a_merged_contact_again_is_refused(household, gisela, mama):
    merge_contacts(survivor=gisela, merged=mama)
    bundle = export_household(household=household)
    bundle["contacts"].append({"ref": mama.ref, "display_name": "Mama"})
    bundle["dismissed_duplicates"] = [
        {"contacts": [gisela.ref, "c-nobody"], "dismissed_at": "2026-12-01T10:00:00Z"}
    ]

    with pytest.raises(BundleError) as error:
        import_household(bundle=bundle, replace=True)

    assert error.value.problems == [
        f"contacts[1].ref: {mama.ref!r} was merged into {gisela.ref!r}; "
        "leave it out or drop the merge",
        "dismissed_duplicates[0].contacts[1]: no contact 'c-nobody' in contacts",
    ]
    assert household.contacts.count() == 1


def test_a_merged_name_too_long_for_an_alias_is_not_kept_as_one(household, gisela):
    long_name = "Gisela " + "Becker-" * 40
    twin = build_contact(household, long_name.strip("-"))

    merge_contacts(survivor=gisela, merged=twin)

    gisela.refresh_from_db()
    assert [alias.name for alias in gisela.aliases.all()] == ["Oma"]
    assert ContactMerge.objects.get().display_name == long_name.strip("-")


def test_a_superuser_chooses_the_household_first(
    client, household, other_household, gisela, mama
):
    root = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)

    choose = client.get(DUPLICATES).content.decode()
    becker = client.get(DUPLICATES, {"household": household.pk}).content.decode()
    levi = client.get(DUPLICATES, {"household": other_household.pk}).content.decode()

    assert "Choose a household." in choose
    assert "Levi family" in choose
    assert pair_url(gisela, mama) in becker
    assert pair_url(gisela, mama) not in levi


def test_the_list_names_only_the_surest_of_many(anna, household, monkeypatch):
    monkeypatch.setattr("contacts.admin.DUPLICATES_LISTED", 2)
    for name in ["Eva Roth", "Udo Lang", "Lena Graf"]:
        build_contact(household, name)
        build_contact(household, name)

    page = anna.get(DUPLICATES).content.decode()

    assert "Mehr als 2 Kontaktpaare könnten jeweils dieselbe Person sein" in page
    assert page.count("Derselbe Name") == 2
    assert "Lena Graf" in page
    assert "Udo Lang" not in page


# Origins, confirmation, undo and the next pair


def test_each_side_says_where_it_came_from_and_when(anna, household, gisela, mama):
    page = anna.get(pair_url(gisela, mama)).content.decode()

    created = timezone.localtime(gisela.created_at).strftime("%d.%m.%Y")
    assert "Herkunft" in page
    # Both came from a vCard (each has its UID).
    assert page.count(f"vCard-Import, angelegt am {created}") == 2


def test_a_contact_added_in_the_admin_is_entered_by_hand(anna, household, gisela):
    anna.post(
        reverse("admin:contacts_contact_add"),
        {
            "display_name": "Gisela B.",
            "kind": "person",
            "status": "active",
            "aliases-TOTAL_FORMS": "0",
            "aliases-INITIAL_FORMS": "0",
            "channels-TOTAL_FORMS": "0",
            "channels-INITIAL_FORMS": "0",
            "addresses-TOTAL_FORMS": "0",
            "addresses-INITIAL_FORMS": "0",
        },
    )
    added = Contact.objects.get(display_name="Gisela B.")

    from_a_file = build_contact(household, "Gisela Becker")

    page = anna.get(pair_url(from_a_file, added)).content.decode()

    assert "Haushaltsimport, angelegt am" in page
    assert "von Hand eingegeben, angelegt am" in page


def test_the_keep_radios_name_their_contacts(anna, gisela, mama):
    page = anna.get(pair_url(gisela, mama)).content.decode()

    assert 'value="first" checked> „Gisela Becker“ behalten' in page
    assert 'value="second"> „Mama“ behalten' in page


def test_merge_asks_to_confirm_before_anything_changes(anna, gisela, mama):
    response = anna.post(
        pair_url(gisela, mama),
        {"survivor": "first", "relation": "second", "merge": "1"},
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "„Mama“ wird in „Gisela Becker“ zusammengeführt und dann gelöscht." in page
    assert "Vom zusammengeführten Kontakt übernommen: Beziehung" in page
    assert 'name="confirm"' in page
    assert 'type="hidden" name="relation" value="second"' in page
    assert Contact.objects.filter(pk=mama.pk).exists()


def test_after_a_merge_the_admin_goes_to_the_next_pair(anna, household, gisela, mama):
    ute = build_contact(
        household, "Ute Krause", channels=[{"kind": "phone", "value": "0172 7654321"}]
    )
    uschi = build_contact(
        household, "Uschi", channels=[{"kind": "phone", "value": "0172 7654321"}]
    )

    response = anna.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})

    assert response.url == pair_url(*sorted([ute, uschi], key=lambda c: c.pk))


def test_a_merge_can_be_undone_giving_both_contacts_back(anna, household, gisela, mama):
    pick_card = create_card(
        household=household,
        kind="contact_picker",
        payload={"query": "", "ranked": False, "picks": [{"contact_id": mama.pk}]},
        created_by=household.memberships.get().profile,
    )
    Card.objects.filter(pk=pick_card.pk).update(picked_contact=mama)
    mama_before = contact_document(
        Contact.objects.prefetch_related(*document_children()).get(pk=mama.pk)
    )
    gisela_before = contact_document(
        Contact.objects.prefetch_related(*document_children()).get(pk=gisela.pk)
    )
    anna.post(
        pair_url(gisela, mama),
        {"survivor": "first", "relation": "second", "confirm": "1"},
    )
    listing = anna.get(DUPLICATES).content.decode()
    merge = ContactMerge.objects.get()
    assert "Sie haben „Mama“ in „Gisela Becker“ zusammengeführt." in listing
    assert f'name="merge" value="{merge.pk}"' in listing

    response = anna.post(UNDO, {"merge": merge.pk})

    assert response.url == pair_url(gisela, mama)
    restored = Contact.objects.get(pk=mama.pk)
    assert (restored.ref, restored.vcard_uid) == (mama.ref, "uid-mama")
    assert restored.created_at == mama.created_at
    assert restored.last_contacted_at == mama.last_contacted_at
    assert (
        contact_document(
            Contact.objects.prefetch_related(*document_children()).get(pk=mama.pk)
        )
        == mama_before
    )
    assert (
        contact_document(
            Contact.objects.prefetch_related(*document_children()).get(pk=gisela.pk)
        )
        == gisela_before
    )
    assert not ContactMerge.objects.exists()
    pick_card.refresh_from_db()
    assert pick_card.picked_contact_id == mama.pk
    assert "Rückgängig" not in anna.get(DUPLICATES).content.decode()


def test_undoing_a_merge_gives_the_merged_contact_its_dismissed_pairs_back(
    anna, household, gisela, mama
):
    """The pairs dismissed with the merged contact are the survivor's while
    the merge lasts, and the merged contact's again once it is undone; the
    survivor's own stay, and a pair whose other contact is gone since is
    not made up."""
    tante = build_contact(household, "Tante Gisela")
    nachbarin = build_contact(household, "Gisela Nachbarin")
    kollegin = build_contact(household, "Gisela Kollegin")
    dismiss_duplicate(first=mama, second=tante, dismissed_by="jonas")
    dismiss_duplicate(first=mama, second=kollegin, dismissed_by="jonas")
    dismiss_duplicate(first=gisela, second=nachbarin, dismissed_by="anna")
    dismissed_at = DismissedDuplicate.objects.get(second=tante).dismissed_at

    def pairs():
        return set(
            DismissedDuplicate.objects.values_list(
                "first_id", "second_id", "dismissed_by"
            )
        )

    anna.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})
    assert pairs() == {
        (gisela.pk, tante.pk, "jonas"),
        (gisela.pk, kollegin.pk, "jonas"),
        (gisela.pk, nachbarin.pk, "anna"),
    }
    kollegin.delete()

    anna.post(UNDO, {"merge": ContactMerge.objects.get().pk})

    assert pairs() == {
        (mama.pk, tante.pk, "jonas"),
        (gisela.pk, nachbarin.pk, "anna"),
    }
    assert DismissedDuplicate.objects.get(second=tante).dismissed_at == dismissed_at


def test_a_merge_cannot_be_undone_after_the_survivor_changed(anna, gisela, mama):
    anna.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})
    merge = ContactMerge.objects.get()
    survivor = Contact.objects.get(pk=gisela.pk)
    survivor.notes = "Neu"
    survivor.save()

    response = anna.post(UNDO, {"merge": merge.pk}, follow=True)

    assert "Diese Zusammenführung lässt sich nicht mehr rückgängig machen." in (
        response.content.decode()
    )
    assert not Contact.objects.filter(pk=mama.pk).exists()


def test_a_merge_cannot_be_undone_after_the_window(anna, gisela, mama):
    anna.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})
    ContactMerge.objects.update(merged_at=timezone.now() - UNDO_WINDOW)

    anna.post(UNDO, {"merge": ContactMerge.objects.get().pk})

    assert not Contact.objects.filter(pk=mama.pk).exists()


def test_another_admin_cannot_undo_my_merge(anna, household, gisela, mama):
    anna.post(pair_url(gisela, mama), {"survivor": "first", "confirm": "1"})
    build_member(household, "ben", role="admin")
    ben = LoginClient()
    ben.login(username="ben", password=PASSWORD)

    ben.post(UNDO, {"merge": ContactMerge.objects.get().pk})

    assert not Contact.objects.filter(pk=mama.pk).exists()
