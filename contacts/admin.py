"""Admin for the address book and the Paperless-ngx mirror."""

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.postgres.forms import SimpleArrayField
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.forms.models import BaseInlineFormSet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.formats import date_format
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from contacts.carddav.accounts import account_password, check_account, store_account
from contacts.carddav.client import CardDavError
from contacts.carddav.credentials import UnreadableSecret
from contacts.carddav.sync import sync_carddav
from contacts.duplicates import propose_duplicates
from contacts.merging import (
    UNDO_WINDOW,
    FieldChoice,
    MergeRefused,
    contact_origin,
    dismiss_duplicate,
    field_label,
    merge_choices,
    merge_contacts,
    undo_merge,
    undoable_merge,
)
from contacts.models import (
    Address,
    CardDavAccount,
    ChannelKind,
    Contact,
    ContactAlias,
    ContactChannel,
    ContactMerge,
    PaperlessCorrespondent,
    PaperlessDocument,
)
from contacts.selectors import CONTACT_COLUMNS
from contacts.services import refresh_search_columns
from contacts.vcard.importer import (
    ImportSummary,
    VCardTooLarge,
    check_vcard_size,
    import_vcards,
)
from contacts.vcard.uploads import (
    KEPT_UPLOAD_LIFETIME,
    import_kept_upload,
    keep_upload,
    kept_upload,
)
from household.admin_scoping import (
    AutocompleteFilter,
    HouseholdInlineFormSet,
    HouseholdScopedAdmin,
    HouseholdScopedForm,
    request_household,
)
from household.admin_search import EngineSearchAdmin
from household.models import Household
from people_search.engine.phones import format_phone
from people_search.index.models import Subject

# Skipped cards and ignored values listed one by one after an import; the
# rest are counted.
MAX_PROBLEM_MESSAGES = 20
# Names a dry run lists under each heading, and an import's messages name;
# the rest are counted.
MAX_LISTED_NAMES = 200
# Proposals on one page of "Possible duplicates", and the most it lists: the
# surest, weighed from a few thousand candidates however large the book.
DUPLICATES_PAGE = 25
DUPLICATES_LISTED = 500
# The session key of the admin's last merge, offered for undoing.
UNDO_MERGE_KEY = "contacts.undo_merge"


class LabelledInlineFormSet(HouseholdInlineFormSet):
    """Name each row's delete box for screen readers, as its column does."""

    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        if "DELETE" in form.fields:
            form.fields["DELETE"].widget.attrs["aria-label"] = _("Delete")


