import pytest

from tests.builders import build_household, build_member


@pytest.fixture
def household(db):
    return build_household("becker")


@pytest.fixture
def other_household(db):
    return build_household(
        "levi", name="Levi family", default_region="IL", language="en"
    )


@pytest.fixture
def admin_membership(household):
    return build_member(
        household, "anna", role="admin", lead_access="all", last_name="Becker"
    )
