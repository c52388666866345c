"""Words each member taught Yorik for the people they mean, and how they are used.

A member's word ("Mutter", "meine Frau") names a contact or another member
for that member's queries only; a name choice says which contact they meant
by a name ("Hans" is Hans Meier). They are taught by the remember_relation
skill or by a pick on a contact picker card, and find_person reads the
caller's words before anything else (`learned_rows`).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from contacts.models import Contact
from household.models import Household, Membership, UserProfile
from people_search.engine.query import Query, parse_query
from people_search.engine.sql import Statement, compose, sql
from people_search.engine.text import fold_words
from people_search.models import PersonalWord, PersonalWordKind
from yorik.models import Card

# The card kind whose picks teach (contacts.cards.CONTACT_PICKER).
PICKER_KIND = "contact_picker"


@dataclass(frozen=True)
class WordKey:
    """How a word is compared with a query: its folded phrase and its concepts.

    The concepts are kept only when every term of the word names one, so
    "Mama" matches "Mutter" while "Oma Hamburg" matches only itself.
    """

    phrase: str
    concepts: tuple[str, ...]


def word_key(query: Query) -> WordKey:
    """Return the key of a parsed word or query."""
    concepts: tuple[str, ...] = ()
    if query.terms and all(term.concepts for term in query.terms):
        concepts = tuple(sorted({c for term in query.terms for c in term.concepts}))
    return WordKey(phrase=query.phrase, concepts=concepts)


def parse_word(word: str, *, household: Household) -> WordKey:
    """Return a word's key; a word without a letter raises a ValidationError."""
    key = word_key(parse_query(word, region=household.default_region))
    if not any(char.isalpha() for char in key.phrase):
        raise ValidationError({"word": _("A word needs at least one letter.")})
    return key


@dataclass(frozen=True)
class Target:
    """Whom a word names: a contact or a member, as find_person's rows say it."""

    source: str
    id: int
    name: str

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "id": self.id, "name": self.name}


def find_target(
    *, speaker: Membership, contact_id: int | None, user_id: int | None
) -> Target:
    """Return the household's contact or live member a word is for.

    Another household's id is as unknown as a missing one (ObjectDoesNotExist);
    the speaker's own profile is refused with a ValidationError.
    """
    household = speaker.household
    if contact_id is not None:
        contact = (
            Contact.objects.filter(household=household, pk=contact_id)
            .values("display_name")
            .first()
        )
        if contact is None:
            raise Contact.DoesNotExist(_("No such contact."))
        return Target("contacts", contact_id, contact["display_name"])
    if user_id == speaker.profile_id:
        raise ValidationError(
            {"user_id": _("Your own profile needs no word of yours.")}
        )
    member = (
        Membership.objects.live(household=household)
        .filter(profile_id=user_id)
        .select_related("profile")
        .first()
    )
    if member is None:
        raise UserProfile.DoesNotExist(_("No such member of the household."))
    return Target("household", member.profile_id, str(member.profile))


def _target_filter(target: Target) -> dict[str, int]:
    if target.source == "contacts":
        return {"contact_id": target.id}
    return {"person_id": target.id}


@transaction.atomic
def remember_word(
    *, speaker: Membership, word: str, target: Target, forget: bool = False
) -> bool:
    """Store the speaker's word for the target, or remove it when `forget`.

    Return whether the word is remembered now. Storing it twice keeps one;
    forgetting removes the word in either of its kinds.
    """
    key = parse_word(word, household=speaker.household)
    words = PersonalWord.objects.filter(
        household_id=speaker.household_id,
        member=speaker,
        phrase=key.phrase,
        **_target_filter(target),
    )
    if forget:
        words.delete()
        _note_words(speaker)
        return False
    if not words.filter(kind=PersonalWordKind.RELATION).exists():
        _store(
            speaker,
            kind=PersonalWordKind.RELATION,
            word=word,
            key=key,
            target=_target_filter(target),
        )
    return True


