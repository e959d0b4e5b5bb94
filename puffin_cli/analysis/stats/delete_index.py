"""The delete index of a snapshot: which deletes apply to a data file (Iceberg table spec,
"Scan Planning"):

- a position delete file, to the data files its ``file_path`` column names whose data sequence
  number is at most the delete file's. Each :class:`DataFile` lists the position delete files
  Iceberg's ``DeleteFileIndex`` attaches to its scan task: a file-scoped one
  (``referenced_data_file``, or equal lower and upper bounds of ``file_path``) naming it, and
  the partition-scoped ones of its spec and partition, each with that sequence condition;
- a deletion vector, to its ``referenced_data_file`` when that file's data sequence number is
  at most the DV's (a snapshot where that fails, or with two DVs for one data file, is
  refused: :func:`.plan.applicable_dvs`); a data file with a DV gets no position delete file
  (Iceberg's rule: the DV replaces them);
- an equality delete file, to data files whose data sequence number is strictly lower than
  the delete file's and whose partition (spec ID and values) equals the delete file's, or to
  every such data file when the delete file's spec is unpartitioned (no field, or only
  ``void`` fields: Iceberg Java's ``PartitionSpec.isUnpartitioned``), a "global" delete.
  Each :class:`DataFile` lists the ones that apply to it (:func:`equality_deletes_by_file`),
  less those whose column metrics show they cannot delete any of its rows
  (:func:`can_contain_equality_deletes`: Iceberg attaches exactly these to the scan task).
  Their equality columns are looked up by field ID in the snapshot's schema, else in the
  newest schema that has them (a dropped column still applies, per the spec).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from puffin_cli.analysis.stats.files import (
    DELETE_FILE_PATH_ID,
    SUPPORTED_TYPES,
    Column,
    DataFile,
    DeletionVectorRef,
    EqualityDeleteFile,
    PositionDeleteFile,
    primitive_type,
    read_location,
    top_level_fields,
)
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.manifests import CONTENT_EQUALITY_DELETES, ContentFile
from puffin_cli.analysis.table.metadata import (
    PathMapper,
    TableMetadata,
)
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.errors import PuffinError


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
        found = next((f for f in top_level_fields(candidate) if f["id"] == field_id), None)
        if found is None:
            continue
        parsed = primitive_type(found)
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


def attach_equality_deletes(metadata: TableMetadata, mapper: PathMapper, schema: dict[str, Any],
                      files: LiveFiles, data: list[DataFile]) -> list[DataFile]:
    """``data`` with partition keys and the equality delete files that apply to each."""
    applying = equality_deletes_by_file(metadata.specs, files.data.values(),
                                        files.delete_files)
    deletes = {d.path: d for d in files.delete_files}
    current = {f["id"]: f for f in top_level_fields(metadata.schemas[metadata.current_schema_id])}
    keys: dict[tuple[int, tuple[tuple[str, Any], ...]], int] = {}
    for entry in files.data.values():
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
        done = EqualityDeleteFile(entry.path, read_location(mapper, entry.path), "parquet",
                                  entry.record_count, entry.sequence_number, columns, key,
                                  entry.file_size)
        converted[entry.path] = done
        return done

    out = []
    for f in data:
        entry = files.data[f.location]
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


def attach_position_deletes(files: LiveFiles, data: list[DataFile],
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
    dv_by_path = {dv.data_file: dv for dv in dvs}  # one at most per file: plan.applicable_dvs
    out = []
    for f in data:
        dv = dv_by_path.get(f.location)
        if dv is not None:
            out.append(replace(f, deletion_vector=dv))
            continue
        candidates = (by_partition.get(_partition_of(files.data[f.location]), [])
                      + by_path.get(f.location, []))
        out.append(replace(f, position_deletes=tuple(
            d for d in candidates if d.sequence_number >= f.sequence_number)))
    return out
