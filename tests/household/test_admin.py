"""Django admin for household admins: every page shows only their household."""

from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from compose.models import LetterTemplate
from contacts.models import Contact, ContactChannel
from contacts.providers.categories import get_category
from contacts.providers.search import find_known_providers
from household.models import CalendarEvent, EventAttendee, Membership, UserProfile
from household.services import create_calendar_event
from tests.builders import build_contact, build_lead, build_member
from yorik.tokens import issue_token

PASSWORD = "correct-horse-battery"


@pytest.fixture
def anna(client: Client, admin_membership: Membership) -> Client:
    """Return a client logged in as the Becker household's admin."""
    assert client.login(username="anna", password=PASSWORD)
    return client


@pytest.fixture
def levi_contact(other_household) -> Contact:
    return build_contact(
        other_household,
        "Yossi Levi",
        channels=[{"kind": "phone", "value": "+972 50 123 4567"}],
    )


def contact_form(display_name: str, **fields: Any) -> dict[str, str]:
    """Return the POST data of the contact add form with empty inlines."""
    data = {
        "display_name": display_name,
        "first_name": "",
        "last_name": "",
        "kind": "person",
        "status": "active",
        "relation": "",
        "tags": "",
        "notes": "",
        "last_contacted_at_0": "",
        "last_contacted_at_1": "",
    }
    for prefix in ("aliases", "channels", "addresses"):
        data |= {
            f"{prefix}-TOTAL_FORMS": "0",
            f"{prefix}-INITIAL_FORMS": "0",
            f"{prefix}-MIN_NUM_FORMS": "0",
            f"{prefix}-MAX_NUM_FORMS": "1000",
        }
    return data | fields


def with_phone_channel(data: dict[str, str], value: str) -> dict[str, str]:
    return data | {
        "channels-TOTAL_FORMS": "1",
        "channels-0-kind": "phone",
        "channels-0-value": value,
        "channels-0-label": "mobil",
    }


def test_contact_changelist_shows_only_own_household(anna, household, levi_contact):
    build_contact(household, "Hans Becker")

    response = anna.get(reverse("admin:contacts_contact_changelist"))

    assert response.status_code == 200
    assert "Hans Becker" in response.text
    assert "Yossi Levi" not in response.text


def test_contact_search_stays_in_own_household(anna, household, levi_contact):
    build_contact(household, "Hans Becker", aliases=["Onkel Hans"])

    response = anna.get(
        reverse("admin:contacts_contact_changelist"), {"q": "Hans Levi"}
    )
    own = anna.get(reverse("admin:contacts_contact_changelist"), {"q": "Onkel"})

    assert "Yossi Levi" not in response.text
    assert "Hans Becker" in own.text


@pytest.mark.parametrize("view", ["change", "delete", "history"])
def test_other_households_contact_pages_are_out_of_reach(anna, levi_contact, view):
    url = reverse(f"admin:contacts_contact_{view}", args=[levi_contact.pk])

    response = anna.get(url)
    followed = anna.get(url, follow=True)

    assert response.status_code in {302, 404}
    if response.status_code == 302:
        assert response.url == reverse("admin:index")
    assert "Yossi" not in followed.text
    assert "Levi" not in followed.text


def test_other_households_contact_cannot_be_deleted(anna, levi_contact):
    anna.post(
        reverse("admin:contacts_contact_changelist"),
        {
            "action": "delete_selected",
            "_selected_action": [levi_contact.pk],
            "post": "yes",
        },
    )

    assert Contact.objects.filter(pk=levi_contact.pk).exists()


def test_add_contact_normalises_inline_phone_and_refreshes_search(anna, household):
    data = with_phone_channel(contact_form("Jürgen Müller"), "030 1234567")

    response = anna.post(reverse("admin:contacts_contact_add"), data)

    assert response.status_code == 302
    contact = Contact.objects.get()
    assert contact.household == household
    channel = contact.channels.get()
    assert (channel.value, channel.household) == ("+49301234567", household)
    assert "jurgen muller" in contact.search_text
    assert contact.phone_digits == "301234567"


