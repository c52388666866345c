"""Admin for the household's letter templates."""

from django import forms
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from compose.models import LetterTemplate, RecipientField
from household.admin_scoping import HouseholdScopedAdmin, HouseholdScopedForm


class LetterTemplateForm(HouseholdScopedForm):
    recipient_fields = forms.MultipleChoiceField(
        choices=RecipientField.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "Address fields the recipient block needs; always street and city."
        ),
    )

    class Meta:
        model = LetterTemplate
        # The admin passes its own field list; this is the household admin's.
        fields = ["title", "template_id", "language", "recipient_fields", "body"]


@admin.register(LetterTemplate)
class LetterTemplateAdmin(HouseholdScopedAdmin, admin.ModelAdmin):
    form = LetterTemplateForm
    list_display = ["title", "template_id", "language", "recipient_block"]
    list_filter = ["language"]
    search_fields = ["title", "template_id", "body"]
    prepopulated_fields = {"template_id": ["title"]}
    fields = [
        "household",
        "title",
        "template_id",
        "language",
        "recipient_fields",
        "body",
    ]

    @admin.display(description=_("recipient fields"))
    def recipient_block(self, template: LetterTemplate) -> str:
        return ", ".join(template.recipient_fields)
