"""The matching engine, pure: what a query asks for and the SQL that answers it.

Folds (`text`), query parsing (`query`), phones, nicknames, the relation
vocabulary, the match tiers and why a row matched (`matching`), the
statements every search runs (`statements`) and the similar-name lane's
scoring and statements (`similar`). It imports no Django, no app and nothing
that reaches a network: it returns SQL text and parameters, and the apps run
them (people_search.selectors, people_search.index).
"""
