"""The project's admin site, and the change-list rules every admin of it keeps.

The index lists a user's recent actions, with links, only when the user may
open some model of the site: a household admin who was offboarded stays
staff, may open nothing, and sees nothing of what they did.

Django's `/admin/r/<content_type>/<id>/` redirects any staff user to any
object's page, so its 302 or 404 would tell whether an id exists in another
household. Here it redirects only to objects the model's own admin shows the
user; every other object answers 404, the same as one that does not exist.

Django lets a change list's URL filter any field of the model by any lookup
(`?notes__regex=…`), and a search term of any length is repeated in every
link of the page. Every admin here derives from StrictChangeListAdmin, which
takes only the filters the admin offers and a short search, and answers
anything else with a 400 page before a row is read.
"""

import logging
from typing import Any

from django.contrib import admin
from django.contrib.admin.exceptions import (
    DisallowedModelAdminLookup,
    DisallowedModelAdminToField,
)
from django.contrib.admin.utils import get_fields_from_path, unquote
from django.contrib.admin.views.main import SEARCH_VAR, ChangeList
from django.contrib.contenttypes.models import ContentType
from django.contrib.contenttypes.views import shortcut
from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, URLResolver, path
from django.utils.translation import gettext, gettext_lazy

from yorik.tenancy import joins_apart

# The longest search a change list takes: each of its links repeats it.
MAX_SEARCH_LENGTH = 200
# What Django's field list filters put after a field's path: equality,
# null-ness, emptiness and a date range. Nothing that scans text.
FILTER_LOOKUPS = ("", "__exact", "__isnull", "__isempty", "__gte", "__lt")
# The date hierarchy's parts and their ranges. Its range for a year ends
# where the next year starts, and Python's dates end with year 9999.
DATE_PARTS = {"year": (1, 9998), "month": (1, 12), "day": (1, 31)}


class YorikAdminSite(admin.AdminSite):
    site_title = gettext_lazy("Yorik administration")
    site_header = gettext_lazy("Yorik administration")
    # Django's index, whose recent actions only users with a model to open see.
    index_template = "admin/site_index.html"

    def get_urls(self) -> list[URLPattern | URLResolver]:
        scoped = path(
            "r/<int:content_type_id>/<path:object_id>/",
            self.admin_view(self.view_on_site),
            name="view_on_site",
        )
        return [
            scoped if getattr(url, "name", None) == "view_on_site" else url
            for url in super().get_urls()
        ]

    def view_on_site(
        self, request: HttpRequest, content_type_id: int, object_id: str
    ) -> HttpResponse:
        """Redirect to the object's page if the user's admin of its model shows it."""
        content_type = ContentType.objects.filter(pk=content_type_id).first()
        model = content_type.model_class() if content_type else None
        model_admin = self._registry.get(model) if model else None
        obj = (
            model_admin.get_object(request, unquote(object_id)) if model_admin else None
        )
        if obj is None or not model_admin.has_view_or_change_permission(request, obj):
            raise Http404("No such object.")
        return shortcut(request, content_type_id, object_id)


class RefusedListQuery(BadRequest):
    """A change list was asked for a search it does not take."""


class RelationsApartChangeList(ChangeList):
    """A change list that joins only the related rows on its own side of the
    household line and reads the others in a statement each
    (yorik.tenancy.joins_apart)."""

    def apply_select_related(self, qs: QuerySet) -> QuerySet:
        if self.list_select_related is True or (
            self.list_select_related is False
            and self.has_related_field_in_list_display()
        ):
            paths = [
                field.name
                for field in self.model._meta.concrete_fields
                if field.many_to_one and not field.null
            ]
        else:
            paths = list(self.list_select_related or ())
        apart = [path for path in paths if joins_apart(self.model, path)]
        joined = [path for path in paths if path not in apart]
        # select_related() without a field would follow every relation.
        if joined:
            qs = qs.select_related(*joined)
        return qs.prefetch_related(*apart)


class StrictChangeListAdmin:
    """A ModelAdmin mixin: the change list takes only what the admin offers.

    A URL parameter is a filter only when one of the admin's list filters or
    its date hierarchy writes it, with a date part in range; a search has at
    most MAX_SEARCH_LENGTH characters. Anything else answers a 400 page that
    says so, before a row is read.
    """

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        hierarchy = self.date_hierarchy
        for part, (low, high) in DATE_PARTS.items():
            if hierarchy and lookup == f"{hierarchy}__{part}":
                return (
                    len(value) <= 4
                    and value.isascii()
                    and value.isdigit()
                    and low <= int(value) <= high
                )
        return lookup in self.filter_parameters(request)

    def filter_parameters(self, request: HttpRequest) -> set[str]:
        """Return the URL parameters the admin's list filters write."""
        parameters = set()
        for list_filter in self.get_list_filter(request):
            if isinstance(list_filter, type) and issubclass(
                list_filter, admin.SimpleListFilter
            ):
                parameters.add(list_filter.parameter_name)
                continue
            field_path = (
                list_filter[0] if isinstance(list_filter, list | tuple) else list_filter
            )
            parameters.update(field_path + lookup for lookup in FILTER_LOOKUPS)
            field = get_fields_from_path(self.model, field_path)[-1]
            if field.is_relation:
                # A relation's filter names the related row by its key.
                parameters.add(f"{field_path}__{field.target_field.name}__exact")
        return parameters

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return RelationsApartChangeList

    def get_changelist_instance(self, request: HttpRequest) -> ChangeList:
        if len(request.GET.get(SEARCH_VAR, "")) > MAX_SEARCH_LENGTH:
            raise RefusedListQuery(
                gettext("Search for at most %(count)d characters.")
                % {"count": MAX_SEARCH_LENGTH}
            )
        return super().get_changelist_instance(request)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            return super().changelist_view(request, extra_context)
        except RefusedListQuery as refused:
            reason = str(refused)
        except (DisallowedModelAdminLookup, DisallowedModelAdminToField) as refused:
            # Logged as Django logs a suspicious operation it answers itself.
            logging.getLogger(f"django.security.{type(refused).__name__}").error(
                str(refused), extra={"status_code": 400, "request": request}
            )
            reason = gettext("This list has no such filter.")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": gettext("Bad request"),
            "reason": reason,
        }
        return TemplateResponse(
            request, "admin/refused_list_query.html", context, status=400
        )
