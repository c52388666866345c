"""The labels of a letter's recipient fields, in the letter's language."""

from django.utils import translation
from django.utils.translation import pgettext_lazy

from compose.models import RecipientField

_LABELS = {
    RecipientField.LINE1: pgettext_lazy("postal address", "Street and number"),
    RecipientField.LINE2: pgettext_lazy("postal address", "Address line 2"),
    RecipientField.POSTCODE: pgettext_lazy("postal address", "Postcode"),
    RecipientField.CITY: pgettext_lazy("postal address", "City"),
    RecipientField.COUNTRY: pgettext_lazy("postal address", "Country"),
}


def recipient_field_label(field: str, *, language: str) -> str:
    """Return the label of an address field in the given language."""
    with translation.override(language):
        return str(_LABELS[field])
