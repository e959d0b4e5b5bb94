"""A snapshot's partition statistics from its manifests alone (no data file is read), as
Iceberg Java 1.10's ``PartitionStatsHandler.computeAndWriteStatsFile`` computes them:

- **full**: every entry of every manifest of the snapshot, keyed by (spec ID, partition): a
  live entry adds its file (data: records, files, bytes; position deletes: records, and a
  file or, for a Puffin DV, a DV; equality deletes: records, files); a DELETED entry still
  makes its partition's row; each entry's snapshot (when the table still has it) updates the
  last update when later. ``total_record_count`` stays null, as Iceberg leaves it (knowing it
  needs the data files, and with equality deletes their rows).
- **incremental** from the newest ancestor with a registered file (``latestStatsFile``): that
  file's rows, plus the entries of the manifests each snapshot after it added: ADDED entries
  add, DELETED ones subtract, EXISTING ones only make their partition's row. A base file that
  cannot be read with the current schema (an Iceberg 1.9.x file, a broken one) means full,
  as Iceberg falls back ("corrupted for incremental compute").

Rows are sorted by partition (Iceberg's comparator; ties keep spec order). The manifests are
read through :class:`~puffin_cli.analysis.table.manifests.ManifestReader`'s ``entries``; the
aggregation is here alone, so a new manifest reader only changes :func:`_entries`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from puffin_cli.analysis.partition_stats.model import (
    PartitionField,
    StatsRow,
    internal,
    sort_key,
    spec_positions,
    unified_partition_type,
)
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import (
    CONTENT_DATA,
    CONTENT_EQUALITY_DELETES,
    CONTENT_POSITION_DELETES,
    STATUS_ADDED,
    STATUS_DELETED,
    ContentFile,
    ManifestFile,
)
from puffin_cli.analysis.table.metadata import PartitionStatisticsEntry, Snapshot
from puffin_cli.errors import PuffinError

FULL, INCREMENTAL, FRESH = "full", "incremental", "fresh"


@dataclass
class _Acc:
    """One partition's running counts (Iceberg's ``PartitionStats``)."""

    spec_id: int
    data_record_count: int = 0
    data_file_count: int = 0
    total_data_file_size_in_bytes: int = 0
    position_delete_record_count: int = 0
    position_delete_file_count: int = 0
    equality_delete_record_count: int = 0
    equality_delete_file_count: int = 0
    total_record_count: int | None = None
    last_updated_at: int | None = None
    last_updated_snapshot_id: int | None = None
    dv_count: int = 0

    def add(self, f: ContentFile, sign: int) -> None:
        if f.content == CONTENT_DATA:
            self.data_record_count += sign * f.record_count
            self.data_file_count += sign
            self.total_data_file_size_in_bytes += sign * f.file_size
        elif f.content == CONTENT_POSITION_DELETES:
            self.position_delete_record_count += sign * f.record_count
            if f.is_dv:
                self.dv_count += sign
            else:
                self.position_delete_file_count += sign
        elif f.content == CONTENT_EQUALITY_DELETES:
            self.equality_delete_record_count += sign * f.record_count
            self.equality_delete_file_count += sign
        else:
            raise PuffinError(f"{f.path}: unsupported file content {f.content}",
                              code="partition-stats.content", path=f.manifest)

    def updated(self, snapshot: Snapshot | None) -> None:
        if snapshot is None:
            return
        self.updated_at(snapshot.snapshot_id, snapshot.timestamp_ms)

    def updated_at(self, snapshot_id: int | None, at: int | None) -> None:
        if at is not None and (self.last_updated_at is None or self.last_updated_at < at):
            self.last_updated_at = at
            self.last_updated_snapshot_id = snapshot_id

    def merge(self, other: _Acc) -> None:
        for name in ("data_record_count", "data_file_count", "total_data_file_size_in_bytes",
                     "position_delete_record_count", "position_delete_file_count",
                     "equality_delete_record_count", "equality_delete_file_count", "dv_count"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.total_record_count is not None:
            self.total_record_count = (other.total_record_count if self.total_record_count is None
                                       else self.total_record_count + other.total_record_count)
        self.updated_at(other.last_updated_snapshot_id, other.last_updated_at)

    def row(self, partition: tuple[Any, ...]) -> StatsRow:
        return StatsRow(partition, self.spec_id, self.data_record_count, self.data_file_count,
                        self.total_data_file_size_in_bytes, self.position_delete_record_count,
                        self.position_delete_file_count, self.equality_delete_record_count,
                        self.equality_delete_file_count, self.total_record_count,
                        self.last_updated_at, self.last_updated_snapshot_id, self.dv_count)

    @classmethod
    def of(cls, row: StatsRow) -> _Acc:
        return cls(row.spec_id, row.data_record_count, row.data_file_count,
                   row.total_data_file_size_in_bytes, row.position_delete_record_count,
                   row.position_delete_file_count, row.equality_delete_record_count,
                   row.equality_delete_file_count, row.total_record_count, row.last_updated_at,
                   row.last_updated_snapshot_id, row.dv_count)


Key = tuple[int, tuple[Any, ...]]


@dataclass
class _Aggregate:
    """Rows by (spec ID, partition tuple of the unified type)."""

    table: Table
    unified: tuple[PartitionField, ...]
    rows: dict[Key, _Acc] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.positions = spec_positions(self.table.metadata, self.unified)

    def key(self, f: ContentFile) -> Key:
        places = self.positions.get(f.spec_id)
        if places is None:
            raise PuffinError(f"{f.path}: partition spec {f.spec_id} is not in the table "
                              "metadata", code="partition-stats.spec", path=f.manifest)
        values: list[Any] = [None] * len(self.unified)
        for name, position in places:
            values[position] = internal(self.unified[position].type, f.partition.get(name))
        return f.spec_id, tuple(values)

    def entry(self, status: int, f: ContentFile, incremental: bool) -> None:
        key = self.key(f)
        acc = self.rows.get(key)
        if acc is None:
            acc = self.rows[key] = _Acc(f.spec_id)
        snapshot = None if f.snapshot_id is None else self.table.metadata.snapshot(f.snapshot_id)
        if status != STATUS_DELETED:
            if not incremental or status == STATUS_ADDED:
                acc.add(f, 1)
                acc.updated(snapshot)
        elif incremental:
            acc.add(f, -1)
            acc.updated(snapshot)
        else:
            acc.updated(snapshot)

    def sorted_rows(self) -> list[StatsRow]:
        key = sort_key(self.unified)
        out = [acc.row(partition) for (_spec, partition), acc in self.rows.items()]
        return sorted(out, key=lambda r: key(r.partition))


def _entries(table: Table, manifests: Iterable[ManifestFile]
             ) -> Iterator[tuple[int, ContentFile]]:
    reader = table.manifests
    for manifest in manifests:
        yield from reader.entries(manifest)


def compute_full(table: Table, snapshot: Snapshot) -> list[StatsRow]:
    """Every row of ``snapshot`` from all its manifests."""
    agg = _Aggregate(table, unified_partition_type(table.metadata))
    for status, f in _entries(table, table.manifests.manifest_files(snapshot)):
        agg.entry(status, f, incremental=False)
    return agg.sorted_rows()


def compute_incremental(table: Table, snapshot: Snapshot, base_snapshot_id: int,
                        base_rows: Iterable[StatsRow]) -> list[StatsRow]:
    """``base_rows`` (the file of ancestor ``base_snapshot_id``) moved on to ``snapshot``."""
    unified = unified_partition_type(table.metadata)
    merged = _Aggregate(table, unified)
    for row in base_rows:
        merged.rows[row.key] = _Acc.of(row)
    diff = _Aggregate(table, unified)
    reader = table.manifests
    for ancestor in table.ancestors(snapshot):
        if ancestor.snapshot_id == base_snapshot_id:
            break
        added = [m for m in reader.manifest_files(ancestor)
                 if m.added_snapshot_id == ancestor.snapshot_id]
        for status, f in _entries(table, added):
            diff.entry(status, f, incremental=True)
    for key, acc in diff.rows.items():
        found = merged.rows.get(key)
        if found is None:
            merged.rows[key] = acc
        else:
            found.merge(acc)
    return merged.sorted_rows()


@dataclass(frozen=True)
class Computed:
    """A snapshot's rows and how they were made: ``full``, ``incremental`` from
    ``base_snapshot_id``'s file, or ``fresh`` (the snapshot has its file already: Iceberg
    returns it, unread, and ``rows`` is empty); ``reason`` says why full when a base was
    there."""

    snapshot_id: int
    mode: str
    rows: tuple[StatsRow, ...]
    unified: tuple[PartitionField, ...]
    base_snapshot_id: int | None = None
    base_path: str | None = None
    reason: str | None = None


def latest_file(table: Table, snapshot: Snapshot) -> PartitionStatisticsEntry | None:
    """The registered file of the newest ancestor of ``snapshot`` (itself included)."""
    by_snapshot = {e.snapshot_id: e for e in table.metadata.partition_statistics}
    for ancestor in table.ancestors(snapshot):
        if ancestor.snapshot_id in by_snapshot:
            return by_snapshot[ancestor.snapshot_id]
    return None


def require_partitioned(table: Table) -> None:
    """Iceberg computes partition statistics of partitioned tables only."""
    if not unified_partition_type(table.metadata):
        raise PuffinError("the table is unpartitioned: Iceberg's partition statistics need a "
                          "partitioned table ('Table must be partitioned')",
                          code="partition-stats.unpartitioned", path=table.metadata.path)


def compute(table: Table, snapshot: Snapshot, *, full: bool = False) -> Computed:
    """The rows Iceberg's ``computeAndWriteStatsFile(table, snapshot)`` writes."""
    from puffin_cli.analysis.partition_stats.parquet import read_rows

    require_partitioned(table)
    unified = unified_partition_type(table.metadata)
    sid = snapshot.snapshot_id
    base = None if full else latest_file(table, snapshot)
    if base is None:
        return Computed(sid, FULL, tuple(compute_full(table, snapshot)), unified)
    if base.snapshot_id == sid:  # Iceberg returns the snapshot's file as it is, unread
        return Computed(sid, FRESH, (), unified, sid, base.path)
    try:
        found = read_rows(table.resolve(base.path), unified, table.metadata.format_version,
                          fileio=table.fileio)
    except PuffinError as exc:
        return Computed(sid, FULL, tuple(compute_full(table, snapshot)), unified,
                        base.snapshot_id, base.path,
                        f"the file of snapshot {base.snapshot_id} cannot be read incrementally:"
                        f" {exc.message}")
    rows = compute_incremental(table, snapshot, base.snapshot_id, found)
    return Computed(sid, INCREMENTAL, tuple(rows), unified, base.snapshot_id, base.path)
