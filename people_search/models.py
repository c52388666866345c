"""Name embeddings, kept in their own narrow table beside the rows they name."""

from django.db import models
from pgvector.django import HnswIndex, VectorField

from household.models import Household
from people_search.embeddings import DIMENSIONS


class Subject(models.TextChoices):
    """What kind of row a name embedding names."""

    MEMBER = "member"
    LEAD = "lead"
    CONTACT = "contact"


class NameEmbedding(models.Model):
    """The embedding of a member's, lead's or contact's name, or of one of its words.

    A vector is 1 KB; kept out of the hot tables, it does not slow every scan
    of contacts or memberships that never looks at it.
    """

    household = models.ForeignKey(Household, on_delete=models.CASCADE)
    subject = models.CharField(max_length=8, choices=Subject.choices)
    subject_id = models.BigIntegerField()
    name = models.CharField(
        max_length=300, help_text="The folded name, or word of it, embedded."
    )
    embedding = VectorField(dimensions=DIMENSIONS)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "subject_id", "name"], name="name_embedding_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(subject__in=Subject.values),
                name="name_embedding_subject_known",
            ),
        ]
        indexes = [
            models.Index(fields=["household", "subject"]),
            HnswIndex(
                fields=["embedding"],
                name="name_embedding_hnsw",
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject} {self.subject_id}: {self.name}"
