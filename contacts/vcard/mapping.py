"""Map a vCard's properties onto a contact's fields, as the importer writes them.

FN (else N) is the display name, N the first and last name; a company's card
becomes a business. ORG and TITLE give the organization and job title, BDAY
and ANNIVERSARY the days, URL the web addresses. NICKNAME gives aliases, TEL,
EMAIL, IMPP and the chat properties channels with their labels, every ADR an
address, CATEGORIES tags, NOTE the notes, UID the card's identity; relation
lines give other cards of the file their relation. A card's phone numbers are
read in the country its addresses name, else in the household's region; one
that cannot be read but has its digits is kept as written. Whatever else a
card holds is named in its report (docs/integrations.md, "vCard import and
export").
"""

import re
from collections import defaultdict
from dataclasses import dataclass, field
from email.utils import parseaddr
from typing import Any
from urllib.parse import unquote

from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from vobject.base import ContentLine
from vobject.icalendar import stringToTextValues

from contacts.dates import day_from_vcard
from contacts.models import (
    AddressKind,
    ChannelKind,
    Contact,
    ContactKind,
    normalize_channel_value,
)
from contacts.vcard.countries import region_for_country
from contacts.vcard.reader import (
    RawCard,
    parse_card,
    split_cards,
    structured_value,
    text_value,
    type_words,
)
from contacts.vcard.vocabulary import (
    ADDRESS_TYPES,
    ANDROID_EVENT_TYPES,
    ANDROID_RELATION_TYPES,
    ANNIVERSARY_PROPERTIES,
    CHAT_LABELS,
    CHAT_PROPERTIES,
    CHAT_SCHEMES,
    CHAT_SERVICE_NAMES,
    DIALLING_LABELS,
    IGNORED_RELATION_TYPES,
    SYSTEM_CATEGORIES,
    UNREPORTED_PROPERTIES,
    WEBSITE_LABEL,
    apple_label_word,
    label_for_ablabel,
    label_for_types,
    relation_for_word,
)
from household.models import Household
from people_search.engine.phones import (
    DialledNumber,
    InvalidPhoneNumber,
    is_written_phone,
    parse_dialled_phone,
)
from people_search.engine.text import fold_name

_URI_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
# URI schemes of addresses that are called but are no phone numbers.
_ADDRESS_SCHEMES = frozenset({"sip", "sips", "h323", "xmpp", "callto", "skype"})
# The days a contact keeps, by the field and its vCard property.
_DAY_PROPERTIES = {"birthday": "BDAY", "anniversary": "ANNIVERSARY"}
# TYPE words of a web address that say nothing a person named.
_URL_TYPES = frozenset({"pref", "internet", "x-internet", "homepage", "home-page"})


@dataclass
class Card:
    """A card read into the fields and children create_contact takes."""

    number: int
    name: str
    contact: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # Values and lines dropped from a card that is kept.
    dropped: list[str] = field(default_factory=list)
    # The properties of a kept card that Yorik has no place for.
    not_kept: list[str] = field(default_factory=list)
    # False when the display name stands in for a name the card lacks.
    named: bool = True
    # (value, relation text) of the card's relation lines: the value names
    # the related person, the text says who that person is.
    related: list[tuple[str, str]] = field(default_factory=list)

    def report(self, problem: str) -> str:
        if self.name:
            return _("card %(number)d (%(name)s): %(problem)s") % {
                "number": self.number,
                "name": self.name,
                "problem": problem,
            }
        return _("card %(number)d: %(problem)s") % {
            "number": self.number,
            "problem": problem,
        }


def read_card(raw: RawCard, *, region: str, language: str, encoding: str = "") -> Card:
    """Return the card's contact data, or its problems.

    `encoding` is the file's, for quoted-printable values that name no
    charset (contacts.vcard.reader.decode).
    """
    parsed = parse_card(raw, encoding=encoding)
    if parsed.problem:
        name = parsed.name[: Contact.display_name.field.max_length]
        return Card(raw.number, name, problems=[parsed.problem])
    card = _CardReader(raw.number, region, language).read(parsed.lines)
    card.dropped[:0] = parsed.dropped
    if parsed.binaries:
        card.not_kept[:0] = parsed.binaries
    if card.not_kept:
        card.dropped.append(
            _("not kept: %(properties)s")
            % {"properties": ", ".join(dict.fromkeys(card.not_kept))}
        )
    return card


