"""What ``puffin table`` reports for each table and snapshot: plain dataclasses, rendered by
:mod:`puffin_cli.render.table` (their JSON form is documented in docs/json.md). Built by
:mod:`puffin_cli.analysis.table.checks`.
"""

from __future__ import annotations

from dataclasses import dataclass

from puffin_cli.analysis.table.metadata import (
    PartitionStatisticsEntry,
)
from puffin_cli.analysis.table.partitions import PartitionTuple
from puffin_cli.format.findings import Finding


@dataclass(frozen=True)
class StatisticsBlob:
    """One blob of a statistics file as the table metadata registers it, with column names
    from the schema used for its snapshot (``None`` for an unknown field ID)."""

    type: str
    fields: tuple[int, ...]
    columns: tuple[str | None, ...]
    snapshot_id: int
    sequence_number: int
    ndv: int | None
    properties: dict[str, str]


@dataclass(frozen=True)
class StatisticsFile:
    snapshot_id: int
    path: str
    file_size: int
    footer_size: int
    schema_id: int
    blobs: tuple[StatisticsBlob, ...]


@dataclass(frozen=True)
class DeletionVector:
    """One live DV entry of a delete manifest (``record_count`` from the manifest,
    ``cardinality`` decoded from the bytes; ``None`` when they could not be read)."""

    data_file: str | None
    path: str
    offset: int | None
    length: int | None
    record_count: int
    cardinality: int | None
    container: str
    spec_id: int
    partition: PartitionTuple
    sequence_number: int


@dataclass(frozen=True)
class StatisticsChoice:
    """Which statistics file readers use for a snapshot: Spark only one registered for exactly
    that snapshot; Trino the nearest ancestor's (the snapshot itself included). Made by
    :meth:`.statistics.StatisticsView.choice`."""

    spark: str | None
    trino: str | None
    trino_snapshot_id: int | None


@dataclass(frozen=True)
class Totals:
    """Counts over the whole snapshot (every deletion vector, listed or not);
    ``data_rows`` is the sum of its live data files' ``record_count``."""

    statistics_files: int
    statistics_blobs: int
    deletion_vectors: int
    dv_files: int
    dv_bytes: int
    deleted_rows: int
    other_delete_files: int
    data_files: int = 0
    data_rows: int = 0


@dataclass(frozen=True)
class SnapshotView:
    snapshot_id: int
    parent_id: int | None
    sequence_number: int
    timestamp_ms: int
    operation: str | None
    current: bool
    schema_id: int
    statistics: tuple[StatisticsFile, ...]
    statistics_used: StatisticsChoice
    partition_statistics: tuple[PartitionStatisticsEntry, ...]
    deletion_vectors: tuple[DeletionVector, ...]
    totals: Totals
    deletion_vectors_omitted: int = 0  # not listed (``--limit``); counted in ``totals``
    # with statistics files for the snapshot: the primitive columns no theta blob covers
    columns_without_statistics: tuple[str, ...] = ()
    removed_rows: int = 0  # rows its replaced data files took away (Snapshot.removed_rows)


@dataclass(frozen=True)
class TableReport:
    """One table. ``relocated`` lists the (from, to) location rewrites applied;
    ``manifests_read`` the Avro files (manifest lists and manifests) opened."""

    path: str
    metadata_file: str | None  # None: not found (the table could not be read)
    format_version: int | None  # None: the table's metadata could not be read
    table_uuid: str | None
    location: str
    relocated: tuple[tuple[str, str], ...]
    current_snapshot_id: int | None
    snapshots: tuple[SnapshotView, ...]
    orphans: tuple[str, ...]
    manifests_read: int
    errors: int
    warnings: int
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class TablesReport:
    tables: tuple[TableReport, ...]

    def failed(self, strict: bool = False) -> bool:
        """A table has an error (with ``strict``, or a warning), as ``validate`` decides."""
        return any(t.errors or (strict and t.warnings) for t in self.tables)
