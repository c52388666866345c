"""The address book's sections of a household bundle: contacts and the Paperless mirror.

One of the sections yorik.bundles composes (see yorik.bundles.Section).
"""

from collections.abc import Hashable
from typing import Any

from django.core.exceptions import ValidationError
from rest_framework import serializers

from contacts.dates import validate_day
from contacts.documents import contact_document, document_children
from contacts.merging import ADDRESS_CHOICES, CHOSEN_FIELDS
from contacts.models import (
    AddressKind,
    ChannelKind,
    Contact,
    ContactKind,
    ContactMerge,
    ContactStatus,
    DismissedDuplicate,
    PaperlessCorrespondent,
    PaperlessDocument,
    normalize_channel_value,
)
from contacts.paperless.client import Correspondent, Document
from contacts.paperless.sync import write_paperless_mirror
from contacts.services import create_contacts
from household.bundles import duplicates, is_among, rows_of, text, timestamp
from household.models import Household
from yorik.serializers import StrictSerializer


class ChannelPart(StrictSerializer):
    kind = serializers.ChoiceField(ChannelKind.choices)
    value = serializers.CharField(max_length=254)
    label = text(max_length=64)
    # A phone the phone library cannot read, kept as written; exported only
    # when true.
    as_written = serializers.BooleanField(default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # The household section's region (household.bundles.region_of).
        region = self.context.get("region")
        if region and not attrs["as_written"]:
            try:
                attrs["value"] = normalize_channel_value(
                    attrs["kind"], attrs["value"], region
                )
            except ValueError as error:
                raise serializers.ValidationError({"value": str(error)}) from error
        return attrs


class AddressPart(StrictSerializer):
    kind = serializers.ChoiceField(AddressKind.choices, default=AddressKind.HOME)
    line1 = text(max_length=200)
    line2 = text(max_length=200)
    postcode = text(max_length=20)
    city = text(max_length=100)
    country = text(max_length=100)
    po_box = text(max_length=100)
    extended = text(max_length=200)
    region = text(max_length=100)


class ContactPart(StrictSerializer):
    ref = serializers.CharField(max_length=64, required=False)
    display_name = serializers.CharField(max_length=300)
    first_name = text(max_length=150)
    last_name = text(max_length=150)
    kind = serializers.ChoiceField(ContactKind.choices, default=ContactKind.PERSON)
    relation = text(max_length=200)
    status = serializers.ChoiceField(
        ContactStatus.choices, default=ContactStatus.ACTIVE
    )
    aliases = serializers.ListField(
        child=serializers.CharField(max_length=200), default=list
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), default=list
    )
    notes = text()
    organization = text(max_length=300)
    title = text(max_length=200)
    birthday = text(max_length=10, validators=[validate_day])
    anniversary = text(max_length=10, validators=[validate_day])
    urls = serializers.ListField(
        child=serializers.CharField(max_length=1000), default=list
    )
    last_contacted_at = serializers.DateTimeField(allow_null=True, default=None)
    channels = ChannelPart(many=True, default=list)
    # Several of one kind keep their order.
    addresses = AddressPart(many=True, default=list)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if len(set(attrs["aliases"])) != len(attrs["aliases"]):
            raise serializers.ValidationError({"aliases": "an alias is listed twice"})
        return attrs


class ContactMergePart(StrictSerializer):
    survivor = serializers.CharField(max_length=64)
    ref = serializers.CharField(max_length=64)
    vcard_uid = text(max_length=255)
    display_name = serializers.CharField(max_length=300)
    merged_by = text(max_length=150)
    merged_at = serializers.DateTimeField()
    taken_from_merged = serializers.ListField(
        child=serializers.ChoiceField([*CHOSEN_FIELDS, *ADDRESS_CHOICES]),
        default=list,
    )


class DismissedDuplicatePart(StrictSerializer):
    contacts = serializers.ListField(
        child=serializers.CharField(max_length=64), min_length=2, max_length=2
    )
    dismissed_by = text(max_length=150)
    dismissed_at = serializers.DateTimeField()


class CorrespondentPart(StrictSerializer):
    id = serializers.IntegerField(min_value=1)
    name = serializers.CharField(max_length=300)


class DocumentPart(StrictSerializer):
    id = serializers.IntegerField(min_value=1)
    title = serializers.CharField(max_length=500)
    correspondent = serializers.IntegerField(allow_null=True, default=None)
    created = serializers.DateField(allow_null=True, default=None)


