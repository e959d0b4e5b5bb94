"""Partition statistics files in Parquet, read and written through the storage layer
(:class:`~puffin_cli.storage.FileIO`; pyarrow reads the footer, then the columns).

Columns are found by field ID (``PARQUET:field_id``), as Iceberg reads them.
:func:`read_file` says what a file is (the Iceberg 1.10 layout, the Iceberg 1.9.x one whose
IDs are one lower, or neither), every way its schema differs from the spec's for the table
(unified partition type, types, required fields) and its rows; :func:`read_rows` gives the
rows Iceberg's ``readPartitionStatsFile`` would, or refuses what Iceberg cannot read.
:func:`write_rows` writes a file as Iceberg 1.10 does (the spec's field IDs, names and
required fields, rows in the order given).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.partition_stats.model import (
    DV_COUNT_ID,
    FIELDS,
    LEGACY_ID_SHIFT,
    PARTITION_FIELD_ID,
    PartitionField,
    StatsRow,
    fields_for,
    internal,
)
from puffin_cli.analysis.write.parquet import PARQUET_FIELD_ID_KEY, field_id_of, iceberg_type_of
from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO

if TYPE_CHECKING:
    import pyarrow as pa

LAYOUT_1_10, LAYOUT_1_9, LAYOUT_UNKNOWN = "iceberg-1.10", "iceberg-1.9.x", "unknown"
BATCH_ROWS = 8192
_CODE = "partition-stats.read"


@dataclass(frozen=True)
class SchemaProblem:
    """One way a file's schema differs from the spec's: ``field`` (its name, or
    ``partition.<name>``), ``problem`` (``missing``, ``type``, ``required``, ``extra``) and
    what the spec expects against what the file has."""

    field: str
    problem: str
    expected: str | None
    actual: str | None

    def text(self) -> str:
        if self.problem == "missing":
            return f"field {self.field} ({self.expected}) is missing"
        if self.problem == "extra":
            return f"field {self.field} ({self.actual}) is not in the unified partition type"
        if self.problem == "required":
            return f"field {self.field} is {self.actual}, the spec says {self.expected}"
        return f"field {self.field} is {self.actual}, the spec says {self.expected}"


@dataclass(frozen=True)
class ReadFile:
    """What a partition statistics file is: ``layout``, schema ``problems``, ``row_count``
    (the footer's), up to the asked number of ``rows`` (``None`` when the columns cannot be
    mapped to the spec's fields at all), and whether it has ``dv_count`` (a format 2 or
    Iceberg 1.9.x file does not)."""

    layout: str
    problems: tuple[SchemaProblem, ...]
    row_count: int
    rows: tuple[StatsRow, ...] | None
    file_size: int
    has_dv_count: bool = True


def _type_text(arrow_type: pa.DataType) -> str:
    import pyarrow.types as pat

    if pat.is_struct(arrow_type):
        return "struct"
    found = iceberg_type_of(arrow_type)
    return str(found) if found is not None else str(arrow_type)


def _by_id(fields: Iterator[pa.Field], shift: int = 0) -> dict[int, pa.Field]:
    out: dict[int, pa.Field] = {}
    for f in fields:
        fid = field_id_of(f)
        if fid is not None:
            out.setdefault(fid - shift, f)
    return out


def _layout(top: dict[int, pa.Field]) -> str:
    import pyarrow.types as pat

    partition = top.get(PARTITION_FIELD_ID)
    legacy = top.get(PARTITION_FIELD_ID + LEGACY_ID_SHIFT)
    if partition is not None and pat.is_struct(partition.type):
        return LAYOUT_1_10
    if legacy is not None and pat.is_struct(legacy.type):
        return LAYOUT_1_9
    return LAYOUT_UNKNOWN


def _required_text(required: bool) -> str:
    return "required" if required else "optional"


def _schema_problems(top: dict[int, pa.Field], unified: tuple[PartitionField, ...],
                     format_version: int) -> list[SchemaProblem]:
    import pyarrow.types as pat

    problems: list[SchemaProblem] = []
    partition = top.get(PARTITION_FIELD_ID)
    if partition is None:
        problems.append(SchemaProblem("partition", "missing", "struct", None))
    elif not pat.is_struct(partition.type):
        problems.append(SchemaProblem("partition", "type", "struct",
                                      _type_text(partition.type)))
    else:
        if partition.nullable:
            problems.append(SchemaProblem("partition", "required", "required", "optional"))
        inner = _by_id(iter(partition.type))
        for pf in unified:
            found = inner.get(pf.field_id)
            if found is None:
                problems.append(SchemaProblem(f"partition.{pf.name}", "missing", pf.type, None))
            elif _type_text(found.type) != pf.type:
                problems.append(SchemaProblem(f"partition.{pf.name}", "type", pf.type,
                                              _type_text(found.type)))
        known = {pf.field_id for pf in unified}
        for fid, f in inner.items():
            if fid not in known:
                problems.append(SchemaProblem(f"partition.{f.name}", "extra", None,
                                              _type_text(f.type)))
    for spec in fields_for(format_version):
        found = top.get(spec.field_id)
        required = spec.required(format_version)
        if found is None:
            if required:
                problems.append(SchemaProblem(spec.name, "missing", spec.type, None))
            continue
        if _type_text(found.type) != spec.type:
            problems.append(SchemaProblem(spec.name, "type", spec.type, _type_text(found.type)))
        elif found.nullable == required:
            problems.append(SchemaProblem(spec.name, "required", _required_text(required),
                                          _required_text(not found.nullable)))
    return problems


def _open(location: str, fileio: FileIO) -> Any:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(fileio.open_reader(location))
    except (OSError, ValueError) as exc:
        raise PuffinError(f"not a readable Parquet file: {exc}", code=_CODE,
                          path=location) from None


def _rows(parquet: Any, top: dict[int, pa.Field], unified: tuple[PartitionField, ...],
          limit: int | None) -> Iterator[StatsRow]:
    """Rows with columns found by ``top`` (field ID -> column); a missing count is 0 and a
    missing optional value null, as Iceberg reads them."""
    partition = top.get(PARTITION_FIELD_ID)
    inner = {} if partition is None else _by_id(iter(partition.type))
    sub = [(None if inner.get(pf.field_id) is None else inner[pf.field_id].name, pf.type)
           for pf in unified]
    names = {spec.name: top[spec.field_id].name for spec in FIELDS if spec.field_id in top}
    columns = ([partition.name] if partition is not None else []) + list(names.values())
    nullable = {"total_record_count", "last_updated_at", "last_updated_snapshot_id"}
    done = 0
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        for record in batch.to_pylist():
            if limit is not None and done >= limit:
                return
            part = record.get(partition.name) if partition is not None else None
            values = tuple(None if part is None or name is None else internal(kind, part[name])
                           for name, kind in sub)
            fields: dict[str, Any] = {}
            for spec in FIELDS:
                value = record.get(names[spec.name]) if spec.name in names else None
                fields[spec.name] = value if value is not None or spec.name in nullable else 0
            yield StatsRow(values, **fields)
            done += 1


def read_file(location: str | os.PathLike[str], unified: tuple[PartitionField, ...],
              format_version: int, *, fileio: FileIO, limit: int | None = None) -> ReadFile:
    """What the file at ``location`` is, and its first ``limit`` rows (all for ``None``);
    the rows of an Iceberg 1.9.x file are read at its own IDs."""
    text = os.fspath(location)
    parquet = _open(text, fileio)
    try:
        schema = parquet.schema_arrow
        top = _by_id(iter(schema))
        layout = _layout(top)
        # a 1.9.x file is named as such; its schema is checked at its own IDs
        mapped = _by_id(iter(schema), LEGACY_ID_SHIFT) if layout == LAYOUT_1_9 else top
        problems = _schema_problems(mapped, unified, format_version)
        rows = None if layout == LAYOUT_UNKNOWN else tuple(_rows(parquet, mapped, unified, limit))
        size = fileio.stat(text)
        return ReadFile(layout, tuple(problems), parquet.metadata.num_rows, rows,
                        0 if size is None else size.size, DV_COUNT_ID in mapped)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PuffinError(f"cannot read the partition statistics rows: {exc}", code=_CODE,
                          path=text) from None
    finally:
        parquet.close()


def file_partition_type(location: str, fileio: FileIO) -> tuple[tuple[PartitionField, ...],
                                                                  int]:
    """The file's own partition struct as a partition type (names, field IDs and types as
    stored), and the format version its fields suggest (3 when it has ``dv_count``)."""
    import pyarrow.types as pat

    parquet = _open(location, fileio)
    try:
        top = _by_id(iter(parquet.schema_arrow))
        shift = LEGACY_ID_SHIFT if _layout(top) == LAYOUT_1_9 else 0
        partition = top.get(PARTITION_FIELD_ID + shift)
        fields: tuple[PartitionField, ...] = ()
        if partition is not None and pat.is_struct(partition.type):
            fields = tuple(PartitionField(fid, f.name, _type_text(f.type))
                           for fid, f in sorted(_by_id(iter(partition.type)).items()))
        return fields, 3 if DV_COUNT_ID + shift in top else 2
    finally:
        parquet.close()


def fatal(read: ReadFile) -> str | None:
    """Why Iceberg 1.10 cannot read the file with the table's schema, or ``None``."""
    if read.layout == LAYOUT_1_9:
        return "written with Iceberg 1.9.x's field IDs (partition is field 0, not 1)"
    for p in read.problems:
        # Iceberg projects by field ID: a partition field or dv_count (initial default 0)
        # the file lacks reads as null or 0; another missing or mistyped field fails
        if p.problem == "type" or (p.problem == "missing" and p.field != "dv_count"
                                   and not p.field.startswith("partition.")):
            return p.text()
    return None


