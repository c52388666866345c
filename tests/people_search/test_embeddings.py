import math
import sys
import types

import pytest

from people_search.index.embeddings import (
    DIMENSIONS,
    EmbeddingError,
    NameSoundEmbedder,
    VoyageEmbedder,
    consonant_skeleton,
    embedding_provider,
    name_sound_vector,
)
from people_search.index.names import embedded_words


def cosine(a, b):
    return sum(
        x * y for x, y in zip(name_sound_vector(a), name_sound_vector(b), strict=True)
    )


def test_vectors_are_normalised_and_sized():
    vector = name_sound_vector("Jürgen Müller")

    assert len(vector) == DIMENSIONS
    assert math.isclose(sum(v * v for v in vector), 1.0)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Meier", "Mayer"),
        ("Maier", "Meyer"),
        ("Schmidt", "Schmitt"),
        ("Cohen", "Kohen"),
        ("Jon", "John"),
        ("Müller", "Mueller"),
        ("Dana Levi", "Levi Dana"),
    ],
)
def test_spelling_variants_land_close(a, b):
    assert cosine(a, b) >= 0.45


@pytest.mark.parametrize(
    ("a", "b"), [("Meier", "Schmidt"), ("Dana Levi", "Thomas Müller")]
)
def test_different_names_stay_apart(a, b):
    assert cosine(a, b) < 0.3


def test_consonant_skeleton():
    assert consonant_skeleton("meier") == consonant_skeleton("mayer") == "mr"


def test_names_are_embedded_word_by_word():
    assert embedded_words("Peter Mayer") == {"peter", "mayer"}
    assert embedded_words("Cher") == {"cher"}
    assert embedded_words("J. R. Ewing") == {"ewing"}
    assert embedded_words("  ") == set()


def test_offline_provider_without_a_voyage_key(settings):
    settings.VOYAGE_API_KEY = ""

    assert isinstance(embedding_provider(), NameSoundEmbedder)


@pytest.fixture
def fake_voyageai(monkeypatch):
    """Stand in for the network client of Voyage AI, the one outside service."""
    calls = []

    class Client:
        def __init__(self, api_key, **options):
            self.api_key = api_key

        def embed(self, texts, **options):
            calls.append((texts, options))
            if self.api_key == "broken":
                raise RuntimeError("503 from Voyage")
            return types.SimpleNamespace(embeddings=[[0.0] * DIMENSIONS for _ in texts])

    monkeypatch.setitem(sys.modules, "voyageai", types.SimpleNamespace(Client=Client))
    return calls


def test_voyage_is_used_when_keyed(settings, fake_voyageai):
    settings.VOYAGE_API_KEY = "secret"

    provider = embedding_provider()
    vectors = provider.embed(["Dana Levi"])

    assert isinstance(provider, VoyageEmbedder)
    assert len(vectors[0]) == DIMENSIONS
    assert fake_voyageai[0][1]["output_dimension"] == DIMENSIONS


def test_voyage_failures_become_embedding_errors(fake_voyageai):
    with pytest.raises(EmbeddingError, match="503"):
        VoyageEmbedder("broken").embed(["Dana"])
