"""A card's text as the sync writes it: the server's card with Yorik's properties set.

Yorik models some of a card's properties (MODELED_PROPERTIES); every other
line of the server's card (photo, birthday, a person's ORG, relations, X-
lines of other programs) is kept as it was.
"""

import re
from dataclasses import dataclass

from contacts.vcard.vocabulary import CHAT_PROPERTIES

# The properties the importer reads into a contact's fields: Yorik's export
# replaces them on a card it writes. ORG is replaced only for a business.
MODELED_PROPERTIES = frozenset(
    {
        "FN",
        "N",
        "KIND",
        "X-ABSHOWAS",
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
    replaced = set(MODELED_PROPERTIES)
    if any(line.name == "ORG" for line in mine):
        replaced.add("ORG")
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


def _as_vcard3(name: str, text: str) -> str:
    """Return a line of Yorik's 4.0 export as vCard 3.0 writes it ("" to drop)."""
    if name == "KIND":
        return ""  # 3.0 has no KIND; X-ABSHOWAS says "company" there.
    if name == "TEL":
        text = re.sub(r";VALUE=uri(?=[;:])", "", text, flags=re.IGNORECASE)
        text = re.sub(r":tel:", ":", text, count=1, flags=re.IGNORECASE)
    return text


def with_uid(text: str, uid: str) -> str:
    return re.sub(
        r"^(BEGIN:VCARD[ \t]*)(\r\n|\r|\n)",
        lambda m: f"{m[1]}{m[2]}UID:{uid}{m[2]}",
        text,
        count=1,
        flags=re.IGNORECASE | re.MULTILINE,
    )
