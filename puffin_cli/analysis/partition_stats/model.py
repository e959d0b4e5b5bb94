"""The partition statistics file's fields (table spec, "Partition Statistics"; Iceberg 1.10's
``PartitionStatsHandler``), the unified partition type over every spec of a table, and a row.

Partition values are held in Iceberg's internal form (a date as days, a time or timestamp as
micro- or nanoseconds from the epoch, a UUID as its 16 bytes, a decimal as ``Decimal``), so
that values from a manifest (fastavro's logical types) and from a Parquet file compare equal
and sort as Iceberg's ``Comparators.forType`` sorts them (nulls first, strings by UTF-16
code units, UUIDs by their two signed longs).
"""

from __future__ import annotations

import datetime as _dt
import uuid as _uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from puffin_cli.analysis.table.metadata import TableMetadata
from puffin_cli.errors import PuffinError

PARTITION_FIELD_ID = 1


@dataclass(frozen=True)
class StatsField:
    """One top-level field: ID, name, Iceberg type, required in format 2 and in format 3."""

    field_id: int
    name: str
    type: str
    required_v2: bool
    required_v3: bool

    def required(self, format_version: int) -> bool:
        return self.required_v3 if format_version >= 3 else self.required_v2


# Fields 2..13 (field 1 is ``partition``, the unified partition type); 13 only in format 3.
FIELDS = (
    StatsField(2, "spec_id", "int", True, True),
    StatsField(3, "data_record_count", "long", True, True),
    StatsField(4, "data_file_count", "int", True, True),
    StatsField(5, "total_data_file_size_in_bytes", "long", True, True),
    StatsField(6, "position_delete_record_count", "long", False, True),
    StatsField(7, "position_delete_file_count", "int", False, True),
    StatsField(8, "equality_delete_record_count", "long", False, True),
    StatsField(9, "equality_delete_file_count", "int", False, True),
    StatsField(10, "total_record_count", "long", False, False),
    StatsField(11, "last_updated_at", "long", False, False),
    StatsField(12, "last_updated_snapshot_id", "long", False, False),
    StatsField(13, "dv_count", "int", True, True),
)
DV_COUNT_ID = 13
# Iceberg 1.9.x wrote the same fields one ID lower (``partition`` 0 ... last update 11).
LEGACY_ID_SHIFT = -1
COUNTS = tuple(f.name for f in FIELDS if f.field_id not in (2, 10, 11, 12))


def fields_for(format_version: int) -> tuple[StatsField, ...]:
    """The top-level fields after ``partition`` a file of this format version has."""
    return tuple(f for f in FIELDS if f.field_id != DV_COUNT_ID or format_version >= 3)


@dataclass(frozen=True)
class PartitionField:
    """A field of the unified partition type: partition field ID, name, result type."""

    field_id: int
    name: str
    type: str


_INT_RESULT = {"year", "month", "hour", "years", "months", "hours"}


def _result_type(transform: str, source: str) -> str:
    name = transform.split("[", 1)[0].lower()
    if name == "bucket" or name in _INT_RESULT:
        return "int"
    if name in ("day", "days"):
        return "date"
    return source


def _source_types(metadata: TableMetadata) -> dict[int, str]:
    """Field ID -> primitive type (its JSON text), the current schema winning over older ones."""
    order = sorted(metadata.schemas, key=lambda s: (s == metadata.current_schema_id, s))
    out: dict[int, str] = {}
    for schema_id in order:
        stack = list(metadata.schemas[schema_id].get("fields", ()))
        while stack:
            item = stack.pop()
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if isinstance(kind, str) and isinstance(item.get("id"), int):
                out[item["id"]] = kind
            elif isinstance(kind, dict) and kind.get("type") == "struct":
                stack.extend(kind.get("fields", ()))
    return out


