"""Admin for the address book and the Paperless-ngx mirror."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from contacts.models import (
    Address,
    Contact,
    ContactAlias,
    ContactChannel,
    PaperlessCorrespondent,
    PaperlessDocument,
)
from contacts.selectors import CONTACT_COLUMNS
from contacts.services import refresh_search_columns
from contacts.vcard_import import ImportSummary, import_vcards
from contacts.vcards import VCardTooLarge, check_vcard_size
from household.admin_scoping import HouseholdScopedAdmin, request_household
from household.admin_search import EngineSearchAdmin
from household.models import Household
from people_search.engine.models import Subject

# Skipped cards listed one by one after an import; the rest are counted.
MAX_PROBLEM_MESSAGES = 20


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


class VCardImportForm(forms.Form):
    household = forms.ModelChoiceField(
        queryset=Household.objects.all(),
        label=_("household"),
        help_text=_("The household whose address book receives the contacts."),
    )
    file = forms.FileField(
        label=_("vCard file"),
        help_text=_(
            "A .vcf export of Google Contacts, Apple Contacts or an Android "
            "phone (vCard 2.1, 3.0 or 4.0). Cards imported before update their "
            "contacts instead of adding them twice."
        ),
    )
    dry_run = forms.BooleanField(
        label=_("dry run"),
        required=False,
        help_text=_("Only report what the import would do."),
    )

    def __init__(self, *args: Any, household: Household | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A household admin imports into their own household; only superusers
        # choose one.
        self.fixed_household = household
        if household is not None:
            del self.fields["household"]

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        try:
            check_vcard_size(upload.size)
        except VCardTooLarge as error:
            raise forms.ValidationError(str(error)) from error
        return upload

    def target_household(self) -> Household:
        return self.fixed_household or self.cleaned_data["household"]


@admin.register(Contact)
class ContactAdmin(HouseholdScopedAdmin, EngineSearchAdmin, admin.ModelAdmin):
    change_list_template = "admin/contacts/contact/change_list.html"
    list_display = [
        "display_name",
        "kind",
        "relation",
        "status",
        "last_contacted_at",
        "updated_at",
    ]
    list_filter = ["kind", "status", "last_contacted_at"]
    match_columns = CONTACT_COLUMNS
    match_subject = Subject.CONTACT
    search_help_text = _(
        "Names, aliases, relations in German or English (Oma, grandma, der "
        "Klempner), nicknames, emails or a phone number."
    )
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
        # The form and its inlines wrote names, aliases and channels; the
        # sort name and the folded columns the matching engine reads come
        # from the service every write of a contact ends in.
        refresh_search_columns(contact_ids=[form.instance.pk])

    def get_urls(self) -> list[URLPattern]:
        return [
            path(
                "import-vcard/",
                self.admin_site.admin_view(self.import_vcard_view),
                name="contacts_contact_import_vcard",
            ),
            *super().get_urls(),
        ]

    def import_vcard_view(self, request: HttpRequest) -> HttpResponse:
        """Import an uploaded vCard file and report what it did."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = VCardImportForm(
            request.POST or None,
            request.FILES or None,
            household=None if request.user.is_superuser else request_household(request),
        )
        if request.method == "POST" and form.is_valid():
            dry_run = form.cleaned_data["dry_run"]
            summary = import_vcards(
                household=form.target_household(),
                data=form.cleaned_data["file"].read(),
                dry_run=dry_run,
            )
            self._report_import(request, summary, dry_run=dry_run)
            # After a dry run the admin is one click from the real import.
            if dry_run:
                return redirect("admin:contacts_contact_import_vcard")
            return redirect("admin:contacts_contact_changelist")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Import vCard"),
            "form": form,
        }
        return TemplateResponse(
            request, "admin/contacts/contact/import_vcard.html", context
        )

    def _report_import(
        self, request: HttpRequest, summary: ImportSummary, *, dry_run: bool
    ) -> None:
        if dry_run:
            report = _("Dry run, nothing written: %(summary)s")
        else:
            report = _("Imported the vCard file: %(summary)s")
        level = messages.WARNING if summary.skipped else messages.SUCCESS
        self.message_user(request, report % {"summary": summary}, level)
        for problem in summary.problems[:MAX_PROBLEM_MESSAGES]:
            self.message_user(request, problem, messages.WARNING)
        if summary.skipped > MAX_PROBLEM_MESSAGES:
            more = summary.skipped - MAX_PROBLEM_MESSAGES
            self.message_user(
                request,
                ngettext(
                    "… and %(count)d more skipped card.",
                    "… and %(count)d more skipped cards.",
                    more,
                )
                % {"count": more},
                messages.WARNING,
            )


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
