"""How vCard type words, labels, chat schemes and relations read in Yorik.

vCards name a phone's or address's purpose with TYPE words ("cell", "work"),
Apple and Google add free labels in `itemN.X-ABLabel` lines (Apple's own
standard labels look like `_$!<Mobile>!$_`), and chat ids come as IMPP URIs or
`X-WHATSAPP`-style properties. The importer and the exporter read and write
them through the tables here, so both directions agree.
"""

import re

from contacts.models import AddressKind, ChannelKind

# Labels for the TYPE words of phones and emails (and Apple's standard labels
# with the same words), per household language.
TYPE_LABELS: dict[str, dict[str, str]] = {
    "cell": {"de": "mobil", "en": "mobile"},
    "mobile": {"de": "mobil", "en": "mobile"},
    "fax": {"de": "Fax", "en": "fax"},
    "pager": {"de": "Pager", "en": "pager"},
    "main": {"de": "Hauptnummer", "en": "main"},
    "work": {"de": "geschäftlich", "en": "work"},
    "home": {"de": "privat", "en": "home"},
    "homefax": {"de": "Fax privat", "en": "home fax"},
    "workfax": {"de": "Fax geschäftlich", "en": "work fax"},
    "iphone": {"de": "iPhone", "en": "iPhone"},
    "homepage": {"de": "Website", "en": "Website"},
    "other": {"de": "", "en": ""},
}
# What a phone's label says about the extension or the digits dialled after
# the call connects (pause and wait dialling), which E.164 has no room for.
DIALLING_LABELS: dict[str, dict[str, str]] = {
    "de": {"extension": "Durchwahl {}", "post_dial": "danach {} wählen"},
    "en": {"extension": "ext. {}", "post_dial": "then dial {}"},
}
# When a line carries several TYPE words, the first of these names it.
_TYPE_PRIORITY = ("cell", "mobile", "fax", "pager", "main", "work", "home")
# The TYPE words a label is written back as; any other label goes into an
# item group's X-ABLabel. vCard 4.0 has no "main", Apple's word for it.
_EXPORTED_TYPES = {
    ChannelKind.PHONE: ("cell", "home", "work", "fax", "pager"),
    ChannelKind.EMAIL: ("home", "work"),
}

ADDRESS_TYPES: dict[str, str] = {
    "home": AddressKind.HOME,
    "work": AddressKind.WORK,
    "x-billing": AddressKind.BILLING,
    "billing": AddressKind.BILLING,
    "x-shipping": AddressKind.SHIPPING,
    "shipping": AddressKind.SHIPPING,
    "privat": AddressKind.HOME,
    "geschäftlich": AddressKind.WORK,
    "dienstlich": AddressKind.WORK,
}
EXPORTED_ADDRESS_TYPES = {
    AddressKind.HOME: "home",
    AddressKind.WORK: "work",
    AddressKind.BILLING: "x-billing",
    AddressKind.SHIPPING: "x-shipping",
}

