"""Theta sketches: blob type ``apache-datasketches-theta-v1``.

- :mod:`.hashing`: values hashed as DataSketches hashes them, over Iceberg's serialization;
- :mod:`.sketches`: the Alpha sketch and the union Iceberg Java's ``compute_table_stats``
  builds, reproduced byte for byte;
- :mod:`.compact`: the compact form written and read back;
- :mod:`.handler`: the summary ``inspect`` shows and the findings ``validate`` reports.

This module re-exports the public surface; the blob handler registered for the type is
:data:`HANDLER`.
"""

from __future__ import annotations

from puffin_cli.blobs.theta.compact import (
    EMPTY_SKETCH_BYTES,
    MAX_THETA,
    CompactTheta,
    ThetaHeader,
    decode_theta,
    describe,
    read_header,
    serialize_compact,
)
from puffin_cli.blobs.theta.handler import HANDLER, ThetaSummary, check_theta, summarize_theta
from puffin_cli.blobs.theta.hashing import (
    DEFAULT_SEED,
    DEFAULT_SEED_HASH,
    hash_iceberg_values,
    hash_matrix,
    hash_ragged,
    hash_values,
    hash_words,
)
from puffin_cli.blobs.theta.sketches import (
    NOMINAL_ENTRIES,
    AlphaSketch,
    ThetaAccumulator,
    alpha_sketch,
    build_sketch,
    build_theta_blob,
)

__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_SEED_HASH",
    "EMPTY_SKETCH_BYTES",
    "HANDLER",
    "MAX_THETA",
    "NOMINAL_ENTRIES",
    "AlphaSketch",
    "CompactTheta",
    "ThetaAccumulator",
    "ThetaHeader",
    "ThetaSummary",
    "alpha_sketch",
    "build_sketch",
    "build_theta_blob",
    "check_theta",
    "decode_theta",
    "describe",
    "hash_iceberg_values",
    "hash_matrix",
    "hash_ragged",
    "hash_values",
    "hash_words",
    "read_header",
    "serialize_compact",
    "summarize_theta",
]
