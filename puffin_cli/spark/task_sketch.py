"""What one Spark task of ``puffin stats compute`` runs: read its file slices in order, drop
deleted rows, and feed one Alpha Theta sketch per column, as Iceberg Java's ``ThetaSketchAgg``
does over the same rows (see :mod:`puffin_cli.blobs.theta`).

Pure Python (pyarrow, numpy, fastavro; no pyspark): the driver builds :class:`TaskSpec` objects
and Spark calls :func:`sketch_task` in its Python workers, so everything here pickles.

Reading (columns are matched by Iceberg field ID; a column missing from a file reads as nulls):

- Parquet: the row groups whose midpoint (offset of the first column chunk, its dictionary
  page if earlier, plus half the group's compressed size) lies in the split's byte range, as
  parquet-mr's range filter picks them; field IDs from the ``PARQUET:field_id`` metadata.
- ORC: the stripes whose offset lies in the range (offsets from ``split_offsets``; a split
  that is not the whole file needs them); column names from ``orc_names``.
- Avro: the blocks whose preceding sync marker starts in the range (Avro's
  ``DataFileReader.sync`` / ``pastSync``); field IDs from the writer schema's ``field-id``.

A file with no field ID anywhere in its schema (Parquet ``PARQUET:field_id``, ORC ``iceberg.id``
attributes: ``orc_names`` is then ``None``, Avro ``field-id``, ``element-id``, ``key-id``,
``value-id``) is read as Iceberg 1.10 reads it: its top-level columns get IDs by the table's
name mapping (``name_mapping``: a column whose name is one of a field's names), and without one
Parquet numbers them by position from 1 (``ParquetSchemaUtil.addFallbackIds``) while ORC and
Avro match the read columns' own names (``MappingUtil.create`` of the read schema).

Row positions are positions in the whole file. Deletes: the deletion vector, the rows of
the position delete files whose ``file_path`` is the slice's ``location`` (the driver passes
only files that apply: sequence number at least the data file's), and the equality delete
files (a row is deleted when it equals a delete row on every equality column, null matching
null). Equality is decided on Iceberg's serialized values, which are equal exactly when the
values are.

Each column is serialized and hashed by :mod:`puffin_cli.blobs.arrow_values` (converted to
the column's current Iceberg type first), in chunks of :data:`CHUNK_ROWS` rows; nulls and
empty strings or binaries are skipped.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.blobs.arrow_values import SerializedColumn, serialize_column
from puffin_cli.blobs.theta import AlphaSketch, CompactTheta
from puffin_cli.format.errors import PuffinError
from puffin_cli.spark.planning import (
    Column,
    DeletionVectorRef,
    EqualityDeleteFile,
    NameMapping,
    PositionDeleteFile,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    BoolArray = npt.NDArray[np.bool_]
    Int64Array = npt.NDArray[np.int64]

CHUNK_ROWS = 1 << 16
PARQUET_FIELD_ID = b"PARQUET:field_id"
AVRO_SYNC_SIZE = 16
WHOLE_FILE = 1 << 62  # a split length that covers any file
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class SliceSpec:
    """One split of a data file: ``location`` as the manifest names it (position delete rows
    name it so), ``local`` the path to open, the byte range ``[start, start + length)``."""

    location: str
    local: str
    file_format: str  # parquet, orc or avro
    start: int
    length: int
    split_offsets: tuple[int, ...] | None = None
    deletion_vector: DeletionVectorRef | None = None
    position_deletes: tuple[PositionDeleteFile, ...] = ()
    equality_deletes: tuple[EqualityDeleteFile, ...] = ()
    orc_names: tuple[tuple[int, str], ...] | None = None  # ORC: field ID -> column name
    name_mapping: NameMapping | None = None  # the table's, for files without field IDs
    constants: tuple[tuple[int, Any], ...] = ()  # identity partition values by field ID


@dataclass(frozen=True)
class TaskSpec:
    slices: tuple[SliceSpec, ...]
    columns: tuple[Column, ...]
    uuid_as_string: bool = False


@dataclass(frozen=True)
class TaskResult:
    rows: int  # live rows read
    sketches: tuple[CompactTheta, ...]  # per column of the task, in order


@dataclass(frozen=True)
class TaskFailure:
    """A :class:`PuffinError` raised in a Spark task, returned as a value by :func:`run_task`."""

    message: str
    code: str
    path: str | None
    offset: int | None

    def error(self) -> PuffinError:
        return PuffinError(self.message, code=self.code, path=self.path, offset=self.offset)


# --------------------------------------------------------------------------------------------
# Reading


def _read_error(path: str, fmt: str, exc: Exception) -> PuffinError:
    if isinstance(exc, FileNotFoundError):
        return PuffinError(f"{fmt} file not found", code="stats.read", path=path)
    return PuffinError(f"cannot read the {fmt} file: {exc}", code="stats.read", path=path)


def _named(batch: Any, names: dict[int, str]) -> dict[int, Any]:
    """Field ID -> column of a batch read with columns named by ``names``."""
    return {fid: batch.column(name) for fid, name in names.items()}


def _mapped(s: SliceSpec, columns: Sequence[Column], in_file: Sequence[str]) -> dict[int, str]:
    """Field ID -> column of a file without field IDs, by the table's name mapping, else by the
    columns' own names (see the module docstring); the first file column a name maps wins."""
    mapping = (s.name_mapping if s.name_mapping is not None
               else tuple((c.field_id, (c.name,)) for c in columns))
    id_of = {name: fid for fid, names in mapping for name in names}
    wanted = {c.field_id for c in columns}
    out: dict[int, str] = {}
    for name in in_file:
        fid = id_of.get(name)
        if fid in wanted:
            out.setdefault(fid, name)
    return out


