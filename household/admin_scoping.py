"""Scope Django admin to the household its logged-in household admin runs."""

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.admin.views.main import ERROR_FLAG, PAGE_VAR
from django.contrib.admin.widgets import AutocompleteSelect
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.db.models import UniqueConstraint
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from household.models import Household, Membership, Role
from yorik.admin_site import StrictChangeListAdmin

_REQUEST_CACHE = "_administered_household"


def administered_household(
    user: AbstractBaseUser | AnonymousUser,
) -> Household | None:
    """Return the household the user administers, or None."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return None
    membership = (
        Membership.objects.acting()
        .select_related("household")
        .filter(profile__user=user, role=Role.ADMIN)
        .first()
    )
    return membership.household if membership else None


def request_household(request: HttpRequest) -> Household | None:
    """Return the household the request's user administers, looked up once."""
    # An admin page asks every registered ModelAdmin for its permissions, so
    # the answer is kept on the request instead of queried dozens of times.
    if not hasattr(request, _REQUEST_CACHE):
        setattr(request, _REQUEST_CACHE, administered_household(request.user))
    return getattr(request, _REQUEST_CACHE)


def owns(request: HttpRequest, obj: models.Model | None) -> bool:
    """Return whether the request's user administers the household of obj."""
    household = request_household(request)
    if household is None:
        return False
    return obj is None or obj.household_id == household.pk


def scoped_choices(
    queryset: models.QuerySet, household: Household | None
) -> models.QuerySet:
    """Return the rows of queryset a household admin may pick from."""
    model = queryset.model
    if household is None:
        return queryset.none()
    if model is Household:
        return queryset.filter(pk=household.pk)
    try:
        model._meta.get_field("household")
    except FieldDoesNotExist:
        # A model without a household (e.g. auth users) is shared by every
        # tenant, so none of its rows is offered.
        return queryset.none()
    return queryset.filter(household=household)


