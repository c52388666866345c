"""A contact whole: its addresses as a JSON array, or all of it as plain data."""

from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef
from django.db.models.functions import JSONObject

from contacts.models import Address, Contact

ADDRESS_FIELDS = ("line1", "line2", "postcode", "city", "country")


def addresses_array() -> ArraySubquery:
    """Return the contact's addresses as objects of kind and the ADDRESS_FIELDS.

    The subquery names the household too, as every statement does.
    """
    return ArraySubquery(
        Address.objects.filter(household=OuterRef("household"), contact=OuterRef("pk"))
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
