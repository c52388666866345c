"""Admin for households, their people, memberships, leads, events and API tokens."""

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from household.admin_scoping import (
    AutocompleteFilter,
    HouseholdScopedAdmin,
    HouseholdScopedForm,
    request_household,
)
from household.admin_search import EngineSearchAdmin
from household.models import (
    CalendarEvent,
    EventAttendee,
    Household,
    Lead,
    Membership,
    UserProfile,
)
from household.selectors import PERSON_COLUMNS
from household.services import (
    fold_event_titles,
    index_profile_names,
    save_lead,
    save_membership,
    save_profile,
)
from people_search.engine.phones import format_phone
from people_search.index.models import Subject
from yorik.admin_site import StrictChangeListAdmin
from yorik.models import ApiToken


@admin.register(Household)
class HouseholdAdmin(StrictChangeListAdmin, admin.ModelAdmin):
    """Superusers run every household; a household admin edits only their own."""

    list_display = ["name", "slug", "default_region", "language", "created_at"]
    list_filter = ["language", "default_region"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}

    def get_queryset(self, request: HttpRequest) -> models.QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        household = request_household(request)
        if household is None:
            return queryset.none()
        return queryset.filter(pk=household.pk)

    def _owns(self, request: HttpRequest, obj: Household | None) -> bool:
        household = request_household(request)
        return household is not None and (obj is None or obj.pk == household.pk)

    def has_module_permission(self, request: HttpRequest) -> bool:
        if request.user.is_superuser:
            return super().has_module_permission(request)
        return request_household(request) is not None

    def has_view_permission(
        self, request: HttpRequest, obj: Household | None = None
    ) -> bool:
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self._owns(request, obj)

    def has_change_permission(
        self, request: HttpRequest, obj: Household | None = None
    ) -> bool:
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self._owns(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)

    def has_delete_permission(
        self, request: HttpRequest, obj: Household | None = None
    ) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    def get_readonly_fields(
        self, request: HttpRequest, obj: Household | None = None
    ) -> Sequence[str]:
        if request.user.is_superuser:
            return super().get_readonly_fields(request, obj)
        # The slug names the household in bundles and URLs outside the admin.
        return [*super().get_readonly_fields(request, obj), "slug"]

    def get_prepopulated_fields(
        self, request: HttpRequest, obj: Household | None = None
    ) -> dict[str, Sequence[str]]:
        if request.user.is_superuser:
            return super().get_prepopulated_fields(request, obj)
        return {}


class MembershipInline(HouseholdScopedAdmin, admin.StackedInline):
    model = Membership
    fields = ["role", "status", "lead_access"]
    # A profile has one membership: the one in its own household.
    max_num = 1
    extra = 1


class NationalPhoneForm(HouseholdScopedForm):
    """Show the stored E.164 phone as the household writes it; saving normalises it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.phone and self.instance.household_id:
            self.initial["phone"] = format_phone(
                self.instance.phone, self.instance.household.default_region
            )


class PhoneColumnAdmin:
    """The row's phone as its household writes it: in the changelist and the form."""

    form = NationalPhoneForm

    def get_queryset(self, request: HttpRequest) -> models.QuerySet:
        # Read apart, not joined: on Citus the leads are on a worker and the
        # households on the coordinator (yorik.tenancy.joins_apart).
        return super().get_queryset(request).prefetch_related("household")

    @admin.display(description=_("phone"), ordering="phone")
    def phone_number(self, row: UserProfile | Lead) -> str:
        return format_phone(row.phone, row.household.default_region)


