import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils import timezone

from household.models import Household, Membership, UserProfile
from tests.builders import build_household, build_lead, build_member


def test_profile_phone_is_stored_as_e164_with_its_national_digits(household):
    profile = build_member(household, "jonas", phone="0171 1234567").profile

    profile.refresh_from_db()
    assert profile.phone == "+491711234567"
    assert profile.phone_nsn == "1711234567"


def test_lead_phone_is_read_in_the_household_region(other_household):
    lead = build_lead(other_household, "Dana", phone="050-123-4567")

    assert lead.phone == "+972501234567"
    assert lead.phone_nsn == "501234567"


def test_unparseable_phone_is_a_validation_error_not_a_blank(household):
    profile = UserProfile(household=household, username="jonas", phone="0800-NOPE")

    with pytest.raises(ValidationError) as error:
        profile.full_clean()

    assert error.value.message_dict["phone"] == ["not a phone number for region DE"]
    assert profile.phone == "0800-NOPE"


def test_search_text_is_folded_names_and_email(household):
    profile = build_member(
        household,
        "joerg",
        first_name="Jörg",
        last_name="Strauß",
        email="Joerg@Example.org",
    ).profile

    assert profile.search_text == "jorg strauss jorg@example.org"


def test_username_is_unique_within_a_household(household, other_household):
    UserProfile.objects.create(household=household, username="anna")
    UserProfile.objects.create(household=other_household, username="anna")

    with pytest.raises(IntegrityError):
        UserProfile.objects.create(household=household, username="anna")


def test_membership_role_must_be_known(household):
    profile = UserProfile.objects.create(household=household, username="anna")

    with pytest.raises(IntegrityError):
        Membership.objects.create(household=household, profile=profile, role="king")


def test_membership_tier_follows_the_role(household):
    tiers = {
        role: build_member(household, f"user-{role}", role=role).tier
        for role in ("admin", "member", "child", "employee", "viewer")
    }

    assert tiers == {
        "admin": "admin",
        "member": "member",
        "child": "restricted",
        "employee": "restricted",
        "viewer": "restricted",
    }


def test_membership_cannot_join_a_profile_of_another_household(
    household, other_household
):
    profile = UserProfile.objects.create(household=other_household, username="dana")

    with pytest.raises(ValidationError, match="another household"):
        Membership(household=household, profile=profile).full_clean()


def test_live_memberships_leave_out_removed_deleted_and_foreign_ones(
    household, other_household
):
    counted = [
        build_member(household, f"{status}-member", status=status)
        for status in ("active", "pending", "paused", "cancelled")
    ]
    build_member(household, "rita", status="removed")
    deleted = build_member(household, "dora")
    UserProfile.objects.filter(pk=deleted.profile_id).update(deleted_at=timezone.now())
    yossi = build_member(other_household, "yossi")
    # A row clean() refuses: a Levi profile in the Becker household.
    Membership.objects.create(household=household, profile=yossi.profile)

    assert set(Membership.objects.live(household=household)) == set(counted)
    assert set(Membership.objects.live()) == {*counted, yossi}
    assert set(Membership.objects.live(household=other_household)) == {yossi}


@pytest.mark.django_db
def test_region_must_be_one_phonenumbers_knows():
    with pytest.raises(ValidationError):
        Household(slug="x", name="X", default_region="XX").full_clean()
    with pytest.raises(IntegrityError):
        build_household("y", default_region="de")
