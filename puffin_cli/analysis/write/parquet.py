"""Parquet columns as ``puffin write`` sketches them: which columns of which files
(:func:`parquet_theta_blobs`: field IDs, Iceberg types, widening across files), and the Theta
sketch of one column over every file (:func:`theta_from_parquet`), read in bounded batches.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from puffin_cli.analysis.write.plan import (
    DEFAULT_THETA_CODEC,
    BlobSpec,
    ThetaFromParquet,
    spec_error,
    theta_blob,
)
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.errors import PuffinError
from puffin_cli.format.numbers import decimal_int
from puffin_cli.storage import FileIO, has_magic, is_remote, os_path, scheme_of

if TYPE_CHECKING:
    import pyarrow as pa

    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.analysis.table.metadata import Snapshot
    from puffin_cli.blobs.theta import CompactTheta


# Rows per Parquet batch: bounded memory whatever the file size.
PARQUET_BATCH_ROWS = 1 << 16
# Parquet field metadata key holding the field ID (Iceberg writes it).
PARQUET_FIELD_ID_KEY = b"PARQUET:field_id"


# --------------------------------------------------------------------------------------------
# Parquet: columns, field IDs and Iceberg types


def relative_to(base_dir: str, name: str) -> str:
    """``name`` as a spec writes it: a URI or an absolute path as is, else under
    ``base_dir``."""
    if not base_dir or scheme_of(name) or os.path.isabs(name):
        return name
    return os.path.join(base_dir, name)


def expand_paths(patterns: Sequence[str], base_dir: str = "", *, fileio: FileIO
                 ) -> tuple[str, ...]:
    """Paths and globs (relative ones against ``base_dir``), each glob sorted, in order and
    without repeats; a glob that matches nothing or a missing file is an error."""
    out: list[str] = []
    for pattern in patterns:
        full = relative_to(base_dir, pattern)
        if has_magic(full):
            matches = fileio.glob(full)
            if not matches:
                raise spec_error(f"{pattern}: no file matches this pattern",
                                 code="spec.parquet.missing")
        else:
            found = fileio.stat(full)
            if found is None or found.kind == "dir":
                raise spec_error(f"{full}: no such file", code="spec.parquet.missing")
            matches = [full]
        out.extend(m for m in matches if m not in out)
    return tuple(out)


def _same_file(location: str) -> str:
    """A location as two spellings of one file compare: a local one resolved."""
    return location if is_remote(location) else os.path.realpath(os_path(location))


def _first(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:2])
    return f"{shown}, …" if len(paths) > 2 else shown


def check_snapshot_files(files: Sequence[str], table: Table, snapshot: Snapshot,
                         table_name: str) -> None:
    """Blobs that claim ``snapshot`` (of ``table``, named ``table_name`` by the user)
    describe exactly its live rows, as ``stats compute`` counts them: ``files`` must be the
    snapshot's live data files, all of them, none with rows the snapshot deletes
    (``--from-parquet`` reads files whole; it applies no delete). The snapshot's files and
    the deletes that apply to each are the stats plan's
    (:func:`puffin_cli.analysis.stats.plan.plan_snapshot`)."""
    from puffin_cli.analysis.stats.plan import plan_snapshot

    plan = plan_snapshot(table, snapshot, None)
    live = {_same_file(f.local): f for f in plan.data_files}
    given = {_same_file(path): path for path in files}
    snap = f"snapshot {snapshot.snapshot_id}"
    instead = (f"`puffin stats compute {table_name} --snapshot "
               f"{snapshot.snapshot_id}` computes a snapshot's statistics; --snapshot none "
               "writes blobs that claim no snapshot")
    dead = [path for key, path in given.items() if key not in live]
    if dead:
        raise spec_error(f"{len(dead)} of the {len(files)} file(s) --from-parquet matched "
                         f"are not live data files of {snap} ({_first(dead)}): its statistics "
                         f"would count rows it does not have; {instead}",
                         code="spec.parquet.not-live")
    missing = [f.location for key, f in live.items() if key not in given]
    if missing:
        raise spec_error(f"{len(missing)} of the {len(live)} live data file(s) of {snap} are "
                         f"not among the files --from-parquet matched ({_first(missing)}): "
                         f"its statistics would miss their rows; {instead}",
                         code="spec.parquet.not-live")
    deleted = [f.location for f in live.values()
               if f.deletion_vector or f.position_deletes or f.equality_deletes]
    if deleted:
        raise spec_error(f"{len(deleted)} of the live data file(s) of {snap} have rows it "
                         f"deletes (deletion vectors, position or equality deletes) that "
                         f"--from-parquet does not apply ({_first(deleted)}); {instead}",
                         code="spec.parquet.deleted-rows")


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


def field_id_of(arrow_field: pa.Field) -> int | None:
    metadata = arrow_field.metadata or {}
    raw = metadata.get(PARQUET_FIELD_ID_KEY)
    return None if raw is None else decimal_int(raw.strip().decode("ascii", "replace"), signed=True)


def _arrow_schema(path: str, fileio: FileIO) -> pa.Schema:
    import pyarrow.parquet as pq

    try:
        with fileio.open_reader(path) as handle:
            return pq.read_schema(handle)
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


def parquet_theta_blobs(files: Sequence[str], *, fileio: FileIO,
                        columns: Sequence[str] | None = None,
                        field_ids: Mapping[str, int] | None = None,
                        table_ids: Mapping[str, int] | None = None,
                        uuid_as_string: bool = False, snapshot_id: int = -1,
                        sequence_number: int = -1,
                        codec: str | None = DEFAULT_THETA_CODEC) -> list[BlobSpec]:
    """One Theta blob per column over all ``files`` (already expanded): ``columns`` in the
    order given, or every top-level column of primitive type (in the first file's order).

    Field IDs come from ``field_ids`` (by column name) first, else from the Parquet schema's
    field-id metadata, else from ``table_ids`` (an Iceberg table's schema, by column name).
    Only schemas are read here, with ``fileio``.
    """
    if not files:
        raise spec_error("no Parquet file given", code="spec.parquet.missing")
    field_ids = dict(field_ids or {})
    schemas = [_arrow_schema(path, fileio) for path in files]
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
        file_id = field_id_of(arrow_field)
        field_id = field_ids.get(name, file_id)
        if field_id is None and table_ids is not None:
            field_id = table_ids.get(name)
            if field_id is None:
                raise spec_error(f"column {name!r} in {files[0]} has no field ID in its "
                                 "Parquet schema and the table's schema has no column of that "
                                 f"name (its columns: {', '.join(sorted(table_ids)) or 'none'}); "
                                 f"give one with --field-id {name}=ID, or leave the column out "
                                 "with --columns", code="spec.parquet.field-id")
        if field_id is None:
            raise spec_error(f"column {name!r} in {files[0]} has no field ID in its Parquet "
                             "schema (PARQUET:field_id), as files not written by Iceberg "
                             "usually have: name the Iceberg table they belong to with --table "
                             "PATH (field IDs by column name from its schema), or give "
                             f"--field-id {name}=ID (repeatable) for each such column",
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
            if field_id_of(arrow_field) == field_id:
                return arrow_field
        return None
    return schema.field(name) if name in schema.names else None


def _parquet_batches(path: str, source: ThetaFromParquet, fileio: FileIO
                     ) -> Iterator[pa.Array]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(fileio.open_reader(path))
        found = _find_column(parquet.schema_arrow, source.column, source.field_id)
        if found is None:
            return
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[found.name]):
            yield batch.column(0)
    except (OSError, ValueError) as exc:
        raise PuffinError(f"cannot read column {source.column!r}: {exc}", code="parquet.read",
                          path=path) from None


def theta_from_parquet(source: ThetaFromParquet, *, fileio: FileIO) -> CompactTheta:
    """The sketch of one column over every file, as Iceberg builds it when it reads these files
    as one Spark task in this order (a table whose data fits one split): an Alpha sketch fed
    row by row, then the union's trim. Hashed batch by batch, so memory stays bounded."""
    import numpy as np

    from puffin_cli.blobs.arrow_values import serialize_column
    from puffin_cli.blobs.theta import AlphaSketch, ThetaAccumulator

    sketch = AlphaSketch()
    for path in source.files:
        for chunk in _parquet_batches(path, source, fileio):
            rows = len(chunk)
            serialized = serialize_column(source.iceberg_type, chunk, rows,
                                          source.uuid_as_string)
            sketch.update(serialized.hashes(np.ones(rows, dtype=bool)))
    union = ThetaAccumulator()
    union.add(sketch.result())
    return union.result()
