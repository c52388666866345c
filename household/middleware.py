"""Speak to a logged-in person in their own language, else their household's."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation

from household.selectors import membership_for_user
from yorik.errors import DATABASE_ERRORS, database_unavailable, unavailable


class ViewerLanguageMiddleware:
    """Activate the language of the person behind the request.

    Runs after authentication and LocaleMiddleware. A person's preferred
    language (their profile's) is activated everywhere and kept on the request
    as `preferred_language`, which yorik.views.render_page lets win over a
    page's own language. A member without a preference gets their household's
    language everywhere: the admin, and the error pages (404, 403, a refused
    form), which yorik.errors renders in the active language without knowing
    of households. Anyone else, the login pages included, keeps what
    LocaleMiddleware read from Accept-Language (or the site default).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            language = self._language(request)
        except DATABASE_ERRORS as error:
            # Raised here, before any view, it would be a 500: answer as
            # yorik.middleware.DatabaseUnavailableMiddleware does for views.
            database_unavailable(error)
            return unavailable(request)
        if not language:
            return self.get_response(request)
        request.LANGUAGE_CODE = language
        # Overridden, not activated: the thread's next request starts afresh.
        with translation.override(language):
            response = self.get_response(request)
        response.headers.setdefault("Content-Language", language)
        return response

    def _language(self, request: HttpRequest) -> str:
        request.preferred_language = ""
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return ""
        membership = membership_for_user(user)
        if membership is None:
            return ""
        request.preferred_language = membership.profile.language
        return request.preferred_language or membership.household.language