class _CardReader:
    """Read one parsed card's lines into contact data."""

    def __init__(self, number: int, region: str, language: str) -> None:
        # The household's region; `region` becomes the card's country when
        # its addresses name one.
        self.household_region = region
        self.region = region
        self.language = language
        self.card = Card(number, "")
        self.fn = ""
        self.name = ["", "", ""]  # family, given, additional
        self.org = ""
        self.kind = ""
        # The organization with its units, the job title and the days, as
        # the card first gives them.
        self.organization = ""
        self.title = ""
        self.days: dict[str, str] = {}
        self.urls: list[str] = []
        self.aliases: list[str] = []
        self.tags: list[str] = []
        self.notes: list[str] = []
        # By kind and value, so that a card of thousands of channels finds
        # its twins at once; in the card's order.
        self.channels: dict[tuple[str, str], dict[str, str]] = {}
        # Each channel as the card writes it, to name a card without a name.
        self.channel_texts: list[str] = []
        # (kind or None when the type is unknown, address, its label)
        self.addresses: list[tuple[str | None, dict[str, str], str]] = []
        self.labels: dict[str, str] = {}
        self.fields: dict[str, str] = {"relation": "", "status": "", "vcard_uid": ""}

    def read(self, lines: list[ContentLine]) -> Card:
        self.labels = {
            line.group.lower(): text_value(line.value)
            for line in lines
            if line.group and line.name == "X-ABLABEL"
        }
        # The addresses first: their country is where the phones are read.
        for line in lines:
            if line.name == "ADR":
                self._read_adr(line)
        self.region = self._card_region(lines) or self.household_region
        for line in lines:
            if line.name in CHAT_PROPERTIES:
                self._read_chat_property(line)
            elif line.name in ANNIVERSARY_PROPERTIES:
                self._read_day("anniversary", line)
            elif line.name in self._READERS:
                self._READERS[line.name](self, line)
            elif line.name not in UNREPORTED_PROPERTIES and line.name != "ADR":
                self.card.not_kept.append(line.name)
        return self._finish()

    def _card_region(self, lines: list[ContentLine]) -> str | None:
        """Return the one country the card's addresses name, or None.

        Apple writes each address's country code in its item group's
        X-ABADR line; other programs write the country's name.
        """
        regions = {
            region_for_country(address["country"], language=self.language)
            for _kind, address, _label in self.addresses
            if address["country"]
        }
        regions |= {
            region_for_country(text_value(line.value), language=self.language)
            for line in lines
            if line.name == "X-ABADR" and text_value(line.value)
        }
        regions.discard(None)
        return regions.pop() if len(regions) == 1 else None

    def _label(self, line: ContentLine) -> str | None:
        """Return the line's item-group label, or None when it has none."""
        if not line.group or line.group.lower() not in self.labels:
            return None
        return label_for_ablabel(self.labels[line.group.lower()], self.language)

    def _add_channel(
        self,
        kind: str,
        value: str,
        label: str,
        written: str = "",
        prop: str = "",
        *,
        as_written: bool = False,
    ) -> None:
        """Add a channel; one the card has already keeps its first label.

        A second label that would be lost, such as another extension of the
        same number, is reported.
        """
        if not value:
            return
        twin = self.channels.get((kind, value))
        if twin is None:
            channel: dict[str, Any] = {"kind": kind, "value": value, "label": label}
            if as_written:
                channel["as_written"] = True
            self.channels[kind, value] = channel
            self.channel_texts.append(written or value)
        elif label and label != twin["label"] and prop:
            self.card.dropped.append(
                _("%(property)s %(written)s ignored: the card has %(value)s already")
                % {"property": prop, "written": repr(written), "value": value}
            )

    def _read_fn(self, line: ContentLine) -> None:
        self.fn = self.fn or text_value(line.value)

    def _read_n(self, line: ContentLine) -> None:
        self.name = structured_value(line.value, 3)

    def _read_org(self, line: ContentLine) -> None:
        # A department or unit goes with its organization: "Charité, Kardiologie";
        # a business without a name is named after the organization alone.
        units = [unit for unit in structured_value(line.value, 8) if unit]
        self._read_once("organization", line, ", ".join(units))
        self.org = self.org or next(iter(units), "")

    def _read_title(self, line: ContentLine) -> None:
        self._read_once("title", line, text_value(line.value))

    def _read_once(self, name: str, line: ContentLine, value: str) -> None:
        """Set a field the card gives once; report a second, other value."""
        if not value:
            return
        current = getattr(self, name)
        if not current:
            setattr(self, name, value)
        elif value != current:
            self.card.dropped.append(
                _("%(property)s %(value)s ignored: the card has %(kept)s already")
                % {"property": line.name, "value": repr(value), "kept": repr(current)}
            )

    def _read_bday(self, line: ContentLine) -> None:
        self._read_day("birthday", line)

    def _read_day(self, field_name: str, line: ContentLine, text: str = "") -> None:
        """Read a birthday or anniversary, with or without its year."""
        raw = text or text_value(line.value)
        if not raw:
            return
        omit_year = (line.params.get("X-APPLE-OMIT-YEAR") or [""])[0]
        day = day_from_vcard(raw, omit_year=omit_year)
        prop = _DAY_PROPERTIES[field_name] if text else line.name
        if day is None:
            self.card.dropped.append(
                _("%(property)s %(value)s ignored: not a date")
                % {"property": prop, "value": repr(raw)}
            )
        elif field_name not in self.days:
            self.days[field_name] = day
        elif day != self.days[field_name]:
            self.card.dropped.append(
                _("%(property)s %(value)s ignored: the card has %(kept)s already")
                % {"property": prop, "value": repr(raw), "kept": self.days[field_name]}
            )

    def _read_x_abdate(self, line: ContentLine) -> None:
        label = self.labels.get((line.group or "").lower(), "")
        word = (apple_label_word(label) or label).strip().lower()
        if word == "anniversary":
            self._read_day("anniversary", line)
        else:
            self.card.not_kept.append(f"X-ABDATE ({label})" if label else "X-ABDATE")

    def _read_kind(self, line: ContentLine) -> None:
        kind = text_value(line.value).lower()
        if kind == "group":
            self.card.problems.append(
                _("is a contact group (%(property)s), not a contact")
                % {"property": line.name}
            )
        self.kind = {"org": ContactKind.BUSINESS, "individual": ContactKind.PERSON}.get(
            kind, self.kind
        )

    def _read_x_abshowas(self, line: ContentLine) -> None:
        if text_value(line.value).upper() == "COMPANY":
            self.kind = ContactKind.BUSINESS

    def _read_nickname(self, line: ContentLine) -> None:
        self.aliases += [name.strip() for name in stringToTextValues(line.value)]

    def _read_categories(self, line: ContentLine) -> None:
        for name in stringToTextValues(line.value):
            # Newer Google exports star their system groups ("* starred").
            tag = name.strip().removeprefix("* ").strip()
            if tag and tag.lower() not in SYSTEM_CATEGORIES:
                self.tags.append(tag)

    def _read_note(self, line: ContentLine) -> None:
        self.notes.append(text_value(line.value))

    def _read_uid(self, line: ContentLine) -> None:
        self.fields["vcard_uid"] = text_value(line.value)

    def _read_x_yorik_relation(self, line: ContentLine) -> None:
        self.fields["relation"] = text_value(line.value)

    def _read_x_yorik_status(self, line: ContentLine) -> None:
        self.fields["status"] = text_value(line.value)

    def _type_label(self, line: ContentLine) -> str:
        label = self._label(line)
        if label is None:
            label = label_for_types(type_words(line), self.language)
        return label

    def _read_tel(self, line: ContentLine) -> None:
        raw = text_value(line.value)
        if not raw:
            return
        label = self._type_label(line)
        try:
            dialled = self._dialled(raw)
        except InvalidPhoneNumber as error:
            scheme = _URI_SCHEME.match(raw)
            written = raw[scheme.end() :].strip() if scheme else raw
            if "@" in raw or (scheme and scheme[1].lower() in _ADDRESS_SCHEMES):
                # A SIP or pager address in a phone's place.
                label = label or (scheme[1].upper() if scheme else "")
                self._add_channel(ChannelKind.OTHER, written, label, raw, "TEL")
            elif is_written_phone(written):
                # A number the phone library does not know (a new range, a
                # vanity number too long for its plan): kept, and said so.
                self.card.dropped.append(
                    _("TEL %(value)s kept as written: %(reason)s")
                    % {"value": repr(raw), "reason": error}
                )
                self._add_channel(
                    ChannelKind.PHONE, written, label, raw, "TEL", as_written=True
                )
            else:
                self.card.dropped.append(_ignored("TEL", raw, error))
            return
        words = DIALLING_LABELS[self.language]
        parts = [label] if label else []
        if dialled.extension:
            parts.append(words["extension"].format(dialled.extension))
        if dialled.post_dial:
            parts.append(words["post_dial"].format(dialled.post_dial))
        label = ", ".join(parts)
        self._add_channel(ChannelKind.PHONE, dialled.number.e164, label, raw, "TEL")

    def _dialled(self, raw: str) -> DialledNumber:
        """Return a number read in the card's country, else in the household's."""
        try:
            return parse_dialled_phone(raw, self.region)
        except InvalidPhoneNumber:
            if self.region == self.household_region:
                raise
        return parse_dialled_phone(raw, self.household_region)

    def _read_email(self, line: ContentLine) -> None:
        raw = text_value(line.value)
        if not raw:
            return
        # Some exporters write the name too: `"Omega" <omega@example.com>`.
        address = parseaddr(raw.removeprefix("mailto:"))[1] or raw
        try:
            value = normalize_channel_value(ChannelKind.EMAIL, address, self.region)
        except ValueError as error:
            self.card.dropped.append(_ignored("EMAIL", raw, error))
            return
        label = self._type_label(line)
        self._add_channel(ChannelKind.EMAIL, value, label, address, "EMAIL")

    def _read_impp(self, line: ContentLine) -> None:
        uri = unquote(text_value(line.value))
        scheme, colon, rest = uri.partition(":")
        if not colon:
            scheme, rest = "", uri
        service = (line.params.get("X-SERVICE-TYPE") or [""])[0]
        kind = (
            CHAT_SCHEMES.get(service.lower())
            or CHAT_SCHEMES.get(scheme.lower())
            or ChannelKind.OTHER
        )
        label = self._label(line)
        if label is None:
            label = (
                CHAT_LABELS.get(kind)
                or CHAT_SERVICE_NAMES.get(service.lower().replace(" ", ""))
                or CHAT_SERVICE_NAMES.get(scheme.lower())
                or service
                or scheme
            )
        self._add_channel(kind, rest.removeprefix("//").strip(), label)

    def _read_chat_property(self, line: ContentLine) -> None:
        kind, label = CHAT_PROPERTIES[line.name]
        own = self._label(line)
        self._add_channel(
            kind,
            text_value(line.value),
            own if own is not None else (label or CHAT_LABELS[kind]),
        )

    def _read_url(self, line: ContentLine) -> None:
        url = text_value(line.value)
        if not url or url in self.urls:
            return
        self.urls.append(url)
        label = self._label(line)
        if label is None:
            label = next((w for w in type_words(line) if w not in _URL_TYPES), "")
        if label and label.lower() != WEBSITE_LABEL.lower():
            self.card.dropped.append(
                _("URL %(value)s kept without its label %(label)s")
                % {"value": repr(url), "label": repr(label)}
            )

    def _read_x_yorik_channel(self, line: ContentLine) -> None:
        self._add_channel(
            ChannelKind.OTHER, text_value(line.value), self._label(line) or ""
        )

    def _read_adr(self, line: ContentLine) -> None:
        po_box, extended, street, city, region, postcode, country = structured_value(
            line.value, 7
        )
        street_lines = [part.strip() for part in street.splitlines() if part.strip()]
        # Apple writes a street over several lines; Yorik has two.
        address = {
            "line1": street_lines[0] if street_lines else "",
            "line2": ", ".join(street_lines[1:]),
            "postcode": postcode,
            "city": city,
            "country": country,
            "po_box": po_box,
            "extended": extended,
            "region": region,
        }
        if not any(address.values()):
            return
        words = type_words(line)
        label = self.labels.get((line.group or "").lower())
        if label is not None:
            words.insert(0, (apple_label_word(label) or label).strip().lower())
        kind = next((ADDRESS_TYPES[w] for w in words if w in ADDRESS_TYPES), None)
        self.addresses.append((kind, address, label or ""))

    def _read_related(self, line: ContentLine) -> None:
        words = [w for w in type_words(line) if w not in IGNORED_RELATION_TYPES]
        if words:
            self._relate(text_value(line.value), words[0])

    def _read_x_abrelatednames(self, line: ContentLine) -> None:
        label = self.labels.get((line.group or "").lower())
        word = label if label is not None else next(iter(type_words(line)), "")
        if word:
            self._relate(text_value(line.value), word)

    def _read_x_android_custom(self, line: ContentLine) -> None:
        mimetype, value, code, label = structured_value(line.value, 4)
        if mimetype == "vnd.android.cursor.item/nickname":
            self.aliases.append(value)
        elif mimetype == "vnd.android.cursor.item/relation":
            word = label if code == "0" else ANDROID_RELATION_TYPES.get(code, "")
            if word:
                self._relate(value, word)
        elif (
            mimetype == "vnd.android.cursor.item/contact_event"
            and code in ANDROID_EVENT_TYPES
        ):
            self._read_day(ANDROID_EVENT_TYPES[code], line, value)
        else:
            kept_as = mimetype.rpartition("/")[2]
            self.card.not_kept.append(f"{line.name} ({kept_as})")

    def _relate(self, value: str, word: str) -> None:
        if value:
            self.card.related.append((value, relation_for_word(word, self.language)))

    def _finish(self) -> Card:
        family, given, additional = self.name
        person_name = " ".join(part for part in (given, family) if part)
        kind = self.kind
        if not kind:
            is_company = (
                self.org
                and not person_name
                and (not self.fn or fold_name(self.fn) == fold_name(self.org))
            )
            kind = ContactKind.BUSINESS if is_company else ContactKind.PERSON
        display_name = self.fn or person_name
        if kind == ContactKind.BUSINESS or not display_name:
            display_name = display_name or self.org
        if not display_name and self.channel_texts:
            display_name = self._fallback_name()
            self.card.named = False
        self.card.name = display_name
        if not display_name:
            self.card.problems.append(_("has no name, organisation or channel"))
        # A business's ORG is its name; it is kept apart only when it differs.
        organization = self.organization
        if kind == ContactKind.BUSINESS and fold_name(organization) == fold_name(
            display_name
        ):
            organization = ""
        self.card.contact = {
            "display_name": display_name,
            "first_name": " ".join(part for part in (given, additional) if part),
            "last_name": family,
            "kind": kind,
            "tags": list(dict.fromkeys(self.tags)),
            "notes": "\n\n".join(note for note in self.notes if note),
            "organization": organization,
            "title": self.title,
            "birthday": self.days.get("birthday", ""),
            "anniversary": self.days.get("anniversary", ""),
            "urls": self.urls,
            **self.fields,
            "aliases": list(dict.fromkeys(a for a in self.aliases if a)),
            "channels": list(self.channels.values()),
            "addresses": self._addresses(),
        }
        return self.card

    def _fallback_name(self) -> str:
        """Return the card's first email, else phone, else channel as written."""
        for kind in (ChannelKind.EMAIL, ChannelKind.PHONE, None):
            channels = zip(self.channels.values(), self.channel_texts, strict=True)
            for channel, text in channels:
                if kind is None or channel["kind"] == kind:
                    return text[: Contact.display_name.field.max_length]
        return ""

    def _addresses(self) -> list[dict[str, str]]:
        """Return every address of the card in its order.

        One of no kind Yorik has (no type, "other", a label such as Gmail's
        custom ones) is a home address; its label is reported.
        """
        addresses = []
        for kind, address, label in self.addresses:
            if kind is None and label:
                self.card.dropped.append(
                    _("ADR label %(label)s not kept: the address is a home address")
                    % {"label": repr(apple_label_word(label) or label)}
                )
            addresses.append({"kind": kind or AddressKind.HOME, **address})
        return addresses

    _READERS = {
        "FN": _read_fn,
        "N": _read_n,
        "ORG": _read_org,
        "TITLE": _read_title,
        "BDAY": _read_bday,
        "X-ABDATE": _read_x_abdate,
        "KIND": _read_kind,
        # Apple's contact groups, which vCard 4.0 writes as KIND:group.
        "X-ADDRESSBOOKSERVER-KIND": _read_kind,
        "X-ABSHOWAS": _read_x_abshowas,
        "NICKNAME": _read_nickname,
        "CATEGORIES": _read_categories,
        "NOTE": _read_note,
        "UID": _read_uid,
        "X-YORIK-RELATION": _read_x_yorik_relation,
        "X-YORIK-STATUS": _read_x_yorik_status,
        "TEL": _read_tel,
        "EMAIL": _read_email,
        "IMPP": _read_impp,
        "URL": _read_url,
        "X-YORIK-CHANNEL": _read_x_yorik_channel,
        "RELATED": _read_related,
        "X-ABRELATEDNAMES": _read_x_abrelatednames,
        "X-ANDROID-CUSTOM": _read_x_android_custom,
    }


