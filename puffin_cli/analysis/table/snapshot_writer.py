"""Writing a new snapshot: manifests and a manifest list (Avro, fastavro) in the layout Iceberg
Java writes, for :func:`~.commit.commit` to publish.

:func:`replace_delete_files` builds a snapshot that removes some live delete files of the
current snapshot and adds others (a repaired deletion vector replacing broken ones), as
Iceberg's ``RowDelta`` with ``removeDeletes``/``addDeletes`` does:

- every manifest of the parent that holds none of the removed files is kept by reference;
- a delete manifest that holds one is rewritten: the removed entries as DELETED by the new
  snapshot, the others as EXISTING, each with the sequence numbers it had (inherited values
  written out, so nothing depends on the new manifest's own numbers); entries already DELETED
  are dropped, as Java drops them;
- the added files go to a new delete manifest per partition spec, ADDED, inheriting the new
  snapshot's ID and sequence number;
- the operation is ``delete`` (delete files added, no data files: Java's rule), and the summary
  counts what changed, carries the parent's totals forward and names the writer
  (``engine-name`` ``puffin-cli``, ``engine-version``), as Iceberg's Spark writers do.

Field IDs and names are the table spec's (manifest entries 0-4, data files 100-145 with the v3
fields 142 ``first_row_id``, 143 ``referenced_data_file``, 144 ``content_offset``, 145
``content_size_in_bytes``; manifest lists 500-520); the partition tuple keeps the Avro type the
table's existing manifests of that spec use.
"""

from __future__ import annotations

import io
import json
import random
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from puffin_cli import __version__
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import (
    CONTENT_POSITION_DELETES,
    STATUS_DELETED,
    ContentFile,
)
from puffin_cli.analysis.table.updates import (
    MAIN_BRANCH,
    AddSnapshot,
    AssertRefSnapshotId,
    AssertTableUUID,
    SetSnapshotRef,
    TableChange,
    TableRequirement,
)
from puffin_cli.errors import PuffinError
from puffin_cli.storage import join

STATUS_EXISTING, STATUS_ADDED = 0, 1
# Who wrote the snapshot, as Iceberg's Spark writers name themselves (``engine-name`` spark,
# ``engine-version`` 3.5.9): the summary of every snapshot puffin-cli commits.
ENGINE = {"engine-name": "puffin-cli", "engine-version": __version__}
CONTENT_DELETES_MANIFEST = 1


@dataclass(frozen=True)
class DeleteFile:
    """A delete file to add: a position delete file or a deletion vector (``file_format``
    ``puffin`` with the v3 fields), in partition ``partition`` (values as the manifests hold
    them) of spec ``spec_id``. ``path`` is the location the manifest names."""

    path: str
    file_format: str
    spec_id: int
    partition: dict[str, Any]
    record_count: int
    file_size: int
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size: int | None = None
    content: int = CONTENT_POSITION_DELETES


# --- Avro schemas (the table spec's field IDs) ---------------------------------------------


def _optional(name: str, field_id: int, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None, "field-id": field_id}


def _required(name: str, field_id: int, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type, "field-id": field_id}


def _int_map(name: str, field_id: int, key_id: int, value_id: int, value: str
             ) -> dict[str, Any]:
    record = {"type": "record", "name": f"k{key_id}_v{value_id}", "fields": [
        {"name": "key", "type": "int", "field-id": key_id},
        {"name": "value", "type": value, "field-id": value_id}]}
    return _optional(name, field_id, {"type": "array", "items": record, "logicalType": "map"})


def _list(name: str, field_id: int, element_id: int, element: str) -> dict[str, Any]:
    return _optional(name, field_id, {"type": "array", "items": element,
                                      "element-id": element_id})