def _parquet_ids(schema: Any) -> dict[int, str]:
    out: dict[int, str] = {}
    for f in schema:
        raw = (f.metadata or {}).get(PARQUET_FIELD_ID)
        if raw is not None:
            out.setdefault(int(raw), f.name)
    return out


def _has_parquet_ids(fields: Any) -> bool:
    """Whether any field, nested ones included, has a field ID (``ParquetSchemaUtil.hasIds``)."""
    import pyarrow as pa

    for f in fields:
        if PARQUET_FIELD_ID in (f.metadata or {}):
            return True
        kind = f.type
        if pa.types.is_struct(kind):
            children = [kind.field(i) for i in range(kind.num_fields)]
        elif pa.types.is_map(kind):
            children = [kind.key_field, kind.item_field]
        elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)
              or pa.types.is_fixed_size_list(kind)):
            children = [kind.value_field]
        else:
            children = []
        if _has_parquet_ids(children):
            return True
    return False


def _parquet_batches(s: SliceSpec, columns: Sequence[Column], whole: bool
                     ) -> Iterator[tuple[int, int, dict[int, Any]]]:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(s.local)
    schema = pf.schema_arrow
    if _has_parquet_ids(schema):
        present = _parquet_ids(schema)
        names = {c.field_id: present[c.field_id] for c in columns if c.field_id in present}
    elif s.name_mapping is not None:
        names = _mapped(s, columns, schema.names)
    else:  # fallback IDs: the top-level column at position i (from 1) has ID i
        names = {c.field_id: schema.names[c.field_id - 1] for c in columns
                 if 0 < c.field_id <= len(schema.names)}
    meta = pf.metadata
    position = 0
    for group in range(meta.num_row_groups):
        rg = meta.row_group(group)
        if whole or s.start <= _row_group_midpoint(rg) < s.start + s.length:
            first = position
            for batch in pf.iter_batches(batch_size=CHUNK_ROWS, row_groups=[group],
                                         columns=list(names.values()), use_threads=False):
                yield first, batch.num_rows, _named(batch, names)
                first += batch.num_rows
        position += rg.num_rows


def _row_group_midpoint(rg: Any) -> int:
    """parquet-mr's midpoint: first column chunk's start + total compressed size / 2."""
    first = rg.column(0)
    start = int(first.data_page_offset)
    if first.has_dictionary_page and 0 <= first.dictionary_page_offset < start:
        start = int(first.dictionary_page_offset)
    total = sum(int(rg.column(i).total_compressed_size) for i in range(rg.num_columns))
    return start + total // 2


