"""Middleware: admin's Content-Security-Policy, and 503 for an unavailable database."""

from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import get_script_prefix, get_urlconf, reverse

from yorik.errors import DATABASE_ERRORS, database_unavailable, unavailable
from yorik.views import CONTENT_SECURITY_POLICY


@cache
def _admin_root(urlconf: str, script_prefix: str) -> str:
    return reverse("admin:index", urlconf=urlconf)


def is_admin_page(request: HttpRequest) -> bool:
    """Return whether the request is for the admin site.

    Where the admin lives is looked up once per URLconf: reversing it on
    every request cost 1 % of an app server's CPU.
    """
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    return request.path.startswith(_admin_root(urlconf, get_script_prefix()))


class AdminContentSecurityPolicyMiddleware:
    """Send the pages' Content-Security-Policy with every admin response.

    Django's admin (5.2) loads its scripts and styles from files and writes no
    inline script, style attribute or event handler, so the pages' policy
    fits it unchanged. A small middleware rather than django-csp: the one
    policy is fixed, needs no nonces, and the pages already send it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if is_admin_page(request):
            response.headers.setdefault(
                "Content-Security-Policy", CONTENT_SECURITY_POLICY
            )
        return response


class DatabaseUnavailableMiddleware:
    """Answer 503 when a page's database is down, hung or too slow.

    The API's views answer it themselves (yorik.errors.exception_handler), as
    does /mcp/; pages raise, and get a plain page with Retry-After instead of
    a server error. Nothing is kept: the next request connects afresh.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponse | None:
        if not isinstance(exception, DATABASE_ERRORS):
            return None
        database_unavailable(exception)
        return unavailable(request)