def _ignored(prop: str, raw: str, error: ValueError) -> str:
    """Return the warning for a value of a kept card that cannot be used."""
    return _("%(property)s %(value)s ignored: %(reason)s") % {
        "property": prop,
        "value": repr(raw),
        "reason": error,
    }


def relate_cards(cards: list[Card]) -> None:
    """Give cards the relations other cards' relation lines name them with."""
    by_name: dict[str, list[Card]] = defaultdict(list)
    by_uid: dict[str, Card] = {}
    readable = [card for card in cards if card.contact and not card.problems]
    for card in readable:
        contact = card.contact
        names = {
            contact["display_name"],
            f"{contact['first_name']} {contact['last_name']}",
            *contact["aliases"],
        }
        for name in {fold_name(name) for name in names} - {""}:
            by_name[name].append(card)
        if contact["vcard_uid"]:
            by_uid[contact["vcard_uid"]] = card
    for card in cards:
        for value, relation in card.related:
            targets = (
                [by_uid[value]]
                if value in by_uid
                else by_name.get(fold_name(value), [])
            )
            for target in targets:
                if not target.contact["relation"]:
                    target.contact["relation"] = relation


def read_vcard(text: str, *, household: Household) -> tuple[dict[str, Any], str]:
    """Return one card's contact data as import_vcards maps it, and its problem.

    For callers that hold cards one by one (contacts.carddav.sync): the
    problem is "" for a card import_vcards would write, else why it would skip
    it, and the data is then empty.
    """
    raws = split_cards(text)
    if len(raws) != 1:
        count = len(raws)
        return {}, ngettext(
            "holds %(count)d card instead of one",
            "holds %(count)d cards instead of one",
            count,
        ) % {"count": count}
    card = read_card(
        raws[0], region=household.default_region, language=household.language
    )
    if card.problems:
        return {}, "; ".join(card.problems)
    return card.contact, ""