def _orc_batches(s: SliceSpec, columns: Sequence[Column], whole: bool
                 ) -> Iterator[tuple[int, int, dict[int, Any]]]:
    import pyarrow.orc as po

    orc = po.ORCFile(s.local)
    in_file = orc.schema.names
    if s.orc_names is None:  # no iceberg.id attribute in the file
        names = _mapped(s, columns, in_file)
    else:
        ids = {c.field_id for c in columns}
        names = {fid: name for fid, name in s.orc_names if fid in ids and name in in_file}
    if whole:
        chosen = set(range(orc.nstripes))
    elif s.split_offsets is not None and len(s.split_offsets) == orc.nstripes:
        end = s.start + s.length
        chosen = {i for i, offset in enumerate(s.split_offsets) if s.start <= offset < end}
    else:
        raise PuffinError(f"cannot read bytes {s.start} to {s.start + s.length} of this ORC "
                          "file alone: a split needs the stripe offsets (split_offsets with "
                          f"one offset per stripe, {orc.nstripes})", code="stats.split",
                          path=s.local)
    position = 0
    for stripe in range(orc.nstripes):
        if stripe not in chosen:  # its rows count for positions (pyarrow has no stripe sizes)
            position += orc.read_stripe(stripe, columns=orc.schema.names[:1]).num_rows
            continue
        # no column of the file wanted: one read all the same, for the row count
        whole_stripe = orc.read_stripe(stripe, columns=list(names.values())
                                       or orc.schema.names[:1])
        for first in range(0, whole_stripe.num_rows, CHUNK_ROWS):
            batch = whole_stripe.slice(first, CHUNK_ROWS)
            yield position, batch.num_rows, _named(batch, names)
            position += batch.num_rows


def _strip_logical_types(schema: Any) -> Any:
    """The schema without ``logicalType`` keys: fastavro then returns raw values."""
    if isinstance(schema, dict):
        return {k: _strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_strip_logical_types(v) for v in schema]
    return schema


_AVRO_IDS = ("field-id", "element-id", "key-id", "value-id")


def _has_avro_ids(schema: Any) -> bool:
    """Whether the Avro schema has an Iceberg ID anywhere (``AvroSchemaUtil.hasIds``)."""
    if isinstance(schema, list):  # a union
        return any(_has_avro_ids(branch) for branch in schema)
    if not isinstance(schema, dict):
        return False
    if any(key in schema for key in _AVRO_IDS):
        return True
    nested = [schema.get("type"), schema.get("items"), schema.get("values")]
    nested += schema.get("fields") or []
    return any(_has_avro_ids(n) for n in nested)


def _avro_batches(s: SliceSpec, columns: Sequence[Column], whole: bool
                  ) -> Iterator[tuple[int, int, dict[int, Any]]]:
    import fastavro
    import pyarrow as pa

    with open(s.local, "rb") as source:
        blocks = fastavro.block_reader(source)
        writer = blocks.writer_schema
        fields = [f for f in (writer.get("fields", []) if isinstance(writer, dict) else [])
                  if isinstance(f, dict)]
        if _has_avro_ids(writer):
            ids = {c.field_id for c in columns}
            names = {f["field-id"]: f["name"] for f in fields if f.get("field-id") in ids}
        else:
            names = _mapped(s, columns, [str(f.get("name")) for f in fields])
        raw = fastavro.parse_schema(_strip_logical_types(writer))
        position = 0
        pending: list[Any] = []
        first = 0

        def flush() -> tuple[int, int, dict[int, Any]]:
            columns = {fid: pa.array([r.get(name) for r in pending])
                       for fid, name in names.items()}
            return first, len(pending), columns

        block: Any
        for block in blocks:
            inside = whole or s.start <= block.offset - AVRO_SYNC_SIZE < s.start + s.length
            if inside:
                if not pending:
                    first = position
                data = block.bytes_
                data.seek(0)
                pending.extend(fastavro.schemaless_reader(data, raw, None)
                               for _ in range(block.num_records))
                if len(pending) >= CHUNK_ROWS:
                    yield flush()
                    pending = []
            elif pending:
                yield flush()
                pending = []
            position += block.num_records
        if pending:
            yield flush()


_READERS = {"parquet": _parquet_batches, "orc": _orc_batches, "avro": _avro_batches}


def read_batches(s: SliceSpec, columns: Sequence[Column]
                 ) -> Iterator[tuple[int, int, dict[int, Any]]]:
    """(position of the first row in the file, rows, field ID -> Arrow column) of the split's
    rows in file order, in batches of at most about :data:`CHUNK_ROWS` rows; columns missing
    from the file are left out."""
    reader = _READERS.get(s.file_format)
    if reader is None:
        raise PuffinError(f"data file format {s.file_format!r} is not supported "
                          f"(supported: {', '.join(_READERS)})", code="stats.format",
                          path=s.local)
    try:
        whole = s.start <= 0 and s.start + s.length >= os.path.getsize(s.local)
        yield from reader(s, columns, whole)
    except PuffinError:
        raise
    except Exception as exc:  # any reader failure becomes one clear error
        raise _read_error(s.local, s.file_format, exc) from None