def unified_partition_type(metadata: TableMetadata) -> tuple[PartitionField, ...]:
    """Every partition field of every spec, by field ID ascending; names from the newest spec
    that has the field (Iceberg's ``Partitioning.partitionType``); a v1 void field takes its
    type from a spec where it is not void."""
    sources = _source_types(metadata)
    found: dict[int, PartitionField] = {}
    void: set[int] = set()
    for spec_id in sorted(metadata.specs, reverse=True):
        for item in metadata.specs[spec_id].get("fields", ()):
            if not isinstance(item, dict) or not isinstance(item.get("field-id"), int):
                continue
            fid, transform = item["field-id"], str(item.get("transform", ""))
            source = sources.get(item.get("source-id", -1))
            if source is None:
                raise PuffinError(f"partition field {item.get('name')!r} of spec {spec_id}: "
                                  f"source field {item.get('source-id')} is in no schema",
                                  code="partition-stats.type", path=metadata.path)
            field = PartitionField(fid, str(item.get("name", "")),
                                   _result_type(transform, source))
            if fid not in found:
                found[fid] = field
                if transform == "void":
                    void.add(fid)
            elif fid in void and transform != "void":
                found[fid] = PartitionField(fid, found[fid].name, field.type)
                void.discard(fid)
    return tuple(found[f] for f in sorted(found))


def spec_positions(metadata: TableMetadata, unified: tuple[PartitionField, ...]
                   ) -> dict[int, tuple[tuple[str, int], ...]]:
    """Spec ID -> (manifest partition field name, position in the unified type) per field."""
    where = {f.field_id: i for i, f in enumerate(unified)}
    return {spec_id: tuple((str(item["name"]), where[item["field-id"]])
                           for item in spec.get("fields", ())
                           if isinstance(item, dict) and item.get("field-id") in where)
            for spec_id, spec in metadata.specs.items()}


# --- values ----------------------------------------------------------------------------------

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def internal(kind: str, value: Any) -> Any:
    """A partition value as Iceberg holds it internally (see the module docstring)."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        base = _EPOCH_UTC if value.tzinfo is not None else _EPOCH
        micros = (value - base) // _dt.timedelta(microseconds=1)
        return micros * 1000 if kind.endswith("_ns") else micros
    if isinstance(value, _dt.date):
        return (value - _EPOCH_DATE).days
    if isinstance(value, _dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 \
            + value.microsecond
    if isinstance(value, _uuid.UUID):
        return value.bytes
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def _sort_value(value: Any, kind: str) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16-be")
    if kind == "uuid" and isinstance(value, bytes) and len(value) == 16:
        return (int.from_bytes(value[:8], "big", signed=True),
                int.from_bytes(value[8:], "big", signed=True))
    return value


def sort_key(unified: tuple[PartitionField, ...]) -> Any:
    """The key that sorts partition tuples as Iceberg does (nulls first)."""
    kinds = [f.type for f in unified]

    def key(partition: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple((0,) if v is None else (1, _sort_value(v, k))
                     for v, k in zip(partition, kinds, strict=False))
    return key


def value_text(kind: str, value: Any) -> Any:
    """A partition value for JSON and the human view: numbers, strings and booleans as they
    are, a date or timestamp in ISO form, a decimal as its text, bytes in hex.

    Local until the project's one serialization of partition values lands (issue 32)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return str(_uuid.UUID(bytes=value)) if kind == "uuid" and len(value) == 16 \
            else value.hex()
    if isinstance(value, int):
        if kind == "date":
            return (_EPOCH_DATE + _dt.timedelta(days=value)).isoformat()
        if kind in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
            micros = value // 1000 if kind.endswith("_ns") else value
            base = _EPOCH_UTC if "tz" in kind else _EPOCH
            return (base + _dt.timedelta(microseconds=micros)).isoformat()
        if kind == "time":
            return (_dt.datetime.min + _dt.timedelta(microseconds=value)).time().isoformat()
    return value


@dataclass(frozen=True)
class StatsRow:
    """One row: the partition tuple (unified type, internal values) and the fields 2..13
    (``dv_count`` 0 in format 2 files, as Iceberg reads them)."""

    partition: tuple[Any, ...]
    spec_id: int
    data_record_count: int
    data_file_count: int
    total_data_file_size_in_bytes: int
    position_delete_record_count: int
    position_delete_file_count: int
    equality_delete_record_count: int
    equality_delete_file_count: int
    total_record_count: int | None
    last_updated_at: int | None
    last_updated_snapshot_id: int | None
    dv_count: int

    @property
    def key(self) -> tuple[int, tuple[Any, ...]]:
        return self.spec_id, self.partition

    def counts(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in COUNTS}