# Chat services by IMPP URI scheme, Apple's X-SERVICE-TYPE or X- property.
CHAT_SCHEMES: dict[str, str] = {
    "whatsapp": ChannelKind.WHATSAPP,
    "signal": ChannelKind.SIGNAL,
    "sgnl": ChannelKind.SIGNAL,
    "telegram": ChannelKind.TELEGRAM,
    "tg": ChannelKind.TELEGRAM,
}
# Chat services without a channel kind of their own: "other" channels
# labelled with the service's name, written as IMPP with its URI scheme.
CHAT_SERVICES: dict[str, str] = {
    "Jabber": "xmpp",
    "Skype": "skype",
    "AIM": "aim",
    "ICQ": "icq",
    "MSN": "msnim",
    "Yahoo": "ymsgr",
    "Google Talk": "gtalk",
    "Gadu-Gadu": "gg",
    "GroupWise": "groupwise",
    "QQ": "qq",
    "IRC": "irc",
    "Matrix": "matrix",
}
# The service an IMPP URI scheme or Apple's X-SERVICE-TYPE names, by its
# lower-case spelling.
CHAT_SERVICE_NAMES: dict[str, str] = {
    **{service.lower(): service for service in CHAT_SERVICES},
    **{scheme: service for service, scheme in CHAT_SERVICES.items()},
    "jabber": "Jabber",
    "msn": "MSN",
    "googletalk": "Google Talk",
    "gadugadu": "Gadu-Gadu",
    "facebook": "Facebook",
}
# The older chat properties of Evolution, KDE, Apple and Android (before
# IMPP): a chat kind, or "other" with its service's name as the label.
CHAT_PROPERTIES: dict[str, tuple[str, str]] = {
    "X-WHATSAPP": (ChannelKind.WHATSAPP, ""),
    "X-SIGNAL": (ChannelKind.SIGNAL, ""),
    "X-TELEGRAM": (ChannelKind.TELEGRAM, ""),
    "X-JABBER": (ChannelKind.OTHER, "Jabber"),
    "X-SKYPE": (ChannelKind.OTHER, "Skype"),
    "X-SKYPE-USERNAME": (ChannelKind.OTHER, "Skype"),
    "X-AIM": (ChannelKind.OTHER, "AIM"),
    "X-ICQ": (ChannelKind.OTHER, "ICQ"),
    "X-MSN": (ChannelKind.OTHER, "MSN"),
    "X-YAHOO": (ChannelKind.OTHER, "Yahoo"),
    "X-GOOGLE-TALK": (ChannelKind.OTHER, "Google Talk"),
    "X-GTALK": (ChannelKind.OTHER, "Google Talk"),
    "X-GADUGADU": (ChannelKind.OTHER, "Gadu-Gadu"),
    "X-GROUPWISE": (ChannelKind.OTHER, "GroupWise"),
    "X-QQ": (ChannelKind.OTHER, "QQ"),
}
# Properties that carry a contact's anniversary: vCard 4.0's and the X-
# forms of vCard 3.0 programs (KDE and DAVx5, Evolution, Outlook).
ANNIVERSARY_PROPERTIES = frozenset(
    {
        "ANNIVERSARY",
        "X-ANNIVERSARY",
        "X-EVOLUTION-ANNIVERSARY",
        "X-MS-ANNIVERSARY",
        "X-KADDRESSBOOK-X-ANNIVERSARY",
    }
)
# The Android contact event types (X-ANDROID-CUSTOM contact_event) Yorik keeps.
ANDROID_EVENT_TYPES = {"1": "anniversary", "3": "birthday"}
# Properties that hold nothing of a contact: the card's own bookkeeping,
# labels read with their item group, display hints. A card that has them
# loses nothing; every other property Yorik does not read is reported.
UNREPORTED_PROPERTIES = frozenset(
    {
        "BEGIN",
        "END",
        "VERSION",
        "PRODID",
        "REV",
        "SOURCE",
        "NAME",
        "PROFILE",
        "CLIENTPIDMAP",
        "SORT-STRING",
        "X-ABLABEL",
        "X-ABADR",
        "X-ABUID",
        "X-ABCROP-RECTANGLE",
        "X-IMAGETYPE",
        "X-IMAGEHASH",
        "X-SHARED-PHOTO-DISPLAY-PREF",
        "X-EVOLUTION-FILE-AS",
        "X-EVOLUTION-LIST-SHOW-ADDRESSES",
        "X-MOZILLA-HTML",
        "X-MS-OL-DEFAULT-POSTAL-ADDRESS",
        "X-MS-OL-DESIGN",
    }
)
# The label a chat channel gets when the card names none; the exporter
# leaves this label out again.
CHAT_LABELS = {
    ChannelKind.WHATSAPP: "WhatsApp",
    ChannelKind.SIGNAL: "Signal",
    ChannelKind.TELEGRAM: "Telegram",
}
EXPORTED_CHAT_SCHEMES = {
    ChannelKind.WHATSAPP: "whatsapp",
    ChannelKind.SIGNAL: "signal",
    ChannelKind.TELEGRAM: "telegram",
}
WEBSITE_LABEL = "Website"