# --------------------------------------------------------------------------------------------
# Deletes


def _dv_positions(dv: DeletionVectorRef) -> Int64Array:
    import numpy as np

    from puffin_cli.blobs.deletion_vector import decode_deletion_vector, iter_position_chunks
    from puffin_cli.format.io import RangeFile

    try:
        with RangeFile(dv.puffin_local) as source:
            data = source.read(dv.offset, dv.length)
        decoded = decode_deletion_vector(data, dv.offset)
    except PuffinError as exc:
        raise exc.with_path(dv.puffin_local) from None
    parts = list(iter_position_chunks(decoded))
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


def _read_position_deletes(d: PositionDeleteFile) -> Any:
    """The (file_path, pos) rows of a position delete file, as an Arrow table."""
    import pyarrow as pa

    try:
        if d.file_format == "parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(d.local, columns=["file_path", "pos"])
        elif d.file_format == "orc":
            import pyarrow.orc as po

            table = po.read_table(d.local, columns=["file_path", "pos"])
        elif d.file_format == "avro":
            import fastavro

            with open(d.local, "rb") as source:
                records: list[Any] = [(r["file_path"], r["pos"])  # type: ignore[index,call-overload]
                                      for r in fastavro.reader(source)]
            table = pa.table({"file_path": pa.array([r[0] for r in records], pa.string()),
                              "pos": pa.array([r[1] for r in records], pa.int64())})
        else:
            raise PuffinError(f"position delete file format {d.file_format!r} is not "
                              "supported (supported: parquet, orc, avro)", code="stats.format",
                              path=d.local)
    except PuffinError:
        raise
    except Exception as exc:
        raise _read_error(d.local, d.file_format, exc) from None
    return table


class _Deletes:
    """The deletes of a task, each delete file read once."""

    def __init__(self) -> None:
        self._position_files: dict[str, Any] = {}
        self._keys: dict[str, Any] = {}

    def positions(self, s: SliceSpec) -> Int64Array:
        """Sorted distinct deleted positions of the slice's file."""
        import numpy as np

        parts = [self._position_file(d, s.location) for d in s.position_deletes]
        if s.deletion_vector is not None:
            parts.append(_dv_positions(s.deletion_vector))
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def _position_file(self, d: PositionDeleteFile, location: str) -> Int64Array:
        """The positions a position delete file holds for one data file (a partition-scoped
        file holds those of several: it is read once per task)."""
        import numpy as np
        import pyarrow.compute as pc

        if d.local not in self._position_files:
            self._position_files[d.local] = _read_position_deletes(d)
        table = self._position_files[d.local]
        mine = table.filter(pc.equal(table["file_path"], location))
        positions: Int64Array = mine["pos"].to_numpy().astype(np.int64)
        return positions

    def equality_keys(self, d: EqualityDeleteFile) -> Any:
        if d.location not in self._keys:
            spec = SliceSpec(d.location, d.local, d.file_format, 0, WHOLE_FILE)
            tables = [_key_table(d.columns, columns, rows)
                      for _, rows, columns in read_batches(spec, d.columns)]
            if tables:
                import pyarrow as pa

                self._keys[d.location] = pa.concat_tables(tables)
            else:
                self._keys[d.location] = None
        return self._keys[d.location]


def _key_table(columns: Sequence[Column], arrays: dict[int, Any], rows: int,
               serialized: dict[int, SerializedColumn] | None = None) -> Any:
    """Join keys: per equality column its serialized value and a validity flag."""
    import pyarrow as pa

    data: dict[str, Any] = {}
    for i, c in enumerate(columns):
        ser = (serialized or {}).get(c.field_id)
        if ser is None:
            ser = serialize_column(c.type, arrays.get(c.field_id), rows)
        data[f"k{i}"] = ser.key()
        data[f"v{i}"] = pa.array(ser.valid)
    return pa.table(data)


def _equality_keep(d: EqualityDeleteFile, keys: Any, arrays: dict[int, Any], rows: int,
                   serialized: dict[int, SerializedColumn]) -> BoolArray:
    import numpy as np
    import pyarrow as pa

    keep = np.zeros(rows, dtype=bool)
    left = _key_table(d.columns, arrays, rows, serialized)
    left = left.append_column("row", pa.array(np.arange(rows, dtype=np.int64)))
    names = [n for i in range(len(d.columns)) for n in (f"k{i}", f"v{i}")]
    survivors = left.join(keys, keys=names, join_type="left anti", use_threads=False)
    keep[survivors["row"].to_numpy()] = True
    return keep


