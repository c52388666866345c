"""Rate limits on the agent API, counted per token."""

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle


class TokenRateThrottle(ScopedRateThrottle):
    """DRF's scoped throttle, keyed by the API token rather than the user."""

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.auth is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}