class PaperlessPart(StrictSerializer):
    correspondents = CorrespondentPart(many=True, default=list)
    documents = DocumentPart(many=True, default=list)


def fields() -> dict[str, serializers.Field]:
    """Return new serializer fields for this section's keys."""
    return {
        "contacts": ContactPart(many=True, default=list),
        "contact_merges": ContactMergePart(many=True, default=list),
        "dismissed_duplicates": DismissedDuplicatePart(many=True, default=list),
        "paperless": PaperlessPart(default=dict),
    }


def problems(bundle: dict[str, Any], *, replace: bool) -> list[str]:
    """Return the problems that span rows: duplicate ids, unknown correspondents."""
    found = []
    refs = [contact.get("ref") for contact in rows_of(bundle.get("contacts"))]
    refs_twice = duplicates(ref for ref in refs if ref is not None)
    for index, ref in enumerate(refs):
        if is_among(ref, refs_twice):
            found.append(f"contacts[{index}].ref: {ref!r} is listed twice")

    found += _merge_problems(bundle, refs)

    paperless = bundle.get("paperless")
    if not isinstance(paperless, dict):
        paperless = {}
    correspondent_ids = [
        correspondent.get("id")
        for correspondent in rows_of(paperless.get("correspondents"))
    ]
    correspondents_twice = duplicates(correspondent_ids)
    for index, correspondent_id in enumerate(correspondent_ids):
        if is_among(correspondent_id, correspondents_twice):
            found.append(
                f"paperless.correspondents[{index}].id: "
                f"{correspondent_id} is listed twice"
            )
    known_correspondents = {i for i in correspondent_ids if isinstance(i, Hashable)}
    documents = rows_of(paperless.get("documents"))
    documents_twice = duplicates(document.get("id") for document in documents)
    for index, document in enumerate(documents):
        document_id = document.get("id")
        if is_among(document_id, documents_twice):
            found.append(
                f"paperless.documents[{index}].id: {document_id} is listed twice"
            )
        correspondent = document.get("correspondent")
        if correspondent is not None and not is_among(
            correspondent, known_correspondents
        ):
            found.append(
                f"paperless.documents[{index}].correspondent: "
                f"no correspondent {correspondent}"
            )
    return found


def _merge_problems(bundle: dict[str, Any], refs: list[Any]) -> list[str]:
    """Return merges and dismissals naming no contact, and merged contacts listed.

    A contact row whose ref was merged into another is the duplicate the merge
    removed; it is reported rather than created again.
    """
    found = []
    known = {ref for ref in refs if isinstance(ref, Hashable)}
    merges = rows_of(bundle.get("contact_merges"))
    merged_refs = [merge.get("ref") for merge in merges]
    merged_twice = duplicates(merged_refs)
    for index, merge in enumerate(merges):
        survivor, ref = merge.get("survivor"), merge.get("ref")
        if survivor is not None and not is_among(survivor, known):
            found.append(
                f"contact_merges[{index}].survivor: no contact {survivor!r} in contacts"
            )
        if is_among(ref, merged_twice):
            found.append(f"contact_merges[{index}].ref: {ref!r} is listed twice")
    merged_into = {
        merge.get("ref"): merge.get("survivor")
        for merge in merges
        if isinstance(merge.get("ref"), Hashable)
    }
    for index, ref in enumerate(refs):
        if is_among(ref, set(merged_into)):
            found.append(
                f"contacts[{index}].ref: {ref!r} was merged into "
                f"{merged_into[ref]!r}; leave it out or drop the merge"
            )
    for index, dismissal in enumerate(rows_of(bundle.get("dismissed_duplicates"))):
        pair = dismissal.get("contacts")
        if not isinstance(pair, list):
            continue
        for position, ref in enumerate(pair):
            if ref is not None and not is_among(ref, known):
                found.append(
                    f"dismissed_duplicates[{index}].contacts[{position}]: "
                    f"no contact {ref!r} in contacts"
                )
        if len(pair) == 2 and pair[0] == pair[1]:
            found.append(
                f"dismissed_duplicates[{index}].contacts: a contact is no "
                "duplicate of itself"
            )
    return found


