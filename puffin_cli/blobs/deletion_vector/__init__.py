"""Deletion vectors: blob type ``deletion-vector-v1`` (Iceberg v3).

- :mod:`.layout`: the blob's bytes (sizes, limits) and the layout of a walked vector;
- :mod:`.codec`: walking and decoding the bytes, every error with a code and an offset;
- :mod:`.containers`: ranges and positions out of the decoded containers, with numpy;
- :mod:`.encoding`: a bitmap as the bytes Iceberg Java writes;
- :mod:`.positions_text`: positions as decimal text, out and in, and position specs;
- :mod:`.handler`: the summary ``inspect`` shows and the findings ``validate`` reports.

This module re-exports the public surface; the blob handler registered for the type is
:data:`HANDLER`.
"""

from __future__ import annotations

from puffin_cli.blobs.deletion_vector.codec import (
    decode_deletion_vector,
    deletion_vector_bitmap,
    vector_of,
)
from puffin_cli.blobs.deletion_vector.containers import (
    count_ranges,
    iter_position_chunks,
    iter_ranges,
)
from puffin_cli.blobs.deletion_vector.encoding import (
    dv_blob_properties,
    encode_deletion_vector,
    encode_vector,
)
from puffin_cli.blobs.deletion_vector.handler import (
    HANDLER,
    DeletionVectorSummary,
    check_deletion_vector,
    summarize_deletion_vector,
)
from puffin_cli.blobs.deletion_vector.layout import (
    DV_MAGIC,
    LENGTH_BYTES,
    MAX_POSITION,
    DeletionVector,
)
from puffin_cli.blobs.deletion_vector.positions_text import (
    bitmap_from_positions_file,
    bitmap_from_ranges,
    format_positions,
    parse_position_spec,
    write_positions_text,
)

__all__ = [
    "DV_MAGIC",
    "HANDLER",
    "LENGTH_BYTES",
    "MAX_POSITION",
    "DeletionVector",
    "DeletionVectorSummary",
    "bitmap_from_positions_file",
    "bitmap_from_ranges",
    "check_deletion_vector",
    "count_ranges",
    "decode_deletion_vector",
    "deletion_vector_bitmap",
    "dv_blob_properties",
    "encode_deletion_vector",
    "encode_vector",
    "format_positions",
    "iter_position_chunks",
    "iter_ranges",
    "parse_position_spec",
    "summarize_deletion_vector",
    "vector_of",
    "write_positions_text",
]
