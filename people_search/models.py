"""People search's models: the name index's, defined in people_search.index."""

from people_search.index.models import NameWord, NameWordUse, Subject

__all__ = ["NameWord", "NameWordUse", "Subject"]
