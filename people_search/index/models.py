"""Name embeddings, kept in their own narrow tables beside the rows they name."""

from django.db import models
from pgvector.django import HnswIndex, VectorField

from people_search.index.embeddings import DIMENSIONS
from yorik.indexes import household_trigram_index
from yorik.tenancy import HouseholdForeignKey, HouseholdRow


class Subject(models.TextChoices):
    """What kind of row a name belongs to."""

    MEMBER = "member"
    LEAD = "lead"
    CONTACT = "contact"


class NameWord(HouseholdRow):
    """One distinct word of the household's names, with its embedding.

    Each word is embedded once however many names use it: identical vectors
    would both bloat the index and trap its graph walk among themselves. A
    vector is 1 KB; kept out of the hot tables, it does not slow every scan
    of contacts or memberships that never looks at it.
    """

    household = models.ForeignKey("household.Household", on_delete=models.CASCADE)
    word = models.CharField(max_length=150, help_text="A folded word of a name.")
    embedding = VectorField(dimensions=DIMENSIONS)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["household", "word"], name="name_word_unique"
            ),
        ]
        indexes = [
            household_trigram_index("word", "name_word_trgm"),
            HnswIndex(
                fields=["embedding"],
                name="name_word_hnsw",
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return self.word


class NameWordUse(HouseholdRow):
    """A word of the name of one member, lead or contact."""

    household = models.ForeignKey("household.Household", on_delete=models.CASCADE)
    subject = models.CharField(max_length=8, choices=Subject.choices)
    subject_id = models.BigIntegerField()
    word = HouseholdForeignKey(NameWord, on_delete=models.CASCADE, related_name="uses")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["household", "subject", "subject_id", "word"],
                name="name_word_use_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(subject__in=Subject.values),
                name="name_word_use_subject_known",
            ),
        ]
        # A word's rows come from the index alone (an index-only scan): a
        # common word has hundreds of rows, each on a page of its own. The
        # lane's statements name the household too, tested in the index.
        indexes = [
            models.Index(
                fields=["word", "subject", "subject_id"],
                include=["household"],
                name="name_word_use_rows",
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject} {self.subject_id}: {self.word_id}"
