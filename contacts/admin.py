"""Admin for the address book and the Paperless-ngx mirror."""

from django import forms
from django.contrib import admin
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest

from contacts.models import (
    Address,
    Contact,
    ContactAlias,
    ContactChannel,
    PaperlessCorrespondent,
    PaperlessDocument,
)
from contacts.services import refresh_search_columns
from household.admin_scoping import HouseholdScopedAdmin


class ContactAliasInline(HouseholdScopedAdmin, admin.TabularInline):
    model = ContactAlias
    fields = ["name"]
    extra = 1


class ContactChannelInline(HouseholdScopedAdmin, admin.TabularInline):
    model = ContactChannel
    fields = ["kind", "value", "label"]
    extra = 1


class AddressInline(HouseholdScopedAdmin, admin.StackedInline):
    model = Address
    fields = ["kind", ("line1", "line2"), ("postcode", "city"), "country"]
    extra = 0


@admin.register(Contact)
class ContactAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    list_display = [
        "display_name",
        "kind",
        "relation",
        "status",
        "last_contacted_at",
        "updated_at",
    ]
    list_filter = ["kind", "status", "last_contacted_at"]
    search_fields = [
        "display_name",
        "first_name",
        "last_name",
        "relation",
        "aliases__name",
        "channels__value",
    ]
    fields = [
        "household",
        "display_name",
        ("first_name", "last_name"),
        ("kind", "status"),
        "relation",
        "tags",
        "notes",
        "last_contacted_at",
        "ref",
    ]
    # The ref is the contact's identity in household bundles.
    readonly_fields = ["ref"]
    inlines = [ContactAliasInline, ContactChannelInline, AddressInline]

    def save_related(
        self,
        request: HttpRequest,
        form: forms.ModelForm,
        formsets: list[BaseInlineFormSet],
        change: bool,
    ) -> None:
        super().save_related(request, form, formsets, change)
        # Names, aliases and channels changed outside contacts.services; the
        # matching engine reads only the folded columns.
        refresh_search_columns(contact_ids=[form.instance.pk])


class PaperlessMirrorAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    """A read-only view of rows the Paperless-ngx sync writes."""

    def has_add_permission(self, request: HttpRequest, obj: None = None) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: object | None = None
    ) -> bool:
        return False


@admin.register(PaperlessCorrespondent)
class PaperlessCorrespondentAdmin(PaperlessMirrorAdmin):
    list_display = ["name", "paperless_id"]
    search_fields = ["name"]


@admin.register(PaperlessDocument)
class PaperlessDocumentAdmin(PaperlessMirrorAdmin):
    list_display = ["title", "correspondent", "created", "paperless_id"]
    list_filter = [("correspondent", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["title", "correspondent__name"]
    list_select_related = ["correspondent"]
    date_hierarchy = "created"
