"""People search's index of the household's names, and its queries for the apps.

What contacts and household use of people search besides the pure engine:
the name words and their embeddings (models, `embeddings`), keeping them in
step with every write (`names`), the similar-name lane that reads them
(`similar`), and the engine's match conditions on a queryset for pages and
admin (`querysets`). It imports no app above it, so every app may use it.
"""
