"""The household's dashboard pages: one member, and the leads list."""

import pytest

from tests.builders import build_lead


@pytest.mark.parametrize("lead", ["²", "¹", "³", "\u0661", "12abc", "-1", ""])
def test_a_lead_id_that_is_not_ascii_digits_highlights_nothing(
    client, admin_membership, household, lead
):
    build_lead(household, "Dana", last_name="Levi", owner=admin_membership)
    client.force_login(admin_membership.profile.user)

    response = client.get("/en/dashboard/leads", {"lead": lead})

    assert response.status_code == 200
    assert "Dana Levi" in response.text
