"""Admin pages send the pages' Content-Security-Policy, and still work under it."""

import re

import pytest
from django.urls import reverse

from tests.builders import PASSWORD, build_contact

INLINE = [
    re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE),
    re.compile(r"<style\b", re.IGNORECASE),
    re.compile(r"\sstyle\s*=", re.IGNORECASE),
    re.compile(r"\son[a-z]+\s*=", re.IGNORECASE),
    re.compile(r"javascript:", re.IGNORECASE),
]


@pytest.fixture
def anna(client, admin_membership):
    assert client.login(username="anna", password=PASSWORD)
    return client


def test_the_admin_login_page_sends_the_policy(client, db):
    response = client.get(reverse("admin:login"))

    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy


@pytest.mark.parametrize(
    "page",
    [
        "admin:index",
        "admin:contacts_contact_changelist",
        "admin:contacts_contact_add",
        "contact change",
        "admin:household_membership_changelist",
        "admin:household_calendarevent_add",
    ],
)
def test_admin_pages_send_the_policy_and_need_nothing_inline(anna, household, page):
    if page == "contact change":
        contact = build_contact(household, "Gisela Becker", aliases=["Oma"])
        url = reverse("admin:contacts_contact_change", args=[contact.pk])
    else:
        url = reverse(page)

    response = anna.get(url)

    assert response.status_code == 200
    assert "script-src 'self'" in response["Content-Security-Policy"]
    html = response.content.decode()
    assert [pattern.pattern for pattern in INLINE if pattern.search(html)] == []


def test_pages_outside_admin_keep_their_own_headers(client, db):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")

    assert "Content-Security-Policy" not in response
