"""Synthetic Iceberg v2/v3 table directories written with fastavro and PuffinWriter.

Small and fast (no Spark): used by the unit tests of ``puffin table`` and by
benchmarks/bench_table.py. Data files are never opened by ``puffin table``, so they are not
written. Manifests carry the fields Iceberg Java writes that ``puffin table`` reads.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from puffin_cli.blobs.deletion_vector import dv_blob_properties, encode_deletion_vector
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import (
    DV_BLOB_TYPE,
    NDV_PROPERTY,
    ROW_POSITION_FIELD_ID,
    THETA_BLOB_TYPE,
)
from puffin_cli.format.writer import PuffinWriter

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "customer", "required": False, "type": {
        "type": "struct", "fields": [
            {"id": 3, "name": "name", "required": False, "type": "string"}]}},
    {"id": 4, "name": "part", "required": False, "type": "int"},
]}
SPEC = {"spec-id": 0, "fields": [
    {"name": "part", "transform": "identity", "source-id": 4, "field-id": 1000}]}

_PARTITION = {"type": "record", "name": "r102", "fields": [
    {"name": "part", "type": ["null", "int"], "default": None, "field-id": 1000}]}
_DATA_FILE = {"type": "record", "name": "r2", "fields": [
    {"name": "content", "type": "int", "field-id": 134},
    {"name": "file_path", "type": "string", "field-id": 100},
    {"name": "file_format", "type": "string", "field-id": 101},
    {"name": "partition", "type": _PARTITION, "field-id": 102},
    {"name": "record_count", "type": "long", "field-id": 103},
    {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
    {"name": "referenced_data_file", "type": ["null", "string"], "default": None,
     "field-id": 143},
    {"name": "content_offset", "type": ["null", "long"], "default": None, "field-id": 144},
    {"name": "content_size_in_bytes", "type": ["null", "long"], "default": None,
     "field-id": 145},
]}
MANIFEST_ENTRY = {"type": "record", "name": "manifest_entry", "fields": [
    {"name": "status", "type": "int", "field-id": 0},
    {"name": "snapshot_id", "type": ["null", "long"], "default": None, "field-id": 1},
    {"name": "sequence_number", "type": ["null", "long"], "default": None, "field-id": 3},
    {"name": "file_sequence_number", "type": ["null", "long"], "default": None, "field-id": 4},
    {"name": "data_file", "type": _DATA_FILE, "field-id": 2},
]}
MANIFEST_FILE = {"type": "record", "name": "manifest_file", "fields": [
    {"name": "manifest_path", "type": "string", "field-id": 500},
    {"name": "manifest_length", "type": "long", "field-id": 501},
    {"name": "partition_spec_id", "type": "int", "field-id": 502},
    {"name": "content", "type": "int", "field-id": 517},
    {"name": "sequence_number", "type": "long", "field-id": 515},
    {"name": "min_sequence_number", "type": "long", "field-id": 516},
    {"name": "added_snapshot_id", "type": "long", "field-id": 503},
]}


def write_avro(path: Path, schema: dict[str, Any], records: list[dict[str, Any]],
               metadata: dict[str, str] | None = None) -> None:
    import fastavro

    with open(path, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), records, metadata=metadata or {})


def data_entry(path: str, part: int, record_count: int, *, status: int = 1,
               sequence_number: int | None = None) -> dict[str, Any]:
    return {"status": status, "snapshot_id": None, "sequence_number": sequence_number,
            "file_sequence_number": None,
            "data_file": {"content": 0, "file_path": path, "file_format": "PARQUET",
                          "partition": {"part": part}, "record_count": record_count,
                          "file_size_in_bytes": 1000, "referenced_data_file": None,
                          "content_offset": None, "content_size_in_bytes": None}}


def dv_entry(puffin: str, data_file: str, part: int, offset: int, length: int,
             record_count: int, *, status: int = 1,
             sequence_number: int | None = None) -> dict[str, Any]:
    return {"status": status, "snapshot_id": None, "sequence_number": sequence_number,
            "file_sequence_number": None,
            "data_file": {"content": 1, "file_path": puffin, "file_format": "PUFFIN",
                          "partition": {"part": part}, "record_count": record_count,
                          "file_size_in_bytes": 0, "referenced_data_file": data_file,
                          "content_offset": offset, "content_size_in_bytes": length}}


@dataclass
class TableBuilder:
    """Builds ``root`` snapshot by snapshot; ``finish`` writes ``v1.metadata.json``."""

    root: Path
    format_version: int = 3
    location: str | None = None
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    statistics: list[dict[str, Any]] = field(default_factory=list)
    manifests_written: int = 0

    def __post_init__(self) -> None:
        (self.root / "metadata").mkdir(parents=True, exist_ok=True)
        (self.root / "data").mkdir(exist_ok=True)
        if self.location is None:
            self.location = str(self.root)

    def uri(self, relative: str) -> str:
        """A location under the table as the metadata names it."""
        return f"{self.location}/{relative}"

    def manifest(self, entries: list[dict[str, Any]], content: int) -> str:
        name = f"metadata/{uuid.uuid4()}-m0.avro"
        write_avro(self.root / name, MANIFEST_ENTRY, entries,
                   {"format-version": str(self.format_version),
                    "content": "deletes" if content else "data", "partition-spec-id": "0",
                    "schema": json.dumps(SCHEMA), "partition-spec": json.dumps(SPEC["fields"])})
        self.manifests_written += 1
        return name

    def puffin(self, dvs: list[tuple[str, list[int]]]) -> tuple[str, list[tuple[int, int]]]:
        """A Puffin file of DVs (data file, positions); returns its name and blob ranges."""
        from pyroaring import BitMap64

        name = f"data/{uuid.uuid4()}-deletes.puffin"
        ranges = []
        with PuffinWriter(self.root / name, properties={"created-by": "puffin-cli tests"}) as w:
            for data_file, positions in dvs:
                blob = w.add_blob(DV_BLOB_TYPE, encode_deletion_vector(BitMap64(positions)),
                                  fields=[ROW_POSITION_FIELD_ID],
                                  properties=dv_blob_properties(data_file, len(positions)))
                ranges.append((blob.offset, blob.length))
        return name, ranges

    def snapshot(self, manifests: list[tuple[str, int, int]], *, schema_id: int = 0) -> int:
        """Commit a snapshot listing ``manifests`` as (name, content, sequence number) and
        return its ID; its sequence number is the next one. A manifest carried over from an
        earlier snapshot keeps the ID of the snapshot that added it (the one with its sequence
        number), as Iceberg writes manifest lists."""
        sequence = len(self.snapshots) + 1
        snapshot_id = 1000 + sequence
        records = [{"manifest_path": self.uri(name), "manifest_length": 1,
                    "partition_spec_id": 0, "content": content, "sequence_number": seq,
                    "min_sequence_number": seq, "added_snapshot_id": 1000 + seq}
                   for name, content, seq in manifests]
        listing = f"metadata/snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
        write_avro(self.root / listing, MANIFEST_FILE, records)
        parent = self.snapshots[-1]["snapshot-id"] if self.snapshots else None
        snap: dict[str, Any] = {"snapshot-id": snapshot_id, "sequence-number": sequence,
                                "timestamp-ms": 1_700_000_000_000 + sequence,
                                "manifest-list": self.uri(listing), "schema-id": schema_id,
                                "summary": {"operation": "append"}}
        if parent is not None:
            snap["parent-snapshot-id"] = parent
        self.snapshots.append(snap)
        return snapshot_id

    def statistics_file(self, snapshot_id: int, values: dict[int, list[int]]) -> None:
        """A statistics file for ``snapshot_id``: one Theta sketch per field ID of ``values``
        (long values), registered in the metadata as Iceberg registers one."""
        from puffin_cli.blobs.theta import build_theta_blob

        name = f"metadata/{snapshot_id}-stats.puffin"
        sequence = next(s["sequence-number"] for s in self.snapshots
                        if s["snapshot-id"] == snapshot_id)
        with PuffinWriter(self.root / name, properties={"created-by": "puffin-cli tests"}) as w:
            blobs = []
            for field_id, column in values.items():
                data, ndv = build_theta_blob("long", column)
                blobs.append(w.add_blob(THETA_BLOB_TYPE, data, fields=[field_id],
                                        snapshot_id=snapshot_id, sequence_number=sequence,
                                        properties={NDV_PROPERTY: str(ndv)}))
        with PuffinReader(self.root / name) as reader:
            footer_size = reader.footer.footer_size
        self.statistics.append({
            "snapshot-id": snapshot_id, "statistics-path": self.uri(name),
            "file-size-in-bytes": (self.root / name).stat().st_size,
            "file-footer-size-in-bytes": footer_size,
            "blob-metadata": [{"type": b.type, "snapshot-id": b.snapshot_id,
                               "sequence-number": b.sequence_number, "fields": list(b.fields),
                               "properties": dict(b.properties)} for b in blobs]})

    def metadata(self) -> dict[str, Any]:
        current = self.snapshots[-1]["snapshot-id"] if self.snapshots else -1
        return {
            "format-version": self.format_version,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": self.location,
            "last-sequence-number": len(self.snapshots),
            "last-updated-ms": 1_700_000_000_000,
            "last-column-id": 4,
            "current-schema-id": 0,
            "schemas": [SCHEMA],
            "default-spec-id": 0,
            "partition-specs": [SPEC],
            "last-partition-id": 1000,
            "properties": {},
            "current-snapshot-id": current,
            "snapshots": self.snapshots,
            "statistics": self.statistics,
            "partition-statistics": [],
            "snapshot-log": [],
            "metadata-log": [],
            "sort-orders": [{"order-id": 0, "fields": []}],
            "default-sort-order-id": 0,
        }

    def finish(self, name: str = "v1.metadata.json") -> Path:
        path = self.root / "metadata" / name
        path.write_text(json.dumps(self.metadata(), indent=2))
        return path


def dv_table(root: Path, *, snapshots: int, dvs_per_snapshot: int, carry: bool,
             location: str | None = None) -> TableBuilder:
    """A v3 table whose snapshot ``i`` adds ``dvs_per_snapshot`` data files (one partition each,
    100 rows) and one Puffin file with a DV for each (positions 0, 2, 4). With ``carry`` every
    snapshot keeps all earlier manifests (so the current snapshot has every DV); without, each
    snapshot lists only its own two manifests."""
    table = TableBuilder(root, location=location)
    listed: list[tuple[str, int, int]] = []
    for i in range(1, snapshots + 1):
        files = [table.uri(f"data/part={k}/s{i}-f{k}.parquet") for k in range(dvs_per_snapshot)]
        data = table.manifest([data_entry(f, k, 100) for k, f in enumerate(files)], 0)
        puffin, ranges = table.puffin([(f, [0, 2, 4]) for f in files])
        deletes = table.manifest(
            [dv_entry(table.uri(puffin), f, k, off, length, 3)
             for k, (f, (off, length)) in enumerate(zip(files, ranges, strict=True))], 1)
        own = [(data, 0, i), (deletes, 1, i)]
        listed = [*listed, *own] if carry else own
        table.snapshot(listed)
    return table


def one_puffin_table(root: Path, *, dvs: int, positions: list[int], location: str | None = None,
                     unnamed_bad_blob: bool = False) -> tuple[TableBuilder, str]:
    """A v3 table of one snapshot: ``dvs`` data files (one partition each, 10,000 rows), each
    with a DV of ``positions``, all in one Puffin file; with ``unnamed_bad_blob``, a DV blob
    with a wrong CRC after them that no manifest entry names. Returns the builder (finished)
    and the Puffin file's name under ``root``."""
    from pyroaring import BitMap64

    table = TableBuilder(root, location=location)
    files = [table.uri(f"data/part={k}/f{k}.parquet") for k in range(dvs)]
    data = table.manifest([data_entry(f, k, 10_000) for k, f in enumerate(files)], 0)
    name = f"data/{uuid.uuid4()}-deletes.puffin"
    ranges = []
    with PuffinWriter(root / name, properties={"created-by": "puffin-cli tests"}) as writer:
        for data_file in files:
            blob = writer.add_blob(DV_BLOB_TYPE, encode_deletion_vector(BitMap64(positions)),
                                   fields=[ROW_POSITION_FIELD_ID],
                                   properties=dv_blob_properties(data_file, len(positions)))
            ranges.append((blob.offset, blob.length))
        if unnamed_bad_blob:
            bad = bytearray(encode_deletion_vector(BitMap64([1, 2])))
            bad[-1] ^= 1
            writer.add_blob(DV_BLOB_TYPE, bytes(bad), fields=[ROW_POSITION_FIELD_ID],
                            properties=dv_blob_properties(table.uri("data/gone.parquet"), 2))
    deletes = table.manifest(
        [dv_entry(table.uri(name), f, k, offset, length, len(positions))
         for k, (f, (offset, length)) in enumerate(zip(files, ranges, strict=True))], 1)
    table.snapshot([(data, 0, 1), (deletes, 1, 1)])
    table.finish()
    return table, name
