"""A contact's addresses as a JSON array within a query."""

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef
from django.db.models.functions import JSONObject

from contacts.models import Address

# The postal fields the skills' specifications name, in a letter's order.
ADDRESS_FIELDS = ("line1", "line2", "postcode", "city", "country")
# Every field of an address: the postal ones, then what address books add.
ADDRESS_PARTS = (*ADDRESS_FIELDS, "po_box", "extended", "region")


def addresses_array(household_id: int) -> ArraySubquery:
    """Return the contact's addresses as objects of kind and the ADDRESS_PARTS.

    Several of one kind come in the order they were written (their ids'). The
    subquery names the household by its value, as every statement does: a
    household compared with the outer row's column would not tell Citus
    which shard the subquery reads.
    """
    return ArraySubquery(
        Address.objects.filter(household_id=household_id, contact=OuterRef("pk"))
        .order_by("pk")
        .values(
            json=JSONObject(kind="kind", **{field: field for field in ADDRESS_PARTS})
        )
    )
