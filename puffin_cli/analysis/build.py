"""What ``puffin write`` writes: a write spec (JSON, see docs/write.md) or the CLI shortcuts
become a :class:`WritePlan`, whose blobs are built one at a time and streamed into a
:class:`~puffin_cli.format.writer.PuffinWriter`.

Planning (:func:`load_spec`, :func:`parquet_theta_blobs`) checks everything that can be checked
without reading payloads (spec structure, types, field IDs, that files exist); building
(:func:`build_blob`) reads one source and makes its bytes:

- a raw payload: bytes from a file or inline (base64 or text), any blob type;
- a Theta sketch from values (inline, or a file with one value per line) or from Parquet columns,
  with :mod:`puffin_cli.blobs.theta` (Iceberg's serialization, hashing and compact form);
- a deletion vector from positions and ranges, with :mod:`puffin_cli.blobs.deletion_vector`;
- a copy of another Puffin file's blob, as stored (no decompression, no recompression).

Defaults are what Iceberg Java writes: plain footer, Theta blobs zstd-compressed with an ``ndv``
property, deletion vectors uncompressed with ``referenced-data-file`` and ``cardinality``,
snapshot-id and sequence-number -1, created-by ``puffin-cli <version>``.
"""

from __future__ import annotations

import base64
import binascii
import glob
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from puffin_cli import CREATED_BY as DEFAULT_CREATED_BY
from puffin_cli.blobs.iceberg_values import IcebergType, parse_values
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata, json_kind
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import (
    CARDINALITY_PROPERTY,
    CODEC_LZ4,
    CODEC_ZSTD,
    DV_BLOB_TYPE,
    KNOWN_CODECS,
    NDV_PROPERTY,
    ROW_POSITION_FIELD_ID,
    THETA_BLOB_TYPE,
)
from puffin_cli.format.writer import PuffinWriter

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

    from puffin_cli.blobs.theta import CompactTheta

    UInt64Array = npt.NDArray[np.uint64]

NO_COMPRESSION = "none"
COMPRESSION_CHOICES = (*KNOWN_CODECS, NO_COMPRESSION)
# What Iceberg Java writes: Theta blobs zstd, everything else (and every DV) stored as is.
DEFAULT_THETA_CODEC = CODEC_ZSTD
# Rows per Parquet batch: bounded memory whatever the file size.
PARQUET_BATCH_ROWS = 1 << 16
# Parquet field metadata key holding the field ID (Iceberg writes it).
PARQUET_FIELD_ID_KEY = b"PARQUET:field_id"
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
    if not sep or not path or not index.isdigit():
        raise spec_error(f"--copy-blob {text!r}: expected FILE:INDEX, e.g. stats.puffin:0")
    return CopiedBlob(path, int(index))


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


# --------------------------------------------------------------------------------------------
# Parquet: columns, field IDs and Iceberg types


def expand_paths(patterns: Sequence[str], base_dir: str = "") -> tuple[str, ...]:
    """Paths and globs (relative ones against ``base_dir``), each glob sorted, in order and
    without repeats; a glob that matches nothing or a missing file is an error."""
    out: list[str] = []
    for pattern in patterns:
        full = os.path.join(base_dir, pattern)
        if glob.has_magic(full):
            matches = sorted(glob.glob(full))
            if not matches:
                raise spec_error(f"{pattern}: no file matches this pattern",
                                 code="spec.parquet.missing")
        elif os.path.isfile(full):
            matches = [full]
        else:
            raise spec_error(f"{full}: no such file", code="spec.parquet.missing")
        out.extend(m for m in matches if m not in out)
    return tuple(out)