@admin.register(UserProfile)
class UserProfileAdmin(
    PhoneColumnAdmin, HouseholdScopedAdmin, EngineSearchAdmin, admin.ModelAdmin
):
    list_display = [
        "username",
        "first_name",
        "last_name",
        "email",
        "phone_number",
        "role",
        "user",
        "deleted_at",
    ]
    list_filter = [
        "memberships__role",
        "memberships__status",
        ("deleted_at", admin.EmptyFieldListFilter),
    ]
    match_columns = PERSON_COLUMNS
    also_search_fields = ("username",)
    search_help_text = _("Names, nicknames, email, phone number or login name.")
    list_select_related = ["user"]
    fields = [
        "household",
        "username",
        "first_name",
        "last_name",
        "email",
        "phone",
        "language",
        "user",
        "deleted_at",
        "created_at",
    ]
    readonly_fields = ["created_at"]
    inlines = [MembershipInline]

    def get_queryset(self, request: HttpRequest) -> models.QuerySet:
        return super().get_queryset(request).prefetch_related("memberships")

    def get_readonly_fields(
        self, request: HttpRequest, obj: UserProfile | None = None
    ) -> Sequence[str]:
        readonly = super().get_readonly_fields(request, obj)
        if request.user.is_superuser:
            return readonly
        # Logins are shared by the whole site; only superusers link them.
        return [*readonly, "user"]

    def save_model(
        self,
        request: HttpRequest,
        obj: UserProfile,
        form: forms.ModelForm,
        change: bool,
    ) -> None:
        self.keep_in_household(request, obj)
        save_profile(profile=obj)

    def save_related(
        self, request: HttpRequest, form: forms.ModelForm, formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        # The inline membership is saved after the profile, and its role decides
        # whether the name is embedded (children's never are).
        index_profile_names(
            household_id=form.instance.household_id, profile_id=form.instance.pk
        )

    @admin.display(description=_("role"))
    def role(self, profile: UserProfile) -> str:
        return ", ".join(
            membership.get_role_display()
            for membership in profile.memberships.all()
            if membership.household_id == profile.household_id
        )


@admin.register(Membership)
class MembershipAdmin(HouseholdScopedAdmin, EngineSearchAdmin, admin.ModelAdmin):
    list_display = ["profile", "role", "status", "lead_access", "created_at"]
    list_filter = ["role", "status", "lead_access"]
    match_columns = PERSON_COLUMNS.under("profile")
    match_subject = Subject.MEMBER
    also_search_fields = ("profile__username",)
    search_help_text = _("Names, nicknames, email, phone number or login name.")
    list_select_related = ["profile"]
    ordering = ["profile__sort_name", "pk"]
    fields = ["household", "profile", "role", "status", "lead_access"]

    def save_model(
        self,
        request: HttpRequest,
        obj: Membership,
        form: forms.ModelForm,
        change: bool,
    ) -> None:
        self.keep_in_household(request, obj)
        save_membership(membership=obj)


@admin.register(Lead)
class LeadAdmin(
    PhoneColumnAdmin, HouseholdScopedAdmin, EngineSearchAdmin, admin.ModelAdmin
):
    list_display = [
        "first_name",
        "last_name",
        "email",
        "phone_number",
        "status",
        "archived",
        "owner",
        "created_at",
    ]
    list_filter = ["status", "archived", ("owner", AutocompleteFilter)]
    match_columns = PERSON_COLUMNS
    match_subject = Subject.LEAD
    search_help_text = _("Names, nicknames, email or phone number.")
    list_select_related = ["owner__profile"]
    fields = [
        "household",
        "first_name",
        "last_name",
        "email",
        "phone",
        "status",
        "archived",
        "owner",
    ]

    def save_model(
        self, request: HttpRequest, obj: Lead, form: forms.ModelForm, change: bool
    ) -> None:
        self.keep_in_household(request, obj)
        save_lead(lead=obj)

    def formfield_for_foreignkey(
        self, db_field: models.ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "owner":
            # A membership's label is its profile's name.
            field.queryset = field.queryset.select_related("profile")
        return field


class EventAttendeeInline(HouseholdScopedAdmin, admin.TabularInline):
    model = EventAttendee
    fields = ["userprofile"]
    autocomplete_fields = ["userprofile"]
    extra = 1


@admin.register(CalendarEvent)
class CalendarEventAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    list_display = ["title", "starts_at", "ends_at", "location"]
    list_filter = [("attendees", AutocompleteFilter)]
    search_fields = ["title", "location"]
    date_hierarchy = "starts_at"
    fields = ["household", "title", "starts_at", "ends_at", "location"]
    inlines = [EventAttendeeInline]

    def save_model(
        self,
        request: HttpRequest,
        obj: CalendarEvent,
        form: forms.ModelForm,
        change: bool,
    ) -> None:
        super().save_model(request, obj, form, change)
        fold_event_titles(event_ids=[obj.pk])


@admin.register(ApiToken)
class ApiTokenAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    """List and revoke tokens; `manage.py issue_token` issues them."""

    list_display = [
        "prefix",
        "name",
        "profile",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "profile__username", "profile__last_name"]
    list_select_related = ["profile"]
    fields = [
        "household",
        "prefix",
        "name",
        "profile",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_readonly_fields(
        self, request: HttpRequest, obj: ApiToken | None = None
    ) -> Sequence[str]:
        # Only the label may change: a token is revoked through the action,
        # which dates the revocation, and never moves to another profile.
        return [
            *super().get_readonly_fields(request, obj),
            "prefix",
            "profile",
            "created_at",
            "last_used_at",
            "revoked_at",
        ]

    @admin.action(description=_("Revoke selected tokens"), permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: models.QuerySet[ApiToken]) -> None:
        revoked = queryset.filter(revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        self.message_user(
            request,
            ngettext("Revoked %(count)d token.", "Revoked %(count)d tokens.", revoked)
            % {"count": revoked},
            messages.SUCCESS,
        )
