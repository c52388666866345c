"""Pages: the cards the assistant emits, picking from them, and logging in."""

import math
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any
from urllib.parse import urlencode, urlsplit
from uuid import UUID

from django import forms
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve, reverse
from django.utils import translation
from django.utils.decorators import method_decorator
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from yorik.cards import (
    CardAnsweredMeanwhile,
    OpenedCard,
    PickRefused,
    card_language,
    closed_link,
    decline_card,
    open_card,
    pick_contact,
    pick_member,
)
from yorik.throttling import wait_for_address

# Pages load nothing but the app's own files; with no inline script allowed,
# markup smuggled into a name could not run even if it escaped escaping.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

View = Callable[..., HttpResponse]
StrOrPromise = str | Promise


def content_security_policy(view: View) -> View:
    """Send the pages' Content-Security-Policy with the view's responses."""

    @wraps(view)
    def protected(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response

    return protected


def personal_page(view: View) -> View:
    """Mark a page of a household's people: never cached, the pages' CSP."""
    return never_cache(content_security_policy(view))


def render_page(
    request: HttpRequest,
    template_name: str,
    context: dict[str, Any],
    *,
    language: str,
    status: int = 200,
) -> HttpResponse:
    """Render a page in the given language (the household's).

    A viewer's own preferred language, which household's
    ViewerLanguageMiddleware puts on the request, wins.
    """
    language = getattr(request, "preferred_language", "") or language
    with translation.override(language):
        response = render(request, template_name, context, status=status)
    response.headers["Content-Language"] = language
    return response


def explains_login(reason: StrOrPromise) -> Callable[[View], View]:
    """Give a members' page the sentence the login page says when it asks first.

    "Log in to see this contact." tells a visitor who tapped a row on a card
    why a login is asked for; after it, the login returns to the page.
    """

    def explained(view: View) -> View:
        view.login_reason = reason  # type: ignore[attr-defined]
        return view

    return explained


class PickForm(forms.Form):
    """One answer from a card's page: a contact, a household member, or none.

    `answers` is how many answers the card had when the page was shown.
    """

    contact_id = forms.IntegerField(required=False)
    user_id = forms.IntegerField(required=False)
    none_of_these = forms.BooleanField(required=False)
    answers = forms.IntegerField(required=False, min_value=0)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        chosen = [
            cleaned.get("contact_id") is not None,
            cleaned.get("user_id") is not None,
            bool(cleaned.get("none_of_these")),
        ]
        if sum(chosen) != 1:
            raise forms.ValidationError("Choose one row, or none of these.")
        return cleaned


def link_visits_throttled(view: View) -> View:
    """Limit visits without a login (through a card's link) per address.

    A link opens a card for anyone who has it, for a day; its pages are
    work for the database, so one address gets YORIK_CARD_LINK_RATE of them.
    Logged-in members are not counted. The refusal speaks the language of
    the card's household.
    """

    @wraps(view)
    def throttled(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            wait = wait_for_address(
                request, scope="card-link", rate=settings.YORIK_CARD_LINK_RATE
            )
            if wait is not None:
                # In the card's household's language: one indexed read, and
                # the refused visit does none of the card's own work.
                card_id = kwargs["card_id"]
                seconds = math.ceil(wait)
                response = render_page(
                    request,
                    "429.html",
                    {"seconds": seconds},
                    language=card_language(card_id) or translation.get_language(),
                    status=429,
                )
                response["Retry-After"] = str(seconds)
                return response
        return view(request, *args, **kwargs)

    return throttled


def _closed_card_page(request: HttpRequest, card_id: UUID, token: str) -> HttpResponse:
    """Answer 404 for a card link that opens nothing, saying why and what to do.

    In the card's household's language when the card is stored, else in the
    browser's. Nothing of the card is shown.
    """
    closed = closed_link(card_id=card_id, token=token, user=request.user)
    card_path = reverse("card", kwargs={"card_id": card_id})
    return render_page(
        request,
        "cards/closed.html",
        {
            "reason": closed.reason,
            "login_url": f"{reverse('login')}?{urlencode({'next': card_path})}",
        },
        language=closed.language or translation.get_language(),
        status=404,
    )


def _card_page(
    request: HttpRequest,
    opened: OpenedCard,
    *,
    token: str,
    error: str = "",
    status: int = 200,
    params: Mapping[str, str] | None = None,
) -> HttpResponse:
    card = opened.card
    # A visitor through the link who taps a row of a members' page logs in
    # first and comes back to the card (LoginView says why, from `for`).
    visitor = token and not request.user.is_authenticated
    context = {
        "card": card,
        "household": card.household,
        "token": token,
        "login_then_card": (
            f"{reverse('login')}?{urlencode({'next': card_url(card.pk, token)})}"
            if visitor
            else ""
        ),
        "error": error,
        **opened.context(request.GET if params is None else params),
    }
    return render_page(
        request,
        opened.card_type.template,
        context,
        language=card.household.language,
        status=status,
    )


@explains_login(gettext_lazy("Log in to open this card."))
@require_GET
@personal_page  # A card's link carries its token, and its pick state changes.
@link_visits_throttled
def card_page(request: HttpRequest, card_id: UUID) -> HttpResponse:
    token = request.GET.get("t", "")
    opened = open_card(card_id=card_id, user=request.user, token=token)
    if opened is None:
        return _closed_card_page(request, card_id, token)
    return _card_page(request, opened, token=token)


def card_url(card_id: UUID, token: str) -> str:
    """Return a card's path, with its link's token when the visitor came by it."""
    path = reverse("card", kwargs={"card_id": card_id})
    return f"{path}?{urlencode({'t': token}, safe=':')}" if token else path


@require_GET
@personal_page
@link_visits_throttled
def card_contact_page(
    request: HttpRequest, card_id: UUID, contact_id: int
) -> HttpResponse:
    """Show one contact of a card, read-only, to whoever may open the card.

    Through the card's signed link no login is needed; a contact the card
    does not list is not found.
    """
    token = request.GET.get("t", "")
    opened = open_card(card_id=card_id, user=request.user, token=token)
    if opened is None:
        return _closed_card_page(request, card_id, token)
    context = opened.contact_context(contact_id)
    if context is None:
        raise Http404("This card lists no such contact.")
    card = opened.card
    return render_page(
        request,
        opened.card_type.contact_template,
        {
            "card": card,
            "household": card.household,
            "card_url": card_url(card.pk, token),
            **context,
        },
        language=card.household.language,
    )


@require_POST
@personal_page
@link_visits_throttled
def pick_card(request: HttpRequest, card_id: UUID) -> HttpResponse:
    form = PickForm(request.POST)
    token = request.POST.get("t", "")
    opened = open_card(card_id=card_id, user=request.user, token=token)
    if opened is None:
        return _closed_card_page(request, card_id, token)
    card = opened.card
    if not form.is_valid():
        return _card_page(
            request, opened, token=token, error=PickRefused.message, status=400
        )
    answer, seen = form.cleaned_data, form.cleaned_data["answers"] or 0
    try:
        if answer["none_of_these"]:
            decline_card(card=card, seen=seen)
        elif answer["user_id"] is not None:
            pick_member(card=card, user_id=answer["user_id"], seen=seen)
        else:
            pick_contact(card=card, contact_id=answer["contact_id"], seen=seen)
    except CardAnsweredMeanwhile as refusal:
        # The page shows the card's answer now, ready to be changed again.
        return _card_page(
            request,
            opened,
            token=token,
            error=refusal.message,
            status=409,
            params={"change": "1"},
        )
    except PickRefused as refusal:
        return _card_page(
            request, opened, token=token, error=refusal.message, status=400
        )
    # Redirect after the POST, so reloading the confirmation posts nothing.
    query = f"?{urlencode({'t': token}, safe=':')}" if token else ""
    return redirect(f"{card.get_absolute_url()}{query}")


@method_decorator(content_security_policy, name="dispatch")
class LoginView(auth_views.LoginView):
    """Django's login, in the pages' layout: for every member, not only staff.

    When it was asked for by a page (`next`), it says why, in that page's
    words (explains_login), and returns there afterwards. A card's row sends
    a visitor here with `next` the card and `for` the page the row leads to:
    the words are that page's.
    """

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        shown = self.request.GET.get("for", "") or self.get_redirect_url()
        next_path = urlsplit(shown).path
        try:
            view = resolve(next_path).func if next_path else None
        except Resolver404:
            view = None
        context["login_reason"] = getattr(view, "login_reason", "")
        return context


@personal_page
def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """Answer a login that django-axes refuses after too many failed tries.

    Axes passes the refused response and the credentials; the page names
    neither the login nor how many tries were made.
    """
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    response = render(
        request,
        "registration/locked_out.html",
        {"minutes": max(1, math.ceil(seconds / 60))},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response
