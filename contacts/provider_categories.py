"""The provider categories and the words that reveal one in a name or a title.

A text reveals a category when one of its words starts with a keyword
("Zahnarztpraxis" starts with "Zahnarzt"), contains a compound part
("Kinderzahnarzt" contains "zahnarzt"), or equals a whole word ("Vet").
Keywords with spaces are phrases: every word but the last must be equal, the
last must start with it ("Dr. med." matches "Dr. med. Petra Mueller").

Two lists keep look-alikes apart. An excluded part cancels a hit inside the
same word, or an excluded phrase at the same place: "Tierarzt" contains "arzt"
yet is no doctor, and "Dr. med. dent." is a dentist. A veto is a word start
that makes the whole text about something else: "Versicherung (Hausrat, Kfz)"
is an insurance, "Vermieter Garage (Stellplatz)" a parking space, and a
"Fahrrad-Werkstatt" repairs bicycles, so none of them is a garage.

Every comparison is on folded text (people_search.engine.text.fold_name), so case,
accents and German spellings do not matter: "ZAHNÄRZTIN" = "Zahnaerztin".
"""

from dataclasses import dataclass, field

from people_search.engine.text import fold_name, fold_words


def _phrases(keywords: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(words for keyword in keywords if (words := fold_words(keyword)))


@dataclass(frozen=True)
class ProviderCategory:
    """A kind of provider and the words that reveal it."""

    id: str
    name_en: str
    name_de: str
    keywords: tuple[str, ...]
    compound_parts: tuple[str, ...] = ()
    whole_words: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    vetoes: tuple[str, ...] = ()
    _keywords: tuple[tuple[str, ...], ...] = field(init=False, repr=False)
    _parts: tuple[str, ...] = field(init=False, repr=False)
    _whole: frozenset[str] = field(init=False, repr=False)
    _excluded: tuple[tuple[str, ...], ...] = field(init=False, repr=False)
    _vetoes: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        folded = {
            "_keywords": _phrases(self.keywords),
            "_parts": tuple(fold_name(part) for part in self.compound_parts),
            "_whole": frozenset(fold_name(word) for word in self.whole_words),
            "_excluded": _phrases(self.excluded),
            "_vetoes": tuple(fold_name(word) for word in self.vetoes),
        }
        for name, value in folded.items():
            object.__setattr__(self, name, value)

    @property
    def tag_spellings(self) -> tuple[str, ...]:
        """Return the tags that file a contact under this category."""
        names = (self.id, self.name_en, self.name_de)
        return tuple(dict.fromkeys([*names, *(name.lower() for name in names)]))

    @property
    def search_stems(self) -> tuple[str, ...]:
        """Return folded strings every revealing text contains one of.

        They let SQL narrow the rows (LIKE '%stem%') before `is_revealed_by`
        decides; a phrase is represented by its longest word.
        """
        stems = [max(words, key=len) for words in self._keywords]
        stems = list(dict.fromkeys([*stems, *self._parts, *self._whole]))
        # A stem containing a shorter one adds no row the shorter misses.
        return tuple(
            stem
            for stem in stems
            if not any(other != stem and other in stem for other in stems)
        )

    def is_revealed_by(self, text: str) -> bool:
        """Return whether the text names a provider of this category."""
        words = fold_words(text)
        if any(word.startswith(self._vetoes) for word in words):
            return False
        return any(
            self._hit_at(words, index) and not self._excluded_at(words, index)
            for index in range(len(words))
        )

    def _hit_at(self, words: tuple[str, ...], index: int) -> bool:
        word = words[index]
        if word in self._whole or any(part in word for part in self._parts):
            return True
        return any(_phrase_at(words, index, phrase) for phrase in self._keywords)

    def _excluded_at(self, words: tuple[str, ...], index: int) -> bool:
        for phrase in self._excluded:
            if len(phrase) == 1 and phrase[0] in words[index]:
                return True
            if len(phrase) > 1 and _phrase_at(words, index, phrase):
                return True
        return False


def _phrase_at(words: tuple[str, ...], index: int, phrase: tuple[str, ...]) -> bool:
    """Return whether the phrase starts at words[index]; its last word is a prefix."""
    end = index + len(phrase)
    if end > len(words):
        return False
    *leading, last = phrase
    return list(words[index : end - 1]) == leading and words[end - 1].startswith(last)


CATEGORIES: tuple[ProviderCategory, ...] = (
    ProviderCategory(
        id="accountant",
        name_en="accountant",
        name_de="Buchhalter",
        keywords=(
            "Buchhalter",
            "Buchhalterin",
            "Buchhaltung",
            "Buchhaltungsbüro",
            "Buchführung",
            "Wirtschaftsprüfer",
            "accountant",
            "accounting",
            "bookkeeper",
            "bookkeeping",
        ),
        compound_parts=("buchhalt", "buchführung", "wirtschaftsprüf"),
        whole_words=("CPA",),
    ),
    ProviderCategory(
        id="dentist",
        name_en="dentist",
        name_de="Zahnarzt",
        keywords=(
            "Zahnarzt",
            "Zahnärztin",
            "Zahnarztpraxis",
            "Zahnmedizin",
            "Zahnheilkunde",
            "Zahnklinik",
            "Zahnreinigung",
            "Zahnspange",
            "Kieferorthopäde",
            "Kieferorthopädin",
            "Kieferorthopädie",
            "KFO",
            "Dr. med. dent.",
            "dental",
            "dentist",
            "orthodontist",
            "orthodontics",
        ),
        compound_parts=("zahnarzt", "zahnmedizin", "zahnklinik", "zahnreinigung"),
    ),
    ProviderCategory(
        id="doctor",
        name_en="doctor",
        name_de="Arzt",
        keywords=(
            "Arzt",
            "Ärztin",
            "Arztpraxis",
            "Ärztehaus",
            "Hausarzt",
            "Hausärztin",
            "Kinderarzt",
            "Frauenarzt",
            "Allgemeinmedizin",
            "Internist",
            "Orthopäde",
            "Orthopädie",
            "Gynäkologe",
            "Dermatologe",
            "Dr. med.",
            "doctor",
            "physician",
            "general practitioner",
            "family doctor",
            "pediatrician",
            "paediatrician",
            "medical practice",
        ),
        # "Arzt" ends many compounds: Hausarzt, Kinderärztin, Augenarztpraxis.
        compound_parts=("arzt", "allgemeinmedizin"),
        whole_words=("Doktor", "GP", "HNO", "MVZ"),
        excluded=(
            "zahnarzt",
            "tierarzt",
            "schwarz",
            "Dr. med. dent.",
            "Dr. med. vet.",
        ),
    ),
    ProviderCategory(
        id="garage",
        name_en="garage",
        name_de="Werkstatt",
        keywords=(
            "Werkstatt",
            "Autowerkstatt",
            "Kfz",
            "Kfz-Werkstatt",
            "Autohaus",
            "Autoservice",
            "Autoreparatur",
            "Vertragswerkstatt",
            "Karosserie",
            "Reifenservice",
            "Reifenwechsel",
            "garage",
            "mechanic",
            "car repair",
            "auto repair",
            "car service",
        ),
        # Only car workshops: "Werkstatt" alone must start a word, so a
        # "Fahrradwerkstatt" or "Holzwerkstatt" is no garage.
        compound_parts=("autowerkstatt", "kfzwerkstatt", "reifenwechsel"),
        excluded=("versicher", "steuer", "zulassung", "stellplatz", "miete"),
        vetoes=(
            "versicher",
            "insurance",
            "stellplatz",
            "parkplatz",
            "parking",
            "vermiet",
            "rental",
            "fahrrad",
            "bike",
            "bicycle",
            "steuer",
            "zulassung",
        ),
    ),
    ProviderCategory(
        id="hairdresser",
        name_en="hairdresser",
        name_de="Friseur",
        keywords=(
            "Friseur",
            "Friseurin",
            "Friseursalon",
            "Frisör",
            "Frisur",
            "Coiffeur",
            "Barbier",
            "Haarschnitt",
            "Haarstudio",
            "hairdresser",
            "hairstylist",
            "hair salon",
            "barber",
        ),
        compound_parts=("friseur", "frisör", "coiffeur", "barbier", "haarschnitt"),
        excluded=("hundefriseur", "tierfriseur", "hundesalon"),
    ),
    ProviderCategory(
        id="hospital",
        name_en="hospital",
        name_de="Krankenhaus",
        keywords=(
            "Krankenhaus",
            "Klinik",
            "Klinikum",
            "Uniklinik",
            "Spital",
            "Notaufnahme",
            "hospital",
            "clinic",
            "emergency room",
        ),
        compound_parts=("krankenhaus", "klinik", "spital", "notaufnahme"),
        excluded=("tierklinik", "pferdeklinik", "zahnklinik", "tierspital"),
        vetoes=(
            "kleintier",
            "tierarzt",
            "tierklinik",
            "tiermedizin",
            "zahn",
            "dental",
            "veterin",
            "animal",
        ),
    ),
    ProviderCategory(
        id="lawyer",
        name_en="lawyer",
        name_de="Anwalt",
        keywords=(
            "Anwalt",
            "Anwältin",
            "Rechtsanwalt",
            "Rechtsanwältin",
            "Rechtsanwälte",
            "Fachanwalt",
            "Kanzlei",
            "Anwaltskanzlei",
            "Rechtsberatung",
            "lawyer",
            "attorney",
            "solicitor",
            "law firm",
            "law office",
        ),
        compound_parts=("anwalt", "anwält", "rechtsberatung"),
        excluded=("staatsanwalt",),
    ),
    ProviderCategory(
        id="optician",
        name_en="optician",
        name_de="Optiker",
        keywords=(
            "Optiker",
            "Optikerin",
            "Optik",
            "Augenoptik",
            "Augenoptiker",
            "Brille",
            "Brillen",
            "Kontaktlinsen",
            "Sehtest",
            "optician",
            "optometrist",
            "eyewear",
            "contact lenses",
        ),
        compound_parts=("optiker", "augenoptik", "brille", "kontaktlinse"),
        excluded=("klobrille", "schwimmbrille", "skibrille", "taucherbrille"),
    ),
    ProviderCategory(
        id="pharmacy",
        name_en="pharmacy",
        name_de="Apotheke",
        keywords=("Apotheke", "Apotheker", "Apothekerin", "pharmacy", "pharmacist"),
        compound_parts=("apotheke",),
    ),
    ProviderCategory(
        id="tax_advisor",
        name_en="tax advisor",
        name_de="Steuerberater",
        keywords=(
            "Steuerberater",
            "Steuerberaterin",
            "Steuerberatung",
            "Steuerkanzlei",
            "Lohnsteuerhilfe",
            "tax advisor",
            "tax adviser",
            "tax consultant",
            "tax preparer",
        ),
        compound_parts=("steuerberat", "steuerkanzlei", "lohnsteuerhilfe"),
    ),
    ProviderCategory(
        id="veterinary",
        name_en="veterinarian",
        name_de="Tierarzt",
        keywords=(
            "Tierarzt",
            "Tierärztin",
            "Tierarztpraxis",
            "Tierklinik",
            "Tiermedizin",
            "Tierpraxis",
            "Dr. med. vet.",
            "veterinary",
            "veterinarian",
            "animal hospital",
            "animal clinic",
        ),
        compound_parts=("tierarzt", "tierklinik", "tiermedizin", "tierpraxis"),
        whole_words=("vet", "vets"),
    ),
)

_BY_ID = {category.id: category for category in CATEGORIES}


class UnknownCategory(ValueError):
    """The text names no category, or several."""


def known_category_ids() -> list[str]:
    return sorted(_BY_ID)


def get_category(category_id: str) -> ProviderCategory:
    """Return the category with the given id, or raise UnknownCategory."""
    try:
        return _BY_ID[category_id]
    except KeyError:
        raise UnknownCategory(_unknown_message(category_id)) from None


def categories_revealed_by(text: str) -> list[ProviderCategory]:
    """Return every category the text reveals, in id order."""
    return [category for category in CATEGORIES if category.is_revealed_by(text)]


def resolve_category(text: str) -> ProviderCategory:
    """Return the one category a user's word means: an id, a name or a keyword.

    "Zahnärztin", "dentist" and "ZAHNARZT" all mean dentist; "Tierarzt" means
    veterinary, never doctor. Raise UnknownCategory for none or several.
    """
    key = "_".join(fold_words(text))
    if key in _BY_ID:
        return _BY_ID[key]
    found = categories_revealed_by(text)
    if len(found) == 1:
        return found[0]
    if found:
        ids = ", ".join(category.id for category in found)
        raise UnknownCategory(f"Category {text!r} is ambiguous: {ids}.")
    raise UnknownCategory(_unknown_message(text))


def _unknown_message(text: str) -> str:
    return f"Unknown category {text!r}. Known: {', '.join(known_category_ids())}."
