"""WSGI entry point: `granian --interface wsgi yorik.wsgi:application`.

A request with an API token (`Authorization: Bearer …`) for a path under
/api/ goes through settings.TOKEN_MIDDLEWARE only: sessions, CSRF, the
logged-in user, messages, the admin's policy and login lockouts have nothing
to do for it, and together they cost a tenth to a sixth of such a request's
CPU (docs/performance.md, "Where a request's time goes"). Every other
request, pages, the admin, /mcp/ and the API without a token, goes through
all of settings.MIDDLEWARE.
"""

import os
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yorik.settings")

everything = get_wsgi_application()


class TokenRequestHandler(WSGIHandler):
    """Django's WSGI handler with settings.TOKEN_MIDDLEWARE as its middleware."""

    def load_middleware(self, is_async: bool = False) -> None:
        # Django builds the chain from settings.MIDDLEWARE alone; it is swapped
        # while this handler is built, once, before any request.
        all_middleware = settings.MIDDLEWARE
        settings.MIDDLEWARE = settings.TOKEN_MIDDLEWARE
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = all_middleware


token_requests = TokenRequestHandler()


def is_token_request(environ: dict[str, Any]) -> bool:
    """Return whether the request carries an API token to a path of the API."""
    return environ.get("PATH_INFO", "").startswith("/api/") and environ.get(
        "HTTP_AUTHORIZATION", ""
    ).startswith("Bearer ")


def application(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    handler = token_requests if is_token_request(environ) else everything
    return handler(environ, start_response)
