"""Rate limits: the agent API's per token, and the client address others count by."""

import contextlib
import ipaddress
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from yorik.rate_limits import Counted, count_request


class TokenRateThrottle(ScopedRateThrottle):
    """A scoped throttle per API token, counted atomically in PostgreSQL.

    DRF's own throttles keep a list of timestamps in the cache and write it
    back on every request, which lets concurrent requests past the limit and
    costs several statements; here a request is one counting statement, and
    every app server sees the same counts. Windows are fixed: a client gets
    at most the rate per window. The token's authentication counts the
    request as it looks the token up (`window_for`); a request it did not
    count is counted here.
    """

    retry_after: float | None = None

    def window_for(self, view: Any) -> tuple[str, int] | None:
        """Return the prefix of a token's key and the window length, in
        seconds, a request to `view` counts in (None for a view without a
        scope: not limited). The key is the prefix and the token's id."""
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return None
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return f"{self.scope}:", self.duration

    def allow_request(self, request: Request, view: Any) -> bool:
        window = self.window_for(view)
        if window is None or request.auth is None:
            return True
        key_prefix, window_seconds = window
        counted: Counted | None = getattr(request.auth, "counted", None)
        if counted and (counted.key_prefix, counted.window_seconds) == window:
            hit = counted.hit
        else:
            hit = count_request(
                key=f"{key_prefix}{request.auth.pk}", window_seconds=window_seconds
            )
        self.retry_after = hit.retry_after
        return hit.hits <= self.num_requests

    def wait(self) -> float | None:
        return self.retry_after


def client_address(request: HttpRequest) -> str:
    """Return the address a request came from, as login and card limits count it.

    Behind a proxy that appends the client's address to X-Forwarded-For
    (DJANGO_TRUST_X_FORWARDED_FOR), that last entry is the client; entries
    before it are the client's own claims and are ignored.
    """
    if settings.YORIK_TRUST_X_FORWARDED_FOR:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1]
        with contextlib.suppress(ValueError):
            return str(ipaddress.ip_address(forwarded.strip()))
    return request.META.get("REMOTE_ADDR", "")


def wait_for_address(request: HttpRequest, *, scope: str, rate: str) -> float | None:
    """Count a request against its address's rate ("60/min", DRF's syntax).

    Return the seconds until the window ends if the address is over the rate,
    else None.
    """
    limit, window = ScopedRateThrottle().parse_rate(rate)
    hit = count_request(key=f"{scope}:{client_address(request)}", window_seconds=window)
    return hit.retry_after if hit.hits > limit else None
