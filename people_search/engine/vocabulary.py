"""The household's words for people: kinship, social ties and trades, as concepts.

One vocabulary for every surface. A concept (grandmother, neighbour, plumber,
dentist, …) lists its German and English words, each inflected and gendered
form that people write ("Oma", "Omi", "Großmutter", "grandma"; "Kollege",
"Kollegin", "Kollegen"). The provider categories of find_known_provider
(contacts.provider_categories) are the trade concepts marked `provider`.

A text names a concept when one of its words
- equals a whole word ("Oma", "Vet"): short words, and words whose compounds
  mean something else ("Mutter" but not "Schwiegermutter" or "Großmutter");
- starts with a keyword ("Nachbarin" starts with "Nachbar",
  "Zahnarztpraxis" with "Zahnarzt"); keywords with spaces are phrases whose
  last word is a prefix ("tax advisor", "Dr. med.");
- contains a compound part ("Kinderzahnarzt" contains "zahnarzt").

Two lists keep look-alikes apart. An excluded part cancels a hit inside the
same word, or an excluded phrase at the same place: "Tierarzt" contains
"arzt" yet is no doctor, "mother-in-law" is no mother. A veto is a word start
that makes the whole text about something else: "Vermieter Garage
(Stellplatz)" is a parking space, so no garage.

Every comparison is on folded text (people_search.engine.text.fold_name), so
case, accents and German spellings do not matter: "ZAHNÄRZTIN" = "Zahnaerztin".
The same rules read a relation or an alias when it is written and a query
word when it is asked, so "grandma" finds the "Großmutter" of a German
household.
"""

from dataclasses import dataclass, field
from functools import lru_cache

from people_search.engine.text import fold_name, fold_words


