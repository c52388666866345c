"""Import vCard files (2.1, 3.0 and 4.0) into a household's address book.

Reading. The file is decoded first: a UTF-16 or UTF-32 byte order mark is
honoured; otherwise each line is UTF-8, or in the charset its property
names (vCard 2.1 `CHARSET=SHIFT_JIS`, `CHARSET=ISO-8859-1`); a line that
is neither is read as Windows-1252 (FALLBACK_ENCODING) and the summary
warns which lines were. The file is split into cards on its BEGIN:VCARD and
END:VCARD lines, so one broken card never hides the others; cards are
numbered 1..n as they appear. PHOTO, LOGO, SOUND, KEY and every base64
value are dropped before parsing, with their folded lines however they
are folded (indented or not, vCard 2.1's blank-line end). A card of more
than MAX_CARD_LINES lines, or with a value over MAX_VALUE_LENGTH characters,
is skipped with its reason. The rest is unfolded here in one pass
(logical_lines: folds, and 2.1's quoted-printable soft line breaks), each
property split into group, name, parameters and value by a pattern that
never backtracks, and read into vobject's content line, which decodes
quoted-printable values with their charset (2.1). A line that cannot be
read, or one that is no property at all (a comment, a stray text line), is
dropped and reported, the rest of the card kept. Values are unescaped here
instead of by vobject's text behaviour, which cuts a value at its first
comma; vCard 2.1 and many exporters leave commas unescaped. So reading
takes time in proportion to the file, however its values are folded.

Mapping. FN (else N) is the display name, N the first and last name; a card
that is a company (KIND:org, Apple's X-ABShowAs:COMPANY, or an ORG without a
person's name) becomes a business named after it. A card without any name
is named after its first email, phone or other channel as written. NICKNAME
are aliases, TEL phones in E.164 read in the household's region (tel: URIs,
extensions, pause and wait dialling and vanity letters through the
engine's parse_dialled_phone; the extension or dialling goes into the
label), EMAIL emails (also `"Name" <addr>`), IMPP and X-WHATSAPP-style
lines chat ids, URL websites; a SIP or pager address given as TEL is a
channel of kind other. Labels come from an item group's X-ABLabel, else
from their TYPE words (contacts.vcard.vocabulary). ADR is a home or work address
(also billing and shipping as x-billing, x-shipping); an address of another
type counts as home when it is the card's only one. CATEGORIES are tags
(without Google's system groups), NOTE the notes, UID is kept to recognise
the card next time. A value that cannot be used (a TEL that is no number,
such as Outlook's `BusinessPhone`, an EMAIL that is no address) is dropped
and reported by card and property; the card is kept when it still has a
name, an organisation or a channel. A card with none of them, a contact
group and a card without its END:VCARD are skipped and reported. ORG of a
person, TITLE, BDAY and other lines Yorik has no field for are left out.

Relations. Yorik's `relation` says who a contact is to the household. vCard
relation lines (RELATED, X-ABRELATEDNAMES with its label, Android's relation
rows) name another person and say what that person is to the card's owner
(RFC 6350: `RELATED;TYPE=parent:X` on C means X is C's parent). Address books
keep them on their owner's own card ("Mother: Gisela Becker"), so a relation
line whose value names a card of the same file, by name or UID, gives that
card its relation ("Mutter" in a German household); a line naming nobody in
the file is ignored. Yorik's own export writes the relation as
X-YORIK-RELATION and the status as X-YORIK-STATUS, which the importer reads.

Matching, only within the household, in order: the same UID (Yorik's own
export names a contact without one `yorik-<ref>`); else a phone or email
that identifies one person on both sides, held by exactly one contact and
by no other card of the file (a family landline identifies nobody), when
the names agree (people_search.engine.nicknames.names_agree: same words,
or the same family name and given names equal or nicknames of each other;
a card without a name agrees with anyone); else the same folded display
name when no channel conflicts (for phones and for emails: when both sides
have some, they share one). Two contacts found that way, or names that do
not agree, are uncertain: the card becomes a new contact, which can be
merged later, rather than overwrite one. A contact that already took an
earlier card of the file, or whose UID differs from the card's, is never
matched but by UID.

Updating. A card sets what it carries and keeps what it leaves out, so a
re-import never erases what was added in Yorik: names and kind when the card
is the contact's by UID or by the same name (a card matched by a channel
under another agreeing name, "Hansi" for "Hans", keeps the contact's name
and adds the card's as an alias); aliases, tags, notes, relation and status
when the card has any; channels are merged (a channel the card leaves out
stays, the card's label wins on one both have); addresses per kind. A card
whose result equals the stored contact is unchanged and writes nothing.

The whole import runs in one transaction. Cards are matched against the
household's contacts loaded once. New contacts are validated card by card
and written together at the end (contacts.services.create_checked_contacts),
an update of a stored contact in its own savepoint, so a card that fails
validation leaves nothing behind. A dry run does all of it and rolls back,
so its summary is what a real run would report. An import given a timeout
looks at the clock before each card it reads and each it writes; past the
timeout it stops, rolls back and reports that instead of the summary.

Language. Problems and warnings are written in the language active during
the import, the summary's counts in the one active when it is shown: an
admin's upload reports in the admin's language, `manage.py import_vcard` in
the site's (English).
"""