def import_rows(*, household: Household, data: dict[str, Any]) -> None:
    """Write the validated contacts and Paperless rows of a bundle.

    Raise a ValidationError keyed by JSON path (`contacts[3].channels[0].value`)
    for a row the serializers let through but the model refuses.
    """
    try:
        create_contacts(household=household, rows=data["contacts"])
    except ValidationError as error:
        raise ValidationError(
            {
                f"contacts{path}": messages
                for path, messages in error.message_dict.items()
            }
        ) from error

    write_merges(
        household=household,
        merges=data["contact_merges"],
        dismissals=data["dismissed_duplicates"],
    )

    paperless = data["paperless"]
    write_paperless_mirror(
        household=household,
        correspondents=[
            Correspondent(paperless_id=row["id"], name=row["name"])
            for row in paperless.get("correspondents", [])
        ],
        documents=[
            Document(
                paperless_id=row["id"],
                title=row["title"],
                correspondent_id=row["correspondent"],
                created=row["created"],
            )
            for row in paperless.get("documents", [])
        ],
    )


def export_rows(*, household: Household) -> dict[str, Any]:
    """Return the contacts and Paperless rows as import_rows reads them."""
    contacts = [
        {
            "ref": contact.ref,
            **contact_document(contact),
            "last_contacted_at": timestamp(contact.last_contacted_at),
        }
        for contact in Contact.objects.filter(household=household)
        .order_by("pk")
        .prefetch_related(*document_children())
    ]
    return {
        "contacts": contacts,
        **export_merges(household=household),
        "paperless": {
            "correspondents": [
                {"id": c.paperless_id, "name": c.name}
                for c in PaperlessCorrespondent.objects.filter(
                    household=household
                ).order_by("paperless_id")
            ],
            "documents": [
                {
                    "id": d.paperless_id,
                    "title": d.title,
                    "correspondent": d.correspondent.paperless_id
                    if d.correspondent
                    else None,
                    "created": d.created.isoformat() if d.created else None,
                }
                for d in PaperlessDocument.objects.filter(household=household)
                .select_related("correspondent")
                .order_by("paperless_id")
            ],
        },
    }


def write_merges(
    *,
    household: Household,
    merges: list[dict[str, Any]],
    dismissals: list[dict[str, Any]],
) -> None:
    """Write a bundle's merge records and dismissed pairs, naming contacts by ref."""
    contact_ids = dict(
        Contact.objects.filter(household=household).values_list("ref", "pk")
    )
    ContactMerge.objects.bulk_create(
        ContactMerge(
            household=household,
            survivor_id=contact_ids[merge["survivor"]],
            ref=merge["ref"],
            vcard_uid=merge["vcard_uid"],
            display_name=merge["display_name"],
            merged_by=merge["merged_by"],
            merged_at=merge["merged_at"],
            choices={"taken_from_merged": merge["taken_from_merged"]},
        )
        for merge in merges
    )
    pairs = {}
    for dismissal in dismissals:
        first, second = sorted(contact_ids[ref] for ref in dismissal["contacts"])
        pairs[first, second] = DismissedDuplicate(
            household=household,
            first_id=first,
            second_id=second,
            dismissed_by=dismissal["dismissed_by"],
            dismissed_at=dismissal["dismissed_at"],
        )
    DismissedDuplicate.objects.bulk_create(pairs.values())


def export_merges(*, household: Household) -> dict[str, Any]:
    """Return the merge records and dismissed pairs as write_merges reads them."""
    return {
        "contact_merges": [
            {
                "survivor": merge.survivor.ref,
                "ref": merge.ref,
                "vcard_uid": merge.vcard_uid,
                "display_name": merge.display_name,
                "merged_by": merge.merged_by,
                "merged_at": timestamp(merge.merged_at),
                "taken_from_merged": merge.choices.get("taken_from_merged", []),
            }
            for merge in ContactMerge.objects.filter(household=household)
            .select_related("survivor")
            .order_by("merged_at", "pk")
        ],
        "dismissed_duplicates": [
            {
                "contacts": [dismissal.first.ref, dismissal.second.ref],
                "dismissed_by": dismissal.dismissed_by,
                "dismissed_at": timestamp(dismissal.dismissed_at),
            }
            for dismissal in DismissedDuplicate.objects.filter(household=household)
            .select_related("first", "second")
            .order_by("pk")
        ],
    }