def test_invalid_inline_phone_is_a_form_error_in_the_households_language(
    anna, household
):
    data = with_phone_channel(contact_form("Hans Becker"), "call me")

    response = anna.post(reverse("admin:contacts_contact_add"), data)

    assert response.status_code == 200
    assert "keine Telefonnummer für die Region DE" in response.text
    assert not Contact.objects.exists()
    assert not ContactChannel.objects.exists()


def test_household_cannot_be_chosen_by_a_household_admin(
    anna, household, other_household
):
    data = contact_form("Hans Becker", household=str(other_household.pk))

    add_page = anna.get(reverse("admin:contacts_contact_add"))
    anna.post(reverse("admin:contacts_contact_add"), data)

    assert 'name="household"' not in add_page.text
    assert "Levi family" not in add_page.text
    assert Contact.objects.get().household == household


def test_editing_inlines_refreshes_search_columns(anna, household):
    contact = build_contact(household, "Hans Becker")
    data = contact_form(
        "Hans Becker",
        **{
            "aliases-TOTAL_FORMS": "1",
            "aliases-0-name": "Onkel Hans",
        },
    )

    response = anna.post(
        reverse("admin:contacts_contact_change", args=[contact.pk]), data
    )

    assert response.status_code == 302
    contact.refresh_from_db()
    assert contact.search_text == "hans becker onkel hans"
    assert contact.aliases.get().household == household


def test_lead_owner_choices_are_own_households_memberships(
    anna, household, other_household
):
    build_member(household, "ben", last_name="Becker")
    build_member(other_household, "yossi", last_name="Levi")

    response = anna.get(reverse("admin:household_lead_add"))

    assert response.status_code == 200
    assert "Ben Becker (Mitglied)" in response.text
    assert "Yossi" not in response.text


def test_add_profile_with_membership_inline(anna, household):
    data = {
        "username": "ben",
        "first_name": "Ben",
        "last_name": "Becker",
        "email": "",
        "phone": "030 1234567",
        "deleted_at_0": "",
        "deleted_at_1": "",
        "memberships-TOTAL_FORMS": "1",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1",
        "memberships-0-role": "member",
        "memberships-0-status": "active",
        "memberships-0-lead_access": "own",
    }

    response = anna.post(reverse("admin:household_userprofile_add"), data)

    assert response.status_code == 302
    profile = UserProfile.objects.get(username="ben")
    assert (profile.household, profile.phone) == (household, "+49301234567")
    membership = profile.memberships.get()
    assert (membership.household, membership.lead_access) == (household, "own")


def test_duplicate_template_id_is_a_form_error(anna, household, other_household):
    LetterTemplate.objects.create(
        household=other_household,
        template_id="kuendigung",
        title="Levi letter",
        body="…",
        recipient_fields=["line1", "city"],
    )
    data = {
        "title": "Kündigung",
        "template_id": "kuendigung",
        "language": "de",
        "recipient_fields": ["line1", "postcode", "city"],
        "body": "Sehr geehrte Damen und Herren",
    }

    first = anna.post(reverse("admin:compose_lettertemplate_add"), data)
    second = anna.post(reverse("admin:compose_lettertemplate_add"), data)

    assert first.status_code == 302
    assert second.status_code == 200
    assert "existiert bereits" in second.text
    assert LetterTemplate.objects.filter(household=household).count() == 1


def test_revoke_action_revokes_only_own_tokens(anna, admin_membership, other_household):
    own, _ = issue_token(profile=admin_membership.profile)
    yossi = build_member(other_household, "yossi")
    theirs, _ = issue_token(profile=yossi.profile)

    changelist = anna.get(reverse("admin:yorik_apitoken_changelist"))
    anna.post(
        reverse("admin:yorik_apitoken_changelist"),
        {"action": "revoke", "_selected_action": [own.pk, theirs.pk]},
    )

    assert own.prefix in changelist.text
    assert theirs.prefix not in changelist.text
    own.refresh_from_db()
    theirs.refresh_from_db()
    assert own.revoked_at is not None
    assert theirs.revoked_at is None