import codecs
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from email.utils import parseaddr
from typing import Any
from urllib.parse import unquote

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from tqdm import tqdm
from vobject.base import ContentLine, parseParams
from vobject.icalendar import stringToTextValues
from vobject.vcard import splitFields

from contacts.aggregates import contact_document
from contacts.merging import merged_vcard_uids
from contacts.models import (
    AddressKind,
    ChannelKind,
    Contact,
    ContactAlias,
    ContactKind,
    ContactStatus,
    normalize_channel_value,
)
from contacts.services import (
    CheckedContact,
    check_contact,
    create_checked_contacts,
    update_contact,
)
from contacts.vcard.vocabulary import (
    ADDRESS_TYPES,
    ANDROID_RELATION_TYPES,
    CHAT_LABELS,
    CHAT_PROPERTIES,
    CHAT_SCHEMES,
    DIALLING_LABELS,
    IGNORED_RELATION_TYPES,
    SYSTEM_CATEGORIES,
    WEBSITE_LABEL,
    apple_label_word,
    check_vcard_size,
    label_for_ablabel,
    label_for_types,
    relation_for_word,
)
from household.models import Household
from people_search.engine.nicknames import names_agree
from people_search.engine.phones import (
    InvalidPhoneNumber,
    is_phone_shaped,
    parse_dialled_phone,
)
from people_search.engine.text import fold_name
from yorik.bulk import cyclic_gc_paused

# Files with fewer cards finish before a progress bar would help.
PROGRESS_MIN_CARDS = 200