# Relation words of vCard 4.0 RELATED types, Apple's related-name labels and
# Android's relation types, in German. Other languages keep the English word.
RELATION_WORDS_DE: dict[str, str] = {
    "mother": "Mutter",
    "father": "Vater",
    "parent": "Elternteil",
    "child": "Kind",
    "son": "Sohn",
    "daughter": "Tochter",
    "sibling": "Geschwister",
    "brother": "Bruder",
    "sister": "Schwester",
    "spouse": "Partner(in)",
    "partner": "Partner(in)",
    "domestic partner": "Partner(in)",
    "husband": "Ehemann",
    "wife": "Ehefrau",
    "grandmother": "Großmutter",
    "grandfather": "Großvater",
    "grandparent": "Großelternteil",
    "grandchild": "Enkelkind",
    "grandson": "Enkel",
    "granddaughter": "Enkelin",
    "aunt": "Tante",
    "uncle": "Onkel",
    "cousin": "Cousin(e)",
    "niece": "Nichte",
    "nephew": "Neffe",
    "mother-in-law": "Schwiegermutter",
    "father-in-law": "Schwiegervater",
    "brother-in-law": "Schwager",
    "sister-in-law": "Schwägerin",
    "kin": "Verwandte(r)",
    "relative": "Verwandte(r)",
    "friend": "Freund(in)",
    "acquaintance": "Bekannte(r)",
    "colleague": "Kolleg(in)",
    "co-worker": "Kolleg(in)",
    "neighbor": "Nachbar(in)",
    "neighbour": "Nachbar(in)",
    "co-resident": "Mitbewohner(in)",
    "assistant": "Assistent(in)",
    "manager": "Vorgesetzte(r)",
    "emergency": "Notfallkontakt",
}
# RELATED types that say nothing about who a person is.
IGNORED_RELATION_TYPES = {"contact", "me"}
ANDROID_RELATION_TYPES = {
    "1": "assistant",
    "2": "brother",
    "3": "child",
    "4": "domestic partner",
    "5": "father",
    "6": "friend",
    "7": "manager",
    "8": "mother",
    "9": "parent",
    "10": "partner",
    "11": "referred by",
    "12": "relative",
    "13": "sister",
    "14": "spouse",
}

# Google Contacts' system groups, exported as categories.
SYSTEM_CATEGORIES = {"mycontacts", "starred"}

_APPLE_LABEL = re.compile(r"^_\$!<(.*)>!\$_$")


def apple_label_word(label: str) -> str | None:
    """Return the word inside an Apple standard label (`_$!<Mother>!$_`), or None."""
    match = _APPLE_LABEL.match(label.strip())
    return match[1] if match else None


def label_for_types(types: list[str], language: str) -> str:
    """Return the channel label for a line's TYPE words, or "" for none."""
    for word in _TYPE_PRIORITY:
        if word in types:
            return TYPE_LABELS[word][language]
    return ""


def label_for_ablabel(label: str, language: str) -> str:
    """Return the channel label for an X-ABLabel: Apple's words translated."""
    word = apple_label_word(label)
    if word is None:
        return label.strip()
    return TYPE_LABELS.get(word.lower(), {}).get(language, word)


def type_for_label(kind: str, label: str, language: str) -> str | None:
    """Return the TYPE word the exporter writes for a channel label, or None."""
    for word in _EXPORTED_TYPES.get(kind, ()):
        if TYPE_LABELS[word][language] == label:
            return word
    return None


def relation_for_word(word: str, language: str) -> str:
    """Return the household's relation text for a vCard relation word or label."""
    apple_word = apple_label_word(word)
    text = (apple_word if apple_word is not None else word).strip()
    key = text.lower().replace("_", " ")
    if language == "de":
        return RELATION_WORDS_DE.get(key, text)
    return key if key in RELATION_WORDS_DE else text