def test_household_admin_sees_only_own_household(anna, household, other_household):
    changelist = anna.get(reverse("admin:household_household_changelist"))
    other = anna.get(
        reverse("admin:household_household_change", args=[other_household.pk])
    )

    assert "Familie Becker" in changelist.text
    assert "Levi family" not in changelist.text
    assert other.status_code == 302


@pytest.mark.parametrize(
    ("role", "status", "deleted"),
    [
        ("member", "active", False),
        ("admin", "pending", False),
        ("admin", "paused", False),
        ("admin", "cancelled", False),
        ("admin", "active", True),
    ],
)
def test_staff_user_who_administers_no_household_sees_nothing(
    client, household, role, status, deleted
):
    membership = build_member(household, "ben", role=role, status=status)
    user = membership.profile.user
    user.is_staff = True
    user.save()
    if deleted:
        UserProfile.objects.filter(pk=membership.profile_id).update(
            deleted_at="2025-01-01T00:00:00Z"
        )
    build_contact(household, "Hans Becker")
    client.force_login(user)

    index = client.get(reverse("admin:index"))
    changelist = client.get(reverse("admin:contacts_contact_changelist"))

    assert index.status_code == 200
    assert reverse("admin:contacts_contact_changelist") not in index.text
    assert changelist.status_code == 403


def test_household_admin_index_lists_household_models_only(anna):
    response = anna.get(reverse("admin:index"))

    assert reverse("admin:contacts_contact_changelist") in response.text
    assert reverse("admin:household_lead_changelist") in response.text
    assert reverse("admin:yorik_card_changelist") not in response.text
    assert reverse("admin:auth_user_changelist") not in response.text


def test_superuser_sees_every_household(client, household, levi_contact):
    build_contact(household, "Hans Becker")
    superuser = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(superuser)

    contacts = client.get(reverse("admin:contacts_contact_changelist"))
    other = client.get(reverse("admin:contacts_contact_change", args=[levi_contact.pk]))
    cards = client.get(reverse("admin:yorik_card_changelist"))

    assert "Hans Becker" in contacts.text
    assert "Yossi Levi" in contacts.text
    assert other.status_code == 200
    assert 'name="household"' not in other.text
    assert cards.status_code == 200


def test_superuser_picks_the_household_of_a_new_contact(client, other_household):
    superuser = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(superuser)
    data = with_phone_channel(
        contact_form("Yossi Levi", household=str(other_household.pk)), "050-1234567"
    )

    response = client.post(reverse("admin:contacts_contact_add"), data)

    assert response.status_code == 302
    contact = Contact.objects.get()
    assert contact.household == other_household
    assert contact.channels.get().value == "+972501234567"


def test_superuser_without_household_gets_a_form_error(client, db):
    superuser = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(superuser)
    data = with_phone_channel(contact_form("Hans Becker"), "030 1234567")

    response = client.post(reverse("admin:contacts_contact_add"), data)

    assert response.status_code == 200
    assert "This field is required." in response.text
    assert not Contact.objects.exists()


def test_admin_edits_of_names_reach_people_search(
    anna, household, admin_membership, django_capture_on_commit_callbacks
):
    from people_search.index.models import NameWordUse
    from tests.builders import build_lead

    lead = build_lead(household, "Dana", last_name="Levi", owner=admin_membership)
    data = {
        "first_name": "Dana",
        "last_name": "Mizrahi",
        "email": "",
        "phone": "",
        "status": "new",
        "owner": admin_membership.pk,
    }

    with django_capture_on_commit_callbacks(execute=True):
        response = anna.post(
            reverse("admin:household_lead_change", args=[lead.pk]), data
        )

    assert response.status_code == 302
    names = set(
        NameWordUse.objects.filter(subject="lead", subject_id=lead.pk).values_list(
            "word__word", flat=True
        )
    )
    assert names == {"dana", "mizrahi"}


def test_profile_added_in_admin_gets_its_name_embedded(
    anna, household, django_capture_on_commit_callbacks
):
    from people_search.index.models import NameWordUse

    with django_capture_on_commit_callbacks(execute=True):
        test_add_profile_with_membership_inline(anna, household)

    membership = UserProfile.objects.get(username="ben").memberships.get()
    assert NameWordUse.objects.filter(
        subject="member", subject_id=membership.pk, word__word="becker"
    ).exists()


