"""The write pipeline of ``puffin write``: :mod:`.plan` (what to write), :mod:`.spec` (the JSON
write spec), :mod:`.parquet` (Parquet columns to sketch) and :mod:`.build` (building each blob
and streaming it into the Puffin writer)."""
