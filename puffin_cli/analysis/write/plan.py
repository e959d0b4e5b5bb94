"""What ``puffin write`` is asked to write: a :class:`WritePlan` of :class:`BlobSpec` objects (one
source each: raw payload, Theta sketch from values or Parquet columns, deletion vector, copied
blob), what writing it reports (:class:`WriteSummary`), and the small parsers the JSON spec
(:mod:`.spec`) and the CLI share.

Defaults are what Iceberg Java writes: plain footer, Theta blobs zstd-compressed with an ``ndv``
property, deletion vectors uncompressed with ``referenced-data-file`` and ``cardinality``,
snapshot-id and sequence-number -1, created-by ``puffin-cli <version>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from puffin_cli import CREATED_BY as DEFAULT_CREATED_BY
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.spec import (
    CODEC_LZ4,
    CODEC_ZSTD,
    DV_BLOB_TYPE,
    KNOWN_CODECS,
    ROW_POSITION_FIELD_ID,
    THETA_BLOB_TYPE,
)

NO_COMPRESSION = "none"
COMPRESSION_CHOICES = (*KNOWN_CODECS, NO_COMPRESSION)


# What Iceberg Java writes: Theta blobs zstd, everything else (and every DV) stored as is.
DEFAULT_THETA_CODEC = CODEC_ZSTD


JAVA_CANNOT_READ_LZ4 = "Iceberg Java cannot read it (its Puffin reader supports zstd only)"


# --------------------------------------------------------------------------------------------
# The plan


@dataclass(frozen=True)
class RawPayload:
    """Bytes taken as is: from ``path``, or ``data`` given inline."""

    path: str | None = None
    data: bytes | None = None


@dataclass(frozen=True)
class ThetaFromValues:
    """A Theta sketch of values of one Iceberg type: ``values`` already parsed, or the lines of
    ``values_file`` (one value per line). The values form one Spark partition, in this order."""

    iceberg_type: IcebergType
    values: tuple[Any, ...] | None = None
    values_file: str | None = None
    uuid_as_string: bool = False


@dataclass(frozen=True)
class ThetaFromParquet:
    """A Theta sketch of one column over every given Parquet file together.

    ``column`` is found in each file by ``field_id`` when it has one (so a renamed column is
    still found), else by name; a file without it contributes nothing (a column added later
    reads as nulls there).
    """

    files: tuple[str, ...]
    column: str
    field_id: int | None
    iceberg_type: IcebergType
    uuid_as_string: bool = False


@dataclass(frozen=True)
class DvFromPositions:
    """A deletion vector of inclusive position ranges plus the lines of ``positions_files``."""

    referenced_data_file: str
    ranges: tuple[tuple[int, int], ...] = ()
    positions_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class CopiedBlob:
    """Blob ``index`` of the Puffin file ``path``, copied with its metadata and stored bytes."""

    path: str
    index: int


Source = RawPayload | ThetaFromValues | ThetaFromParquet | DvFromPositions | CopiedBlob


@dataclass(frozen=True)
class BlobSpec:
    """One blob to write. ``codec`` is the compression (``None``: stored as is); a copied blob
    keeps its own type, fields, ids, properties and codec, so those fields are ignored."""

    source: Source
    type: str
    fields: tuple[int, ...]
    snapshot_id: int = -1
    sequence_number: int = -1
    properties: dict[str, str] = field(default_factory=dict)
    codec: str | None = None


@dataclass(frozen=True)
class WritePlan:
    """Everything a write needs. ``created_by`` ``None`` writes no ``created-by`` property
    (unless ``properties`` has one)."""

    blobs: tuple[BlobSpec, ...] = ()
    properties: dict[str, str] = field(default_factory=dict)
    created_by: str | None = DEFAULT_CREATED_BY
    footer_compression: str | None = None

    def warnings(self) -> list[str]:
        """What the user should know before using the file with Iceberg Java."""
        out = []
        if self.footer_compression == CODEC_LZ4:
            out.append(f"the footer is LZ4-compressed: {JAVA_CANNOT_READ_LZ4}")
        for index, blob in enumerate(self.blobs):
            if blob.codec == CODEC_LZ4:
                out.append(f"blob {index} is LZ4-compressed: {JAVA_CANNOT_READ_LZ4}")
        return out


# --------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class WrittenBlob:
    """One blob as written: its footer entry, and ``source``, how it was made (payload, theta,
    parquet, dv, copy); ``ndv`` and ``cardinality`` are read from its properties when present."""

    index: int
    metadata: BlobMetadata
    source: str
    ndv: int | None
    cardinality: int | None


@dataclass(frozen=True)
class WriteSummary:
    """What ``puffin write`` wrote (its ``--json`` output)."""

    path: str
    file_size: int
    footer_size: int
    footer_compressed: bool
    properties: dict[str, str]
    blobs: tuple[WrittenBlob, ...]
    warnings: tuple[str, ...]


# --------------------------------------------------------------------------------------------
# Small parsers shared by the spec and the CLI


def spec_error(message: str, *, code: str = "spec.invalid", path: str | None = None
               ) -> PuffinError:
    return PuffinError(message, code=code, path=path)


def parse_codec(text: str, where: str) -> str | None:
    """``zstd``, ``lz4`` or ``none`` (case-insensitive) as a codec (``None`` for ``none``)."""
    value = text.strip().lower()
    if value not in COMPRESSION_CHOICES:
        raise spec_error(f"{where}: compression {text!r} is not one of "
                         f"{', '.join(COMPRESSION_CHOICES)}")
    return None if value == NO_COMPRESSION else value


def parse_key_value(text: str, where: str) -> tuple[str, str]:
    """``KEY=VALUE`` (the value may contain ``=``; the key may not be empty)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise spec_error(f"{where}: {text!r} is not KEY=VALUE")
    return key, value


def parse_copy_ref(text: str) -> CopiedBlob:
    """``FILE:INDEX`` (the last colon separates, so paths and URIs may contain colons)."""
    path, sep, index = text.rpartition(":")
    number = decimal_int(index)
    if not sep or not path or number is None:
        raise spec_error(f"--copy-blob {text!r}: expected FILE:INDEX, e.g. stats.puffin:0")
    return CopiedBlob(path, number)


def theta_blob(source: ThetaFromValues | ThetaFromParquet, field_id: int, *,
               snapshot_id: int = -1, sequence_number: int = -1,
               codec: str | None = DEFAULT_THETA_CODEC) -> BlobSpec:
    return BlobSpec(source, THETA_BLOB_TYPE, (field_id,), snapshot_id, sequence_number, {},
                    codec)


def dv_blob(source: DvFromPositions) -> BlobSpec:
    """Deletion vectors as Iceberg writes them: ``fields`` [_pos], ids -1, never compressed."""
    return BlobSpec(source, DV_BLOB_TYPE, (ROW_POSITION_FIELD_ID,))


def copy_blob(source: CopiedBlob) -> BlobSpec:
    return BlobSpec(source, "", ())