# --------------------------------------------------------------------------------------------
# The task


_CONSTANT_TYPES = {"boolean": "bool_", "int": "int32", "long": "int64", "float": "float32",
                   "double": "float64", "date": "int32", "time": "int64", "timestamp": "int64",
                   "timestamptz": "int64", "string": "string", "binary": "binary",
                   "fixed": "binary", "uuid": "binary"}


def _constant(column: Column, value: Any, rows: int) -> Any:
    """``rows`` copies of an identity partition value (as fastavro decoded it from the
    manifest) as the column's Arrow values: what Iceberg's readers give for such a column,
    whether the file stores it or not."""
    import uuid

    import pyarrow as pa

    if value is None:
        return pa.nulls(rows)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        value = (value - _EPOCH) // datetime.timedelta(microseconds=1)
    elif isinstance(value, datetime.date):
        value = (value - _EPOCH.date()).days
    elif isinstance(value, datetime.time):
        value = (((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
                 + value.microsecond)
    elif isinstance(value, uuid.UUID):
        value = value.bytes
    kind = column.type  # one of planning.SUPPORTED_TYPES
    arrow = (pa.decimal128(kind.precision or 38, kind.scale or 0) if kind.name == "decimal"
             else getattr(pa, _CONSTANT_TYPES[kind.name])())
    return pa.repeat(pa.scalar(value, arrow), rows)


def _serialize(s: SliceSpec, column: Column, arrays: dict[int, Any], rows: int,
               uuid_as_string: bool) -> SerializedColumn:
    """:func:`serialize_column`, its errors naming the file and the column."""
    try:
        return serialize_column(column.type, arrays.get(column.field_id), rows, uuid_as_string)
    except PuffinError as exc:
        raise PuffinError(f"column {column.name} (field {column.field_id}): {exc.message}",
                          code=exc.code, path=s.local) from None


def sketch_task(spec: TaskSpec) -> TaskResult:
    """Read the task's slices in order and sketch every column of the live rows."""
    import numpy as np

    sketches = [AlphaSketch() for _ in spec.columns]
    by_id = {c.field_id: c for c in spec.columns}
    deletes = _Deletes()
    live = 0
    for s in spec.slices:
        deleted = deletes.positions(s)
        equality = [(d, deletes.equality_keys(d)) for d in s.equality_deletes]
        equality = [(d, k) for d, k in equality if k is not None]
        reading: dict[int, Column] = {}
        for c in [*spec.columns, *(c for d, _ in equality for c in d.columns)]:
            reading.setdefault(c.field_id, c)
        for first, rows, arrays in read_batches(s, list(reading.values())):
            for field_id, value in s.constants:
                if field_id in reading:
                    arrays[field_id] = _constant(reading[field_id], value, rows)
            keep = np.ones(rows, dtype=bool)
            low, high = np.searchsorted(deleted, [first, first + rows])
            keep[deleted[low:high] - first] = False
            serialized = {c.field_id: _serialize(s, c, arrays, rows, spec.uuid_as_string)
                          for c in spec.columns}
            # the sketch serialization serves equality too, except uuids hashed as text
            reusable = {c.field_id: serialized[c.field_id] for c in spec.columns
                        if not (spec.uuid_as_string and c.type.name == "uuid")}
            for d, keys in equality:
                keep &= _equality_keep(d, keys, arrays, rows, {
                    c.field_id: reusable[c.field_id] for c in d.columns
                    if c.field_id in reusable and by_id[c.field_id].type == c.type})
            live += int(keep.sum())
            for sketch, c in zip(sketches, spec.columns, strict=True):
                sketch.update(serialized[c.field_id].hashes(keep))
    return TaskResult(live, tuple(s.result() for s in sketches))


def run_task(spec: TaskSpec) -> TaskResult | TaskFailure:
    """:func:`sketch_task` as a Spark task runs it: a bad or missing file comes back as a
    value, so that the driver reports it as one line (an exception would reach the driver as
    the worker's traceback, after Spark retried the task in vain)."""
    try:
        return sketch_task(spec)
    except PuffinError as exc:
        return TaskFailure(exc.message, exc.code, exc.path, exc.offset)