def entry_schema(format_version: int, partition_type: Any) -> dict[str, Any]:
    """The ``manifest_entry`` Avro schema of a v2 or v3 manifest."""
    data_file: list[dict[str, Any]] = [
        _required("content", 134, "int"),
        _required("file_path", 100, "string"),
        _required("file_format", 101, "string"),
        _required("partition", 102, partition_type),
        _required("record_count", 103, "long"),
        _required("file_size_in_bytes", 104, "long"),
        _int_map("column_sizes", 108, 117, 118, "long"),
        _int_map("value_counts", 109, 119, 120, "long"),
        _int_map("null_value_counts", 110, 121, 122, "long"),
        _int_map("nan_value_counts", 137, 138, 139, "long"),
        _int_map("lower_bounds", 125, 126, 127, "bytes"),
        _int_map("upper_bounds", 128, 129, 130, "bytes"),
        _optional("key_metadata", 131, "bytes"),
        _list("split_offsets", 132, 133, "long"),
        _list("equality_ids", 135, 136, "int"),
        _optional("sort_order_id", 140, "int"),
    ]
    if format_version >= 3:
        data_file.append(_optional("first_row_id", 142, "long"))
    data_file += [_optional("referenced_data_file", 143, "string"),
                  _optional("content_offset", 144, "long"),
                  _optional("content_size_in_bytes", 145, "long")]
    return {"type": "record", "name": "manifest_entry", "fields": [
        _required("status", 0, "int"),
        _optional("snapshot_id", 1, "long"),
        _optional("sequence_number", 3, "long"),
        _optional("file_sequence_number", 4, "long"),
        _required("data_file", 2, {"type": "record", "name": "r2", "fields": data_file}),
    ]}


def manifest_list_schema(format_version: int) -> dict[str, Any]:
    """The ``manifest_file`` Avro schema of a v2 or v3 manifest list."""
    summary = {"type": "record", "name": "r508", "fields": [
        _required("contains_null", 509, "boolean"),
        _optional("contains_nan", 518, "boolean"),
        _optional("lower_bound", 510, "bytes"),
        _optional("upper_bound", 511, "bytes")]}
    fields = [
        _required("manifest_path", 500, "string"),
        _required("manifest_length", 501, "long"),
        _required("partition_spec_id", 502, "int"),
        _required("content", 517, "int"),
        _required("sequence_number", 515, "long"),
        _required("min_sequence_number", 516, "long"),
        _required("added_snapshot_id", 503, "long"),
        _required("added_files_count", 504, "int"),
        _required("existing_files_count", 505, "int"),
        _required("deleted_files_count", 506, "int"),
        _required("added_rows_count", 512, "long"),
        _required("existing_rows_count", 513, "long"),
        _required("deleted_rows_count", 514, "long"),
        _optional("partitions", 507, {"type": "array", "items": summary, "element-id": 508}),
        _optional("key_metadata", 519, "bytes"),
    ]
    if format_version >= 3:
        fields.append(_optional("first_row_id", 520, "long"))
    return {"type": "record", "name": "manifest_file", "fields": fields}


# --- reading and writing Avro --------------------------------------------------------------


@dataclass
class _Avro:
    schema: dict[str, Any]
    records: list[dict[str, Any]]


def _read(table: Table, location: str) -> _Avro:
    import fastavro

    try:
        with table.fileio.open_stream(table.resolve(location), regular_only=True) as stream:
            reader = fastavro.reader(stream)
            schema, records = reader.writer_schema, list(reader)
    except PuffinError:
        raise
    except Exception as exc:  # fastavro's and its codecs' errors on a corrupt file
        message = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise PuffinError(f"not a readable Avro file: {message}", code="table.manifest",
                          path=location) from None
    if not isinstance(schema, dict) or not all(isinstance(r, dict) for r in records):
        raise PuffinError("not a manifest or manifest list: the records are not Avro records",
                          code="table.manifest", path=location)
    return _Avro(schema, [r for r in records if isinstance(r, dict)])


def _partition_type(avro: _Avro) -> Any:
    entry = next(f for f in avro.schema["fields"] if f["name"] == "data_file")
    data_file = entry["type"]
    return next(f for f in data_file["fields"] if f["name"] == "partition")["type"]


class _Writer:
    """New files of one snapshot, named as Iceberg Java names them, written create-only."""

    def __init__(self, table: Table, snapshot_id: int) -> None:
        self.table = table
        self.snapshot_id = snapshot_id
        self.stem = str(uuid.uuid4())
        self.written: list[str] = []  # storage locations, for the cleanup of a failed commit

    def write(self, name: str, schema: dict[str, Any], records: list[dict[str, Any]],
              metadata: dict[str, str]) -> tuple[str, int]:
        """(location as the metadata names it, length) of a new Avro file."""
        import fastavro

        buffer = io.BytesIO()
        fastavro.writer(buffer, fastavro.parse_schema(schema), records, codec="deflate",
                        metadata=metadata)
        data = buffer.getvalue()
        target = join(self.table.statistics_dir, name)
        self.written.append(target)
        with self.table.fileio.new_output(target).create() as out:
            out.write(data)
        return self.table.statistics_location(name), len(data)