def event_form(title: str) -> dict[str, str]:
    """Return the POST data of the calendar event form, a past event with a place."""
    return {
        "title": title,
        "starts_at_0": "2025-05-02",
        "starts_at_1": "09:00:00",
        "ends_at_0": "",
        "ends_at_1": "",
        "location": "Praxis Dr. Öz, Hauptstr. 1, Berlin",
        **attendee_rows(),
    }


def attendee_rows(*profile_ids: int) -> dict[str, str]:
    """Return the POST data of the event form's attendee rows."""
    prefix = "eventattendee_set"
    rows = {
        f"{prefix}-TOTAL_FORMS": str(len(profile_ids)),
        f"{prefix}-INITIAL_FORMS": "0",
    }
    for index, profile_id in enumerate(profile_ids):
        rows[f"{prefix}-{index}-userprofile"] = str(profile_id)
    return rows


def test_an_attendee_added_in_admin_attends_in_the_events_household(
    anna, household, admin_membership
):
    data = event_form("Elternabend") | attendee_rows(admin_membership.profile_id)

    response = anna.post(reverse("admin:household_calendarevent_add"), data)

    assert response.status_code == 302
    event = CalendarEvent.objects.get()
    assert list(
        EventAttendee.objects.values_list(
            "household_id", "calendarevent_id", "userprofile_id"
        )
    ) == [(household.pk, event.pk, admin_membership.profile_id)]


def test_an_event_added_in_admin_is_found_by_its_folded_title(anna, household):
    response = anna.post(
        reverse("admin:household_calendarevent_add"), event_form("ZAHNÄRZTIN Dr. Öz")
    )

    assert response.status_code == 302
    event = CalendarEvent.objects.get()
    assert (event.household, event.folded_title) == (household, "zahnarztin dr. oz")
    found = find_known_providers(household=household, category=get_category("dentist"))
    assert [candidate.name for candidate in found.candidates] == ["Praxis Dr. Öz"]


def test_renaming_an_event_in_admin_refolds_its_title(anna, household):
    event = create_calendar_event(
        household=household,
        title="Zahnarzt",
        starts_at=datetime(2025, 5, 2, 7, tzinfo=UTC),
        location="Praxis Dr. Öz, Hauptstr. 1, Berlin",
    )

    response = anna.post(
        reverse("admin:household_calendarevent_change", args=[event.pk]),
        event_form("FRISÖR Öz"),
    )

    assert response.status_code == 302
    event.refresh_from_db()
    assert (event.title, event.folded_title) == ("FRISÖR Öz", "frisor oz")


def people_found(api, query):
    response = api.call("people_search", {"query": query})
    assert response.status_code == 200, response.content
    return [
        (row["kind"], row["name"], row["match"]) for row in response.json()["items"]
    ]


def test_renaming_a_lead_in_admin_changes_what_people_search_finds(
    anna, api, household, admin_membership
):
    lead = build_lead(household, "Dana", last_name="Levi", owner=admin_membership)
    data = {
        "first_name": "Dana",
        "last_name": "Müller",
        "email": "",
        "phone": "050-123-4567",
        "status": "new",
        "owner": admin_membership.pk,
    }

    response = anna.post(reverse("admin:household_lead_change", args=[lead.pk]), data)

    assert response.status_code == 302
    assert people_found(api, "Mueller") == [("lead", "Dana Müller", "name")]
    assert people_found(api, "Levi") == []
    assert people_found(api, "050 1234567") == [("lead", "Dana Müller", "phone")]


def test_renaming_a_profile_in_admin_changes_what_people_search_finds(
    anna, api, household
):
    ben = build_member(household, "ben", first_name="Ben", last_name="Becker")
    data = {
        "username": "ben",
        "first_name": "Ben",
        "last_name": "Strauß",
        "email": "",
        "phone": "",
        "deleted_at_0": "",
        "deleted_at_1": "",
        "memberships-TOTAL_FORMS": "1",
        "memberships-INITIAL_FORMS": "1",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1",
        "memberships-0-id": str(ben.pk),
        "memberships-0-profile": str(ben.profile_id),
        "memberships-0-role": "member",
        "memberships-0-status": "active",
        "memberships-0-lead_access": "none",
    }

    response = anna.post(
        reverse("admin:household_userprofile_change", args=[ben.profile_id]), data
    )

    assert response.status_code == 302
    assert people_found(api, "Strauss") == [("member", "Ben Strauß", "name")]
    assert ("member", "Ben Becker", "name") not in people_found(api, "Becker")


