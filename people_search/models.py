"""People search's models: the name index's (people_search.index), and the
words each member taught Yorik for the people they mean."""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _

from people_search.index.models import NameWord, NameWordUse, Subject
from yorik.tenancy import HouseholdForeignKey, HouseholdRow

__all__ = ["NameWord", "NameWordUse", "PersonalWord", "PersonalWordKind", "Subject"]


class PersonalWordKind(models.TextChoices):
    # A word of the member's own for someone: "Mutter", "mein Chef".
    RELATION = "relation", _("Relation word")
    # The contact the member meant by a name: "Hans" is Hans Meier.
    NAME = "name", _("Name choice")


class PersonalWord(HouseholdRow):
    """A member's own word for a contact or another member, used only for
    that member's queries.

    `phrase` is the word folded as the engine reads a query (articles and
    possessives dropped) and `concepts` the concepts it names, so "Mama"
    and "Mutter", or "meine Schwiegermutter" and "mother-in-law", are one
    word. A name choice holds one contact per name; a relation word may name
    several people (two grandmothers). Exactly one of contact and person is
    set.
    """

    household = models.ForeignKey(
        "household.Household", on_delete=models.CASCADE, verbose_name=_("household")
    )
    member = models.ForeignKey(
        "household.Membership",
        on_delete=models.CASCADE,
        related_name="personal_words",
        help_text=_("Whose word it is: only their queries use it."),
        verbose_name=_("member"),
    )
    kind = models.CharField(
        max_length=8, choices=PersonalWordKind.choices, verbose_name=_("kind")
    )
    word = models.CharField(max_length=60, verbose_name=_("word"))
    phrase = models.CharField(max_length=200, editable=False)
    concepts = ArrayField(
        models.CharField(max_length=64), default=list, blank=True, editable=False
    )
    contact = HouseholdForeignKey(
        "contacts.Contact",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("contact"),
    )
    person = models.ForeignKey(
        "household.UserProfile",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        help_text=_("Another member of the household."),
        verbose_name=_("person"),
    )
    # The picker card whose pick taught the word, so its page can show and
    # undo the lesson; a plain id, since cards expire and are deleted.
    card_id = models.UUIDField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("learned at"))

    class Meta:
        db_table = "personal_words"
        verbose_name = _("personal word")
        verbose_name_plural = _("personal words")
        ordering = ["word"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=PersonalWordKind.values),
                name="personal_word_kind_known",
            ),
            models.CheckConstraint(
                condition=models.Q(contact__isnull=True)
                ^ models.Q(person__isnull=True),
                name="personal_word_one_target",
            ),
            models.UniqueConstraint(
                fields=["household", "member", "phrase"],
                condition=models.Q(kind=PersonalWordKind.NAME),
                name="personal_word_one_choice_per_name",
            ),
            models.UniqueConstraint(
                fields=["household", "member", "kind", "phrase", "contact"],
                condition=models.Q(contact__isnull=False),
                name="personal_word_contact_unique",
            ),
            models.UniqueConstraint(
                fields=["household", "member", "kind", "phrase", "person"],
                condition=models.Q(person__isnull=False),
                name="personal_word_person_unique",
            ),
        ]
        # find_person reads a member's words by these columns alone.
        indexes = [models.Index(fields=["household", "member"])]

    def __str__(self) -> str:
        return self.word

    @property
    def target_name(self) -> str:
        return str(self.contact.display_name if self.contact_id else self.person)