# --- the snapshot --------------------------------------------------------------------------


def _new_snapshot_id(taken: set[int]) -> int:
    for _ in range(1000):
        candidate = random.getrandbits(63)
        if candidate and candidate not in taken:
            return candidate
    raise PuffinError("no free snapshot ID", code="commit.snapshot")


def _data_file(source: dict[str, Any], format_version: int) -> dict[str, Any]:
    """A data_file record with exactly the fields of the schema written."""
    names = [f["name"] for f in entry_schema(format_version, "int")["fields"][4]["type"]
             ["fields"]]
    return {name: source.get(name) for name in names}


def _manifest_metadata(base: Table, spec_id: int, format_version: int) -> dict[str, str]:
    schema_id = base.metadata.current_schema_id
    spec = base.metadata.specs.get(spec_id, {"spec-id": spec_id, "fields": []})
    return {"schema": json.dumps(base.metadata.schemas[schema_id], separators=(",", ":")),
            "schema-id": str(schema_id),
            "partition-spec": json.dumps(spec.get("fields", []), separators=(",", ":")),
            "partition-spec-id": str(spec_id), "format-version": str(format_version),
            "content": "deletes"}


@dataclass
class _Counts:
    files: int = 0
    position_deletes: int = 0
    dvs: int = 0
    size: int = 0

    def count(self, record_count: int, size: int, is_dv: bool) -> None:
        self.files += 1
        self.position_deletes += record_count
        self.size += size
        self.dvs += int(is_dv)


def _summary(parent_summary: dict[str, Any], added: _Counts, removed: _Counts,
             partitions: int) -> dict[str, str]:
    summary = {"operation": "delete"}
    for prefix, counts in (("added", added), ("removed", removed)):
        if counts.files:
            summary[f"{prefix}-delete-files"] = str(counts.files)
            summary[f"{prefix}-position-delete-files"] = str(counts.files - counts.dvs)
            summary[f"{prefix}-dvs"] = str(counts.dvs)
            summary[f"{prefix}-position-deletes"] = str(counts.position_deletes)
            summary[f"{prefix}-files-size"] = str(counts.size)
    for key in ("added-position-delete-files", "removed-position-delete-files",
                "added-dvs", "removed-dvs"):
        if summary.get(key) == "0":
            del summary[key]
    summary["changed-partition-count"] = str(partitions)
    summary.update(ENGINE)
    deltas = {"total-delete-files": added.files - removed.files,
              "total-position-deletes": added.position_deletes - removed.position_deletes,
              "total-files-size": added.size - removed.size}
    for key in ("total-records", "total-files-size", "total-data-files", "total-delete-files",
                "total-position-deletes", "total-equality-deletes"):
        value = parent_summary.get(key)
        if isinstance(value, str) and value.isascii() and value.isdigit():
            summary[key] = str(int(value) + deltas.get(key, 0))
    return summary


# A delete file as Iceberg tells them apart: its location and, for a DV (several may share
# one Puffin file), the blob's offset and length.
DeleteKey = tuple[str, int | None, int | None]


def delete_key(entry: ContentFile) -> DeleteKey:
    return entry.path, entry.content_offset, entry.content_size


def replace_delete_files(base: Table, removed: Collection[ContentFile],
                         added: Sequence[DeleteFile]) -> TableChange:
    """A new snapshot of ``base``'s current snapshot without the delete files ``removed``
    (as the manifest reader gives them; a DV is told apart from others in its Puffin file by
    its offset and length) and with ``added`` (see the module docstring); a change for
    :func:`~.commit.commit`, whose ``written`` files are the new manifests and manifest
    list."""
    metadata = base.metadata
    version = metadata.format_version
    parent = base.current_snapshot()
    if version < 2 or parent is None or parent.manifest_list is None:
        raise PuffinError("replacing delete files needs a format-version 2 or 3 table with a "
                          "current snapshot", code="commit.snapshot", path=metadata.path)
    raw = metadata.raw
    sequence = int(raw.get("last-sequence-number", 0)) + 1
    snapshot_id = _new_snapshot_id({s.snapshot_id for s in metadata.snapshots})
    writer = _Writer(base, snapshot_id)
    try:
        return _build(base, parent.snapshot_id, parent.manifest_list,
                      {delete_key(r) for r in removed}, added,
                      sequence, snapshot_id, writer)
    except BaseException:
        for location in writer.written:
            base.fileio.delete(location)
        raise


