"""Name embeddings: vectors that put spelling variants of a name close together.

The default provider runs offline with no model: hashed character n-grams of
each folded word plus its phonetic codes (Metaphone for any name, Kölner
Phonetik for German ones), so Meier/Mayer/Maier, Schmidt/Schmitt, Cohen/Kohen
and Jon/John land close. Setting VOYAGE_API_KEY switches to Voyage AI.
"""

import hashlib
import logging
import math
import re
from collections.abc import Sequence
from functools import cache
from typing import Protocol

import cologne_phonetics
import jellyfish
from django.conf import settings

from people_search.engine.text import name_words

logger = logging.getLogger(__name__)

DIMENSIONS = 256

_VOWELS = re.compile(r"[aeiouyh]")
_DOUBLED = re.compile(r"(.)\1+")
# Phonetic codes say more about how a name sounds than any single n-gram.
_GRAM_WEIGHT = 1.0
_PHONETIC_WEIGHT = 2.5


class EmbeddingError(RuntimeError):
    """The provider could not embed the names."""


class EmbeddingProvider(Protocol):
    def embed(self, names: Sequence[str]) -> list[list[float]]:
        """Return one L2-normalised vector of DIMENSIONS floats per name."""


class NameSoundEmbedder:
    """Embed names offline from their spelling and their sound."""

    def embed(self, names: Sequence[str]) -> list[list[float]]:
        return [name_sound_vector(name) for name in names]


def name_features(name: str) -> dict[str, float]:
    """Return the weighted features a name's vector is hashed from."""
    features: dict[str, float] = {}
    for word in name_words(name):
        padded = f"^{word}$"
        for size in (2, 3):
            for start in range(len(padded) - size + 1):
                gram = f"g:{padded[start : start + size]}"
                features[gram] = features.get(gram, 0.0) + _GRAM_WEIGHT
        codes = {f"m:{jellyfish.metaphone(word)}", f"s:{consonant_skeleton(word)}"}
        codes |= {f"k:{code}" for _, code in cologne_phonetics.encode(word) if code}
        for code in codes:
            features[code] = features.get(code, 0.0) + _PHONETIC_WEIGHT
    return features


def consonant_skeleton(word: str) -> str:
    """Return the word's consonants with doubles collapsed: Meier, Mayer -> "mr"."""
    return _DOUBLED.sub(r"\1", _VOWELS.sub("", word)) or word


def name_sound_vector(name: str) -> list[float]:
    """Return the L2-normalised, signed feature-hashed vector of a name."""
    vector = [0.0] * DIMENSIONS
    for feature, weight in name_features(name).items():
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % DIMENSIONS
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[bucket] += sign * weight
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector] if norm else vector


class VoyageEmbedder:
    """Embed names with Voyage AI (needs the optional `voyageai` package)."""

    model = "voyage-3.5-lite"

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key

    def embed(self, names: Sequence[str]) -> list[list[float]]:
        try:
            import voyageai

            client = voyageai.Client(api_key=self.api_key, timeout=5, max_retries=1)
            result = client.embed(
                list(names), model=self.model, output_dimension=DIMENSIONS
            )
        except Exception as error:
            raise EmbeddingError(f"Voyage embedding failed: {error}") from error
        return result.embeddings


@cache
def _provider(voyage_api_key: str) -> EmbeddingProvider:
    if voyage_api_key:
        return VoyageEmbedder(voyage_api_key)
    return NameSoundEmbedder()


def embedding_provider() -> EmbeddingProvider:
    """Return the configured provider: Voyage when keyed, else the offline one."""
    return _provider(settings.VOYAGE_API_KEY)
