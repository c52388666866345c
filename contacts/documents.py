"""A contact as a plain document: its fields, compared and merged field by field.

A document holds a contact's own fields and its aliases, tags, channels and
addresses as plain data (contact_document). Two documents are compared field
by field, lists in any order, the channels of each kind one field
("channels.phone"). A merge sets each field of one document from both sides
by a rule: keep, take, take_given, fill, joined, added, added_kinds or
combined. The vCard
importer, the CardDAV sync and the admin merge each name their rules; this
module is the one place that applies them.
"""

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from django.db.models import Prefetch

from contacts.aggregates import ADDRESS_PARTS
from contacts.models import Address, ChannelKind, Contact, ContactAlias, ContactChannel
from people_search.engine.text import fold_name

Document = dict[str, Any]
# A field's merged value from ours and theirs.
Rule = Callable[[Any, Any], Any]

SCALAR_FIELDS = (
    "display_name",
    "first_name",
    "last_name",
    "kind",
    "relation",
    "status",
    "notes",
    "organization",
    "title",
    "birthday",
    "anniversary",
)
LIST_FIELDS = ("aliases", "tags", "urls", "addresses")
CHANNEL_FIELDS = tuple(f"channels.{kind}" for kind in ChannelKind.values)
# The fields two documents are compared by.
FIELDS = (*SCALAR_FIELDS, *LIST_FIELDS, *CHANNEL_FIELDS)
# The keys of a document, as update_contact takes them.
DOCUMENT_KEYS = (*SCALAR_FIELDS, *LIST_FIELDS, "channels")
# A merge may also set the channels or the addresses of one kind alone:
# "channels.<kind>", "addresses.<kind>".
_PARTS = ("channels", "addresses")


def contact_document(contact: Contact) -> Document:
    """Return a contact with its aliases, channels and addresses as plain data.

    Prefetch the children with document_children(); bundles, vCards and the
    merges all start from this.
    """
    return {
        "display_name": contact.display_name,
        "first_name": contact.first_name,
        "last_name": contact.last_name,
        "kind": contact.kind,
        "relation": contact.relation,
        "status": contact.status,
        "aliases": [alias.name for alias in contact.aliases.all()],
        "tags": list(contact.tags),
        "notes": contact.notes,
        "organization": contact.organization,
        "title": contact.title,
        "birthday": contact.birthday,
        "anniversary": contact.anniversary,
        "urls": list(contact.urls),
        "channels": [_channel(c) for c in contact.channels.all()],
        "addresses": [
            {"kind": a.kind, **{field: getattr(a, field) for field in ADDRESS_PARTS}}
            for a in contact.addresses.all()
        ],
    }


def _channel(channel: ContactChannel) -> dict[str, Any]:
    """Return a channel as plain data; `as_written` only when it is so kept."""
    data: dict[str, Any] = {
        "kind": channel.kind,
        "value": channel.value,
        "label": channel.label,
    }
    if channel.as_written:
        data["as_written"] = True
    return data


def document_children() -> list[Prefetch]:
    """Return the prefetches contact_document reads: each child list in id order."""
    return [
        Prefetch("aliases", queryset=ContactAlias.objects.order_by("pk")),
        Prefetch("channels", queryset=ContactChannel.objects.order_by("pk")),
        Prefetch("addresses", queryset=Address.objects.order_by("pk")),
    ]


def channel_key(channel: Mapping[str, str]) -> tuple[str, str]:
    """Return what makes two channels one: their kind and value, not the label."""
    return channel["kind"], channel["value"]


# Comparing


def field_value(document: Document, key: str) -> Any:
    """Return one field of a document, comparable and in no particular order."""
    if key.startswith("channels."):
        return sorted((c["value"], c["label"]) for c in _part(document, key))
    if key == "addresses":
        # A document stored before a field was added lacks it: empty.
        return sorted(
            (a["kind"], *(a.get(field, "") for field in ADDRESS_PARTS))
            for a in document["addresses"]
        )
    if key in ("aliases", "tags", "urls"):
        return sorted(document.get(key, []))
    return document.get(key, "")


def changed_fields(
    before: Document, after: Document, *, fields: Sequence[str] = FIELDS
) -> list[str]:
    """Return the fields whose values differ between two documents, in order."""
    return [
        key for key in fields if field_value(before, key) != field_value(after, key)
    ]


def same_fields(
    first: Document, second: Document, *, fields: Sequence[str] = FIELDS
) -> bool:
    """Return whether two documents agree in every one of `fields`."""
    return not changed_fields(first, second, fields=fields)


# Merging


