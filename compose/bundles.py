"""The letter templates section of a household bundle.

One of the sections yorik.bundles composes (see yorik.bundles.Section).
"""

from typing import Any

from rest_framework import serializers

from compose.models import LetterTemplate, RecipientField
from household.bundles import duplicates, is_among, rows_of
from household.models import Household, Language
from yorik.serializers import StrictSerializer


class LetterTemplatePart(StrictSerializer):
    template_id = serializers.SlugField(max_length=100)
    title = serializers.CharField(max_length=200)
    language = serializers.ChoiceField(Language.choices, default=Language.GERMAN)
    body = serializers.CharField()
    recipient_fields = serializers.ListField(
        child=serializers.ChoiceField(RecipientField.choices), default=list
    )

    def validate_recipient_fields(self, value: list[str]) -> list[str]:
        if not {"line1", "city"} <= set(value):
            raise serializers.ValidationError("must include line1 and city")
        return value


def fields() -> dict[str, serializers.Field]:
    """Return new serializer fields for this section's keys."""
    return {"letter_templates": LetterTemplatePart(many=True, default=list)}


def problems(bundle: dict[str, Any], *, replace: bool) -> list[str]:
    """Return the problems that span rows: template ids listed twice."""
    template_ids = [
        template.get("template_id")
        for template in rows_of(bundle.get("letter_templates"))
    ]
    listed_twice = duplicates(template_ids)
    return [
        f"letter_templates[{index}].template_id: {template_id!r} is listed twice"
        for index, template_id in enumerate(template_ids)
        if is_among(template_id, listed_twice)
    ]


def import_rows(*, household: Household, data: dict[str, Any]) -> None:
    """Write the validated letter templates of a bundle."""
    LetterTemplate.objects.bulk_create(
        LetterTemplate(household=household, **template)
        for template in data["letter_templates"]
    )


def export_rows(*, household: Household) -> dict[str, Any]:
    """Return the letter templates as import_rows reads them."""
    return {
        "letter_templates": [
            {
                "template_id": t.template_id,
                "title": t.title,
                "language": t.language,
                "body": t.body,
                "recipient_fields": t.recipient_fields,
            }
            for t in household.letter_templates.order_by("pk")
        ]
    }
