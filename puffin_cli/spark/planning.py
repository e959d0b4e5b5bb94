"""What ``puffin stats compute`` reads: a snapshot's live data files, the deletes that apply to
them, and the columns to sketch. Pure Python (no pyspark): the table reader
(:mod:`puffin_cli.analysis.table.metadata`, :mod:`puffin_cli.analysis.table.manifests`) does
the metadata and manifest reading; this module applies the spec's rules on top.

Which deletes apply to a data file (Iceberg table spec, "Scan Planning"):

- a position delete file, to the data files its ``file_path`` column names whose data sequence
  number is at most the delete file's. Each :class:`DataFile` lists the position delete files
  Iceberg's ``DeleteFileIndex`` attaches to its scan task: a file-scoped one
  (``referenced_data_file``, or equal lower and upper bounds of ``file_path``) naming it, and
  the partition-scoped ones of its spec and partition, each with that sequence condition;
- a deletion vector, to its ``referenced_data_file`` when that file's data sequence number is
  at most the DV's; a data file with a DV gets no position delete file (Iceberg's rule: the
  DV replaces them);
- an equality delete file, to data files whose data sequence number is strictly lower than
  the delete file's and whose partition (spec ID and values) equals the delete file's, or to
  every such data file when the delete file's spec is unpartitioned (no field, or only
  ``void`` fields: Iceberg Java's ``PartitionSpec.isUnpartitioned``), a "global" delete.
  Each :class:`DataFile` lists the ones that apply to it (:func:`equality_deletes_by_file`),
  less those whose column metrics show they cannot delete any of its rows
  (:func:`can_contain_equality_deletes`: Iceberg attaches exactly these to the scan task).
  Their equality columns are looked up by field ID in the snapshot's schema, else in the
  newest schema that has them (a dropped column still applies, per the spec).

Columns: by default every top-level column of primitive type in the snapshot's schema (what
Iceberg's ``compute_table_stats`` sketches); ``--columns`` names them (the snapshot's schema
first, then the current one, so a column renamed since the snapshot is found by either name).

Name mapping: data files without Iceberg field IDs (added by ``add_files``, ``migrate`` or
``snapshot``) are read through the table property ``schema.name-mapping.default``, a JSON list
of ``{"field-id", "names", "fields"}`` objects (:func:`parse_name_mapping`, checked as Iceberg's
``NameMappingParser`` and ``MappedFields`` check it); the plan keeps its top level.
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from puffin_cli.analysis.table.manifests import (
    CONTENT_EQUALITY_DELETES,
    ContentFile,
    ManifestReader,
    SnapshotFiles,
    snapshot_files,
)
from puffin_cli.analysis.table.metadata import (
    METADATA_DIR,
    PathMapper,
    Snapshot,
    TableMetadata,
    default_mapper,
    load_metadata,
    normalize_location,
    resolve_metadata_path,
)
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.format.errors import PuffinError

# The ``file_path`` column of position delete files (Iceberg's MetadataColumns.DELETE_FILE_PATH).
DELETE_FILE_PATH_ID = 2147483546
# Types Spark can read and the pipeline can serialize as Iceberg does.
SUPPORTED_TYPES = frozenset({
    "boolean", "int", "long", "float", "double", "decimal", "date", "time", "timestamp",
    "timestamptz", "string", "uuid", "fixed", "binary",
})
DATA_FORMATS = frozenset({"parquet", "orc", "avro"})
NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
_INT_RANGE = range(-(2**31), 2**31)

# Top-level field ID -> the names a data file may give the column (a name mapping).
NameMapping = tuple[tuple[int, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Column:
    """One column to sketch: its field ID, name (in the snapshot's schema) and type."""

    field_id: int
    name: str
    type: IcebergType


@dataclass(frozen=True)
class EqualityDeleteFile:
    """An equality delete file that applies to at least one live data file: a data row equal
    (null matching null) to one of its rows on ``columns`` (its ``equality_ids``, in order) is
    deleted from the data files it applies to. ``partition_key`` is its (spec, partition)
    among the plan's :attr:`DataFile.partition_key`; ``None`` for a global delete."""

    location: str
    local: str
    file_format: str
    record_count: int
    sequence_number: int
    columns: tuple[Column, ...]
    partition_key: int | None
    file_size: int = field(default=0, compare=False)  # its weight in task planning only


@dataclass(frozen=True)
class PositionDeleteFile:
    """A v2 position delete file (rows of ``file_path``, ``pos``). ``referenced_data_file``:
    the one data file it holds deletes for when it is file-scoped (Iceberg's
    ``ContentFileUtil.referencedDataFile``: manifest field 143, else equal lower and upper
    bounds of its ``file_path`` column), ``None`` for a partition-scoped file."""

    location: str
    local: str
    file_format: str
    record_count: int
    sequence_number: int
    file_size: int = 0
    referenced_data_file: str | None = None


@dataclass(frozen=True)
class DeletionVectorRef:
    """A deletion vector that applies to ``data_file`` (a location as the manifest names it)."""

    data_file: str
    puffin_local: str
    offset: int
    length: int
    cardinality: int


@dataclass(frozen=True)
class DataFile:
    """A live data file: ``location`` as the manifest names it, ``local`` the path to read.
    ``partition_key`` numbers its (spec, partition) within the plan; ``equality_deletes`` are
    the equality delete files that apply to it, ``position_deletes`` the position delete
    files and ``deletion_vector`` its DV (when it has one, Iceberg attaches no position delete
    file), exactly the delete files Iceberg's ``DeleteFileIndex`` attaches to its scan task.
    ``file_size`` and ``split_offsets`` (manifest fields 104 and 132) are what Iceberg splits
    the file by (:mod:`puffin_cli.spark.tasks`). ``constants`` are the values of its
    identity partition fields by source field ID: Iceberg's readers take such a column from
    them, so a file need not store it (Hive-style partition directories)."""

    location: str
    local: str
    file_format: str
    record_count: int
    sequence_number: int
    partition_key: int = 0
    equality_deletes: tuple[EqualityDeleteFile, ...] = ()
    file_size: int = 0
    split_offsets: tuple[int, ...] | None = None
    position_deletes: tuple[PositionDeleteFile, ...] = ()
    deletion_vector: DeletionVectorRef | None = None
    constants: tuple[tuple[int, Any], ...] = ()


@dataclass(frozen=True)
class StatsPlan:
    table_dir: Path
    metadata: TableMetadata
    mapper: PathMapper
    snapshot: Snapshot
    schema_id: int
    columns: tuple[Column, ...]
    skipped: tuple[tuple[str, str], ...]  # (column, why) not sketched by default
    data_files: tuple[DataFile, ...]
    position_deletes: tuple[PositionDeleteFile, ...]
    deletion_vectors: tuple[DeletionVectorRef, ...]
    equality_deletes: tuple[EqualityDeleteFile, ...] = ()  # those applying to a live file
    name_mapping: NameMapping | None = None  # the table's, None without the property

    @property
    def statistics_dir(self) -> Path:
        return self.table_dir / METADATA_DIR


def _primitive(field: dict[str, Any]) -> IcebergType | None:
    kind = field.get("type")
    if not isinstance(kind, str):
        return None
    try:
        parsed = IcebergType.parse(kind)
    except PuffinError:
        return None
    return parsed if parsed.name in SUPPORTED_TYPES else None


def _top_level(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in schema.get("fields") or [] if isinstance(f, dict)
            and isinstance(f.get("id"), int)]


def select_columns(metadata: TableMetadata, snapshot: Snapshot,
                   names: list[str] | None) -> tuple[int, tuple[Column, ...],
                                                     tuple[tuple[str, str], ...]]:
    """(schema id, columns, skipped) for the snapshot's schema; see the module docstring."""
    schema_id, schema = metadata.schema_for(snapshot.snapshot_id)
    fields = _top_level(schema)
    if names is None:
        columns, skipped = [], []
        for f in fields:
            parsed = _primitive(f)
            if parsed is not None:
                columns.append(Column(f["id"], str(f["name"]), parsed))
            elif not isinstance(f.get("type"), dict):
                skipped.append((str(f["name"]), f"type {f.get('type')} is not supported"))
        return schema_id, tuple(columns), tuple(skipped)
    by_name = {str(f["name"]): f for f in fields}
    current = {str(f["name"]): f for f in _top_level(metadata.schemas[metadata.current_schema_id])}
    by_id = {f["id"]: f for f in fields}
    chosen: list[Column] = []
    for name in names:
        found = by_name.get(name)
        if found is None and name in current:
            found = by_id.get(current[name]["id"])
        if found is None:
            known = ", ".join(by_name) or "none"
            raise PuffinError(f"--columns: no top-level column {name!r} in schema {schema_id} "
                              f"of snapshot {snapshot.snapshot_id} (columns: {known})",
                              code="stats.column")
        parsed = _primitive(found)
        if parsed is None:
            raise PuffinError(f"--columns: column {name!r} has type {found.get('type')!r}, not a "
                              "supported primitive type (supported: "
                              f"{', '.join(sorted(SUPPORTED_TYPES))})", code="stats.column")
        if all(c.field_id != found["id"] for c in chosen):
            chosen.append(Column(found["id"], str(found["name"]), parsed))
    return schema_id, tuple(chosen), ()


def is_unpartitioned(spec: dict[str, Any]) -> bool:
    """No partition field other than ``void`` ones (Java's ``PartitionSpec.isUnpartitioned``)."""
    return all(isinstance(f, dict) and f.get("transform") == "void"
               for f in spec.get("fields") or [])


def _partition_of(entry: ContentFile) -> tuple[int, tuple[tuple[str, Any], ...]]:
    return entry.spec_id, tuple(sorted(entry.partition.items()))


def equality_deletes_by_file(specs: dict[int, dict[str, Any]], data_files: Iterable[ContentFile],
                             delete_files: Iterable[ContentFile]
                             ) -> dict[str, tuple[ContentFile, ...]]:
    """Data file path -> the equality delete files that apply to it (in sequence-number order;
    data files with none are left out). A delete file applies to a data file whose data
    sequence number is strictly lower, in the same spec and partition unless the delete's
    spec is unpartitioned (see the module docstring). ``specs``: the table's specs by ID."""
    by_partition: dict[tuple[int, tuple[tuple[str, Any], ...]], list[ContentFile]] = {}
    global_deletes: list[ContentFile] = []
    for entry in delete_files:
        if entry.content != CONTENT_EQUALITY_DELETES:
            continue
        if is_unpartitioned(specs.get(entry.spec_id) or {}):
            global_deletes.append(entry)
        else:
            by_partition.setdefault(_partition_of(entry), []).append(entry)
    if not global_deletes and not by_partition:
        return {}

    def ordered(entries: list[ContentFile]) -> tuple[list[int], list[ContentFile]]:
        entries = sorted(entries, key=lambda e: (e.sequence_number, e.path))
        return [e.sequence_number for e in entries], entries

    no_deletes: tuple[list[int], list[ContentFile]] = ([], [])
    globals_index = ordered(global_deletes)
    partition_index = {key: ordered(entries) for key, entries in by_partition.items()}
    out: dict[str, tuple[ContentFile, ...]] = {}
    for data in data_files:
        found: list[ContentFile] = []
        for sequences, entries in (globals_index,
                                   partition_index.get(_partition_of(data), no_deletes)):
            # strictly newer: from the first delete whose sequence number is above the data's
            found.extend(entries[bisect.bisect_right(sequences, data.sequence_number):])
        if found:
            found.sort(key=lambda e: (e.sequence_number, e.path))
            out[data.path] = tuple(found)
    return out


def equality_column(metadata: TableMetadata, schema: dict[str, Any], field_id: int,
                    location: str) -> Column:
    """The column an equality delete file matches by: top-level field ``field_id`` of the
    snapshot's ``schema``, else of the newest schema that has it (a dropped column)."""
    candidates = [schema] + [metadata.schemas[k] for k in sorted(metadata.schemas, reverse=True)]
    for candidate in candidates:
        found = next((f for f in _top_level(candidate) if f["id"] == field_id), None)
        if found is None:
            continue
        parsed = _primitive(found)
        if parsed is None or parsed.name in ("float", "double"):
            raise PuffinError(f"{location}: equality delete column {found.get('name')!r} "
                              f"(field {field_id}) has type {found.get('type')!r}, which "
                              "equality deletes cannot be applied on (supported: "
                              f"{', '.join(sorted(SUPPORTED_TYPES - {'float', 'double'}))})",
                              code="stats.equality-deletes")
        return Column(field_id, str(found["name"]), parsed)
    raise PuffinError(f"{location}: equality field ID {field_id} is not a top-level column of "
                      "any schema of the table (nested equality fields are not supported)",
                      code="stats.equality-deletes")


def _equality_deletes(metadata: TableMetadata, mapper: PathMapper, schema: dict[str, Any],
                      files: SnapshotFiles, data: list[DataFile]) -> list[DataFile]:
    """``data`` with partition keys and the equality delete files that apply to each."""
    applying = equality_deletes_by_file(metadata.specs, files.data_files.values(),
                                        files.delete_files)
    deletes = {d.path: d for d in files.delete_files}
    current = {f["id"]: f for f in _top_level(metadata.schemas[metadata.current_schema_id])}
    keys: dict[tuple[int, tuple[tuple[str, Any], ...]], int] = {}
    for entry in files.data_files.values():
        keys.setdefault(_partition_of(entry), len(keys))
    converted: dict[str, EqualityDeleteFile] = {}

    def convert(entry: ContentFile) -> EqualityDeleteFile:
        done = converted.get(entry.path)
        if done is not None:
            return done
        if entry.file_format.lower() != "parquet":
            raise PuffinError(f"{entry.path}: equality delete file format {entry.file_format} "
                              "is not supported (supported: parquet)",
                              code="stats.equality-deletes")
        if not entry.equality_ids:
            raise PuffinError(f"{entry.path}: equality delete file without equality_ids "
                              "(manifest field 135)", code="stats.equality-deletes")
        columns = tuple(equality_column(metadata, schema, i, entry.path)
                        for i in entry.equality_ids)
        key = (None if is_unpartitioned(metadata.specs.get(entry.spec_id) or {})
               else keys[_partition_of(entry)])
        done = EqualityDeleteFile(entry.path, _local(mapper, entry.path), "parquet",
                                  entry.record_count, entry.sequence_number, columns, key,
                                  entry.file_size)
        converted[entry.path] = done
        return done

    out = []
    for f in data:
        entry = files.data_files[f.location]
        out.append(replace(f, partition_key=keys[_partition_of(entry)],
                           equality_deletes=tuple(
                               convert(d) for d in applying.get(f.location, ())
                               if can_contain_equality_deletes(entry, deletes[d.path], current))))
    return out


def _bound(type_text: Any, raw: bytes) -> Any:
    """A lower or upper bound (Iceberg's single-value serialization) as a Python value that
    orders as Iceberg's ``Comparators.forType`` orders the decoded value; ``None`` for a type
    not decoded here (the bounds are then taken to overlap)."""
    try:
        name = IcebergType.parse(type_text).name if isinstance(type_text, str) else ""
    except PuffinError:
        return None
    if name in ("int", "date", "long", "time", "timestamp", "timestamptz"):
        # 4 bytes for a long is a bound written before an int -> long promotion
        return int.from_bytes(raw, "little", signed=True) if len(raw) in (4, 8) else None
    if name == "boolean":
        return raw[:1] != b"\x00" if raw else None
    if name == "string":  # Comparators.charSequences: Unicode code point order
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if name == "uuid":  # java.util.UUID.compareTo: signed high then signed low 64 bits
        return ((int.from_bytes(raw[:8], "big", signed=True),
                 int.from_bytes(raw[8:], "big", signed=True)) if len(raw) == 16 else None)
    if name in ("fixed", "binary"):  # unsigned lexicographic
        return raw
    if name == "decimal":  # the unscaled value; both sides have the column's scale
        return int.from_bytes(raw, "big", signed=True)
    return None


def _count(counts: dict[int, int] | None, field: dict[str, Any]) -> int | None:
    return None if counts is None else counts.get(field["id"])


def _contains_null(nulls: dict[int, int] | None, field: dict[str, Any]) -> bool:
    if field.get("required") is True:
        return False
    count = _count(nulls, field)
    return count is None or count > 0


def _all_null(nulls: dict[int, int] | None, values: dict[int, int] | None,
              field: dict[str, Any]) -> bool:
    if field.get("required") is True:
        return False
    null_count, value_count = _count(nulls, field), _count(values, field)
    return null_count is not None and value_count is not None and null_count == value_count


def _all_non_null(nulls: dict[int, int] | None, field: dict[str, Any]) -> bool:
    if field.get("required") is True:
        return True
    count = _count(nulls, field)
    return count is not None and count <= 0


def can_contain_equality_deletes(data: ContentFile, delete: ContentFile,
                                 fields: dict[int, dict[str, Any]]) -> bool:
    """Whether an equality delete file may delete rows of a data file, judged by their column
    metrics as Iceberg's ``DeleteFileIndex.canContainEqDeletesForFile`` does; Iceberg does not
    attach the delete file to the data file's scan task otherwise. ``fields``: the table's
    current schema's top-level fields by ID (a field not found there is taken to match)."""
    bounds = (data.lower_bounds, data.upper_bounds, delete.lower_bounds, delete.upper_bounds)
    check_ranges = all(b is not None for b in bounds)
    for field_id in delete.equality_ids:
        field = fields.get(field_id)
        if field is None or not isinstance(field.get("type"), str):
            continue  # not a primitive column: may match
        if (_contains_null(data.null_value_counts, field)
                and _contains_null(delete.null_value_counts, field)):
            continue  # nulls on both sides: the null rows are deleted
        if (_all_null(data.null_value_counts, data.value_counts, field)
                and _all_non_null(delete.null_value_counts, field)):
            return False
        if (_all_null(delete.null_value_counts, delete.value_counts, field)
                and _all_non_null(data.null_value_counts, field)):
            return False
        if not check_ranges:
            continue
        values: list[Any] = [
            None if (raw := (b or {}).get(field_id)) is None else _bound(field["type"], raw)
            for b in bounds]
        if None in values:
            continue  # a bound unknown: may match
        data_lower, data_upper, delete_lower, delete_upper = values
        if data_lower > delete_upper or delete_lower > data_upper:
            return False
    return True


def referenced_data_file(entry: ContentFile) -> str | None:
    """The one data file a position delete file holds deletes for (Iceberg's
    ``ContentFileUtil.referencedDataFile``): its ``referenced_data_file``, else its
    ``file_path`` column's lower bound when it equals the upper bound; ``None`` when
    partition-scoped."""
    if entry.referenced_data_file is not None:
        return entry.referenced_data_file
    lower = (entry.lower_bounds or {}).get(DELETE_FILE_PATH_ID)
    upper = (entry.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    if lower is None or upper is None or lower != upper:
        return None
    return lower.decode("utf-8", errors="replace")


def _position_deletes(files: SnapshotFiles, data: list[DataFile],
                      positions: list[tuple[ContentFile, PositionDeleteFile]],
                      dvs: list[DeletionVectorRef]) -> list[DataFile]:
    """``data`` with the position deletes Iceberg's ``DeleteFileIndex`` attaches: the file's
    DV if it has one, else the file-scoped position delete files naming it and the
    partition-scoped ones of its spec and partition, whose data sequence number is at least
    the data file's (and above 0: Iceberg's index skips older delete files)."""
    by_path: dict[str, list[PositionDeleteFile]] = {}
    by_partition: dict[tuple[int, tuple[tuple[str, Any], ...]], list[PositionDeleteFile]] = {}
    for entry, converted in positions:
        if entry.sequence_number <= 0:
            continue
        if converted.referenced_data_file is not None:
            by_path.setdefault(converted.referenced_data_file, []).append(converted)
        else:
            by_partition.setdefault(_partition_of(entry), []).append(converted)
    dv_by_path = {dv.data_file: dv for dv in dvs}
    out = []
    for f in data:
        dv = dv_by_path.get(f.location)
        if dv is not None:
            out.append(replace(f, deletion_vector=dv))
            continue
        candidates = (by_partition.get(_partition_of(files.data_files[f.location]), [])
                      + by_path.get(f.location, []))
        out.append(replace(f, position_deletes=tuple(
            d for d in candidates if d.sequence_number >= f.sequence_number)))
    return out


def _mapped_fields(node: Any, where: str, ids: set[int | None]) -> NameMapping:
    """One level of a name mapping (its entries with a field ID); ``ids``: the IDs seen so far
    (Iceberg rejects an ID used twice anywhere, and a name used twice in one level)."""
    if not isinstance(node, list):
        raise ValueError(f"{where} is not a JSON array")
    out: list[tuple[int, tuple[str, ...]]] = []
    names: set[str] = set()
    for i, entry in enumerate(node):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{at} is not a JSON object")
        fid = entry.get("field-id")
        if fid is not None and (isinstance(fid, bool) or not isinstance(fid, int)
                                or fid not in _INT_RANGE):
            raise ValueError(f"{at}: field-id {fid!r} is not a 32-bit integer")
        if fid in ids:
            raise ValueError(f"{at}: field-id {fid} is not unique")
        ids.add(fid)
        own = entry.get("names", [])
        if not isinstance(own, list) or not all(isinstance(n, str) for n in own):
            raise ValueError(f"{at}: names is not a list of strings")
        for name in dict.fromkeys(own):
            if name in names:
                raise ValueError(f"{at}: name {name!r} is mapped twice")
            names.add(name)
        if "fields" in entry:
            _mapped_fields(entry["fields"], f"{at}.fields", ids)
        if fid is not None:
            out.append((fid, tuple(dict.fromkeys(own))))
    return tuple(out)


def parse_name_mapping(metadata: TableMetadata) -> NameMapping | None:
    """The top level of the table's name mapping (``None`` without the property): field ID ->
    the column names it maps. Entries without a field ID map nothing."""
    properties = metadata.raw.get("properties")
    text = properties.get(NAME_MAPPING_PROPERTY) if isinstance(properties, dict) else None
    if text is None:
        return None
    try:
        return _mapped_fields(json.loads(str(text)), "mapping", set())
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise PuffinError(f"{metadata.path}: table property {NAME_MAPPING_PROPERTY} is not a "
                          f"valid name mapping ({exc}); expected a JSON array of objects with "
                          '"field-id", "names" and "fields"', code="stats.name-mapping") from None


def identity_constants(metadata: TableMetadata, entry: ContentFile
                       ) -> tuple[tuple[int, Any], ...]:
    """(source field ID, value) of the identity fields of the file's partition spec, the
    values as the manifest holds them (fastavro's: ``date``, ``datetime``, ``Decimal``...)."""
    spec = metadata.specs.get(entry.spec_id) or {}
    return tuple((f["source-id"], entry.partition[f["name"]])
                 for f in spec.get("fields") or []
                 if isinstance(f, dict) and f.get("transform") == "identity"
                 and isinstance(f.get("source-id"), int) and f.get("name") in entry.partition)


def _local(mapper: PathMapper, location: str) -> str:
    return os.path.abspath(mapper.local(location))


def plan_snapshot(metadata: TableMetadata, table_dir: Path, mapper: PathMapper,
                  snapshot: Snapshot, columns: list[str] | None,
                  reader: ManifestReader | None = None) -> StatsPlan:
    """The plan for one snapshot: live data files with the deletes that apply to them."""
    schema_id, chosen, skipped = select_columns(metadata, snapshot, columns)
    files = snapshot_files(reader or ManifestReader(mapper), snapshot)
    data: list[DataFile] = []
    for entry in files.data_files.values():
        fmt = entry.file_format.lower()
        if fmt not in DATA_FORMATS:
            raise PuffinError(f"{entry.path}: data file format {entry.file_format} is not "
                              f"supported (supported: {', '.join(sorted(DATA_FORMATS))})",
                              code="stats.format")
        data.append(DataFile(entry.path, _local(mapper, entry.path), fmt,
                             entry.record_count, entry.sequence_number,
                             file_size=entry.file_size, split_offsets=entry.split_offsets,
                             constants=identity_constants(metadata, entry)))
    positions: list[tuple[ContentFile, PositionDeleteFile]] = []
    dvs: list[DeletionVectorRef] = []
    for entry in files.delete_files:
        if entry.is_dv:
            target = files.data_files.get(entry.referenced_data_file or "")
            if target is None or target.sequence_number > entry.sequence_number:
                continue
            if entry.content_offset is None or entry.content_size is None:
                raise PuffinError(f"{entry.path}: deletion vector for "
                                  f"{entry.referenced_data_file} has no content_offset or "
                                  "content_size_in_bytes", code="stats.dv")
            dvs.append(DeletionVectorRef(target.path, _local(mapper, entry.path),
                                         entry.content_offset, entry.content_size,
                                         entry.record_count))
        elif entry.content != CONTENT_EQUALITY_DELETES:
            positions.append((entry, PositionDeleteFile(
                entry.path, _local(mapper, entry.path), entry.file_format.lower(),
                entry.record_count, entry.sequence_number, entry.file_size,
                referenced_data_file(entry))))
    data = _equality_deletes(metadata, mapper, metadata.schema_for(snapshot.snapshot_id)[1],
                             files, data)
    data = _position_deletes(files, data, positions, dvs)
    equality = {d.location: d for f in data for d in f.equality_deletes}
    return StatsPlan(table_dir, metadata, mapper, snapshot, schema_id, chosen, skipped,
                     tuple(data), tuple(p for _, p in positions), tuple(dvs),
                     tuple(equality.values()), parse_name_mapping(metadata))


def load_table(path: str | os.PathLike[str], relocate: list[tuple[str, str]] | None = None
               ) -> tuple[TableMetadata, Path, PathMapper]:
    """The current metadata of a table directory (or a given metadata file), its directory
    and the location mapper."""
    metadata_file, table_dir = resolve_metadata_path(Path(path))
    metadata = load_metadata(metadata_file)
    return metadata, table_dir, default_mapper(metadata, table_dir, relocate)


def choose_snapshot(metadata: TableMetadata, snapshot_id: int | None) -> Snapshot:
    wanted = metadata.current_snapshot_id if snapshot_id is None else snapshot_id
    if wanted is None:
        raise PuffinError(f"{metadata.path}: the table has no current snapshot (no data to "
                          "compute statistics for)", code="stats.no-snapshot")
    snapshot = metadata.snapshot(wanted)
    if snapshot is None:
        known = ", ".join(str(s.snapshot_id) for s in metadata.snapshots[-5:]) or "none"
        raise PuffinError(f"{metadata.path}: no snapshot {wanted} (latest: {known})",
                          code="stats.no-snapshot")
    return snapshot


def statistics_location(metadata: TableMetadata, table_dir: Path, file_name: str) -> str:
    """How the table metadata should name a statistics file written to ``table_dir/metadata``:
    under the table's ``location`` when that is this directory, else by its local path (a
    copied or moved table, whose ``location`` names another place)."""
    location = metadata.location.rstrip("/")
    here = normalize_location(location)
    if "://" not in here and os.path.realpath(here) == os.path.realpath(table_dir):
        return f"{location}/{METADATA_DIR}/{file_name}"
    return str((table_dir / METADATA_DIR / file_name).resolve())
