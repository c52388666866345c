"""One JSON error shape for the API: {"error": {"code", "message", "fields"?}}."""

import logging
import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    ObjectDoesNotExist,
    PermissionDenied,
    RequestDataTooBig,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from yorik.serializers import flatten_errors
from yorik.views import CONTENT_SECURITY_POLICY

CODES = {
    400: "invalid_input",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    429: "throttled",
    503: "unavailable",
}

logger = logging.getLogger(__name__)

# A database that is down, hung, or slower than the statement timeout.
DATABASE_ERRORS = (OperationalError, InterfaceError)


class DatabaseUnavailable(exceptions.APIException):
    """The database did not answer in time; the client should retry shortly."""

    status_code = 503
    default_detail = "The database is unavailable or too slow; try again shortly."
    default_code = "unavailable"
    # Read by DRF's handler as the Retry-After header, as for throttling.
    wait = 5


def database_unavailable(error: Exception) -> DatabaseUnavailable:
    """Log a database failure once and return what the client is told."""
    logger.warning("Database unavailable: %s", error)
    return DatabaseUnavailable()


def error_body(code: str, message: str, fields: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if fields:
        error["fields"] = fields
    return {"error": error}


# The most an error body holds, so that any refusal stays a few kilobytes:
# paths with their messages, messages per path, and the length of each path
# and message (either may quote what was sent). The summary names the first
# few paths and counts the others.
MAX_FIELDS = 10
MAX_MESSAGES = 2
MAX_PATH = 100
MAX_MESSAGE = 200
SUMMARY_FIELDS = 3


def field_errors(detail: Any) -> tuple[dict[str, list[str]], int]:
    """Return DRF error detail as {"path.to[0].field": [messages]}, the first few.

    Also return how many more paths had errors.
    """
    fields: dict[str, list[str]] = {}
    left_out: set[str] = set()
    for path, message in flatten_errors(detail):
        path = shortened(path or "non_field_errors", MAX_PATH)
        if path not in fields and len(fields) == MAX_FIELDS:
            left_out.add(path)
            continue
        messages = fields.setdefault(path, [])
        if len(messages) < MAX_MESSAGES:
            messages.append(shortened(message, MAX_MESSAGE))
    return fields, len(left_out)


def shortened(text: str, limit: int) -> str:
    """Return the text, cut to the limit with an ellipsis when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Turn every API exception into the JSON error shape of DESIGN §4."""
    if isinstance(exc, DATABASE_ERRORS):
        exc = database_unavailable(exc)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body(
                "payload_too_large",
                f"The body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} "
                "bytes.",
            ),
            status=413,
        )
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
        )
    elif isinstance(exc, Http404 | ObjectDoesNotExist):
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, exceptions.ParseError | exceptions.UnsupportedMediaType):
        exc = exceptions.ValidationError(
            {"": [f"The body must be a JSON object: {exc.detail}"]}
        )
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        exc.status_code = 401
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = CODES.get(response.status_code, "error")
    if isinstance(exc, exceptions.ValidationError):
        fields, left_out = field_errors(exc.detail)
        body = error_body(code, _summary(fields, left_out), fields)
    else:
        body = error_body(code, str(exc.detail))
    response.data = body
    return response


def _summary(fields: dict[str, list[str]], left_out: int) -> str:
    parts = [f"{path}: {messages[0]}" for path, messages in fields.items()]
    more = len(parts) - SUMMARY_FIELDS + left_out
    summary = "Invalid input. " + "; ".join(parts[:SUMMARY_FIELDS])
    if more > 0:
        summary += f"; and {more:,} more field{'s' if more > 1 else ''} with errors"
    return summary


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def _error_page(template_name: str, status: int) -> HttpResponse:
    """Render an error page in the active language, under the pages' CSP.

    Rendered without the request: nothing on it (the logged-in user, the
    session) reaches for the database, which may be the cause, and two
    refusals read alike byte for byte, telling nothing of what was refused.
    """
    response = HttpResponse(render_to_string(template_name), status=status)
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse(error_body("not_found", "No such endpoint."), status=404)
    return _error_page("404.html", 404)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse(error_body("forbidden", "Not allowed."), status=403)
    return _error_page("403.html", 403)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Answer a post Django's CSRF check refused: reload the page and try again.

    The reason is for developers and stays in the log Django writes.
    """
    if _wants_json(request):
        return JsonResponse(
            error_body("forbidden", "CSRF check failed; reload and try again."),
            status=403,
        )
    return _error_page("403_csrf.html", 403)


def unavailable(request: HttpRequest) -> HttpResponse:
    """Answer 503 with Retry-After: JSON on the API, a plain page elsewhere.

    The page is rendered without the request, so nothing on it (the
    logged-in user, the session) reaches for the database.
    """
    if _wants_json(request):
        body = error_body(
            DatabaseUnavailable.default_code, DatabaseUnavailable.default_detail
        )
        response: HttpResponse = JsonResponse(body, status=503)
    else:
        response = _error_page("503.html", 503)
    response["Retry-After"] = str(DatabaseUnavailable.wait)
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    # A database failure outside a view (in a middleware) arrives here.
    error = sys.exc_info()[1]
    if isinstance(error, DATABASE_ERRORS):
        database_unavailable(error)
        return unavailable(request)
    if _wants_json(request):
        return JsonResponse(
            error_body("server_error", "Something went wrong on our side."), status=500
        )
    return _error_page("500.html", 500)
