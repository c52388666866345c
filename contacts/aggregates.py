"""A contact whole: its channels and addresses as JSON arrays or plain data."""

from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef
from django.db.models.functions import JSONObject

from contacts.models import Address, Contact, ContactChannel

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


def contact_document(contact: Contact) -> dict[str, Any]:
    """Return a contact with its aliases, channels and addresses as plain data.

    Prefetch the children in id order; bundles and vCards both start from this.
    """
    return {
        "display_name": contact.display_name,
        "first_name": contact.first_name,
        "last_name": contact.last_name,
        "kind": contact.kind,
        "relation": contact.relation,
        "status": contact.status,
        "aliases": [alias.name for alias in contact.aliases.all()],
        "tags": list(contact.tags),
        "notes": contact.notes,
        "channels": [
            {"kind": c.kind, "value": c.value, "label": c.label}
            for c in contact.channels.all()
        ],
        "addresses": [
            {"kind": a.kind, **{field: getattr(a, field) for field in ADDRESS_FIELDS}}
            for a in contact.addresses.all()
        ],
    }
