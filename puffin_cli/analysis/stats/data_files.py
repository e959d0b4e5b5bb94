"""How a Spark task of ``puffin stats compute`` reads its slices of data files. Pure Python
(pyarrow, fastavro; no pyspark).

Reading (columns are matched by Iceberg field ID; a column missing from a file reads as nulls):

- Parquet: the row groups whose midpoint (offset of the first column chunk, its dictionary
  page if earlier, plus half the group's compressed size) lies in the split's byte range, as
  parquet-mr's range filter picks them; field IDs from the ``PARQUET:field_id`` metadata.
- ORC: the stripes whose offset lies in the range (offsets from ``split_offsets``; a split
  that is not the whole file needs them); field IDs from Iceberg's ``iceberg.id`` type
  attributes (pyarrow reads them into field metadata).
- Avro: the blocks whose preceding sync marker starts in the range (Avro's
  ``DataFileReader.sync`` / ``pastSync``); field IDs from the writer schema's ``field-id``.

A file with no field ID anywhere in its schema (Parquet ``PARQUET:field_id``, ORC ``iceberg.id``
attributes, Avro ``field-id``, ``element-id``, ``key-id``,
``value-id``) is read as Iceberg 1.10 reads it: its top-level columns get IDs by the table's
name mapping (``name_mapping``: a column whose name is one of a field's names), and without one
Parquet numbers them by position from 1 (``ParquetSchemaUtil.addFallbackIds``) while ORC and
Avro match the read columns' own names (``MappingUtil.create`` of the read schema).

Row positions are positions in the whole file.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.files import (
    Column,
    DeletionVectorRef,
    EqualityDeleteFile,
    NameMapping,
    PositionDeleteFile,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.avro import SYNC_SIZE, AvroFile
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE
from puffin_cli.storage import FileIO, StorageError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    BoolArray = npt.NDArray[np.bool_]


CHUNK_ROWS = 1 << 16
PARQUET_FIELD_ID = b"PARQUET:field_id"
ORC_FIELD_ID = b"iceberg.id"
WHOLE_FILE = 1 << 62  # a split length that covers any file


@dataclass(frozen=True)
class SliceSpec:
    """One split of a data file: ``location`` as the manifest names it (position delete rows
    name it so), ``local`` the path to open, the byte range ``[start, start + length)``;
    ``fileio`` is its table's, which opens the file and its delete files (on an executor
    too: it pickles as its properties)."""

    location: str
    local: str
    file_format: str  # parquet, orc or avro
    start: int
    length: int
    split_offsets: tuple[int, ...] | None = None
    deletion_vector: DeletionVectorRef | None = None
    position_deletes: tuple[PositionDeleteFile, ...] = ()
    equality_deletes: tuple[EqualityDeleteFile, ...] = ()
    name_mapping: NameMapping | None = None  # the table's, for files without field IDs
    constants: tuple[tuple[int, Any], ...] = ()  # identity partition values by field ID
    fileio: FileIO = dataclasses.field(default_factory=FileIO, kw_only=True, compare=False,
                                       repr=False)


def read_error(path: str, fmt: str, exc: Exception) -> PuffinError:
    if isinstance(exc, FileNotFoundError) or getattr(exc, "code", None) == "io.not-found":
        return PuffinError(f"{fmt} file not found", code="stats.read", path=path)
    if isinstance(exc, StorageError):
        return PuffinError(f"cannot read the {fmt} file: {exc.message}", code="stats.read",
                           path=path)
    return PuffinError(f"cannot read the {fmt} file: {exc}", code="stats.read", path=path)


def _size(fileio: FileIO, location: str) -> int:
    with fileio.new_input(location) as source:
        return source.size


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

    pf = pq.ParquetFile(s.fileio.open_reader(s.local))
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


def orc_field_names(schema: Any, path: str) -> dict[int, str] | None:
    """Field ID -> top-level column name of the ORC file at ``path`` with ``schema`` (its
    pyarrow schema), from the ``iceberg.id`` type attributes; ``None`` when no type anywhere in
    the file has one (``ORCSchemaUtil.hasIds``): the file is then read by name."""
    if not any(_orc_has_ids(field) for field in schema):
        return None
    names = {}
    for field in schema:
        value = (field.metadata or {}).get(ORC_FIELD_ID)
        if value is None:
            continue
        if not value.isdigit() or len(value) > 10:
            raise PuffinError(f"ORC column {field.name!r} has the iceberg.id attribute "
                              f"{value[:40].decode('utf-8', 'replace')!r}, not a field ID",
                              code="stats.read", path=path)
        names[int(value)] = field.name
    return names


def _orc_has_ids(field: Any) -> bool:
    if field.metadata and ORC_FIELD_ID in field.metadata:
        return True
    kind = field.type
    return any(_orc_has_ids(kind.field(i)) for i in range(kind.num_fields))


def _orc_batches(s: SliceSpec, columns: Sequence[Column], whole: bool
                 ) -> Iterator[tuple[int, int, dict[int, Any]]]:
    import pyarrow.orc as po

    orc = po.ORCFile(s.fileio.open_reader(s.local))
    found = orc_field_names(orc.schema, s.local)
    if found is None:  # no iceberg.id attribute in the file
        names = _mapped(s, columns, orc.schema.names)
    else:
        ids = {c.field_id for c in columns}
        names = {fid: name for fid, name in found.items() if fid in ids}
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

    with s.fileio.open_reader(s.local) as source:
        container = AvroFile(source, limit=DEFAULT_MAX_BLOB_SIZE, what="Avro data file")
        writer = container.schema
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

        for block in container.blocks():
            inside = whole or s.start <= block.offset - SYNC_SIZE < s.start + s.length
            if inside:
                if not pending:
                    first = position
                data = io.BytesIO(block.data)
                pending.extend(fastavro.schemaless_reader(data, raw, None)
                               for _ in range(block.count))
                if len(pending) >= CHUNK_ROWS:
                    yield flush()
                    pending = []
            elif pending:
                yield flush()
                pending = []
            position += block.count
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
        whole = s.start <= 0 and (s.start + s.length >= WHOLE_FILE
                                  or s.start + s.length >= _size(s.fileio, s.local))
        yield from reader(s, columns, whole)
    except StorageError as exc:
        raise read_error(s.local, s.file_format, exc) from None
    except PuffinError:
        raise
    except Exception as exc:  # any reader failure becomes one clear error
        raise read_error(s.local, s.file_format, exc) from None