def iceberg_type_of(arrow_type: pa.DataType) -> IcebergType | None:
    """The Iceberg type of a Parquet column as pyarrow reads it, or ``None`` when it has none
    (nested or unsupported). Timestamps with a zone (Parquet isAdjustedToUTC) are
    ``timestamptz``; nanosecond ones the v3 ``_ns`` types; decimals keep precision and scale."""
    import pyarrow as pa
    import pyarrow.types as pat

    if pat.is_dictionary(arrow_type):
        return iceberg_type_of(arrow_type.value_type)
    if isinstance(arrow_type, pa.BaseExtensionType):
        if arrow_type.extension_name == "arrow.uuid":
            return IcebergType("uuid")
        return iceberg_type_of(arrow_type.storage_type)
    if pat.is_boolean(arrow_type):
        return IcebergType("boolean")
    if pat.is_int8(arrow_type) or pat.is_int16(arrow_type) or pat.is_int32(arrow_type) \
            or pat.is_uint8(arrow_type) or pat.is_uint16(arrow_type):
        return IcebergType("int")
    if pat.is_int64(arrow_type) or pat.is_uint32(arrow_type):
        return IcebergType("long")
    if pat.is_float32(arrow_type):
        return IcebergType("float")
    if pat.is_float64(arrow_type):
        return IcebergType("double")
    if pat.is_decimal(arrow_type):
        return IcebergType("decimal", precision=arrow_type.precision, scale=arrow_type.scale)
    if pat.is_date(arrow_type):
        return IcebergType("date")
    if pat.is_time(arrow_type):
        return IcebergType("time")
    if pat.is_timestamp(arrow_type):
        zoned = "tz" if arrow_type.tz is not None else ""
        return IcebergType(f"timestamp{zoned}_ns" if arrow_type.unit == "ns"
                           else f"timestamp{zoned}")
    if pat.is_string(arrow_type) or pat.is_large_string(arrow_type) \
            or pat.is_string_view(arrow_type):
        return IcebergType("string")
    if pat.is_fixed_size_binary(arrow_type):
        return IcebergType("fixed", length=arrow_type.byte_width)
    if pat.is_binary(arrow_type) or pat.is_large_binary(arrow_type) \
            or pat.is_binary_view(arrow_type):
        return IcebergType("binary")
    return None


def _field_id(arrow_field: pa.Field) -> int | None:
    metadata = arrow_field.metadata or {}
    raw = metadata.get(PARQUET_FIELD_ID_KEY)
    return int(raw) if raw is not None and raw.strip().lstrip(b"-").isdigit() else None


def _arrow_schema(path: str) -> pa.Schema:
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except (OSError, ValueError) as exc:
        raise PuffinError(f"cannot read the Parquet schema: {exc}", code="parquet.read",
                          path=path) from None


def _widen(a: IcebergType, b: IcebergType, column: str) -> IcebergType:
    """The type both files' values read as (Iceberg's type promotions), or an error."""
    if a == b:
        return a
    pair = {a.name, b.name}
    if pair == {"int", "long"}:
        return IcebergType("long")
    if pair == {"float", "double"}:
        return IcebergType("double")
    if a.name == b.name == "decimal" and a.scale == b.scale:
        return a if (a.precision or 0) >= (b.precision or 0) else b
    raise spec_error(f"column {column!r} is {a} in one Parquet file and {b} in another",
                     code="spec.parquet.type")


def parquet_theta_blobs(files: Sequence[str], *, columns: Sequence[str] | None = None,
                        field_ids: Mapping[str, int] | None = None,
                        uuid_as_string: bool = False, snapshot_id: int = -1,
                        sequence_number: int = -1,
                        codec: str | None = DEFAULT_THETA_CODEC) -> list[BlobSpec]:
    """One Theta blob per column over all ``files`` (already expanded): ``columns`` in the
    order given, or every top-level column of primitive type (in the first file's order).

    Field IDs come from ``field_ids`` (by column name) first, else from the Parquet schema's
    field-id metadata. Only schemas are read here.
    """
    if not files:
        raise spec_error("no Parquet file given", code="spec.parquet.missing")
    field_ids = dict(field_ids or {})
    schemas = [_arrow_schema(path) for path in files]
    first = schemas[0]
    if columns is None:
        names = [f.name for f in first if iceberg_type_of(f.type) is not None]
        if not names:
            raise spec_error(f"{files[0]} has no top-level column of a primitive type to "
                             "sketch", code="spec.parquet.column")
    else:
        names = list(columns)
    for name in field_ids:
        if name not in names:
            raise spec_error(f"--field-id {name}=...: no column {name!r} is sketched "
                             f"(columns: {', '.join(names) or 'none'})",
                             code="spec.parquet.column")
    blobs = []
    for name in names:
        if name not in first.names:
            raise spec_error(f"no column {name!r} in {files[0]} (columns: "
                             f"{', '.join(first.names)})", code="spec.parquet.column")
        arrow_field = first.field(name)
        iceberg_type = iceberg_type_of(arrow_field.type)
        if iceberg_type is None:
            raise spec_error(f"column {name!r} in {files[0]} is {arrow_field.type}, which has "
                             "no Iceberg primitive type to sketch", code="spec.parquet.type")
        file_id = _field_id(arrow_field)
        field_id = field_ids.get(name, file_id)
        if field_id is None:
            raise spec_error(f"column {name!r} in {files[0]} has no field ID in its Parquet "
                             f"schema (PARQUET:field_id); give one with --field-id {name}=ID",
                             code="spec.parquet.field-id")
        for path, schema in zip(files[1:], schemas[1:], strict=True):
            other = _find_column(schema, name, file_id)
            if other is not None:
                other_type = iceberg_type_of(other.type)
                if other_type is None:
                    raise spec_error(f"column {name!r} in {path} is {other.type}, which has no "
                                     "Iceberg primitive type", code="spec.parquet.type")
                iceberg_type = _widen(iceberg_type, other_type, name)
        source = ThetaFromParquet(tuple(files), name, file_id, iceberg_type, uuid_as_string)
        blobs.append(theta_blob(source, field_id, snapshot_id=snapshot_id,
                                sequence_number=sequence_number, codec=codec))
    return blobs


