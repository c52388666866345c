"""A card's text as the sync writes it: the server's card with Yorik's properties set.

Yorik models some of a card's properties (MODELED_PROPERTIES); every other
line of the server's card (photo, relations, other programs' dates and X-
lines) is kept as it was.
"""

import re
from dataclasses import dataclass

from contacts.dates import day_from_vcard
from contacts.vcard.reader import structured_value
from contacts.vcard.vocabulary import CHAT_PROPERTIES

# The properties the importer reads into a contact's fields: Yorik's export
# replaces them on a card it writes.
MODELED_PROPERTIES = frozenset(
    {
        "FN",
        "N",
        "KIND",
        "X-ABSHOWAS",
        "ORG",
        "TITLE",
        "BDAY",
        "ANNIVERSARY",
        "X-ANNIVERSARY",
        "NICKNAME",
        "CATEGORIES",
        "NOTE",
        "TEL",
        "EMAIL",
        "IMPP",
        "URL",
        "ADR",
        "X-YORIK-CHANNEL",
        "X-YORIK-RELATION",
        "X-YORIK-STATUS",
        *CHAT_PROPERTIES,
    }
)
# vCard 4.0 days as 3.0 writes them: 19800415 is 1980-04-15, --0415 --04-15.
_DAY_LINE = re.compile(r"^(?P<head>[^:]*):(?P<value>.*)$", re.DOTALL)
_LINE = re.compile(r"^(?:(?P<group>[A-Za-z0-9-]+)\.)?(?P<name>[A-Za-z0-9-]+)")


@dataclass(frozen=True)
class _Line:
    group: str
    name: str
    text: str  # the physical lines, folds and all


def _lines(card: str) -> list[_Line]:
    """Return a card's logical lines with their physical text kept."""
    lines: list[_Line] = []
    for physical in re.split(r"\r\n|\r|\n", card):
        if physical[:1] in (" ", "\t") and lines:
            last = lines[-1]
            lines[-1] = _Line(last.group, last.name, f"{last.text}\r\n{physical}")
        elif physical.strip():
            found = _LINE.match(physical)
            group, name = (found["group"] or "", found["name"]) if found else ("", "")
            lines.append(_Line(group.lower(), name.upper(), physical))
    return lines


def _value(line: _Line) -> str:
    return re.sub(r"\r\n[ \t]", "", line.text).partition(":")[2].strip()


def empty_card(version: str) -> str:
    return f"BEGIN:VCARD\r\nVERSION:{version}\r\nEND:VCARD\r\n"


def merge_card_text(server: str, ours: str) -> str:
    """Return the server's card with the properties Yorik models set to ours.

    Lines of other properties stay as they are, item groups included; our
    item groups are renumbered past theirs. The card keeps its version; in
    a 3.0 card our 4.0 lines are written the 3.0 way.
    """
    theirs = _lines(server)
    mine = [
        line
        for line in _lines(ours)
        if line.name not in ("BEGIN", "END", "VERSION", "PRODID")
    ]
    version = next((_value(line) for line in theirs if line.name == "VERSION"), "4.0")
    mine = _with_their_organization(theirs, mine)
    replaced = set(MODELED_PROPERTIES)
    if any(line.name == "UID" for line in theirs):
        mine = [line for line in mine if line.name != "UID"]
    dropped_groups = {
        line.group for line in theirs if line.group and line.name in replaced
    }
    kept = [
        line
        for line in theirs
        if line.name not in replaced
        and line.name not in ("BEGIN", "END", "VERSION", "REV")
        and not (line.group in dropped_groups and line.name.startswith("X-AB"))
    ]
    used = {line.group for line in kept if line.group}
    renamed: dict[str, str] = {}
    numbers = iter(range(1, 10_000))
    body: list[str] = []
    for line in mine:
        text = line.text
        if line.group:
            if line.group not in renamed:
                renamed[line.group] = next(
                    name for n in numbers if (name := f"item{n}") not in used
                )
            text = f"{renamed[line.group]}{text[len(line.group) :]}"
        if version.startswith("3"):
            text = _as_vcard3(line.name, text)
        if text:
            body.append(text)
    body += [line.text for line in kept]
    lines = ["BEGIN:VCARD", f"VERSION:{version}", *body, "END:VCARD"]
    return "\r\n".join(lines) + "\r\n"


def _with_their_organization(theirs: list[_Line], mine: list[_Line]) -> list[_Line]:
    """Return our lines with the server's ORG line when it says the same.

    Yorik keeps an organization's units joined ("Stadtwerke, Vertrieb"); the
    server's `ORG:Stadtwerke;Vertrieb` stays as it is written.
    """
    their_org = [line for line in theirs if line.name == "ORG"]
    our_org = [line for line in mine if line.name == "ORG"]
    if len(their_org) != 1 or len(our_org) != 1 or their_org[0].group:
        return mine
    if _organization(their_org[0]) != _organization(our_org[0]):
        return mine
    return [their_org[0] if line.name == "ORG" else line for line in mine]


def _organization(line: _Line) -> str:
    return ", ".join(unit for unit in structured_value(_value(line), 8) if unit)


def _as_vcard3(name: str, text: str) -> str:
    """Return a line of Yorik's 4.0 export as vCard 3.0 writes it ("" to drop)."""
    if name == "KIND":
        return ""  # 3.0 has no KIND; X-ABSHOWAS says "company" there.
    if name == "TEL":
        text = re.sub(r";VALUE=uri(?=[;:])", "", text, flags=re.IGNORECASE)
        text = re.sub(r":tel:", ":", text, count=1, flags=re.IGNORECASE)
    if name in ("BDAY", "ANNIVERSARY"):
        # 3.0 has no ANNIVERSARY: KDE, Evolution's exports and DAVx5 read this.
        line = _DAY_LINE.match(text)
        day = day_from_vcard(line["value"]) if line else None
        head = line["head"] if line else name
        if name == "ANNIVERSARY":
            head = re.sub(r"ANNIVERSARY$", "X-ANNIVERSARY", head, flags=re.IGNORECASE)
        return f"{head}:{day}" if day else ""
    return text


def with_uid(text: str, uid: str) -> str:
    return re.sub(
        r"^(BEGIN:VCARD[ \t]*)(\r\n|\r|\n)",
        lambda m: f"{m[1]}{m[2]}UID:{uid}{m[2]}",
        text,
        count=1,
        flags=re.IGNORECASE | re.MULTILINE,
    )
