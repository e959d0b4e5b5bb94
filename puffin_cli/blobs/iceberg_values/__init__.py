"""Iceberg primitive types and values: :mod:`.types` (a type name parsed, range checks),
:mod:`.text` (values read from text) and :mod:`.binary` (Iceberg's single-value
serialization, one value at a time or vectorized). This module re-exports the public surface.
"""

from __future__ import annotations

from puffin_cli.blobs.iceberg_values.binary import (
    serialize_array,
    serialize_value,
    serialize_values,
)
from puffin_cli.blobs.iceberg_values.text import parse_value, parse_values
from puffin_cli.blobs.iceberg_values.types import IcebergType, IcebergValue

__all__ = ["IcebergType", "IcebergValue", "parse_value", "parse_values", "serialize_array",
           "serialize_value", "serialize_values"]