class HouseholdScopedForm(forms.ModelForm):
    """A model form whose row gets its household from the admin, not the user."""

    household: Household | None = None

    def __init__(
        self, *args: Any, household: Household | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        household = household or self.household
        if household is not None:
            # Set before validation: the model's clean() reads the household's
            # phone region.
            self.instance.household = household

    def validate_unique(self) -> None:
        super().validate_unique()
        if "household" in self.fields or self.instance.household_id is None:
            return
        # The household is no field of this form, so Django skips every
        # (household, …) unique constraint; check them against the row's own.
        skipped = {name for name in self.fields if self.has_error(name)}
        for constraint in self.instance._meta.constraints:
            if not (
                isinstance(constraint, UniqueConstraint)
                and "household" in constraint.fields
            ):
                continue
            if skipped.intersection(constraint.fields) or any(
                name != "household" and name not in self.fields
                for name in constraint.fields
            ):
                continue
            try:
                constraint.validate(type(self.instance), self.instance)
            except ValidationError as error:
                self.add_error(None, error)


class HouseholdInlineFormSet(BaseInlineFormSet):
    """Inline rows that belong to their parent row's household."""

    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        kwargs = super().get_form_kwargs(index)
        if self.instance.household_id is not None:
            kwargs["household"] = self.instance.household
        return kwargs


class NamedAutocompleteSelect(AutocompleteSelect):
    """An autocomplete box whose empty state names what it is for.

    select2 shows the placeholder in the empty box and screen readers read
    it as the box's name; Django's own placeholder is empty.
    """

    def __init__(self, field: models.Field, admin_site: Any, *, name: str) -> None:
        super().__init__(field, admin_site)
        self.name = name

    def build_attrs(
        self, base_attrs: dict[str, Any], extra_attrs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        attrs = super().build_attrs(base_attrs, extra_attrs=extra_attrs)
        attrs["data-placeholder"] = str(self.name)
        return attrs


class AutocompleteFilter(admin.RelatedFieldListFilter):
    """Filter by a related row typed into a search box, not picked from a list.

    The box asks the related model's admin, with its search and its
    household, so the page stays one size however many rows could be picked.
    Its form keeps the list's other parameters.
    """

    template = "admin/autocomplete_filter.html"

    def __init__(
        self,
        field: models.Field,
        request: HttpRequest,
        params: dict[str, list[str]],
        model: type[models.Model],
        model_admin: admin.ModelAdmin,
        field_path: str,
    ) -> None:
        super().__init__(field, request, params, model, model_admin, field_path)
        rows = field.related_model._default_manager.all()
        if not request.user.is_superuser:
            rows = scoped_choices(rows, request_household(request))
        self.widget = NamedAutocompleteSelect(
            field, model_admin.admin_site, name=self.title
        )
        # The picked row is named from these rows only: another household's
        # id in the URL names nobody.
        self.widget.choices = forms.ModelChoiceField(queryset=rows).choices
        own = {*self.expected_parameters(), PAGE_VAR, ERROR_FLAG}
        self.kept_parameters = [
            (name, value)
            for name, values in request.GET.lists()
            if name not in own
            for value in values
        ]

    def field_choices(
        self, field: models.Field, request: HttpRequest, model_admin: admin.ModelAdmin
    ) -> list[tuple[Any, str]]:
        # The search box offers the rows; none is listed.
        return []

    def has_output(self) -> bool:
        return True

    def search_box(self) -> SafeString:
        """Return the search box, showing the row filtered by, if any."""
        picked = self.lookup_val[-1] if self.lookup_val else None
        return self.widget.render(self.lookup_kwarg, picked)


class HouseholdScopedAdmin(StrictChangeListAdmin):
    """Scope a ModelAdmin or inline to the household of its household admin.

    Superusers get Django's defaults and pick a new row's household. A household
    admin sees, adds, changes and deletes only their household's rows, never
    sees the household field, and is offered only their household's rows in
    foreign keys; no Django model permissions are needed. Any other staff user
    sees nothing. Change lists take only the filters they offer.
    """

    form = HouseholdScopedForm
    formset = HouseholdInlineFormSet

    @property
    def media(self) -> forms.Media:
        media = super().media
        # An autocomplete filter's search box needs the autocomplete scripts.
        for list_filter in getattr(self, "list_filter", ()):
            if isinstance(list_filter, list | tuple) and issubclass(
                list_filter[1], AutocompleteFilter
            ):
                field = get_fields_from_path(self.model, list_filter[0])[-1]
                media += AutocompleteSelect(field, self.admin_site).media
        return media

    def _is_inline(self) -> bool:
        return isinstance(self, admin.options.InlineModelAdmin)

    def get_queryset(self, request: HttpRequest) -> models.QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        household = request_household(request)
        if household is None:
            return queryset.none()
        return queryset.filter(household=household)

    def has_module_permission(self, request: HttpRequest) -> bool:
        if request.user.is_superuser:
            return super().has_module_permission(request)
        return request_household(request) is not None

    def has_view_permission(
        self, request: HttpRequest, obj: models.Model | None = None
    ) -> bool:
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return owns(request, obj)

    def has_add_permission(
        self, request: HttpRequest, obj: models.Model | None = None
    ) -> bool:
        # Inlines pass their parent row as obj; model admins pass nothing.
        if request.user.is_superuser:
            if self._is_inline():
                return super().has_add_permission(request, obj)
            return super().has_add_permission(request)
        return owns(request, obj)

    def has_change_permission(
        self, request: HttpRequest, obj: models.Model | None = None
    ) -> bool:
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return owns(request, obj)

    def has_delete_permission(
        self, request: HttpRequest, obj: models.Model | None = None
    ) -> bool:
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return owns(request, obj)

    def _hides_household(self, request: HttpRequest) -> bool:
        # Inline rows always take their parent's household.
        return self._is_inline() or not request.user.is_superuser

    def get_fieldsets(
        self, request: HttpRequest, obj: models.Model | None = None
    ) -> list[tuple[str | None, dict[str, Any]]]:
        fieldsets = super().get_fieldsets(request, obj)
        if not self._hides_household(request):
            return fieldsets
        return [
            (name, {**options, "fields": _without_household(options["fields"])})
            for name, options in fieldsets
        ]

    def get_readonly_fields(
        self, request: HttpRequest, obj: models.Model | None = None
    ) -> Sequence[str]:
        readonly = list(super().get_readonly_fields(request, obj))
        # A row never moves to another household: its inline rows, and
        # the rows pointing at it, would stay behind.
        if obj is not None and not self._is_inline() and "household" not in readonly:
            readonly.append("household")
        return readonly

    def get_form(
        self,
        request: HttpRequest,
        obj: models.Model | None = None,
        change: bool = False,
        **kwargs: Any,
    ) -> type[forms.ModelForm]:
        form = super().get_form(request, obj, change, **kwargs)
        if request.user.is_superuser:
            return form
        return type(form.__name__, (form,), {"household": request_household(request)})

    def save_model(
        self, request: HttpRequest, obj: models.Model, form: forms.Form, change: bool
    ) -> None:
        self.keep_in_household(request, obj)
        super().save_model(request, obj, form, change)

    def keep_in_household(self, request: HttpRequest, obj: models.Model) -> None:
        """Give a household admin's row their household, whatever was posted."""
        if not request.user.is_superuser:
            obj.household = request_household(request)

    def formfield_for_foreignkey(
        self, db_field: models.ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        if not request.user.is_superuser and "queryset" not in kwargs:
            kwargs["queryset"] = self._choices(db_field, request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(
        self, db_field: models.ManyToManyField, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        if not request.user.is_superuser and "queryset" not in kwargs:
            kwargs["queryset"] = self._choices(db_field, request)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def _choices(self, db_field: models.Field, request: HttpRequest) -> models.QuerySet:
        # The related admin's ordering, as Django's own choices would have.
        queryset = self.get_field_queryset(None, db_field, request)
        if queryset is None:
            queryset = db_field.remote_field.model._default_manager.all()
        return scoped_choices(queryset, request_household(request))

    def get_list_display(self, request: HttpRequest) -> Sequence[Any]:
        list_display = super().get_list_display(request)
        if request.user.is_superuser:
            return [*list_display, "household"]
        return list_display

    def get_list_filter(self, request: HttpRequest) -> Sequence[Any]:
        list_filter = super().get_list_filter(request)
        if request.user.is_superuser:
            return [*list_filter, "household"]
        return list_filter

    def get_list_select_related(self, request: HttpRequest) -> Any:
        select_related = super().get_list_select_related(request)
        if request.user.is_superuser and isinstance(select_related, list | tuple):
            return [*select_related, "household"]
        return select_related


def _without_household(fields: Sequence[Any]) -> list[Any]:
    """Return fieldset fields without household, also inside grouped rows."""
    kept: list[Any] = []
    for field in fields:
        if isinstance(field, list | tuple):
            row = [name for name in field if name != "household"]
            if row:
                kept.append(tuple(row))
        elif field != "household":
            kept.append(field)
    return kept