def _find_column(schema: pa.Schema, name: str, field_id: int | None) -> pa.Field | None:
    if field_id is not None:
        for arrow_field in schema:
            if _field_id(arrow_field) == field_id:
                return arrow_field
        return None
    return schema.field(name) if name in schema.names else None


# --------------------------------------------------------------------------------------------
# The JSON spec


class _Spec:
    """Walks a spec document; every error names the spec file and where in it."""

    def __init__(self, path: str, base_dir: str, compress: str | None) -> None:
        self.path = path
        self.base_dir = base_dir
        self.compress = compress  # --compress as given (zstd, lz4, none), None when not given

    def fail(self, where: str, message: str) -> PuffinError:
        return spec_error(f"{where}: {message}", path=self.path)

    def obj(self, value: Any, where: str, allowed: Sequence[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {json_kind(value)}")
        unknown = [k for k in value if k not in allowed]
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r} (expected "
                            f"{', '.join(repr(k) for k in allowed)})")
        return value

    def string(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, found {json_kind(value)}")
        return value

    def integer(self, value: Any, where: str, low: int = -(2**63), high: int = 2**63 - 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected an integer, found {json_kind(value)}")
        if not low <= value <= high:
            raise self.fail(where, f"{value} is not from {low} to {high}")
        return value

    def properties(self, value: Any, where: str) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object of strings, found {json_kind(value)}")
        for key, item in value.items():
            self.string(item, f"{where}.{key}")
        return dict(value)

    def fields(self, value: Any, where: str) -> tuple[int, ...]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list of field IDs, found {json_kind(value)}")
        return tuple(self.integer(v, f"{where}[{i}]", -(2**31), 2**31 - 1)
                     for i, v in enumerate(value))

    def file(self, value: Any, where: str) -> str:
        path = os.path.join(self.base_dir, self.string(value, where))
        if not os.path.isfile(path):
            raise self.fail(where, f"{path}: no such file")
        return path

    def codec(self, blob: dict[str, Any], where: str, default: str | None) -> str | None:
        if "compression" in blob:
            try:
                return parse_codec(self.string(blob["compression"], f"{where}.compression"),
                                   where)
            except PuffinError as exc:
                raise exc.with_path(self.path) from None
        if self.compress is not None:
            return parse_codec(self.compress, "--compress")
        return default

    def document(self, doc: Any) -> WritePlan:
        doc = self.obj(doc, "spec", ("properties", "created-by", "footer-compression",
                                     "blobs"))
        properties = self.properties(doc.get("properties", {}), "properties")
        created_by: str | None = DEFAULT_CREATED_BY
        if "created-by" in doc:
            created_by = None if doc["created-by"] is None else \
                self.string(doc["created-by"], "created-by")
        footer = None
        if "footer-compression" in doc:
            text = self.string(doc["footer-compression"], "footer-compression")
            if text.strip().lower() not in (CODEC_LZ4, NO_COMPRESSION):
                raise self.fail("footer-compression", "the footer can only be LZ4-compressed "
                                "(lz4 or none)")
            footer = parse_codec(text, "footer-compression")
        blobs_value = doc.get("blobs", [])
        if not isinstance(blobs_value, list):
            raise self.fail("blobs", f"expected a list, found {json_kind(blobs_value)}")
        blobs: list[BlobSpec] = []
        for i, item in enumerate(blobs_value):
            blobs.extend(self.blob(item, f"blobs[{i}]"))
        return WritePlan(tuple(blobs), properties, created_by, footer)

    def blob(self, value: Any, where: str) -> list[BlobSpec]:
        blob = self.obj(value, where, _BLOB_KEYS)
        kinds = [k for k in _SOURCE_KEYS if k in blob]
        if len(kinds) != 1:
            raise self.fail(where, "expected exactly one of "
                            f"{', '.join(repr(k) for k in _SOURCE_KEYS)}, found "
                            f"{', '.join(repr(k) for k in kinds) or 'none'}")
        kind = kinds[0]
        return getattr(self, kind)(blob, where)  # type: ignore[no-any-return]

    def common(self, blob: dict[str, Any], where: str) -> tuple[int, int, dict[str, str]]:
        snapshot_id = self.integer(blob.get("snapshot-id", -1), f"{where}.snapshot-id")
        sequence_number = self.integer(blob.get("sequence-number", -1),
                                       f"{where}.sequence-number")
        properties = self.properties(blob.get("properties", {}), f"{where}.properties")
        return snapshot_id, sequence_number, properties

    def payload(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        if "type" not in blob or "fields" not in blob:
            raise self.fail(where, "a payload blob needs 'type' and 'fields'")
        spec = self.obj(blob["payload"], f"{where}.payload", ("file", "base64", "text"))
        if len(spec) != 1:
            raise self.fail(f"{where}.payload", "expected exactly one of 'file', 'base64', "
                            "'text'")
        (key, value), = spec.items()
        inner = f"{where}.payload.{key}"
        if key == "file":
            source = RawPayload(path=self.file(value, inner))
        elif key == "base64":
            try:
                data = base64.b64decode(self.string(value, inner), validate=True)
            except binascii.Error as exc:
                raise self.fail(inner, f"not valid base64 ({exc})") from None
            source = RawPayload(data=data)
        else:
            source = RawPayload(data=self.string(value, inner).encode("utf-8"))
        snapshot_id, sequence_number, properties = self.common(blob, where)
        return [BlobSpec(source, self.string(blob["type"], f"{where}.type"),
                         self.fields(blob["fields"], f"{where}.fields"), snapshot_id,
                         sequence_number, properties, self.codec(blob, where, None))]

    def theta(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        inner = f"{where}.theta"
        spec = self.obj(blob["theta"], inner, _THETA_KEYS)
        blob_type = self.string(blob.get("type", THETA_BLOB_TYPE), f"{where}.type")
        snapshot_id, sequence_number, properties = self.common(blob, where)
        codec = self.codec(blob, where, DEFAULT_THETA_CODEC)
        uuid_as_string = spec.get("uuid-as-string", False)
        if not isinstance(uuid_as_string, bool):
            raise self.fail(f"{inner}.uuid-as-string", "expected true or false")
        given_type = None
        if "iceberg-type" in spec:
            where_type = f"{inner}.iceberg-type"
            try:
                given_type = IcebergType.parse(self.string(spec["iceberg-type"], where_type))
            except PuffinError as exc:
                raise self.fail(where_type, exc.message) from None
        if "parquet" in spec:
            return self.theta_parquet(blob, spec, where, given_type, uuid_as_string,
                                      (snapshot_id, sequence_number, properties, codec,
                                       blob_type))
        if given_type is None:
            raise self.fail(inner, "'iceberg-type' is required (e.g. \"long\", "
                            "\"decimal(10,2)\")")
        sources = [k for k in ("values", "values-file") if k in spec]
        if len(sources) != 1:
            raise self.fail(inner, "expected exactly one of 'values', 'values-file', "
                            "'parquet'")
        if "fields" not in blob:
            raise self.fail(where, "'fields' is required (the field ID of the column)")
        fields = self.fields(blob["fields"], f"{where}.fields")
        if "values" in spec:
            values = spec["values"]
            if not isinstance(values, list):
                raise self.fail(f"{inner}.values", f"expected a list, found "
                                f"{json_kind(values)}")
            parsed = tuple(self.value(given_type, v, f"{inner}.values[{i}]")
                           for i, v in enumerate(values) if v is not None)
            source = ThetaFromValues(given_type, values=parsed, uuid_as_string=uuid_as_string)
        else:
            source = ThetaFromValues(given_type, values_file=self.file(
                spec["values-file"], f"{inner}.values-file"), uuid_as_string=uuid_as_string)
        return [BlobSpec(source, blob_type, fields, snapshot_id, sequence_number, properties,
                         codec)]

    def theta_parquet(self, blob: dict[str, Any], spec: dict[str, Any], where: str,
                      given_type: IcebergType | None, uuid_as_string: bool,
                      common: tuple[int, int, dict[str, str], str | None, str]
                      ) -> list[BlobSpec]:
        snapshot_id, sequence_number, properties, codec, blob_type = common
        inner = f"{where}.theta"
        patterns = spec["parquet"]
        if isinstance(patterns, str):
            patterns = [patterns]
        if not isinstance(patterns, list) or not patterns:
            raise self.fail(f"{inner}.parquet", "expected a path or glob, or a list of them")
        files = expand_paths([self.string(p, f"{inner}.parquet") for p in patterns],
                             self.base_dir)
        columns: list[str] | None = None
        if "column" in spec and "columns" in spec:
            raise self.fail(inner, "give 'column' or 'columns', not both")
        if "column" in spec:
            columns = [self.string(spec["column"], f"{inner}.column")]
        elif "columns" in spec:
            if not isinstance(spec["columns"], list):
                raise self.fail(f"{inner}.columns", "expected a list of column names")
            columns = [self.string(c, f"{inner}.columns") for c in spec["columns"]]
        field_ids: dict[str, int] = {}
        if "fields" in blob:
            fields = self.fields(blob["fields"], f"{where}.fields")
            if columns is None or len(columns) != 1 or len(fields) != 1:
                raise self.fail(f"{where}.fields", "with 'parquet', 'fields' needs exactly one "
                                "'column' and one field ID (use 'field-ids' for several)")
            field_ids[columns[0]] = fields[0]
        if "field-ids" in spec:
            ids = self.obj(spec["field-ids"], f"{inner}.field-ids", list(spec["field-ids"]))
            field_ids.update({k: self.integer(v, f"{inner}.field-ids.{k}", -(2**31), 2**31 - 1)
                              for k, v in ids.items()})
        try:
            blobs = parquet_theta_blobs(files, columns=columns, field_ids=field_ids,
                                        uuid_as_string=uuid_as_string, snapshot_id=snapshot_id,
                                        sequence_number=sequence_number, codec=codec)
        except PuffinError as exc:
            raise exc.with_path(self.path) if exc.path is None else exc from None
        out = []
        for b in blobs:
            source = b.source
            if given_type is not None:
                assert isinstance(source, ThetaFromParquet)
                source = ThetaFromParquet(source.files, source.column, source.field_id,
                                          given_type, source.uuid_as_string)
            out.append(BlobSpec(source, blob_type, b.fields, b.snapshot_id, b.sequence_number,
                                dict(properties), b.codec))
        return out

    def value(self, iceberg_type: IcebergType, value: Any, where: str) -> Any:
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            text = str(value)
        else:
            raise self.fail(where, f"expected a value of type {iceberg_type}, found "
                            f"{json_kind(value)}")
        try:
            return iceberg_type.parse_value(text)
        except PuffinError as exc:
            raise self.fail(where, exc.message) from None

    def dv(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        for key in ("type", "fields", "snapshot-id", "sequence-number", "compression"):
            if key in blob:
                raise self.fail(f"{where}.{key}", "a deletion vector is always written as "
                                "Iceberg writes it (type deletion-vector-v1, fields "
                                f"[{ROW_POSITION_FIELD_ID}], ids -1, uncompressed)")
        inner = f"{where}.dv"
        spec = self.obj(blob["dv"], inner, ("referenced-data-file", "positions",
                                            "positions-file"))
        if "referenced-data-file" not in spec:
            raise self.fail(inner, "'referenced-data-file' is required")
        ranges: list[tuple[int, int]] = []
        if "positions" in spec:
            ranges = self.positions(spec["positions"], f"{inner}.positions")
        files: list[str] = []
        if "positions-file" in spec:
            value = spec["positions-file"]
            items = value if isinstance(value, list) else [value]
            files = [self.file(v, f"{inner}.positions-file") for v in items]
        if not ranges and not files:
            raise self.fail(inner, "expected 'positions' or 'positions-file'")
        source = DvFromPositions(self.string(spec["referenced-data-file"],
                                             f"{inner}.referenced-data-file"),
                                 tuple(ranges), tuple(files))
        spec_blob = dv_blob(source)
        properties = self.properties(blob.get("properties", {}), f"{where}.properties")
        if properties:
            spec_blob = BlobSpec(source, spec_blob.type, spec_blob.fields,
                                 properties=properties)
        return [spec_blob]

    def positions(self, value: Any, where: str) -> list[tuple[int, int]]:
        from puffin_cli.blobs.deletion_vector import MAX_POSITION

        if isinstance(value, str):
            return self.parse_positions(value, where)
        if not isinstance(value, list):
            raise self.fail(where, "expected a string like \"0,2,10-20\" or a list of "
                            "positions, \"START-END\" strings and [START, END] pairs")
        ranges: list[tuple[int, int]] = []
        for i, item in enumerate(value):
            at = f"{where}[{i}]"
            if isinstance(item, str):
                ranges.extend(self.parse_positions(item, at))
            elif isinstance(item, list) and len(item) == 2:
                start = self.integer(item[0], f"{at}[0]", 0, MAX_POSITION)
                end = self.integer(item[1], f"{at}[1]", 0, MAX_POSITION)
                if end < start:
                    raise self.fail(at, f"range [{start}, {end}] ends before it starts")
                ranges.append((start, end))
            else:
                position = self.integer(item, at, 0, MAX_POSITION)
                ranges.append((position, position))
        return ranges

    def parse_positions(self, text: str, where: str) -> list[tuple[int, int]]:
        from puffin_cli.blobs.deletion_vector import parse_position_spec

        try:
            return parse_position_spec(text)
        except PuffinError as exc:
            raise self.fail(where, exc.message) from None

    def copy(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        if len(blob) != 1:
            raise self.fail(where, "a copied blob keeps its own metadata; 'copy' takes no "
                            "other keys")
        spec = self.obj(blob["copy"], f"{where}.copy", ("file", "index"))
        if "file" not in spec or "index" not in spec:
            raise self.fail(f"{where}.copy", "expected 'file' and 'index'")
        return [copy_blob(CopiedBlob(self.file(spec["file"], f"{where}.copy.file"),
                                     self.integer(spec["index"], f"{where}.copy.index", 0)))]


_SOURCE_KEYS = ("payload", "theta", "dv", "copy")
_BLOB_KEYS = ("type", "fields", "snapshot-id", "sequence-number", "properties", "compression",
              *_SOURCE_KEYS)
_THETA_KEYS = ("iceberg-type", "values", "values-file", "parquet", "column", "columns",
               "field-ids", "uuid-as-string")


def parse_type(text: str, where: str) -> IcebergType:
    """An Iceberg type name (``long``, ``decimal(10,2)``, ``fixed[16]``), errors naming
    ``where``."""
    try:
        return IcebergType.parse(text)
    except PuffinError as exc:
        raise spec_error(f"{where}: {exc.message}", code=exc.code) from None


def load_spec(path: str, *, compress: str | None = None) -> WritePlan:
    """Read and check a spec file (``-``: standard input, paths relative to the current
    directory); relative paths in it are relative to its directory.

    ``compress`` is ``--compress`` (``zstd``, ``lz4``, ``none``; ``None`` when not given): the
    compression of Theta and payload blobs that do not name one.
    """
    import sys

    try:
        if path == "-":
            text, base_dir = sys.stdin.read(), ""
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            base_dir = os.path.dirname(path)
    except OSError as exc:
        raise PuffinError(f"cannot read the spec: {exc.strerror}", code="spec.read",
                          path=path) from None
    except UnicodeDecodeError as exc:
        raise PuffinError(f"spec is not UTF-8: {exc.reason} at byte {exc.start}",
                          code="spec.read", path=path) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PuffinError(f"spec is not valid JSON: {exc.msg} at line {exc.lineno} column "
                          f"{exc.colno}", code="spec.json", path=path) from None
    return _Spec(path, base_dir, compress).document(doc)


# --------------------------------------------------------------------------------------------
# Building


@dataclass(frozen=True)
class BuiltBlob:
    """A blob's bytes (``stored``: already in stored form, else to be compressed with
    ``spec.codec``) and its final metadata fields."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    properties: dict[str, str]
    codec: str | None
    data: bytes
    stored: bool
    source: str


def _with_computed(properties: Mapping[str, str], computed: Mapping[str, str],
                   where: str) -> dict[str, str]:
    """Computed properties first (as Iceberg writes them), then the user's extra ones."""
    clash = [k for k in properties if k in computed]
    if clash:
        raise spec_error(f"{where}: property {clash[0]!r} is computed from the data; do not "
                         "set it")
    return {**computed, **properties}


def _theta_hashes(iceberg_type: IcebergType, values: Any, uuid_as_string: bool
                  ) -> UInt64Array:
    from puffin_cli.blobs.theta import hash_iceberg_values

    if uuid_as_string and iceberg_type.name == "uuid":
        # What Iceberg's Spark procedure hashes for a uuid: its canonical text.
        return hash_iceberg_values(IcebergType("string"), [str(v) for v in values])
    return hash_iceberg_values(iceberg_type, values)


def _read_values_file(source: ThetaFromValues) -> list[Any]:
    assert source.values_file is not None
    try:
        with open(source.values_file, encoding="utf-8", newline="\n") as lines:
            return parse_values(source.iceberg_type, lines)
    except PuffinError as exc:
        raise exc.with_path(source.values_file) from None
    except UnicodeDecodeError as exc:
        raise PuffinError(f"not UTF-8 text: {exc.reason}", code="value.parse",
                          path=source.values_file, offset=exc.start) from None


def theta_from_values(source: ThetaFromValues) -> CompactTheta:
    """Iceberg's sketch of the values as one Spark partition, in order."""
    from puffin_cli.blobs.theta import build_sketch

    values = list(source.values) if source.values is not None else _read_values_file(source)
    return build_sketch(_theta_hashes(source.iceberg_type, values, source.uuid_as_string))


def _parquet_batches(path: str, source: ThetaFromParquet) -> Iterator[pa.Array]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        found = _find_column(parquet.schema_arrow, source.column, source.field_id)
        if found is None:
            return
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[found.name]):
            yield batch.column(0)
    except (OSError, ValueError) as exc:
        raise PuffinError(f"cannot read column {source.column!r}: {exc}", code="parquet.read",
                          path=path) from None


def theta_from_parquet(source: ThetaFromParquet) -> CompactTheta:
    """The sketch of one column over every file, as Iceberg builds it when it reads these files
    as one Spark task in this order (a table whose data fits one split): an Alpha sketch fed
    row by row, then the union's trim. Hashed batch by batch, so memory stays bounded."""
    import numpy as np

    from puffin_cli.blobs.arrow_values import serialize_column
    from puffin_cli.blobs.theta import AlphaSketch, ThetaAccumulator

    sketch = AlphaSketch()
    for path in source.files:
        for chunk in _parquet_batches(path, source):
            rows = len(chunk)
            serialized = serialize_column(source.iceberg_type, chunk, rows,
                                          source.uuid_as_string)
            sketch.update(serialized.hashes(np.ones(rows, dtype=bool)))
    union = ThetaAccumulator()
    union.add(sketch.result())
    return union.result()


def dv_bitmap(source: DvFromPositions) -> Any:
    """The ``pyroaring.BitMap64`` of a DV source: ranges added as ranges, files streamed."""
    from puffin_cli.blobs.deletion_vector import bitmap_from_positions_file, bitmap_from_ranges

    bitmap = bitmap_from_ranges(source.ranges)
    for path in source.positions_files:
        try:
            with open(path, "rb") as lines:
                bitmap |= bitmap_from_positions_file(lines)
        except PuffinError as exc:
            raise exc.with_path(path) from None
        except OSError as exc:
            raise PuffinError(f"cannot read positions: {exc.strerror}", code="dv.positions",
                              path=path) from None
    return bitmap


def build_blob(spec: BlobSpec, where: str = "blob") -> BuiltBlob:
    """Read one blob's source and make its bytes and final properties."""
    source = spec.source
    if isinstance(source, CopiedBlob):
        with PuffinReader(source.path) as reader:
            meta = reader.blob(source.index)
            stored = reader.read_raw(meta)
        return BuiltBlob(meta.type, meta.fields, meta.snapshot_id, meta.sequence_number,
                         dict(meta.properties), meta.compression_codec, stored, True, "copy")
    if isinstance(source, RawPayload):
        if source.path is not None:
            try:
                with open(source.path, "rb") as handle:
                    data = handle.read()
            except OSError as exc:
                raise PuffinError(f"cannot read the payload: {exc.strerror}",
                                  code="spec.read", path=source.path) from None
        else:
            assert source.data is not None
            data = source.data
        return BuiltBlob(spec.type, spec.fields, spec.snapshot_id, spec.sequence_number,
                         dict(spec.properties), spec.codec, data, False, "payload")
    if isinstance(source, DvFromPositions):
        from puffin_cli.blobs.deletion_vector import dv_blob_properties, encode_deletion_vector

        bitmap = dv_bitmap(source)
        if not len(bitmap):
            raise spec_error(f"{where}: deletion vector for {source.referenced_data_file} has "
                             "no positions", code="spec.dv.empty")
        properties = _with_computed(spec.properties, dv_blob_properties(
            source.referenced_data_file, len(bitmap)), where)
        return BuiltBlob(spec.type, spec.fields, spec.snapshot_id, spec.sequence_number,
                         properties, None, encode_deletion_vector(bitmap), False, "dv")
    if isinstance(source, ThetaFromValues):
        sketch, kind = theta_from_values(source), "theta"
    else:
        sketch, kind = theta_from_parquet(source), "parquet"
    properties = _with_computed(spec.properties, {NDV_PROPERTY: str(sketch.ndv)}, where)
    return BuiltBlob(spec.type, spec.fields, spec.snapshot_id, spec.sequence_number,
                     properties, spec.codec, sketch.to_bytes(), False, kind)


def _int_property(properties: Mapping[str, str], key: str) -> int | None:
    value = properties.get(key)
    return int(value) if value is not None and value.isascii() and value.isdigit() else None


def write_plan(plan: WritePlan, output: str, *, overwrite: bool = False) -> WriteSummary:
    """Build every blob in order, streaming each into ``output`` (atomically: temp file and
    rename; an existing ``output`` is replaced only with ``overwrite``)."""
    if not overwrite and os.path.exists(output):
        raise PuffinError("exists; use --force to overwrite it", code="write.exists",
                          path=output)
    written: list[WrittenBlob] = []
    with PuffinWriter(output, properties=plan.properties, created_by=plan.created_by,
                      compress_footer=plan.footer_compression == CODEC_LZ4,
                      overwrite=overwrite) as writer:
        for index, spec in enumerate(plan.blobs):
            built = build_blob(spec, f"blob {index}")
            add = writer.add_stored_blob if built.stored else writer.add_blob
            meta = add(built.type, built.data, fields=built.fields,
                       snapshot_id=built.snapshot_id, sequence_number=built.sequence_number,
                       properties=built.properties, codec=built.codec)
            written.append(WrittenBlob(
                index, meta, built.source, _int_property(meta.properties, NDV_PROPERTY),
                _int_property(meta.properties, CARDINALITY_PROPERTY)))
        result = writer.finish()
    warnings = plan.warnings()
    for blob in written:
        if blob.source == "copy" and blob.metadata.compression_codec == CODEC_LZ4:
            warnings.append(f"blob {blob.index} (copied) is LZ4-compressed: "
                            f"{JAVA_CANNOT_READ_LZ4}")
    return WriteSummary(result.path, result.file_size, result.footer_size,
                        plan.footer_compression == CODEC_LZ4, dict(result.metadata.properties),
                        tuple(written), tuple(warnings))