# Old Windows address books write their own code page and say nothing.
FALLBACK_ENCODING = "cp1252"
# The largest card that is read; a card over either cap is skipped with its
# reason and the rest of the file imported. A value counts as the file writes
# it, unfolded, before quoted-printable decoding: 64 Ki characters are some
# twenty printed pages, far more than a note of an address book holds, and
# still about 7,000 letters of Japanese in vCard 2.1 quoted-printable (nine
# characters a letter). A binary value (PHOTO and the like, dropped unread)
# counts toward neither cap. 5,000 lines hold several of the longest values
# folded at 75 characters (under 900 lines each) beside hundreds of
# properties.
MAX_VALUE_LENGTH = 65_536
MAX_CARD_LINES = 5_000
# Properties whose values are binary (or a link to one); Yorik keeps none.
_BINARY_LINE = re.compile(
    r"^(?:[\w-]+\.)?(?:PHOTO|LOGO|SOUND|KEY|X-MS-CARDPICTURE)[;:]"
    r"|^[^:]*;ENCODING=(?:B|BASE64)[;:]",
    re.IGNORECASE,
)
# How a property line starts: an optional group, a name, then ; or :.
# Base64 has neither character, so a photo's lines never look like one.
_PROPERTY = re.compile(r"^(?:[\w-]+\.)?([\w-]+)[;:]")
# A content line as vobject's parser reads it (RFC 6350 §3.3 and vCard 2.1's
# bare parameters: group, name, parameters, colon, value), written with
# possessive quantifiers so that it never backtracks. vobject's own pattern
# backtracks exponentially over parameters that end in no colon: 26 of
# `TEL;a;a;…` take seconds, 40 take hours, and nothing can stop a regular
# expression while it runs, not even the import's timeout.
_NAME = "[A-Za-z0-9_-]"
# An unquoted value stops at "=", which then starts the next one (vobject
# reads `A=b=c` and `A=="c"` alike), so that no value has to give back
# characters for a match.
_PARAMETER_VALUE = '(?:"[^"]*+"|[^";:,=]*+)'
_CONTENT_LINE = re.compile(
    rf"(?:(?P<group>{_NAME}++)\.)?(?P<name>{_NAME}++)"
    rf"(?P<params>(?:;(?=[;:]))?(?:;{_NAME}++"
    rf"(?:(?:={_PARAMETER_VALUE})?+(?:,{_PARAMETER_VALUE})*+)*+)*+)"
    r":(?P<value>.*)",
    re.DOTALL,
)
_DECLARED_CHARSET = re.compile(rb";CHARSET=", re.IGNORECASE)
_CHARSET = re.compile(rb"^[^:]*?;CHARSET=([^;:]+)", re.IGNORECASE)
_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_URI_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
# URI schemes of addresses that are called but are no phone numbers.
_ADDRESS_SCHEMES = frozenset({"sip", "sips", "h323", "xmpp", "callto", "skype"})
# Lines named in a warning before "and N more".
_LISTED_LINES = 5
_FN_LINE = re.compile(r"^(?:[\w-]+\.)?FN[;:]", re.IGNORECASE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ESCAPE = re.compile(r"\\([\\;,:nN])")
_IDENTITY_KINDS = (ChannelKind.PHONE, ChannelKind.EMAIL)


@dataclass
class ImportSummary:
    """What an import did.

    Each skipped card has one line in `skipped_cards`, by its number; each
    value dropped from a kept card, and each note about the file (lines read
    in the fallback charset), one in `warnings`. `file_problem` says why an
    import gave no card at all (an empty file, not a vCard file, a timeout).
    """

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped_cards: dict[int, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    file_problem: str = ""

    @property
    def problems(self) -> list[str]:
        """Return the skipped cards' lines in the file's order."""
        return list(self.skipped_cards.values())

    @property
    def skipped(self) -> int:
        return len(self.skipped_cards)

    @property
    def found(self) -> int:
        return self.created + self.updated + self.unchanged + self.skipped

    def __str__(self) -> str:
        return _(
            "found %(found)d: created %(created)d, updated %(updated)d, "
            "unchanged %(unchanged)d, skipped %(skipped)d"
        ) % {
            "found": self.found,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
        }


@dataclass
class _RawCard:
    """The lines of one card as they stand in the file."""

    number: int
    first_line: int
    lines: list[str]
    problem: str = ""


@dataclass
class _Card:
    """A card read into the fields and children create_contact takes."""

    number: int
    name: str
    contact: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # Values and lines dropped from a card that is kept.
    dropped: list[str] = field(default_factory=list)
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


class _TimedOut(Exception):
    """The import ran past its timeout."""


class _Deadline:
    """When an import has to stop: `timeout` seconds after it started, or never."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.started = time.monotonic()

    def check(self, number: int, count: int) -> None:
        """Raise _TimedOut at card `number` of `count` once the time is up."""
        if self.timeout is None or time.monotonic() - self.started < self.timeout:
            return
        seconds = self.timeout
        if float(seconds).is_integer():
            seconds = int(seconds)
        raise _TimedOut(
            _(
                "The import took longer than %(seconds)s seconds and was stopped "
                "at card %(number)s of %(count)s."
            )
            % {
                "seconds": number_format(seconds),
                "number": number_format(number, force_grouping=True),
                "count": number_format(count, force_grouping=True),
            }
        )


def import_vcards(
    *,
    household: Household,
    data: bytes,
    dry_run: bool = False,
    show_progress: bool = False,
    timeout: float | None = None,
) -> ImportSummary:
    """Import every card of a vCard file into the household's address book.

    An import still running `timeout` seconds after it started stops at the
    next card, writes nothing and says so in the summary's file_problem.
    """
    try:
        return _import(
            household=household,
            data=data,
            dry_run=dry_run,
            show_progress=show_progress,
            deadline=_Deadline(timeout),
        )
    except _TimedOut as stop:
        return ImportSummary(file_problem=str(stop))


def _import(
    *,
    household: Household,
    data: bytes,
    dry_run: bool,
    show_progress: bool,
    deadline: _Deadline,
) -> ImportSummary:
    """Import the file as import_vcards does; raise _TimedOut past the deadline."""
    check_vcard_size(len(data))
    region, language = household.default_region, household.language
    text, notes = _decode(data)
    summary = ImportSummary(warnings=notes)
    raws = _split_cards(text)
    cards: list[_Card] = []
    with cyclic_gc_paused():
        for raw in raws:
            deadline.check(raw.number, len(raws))
            cards.append(_read_card(raw, region=region, language=language))
    if not cards:
        summary.file_problem = _not_a_vcard_file(text)
        return summary
    _relate(cards)
    with transaction.atomic():
        book = _AddressBook(household, shared_values=_shared_values(cards))
        progress = tqdm(
            cards,
            desc="vCards",
            unit="card",
            file=sys.stderr,
            disable=not show_progress or len(cards) < PROGRESS_MIN_CARDS,
        )
        for card in progress:
            deadline.check(card.number, len(cards))
            if card.problems:
                summary.skipped_cards[card.number] = card.report(
                    "; ".join(card.problems)
                )
                continue
            summary.warnings += [card.report(dropped) for dropped in card.dropped]
            try:
                outcome = book.write(card.contact, named=card.named)
            except ValidationError as error:
                summary.skipped_cards[card.number] = card.report(_describe(error))
                continue
            setattr(summary, outcome, getattr(summary, outcome) + 1)
        book.create_new_contacts()
        if dry_run:
            transaction.set_rollback(True)
    return summary


def _decode(data: bytes) -> tuple[str, list[str]]:
    """Return the file's text and a warning when lines had to be guessed.

    A byte order mark names UTF-16 or UTF-32. Otherwise each line is read in
    the charset its property declares (vCard 2.1 `CHARSET=`), else as UTF-8,
    else as FALLBACK_ENCODING; folded lines take their property's charset.
    """
    for mark, encoding in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            return data.decode(encoding, errors="replace"), []
    data = data.removeprefix(codecs.BOM_UTF8)
    if not _DECLARED_CHARSET.search(data):
        try:
            return data.decode("utf-8"), []
        except UnicodeDecodeError:
            pass
    texts: list[str] = []
    guessed: list[int] = []
    charset = ""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line[:1] not in (b" ", b"\t"):
            declared = _CHARSET.match(line)
            charset = declared[1].decode("ascii", "replace").strip() if declared else ""
        text = _decoded_line(line, charset)
        if text is None:
            guessed.append(number)
            text = line.decode(FALLBACK_ENCODING, errors="replace")
        texts.append(text)
    if not guessed:
        return "\n".join(texts), []
    listed = ", ".join(str(number) for number in guessed[:_LISTED_LINES])
    more = len(guessed) - _LISTED_LINES
    if more > 0:
        listed = _("%(lines)s and %(count)d more") % {"lines": listed, "count": more}
    warning = ngettext(
        "The file is not UTF-8 and names no charset for line %(lines)s: "
        "read as Windows-1252; check its accented letters.",
        "The file is not UTF-8 and names no charset for lines %(lines)s: "
        "read as Windows-1252; check their accented letters.",
        len(guessed),
    ) % {"lines": listed}
    return "\n".join(texts), [warning]


def _decoded_line(line: bytes, charset: str) -> str | None:
    """Return a line in its declared charset or UTF-8; None when it is neither."""
    if line.isascii():
        return line.decode("ascii")
    # Valid UTF-8 is hardly ever text in another charset, and some exporters
    # declare ISO-8859-1 over UTF-8 bytes; so UTF-8 is tried first.
    for encoding in ("utf-8", charset):
        if not encoding:
            continue
        try:
            return line.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    return None


def _not_a_vcard_file(text: str) -> str:
    """Return why a text without a single card is no vCard file."""
    if not text.strip():
        return _("The file is empty.")
    if "BEGIN:VCALENDAR" in text.upper():
        return _("The file is an iCalendar file (BEGIN:VCALENDAR), not a vCard file.")
    return _("The file holds no vCard: it has no BEGIN:VCARD line.")


def _split_cards(text: str) -> list[_RawCard]:
    """Return the file's cards in order, unbalanced ones with their problem."""
    cards: list[_RawCard] = []
    current: _RawCard | None = None
    stray: list[str] = []
    stray_start = 0
    # Only CR and LF end a line; str.splitlines() would also split on
    # characters a note may contain (U+2028, form feed).
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        marker = line.rstrip().upper()
        if marker == "BEGIN:VCARD":
            if current is not None:
                current.problem = _("no END:VCARD before line %(line)d") % {
                    "line": number
                }
            current = _RawCard(len(cards) + 1, number, [line])
            cards.append(current)
            stray = []
        elif marker == "END:VCARD":
            if current is not None:
                current.lines.append(line)
                current = None
            elif stray:
                cards.append(
                    _RawCard(
                        len(cards) + 1,
                        stray_start,
                        [*stray, line],
                        problem=_("no BEGIN:VCARD before line %(line)d")
                        % {"line": number},
                    )
                )
                stray = []
        elif current is not None:
            current.lines.append(line)
        elif line.strip():
            if not stray:
                stray_start = number
            stray.append(line)
    if current is not None:
        current.problem = _("no END:VCARD at the end of the file")
    return cards


def _read_card(raw: _RawCard, *, region: str, language: str) -> _Card:
    """Return the card's contact data, or its problems."""
    if raw.problem:
        return _skipped(raw, raw.problem)
    kept = _without_binaries(raw.lines)
    count = sum(1 for line in kept if line)
    if count > MAX_CARD_LINES:
        return _skipped(
            raw,
            _("has %(count)s lines, more than the %(limit)s a card may have")
            % {
                "count": number_format(count, force_grouping=True),
                "limit": number_format(MAX_CARD_LINES, force_grouping=True),
            },
        )
    # vobject's vCard component would apply the text behaviour that cuts
    # values at commas, so only its content lines are built.
    lines: list[ContentLine] = []
    dropped: list[str] = []
    for text, number in logical_lines(kept):
        line_number = raw.first_line + number - 1
        property_ = _PROPERTY.match(text)
        if not property_:
            dropped.append(
                _("line %(line)d ignored: not a vCard property: %(text)s")
                % {"line": line_number, "text": repr(text[:40])}
            )
            continue
        # The value follows the first colon; without one, the line is the value.
        length = len(text) - text.find(":") - 1
        if length > MAX_VALUE_LENGTH:
            return _skipped(
                raw,
                _(
                    "%(property)s has %(length)s characters, more than the "
                    "%(limit)s a value may have"
                )
                % {
                    "property": property_[1].upper(),
                    "length": number_format(length, force_grouping=True),
                    "limit": number_format(MAX_VALUE_LENGTH, force_grouping=True),
                },
            )
        try:
            line = _content_line(text, number)
        except (ValueError, LookupError) as error:
            reason = str(error)
        else:
            if line is not None:
                lines.append(line)
                continue
            reason = repr(text[:40])
        dropped.append(
            _("line %(line)d ignored: cannot be read: %(reason)s")
            % {"line": line_number, "reason": reason}
        )
    card = _CardReader(raw.number, region, language).read(lines)
    card.dropped[:0] = dropped
    return card


def _skipped(raw: _RawCard, problem: str) -> _Card:
    """Return a card that is not read, named by its FN when that can be read."""
    return _Card(raw.number, _name_of(raw.lines), problems=[problem])


def logical_lines(lines: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Yield each property of a card's lines unfolded, with its first line's number.

    A line that starts with a space or a tab continues the one before it,
    less that character (RFC 6350 §3.2). A quoted-printable value (vCard 2.1:
    QUOTED-PRINTABLE among the parameters before the first colon) that ends
    in "=" goes on in the next line, whatever that starts with; the line
    break is kept for the decoder, which removes it with the "=". An empty
    line ends a property. Lines are numbered from 1. Each line is looked at
    once, so the time grows with the card's length, however long one value.
    """
    parts: list[str] = []
    start = 0
    # None until the property's colon is read.
    quoted_printable: bool | None = None
    soft_break = False
    for number, line in enumerate(lines, start=1):
        if not line:
            if parts:
                yield "".join(parts), start
            parts, quoted_printable, soft_break = [], None, False
            continue
        if soft_break:
            piece = "\n" + line
        elif line[0] in " \t" and parts:
            piece = line[1:]
        else:
            if parts:
                yield "".join(parts), start
            parts, start, quoted_printable, piece = [], number, None, line
        parts.append(piece)
        if quoted_printable is None and ":" in piece:
            text = "".join(parts)
            quoted_printable = "QUOTED-PRINTABLE" in text[: text.index(":")].upper()
        soft_break = bool(quoted_printable) and piece.endswith("=")
    if parts:
        yield "".join(parts), start


def _content_line(text: str, number: int) -> ContentLine | None:
    """Return a property read into vobject's content line, or None if it is none.

    Raise ValueError or LookupError when a quoted-printable value is not in
    its charset.
    """
    match = _CONTENT_LINE.fullmatch(text)
    if match is None:
        return None
    return ContentLine(
        # vobject reads Lotus Notes' underscores as dashes.
        match["name"].replace("_", "-"),
        parseParams(match["params"]),
        match["value"],
        match["group"],
        encoded=True,
        lineNumber=number,
    )


def _without_binaries(lines: list[str]) -> list[str]:
    """Return the lines with PHOTO-like properties and their values blanked out.

    Yorik keeps none of them, so they are neither read nor counted toward a
    card's caps (MAX_CARD_LINES). A binary value ends at the next line
    that starts a property, however its lines were folded: indented, not
    indented, or ended by a blank line (vCard 2.1). Blank lines keep the
    line numbers.
    """
    kept: list[str] = []
    dropping = False
    for line in lines:
        if _BINARY_LINE.match(line):
            dropping = True
        elif dropping and _PROPERTY.match(line):
            dropping = False
        kept.append("" if dropping else line)
    return kept


def _name_of(lines: list[str]) -> str:
    """Return the FN of a card that is not read, when its FN line can be read."""
    for number, line in enumerate(lines, start=1):
        if _FN_LINE.match(line):
            try:
                content = _content_line(line, number)
            except (ValueError, LookupError):
                return ""
            name = _text(content.value) if content is not None else ""
            return name[: Contact.display_name.field.max_length]
    return ""


def _text(value: str) -> str:
    """Return a single text value unescaped, commas and all, with \\n newlines."""
    text = _ESCAPE.sub(lambda m: "\n" if m[1] in "nN" else m[1], value)
    return _LINE_BREAK.sub("\n", text).strip()


def _joined(value: str | list[str]) -> str:
    return " ".join(value).strip() if isinstance(value, list) else value.strip()


def _fields(value: str, count: int) -> list[str]:
    """Return the first `count` components of a structured value (N, ADR, ORG)."""
    parts = [_joined(part) for part in splitFields(value)]
    return (parts + [""] * count)[:count]


def _types(line: ContentLine) -> list[str]:
    """Return the lower-case TYPE words, also 2.1's bare ones (`TEL;CELL`)."""
    words = [*line.params.get("TYPE", []), *line.singletonparams]
    return [word.strip().lower() for value in words for word in value.split(",")]


class _CardReader:
    """Read one parsed card's lines into contact data."""

    def __init__(self, number: int, region: str, language: str) -> None:
        self.region = region
        self.language = language
        self.card = _Card(number, "")
        self.fn = ""
        self.name = ["", "", ""]  # family, given, additional
        self.org = ""
        self.kind = ""
        self.aliases: list[str] = []
        self.tags: list[str] = []
        self.notes: list[str] = []
        # By kind and value, so that a card of thousands of channels finds
        # its twins at once; in the card's order.
        self.channels: dict[tuple[str, str], dict[str, str]] = {}
        # Each channel as the card writes it, to name a card without a name.
        self.channel_texts: list[str] = []
        # (kind or None when the type is unknown, address)
        self.addresses: list[tuple[str | None, dict[str, str]]] = []
        self.labels: dict[str, str] = {}
        self.fields: dict[str, str] = {"relation": "", "status": "", "vcard_uid": ""}

    def read(self, lines: list[ContentLine]) -> _Card:
        self.labels = {
            line.group.lower(): _text(line.value)
            for line in lines
            if line.group and line.name == "X-ABLABEL"
        }
        for line in lines:
            if line.name in CHAT_PROPERTIES:
                self._read_chat_property(line)
            elif line.name in self._READERS:
                self._READERS[line.name](self, line)
        return self._finish()

    def _label(self, line: ContentLine) -> str | None:
        """Return the line's item-group label, or None when it has none."""
        if not line.group or line.group.lower() not in self.labels:
            return None
        return label_for_ablabel(self.labels[line.group.lower()], self.language)

    def _add_channel(
        self, kind: str, value: str, label: str, written: str = "", prop: str = ""
    ) -> None:
        """Add a channel; one the card has already keeps its first label.

        A second label that would be lost, such as another extension of the
        same number, is reported.
        """
        if not value:
            return
        twin = self.channels.get((kind, value))
        if twin is None:
            self.channels[kind, value] = {"kind": kind, "value": value, "label": label}
            self.channel_texts.append(written or value)
        elif label and label != twin["label"] and prop:
            self.card.dropped.append(
                _("%(property)s %(written)s ignored: the card has %(value)s already")
                % {"property": prop, "written": repr(written), "value": value}
            )

    def _read_fn(self, line: ContentLine) -> None:
        self.fn = self.fn or _text(line.value)

    def _read_n(self, line: ContentLine) -> None:
        self.name = _fields(line.value, 3)

    def _read_org(self, line: ContentLine) -> None:
        self.org = self.org or _fields(line.value, 1)[0]

    def _read_kind(self, line: ContentLine) -> None:
        kind = _text(line.value).lower()
        if kind == "group":
            self.card.problems.append(
                _("is a contact group (%(property)s), not a contact")
                % {"property": line.name}
            )
        self.kind = {"org": ContactKind.BUSINESS, "individual": ContactKind.PERSON}.get(
            kind, self.kind
        )

    def _read_x_abshowas(self, line: ContentLine) -> None:
        if _text(line.value).upper() == "COMPANY":
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
        self.notes.append(_text(line.value))

    def _read_uid(self, line: ContentLine) -> None:
        self.fields["vcard_uid"] = _text(line.value)

    def _read_x_yorik_relation(self, line: ContentLine) -> None:
        self.fields["relation"] = _text(line.value)

    def _read_x_yorik_status(self, line: ContentLine) -> None:
        self.fields["status"] = _text(line.value)

    def _type_label(self, line: ContentLine) -> str:
        label = self._label(line)
        if label is None:
            label = label_for_types(_types(line), self.language)
        return label

    def _read_tel(self, line: ContentLine) -> None:
        raw = _text(line.value)
        if not raw:
            return
        label = self._type_label(line)
        try:
            dialled = parse_dialled_phone(raw, self.region)
        except InvalidPhoneNumber as error:
            scheme = _URI_SCHEME.match(raw)
            if "@" in raw or (scheme and scheme[1].lower() in _ADDRESS_SCHEMES):
                # A SIP or pager address in a phone's place.
                address = raw[scheme.end() :] if scheme else raw
                label = label or (scheme[1].upper() if scheme else "")
                self._add_channel(ChannelKind.OTHER, address.strip(), label, raw, "TEL")
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

    def _read_email(self, line: ContentLine) -> None:
        raw = _text(line.value)
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
        uri = unquote(_text(line.value))
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
            label = CHAT_LABELS.get(kind) or service or scheme
        self._add_channel(kind, rest.removeprefix("//").strip(), label)

    def _read_chat_property(self, line: ContentLine) -> None:
        kind, label = CHAT_PROPERTIES[line.name]
        own = self._label(line)
        self._add_channel(
            kind,
            _text(line.value),
            own if own is not None else (label or CHAT_LABELS[kind]),
        )

    def _read_url(self, line: ContentLine) -> None:
        label = self._label(line)
        self._add_channel(
            ChannelKind.OTHER,
            _text(line.value),
            label if label is not None else WEBSITE_LABEL,
        )

    def _read_x_yorik_channel(self, line: ContentLine) -> None:
        self._add_channel(ChannelKind.OTHER, _text(line.value), self._label(line) or "")

    def _read_adr(self, line: ContentLine) -> None:
        _box, extended, street, city, _region, postcode, country = _fields(
            line.value, 7
        )
        street_lines = [part.strip() for part in street.splitlines() if part.strip()]
        # Apple writes a street over several lines; Yorik has two.
        address = {
            "line1": street_lines[0] if street_lines else "",
            "line2": ", ".join(part for part in (*street_lines[1:], extended) if part),
            "postcode": postcode,
            "city": city,
            "country": country,
        }
        if not any(address.values()):
            return
        words = _types(line)
        label = self.labels.get((line.group or "").lower())
        if label is not None:
            words.insert(0, (apple_label_word(label) or label).strip().lower())
        kind = next((ADDRESS_TYPES[w] for w in words if w in ADDRESS_TYPES), None)
        self.addresses.append((kind, address))

    def _read_related(self, line: ContentLine) -> None:
        words = [w for w in _types(line) if w not in IGNORED_RELATION_TYPES]
        if words:
            self._relate(_text(line.value), words[0])

    def _read_x_abrelatednames(self, line: ContentLine) -> None:
        label = self.labels.get((line.group or "").lower())
        word = label if label is not None else next(iter(_types(line)), "")
        if word:
            self._relate(_text(line.value), word)

    def _read_x_android_custom(self, line: ContentLine) -> None:
        mimetype, value, code, label = _fields(line.value, 4)
        if mimetype == "vnd.android.cursor.item/nickname":
            self.aliases.append(value)
        elif mimetype == "vnd.android.cursor.item/relation":
            word = label if code == "0" else ANDROID_RELATION_TYPES.get(code, "")
            if word:
                self._relate(value, word)

    def _relate(self, value: str, word: str) -> None:
        if value:
            self.card.related.append((value, relation_for_word(word, self.language)))

    def _finish(self) -> _Card:
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
        self.card.contact = {
            "display_name": display_name,
            "first_name": " ".join(part for part in (given, additional) if part),
            "last_name": family,
            "kind": kind,
            "tags": list(dict.fromkeys(self.tags)),
            "notes": "\n\n".join(note for note in self.notes if note),
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
        if len(self.addresses) == 1 and self.addresses[0][0] is None:
            return [{"kind": AddressKind.HOME, **self.addresses[0][1]}]
        by_kind: dict[str, dict[str, str]] = {}
        for kind, address in self.addresses:
            # A contact has one address per kind; the card's first one wins.
            if kind is not None and kind not in by_kind:
                by_kind[kind] = {"kind": kind, **address}
        return list(by_kind.values())

    _READERS = {
        "FN": _read_fn,
        "N": _read_n,
        "ORG": _read_org,
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
        "ADR": _read_adr,
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


def _relate(cards: list[_Card]) -> None:
    """Give cards the relations other cards' relation lines name them with."""
    by_name: dict[str, list[_Card]] = defaultdict(list)
    by_uid: dict[str, _Card] = {}
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


def _identity_values(contact: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (channel["kind"], channel["value"])
        for channel in contact["channels"]
        if channel["kind"] in _IDENTITY_KINDS
    }


def _shared_values(cards: list[_Card]) -> set[tuple[str, str]]:
    """Return the phones and emails more than one card of the file has."""
    counts = Counter(
        value
        for card in cards
        if card.contact and not card.problems
        for value in _identity_values(card.contact)
    )
    return {value for value, count in counts.items() if count > 1}


def _describe(error: ValidationError) -> str:
    if not hasattr(error, "error_dict"):
        return " ".join(error.messages)
    return "; ".join(
        " ".join(messages) if path == "__all__" else f"{path}: {' '.join(messages)}"
        for path, messages in error.message_dict.items()
    )


def _stored(contact: Contact) -> dict[str, Any]:
    """Return a contact in the shape of a read card."""
    return {**contact_document(contact), "vcard_uid": contact.vcard_uid}


def _own_export_uid(ref: str) -> str:
    """Return the UID Yorik's export gives a contact without one of its own."""
    return f"yorik-{ref}"


def _merged(
    stored: dict[str, Any],
    card: dict[str, Any],
    *,
    ref: str,
    rename: bool,
    named: bool,
) -> dict[str, Any]:
    """Return the stored contact with what the card carries set on it.

    Without `rename` the contact keeps its names and kind, and the card's
    other name, when it has one (`named`), becomes an alias.
    """
    merged = dict(stored)
    if rename:
        for key in ("display_name", "first_name", "last_name", "kind"):
            merged[key] = card[key]
    for key in ("relation", "status", "notes", "aliases", "tags"):
        if card[key]:
            merged[key] = card[key]
    if named and not rename:
        names = {
            fold_name(name) for name in (stored["display_name"], *merged["aliases"])
        }
        if fold_name(card["display_name"]) not in names:
            merged["aliases"] = [*merged["aliases"], card["display_name"]]
    # The UID the export made up for a contact is no UID of its own.
    uid = "" if card["vcard_uid"] == _own_export_uid(ref) else card["vcard_uid"]
    merged["vcard_uid"] = stored["vcard_uid"] or uid
    merged["channels"] = _merged_channels(stored["channels"], card["channels"])
    kinds = {address["kind"] for address in card["addresses"]}
    merged["addresses"] = card["addresses"] + [
        address for address in stored["addresses"] if address["kind"] not in kinds
    ]
    return merged


def _merged_channels(
    stored: list[dict[str, str]], card: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Return the stored channels, the card's labels set, then the card's new ones.

    A channel the card leaves out stays: one phone's export never knows every
    number another phone or a person in Yorik added.
    """
    labels = {(c["kind"], c["value"]): c["label"] for c in card}
    merged = [
        {
            **channel,
            "label": labels.get((channel["kind"], channel["value"]))
            or channel["label"],
        }
        for channel in stored
    ]
    known = {(c["kind"], c["value"]) for c in stored}
    return merged + [c for c in card if (c["kind"], c["value"]) not in known]


def _comparable(contact: dict[str, Any]) -> dict[str, Any]:
    """Return the contact with its lists in an order that does not matter."""

    def rows(items: Iterable[dict[str, str]]) -> list[tuple[str, ...]]:
        return sorted(tuple(sorted(item.items())) for item in items)

    return {
        **contact,
        "aliases": sorted(contact["aliases"]),
        "tags": sorted(contact["tags"]),
        "channels": rows(contact["channels"]),
        "addresses": rows(contact["addresses"]),
    }


class _AddressBook:
    """The household's contacts as the importer matches them, kept current."""

    def __init__(
        self, household: Household, *, shared_values: set[tuple[str, str]]
    ) -> None:
        self.household = household
        self.shared_values = shared_values
        self.contacts: dict[int, dict[str, Any]] = {}
        self.refs: dict[int, str] = {}
        self.by_uid: dict[str, int] = {}
        self.by_value: dict[tuple[str, str], set[int]] = defaultdict(set)
        self.by_name: dict[str, set[int]] = defaultdict(set)
        # Contacts an earlier card of the file created or matched.
        self.taken: set[int] = set()
        contacts = Contact.objects.filter(household=household).prefetch_related(
            Prefetch("aliases", queryset=ContactAlias.objects.order_by("pk")),
            "channels",
            "addresses",
        )
        for contact in contacts:
            self.refs[contact.pk] = contact.ref
            self.by_uid[_own_export_uid(contact.ref)] = contact.pk
            self._remember(contact.pk, _stored(contact))
        # A card of a contact merged away updates the contact it was merged into.
        self.by_uid = merged_vcard_uids(household=household) | self.by_uid
        # Contacts to create, by stand-in ids that follow the stored ones as
        # the created contacts' ids will, so matching breaks ties the same.
        self.new: dict[int, CheckedContact] = {}
        self.next_id = max(self.contacts, default=0) + 1

    def _remember(self, contact_id: int, contact: dict[str, Any]) -> None:
        old = self.contacts.get(contact_id)
        if old is not None:
            self.by_uid.pop(old["vcard_uid"], None)
            for value in _identity_values(old):
                self.by_value[value].discard(contact_id)
            self.by_name[fold_name(old["display_name"])].discard(contact_id)
        self.contacts[contact_id] = contact
        if contact["vcard_uid"]:
            self.by_uid[contact["vcard_uid"]] = contact_id
        for value in _identity_values(contact):
            self.by_value[value].add(contact_id)
        self.by_name[fold_name(contact["display_name"])].add(contact_id)

    def write(self, card: dict[str, Any], *, named: bool = True) -> str:
        """Create or update the card's contact; return created/updated/unchanged.

        `named` is False when the card's display name stands in for a name
        it lacks. Raise a ValidationError, having changed nothing, when the
        card's contact would not be valid. New contacts are only checked
        here and written together by create_new_contacts.
        """
        contact_id, rename = self._match(card, named=named)
        if contact_id is None:
            row = {**card, "status": card["status"] or ContactStatus.ACTIVE}
            checked = check_contact(household=self.household, **row)
            contact_id = self.next_id
            self.next_id += 1
            self.new[contact_id] = checked
            self.refs[contact_id] = checked.contact.ref
            self.by_uid[_own_export_uid(checked.contact.ref)] = contact_id
            self._remember(contact_id, row)
            self.taken.add(contact_id)
            return "created"
        stored = self.contacts[contact_id]
        merged = _merged(
            stored, card, ref=self.refs[contact_id], rename=rename, named=named
        )
        self.taken.add(contact_id)
        if _comparable(merged) == _comparable(stored):
            return "unchanged"
        if contact_id in self.new:
            self.new[contact_id] = check_contact(household=self.household, **merged)
        else:
            contact = Contact.objects.select_related("household").get(
                household=self.household, pk=contact_id
            )
            update_contact(contact=contact, **merged)
        self._remember(contact_id, merged)
        return "updated"

    def create_new_contacts(self) -> None:
        """Write the contacts the cards created, in the order they were created."""
        if self.new:
            create_checked_contacts(
                household=self.household, checked=list(self.new.values())
            )

    def _match(self, card: dict[str, Any], *, named: bool) -> tuple[int | None, bool]:
        """Return the contact the card is, or None; and whether it names it.

        The second value is True when the card's names may replace the
        contact's: a match by UID or by the same name.
        """
        uid = card["vcard_uid"]
        if uid and uid in self.by_uid:
            return self.by_uid[uid], named

        def eligible(contact_id: int) -> bool:
            stored_uid = self.contacts[contact_id]["vcard_uid"]
            return contact_id not in self.taken and (
                not uid or not stored_uid or stored_uid == uid
            )

        name = fold_name(card["display_name"])
        # A phone or email identifies a person only when one card of the
        # file and one contact of the household have it.
        owners = {
            next(iter(holders))
            for value in _identity_values(card) - self.shared_values
            if len(holders := self.by_value.get(value, set())) == 1
        }
        agreeing = [
            contact_id
            for contact_id in owners
            if eligible(contact_id)
            and (
                not named
                or _unnamed(self.contacts[contact_id])
                or names_agree(
                    self.contacts[contact_id]["display_name"], card["display_name"]
                )
            )
        ]
        if len(agreeing) == 1:
            stored = self.contacts[agreeing[0]]
            rename = named and (
                _unnamed(stored) or fold_name(stored["display_name"]) == name
            )
            return agreeing[0], rename
        if agreeing:
            return None, False
        namesakes = sorted(
            contact_id
            for contact_id in self.by_name.get(name, ())
            if eligible(contact_id)
            and not _conflicting(self.contacts[contact_id], card)
        )
        return (namesakes[0], True) if namesakes else (None, False)


def _unnamed(contact: dict[str, Any]) -> bool:
    """Return whether a contact is named only after its email or phone."""
    display_name = contact["display_name"]
    return not (contact["first_name"] or contact["last_name"]) and (
        "@" in display_name or is_phone_shaped(display_name)
    )


def _conflicting(stored: dict[str, Any], card: dict[str, Any]) -> bool:
    """Return whether both have phones (or emails) and share none of them."""
    for kind in _IDENTITY_KINDS:
        ours = {c["value"] for c in stored["channels"] if c["kind"] == kind}
        theirs = {c["value"] for c in card["channels"] if c["kind"] == kind}
        if ours and theirs and not ours & theirs:
            return True
    return False


def read_vcard(text: str, *, household: Household) -> tuple[dict[str, Any], str]:
    """Return one card's contact data as import_vcards maps it, and its problem.

    For callers that hold cards one by one (contacts.carddav.sync): the
    problem is "" for a card import_vcards would write, else why it would skip
    it, and the data is then empty.
    """
    raws = _split_cards(text)
    if len(raws) != 1:
        count = len(raws)
        return {}, ngettext(
            "holds %(count)d card instead of one",
            "holds %(count)d cards instead of one",
            count,
        ) % {"count": count}
    card = _read_card(
        raws[0], region=household.default_region, language=household.language
    )
    if card.problems:
        return {}, "; ".join(card.problems)
    return card.contact, ""