def _phrases(keywords: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(words for keyword in keywords if (words := fold_words(keyword)))


@dataclass(frozen=True)
class Concept:
    """A kind of person to the household, and the words that name it."""

    id: str
    name_en: str
    name_de: str
    keywords: tuple[str, ...] = ()
    compound_parts: tuple[str, ...] = ()
    whole_words: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    vetoes: tuple[str, ...] = ()
    provider: bool = False
    _keywords: tuple[tuple[str, ...], ...] = field(init=False, repr=False)
    _parts: tuple[str, ...] = field(init=False, repr=False)
    _whole: frozenset[str] = field(init=False, repr=False)
    _excluded: tuple[tuple[str, ...], ...] = field(init=False, repr=False)
    _vetoes: tuple[str, ...] = field(init=False, repr=False)
    _stems: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        folded = {
            "_keywords": _phrases(self.keywords),
            "_parts": tuple(fold_name(part) for part in self.compound_parts),
            "_whole": frozenset(
                word for phrase in self.whole_words for word in fold_words(phrase)
            ),
            "_excluded": _phrases(self.excluded),
            "_vetoes": tuple(fold_name(word) for word in self.vetoes),
        }
        for name, value in folded.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_stems", self._search_stems())

    @property
    def tag_spellings(self) -> tuple[str, ...]:
        """Return the tags that file a contact under this concept."""
        names = (self.id, self.name_en, self.name_de)
        return tuple(dict.fromkeys([*names, *(name.lower() for name in names)]))

    @property
    def search_stems(self) -> tuple[str, ...]:
        """Return folded strings every revealing text contains one of.

        They let SQL narrow the rows (LIKE '%stem%') before `is_revealed_by`
        decides; a phrase is represented by its longest word.
        """
        return self._stems

    def _search_stems(self) -> tuple[str, ...]:
        stems = [max(words, key=len) for words in self._keywords]
        stems = list(dict.fromkeys([*stems, *self._parts, *self._whole]))
        # A stem containing a shorter one adds no row the shorter misses.
        return tuple(
            stem
            for stem in stems
            if not any(other != stem and other in stem for other in stems)
        )

    def is_revealed_by(self, text: str) -> bool:
        """Return whether the text names this concept."""
        return self.is_named_by_words(fold_words(text))

    def is_named_by_words(self, words: tuple[str, ...]) -> bool:
        """Return whether these folded words name this concept."""
        # Every hit is a word containing a stem: most words are rejected here.
        text = " ".join(words)
        if not any(stem in text for stem in self._stems):
            return False
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


# Kinship ----------------------------------------------------------------------
# Whole words with every form, so compounds keep their own meaning: a
# "Großtante" is no "Tante", an "Urgroßmutter" no "Großmutter". Savta, Saba,
# Ima, Abba and Doda are what Israeli households call them in Hebrew.

_KINSHIP = (
    Concept(
        id="grandmother",
        name_en="grandmother",
        name_de="Großmutter",
        whole_words=(
            "Oma",
            "Omas",
            "Omi",
            "Omis",
            "Großmutter",
            "Großmütter",
            "Großmama",
            "grandma",
            "grandmas",
            "grandmother",
            "grandmothers",
            "granny",
            "grannie",
            "gran",
            "nana",
            "savta",
        ),
    ),
    Concept(
        id="grandfather",
        name_en="grandfather",
        name_de="Großvater",
        whole_words=(
            "Opa",
            "Opas",
            "Opi",
            "Großvater",
            "Großväter",
            "Großpapa",
            "grandpa",
            "grandpas",
            "grandfather",
            "grandfathers",
            "granddad",
            "grandad",
            "gramps",
            "saba",
        ),
    ),
    Concept(
        id="mother",
        name_en="mother",
        name_de="Mutter",
        whole_words=(
            "Mutter",
            "Mütter",
            "Mama",
            "Mami",
            "Mutti",
            "mom",
            "mommy",
            "mum",
            "mummy",
            "mother",
            "mothers",
            "ima",
        ),
        excluded=("mother in law",),
    ),
    Concept(
        id="father",
        name_en="father",
        name_de="Vater",
        whole_words=(
            "Vater",
            "Väter",
            "Papa",
            "Papi",
            "Vati",
            "dad",
            "daddy",
            "father",
            "fathers",
            "abba",
        ),
        excluded=("father in law",),
    ),
    Concept(
        id="parents",
        name_en="parents",
        name_de="Eltern",
        whole_words=("Eltern", "Elternteil", "parent", "parents"),
    ),
    Concept(
        id="son",
        name_en="son",
        name_de="Sohn",
        whole_words=("Sohn", "Söhne", "son", "sons"),
        excluded=("son in law",),
    ),
    Concept(
        id="daughter",
        name_en="daughter",
        name_de="Tochter",
        whole_words=("Tochter", "Töchter", "daughter", "daughters"),
        excluded=("daughter in law",),
    ),
    Concept(
        id="brother",
        name_en="brother",
        name_de="Bruder",
        whole_words=("Bruder", "Brüder", "brother", "brothers"),
        excluded=("brother in law",),
    ),
    Concept(
        id="sister",
        name_en="sister",
        name_de="Schwester",
        whole_words=("Schwester", "Schwestern", "sister", "sisters"),
        excluded=("sister in law",),
    ),
    Concept(
        id="uncle",
        name_en="uncle",
        name_de="Onkel",
        whole_words=("Onkel", "Onkels", "uncle", "uncles", "dod"),
    ),
    Concept(
        id="aunt",
        name_en="aunt",
        name_de="Tante",
        whole_words=("Tante", "Tanten", "aunt", "aunts", "auntie", "aunty", "doda"),
    ),
    Concept(
        id="cousin",
        name_en="cousin",
        name_de="Cousin",
        whole_words=(
            "Cousin",
            "Cousins",
            "Cousine",
            "Cousinen",
            "Kusine",
            "Kusinen",
            "Vetter",
            "cousin",
            "cousins",
        ),
    ),
    Concept(
        id="nephew",
        name_en="nephew",
        name_de="Neffe",
        whole_words=("Neffe", "Neffen", "nephew", "nephews"),
    ),
    Concept(
        id="niece",
        name_en="niece",
        name_de="Nichte",
        whole_words=("Nichte", "Nichten", "niece", "nieces"),
    ),
    Concept(
        id="grandchild",
        name_en="grandchild",
        name_de="Enkel",
        whole_words=(
            "Enkel",
            "Enkelin",
            "Enkelinnen",
            "Enkelkind",
            "Enkelkinder",
            "Enkelsohn",
            "Enkeltochter",
            "grandchild",
            "grandchildren",
            "grandson",
            "grandsons",
            "granddaughter",
            "granddaughters",
            "grandkid",
            "grandkids",
        ),
    ),
    Concept(
        id="mother_in_law",
        name_en="mother-in-law",
        name_de="Schwiegermutter",
        keywords=("mother in law",),
        whole_words=("Schwiegermutter", "Schwiegermama"),
    ),
    Concept(
        id="father_in_law",
        name_en="father-in-law",
        name_de="Schwiegervater",
        keywords=("father in law",),
        whole_words=("Schwiegervater", "Schwiegerpapa"),
    ),
    Concept(
        id="brother_in_law",
        name_en="brother-in-law",
        name_de="Schwager",
        keywords=("brother in law",),
        whole_words=("Schwager", "Schwäger"),
    ),
    Concept(
        id="sister_in_law",
        name_en="sister-in-law",
        name_de="Schwägerin",
        keywords=("sister in law",),
        whole_words=("Schwägerin", "Schwägerinnen"),
    ),
    Concept(
        id="son_in_law",
        name_en="son-in-law",
        name_de="Schwiegersohn",
        keywords=("son in law",),
        whole_words=("Schwiegersohn", "Schwiegersöhne"),
    ),
    Concept(
        id="daughter_in_law",
        name_en="daughter-in-law",
        name_de="Schwiegertochter",
        keywords=("daughter in law",),
        whole_words=("Schwiegertochter", "Schwiegertöchter"),
    ),
    Concept(
        id="godmother",
        name_en="godmother",
        name_de="Patentante",
        whole_words=(
            "Patentante",
            "Patentanten",
            "Patin",
            "Taufpatin",
            "godmother",
            "godmothers",
        ),
    ),
    Concept(
        id="godfather",
        name_en="godfather",
        name_de="Patenonkel",
        whole_words=(
            "Patenonkel",
            "Pate",
            "Taufpate",
            "godfather",
            "godfathers",
        ),
    ),
    Concept(
        id="godchild",
        name_en="godchild",
        name_de="Patenkind",
        whole_words=(
            "Patenkind",
            "Patenkinder",
            "Patensohn",
            "Patentochter",
            "godchild",
            "godson",
            "goddaughter",
        ),
    ),
    Concept(
        id="stepmother",
        name_en="stepmother",
        name_de="Stiefmutter",
        whole_words=("Stiefmutter", "stepmother", "stepmom", "stepmum"),
    ),
    Concept(
        id="stepfather",
        name_en="stepfather",
        name_de="Stiefvater",
        whole_words=("Stiefvater", "stepfather", "stepdad"),
    ),
    Concept(
        id="husband",
        name_en="husband",
        name_de="Ehemann",
        whole_words=("Ehemann", "Gatte", "husband", "hubby"),
    ),
    Concept(
        id="wife",
        name_en="wife",
        name_de="Ehefrau",
        whole_words=("Ehefrau", "Gattin", "wife"),
    ),
    Concept(
        id="partner",
        name_en="partner",
        name_de="Partner",
        whole_words=(
            "Partner",
            "Partnerin",
            "Lebensgefährte",
            "Lebensgefährtin",
            "Lebenspartner",
            "Lebenspartnerin",
            "partner",
        ),
    ),
    Concept(
        id="fiance",
        name_en="fiancé",
        name_de="Verlobte",
        whole_words=("Verlobter", "Verlobte", "fiancé", "fiancée"),
    ),
)

# Social ties -------------------------------------------------------------------

_SOCIAL = (
    Concept(
        id="friend",
        name_en="friend",
        name_de="Freund",
        keywords=("buddy", "buddies"),
        # Friends of a kind: Schulfreundin, Segelfreund, school friend, boyfriend.
        compound_parts=("freund", "friend"),
        whole_words=("pal", "pals"),
        excluded=("freundlich", "friendly", "freundschaft", "friendship"),
    ),
    Concept(
        id="acquaintance",
        name_en="acquaintance",
        name_de="Bekannte",
        whole_words=(
            "Bekannte",
            "Bekannter",
            "Bekannten",
            "acquaintance",
            "acquaintances",
        ),
    ),
    Concept(
        id="neighbour",
        name_en="neighbour",
        name_de="Nachbar",
        keywords=("Nachbar", "neighbour", "neighbor"),
    ),
    Concept(
        id="colleague",
        name_en="colleague",
        name_de="Kollege",
        keywords=("Kollege", "Kollegin", "colleague", "coworker", "co worker"),
        whole_words=("workmate", "workmates"),
    ),
    Concept(
        id="boss",
        name_en="boss",
        name_de="Chef",
        whole_words=(
            "Chef",
            "Chefin",
            "Chefs",
            "Chefinnen",
            "Vorgesetzte",
            "Vorgesetzter",
            "boss",
            "bosses",
            "supervisor",
        ),
    ),
    Concept(
        id="teacher",
        name_en="teacher",
        name_de="Lehrer",
        # Klassenlehrerin, Klavierlehrer, music teacher.
        compound_parts=("lehrer", "teacher"),
    ),
    Concept(
        id="educator",
        name_en="nursery teacher",
        name_de="Erzieher",
        keywords=(
            "Erzieher",
            "kindergarten teacher",
            "nursery teacher",
            "preschool teacher",
        ),
    ),
    Concept(
        id="coach",
        name_en="coach",
        name_de="Trainer",
        # Fußballtrainer, Schwimmtrainerin, swim coach.
        compound_parts=("trainer", "coach"),
    ),
    Concept(
        id="tutor",
        name_en="tutor",
        name_de="Nachhilfe",
        keywords=("Nachhilfe", "tutor"),
    ),
    Concept(
        id="babysitter",
        name_en="babysitter",
        name_de="Babysitter",
        keywords=("Babysitter", "baby sitter", "Kinderfrau", "nanny"),
        whole_words=("nannies",),
    ),
    Concept(
        id="caregiver",
        name_en="caregiver",
        name_de="Pflegekraft",
        keywords=(
            "Pflegekraft",
            "Pflegerin",
            "Pfleger",
            "Pflegedienst",
            "caregiver",
            "carer",
        ),
    ),
)

# Trades and services ----------------------------------------------------------
# The eleven marked `provider` are find_known_provider's categories.

_TRADES = (
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
        id="pharmacy",
        name_en="pharmacy",
        name_de="Apotheke",
        keywords=("Apotheke", "Apotheker", "Apothekerin", "pharmacy", "pharmacist"),
        compound_parts=("apotheke",),
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
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
        provider=True,
    ),
    Concept(
        id="plumber",
        name_en="plumber",
        name_de="Klempner",
        keywords=("plumber", "plumbing"),
        # Sanitärinstallateur, Gas-Wasser-Installateur; an electrician's
        # "Elektroinstallateur" is no plumber.
        compound_parts=("klempner", "installateur", "spengler"),
        excluded=("elektroinstallateur",),
    ),
    Concept(
        id="heating_engineer",
        name_en="heating engineer",
        name_de="Heizungsbauer",
        keywords=("Heizungsbauer", "Heizungsinstallateur", "heating engineer"),
        whole_words=("HVAC",),
    ),
    Concept(
        id="electrician",
        name_en="electrician",
        name_de="Elektriker",
        keywords=("Elektriker", "Elektroinstallateur", "electrician"),
    ),
    Concept(
        id="painter",
        name_en="painter",
        name_de="Maler",
        keywords=("Malerbetrieb", "Malermeister", "Anstreicher", "painter"),
        whole_words=("Maler", "Malerin", "decorator"),
    ),
    Concept(
        id="carpenter",
        name_en="carpenter",
        name_de="Tischler",
        keywords=("Tischler", "Schreiner", "carpenter", "joiner"),
    ),
    Concept(
        id="glazier",
        name_en="glazier",
        name_de="Glaser",
        keywords=("Glaserei", "glazier"),
        whole_words=("Glaser", "Glaserin"),
    ),
    Concept(
        id="roofer",
        name_en="roofer",
        name_de="Dachdecker",
        keywords=("Dachdecker", "roofer", "roofing"),
    ),
    Concept(
        id="chimney_sweep",
        name_en="chimney sweep",
        name_de="Schornsteinfeger",
        keywords=("Kaminkehrer", "Rauchfangkehrer", "chimney sweep"),
        # Bezirksschornsteinfeger.
        compound_parts=("schornsteinfeger",),
    ),
    Concept(
        id="gardener",
        name_en="gardener",
        name_de="Gärtner",
        keywords=("Gärtner", "Gartenbau", "gardener", "landscaper"),
    ),
    Concept(
        id="locksmith",
        name_en="locksmith",
        name_de="Schlüsseldienst",
        keywords=("Schlüsseldienst", "locksmith"),
    ),
    Concept(
        id="caretaker",
        name_en="caretaker",
        name_de="Hausmeister",
        keywords=("Hausmeister", "caretaker", "janitor"),
    ),
    Concept(
        id="cleaner",
        name_en="cleaner",
        name_de="Reinigungskraft",
        keywords=(
            "Reinigung",
            "Reinigungskraft",
            "Putzfrau",
            "Putzhilfe",
            "Haushaltshilfe",
            "cleaner",
            "cleaning",
        ),
        # Fensterreinigung, Gebäudereinigung; teeth are the dentist's.
        compound_parts=("reinigung",),
        excluded=("zahnreinigung",),
    ),
    Concept(
        id="landlord",
        name_en="landlord",
        name_de="Vermieter",
        keywords=("Vermieter", "landlord", "landlady"),
    ),
    Concept(
        id="property_manager",
        name_en="property manager",
        name_de="Hausverwaltung",
        keywords=(
            "Hausverwaltung",
            "Hausverwalter",
            "property management",
            "property manager",
        ),
    ),
    Concept(
        id="notary",
        name_en="notary",
        name_de="Notar",
        keywords=("Notariat", "notary"),
        whole_words=("Notar", "Notarin"),
    ),
    Concept(
        id="physiotherapist",
        name_en="physiotherapist",
        name_de="Physiotherapeut",
        keywords=(
            "Physiotherapeut",
            "Physiotherapie",
            "Krankengymnast",
            "physiotherapist",
            "physiotherapy",
            "physical therapist",
        ),
        whole_words=("Physio",),
    ),
    Concept(
        id="midwife",
        name_en="midwife",
        name_de="Hebamme",
        keywords=("Hebamme", "midwife", "midwives"),
    ),
    Concept(
        id="baker",
        name_en="baker",
        name_de="Bäcker",
        keywords=("Bäcker", "Bäckerei", "baker", "bakery"),
    ),
    Concept(
        id="insurance",
        name_en="insurance",
        name_de="Versicherung",
        keywords=("Versicherung", "Krankenkasse", "insurance"),
    ),
)

VOCABULARY: tuple[Concept, ...] = (*_KINSHIP, *_SOCIAL, *_TRADES)

_BY_ID = {concept.id: concept for concept in VOCABULARY}


def get_concept(concept_id: str) -> Concept:
    """Return the concept with the given id, or raise KeyError."""
    return _BY_ID[concept_id]


def concepts_named_by(text: str) -> tuple[str, ...]:
    """Return the ids of the concepts a relation, an alias or a query names."""
    return _concepts_of_words(fold_words(text))


# Relations repeat across an address book and queries repeat across calls.
@lru_cache(maxsize=4096)
def _concepts_of_words(words: tuple[str, ...]) -> tuple[str, ...]:
    if not words:
        return ()
    return tuple(
        concept.id for concept in VOCABULARY if concept.is_named_by_words(words)
    )