class LabelledTabularInline(admin.TabularInline):
    """A tabular inline whose inputs are named for screen readers.

    A table row's inputs have only their column's header above them, which
    assistive technology does not tie to them: each carries its field's
    label as aria-label; LabelledInlineFormSet names the delete boxes.
    """

    def formfield_for_dbfield(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None:
            field.widget.attrs.setdefault("aria-label", capfirst(field.label))
        return field


class ContactAliasInline(HouseholdScopedAdmin, LabelledTabularInline):
    model = ContactAlias
    formset = LabelledInlineFormSet
    fields = ["name"]
    extra = 1


class ContactChannelForm(HouseholdScopedForm):
    """Show a stored E.164 phone as the household writes it; saving normalises it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        channel = self.instance
        if channel.pk and channel.kind == ChannelKind.PHONE and not channel.as_written:
            self.initial["value"] = format_phone(
                channel.value, channel.household.default_region
            )


class ContactChannelInline(HouseholdScopedAdmin, LabelledTabularInline):
    model = ContactChannel
    form = ContactChannelForm
    formset = LabelledInlineFormSet
    fields = ["kind", "value", "label", "as_written"]
    extra = 1


class AddressInline(HouseholdScopedAdmin, admin.StackedInline):
    model = Address
    fields = [
        "kind",
        ("line1", "line2"),
        ("extended", "po_box"),
        ("postcode", "city"),
        ("region", "country"),
    ]
    extra = 0


class LinesField(SimpleArrayField):
    """A list typed one item a line; blank lines are no items."""

    def __init__(self, base_field: forms.Field, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 3}))
        super().__init__(base_field, delimiter="\n", **kwargs)

    def to_python(self, value: Any) -> list[Any]:
        if isinstance(value, str):
            value = "\n".join(
                line.strip() for line in value.splitlines() if line.strip()
            )
        return super().to_python(value)


class VCardImportForm(forms.Form):
    household = forms.ModelChoiceField(
        queryset=Household.objects.all(),
        label=_("household"),
        help_text=_("The household whose address book receives the contacts."),
    )
    file = forms.FileField(
        label=_("vCard file"),
        help_text=_(
            "A .vcf export of a phone, Google Contacts, Apple Contacts or Outlook "
            "(vCard 2.1, 3.0 or 4.0). Cards imported before update their contacts "
            "instead of adding them twice; values that cannot be used are listed "
            "after the import."
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


class MergeForm(forms.Form):
    """Which contact survives, and for each field both fill, whose value wins."""

    SIDES = (("first", "first"), ("second", "second"))

    survivor = forms.ChoiceField(choices=SIDES, initial="first")

    def __init__(self, *args: Any, choices: list[FieldChoice], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = choices
        for choice in choices:
            if choice.differs:
                self.fields[choice.name] = forms.ChoiceField(
                    choices=self.SIDES, initial="first", required=False
                )

    def rows(self) -> list[tuple[FieldChoice, Any]]:
        """Return each field side by side, with its choice when both differ."""
        return [
            (choice, self[choice.name] if choice.name in self.fields else None)
            for choice in self.choices
        ]

    def survivor_and_merged(
        self, first: Contact, second: Contact
    ) -> tuple[Contact, Contact]:
        if self.cleaned_data["survivor"] == "second":
            return second, first
        return first, second

    def taken_from_merged(self) -> set[str]:
        """Return the fields whose chosen side is the contact merged away."""
        survivor = self.cleaned_data["survivor"]
        return {
            name
            for name, side in self.cleaned_data.items()
            if name != "survivor" and side and side != survivor
        }


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
        ("organization", "title"),
        ("birthday", "anniversary"),
        "urls",
        "tags",
        "notes",
        "last_contacted_at",
        "ref",
        "merged_contacts",
    ]
    # The ref is the contact's identity in household bundles.
    readonly_fields = ["ref", "merged_contacts"]
    inlines = [ContactAliasInline, ContactChannelInline, AddressInline]

    def formfield_for_dbfield(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        if db_field.name == "urls":
            return LinesField(
                forms.CharField(max_length=db_field.base_field.max_length),
                required=False,
                label=capfirst(db_field.verbose_name),
                help_text=db_field.help_text,
            )
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "last_contacted_at" and field is not None:
            # One label names two inputs: each says which half it is.
            date, time = field.widget.widgets
            label = capfirst(field.label)
            date.attrs["aria-label"] = _("%(field)s: date") % {"field": label}
            time.attrs["aria-label"] = _("%(field)s: time") % {"field": label}
        return field

    @admin.display(description=_("merged into this contact"))
    def merged_contacts(self, contact: Contact) -> str:
        """List the contacts merged into this one: who merged them, when, what."""
        merges = contact.merges.all() if contact.pk else []
        return (
            format_html_join(
                mark_safe("<br>"),
                "{} ({}), {}, {}; {}: {}",
                (
                    (
                        merge.display_name,
                        merge.ref,
                        merge.merged_by or "—",
                        date_format(
                            localtime(merge.merged_at), "SHORT_DATETIME_FORMAT"
                        ),
                        _("taken from it"),
                        _field_labels(merge.choices.get("taken_from_merged", [])),
                    )
                    for merge in merges
                ),
            )
            or "—"
        )

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
        refresh_search_columns(
            household_id=form.instance.household_id, contact_ids=[form.instance.pk]
        )

    def get_urls(self) -> list[URLPattern]:
        return [
            path(
                "import-vcard/",
                self.admin_site.admin_view(self.import_vcard_view),
                name="contacts_contact_import_vcard",
            ),
            path(
                "duplicates/",
                self.admin_site.admin_view(self.duplicates_view),
                name="contacts_contact_duplicates",
            ),
            path(
                "duplicates/<int:first_id>/<int:second_id>/",
                self.admin_site.admin_view(self.duplicate_pair_view),
                name="contacts_contact_duplicate_pair",
            ),
            path(
                "duplicates/undo/",
                self.admin_site.admin_view(self.undo_merge_view),
                name="contacts_contact_undo_merge",
            ),
            *super().get_urls(),
        ]

    def duplicates_view(self, request: HttpRequest) -> HttpResponse:
        """List the household's likely duplicate contacts, surest first."""
        if not self.has_change_permission(request):
            raise PermissionDenied
        household = self._duplicates_household(request)
        proposals = (
            propose_duplicates(household=household, limit=DUPLICATES_LISTED + 1)
            if household
            else []
        )
        listed = proposals[:DUPLICATES_LISTED]
        page = Paginator(listed, DUPLICATES_PAGE).get_page(request.GET.get("p"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Possible duplicates"),
            "household": household,
            "households": Household.objects.all() if request.user.is_superuser else [],
            "page": page,
            "more_than_listed": len(proposals) > len(listed),
            "undoable": self._undoable(request),
        }
        return TemplateResponse(
            request, "admin/contacts/contact/duplicates.html", context
        )

    def duplicate_pair_view(
        self, request: HttpRequest, first_id: int, second_id: int
    ) -> HttpResponse:
        """Show two contacts side by side; merge them, or say they differ."""
        contacts = (
            self.get_queryset(request)
            .filter(pk__in=[first_id, second_id])
            .prefetch_related("aliases", "channels", "addresses")
            .in_bulk()
        )
        first, second = contacts.get(first_id), contacts.get(second_id)
        if (
            first is None
            or second is None
            or first.pk == second.pk
            or first.household_id != second.household_id
        ):
            raise Http404(_("No such pair of contacts."))
        if not all(
            self.has_change_permission(request, c)
            and self.has_delete_permission(request, c)
            for c in (first, second)
        ):
            raise PermissionDenied
        choices = merge_choices(first, second)
        form = MergeForm(request.POST or None, choices=choices)
        confirming = False
        if request.method == "POST" and form.is_valid():
            if "dismiss" in request.POST:
                dismiss_duplicate(
                    first=first, second=second, dismissed_by=request.user.get_username()
                )
                self.message_user(
                    request,
                    _("“%(first)s” and “%(second)s” will not be proposed again.")
                    % {"first": first, "second": second},
                    messages.SUCCESS,
                )
                return redirect(self._duplicates_url(first))
            if "confirm" in request.POST:
                return self._merge(request, form, first, second)
            # The first click on "Merge" asks to confirm what will happen.
            confirming = "merge" in request.POST
        survivor, merged = (
            form.survivor_and_merged(first, second) if confirming else (first, second)
        )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Merge or keep apart"),
            "first": first,
            "second": second,
            "origins": [contact_origin(first), contact_origin(second)],
            "rows": form.rows(),
            "form": form,
            "household": first.household,
            "confirming": confirming,
            "survivor": survivor,
            "merged": merged,
            "taken": _field_labels(sorted(form.taken_from_merged()))
            if confirming
            else "",
            "undoable": self._undoable(request),
            "undo_minutes": int(UNDO_WINDOW.total_seconds() // 60),
        }
        return TemplateResponse(
            request, "admin/contacts/contact/duplicate_pair.html", context
        )

    def _merge(
        self, request: HttpRequest, form: "MergeForm", first: Contact, second: Contact
    ) -> HttpResponse:
        survivor, merged = form.survivor_and_merged(first, second)
        try:
            merge = merge_contacts(
                survivor=survivor,
                merged=merged,
                take_from_merged=form.taken_from_merged(),
                merged_by=request.user.get_username(),
            )
        except ValidationError as error:
            for message in error.messages:
                self.message_user(request, message, messages.ERROR)
            return redirect(request.path)
        taken = _field_labels(merge.choices["taken_from_merged"])
        self.log_change(
            request,
            survivor,
            _("Merged “%(name)s” (%(ref)s) into this contact; taken from it: %(taken)s")
            % {"name": merge.display_name, "ref": merge.ref, "taken": taken},
        )
        self.message_user(
            request,
            _("Merged “%(merged)s” into “%(survivor)s”.")
            % {"merged": merge.display_name, "survivor": survivor.display_name},
            messages.SUCCESS,
        )
        request.session[UNDO_MERGE_KEY] = merge.pk
        return redirect(self._next_pair_url(survivor))

    def undo_merge_view(self, request: HttpRequest) -> HttpResponse:
        """Undo the admin's own recent merge (POST `merge`): both as they were."""
        merge_id = request.POST.get("merge", "")
        if request.method != "POST" or not (merge_id.isascii() and merge_id.isdigit()):
            return redirect("admin:contacts_contact_duplicates")
        merge = undoable_merge(
            merge_id=int(merge_id), merged_by=request.user.get_username()
        )
        if (
            merge is None
            or not self.get_queryset(request).filter(pk=merge.survivor_id).exists()
            or not self.has_change_permission(request, merge.survivor)
        ):
            self.message_user(
                request,
                _("This merge can no longer be undone."),
                messages.ERROR,
            )
            return redirect("admin:contacts_contact_duplicates")
        try:
            survivor, restored = undo_merge(merge=merge)
        except MergeRefused as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return redirect("admin:contacts_contact_duplicates")
        request.session.pop(UNDO_MERGE_KEY, None)
        self.log_change(
            request,
            survivor,
            _("Undid the merge of “%(name)s” (%(ref)s) into this contact.")
            % {"name": restored.display_name, "ref": restored.ref},
        )
        self.message_user(
            request,
            _("“%(merged)s” and “%(survivor)s” are two contacts again.")
            % {"merged": restored.display_name, "survivor": survivor.display_name},
            messages.SUCCESS,
        )
        return redirect(
            "admin:contacts_contact_duplicate_pair", survivor.pk, restored.pk
        )

    def _undoable(self, request: HttpRequest) -> ContactMerge | None:
        """Return the admin's last merge while it may still be undone."""
        merge_id = request.session.get(UNDO_MERGE_KEY)
        if merge_id is None:
            return None
        return undoable_merge(merge_id=merge_id, merged_by=request.user.get_username())

    def _next_pair_url(self, contact: Contact) -> str:
        """Return the surest remaining pair of the household, or the list."""
        proposals = propose_duplicates(household=contact.household, limit=1)
        if not proposals:
            return self._duplicates_url(contact)
        pair = proposals[0]
        return reverse(
            "admin:contacts_contact_duplicate_pair",
            args=[pair.first.pk, pair.second.pk],
        )

    def _duplicates_household(self, request: HttpRequest) -> Household | None:
        if not request.user.is_superuser:
            return request_household(request)
        household_id = request.GET.get("household", "")
        if not (household_id.isascii() and household_id.isdigit()):
            return None
        return Household.objects.filter(pk=int(household_id)).first()

    def _duplicates_url(self, contact: Contact) -> str:
        url = reverse("admin:contacts_contact_duplicates")
        return f"{url}?household={contact.household_id}"

    def import_vcard_view(self, request: HttpRequest) -> HttpResponse:
        """Import an uploaded vCard file, or list what a dry run of it would do.

        A dry run keeps the file for the one click (`upload`, a signed token)
        that imports it; the import is written only when it changes exactly
        what the dry run listed.
        """
        if not self.has_add_permission(request):
            raise PermissionDenied
        household = None if request.user.is_superuser else request_household(request)
        if request.method == "POST" and "upload" in request.POST:
            return self._import_kept_upload(request, household=household)
        form = VCardImportForm(
            request.POST or None, request.FILES or None, household=household
        )
        if request.method == "POST" and form.is_valid():
            dry_run = form.cleaned_data["dry_run"]
            data = form.cleaned_data["file"].read()
            summary = import_vcards(
                household=form.target_household(),
                data=data,
                dry_run=dry_run,
                timeout=settings.YORIK_VCARD_IMPORT_TIMEOUT or None,
            )
            if dry_run and not summary.file_problem:
                token = keep_upload(
                    household=form.target_household(),
                    user=request.user,
                    data=data,
                    summary=summary,
                )
                return self._dry_run_page(request, summary, token=token)
            self._report_import(request, summary)
            if summary.file_problem:
                return redirect("admin:contacts_contact_import_vcard")
            return redirect("admin:contacts_contact_changelist")
        return self._import_page(request, {"form": form})

    def _import_kept_upload(
        self, request: HttpRequest, *, household: Household | None
    ) -> HttpResponse:
        upload = kept_upload(
            token=request.POST["upload"], user=request.user, household=household
        )
        summary = (
            import_kept_upload(
                upload=upload, timeout=settings.YORIK_VCARD_IMPORT_TIMEOUT or None
            )
            if upload is not None
            else None
        )
        if summary is None:
            self.message_user(
                request,
                _(
                    "This dry run has expired or cannot be imported from your "
                    "account. Please upload the file again."
                ),
                messages.ERROR,
            )
            return redirect("admin:contacts_contact_import_vcard")
        if summary.file_problem:
            self._report_import(request, summary)
            return redirect("admin:contacts_contact_import_vcard")
        if not summary.written:
            self.message_user(
                request,
                _(
                    "The address book has changed since the dry run, so nothing "
                    "was imported. Please check the list again."
                ),
                messages.WARNING,
            )
            token = keep_upload(
                household=upload.household,
                user=request.user,
                data=bytes(upload.data),
                summary=summary,
            )
            return self._dry_run_page(request, summary, token=token)
        self._report_import(request, summary)
        return redirect("admin:contacts_contact_changelist")

    def _dry_run_page(
        self, request: HttpRequest, summary: ImportSummary, *, token: str
    ) -> HttpResponse:
        """List what the import would do, with the button that imports the file."""
        listed = [
            (_("New contacts"), summary.created_names),
            (_("Updated contacts"), summary.updated_names),
            (_("Skipped cards"), summary.problems),
            (_("Ignored values"), summary.warnings),
        ]
        return self._import_page(
            request,
            {
                "summary": summary,
                "upload": token,
                "kept_minutes": int(KEPT_UPLOAD_LIFETIME.total_seconds() // 60),
                "listed": [
                    (heading, _capped(lines, MAX_LISTED_NAMES))
                    for heading, lines in listed
                    if lines
                ],
            },
        )

    def _import_page(
        self, request: HttpRequest, context: dict[str, Any]
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": _("Import vCard"),
            **context,
        }
        return TemplateResponse(
            request, "admin/contacts/contact/import_vcard.html", context
        )

    def _report_import(self, request: HttpRequest, summary: ImportSummary) -> None:
        """Say what an import did, naming the contacts it created and updated."""
        if summary.file_problem:
            self.message_user(
                request,
                _("%(problem)s Nothing was imported.")
                % {"problem": summary.file_problem},
                messages.ERROR,
            )
            return
        report = _("Imported the vCard file: %(summary)s")
        noted = summary.skipped or summary.warnings
        level = messages.WARNING if noted else messages.SUCCESS
        self.message_user(request, report % {"summary": summary}, level)
        for label, names in (
            (_("Created: %(names)s"), summary.created_names),
            (_("Updated: %(names)s"), summary.updated_names),
        ):
            if names:
                listed = ", ".join(_capped(names, MAX_LISTED_NAMES))
                self.message_user(request, label % {"names": listed}, messages.INFO)
        for lines, more_lines in (
            (summary.problems, _more_skipped_cards),
            (summary.warnings, _more_ignored_values),
        ):
            for line in lines[:MAX_PROBLEM_MESSAGES]:
                self.message_user(request, line, messages.WARNING)
            if len(lines) > MAX_PROBLEM_MESSAGES:
                more = len(lines) - MAX_PROBLEM_MESSAGES
                self.message_user(request, more_lines(more), messages.WARNING)


def _field_labels(names: list[str]) -> str:
    """Return merged fields by their names for people, or a dash for none."""
    return ", ".join(field_label(name) for name in names) or "—"


def _capped(lines: list[str], most: int) -> list[str]:
    """Return the first `most` lines, and a last one counting the rest."""
    more = len(lines) - most
    if more <= 0:
        return lines
    counted = ngettext("… and %(count)d more.", "… and %(count)d more.", more)
    return [*lines[:most], counted % {"count": more}]


def _more_skipped_cards(count: int) -> str:
    return ngettext(
        "… and %(count)d more skipped card.",
        "… and %(count)d more skipped cards.",
        count,
    ) % {"count": count}


def _more_ignored_values(count: int) -> str:
    return ngettext(
        "… and %(count)d more ignored value.",
        "… and %(count)d more ignored values.",
        count,
    ) % {"count": count}


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
    list_filter = [("correspondent", AutocompleteFilter)]
    search_fields = ["title", "correspondent__name"]
    list_select_related = ["correspondent"]
    date_hierarchy = "created"


class CardDavAccountForm(HouseholdScopedForm):
    """The account's fields and a password that is written, never shown."""

    url = forms.URLField(
        label="URL",
        max_length=1000,
        assume_scheme="https",
        validators=CardDavAccount._meta.get_field("url").validators,
        help_text=CardDavAccount._meta.get_field("url").help_text,
    )

    password = forms.CharField(
        label=_("Password"),
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text=_(
            "The account's password or app password. Stored encrypted and never "
            "shown again; leave empty to keep the stored one."
        ),
    )

    class Meta:
        model = CardDavAccount
        fields = ["household", "url", "username"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        household = cleaned.get("household") or self.instance.household
        others = CardDavAccount.objects.filter(household=household)
        if others.exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError(
                _("The household has a CardDAV account already; change that one.")
            )
        password = cleaned.get("password")
        # The stored password belongs to the stored URL and user: sent
        # anywhere else, it would reach whoever runs that server.
        moved = (cleaned["url"], cleaned["username"]) != (
            self.instance.url,
            self.instance.username,
        )
        if not password and self.instance.pk is not None and moved:
            raise forms.ValidationError(
                {
                    "password": _(
                        "Give the password again: the URL or the user name changed."
                    )
                }
            )
        if not password and self.instance.pk is not None:
            try:
                password = account_password(self.instance)
            except UnreadableSecret as error:
                raise forms.ValidationError(str(error)) from error
        if not password:
            raise forms.ValidationError({"password": _("Give the password.")})
        try:
            self.address_book = check_account(
                url=cleaned["url"], username=cleaned["username"], password=password
            )
        except CardDavError as error:
            raise forms.ValidationError(
                _("Nothing stored: %(error)s") % {"error": error}
            ) from error
        cleaned["password"] = password
        return cleaned


@admin.register(CardDavAccount)
class CardDavAccountAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    """A household's CardDAV account: checked on save, synced by an action."""

    form = CardDavAccountForm
    list_display = ["username", "url", "address_book_url", "last_synced_at"]
    fields = [
        "household",
        "url",
        "username",
        "password",
        "address_book_url",
        "vcard_version",
        "last_synced_at",
    ]
    readonly_fields = ["address_book_url", "vcard_version", "last_synced_at"]
    actions = ["sync_now"]

    def save_model(
        self,
        request: HttpRequest,
        obj: CardDavAccount,
        form: CardDavAccountForm,
        change: bool,
    ) -> None:
        self.keep_in_household(request, obj)
        store_account(
            account=obj,
            url=form.cleaned_data["url"],
            username=form.cleaned_data["username"],
            password=form.cleaned_data["password"],
            address_book=form.address_book,
        )

    @admin.action(description=_("Sync the selected accounts with their servers now"))
    def sync_now(self, request: HttpRequest, queryset: Any) -> None:
        for account in queryset.prefetch_related("household"):
            report = sync_carddav(account=account)
            where = account.household.name
            if report.error:
                self.message_user(
                    request,
                    _(
                        "%(household)s: the sync stopped (%(error)s); so far "
                        "%(report)s. Cards not done are unchanged; sync again to "
                        "resume."
                    )
                    % {"household": where, "error": report.error, "report": report},
                    messages.ERROR,
                )
            else:
                level = messages.WARNING if report.skipped else messages.SUCCESS
                self.message_user(request, f"{where}: {report}", level)
            lines = [
                _("Conflict, the server's value kept: %(conflict)s")
                % {"conflict": conflict}
                for conflict in report.conflicts
            ]
            lines += [
                _("Skipped %(problem)s") % {"problem": problem}
                for problem in report.skipped
            ]
            for line in _capped(lines, MAX_PROBLEM_MESSAGES):
                self.message_user(request, line, messages.WARNING)
