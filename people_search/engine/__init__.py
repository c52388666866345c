"""The matching engine: folds, query parsing, phones, name words, similar names.

Pure where it can be and free of the domain: nothing here imports household,
contacts or compose. Its models name other apps' rows by string and its write
functions take plain values, so every app above can use it.
"""
