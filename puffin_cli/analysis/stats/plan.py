"""What ``puffin stats compute`` reads: a snapshot's live data files, the deletes that apply to
them, and the columns to sketch. Pure Python (no pyspark): the table reader
(:mod:`puffin_cli.analysis.table.metadata`, :mod:`puffin_cli.analysis.table.manifests`) does
the metadata and manifest reading; this module applies the spec's rules on top.

Columns: by default every top-level column of primitive type in the snapshot's schema (what
Iceberg's ``compute_table_stats`` sketches); ``--columns`` names them (the snapshot's schema
first, then the current one, so a column renamed since the snapshot is found by either name).

Name mapping: data files without Iceberg field IDs (added by ``add_files``, ``migrate`` or
``snapshot``) are read through the table property ``schema.name-mapping.default``, a JSON list
of ``{"field-id", "names", "fields"}`` objects (:func:`parse_name_mapping`, checked as Iceberg's
``NameMappingParser`` and ``MappedFields`` check it); the plan keeps its top level.

Which deletes apply to each data file: :mod:`.delete_index`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from puffin_cli.analysis.stats.delete_index import (
    attach_equality_deletes,
    attach_position_deletes,
    referenced_data_file,
)
from puffin_cli.analysis.stats.files import (
    SUPPORTED_TYPES,
    Column,
    DataFile,
    DeletionVectorRef,
    EqualityDeleteFile,
    NameMapping,
    PositionDeleteFile,
    primitive_type,
    read_location,
    top_level_fields,
)
from puffin_cli.analysis.stats.manifest_order import planning_order
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import CONTENT_EQUALITY_DELETES, ContentFile
from puffin_cli.analysis.table.metadata import (
    Snapshot,
    TableMetadata,
)
from puffin_cli.errors import PuffinError

DATA_FORMATS = frozenset({"parquet", "orc", "avro"})
NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
_INT_RANGE = range(-(2**31), 2**31)


@dataclass(frozen=True)
class StatsPlan:
    table: Table
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
    def metadata(self) -> TableMetadata:
        return self.table.metadata


def select_columns(metadata: TableMetadata, snapshot: Snapshot,
                   names: list[str] | None) -> tuple[int, tuple[Column, ...],
                                                     tuple[tuple[str, str], ...]]:
    """(schema id, columns, skipped) for the snapshot's schema; see the module docstring."""
    schema_id, schema = metadata.schema_for(snapshot.snapshot_id)
    fields = top_level_fields(schema)
    if names is None:
        columns, skipped = [], []
        for f in fields:
            parsed = primitive_type(f)
            if parsed is not None:
                columns.append(Column(f["id"], str(f["name"]), parsed))
            elif not isinstance(f.get("type"), dict):
                skipped.append((str(f["name"]), f"type {f.get('type')} is not supported"))
        return schema_id, tuple(columns), tuple(skipped)
    by_name = {str(f["name"]): f for f in fields}
    current = {str(f["name"]): f
               for f in top_level_fields(metadata.schemas[metadata.current_schema_id])}
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
        parsed = primitive_type(found)
        if parsed is None:
            raise PuffinError(f"--columns: column {name!r} has type {found.get('type')!r}, not a "
                              "supported primitive type (supported: "
                              f"{', '.join(sorted(SUPPORTED_TYPES))})", code="stats.column")
        if all(c.field_id != found["id"] for c in chosen):
            chosen.append(Column(found["id"], str(found["name"]), parsed))
    return schema_id, tuple(chosen), ()


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


# The most partitions whose identity constants one plan keeps (partition dicts that are not
# shared, one per file, would each be one more).
_CONSTANTS_KEPT = 10_000


def _constants(known: dict[tuple[int, int], tuple[tuple[int, Any], ...]],
               metadata: TableMetadata, entry: ContentFile) -> tuple[tuple[int, Any], ...]:
    """:func:`identity_constants`, one tuple for the files of one spec that share a partition
    dict (the manifests' entries of one partition do): a million files, not a million
    tuples."""
    key = (entry.spec_id, id(entry.partition))
    found = known.get(key)
    if found is None:
        found = identity_constants(metadata, entry)
        if len(known) < _CONSTANTS_KEPT:
            known[key] = found
    return found


