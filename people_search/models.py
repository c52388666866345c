"""People search's models live in its engine; Django finds them through here."""

from people_search.engine.models import NameWord, NameWordUse, Subject

__all__ = ["NameWord", "NameWordUse", "Subject"]