def _key(data_file: dict[str, Any]) -> DeleteKey:
    return (data_file["file_path"], data_file.get("content_offset"),
            data_file.get("content_size_in_bytes"))


def _build(base: Table, parent_id: int, manifest_list: str, removed: set[DeleteKey],
           added: Sequence[DeleteFile], sequence: int, snapshot_id: int,
           writer: _Writer) -> TableChange:
    metadata = base.metadata
    version = metadata.format_version
    listing = _read(base, manifest_list)
    kept: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    partition_types: dict[int, Any] = {}
    removed_counts, added_counts = _Counts(), _Counts()
    found: set[DeleteKey] = set()
    partitions: set[tuple[int, str]] = set()
    for manifest in listing.records:
        spec_id = manifest["partition_spec_id"]
        if manifest["content"] != CONTENT_DELETES_MANIFEST or not removed:
            kept.append(manifest)
            if spec_id not in partition_types and any(a.spec_id == spec_id for a in added):
                partition_types[spec_id] = _partition_type(_read(base,
                                                                 manifest["manifest_path"]))
            continue
        avro = _read(base, manifest["manifest_path"])
        partition_types.setdefault(spec_id, _partition_type(avro))
        live = [e for e in avro.records if e["status"] != STATUS_DELETED]
        if not any(_key(e["data_file"]) in removed for e in live):
            kept.append(manifest)
            continue
        entries = []
        for entry in live:
            data_file = entry["data_file"]
            inherited_sequence = manifest["sequence_number"]
            gone = _key(data_file) in removed
            if gone:
                found.add(_key(data_file))
                removed_counts.count(data_file["record_count"],
                                     data_file["file_size_in_bytes"],
                                     str(data_file["file_format"]).lower() == "puffin")
                partitions.add((spec_id, repr(sorted(data_file["partition"].items()))))
            entries.append({
                "status": STATUS_DELETED if gone else STATUS_EXISTING,
                "snapshot_id": snapshot_id if gone else (
                    entry.get("snapshot_id") if entry.get("snapshot_id") is not None
                    else manifest["added_snapshot_id"]),
                "sequence_number": entry["sequence_number"]
                if entry.get("sequence_number") is not None else inherited_sequence,
                "file_sequence_number": entry["file_sequence_number"]
                if entry.get("file_sequence_number") is not None else inherited_sequence,
                "data_file": _data_file(data_file, version)})
        new.append(_manifest(base, writer, spec_id, partition_types[spec_id], entries,
                             sequence))
    missing = sorted(removed - found)
    if missing:
        raise PuffinError(f"delete file {missing[0][0]} is not live in snapshot {parent_id}",
                          code="commit.snapshot", path=metadata.path)
    by_spec: dict[int, list[dict[str, Any]]] = {}
    for item in added:
        if item.spec_id not in partition_types:
            raise PuffinError(f"no manifest of partition spec {item.spec_id} to take the "
                              "partition type from", code="commit.snapshot",
                              path=metadata.path)
        added_counts.count(item.record_count, item.file_size,
                           item.file_format.lower() == "puffin")
        partitions.add((item.spec_id, repr(sorted(item.partition.items()))))
        by_spec.setdefault(item.spec_id, []).append({
            "status": STATUS_ADDED, "snapshot_id": snapshot_id, "sequence_number": None,
            "file_sequence_number": None,
            "data_file": _data_file({
                "content": item.content, "file_path": item.path,
                "file_format": item.file_format.upper(), "partition": item.partition,
                "record_count": item.record_count, "file_size_in_bytes": item.file_size,
                "referenced_data_file": item.referenced_data_file,
                "content_offset": item.content_offset,
                "content_size_in_bytes": item.content_size}, version)})
    for spec_id, entries in sorted(by_spec.items()):
        new.insert(0, _manifest(base, writer, spec_id, partition_types[spec_id], entries,
                                sequence))
    raw = metadata.raw
    first_row_id = int(raw.get("next-row-id", 0)) if version >= 3 else None
    list_metadata = {"snapshot-id": str(snapshot_id), "parent-snapshot-id": str(parent_id),
                     "sequence-number": str(sequence), "format-version": str(version)}
    if first_row_id is not None:
        list_metadata["first-row-id"] = str(first_row_id)
    schema = manifest_list_schema(version)
    names = [f["name"] for f in schema["fields"]]
    records = [{name: m.get(name) for name in names}
               for m in [*new, *(_counted(base, m) for m in kept)]]
    list_location, _ = writer.write(f"snap-{snapshot_id}-1-{writer.stem}.avro", schema,
                                    records, list_metadata)
    parent_snapshot = next(s for s in raw.get("snapshots", [])
                           if s.get("snapshot-id") == parent_id)
    snapshot: dict[str, Any] = {
        "snapshot-id": snapshot_id, "parent-snapshot-id": parent_id,
        "sequence-number": sequence, "timestamp-ms": int(time.time() * 1000),
        "manifest-list": list_location,
        "summary": _summary(parent_snapshot.get("summary") or {}, added_counts,
                            removed_counts, len(partitions)),
        "schema-id": metadata.current_schema_id}
    if first_row_id is not None:
        snapshot["first-row-id"] = first_row_id
        snapshot["added-rows"] = 0
    requirements: list[TableRequirement] = [AssertRefSnapshotId(MAIN_BRANCH, parent_id)]
    if metadata.table_uuid is not None:
        requirements.insert(0, AssertTableUUID(metadata.table_uuid))
    return TableChange(tuple(requirements),
                       (AddSnapshot(snapshot), SetSnapshotRef(MAIN_BRANCH, snapshot_id)),
                       tuple(writer.written))