def applicable_dvs(live: LiveFiles) -> dict[str, ContentFile]:
    """Data file path -> its deletion vector, for the live data files that have one; an error
    naming the finding of ``puffin table`` when Iceberg cannot apply a snapshot's DVs (two for
    one data file, or one older than its data file: :mod:`puffin_cli.analysis.table.live`)."""
    problems = live.dv_problems()
    if problems:
        first = problems[0]
        if first.code == "table.dv.duplicate":
            what = f"{len(first.dvs)} deletion vectors for data file {first.data_file}"
        else:
            assert first.data is not None
            what = (f"the deletion vector of data file {first.data_file} has data sequence "
                    f"number {first.dvs[0].sequence_number}, below the data file's "
                    f"{first.data.sequence_number}")
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PuffinError(f"{what}{more}: Iceberg cannot apply these deletes (its scans fail), "
                          f"so no statistics can describe the snapshot; run `puffin table` to "
                          f"see the finding ({first.code})", code="stats.dv")
    return {path: dvs[0] for path in live.dvs_by_data_file
            if path in live.data and len(dvs := live.dvs_for(path)) == 1}


def plan_snapshot(table: Table, snapshot: Snapshot, columns: list[str] | None) -> StatsPlan:
    """The plan for one snapshot: live data files with the deletes that apply to them."""
    metadata, mapper = table.metadata, table.mapper
    schema_id, chosen, skipped = select_columns(metadata, snapshot, columns)
    live = LiveFiles.of(table.manifests, snapshot)
    data: list[DataFile] = []
    constants: dict[tuple[int, int], tuple[tuple[int, Any], ...]] = {}  # by spec, partition
    for entry in planning_order(live.data.values()):
        fmt = entry.file_format.lower()
        if fmt not in DATA_FORMATS:
            raise PuffinError(f"{entry.path}: data file format {entry.file_format} is not "
                              f"supported (supported: {', '.join(sorted(DATA_FORMATS))})",
                              code="stats.format")
        data.append(DataFile(entry.path, read_location(mapper, entry.path), fmt,
                             entry.record_count, entry.sequence_number,
                             file_size=entry.file_size, split_offsets=entry.split_offsets,
                             constants=_constants(constants, metadata, entry)))
    applying = applicable_dvs(live)
    positions: list[tuple[ContentFile, PositionDeleteFile]] = []
    dvs: list[DeletionVectorRef] = []
    for entry in live.delete_files:
        if entry.is_dv:
            if applying.get(entry.referenced_data_file or "") is not entry:
                continue
            if entry.content_offset is None or entry.content_size is None:
                raise PuffinError(f"{entry.path}: deletion vector for "
                                  f"{entry.referenced_data_file} has no content_offset or "
                                  "content_size_in_bytes", code="stats.dv")
            dvs.append(DeletionVectorRef(entry.referenced_data_file or "",
                                         read_location(mapper, entry.path),
                                         entry.content_offset, entry.content_size,
                                         entry.record_count))
        elif entry.content != CONTENT_EQUALITY_DELETES:
            positions.append((entry, PositionDeleteFile(
                entry.path, read_location(mapper, entry.path), entry.file_format.lower(),
                entry.record_count, entry.sequence_number, entry.file_size,
                referenced_data_file(entry))))
    data = attach_equality_deletes(metadata, mapper,
                                   metadata.schema_for(snapshot.snapshot_id)[1], live, data)
    data = attach_position_deletes(live, data, positions, dvs)
    equality = {d.location: d for f in data for d in f.equality_deletes}
    return StatsPlan(table, snapshot, schema_id, chosen, skipped,
                     tuple(data), tuple(p for _, p in positions), tuple(dvs),
                     tuple(equality.values()), parse_name_mapping(metadata))


def stats_snapshot(table: Table, snapshot_id: int | None) -> Snapshot:
    """The snapshot to compute statistics for: ``snapshot_id``, else the current one."""
    snapshot = table.snapshot(snapshot_id)
    if snapshot is None:
        raise PuffinError("the table has no current snapshot (no data to compute statistics "
                          "for)", code="stats.no-snapshot", path=table.metadata.path)
    return snapshot
