"""Dashboard pages of the household: one member, and the leads list."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from household.models import Membership
from household.selectors import find_member, membership_for_user, visible_leads
from yorik.views import explains_login, personal_page, render_page

LEADS_PER_PAGE = 50


def _viewer(request: HttpRequest) -> Membership:
    membership = membership_for_user(request.user)
    if membership is None:
        raise PermissionDenied("You are not a member of a household.")
    return membership


@explains_login(_("Log in to see this member of the household."))
@require_GET
@login_required
@personal_page
def member_detail(request: HttpRequest, lang: str, membership_id: int) -> HttpResponse:
    viewer = _viewer(request)
    member = find_member(household=viewer.household, membership_id=membership_id)
    if member is None:
        raise Http404("No such member.")
    return render_page(
        request,
        "household/member_detail.html",
        {"household": viewer.household, "member": member, "lang": lang},
        language=lang,
    )


@explains_login(_("Log in to see the household's leads."))
@require_GET
@login_required
@personal_page
def lead_list(request: HttpRequest, lang: str) -> HttpResponse:
    viewer = _viewer(request)
    leads = visible_leads(actor=viewer).order_by("sort_name", "pk")
    highlighted = None
    page_number = request.GET.get("page")
    lead_id = request.GET.get("lead", "")
    # Only ASCII digits: "²".isdigit() is true, yet int("²") fails.
    if lead_id.isascii() and lead_id.isdigit():
        highlighted = leads.filter(pk=int(lead_id)).first()
        if highlighted is not None and page_number is None:
            # Open the page the highlighted lead is on.
            before = leads.filter(sort_name__lt=highlighted.sort_name).count()
            page_number = before // LEADS_PER_PAGE + 1
    owners = Prefetch("owner", Membership.objects.select_related("profile"))
    page = Paginator(leads.prefetch_related(owners), LEADS_PER_PAGE).get_page(
        page_number
    )
    return render_page(
        request,
        "household/lead_list.html",
        {
            "household": viewer.household,
            "page": page,
            "highlighted": highlighted,
            "lang": lang,
        },
        language=lang,
    )
