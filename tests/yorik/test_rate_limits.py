"""The API's rate limit counts every request once, across threads and servers."""

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from household.authentication import token_membership
from tests.builders import build_member
from yorik.models import ApiToken, RateCounter
from yorik.rate_limits import count_request
from yorik.tokens import hash_token, issue_token


def counts_of_eight_clients(count: Callable[[], int]) -> list[int]:
    """Return the window's counts that eight clients at once saw, 25 requests
    each, in order."""
    counts: list[int] = []
    lock = threading.Lock()

    def client() -> None:
        try:
            for _ in range(25):
                hits = count()
                with lock:
                    counts.append(hits)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(counts)


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_are_counted_exactly():
    """Eight clients at once: the window sees every request exactly once."""
    counts = counts_of_eight_clients(
        lambda: count_request(key="skills:concurrency", window_seconds=3600).hits
    )

    assert counts == list(range(1, 201))


@pytest.mark.django_db(transaction=True)
def test_concurrent_token_lookups_count_exactly(household):
    """The lookup's own count, eight clients with one token at once."""
    token, key = issue_token(profile=build_member(household, "eve").profile)

    counts = counts_of_eight_clients(
        lambda: (
            token_membership(
                hash_token(key), counting=("skills:", 3600)
            ).counted.hit.hits
        )
    )

    assert counts == list(range(1, 201))
    assert count_request(key=f"skills:{token.pk}", window_seconds=3600).hits == 201


@pytest.mark.django_db
def test_a_new_window_starts_from_one_and_says_when_it_ends():
    first = count_request(key="skills:windows", window_seconds=60)
    second = count_request(key="skills:windows", window_seconds=60)

    assert (first.hits, second.hits) == (1, 2)
    assert 0 < second.retry_after <= 60


def test_throttled_requests_beyond_the_limit_get_429_with_retry_after(api, monkeypatch):
    from yorik.throttling import TokenRateThrottle

    monkeypatch.setattr(TokenRateThrottle, "THROTTLE_RATES", {"skills": "3/hour"})

    statuses = [api.get("/api/skills/").status_code for _ in range(5)]
    refused = api.get("/api/skills/")

    assert statuses == [200, 200, 200, 429, 429]
    assert 0 < int(refused["Retry-After"]) <= 3600


def test_counts_skip_the_write_ahead_log(db):
    """A count need not outlive a crash; its commit need not wait for a flush."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence FROM pg_class WHERE relname = %s",
            [RateCounter._meta.db_table],
        )
        assert cursor.fetchone() == ("u",)


def test_the_token_lookup_counts_under_the_rate_limits_own_key(api):
    """Authentication counts the request as it finds the token; a request
    counted any other way (`count_request`) lands in the same window."""
    for _ in range(3):
        assert api.get("/api/skills/").status_code == 200
    token = ApiToken.objects.get(profile=api.membership.profile)

    hit = count_request(key=f"skills:{token.pk}", window_seconds=60)

    assert hit.hits == 4


def test_a_request_with_an_unknown_token_counts_nothing(client, db):
    response = client.get("/api/skills/", HTTP_AUTHORIZATION="Bearer not-a-token")

    assert response.status_code == 401
    assert not RateCounter.objects.exists()


def test_a_request_the_lookup_did_not_count_is_counted_by_the_throttle(
    api, monkeypatch
):
    """Another view's scope or window than the lookup counted for: the
    throttle counts the request itself, once."""
    from household import authentication

    monkeypatch.setattr(authentication, "counting_window", lambda request: None)

    for _ in range(2):
        assert api.get("/api/skills/").status_code == 200
    token = ApiToken.objects.get(profile=api.membership.profile)

    assert count_request(key=f"skills:{token.pk}", window_seconds=60).hits == 3