def read_rows(location: str, unified: tuple[PartitionField, ...], format_version: int, *,
              fileio: FileIO) -> list[StatsRow]:
    """The rows Iceberg reads from the file; a file it cannot read is refused."""
    read = read_file(location, unified, format_version, fileio=fileio)
    why = fatal(read)
    if why is not None or read.rows is None:
        raise PuffinError(why or "not a partition statistics file", code=_CODE, path=location)
    return list(read.rows)


# --- writing ---------------------------------------------------------------------------------

_TEMPORAL = {"date": "int32", "time": "int64", "timestamp": "int64", "timestamptz": "int64",
             "timestamp_ns": "int64", "timestamptz_ns": "int64"}


def _arrow_type(kind: str) -> pa.DataType:
    import pyarrow as pa

    from puffin_cli.blobs.iceberg_values.types import IcebergType

    t = IcebergType.parse(kind)
    simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(),
              "float": pa.float32(), "double": pa.float64(), "string": pa.string(),
              "binary": pa.binary(), "uuid": pa.binary(16), "date": pa.date32(),
              "time": pa.time64("us"), "timestamp": pa.timestamp("us"),
              "timestamptz": pa.timestamp("us", tz="UTC"), "timestamp_ns": pa.timestamp("ns"),
              "timestamptz_ns": pa.timestamp("ns", tz="UTC")}
    if t.name == "decimal":
        assert t.precision is not None and t.scale is not None
        return pa.decimal128(t.precision, t.scale)
    if t.name == "fixed":
        assert t.length is not None
        return pa.binary(t.length)
    return simple[t.name]


