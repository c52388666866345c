"""Skills for composing letters: compose_check_recipient."""

from dataclasses import asdict

from rest_framework import serializers

from compose.models import RecipientField
from compose.selectors import check_recipient
from household.callers import MemberCaller
from yorik.registry import Answer, skill
from yorik.serializers import StrictCharField, StrictIntegerField, StrictSerializer


class CheckRecipientInput(StrictSerializer):
    contact_id = StrictIntegerField(
        min_value=1,
        help_text="The contact id find_person returned (source 'contacts').",
    )
    template_id = StrictCharField(
        max_length=100,
        help_text=(
            "The id of the letter template being composed, e.g. "
            "'kuendigung-mietvertrag-de'."
        ),
    )


class RecipientAddressSerializer(serializers.Serializer):
    line1 = serializers.CharField(help_text="Street and number.")
    line2 = serializers.CharField(help_text="Extra line, e.g. floor or c/o.")
    postcode = serializers.CharField()
    city = serializers.CharField()
    country = serializers.CharField()
    po_box = serializers.CharField(
        help_text="PO box; a letter may go to it instead of the street."
    )
    extended = serializers.CharField(
        help_text="Apartment, floor or building, written above the street."
    )
    region = serializers.CharField(
        help_text="Region or state, written after the city where it is the custom."
    )


class MissingFieldSerializer(serializers.Serializer):
    key = serializers.ChoiceField(RecipientField.values)
    label = serializers.CharField(
        help_text="The field's name in the household's language."
    )
    required = serializers.BooleanField()


class CheckRecipientOutput(serializers.Serializer):
    complete = serializers.BooleanField(
        help_text=(
            "True when the chosen address has every field the template's "
            "recipient block needs: go on to compose_draft."
        )
    )
    address = RecipientAddressSerializer(
        allow_null=True,
        help_text=(
            "The contact's best postal address (home, then work, billing, "
            "shipping; a complete one wins over a more preferred partial one). "
            "null when the contact has no address at all."
        ),
    )
    missing = MissingFieldSerializer(
        many=True,
        help_text=(
            "The fields still to collect from the user, each with key, label "
            "and required; empty when complete."
        ),
    )
    contact_name = serializers.CharField(
        help_text="The contact's display name, for the next sentence to the user."
    )


@skill(
    name="compose_check_recipient",
    description=(
        "Check whether a contact's postal address has what a letter template's "
        "recipient block needs, and list what is missing."
    ),
    when_to_use="""\
Call once between find_person and compose_draft when the user wants a postal
letter written with a template:
  user: "schreib die Kündigung an die Hausverwaltung"
  find_person(query="Hausverwaltung", source="contacts") → one contact, id 42
  compose_check_recipient(contact_id=42, template_id="kuendigung-mietvertrag-de")
  - complete=true → call compose_draft with that template and contact;
  - complete=false → ask the user for each field in `missing` (use its label),
    then draft.
Never guess or invent an address in compose_draft; this check decides.
Not for email_draft or whatsapp_draft: those need an email address or chat id,
which find_person already returns.
Read only and cheap: one contact lookup and one template load.""",
    input_serializer=CheckRecipientInput,
    output_serializer=CheckRecipientOutput,
    cost="1 contact SELECT + 1 template SELECT",
    permissions=["admin", "member"],
    side_effects="none — read only",
    tags=["compose", "contacts", "address"],
)
def compose_check_recipient(
    caller: MemberCaller, *, contact_id: int, template_id: str
) -> Answer:
    result = check_recipient(
        household=caller.household, contact_id=contact_id, template_id=template_id
    )
    return Answer(asdict(result))