def _store(
    speaker: Membership,
    *,
    kind: str,
    word: str,
    key: WordKey,
    target: dict[str, int],
    card_id: Any = None,
) -> PersonalWord:
    stored = PersonalWord.objects.create(
        household_id=speaker.household_id,
        member=speaker,
        kind=kind,
        word=word,
        phrase=key.phrase,
        concepts=list(key.concepts),
        card_id=card_id,
        **target,
    )
    if not speaker.has_personal_words:
        Membership.objects.filter(
            household_id=speaker.household_id, pk=speaker.pk
        ).update(has_personal_words=True)
        speaker.has_personal_words = True
    return stored


def _note_words(speaker: Membership) -> None:
    """Record whether the speaker still has words, after some were removed."""
    has_words = PersonalWord.objects.filter(
        household_id=speaker.household_id, member=speaker
    ).exists()
    if has_words != speaker.has_personal_words:
        Membership.objects.filter(
            household_id=speaker.household_id, pk=speaker.pk
        ).update(has_personal_words=has_words)
        speaker.has_personal_words = has_words


# -- Picks teach ----------------------------------------------------------------


def _speaker_of(card: Card) -> Membership | None:
    """Return the acting member whose question the card answers."""
    if card.created_by_id is None:
        return None
    return (
        Membership.objects.acting(household=card.household)
        .filter(profile_id=card.created_by_id)
        .select_related("household", "profile")
        .first()
    )


def _names_of(contact: Contact) -> set[str]:
    return {
        word
        for name in (contact.display_name, contact.first_name, contact.last_name)
        for word in fold_words(name or "")
    }


@transaction.atomic
def learn_from_pick(card: Card) -> PersonalWord | None:
    """Teach the card's creator what their query meant: YORIK_PICK_TEACHER.

    A query naming a word of the picked contact's names ("Hans") becomes the
    member's choice for that name, any other ("Oma") their relation word for
    the contact. What an earlier pick of the same card taught is replaced.
    Cards without a query, other kinds, answers other than a contact and
    members who no longer act teach nothing. Return what was learned.
    """
    query = card.payload.get("query", "") if card.kind == PICKER_KIND else ""
    speaker = _speaker_of(card) if query else None
    if speaker is None:
        return None
    PersonalWord.objects.filter(
        household_id=card.household_id, member=speaker, card_id=card.pk
    ).delete()
    contact = card.picked_contact
    if contact is None:  # None of these, or a member: nothing to learn.
        return None
    parsed = parse_query(query, region=card.household.default_region)
    key = word_key(parsed)
    if not any(char.isalpha() for char in key.phrase):
        return None
    names = _names_of(contact)
    kind = (
        PersonalWordKind.NAME
        if any(word in names for term in parsed.terms for word in term.words)
        else PersonalWordKind.RELATION
    )
    mine = PersonalWord.objects.filter(
        household_id=card.household_id, member=speaker, phrase=key.phrase
    )
    if kind == PersonalWordKind.NAME:
        mine.filter(kind=kind).delete()
    else:
        mine.filter(kind=kind, contact=contact).delete()
    return _store(
        speaker,
        kind=kind,
        word=query[: PersonalWord._meta.get_field("word").max_length].strip(),
        key=key,
        target={"contact_id": contact.pk},
        card_id=card.pk,
    )


def in_household(household_id: int) -> Q:
    """Return that a word's member and targets are of the household too.

    The member and the person are asked of in subqueries, not joined: on
    Citus their tables stay on the coordinator (yorik.tenancy.joins_apart).
    """
    members = Membership.objects.filter(
        household_id=household_id, profile__household_id=household_id
    ).values("pk")
    profiles = UserProfile.objects.filter(household_id=household_id).values("pk")
    return (
        Q(member_id__in=members)
        & (Q(contact__isnull=True) | Q(contact__household_id=household_id))
        & (Q(person__isnull=True) | Q(person_id__in=profiles))
    )


def lesson_of_card(card: Card) -> PersonalWord | None:
    """Return what the card's pick taught and is still remembered, or None."""
    if card.picked_at is None or card.kind != PICKER_KIND:
        return None
    return (
        PersonalWord.objects.filter(
            in_household(card.household_id),
            household_id=card.household_id,
            card_id=card.pk,
        )
        .select_related("contact")
        .first()
    )


