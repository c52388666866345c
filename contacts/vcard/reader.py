"""Read vCard bytes into cards of properties, in time that grows with the file.

Pure: no model, no database. The bytes are decoded (a byte order mark or
UTF-16 text, else UTF-8 or the charset a line names, else FALLBACK_ENCODING;
a folded line is decoded with the lines it continues, since a fold may split
a character), split into cards on their BEGIN:VCARD and END:VCARD lines,
binary values blanked out, the rest unfolded in one pass and each property
read into vobject's content line by a pattern that never backtracks.
Quoted-printable values that name no charset are read in the file's.
"""

import codecs
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import charset_normalizer
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from vobject.base import ContentLine, parseParams
from vobject.vcard import splitFields

# Old Windows address books write their own code page and say nothing.
FALLBACK_ENCODING = "cp1252"
# What quoted-printable bytes that name no charset and are no UTF-8 can be:
# the code pages of the programs that write them (Outlook, old phones).
QUOTED_PRINTABLE_CHARSETS = ["cp1252", "iso8859_15", "iso8859_2", "latin_1"]
# Their names as people know them, by Python's codec name.
_CHARSET_NAMES = {
    "cp1252": "Windows-1252",
    "iso8859-15": "ISO-8859-15",
    "iso8859-2": "ISO-8859-2",
    "iso8859-1": "ISO-8859-1",
}
_QUOTED_PRINTABLE = "QUOTED-PRINTABLE"
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
# Every vCard file starts so; in UTF-16 without a byte order mark, each of
# its letters comes with a zero byte.
_FIRST_LINE = "BEGIN:VCARD"
# Lines named in a warning before "and N more".
_LISTED_LINES = 5
_FN_LINE = re.compile(r"^(?:[\w-]+\.)?FN[;:]", re.IGNORECASE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ESCAPE = re.compile(r"\\([\\;,:nN])")


@dataclass
class RawCard:
    """The lines of one card as they stand in the file."""

    number: int
    first_line: int
    lines: list[str]
    problem: str = ""


@dataclass
class ParsedCard:
    """A card's properties as vobject's content lines, or why it cannot be read.

    `dropped` says which lines were left out and why, `binaries` the binary
    properties (PHOTO and the like) left out unread. A card with a `problem`
    has no lines; `name` is then its FN, when that can be read.
    """

    number: int
    lines: list[ContentLine] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    binaries: list[str] = field(default_factory=list)
    problem: str = ""
    name: str = ""


@dataclass
class DecodedFile:
    """A file's text, what had to be guessed to read it, and its encoding.

    `encoding` is what a quoted-printable value that names no charset is
    read in: the charset the rest of the file is in, else the one its
    quoted-printable bytes are detected to be.
    """

    text: str
    warnings: list[str] = field(default_factory=list)
    encoding: str = "utf-8"


def decode(data: bytes) -> DecodedFile:
    """Return the file's text, and a warning for each thing that had to be guessed.

    A byte order mark names UTF-16 or UTF-32, and a file that starts with
    BEGIN:VCARD in UTF-16 is read so. Otherwise each property is read in the
    charset it declares (vCard 2.1 `CHARSET=`), else as UTF-8, else as
    FALLBACK_ENCODING; a folded property is decoded whole (RFC 6350 §3.2:
    a fold may split a UTF-8 character) and keeps its lines.
    """
    for mark, encoding in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            return _with_encoding(data.decode(encoding, errors="replace"), [], "")
    utf16 = _utf16_without_mark(data)
    if utf16:
        return _with_encoding(data.decode(utf16, errors="replace"), [], "")
    data = data.removeprefix(codecs.BOM_UTF8)
    if not _DECLARED_CHARSET.search(data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return _with_encoding(text, [], "" if data.isascii() else "utf-8")
    texts: list[str] = []
    guessed: list[int] = []
    # The charsets of the lines that are no ASCII, as they were read.
    read_in: Counter[str] = Counter()
    for start, group, charset in _folded_groups(data.split(b"\n")):
        decoded = _decoded_group(group, charset)
        if decoded is None:
            guessed += [
                start + index for index, line in enumerate(group) if not line.isascii()
            ]
            lines = [line.decode(FALLBACK_ENCODING, "replace") for line in group]
            used = FALLBACK_ENCODING
        else:
            lines, used = decoded
        if used:
            read_in[used] += 1
        texts += lines
    encoding = read_in.most_common(1)[0][0] if read_in else ""
    text = "\n".join(texts)
    if not guessed:
        return _with_encoding(text, [], encoding)
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
    return _with_encoding(text, [warning], encoding)


def _utf16_without_mark(data: bytes) -> str | None:
    """Return the UTF-16 codec of a file that starts BEGIN:VCARD in it, or None."""
    head = data[: 4 * len(_FIRST_LINE)]
    if b"\x00" not in head:
        return None
    for encoding in ("utf-16-le", "utf-16-be"):
        text = head.decode(encoding, errors="ignore").lstrip()
        if text.upper().startswith(_FIRST_LINE):
            return encoding
    return None


def _folded_groups(
    lines: list[bytes],
) -> Iterator[tuple[int, list[bytes], str]]:
    """Yield each property's physical lines, its first line's number and charset.

    A line that starts with a space or a tab continues the one before it.
    """
    group: list[bytes] = []
    start, charset = 1, ""
    for number, line in enumerate(lines, start=1):
        if line[:1] in (b" ", b"\t") and group:
            group.append(line)
            continue
        if group:
            yield start, group, charset
        declared = _CHARSET.match(line)
        charset = declared[1].decode("ascii", "replace").strip() if declared else ""
        group, start = [line], number
    if group:
        yield start, group, charset


def _decoded_group(lines: list[bytes], charset: str) -> tuple[list[str], str] | None:
    """Return a property's lines decoded and the charset they were read in.

    The charset is "" when the lines are ASCII. A character split by a fold
    is decoded whole and stays on the line the fold continues to. None when
    the lines are neither UTF-8 nor in their declared charset.
    """
    if all(line.isascii() for line in lines):
        return [line.decode("ascii") for line in lines], ""
    # Valid UTF-8 is hardly ever text in another charset, and some exporters
    # declare ISO-8859-1 over UTF-8 bytes; so UTF-8 is tried first.
    for encoding in ("utf-8", charset):
        if not encoding:
            continue
        try:
            decoder = codecs.getincrementaldecoder(encoding)()
        except LookupError:
            continue
        try:
            return _decoded_folds(lines, decoder), encoding
        except UnicodeDecodeError:
            continue
    return None


def _decoded_folds(lines: list[bytes], decoder: codecs.IncrementalDecoder) -> list[str]:
    """Return folded lines decoded one after the other by one decoder.

    Each line's line end and fold (the leading space or tab) are no part of
    the text the decoder reads.
    """
    texts = []
    last = len(lines) - 1
    for index, line in enumerate(lines):
        body, end = (line[:-1], "\r") if line.endswith(b"\r") else (line, "")
        fold = ""
        if index:
            fold, body = body[:1].decode("ascii"), body[1:]
        texts.append(fold + decoder.decode(body, final=index == last) + end)
    return texts


def _with_encoding(text: str, warnings: list[str], encoding: str) -> DecodedFile:
    """Return the decoded file; detect its encoding when the text does not tell.

    The text tells nothing when it is ASCII (or UTF-16) but for its
    quoted-printable values: their bytes are read as UTF-8 when they are,
    else as the likeliest of QUOTED_PRINTABLE_CHARSETS, and that is said.
    """
    if encoding:
        return DecodedFile(text, warnings, encoding)
    payload = b"".join(
        _quoted_printable_bytes(value) for value in _undeclared_quoted_printable(text)
    )
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return DecodedFile(text, warnings, "utf-8")
    best = charset_normalizer.from_bytes(
        payload, cp_isolation=QUOTED_PRINTABLE_CHARSETS
    ).best()
    detected = best.encoding if best is not None else FALLBACK_ENCODING
    warning = _(
        "Quoted-printable values name no charset and are not UTF-8: read as "
        "%(charset)s; check their accented letters."
    ) % {"charset": _CHARSET_NAMES.get(codecs.lookup(detected).name, detected)}
    return DecodedFile(text, [*warnings, warning], detected)


def _undeclared_quoted_printable(text: str) -> Iterator[str]:
    """Yield the quoted-printable values of the text that name no charset."""
    for line, _number in logical_lines(_LINE_BREAK.split(text)):
        head = line.partition(":")[0].upper()
        if _QUOTED_PRINTABLE in head and "CHARSET=" not in head:
            yield line.partition(":")[2]


def _quoted_printable_bytes(value: str) -> bytes:
    return codecs.decode(value.encode("utf-8"), "quoted-printable")


def not_a_vcard_file(text: str) -> str:
    """Return why a text without a single card is no vCard file."""
    if not text.strip():
        return _("The file is empty.")
    if "BEGIN:VCALENDAR" in text.upper():
        return _("The file is an iCalendar file (BEGIN:VCALENDAR), not a vCard file.")
    return _("The file holds no vCard: it has no BEGIN:VCARD line.")


def split_cards(text: str) -> list[RawCard]:
    """Return the file's cards in order, unbalanced ones with their problem."""
    cards: list[RawCard] = []
    current: RawCard | None = None
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
            current = RawCard(len(cards) + 1, number, [line])
            cards.append(current)
            stray = []
        elif marker == "END:VCARD":
            if current is not None:
                current.lines.append(line)
                current = None
            elif stray:
                cards.append(
                    RawCard(
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


def parse_card(raw: RawCard, *, encoding: str = "") -> ParsedCard:
    """Return the card's properties, or why it is skipped.

    A card over MAX_CARD_LINES lines or with a value over MAX_VALUE_LENGTH
    characters is skipped; a line that is no property or cannot be read is
    dropped and said so, the rest of the card kept. A quoted-printable value
    that names no charset is read in `encoding`, the file's (else UTF-8).
    """
    if raw.problem:
        return _skipped(raw, problem=raw.problem, encoding=encoding)
    kept, binaries = _without_binaries(raw.lines)
    count = sum(1 for line in kept if line)
    if count > MAX_CARD_LINES:
        return _skipped(
            raw,
            encoding=encoding,
            problem=_("has %(count)s lines, more than the %(limit)s a card may have")
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
                encoding=encoding,
                problem=_(
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
            line = _content_line(text, number, encoding)
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
    return ParsedCard(raw.number, lines, dropped, binaries)


def _skipped(raw: RawCard, *, problem: str, encoding: str) -> ParsedCard:
    """Return a card that is not read, named by its FN when that can be read."""
    return ParsedCard(raw.number, problem=problem, name=_name_of(raw.lines, encoding))


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


def _content_line(text: str, number: int, encoding: str = "") -> ContentLine | None:
    """Return a property read into vobject's content line, or None if it is none.

    A quoted-printable value is decoded here, in its CHARSET, else in
    `encoding`, else as UTF-8 (vobject would read it as UTF-8 whatever the
    file). Raise ValueError or LookupError when it is not in that charset.
    """
    match = _CONTENT_LINE.fullmatch(text)
    if match is None:
        return None
    params = parseParams(match["params"])
    value = match["value"]
    if any(_is_quoted_printable(param) for param in params):
        params = [param for param in params if not _is_quoted_printable(param)]
        charset = next(
            (p[1] for p in params if p[0].upper() == "CHARSET" and len(p) > 1), ""
        )
        value = _quoted_printable_bytes(value).decode(charset or encoding or "utf-8")
    return ContentLine(
        # vobject reads Lotus Notes' underscores as dashes.
        match["name"].replace("_", "-"),
        params,
        value,
        match["group"],
        encoded=True,
        lineNumber=number,
    )


def _is_quoted_printable(param: list[str]) -> bool:
    """Return whether a parameter says the value is quoted-printable (2.1 or 3.0)."""
    words = [word.upper() for word in param]
    return words == [_QUOTED_PRINTABLE] or words == ["ENCODING", _QUOTED_PRINTABLE]


def _without_binaries(lines: list[str]) -> tuple[list[str], list[str]]:
    """Return the lines with PHOTO-like properties blanked out, and their names.

    Yorik keeps none of them, so they are neither read nor counted toward a
    card's caps (MAX_CARD_LINES). A binary value ends at the next line
    that starts a property, however its lines were folded: indented, not
    indented, or ended by a blank line (vCard 2.1). Blank lines keep the
    line numbers.
    """
    kept: list[str] = []
    names: list[str] = []
    dropping = False
    for line in lines:
        if _BINARY_LINE.match(line):
            dropping = True
            name = _PROPERTY.match(line)
            names.append(name[1].upper() if name else "")
        elif dropping and _PROPERTY.match(line):
            dropping = False
        kept.append("" if dropping else line)
    return kept, [name for name in names if name]


def _name_of(lines: list[str], encoding: str) -> str:
    """Return the FN of a card that is not read, when its FN line can be read."""
    for number, line in enumerate(lines, start=1):
        if _FN_LINE.match(line):
            try:
                content = _content_line(line, number, encoding)
            except (ValueError, LookupError):
                return ""
            return text_value(content.value) if content is not None else ""
    return ""


def text_value(value: str) -> str:
    """Return a single text value unescaped, commas and all, with \\n newlines."""
    text = _ESCAPE.sub(lambda m: "\n" if m[1] in "nN" else m[1], value)
    return _LINE_BREAK.sub("\n", text).strip()


def _joined(value: str | list[str]) -> str:
    return " ".join(value).strip() if isinstance(value, list) else value.strip()


def structured_value(value: str, count: int) -> list[str]:
    """Return the first `count` components of a structured value (N, ADR, ORG)."""
    parts = [_joined(part) for part in splitFields(value)]
    return (parts + [""] * count)[:count]


def type_words(line: ContentLine) -> list[str]:
    """Return the lower-case TYPE words, also 2.1's bare ones (`TEL;CELL`)."""
    words = [*line.params.get("TYPE", []), *line.singletonparams]
    return [word.strip().lower() for value in words for word in value.split(",")]
