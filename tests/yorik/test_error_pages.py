"""Error pages a person can reach: styled, in their language, saying what to do."""

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import path

from yorik import urls as site_urls


def forbidden(request):
    raise PermissionDenied


def broken(request):
    raise RuntimeError("a bug")


# The site's routes and handlers, and two pages that fail on purpose.
urlpatterns = [
    path("test-forbidden/", forbidden),
    path("test-broken/", broken),
    *site_urls.urlpatterns,
]
handler403 = site_urls.handler403
handler404 = site_urls.handler404
handler500 = site_urls.handler500

pytestmark = pytest.mark.urls(__name__)


def text_of(response):
    return " ".join(response.text.split())


def assert_styled(response, status, *, language):
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    assert f'<html lang="{language}">' in response.text
    assert '<meta name="viewport"' in response.text
    assert 'href="/static/yorik/yorik.css' in response.text
    assert response["Content-Security-Policy"].startswith("default-src 'self'")
    assert "<script" not in response.text
    assert "style=" not in response.text


@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        (
            "de",
            "Unter dieser Adresse gibt es keine Seite. Prüfe den Link oder frag "
            "Yorik noch einmal nach der Karte.",
        ),
        (
            "en",
            "There is no page at this address. Check the link, or ask Yorik for "
            "the card again.",
        ),
    ],
)
def test_an_unknown_address_gets_a_page_in_the_browsers_language(
    db, language, sentence
):
    response = Client(HTTP_ACCEPT_LANGUAGE=language).get("/no-such-page/")

    assert_styled(response, 404, language=language)
    assert sentence in text_of(response)


def test_the_api_still_answers_404_as_json(db):
    response = Client().get("/api/no-such-endpoint/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_forbidden_page_says_what_to_do(db):
    response = Client(HTTP_ACCEPT_LANGUAGE="de").get("/test-forbidden/")

    assert_styled(response, 403, language="de")
    assert "Diese Seite darfst du nicht öffnen." in text_of(response)


def test_a_server_error_gets_a_page_without_the_visitors_session(admin_membership):
    client = Client(HTTP_ACCEPT_LANGUAGE="de", raise_request_exception=False)
    client.force_login(admin_membership.profile.user)

    response = client.get("/test-broken/")

    assert_styled(response, 500, language="de")
    assert "Yorik konnte diese Seite nicht anzeigen." in text_of(response)
    assert "a bug" not in response.text
    # Rendered without the request: nothing on it looked up the member.
    assert "Abmelden" not in response.text


def test_a_server_error_in_english(db):
    client = Client(HTTP_ACCEPT_LANGUAGE="en", raise_request_exception=False)

    response = client.get("/test-broken/")

    assert_styled(response, 500, language="en")
    assert "Reload it in a moment" in text_of(response)


def test_a_logged_in_member_gets_404_in_the_households_language(admin_membership):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(admin_membership.profile.user)

    response = client.get("/no-such-page/")

    assert_styled(response, 404, language="de")
    assert "Unter dieser Adresse gibt es keine Seite." in text_of(response)


def test_a_logged_in_member_gets_403_in_the_households_language(other_household):
    from tests.builders import build_member

    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.force_login(build_member(other_household, "dana").profile.user)

    response = client.get("/test-forbidden/")

    assert_styled(response, 403, language="en")
    assert "You may not open this page." in text_of(response)


@pytest.mark.parametrize(
    ("language", "sentence"),
    [
        ("de", "Diese Seite war zu lange offen"),
        ("en", "This page was open too long"),
    ],
)
def test_a_refused_form_post_gets_a_styled_page_saying_to_reload(
    db, language, sentence
):
    client = Client(enforce_csrf_checks=True, HTTP_ACCEPT_LANGUAGE=language)

    response = client.post("/accounts/login/", {"username": "x", "password": "y"})

    assert_styled(response, 403, language=language)
    assert sentence in text_of(response)


def test_too_many_card_visits_are_refused_in_the_households_language(
    settings, other_household
):
    from tests.builders import build_member
    from yorik.cards import card_link, create_card

    settings.YORIK_CARD_LINK_RATE = "1/hour"
    creator = build_member(other_household, "yael", role="admin").profile
    card = create_card(
        household=other_household,
        kind="contacts_found",
        payload={},
        created_by=creator,
    )
    visitor = Client(REMOTE_ADDR="203.0.113.9", HTTP_ACCEPT_LANGUAGE="de")
    visitor.get(card_link(card))

    refused = visitor.get(card_link(card))

    assert_styled(refused, 429, language="en")
    assert "Too many requests" in text_of(refused)