@transaction.atomic
def forget_lesson(card: Card) -> bool:
    """Forget what the card's pick taught; return whether anything was."""
    lessons = PersonalWord.objects.filter(
        in_household(card.household_id),
        household_id=card.household_id,
        card_id=card.pk,
    ).prefetch_related("member")
    members = {lesson.member for lesson in lessons}
    deleted, _ = lessons.delete()
    for member in members:
        _note_words(member)
    return bool(deleted)


# -- Seen and governed ----------------------------------------------------------


def words_of(member: Membership) -> list[PersonalWord]:
    """Return the member's words and name choices, by word."""
    return list(
        PersonalWord.objects.filter(
            in_household(member.household_id),
            household_id=member.household_id,
            member=member,
        )
        .select_related("contact")
        .prefetch_related("person")
        .order_by("word", "pk")
    )


@transaction.atomic
def delete_word(*, member: Membership, word_id: int) -> bool:
    """Delete one of the member's words; another's is left alone (False)."""
    deleted, _ = PersonalWord.objects.filter(
        household_id=member.household_id, member=member, pk=word_id
    ).delete()
    _note_words(member)
    return bool(deleted)


# -- find_person's learned lane -------------------------------------------------

_LEARNED = """\
WITH people AS MATERIALIZED (
    SELECT m.role, m.profile_id, p.first_name, p.last_name, p.email,
        p.sort_name AS person_sort_name
    FROM household_membership AS m JOIN user_profiles AS p ON p.id = m.profile_id
    WHERE m.household_id = {household}::bigint
        AND p.household_id = {household}::bigint AND {member_filters}
)
SELECT w.kind AS learned_kind, contact.*, person.*
FROM personal_words AS w
LEFT JOIN LATERAL (
    SELECT {contact_details}
    FROM contacts_contact AS c
    WHERE c.id = w.contact_id AND c.household_id = {household}::bigint
        AND {contact_filters}
) AS contact ON TRUE
LEFT JOIN people AS person ON person.profile_id = w.person_id
WHERE w.household_id = {household}::bigint AND w.member_id = {member}
    AND {targets}
    AND (w.phrase = {phrase}
        OR (w.kind = {relation} AND w.concepts = {concepts}::varchar[]
            AND cardinality({concepts}::varchar[]) > 0))
ORDER BY w.id
"""


def learned_statement(
    *,
    household_id: int,
    member_id: int,
    key: WordKey,
    contact_details: Statement,
    contact_filters: Statement | None,
    member_filters: Statement | None,
) -> Statement:
    """Return the statement reading the member's words for a query with the
    rows they name, on the household in every table it reads.

    A source left out (its filters None) gives no row: its words are not
    read. (Not a FALSE inside a household table's join: Citus would find no
    shard for that table and could no longer send the statement to one
    node.) The members a word may name are the household's, read first
    (`people`) and not joined to the words: on Citus their tables stay on
    the coordinator (yorik.tenancy.joins_apart), and Citus sends that small
    set along with the statement to the words' node.
    """
    targets = [
        *([] if contact_filters else ["w.contact_id IS NULL"]),
        *([] if member_filters else ["w.person_id IS NULL"]),
    ]
    return compose(
        _LEARNED,
        contact_details=contact_details,
        contact_filters=contact_filters or sql("TRUE"),
        member_filters=member_filters or sql("FALSE"),
        targets=sql(" AND ".join(targets) or "TRUE"),
        household=household_id,
        member=member_id,
        phrase=key.phrase,
        relation=PersonalWordKind.RELATION.value,
        concepts=list(key.concepts),
    )


def learned_rows(
    *,
    speaker: Membership | None,
    query: Query | None,
    read: Callable[[WordKey], Sequence[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Return the rows the speaker's words name for the query, in one SELECT.

    No SELECT at all when there is no query or the speaker taught nothing.
    `read` runs the learned statement for a key and returns its values.
    """
    if speaker is None or query is None or query.is_empty:
        return []
    if not speaker.has_personal_words:
        return []
    return list(read(word_key(query)))
