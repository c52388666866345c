"""The API's rate limit counts every request once, across threads and servers."""

import threading

import pytest
from django.db import connection

from yorik.models import RateCounter
from yorik.rate_limits import count_request


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_are_counted_exactly():
    """Eight clients at once: the window sees every request exactly once."""
    counts: list[int] = []
    lock = threading.Lock()

    def client() -> None:
        try:
            for _ in range(25):
                hit = count_request(key="skills:concurrency", window_seconds=3600)
                with lock:
                    counts.append(hit.hits)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(counts) == list(range(1, 201))


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