def merge_documents(
    ours: Document, theirs: Document, rules: Mapping[str, Rule]
) -> Document:
    """Return ours with each field named in `rules` merged with theirs by its rule.

    A rule gets the field's value on each side and returns the merged one;
    a field no rule names stays ours. Rules apply in their order: a field of
    one kind ("channels.phone", "addresses.home") set by a rule moves behind
    the other kinds, the order a contact's children are written in.
    """
    merged = dict(ours)
    for key, rule in rules.items():
        _put(merged, key, rule(_get(merged, key), _get(theirs, key)))
    return merged


def keep(ours: Any, theirs: Any) -> Any:
    """Ours, whatever theirs is."""
    return ours


def take(ours: Any, theirs: Any) -> Any:
    """Theirs, whatever ours is."""
    return theirs


def take_given(ours: Any, theirs: Any) -> Any:
    """Theirs when it has a value, else ours: saying nothing changes nothing."""
    return theirs or ours


def fill(ours: Any, theirs: Any) -> Any:
    """Ours when it has a value, else theirs."""
    return ours or theirs


def joined(ours: str, theirs: str) -> str:
    """Both texts as paragraphs, ours first, one that repeats the other once."""
    return "\n\n".join(_distinct([ours.strip(), theirs.strip()], key=_itself))


def added(*, key: Callable[[Any], Hashable] | None = None, twin: Rule = keep) -> Rule:
    """Return a list rule: ours' items as they are, then theirs' items ours lacks.

    Items are one when `key` says so (the item itself by default); an item
    of ours that theirs has too becomes twin(ours', theirs').
    """
    identity = key or _itself

    def rule(ours: list[Any], theirs: list[Any]) -> list[Any]:
        twins: dict[Hashable, Any] = {}
        for item in theirs:
            twins.setdefault(identity(item), item)
        known = {identity(item) for item in ours}
        return [
            twin(item, twins[identity(item)]) if identity(item) in twins else item
            for item in ours
        ] + [
            item for item in _distinct(theirs, identity) if identity(item) not in known
        ]

    return rule


def added_kinds(ours: list[Any], theirs: list[Any]) -> list[Any]:
    """Ours' items, then every item of theirs of a kind ours has none of.

    A list rule for addresses, of which a contact may have several of a kind:
    ours' addresses of a kind replace all of theirs of that kind.
    """
    kinds = {item["kind"] for item in ours}
    return [*ours, *(item for item in theirs if item["kind"] not in kinds)]


def combined(*, key: Callable[[Any], Hashable] | None = None) -> Rule:
    """Return a list rule: the items of both, ours first, none twice, none empty.

    Items are one when `key` says so (the item itself by default); the
    first of them stays.
    """
    identity = key or _itself

    def rule(ours: list[Any], theirs: list[Any]) -> list[Any]:
        return _distinct([*ours, *theirs], identity)

    return rule


def with_names_as_aliases(document: Document, names: Iterable[str]) -> Document:
    """Return the document with each name it is not known by yet as an alias.

    A document is known by its display name and its aliases, compared folded
    (people_search.engine.text.fold_name).
    """
    known = {
        fold_name(name) for name in (document["display_name"], *document["aliases"])
    }
    aliases = list(document["aliases"])
    for name in names:
        if name and fold_name(name) not in known:
            known.add(fold_name(name))
            aliases.append(name)
    return {**document, "aliases": aliases}


def _part(document: Document, key: str) -> list[dict[str, str]]:
    """Return the channels or addresses of the kind a key names: "channels.phone"."""
    children, kind = key.split(".", 1)
    return [child for child in document[children] if child["kind"] == kind]


def _get(document: Document, key: str) -> Any:
    children, _, kind = key.partition(".")
    if children in _PARTS and kind:
        return _part(document, key)
    return document[key]


def _put(document: Document, key: str, value: Any) -> None:
    """Set one field of a document; items are copied, never shared between two."""
    if isinstance(value, list):
        value = [dict(item) if isinstance(item, dict) else item for item in value]
    children, _, kind = key.partition(".")
    if children in _PARTS and kind:
        others = [child for child in document[children] if child["kind"] != kind]
        document[children] = others + value
    else:
        document[key] = value


def _distinct(items: Iterable[Any], key: Callable[[Any], Hashable]) -> list[Any]:
    """Return the items without empty ones and without repeats by key, in order."""
    seen: set[Hashable] = set()
    distinct = []
    for item in items:
        identity = key(item)
        if not item or identity in seen:
            continue
        seen.add(identity)
        distinct.append(item)
    return distinct


def _itself(item: Any) -> Any:
    return item