def test_renaming_a_contact_in_admin_changes_what_find_person_finds(
    anna, api, household
):
    contact = build_contact(household, "Hans Becker", relation="Onkel")
    data = contact_form("Hans Brenner", relation="Großonkel")

    response = anna.post(
        reverse("admin:contacts_contact_change", args=[contact.pk]), data
    )

    def found(query):
        response = api.call("find_person", {"query": query, "source": "contacts"})
        assert response.status_code == 200, response.content
        return [row["display_name"] for row in response.json()["results"]]

    assert response.status_code == 302
    assert found("Brenner") == ["Hans Brenner"]
    assert found("Grossonkel") == ["Hans Brenner"]
    assert found("Becker") == []


def test_a_mobile_number_too_short_to_exist_is_refused_in_german(anna, household):
    data = with_phone_channel(contact_form("Hans Becker"), "0151 / 555 12 34")

    response = anna.post(reverse("admin:contacts_contact_add"), data)

    assert response.status_code == 200
    assert "zu kurz für eine Mobilnummer der Region DE" in response.text
    assert not Contact.objects.exists()


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("0151 / 555 12 345", "+4915155512345"),
        ("0176 1234567", "+491761234567"),
        ("030 1234567", "+49301234567"),
        ("089 12345", "+498912345"),  # short, but a landline's length varies
        ("0153 1234567", "+491531234567"),  # a range the metadata does not list
    ],
)
def test_numbers_that_can_exist_are_still_accepted(anna, household, typed, stored):
    data = with_phone_channel(contact_form("Hans Becker"), typed)

    response = anna.post(reverse("admin:contacts_contact_add"), data)

    assert response.status_code == 302
    assert Contact.objects.get().channels.get().value == stored


def test_a_leads_phone_too_short_to_exist_is_refused_naming_the_field(
    anna, household, admin_membership
):
    lead = build_lead(household, "Dana", owner=admin_membership)
    data = {
        "first_name": "Dana",
        "last_name": "",
        "email": "",
        "phone": "0171 123456",
        "status": "new",
        "owner": admin_membership.pk,
    }

    response = anna.post(reverse("admin:household_lead_change", args=[lead.pk]), data)

    assert response.status_code == 200
    assert "zu kurz für eine Mobilnummer der Region DE" in response.text
    lead.refresh_from_db()
    assert lead.phone == ""


def test_edit_forms_show_phones_as_the_household_writes_them(
    anna, household, admin_membership
):
    contact = build_contact(
        household, "Hans Becker", channels=[{"kind": "phone", "value": "030 1234567"}]
    )
    lead = build_lead(household, "Dana", phone="0176 1234567", owner=admin_membership)

    contact_page = anna.get(reverse("admin:contacts_contact_change", args=[contact.pk]))
    lead_page = anna.get(reverse("admin:household_lead_change", args=[lead.pk]))

    assert 'value="030 1234567"' in contact_page.text
    assert 'value="+49301234567"' not in contact_page.text
    assert 'value="0176 1234567"' in lead_page.text
    assert "+491761234567" not in lead_page.text


def test_saving_a_national_phone_from_the_edit_form_stores_e164(
    anna, household, admin_membership
):
    lead = build_lead(household, "Dana", phone="+491761234567", owner=admin_membership)
    data = {
        "first_name": "Dana",
        "last_name": "",
        "email": "",
        "phone": "0176 1234567",
        "status": "new",
        "owner": admin_membership.pk,
    }

    response = anna.post(reverse("admin:household_lead_change", args=[lead.pk]), data)

    assert response.status_code == 302
    lead.refresh_from_db()
    assert lead.phone == "+491761234567"
