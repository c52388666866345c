"""A contact's addresses as a JSON array within a query."""

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef
from django.db.models.functions import JSONObject

from contacts.models import Address

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
