"""Failed logins lock out by login and by address (django-axes), on both login pages."""

import time
from datetime import timedelta

import pytest
from django.test import Client

from tests.builders import PASSWORD, build_member

LIMIT = 5


@pytest.fixture(autouse=True)
def login_limits(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def log_in(username, password, *, address="203.0.113.7", path="/accounts/login/"):
    client = Client(REMOTE_ADDR=address)
    response = client.post(path, {"username": username, "password": password})
    return client, response


def fail(username, times, **where):
    for _ in range(times):
        _, response = log_in(username, "wrong-password", **where)
        assert response.status_code in (200, 429)


@pytest.fixture
def anna(admin_membership):
    return admin_membership


@pytest.fixture
def ben(household):
    return build_member(household, "ben")


@pytest.mark.django_db
def test_the_right_password_is_refused_after_too_many_wrong_ones(anna):
    fail("anna", LIMIT)

    client, response = log_in("anna", PASSWORD)

    assert response.status_code == 429
    assert response["Retry-After"] == "900"
    assert "Too many failed logins" in response.text
    assert "Try again in 15 minutes" in response.text
    assert "default-src 'self'" in response["Content-Security-Policy"]
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_fewer_wrong_passwords_than_the_limit_still_let_the_right_one_in(anna):
    fail("anna", LIMIT - 1)

    client, response = log_in("anna", PASSWORD)

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(anna.profile.user.pk)


@pytest.mark.django_db
def test_the_lockout_page_speaks_german(anna):
    fail("anna", LIMIT)

    response = Client(REMOTE_ADDR="203.0.113.7").post(
        "/accounts/login/",
        {"username": "anna", "password": PASSWORD},
        HTTP_ACCEPT_LANGUAGE="de",
    )

    assert response.status_code == 429
    assert "Zu viele fehlgeschlagene Anmeldungen" in response.text
    assert "in 15 Minuten wieder" in response.text


@pytest.mark.django_db
def test_another_login_from_another_address_is_not_affected(anna, ben):
    fail("anna", LIMIT, address="203.0.113.7")

    client, response = log_in("ben", PASSWORD, address="198.51.100.9")

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(ben.profile.user.pk)


@pytest.mark.django_db
def test_a_locked_login_is_locked_from_every_address(anna):
    fail("anna", LIMIT, address="203.0.113.7")

    _, response = log_in("anna", PASSWORD, address="198.51.100.9")

    assert response.status_code == 429


@pytest.mark.django_db
def test_an_address_guessing_many_logins_is_locked_for_all_of_them(anna, ben):
    for index in range(LIMIT):
        log_in(f"nobody{index}", "wrong-password", address="203.0.113.7")

    _, response = log_in("ben", PASSWORD, address="203.0.113.7")

    assert response.status_code == 429


@pytest.mark.django_db
def test_pairs_only_lock_the_login_at_that_address(settings, anna, ben):
    settings.AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
    fail("anna", LIMIT, address="203.0.113.7")

    _, same_pair = log_in("anna", PASSWORD, address="203.0.113.7")
    _, other_address = log_in("anna", PASSWORD, address="198.51.100.9")
    _, other_login = log_in("ben", PASSWORD, address="203.0.113.7")

    assert same_pair.status_code == 429
    assert other_address.status_code == 302
    assert other_login.status_code == 302


@pytest.mark.django_db
def test_the_login_opens_again_after_the_cool_off(settings, anna):
    settings.AXES_COOLOFF_TIME = timedelta(seconds=1)
    fail("anna", LIMIT)
    _, refused = log_in("anna", PASSWORD)

    time.sleep(1.2)
    client, response = log_in("anna", PASSWORD)

    assert refused.status_code == 429
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(anna.profile.user.pk)


@pytest.mark.django_db
def test_admin_login_is_throttled_too(anna):
    fail("anna", LIMIT, path="/admin/login/")

    _, response = log_in("anna", PASSWORD, path="/admin/login/")

    assert response.status_code == 429
    assert "Too many failed logins" in response.text


@pytest.mark.django_db
def test_failures_on_one_login_page_count_on_the_other(anna):
    fail("anna", LIMIT - 1, path="/admin/login/")
    fail("anna", 1, path="/accounts/login/")

    _, response = log_in("anna", PASSWORD)

    assert response.status_code == 429


@pytest.mark.django_db
def test_a_client_cannot_pick_its_address_with_x_forwarded_for(anna):
    for index in range(LIMIT):
        Client(REMOTE_ADDR="203.0.113.7").post(
            "/accounts/login/",
            {"username": f"nobody{index}", "password": "wrong"},
            HTTP_X_FORWARDED_FOR=f"192.0.2.{index}",
        )

    _, response = log_in("anna", PASSWORD, address="203.0.113.7")

    assert response.status_code == 429


@pytest.mark.django_db
def test_behind_a_trusted_proxy_the_forwarded_address_counts(settings, anna):
    settings.YORIK_TRUST_X_FORWARDED_FOR = True
    for index in range(LIMIT):
        Client(REMOTE_ADDR="10.0.0.2").post(
            "/accounts/login/",
            {"username": f"nobody{index}", "password": "wrong"},
            HTTP_X_FORWARDED_FOR="spoofed, 203.0.113.7",
        )

    other_client = Client(REMOTE_ADDR="10.0.0.2").post(
        "/accounts/login/",
        {"username": "anna", "password": PASSWORD},
        HTTP_X_FORWARDED_FOR="198.51.100.9",
    )
    same_client = Client(REMOTE_ADDR="10.0.0.2").post(
        "/accounts/login/",
        {"username": "anna", "password": PASSWORD},
        HTTP_X_FORWARDED_FOR="203.0.113.7",
    )

    assert other_client.status_code == 302
    assert same_client.status_code == 429


@pytest.mark.django_db
def test_a_forwarded_entry_that_is_no_address_counts_as_the_proxy(settings, anna):
    settings.YORIK_TRUST_X_FORWARDED_FOR = True
    for _ in range(LIMIT):
        Client(REMOTE_ADDR="10.0.0.2").post(
            "/accounts/login/",
            {"username": "nobody", "password": "wrong"},
            HTTP_X_FORWARDED_FOR="x" * 500,
        )

    response = Client(REMOTE_ADDR="10.0.0.2").post(
        "/accounts/login/", {"username": "anna", "password": PASSWORD}
    )

    assert response.status_code == 429