def _field(name: str, arrow_type: pa.DataType, field_id: int, required: bool) -> pa.Field:
    import pyarrow as pa

    return pa.field(name, arrow_type, nullable=not required,
                    metadata={PARQUET_FIELD_ID_KEY: str(field_id).encode()})


def arrow_schema(unified: tuple[PartitionField, ...], format_version: int) -> pa.Schema:
    import pyarrow as pa

    partition = pa.struct([_field(pf.name, _arrow_type(pf.type), pf.field_id, False)
                           for pf in unified])
    top = [_field("partition", partition, PARTITION_FIELD_ID, True)]
    top += [_field(s.name, pa.int32() if s.type == "int" else pa.int64(), s.field_id,
                   s.required(format_version)) for s in fields_for(format_version)]
    return pa.schema(top)


def _column(kind: str, values: list[Any]) -> pa.Array:
    import pyarrow as pa

    storage = _TEMPORAL.get(kind)
    if storage is not None:
        return pa.array(values, type=getattr(pa, storage)()).cast(_arrow_type(kind))
    return pa.array(values, type=_arrow_type(kind))


def arrow_table(rows: Sequence[StatsRow], unified: tuple[PartitionField, ...],
                format_version: int) -> pa.Table:
    import pyarrow as pa

    schema = arrow_schema(unified, format_version)
    parts = [_column(pf.type, [r.partition[i] for r in rows]) for i, pf in enumerate(unified)]
    struct_type = schema.field("partition").type
    partition = pa.StructArray.from_arrays(parts, fields=list(struct_type)) if unified else \
        pa.array([{}] * len(rows), type=struct_type)
    columns = [partition] + [pa.array([getattr(r, s.name) for r in rows],
                                      type=schema.field(s.name).type)
                             for s in fields_for(format_version)]
    return pa.Table.from_arrays(columns, schema=schema)


def write_rows(location: str, rows: Sequence[StatsRow], unified: tuple[PartitionField, ...],
               format_version: int, *, fileio: FileIO) -> int:
    """Write the file at ``location`` (create-only, atomic); its size in bytes."""
    import pyarrow.parquet as pq

    table = arrow_table(rows, unified, format_version)
    with fileio.new_output(location).create() as out:
        pq.write_table(table, out, compression="zstd")
    found = fileio.stat(location)
    if found is None:
        raise PuffinError("written, but not found after", code="partition-stats.write",
                          path=location)
    return found.size
