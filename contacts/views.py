"""Pages of the address book: the searchable list and one contact."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from contacts.merging import survivor_ids
from contacts.selectors import find_contact, search_contacts, statuses_for
from household.models import Household
from household.selectors import membership_for_user
from people_search.engine.query import parse_query
from yorik.views import explains_login, personal_page, render_page

PAGE_SIZE = 25


class ContactFilterForm(forms.Form):
    q = forms.CharField(
        label=_("Search"),
        required=False,
        max_length=200,
        widget=forms.SearchInput(attrs={"autocomplete": "off"}),
    )
    status = forms.ChoiceField(
        label=_("Status"),
        required=False,
        choices=[
            ("any", _("Active and pending")),
            ("active", _("Active")),
            ("pending", _("Pending")),
            ("spam", _("Spam")),
            ("archived", _("Archived")),
        ],
    )
    kind = forms.ChoiceField(
        label=_("Kind"),
        required=False,
        choices=[
            ("", _("People and businesses")),
            ("person", _("People")),
            ("business", _("Businesses")),
        ],
    )


def _household(request: HttpRequest) -> Household:
    membership = membership_for_user(request.user)
    if membership is None:
        raise PermissionDenied("You are not a member of a household.")
    return membership.household


@explains_login(_("Log in to see the address book."))
@require_GET
@login_required
@personal_page
def contact_list(request: HttpRequest) -> HttpResponse:
    household = _household(request)
    form = ContactFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    contacts = search_contacts(
        household=household,
        query=parse_query(filters.get("q", ""), region=household.default_region),
        statuses=statuses_for(filters.get("status") or "any"),
        kind=filters.get("kind") or None,
    )
    page = Paginator(contacts, PAGE_SIZE).get_page(request.GET.get("page"))
    return render_page(
        request,
        "contacts/contact_list.html",
        {"household": household, "form": form, "page": page},
        language=household.language,
    )


@explains_login(_("Log in to see this contact."))
@require_GET
@login_required
@personal_page
def contact_detail(request: HttpRequest, contact_id: int) -> HttpResponse:
    household = _household(request)
    contact = find_contact(household=household, contact_id=contact_id)
    if contact is None:
        # A link to a contact merged away leads to the one it was merged into.
        survivor = survivor_ids(household=household, contact_ids=[contact_id])
        if contact_id in survivor:
            return redirect("contacts:detail", survivor[contact_id])
        raise Http404("No such contact.")
    return render_page(
        request,
        "contacts/contact_detail.html",
        {"household": household, "contact": contact},
        language=household.language,
    )
