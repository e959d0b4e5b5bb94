"""Analyses over Puffin files and the Iceberg tables that register them, each returning the
result dataclasses render/ shows and docs/json.md documents: a file's contents
(:mod:`.inspection`), its findings (:mod:`.validate`, with engine :mod:`.profiles`; Paimon BLOB
files in :mod:`.paimon`), many files' findings (:mod:`.scan`), two files compared
(:mod:`.puffin_diff`), tables (:mod:`.table`), their statistics (:mod:`.stats`), repairs
(:mod:`.repair`), writing (:mod:`.write`) and catalogs (:mod:`.catalog`)."""
