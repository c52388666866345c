"""Export a household's address book as vCard 4.0 that the importer reads back.

Every contact but spam becomes one card, ordered by name. Labels that are a
vCard TYPE word in the household's language ("mobil" is `TYPE=cell`) are
written as that type; any other label goes into an item group's X-ABLabel,
as Apple and Google write it. Chat ids are IMPP URIs (an "other" channel
labelled with a chat service's name too), web addresses URL lines, other
channels X-YORIK-CHANNEL lines; a phone kept as written is written as it is.
Organization, job title, birthday and anniversary are ORG, TITLE, BDAY and
ANNIVERSARY; every address is an ADR with its PO box, extended address and
region, line 2 as the street's second line. vCard has no place for who a contact
is to the household nor for its status, so they travel as X-YORIK-RELATION
and X-YORIK-STATUS (RELATED would name another person, see
contacts.vcard.mapping). A contact without a vCard UID gets `yorik-<ref>`.
"""

from collections.abc import Iterator
from itertools import count
from typing import Any
from urllib.parse import quote

import vobject
from vobject.base import ContentLine
from vobject.vcard import Address as VCardAddress
from vobject.vcard import Name

from contacts.dates import day_for_vcard
from contacts.documents import document_children
from contacts.models import (
    ChannelKind,
    Contact,
    ContactChannel,
    ContactKind,
    ContactStatus,
)
from contacts.vcard.vocabulary import (
    CHAT_LABELS,
    CHAT_SERVICES,
    EXPORTED_ADDRESS_TYPES,
    EXPORTED_CHAT_SCHEMES,
    type_for_label,
)
from household.models import Household

# Characters a chat id keeps unescaped inside its IMPP URI.
_URI_SAFE = "@+.-_~!$&'()*=/"


def export_vcards(*, household: Household) -> str:
    """Return every contact of the household but spam as one vCard 4.0 text."""
    contacts = (
        Contact.objects.filter(household=household)
        .exclude(status=ContactStatus.SPAM)
        .order_by("sort_name", "pk")
        .prefetch_related(*document_children())
    )
    return "".join(_card(contact, language=household.language) for contact in contacts)


def contact_vcard(contact: Contact, *, language: str) -> str:
    """Return one contact as export_vcards writes it (children prefetched or not)."""
    return _card(contact, language=language)


class _CardWriter:
    """Collect a card's lines in the order they are added.

    vobject escapes and folds each line; its card serializer would sort the
    lines by name, which loses the order of the contact's channels.
    """

    def __init__(self) -> None:
        self.card = vobject.vCard()
        self.lines: list[ContentLine] = []

    def add(
        self, name: str, value: Any, /, *, group: str | None = None, **params: str
    ) -> None:
        line = self.card.add(name)
        line.value = value
        line.group = group
        for key, param in params.items():
            line.params[key.upper()] = [param]
        self.lines.append(line)

    def serialize(self) -> str:
        body = "".join(line.serialize() for line in self.lines)
        return f"BEGIN:VCARD\r\n{body}END:VCARD\r\n"


def _card(contact: Contact, *, language: str) -> str:
    card = _CardWriter()
    card.add("version", "4.0")
    card.add("uid", contact.vcard_uid or f"yorik-{contact.ref}")
    if contact.kind == ContactKind.BUSINESS:
        card.add("kind", "org")
    card.add("fn", contact.display_name)
    if contact.kind == ContactKind.PERSON or contact.first_name or contact.last_name:
        card.add("n", Name(family=contact.last_name, given=contact.first_name))
    organization = contact.organization
    if contact.kind == ContactKind.BUSINESS:
        organization = organization or contact.display_name
    if organization:
        card.add("org", [organization])
    if contact.kind == ContactKind.BUSINESS:
        # Apple Contacts reads 3.0 and knows companies by this line instead.
        card.add("x-abshowas", "COMPANY")
    if contact.title:
        card.add("title", contact.title)
    if contact.birthday:
        card.add("bday", day_for_vcard(contact.birthday))
    if contact.anniversary:
        card.add("anniversary", day_for_vcard(contact.anniversary))
    for alias in contact.aliases.all():
        card.add("nickname", alias.name)
    groups = count(1)
    for channel in contact.channels.all():
        _add_channel(card, channel, language=language, groups=groups)
    for url in contact.urls:
        card.add("url", url)
    for address in contact.addresses.all():
        street = "\n".join(line for line in (address.line1, address.line2) if line)
        card.add(
            "adr",
            VCardAddress(
                box=address.po_box,
                extended=address.extended,
                street=street,
                city=address.city,
                region=address.region,
                code=address.postcode,
                country=address.country,
            ),
            type=EXPORTED_ADDRESS_TYPES[address.kind],
        )
    if contact.tags:
        card.add("categories", list(contact.tags))
    if contact.notes:
        card.add("note", contact.notes)
    if contact.relation:
        card.add("x-yorik-relation", contact.relation)
    if contact.status != ContactStatus.ACTIVE:
        card.add("x-yorik-status", contact.status)
    return card.serialize()


def _add_channel(
    card: _CardWriter,
    channel: ContactChannel,
    *,
    language: str,
    groups: Iterator[int],
) -> None:
    name, value, default_label = _channel_line(channel)
    if channel.label == default_label:
        card.add(name, value, **_uri(channel))
        return
    vcard_type = type_for_label(channel.kind, channel.label, language)
    if vcard_type is not None:
        card.add(name, value, type=vcard_type, **_uri(channel))
        return
    # The importer reads an item group's label first, also an empty one.
    group = f"item{next(groups)}"
    card.add(name, value, group=group, **_uri(channel))
    card.add("x-ablabel", channel.label, group=group)


def _channel_line(channel: ContactChannel) -> tuple[str, str, str]:
    """Return the property, value and implied label a channel is written as."""
    if channel.kind == ChannelKind.PHONE:
        if channel.as_written:
            return "tel", channel.value, ""
        return "tel", f"tel:{channel.value}", ""
    if channel.kind == ChannelKind.EMAIL:
        return "email", channel.value, ""
    if channel.kind in EXPORTED_CHAT_SCHEMES:
        scheme = EXPORTED_CHAT_SCHEMES[channel.kind]
        uri = f"{scheme}:{quote(channel.value, safe=_URI_SAFE)}"
        return "impp", uri, CHAT_LABELS[channel.kind]
    if channel.label in CHAT_SERVICES:
        uri = f"{CHAT_SERVICES[channel.label]}:{quote(channel.value, safe=_URI_SAFE)}"
        return "impp", uri, channel.label
    return "x-yorik-channel", channel.value, ""


def _uri(channel: ContactChannel) -> dict[str, str]:
    if channel.kind == ChannelKind.PHONE and not channel.as_written:
        return {"value": "uri"}
    return {}