_COUNTS = {"added_files_count": STATUS_ADDED, "existing_files_count": STATUS_EXISTING,
           "deleted_files_count": STATUS_DELETED}
_ROWS = {"added_rows_count": STATUS_ADDED, "existing_rows_count": STATUS_EXISTING,
         "deleted_rows_count": STATUS_DELETED}


def _counted(base: Table, manifest: dict[str, Any]) -> dict[str, Any]:
    """A kept manifest list record with the entry counts the v2 list requires, counted from
    the manifest where an older writer left them null (the record is otherwise as it was)."""
    if all(manifest.get(k) is not None for k in (*_COUNTS, *_ROWS)):
        return manifest
    entries = _read(base, manifest["manifest_path"]).records
    filled = dict(manifest)
    for key, status in _COUNTS.items():
        filled[key] = sum(1 for e in entries if e["status"] == status)
    for key, status in _ROWS.items():
        filled[key] = sum(e["data_file"]["record_count"] for e in entries
                          if e["status"] == status)
    if filled.get("min_sequence_number") is None:
        filled["min_sequence_number"] = filled.get("sequence_number") or 0
    return filled


def _manifest(base: Table, writer: _Writer, spec_id: int, partition_type: Any,
              entries: list[dict[str, Any]], sequence: int) -> dict[str, Any]:
    """Write one delete manifest; its manifest list record."""
    version = base.metadata.format_version
    index = len(writer.written)
    location, length = writer.write(f"{writer.stem}-m{index}.avro",
                                    entry_schema(version, partition_type), entries,
                                    _manifest_metadata(base, spec_id, version))
    live = [e for e in entries if e["status"] != STATUS_DELETED]
    live_sequences = [e["sequence_number"] for e in live if e["sequence_number"] is not None]
    if any(e["status"] == STATUS_ADDED for e in live):
        live_sequences.append(sequence)

    def count(status: int) -> tuple[int, int]:
        chosen = [e for e in entries if e["status"] == status]
        return len(chosen), sum(e["data_file"]["record_count"] for e in chosen)

    (added, added_rows), (existing, existing_rows), (deleted, deleted_rows) = (
        count(STATUS_ADDED), count(STATUS_EXISTING), count(STATUS_DELETED))
    return {"manifest_path": location, "manifest_length": length,
            "partition_spec_id": spec_id, "content": CONTENT_DELETES_MANIFEST,
            "sequence_number": sequence,
            "min_sequence_number": min(live_sequences, default=sequence),
            "added_snapshot_id": writer.snapshot_id, "added_files_count": added,
            "existing_files_count": existing, "deleted_files_count": deleted,
            "added_rows_count": added_rows, "existing_rows_count": existing_rows,
            "deleted_rows_count": deleted_rows, "partitions": None, "key_metadata": None,
            "first_row_id": None}
