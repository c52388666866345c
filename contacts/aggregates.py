"""A contact's channels and addresses as JSON arrays within a query."""

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef
from django.db.models.functions import JSONObject

from contacts.models import Address, ContactChannel

ADDRESS_FIELDS = ("line1", "line2", "postcode", "city", "country")


def channels_array(kind: str | None = None) -> ArraySubquery:
    """Return the contact's channels, of one kind if given, as {kind, value, label}."""
    channels = ContactChannel.objects.filter(contact=OuterRef("pk")).order_by("pk")
    if kind:
        channels = channels.filter(kind=kind)
    return ArraySubquery(
        channels.values(json=JSONObject(kind="kind", value="value", label="label"))
    )


def addresses_array() -> ArraySubquery:
    """Return the contact's addresses as objects of kind and the ADDRESS_FIELDS."""
    return ArraySubquery(
        Address.objects.filter(contact=OuterRef("pk"))
        .order_by("pk")
        .values(
            json=JSONObject(kind="kind", **{field: field for field in ADDRESS_FIELDS})
        )
    )
