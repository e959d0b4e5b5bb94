"""``stats compute --partition-stats``: a snapshot's partition statistics file computed from its
manifests alone (:mod:`.compute`), in this process, written beside the table's metadata (or
to ``-o``) and, with ``commit``, registered through the one commit path
(``set-partition-statistics``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from puffin_cli.analysis.partition_stats.compute import FRESH, compute
from puffin_cli.analysis.partition_stats.parquet import write_rows
from puffin_cli.analysis.stats.options import StatsOptions
from puffin_cli.analysis.table.commit import (
    check_committable,
    commit,
    require_snapshot,
    table_requirements,
)
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.updates import (
    PartitionStatisticsFileEntry,
    SetPartitionStatistics,
    TableChange,
)
from puffin_cli.errors import PuffinError
from puffin_cli.storage import join


@dataclass(frozen=True)
class PartitionStatsResult:
    """What ``stats compute --partition-stats`` did for one table: the snapshot, how the rows
    were computed (``full``, ``incremental`` from ``base-snapshot-id``'s file, or ``fresh``:
    the snapshot has its file, nothing written or read: ``partitions`` null), why full when a
    base was there, the rows (``partitions``), the file written and its size, and the new
    metadata file when committed."""

    table: str
    snapshot_id: int
    mode: str
    base_snapshot_id: int | None
    reason: str | None
    partitions: int | None
    path: str | None
    file_size: int | None
    committed: bool
    metadata_file: str | None


def file_name(snapshot_id: int) -> str:
    """The name Iceberg Java gives the file: ``partition-stats-<snapshot>-<uuid>.parquet``."""
    return f"partition-stats-{snapshot_id}-{uuid.uuid4()}.parquet"


def compute_partition_stats(table: Table, options: StatsOptions, *,
                            output_dir: str | None = None) -> PartitionStatsResult:
    """Compute, write (in the table's ``metadata/`` with ``options.commit``, else in
    ``output_dir``) and register the partition statistics file of ``options.snapshot_id``
    (default the current snapshot), incremental unless ``options.full``."""
    snapshot_id, commit_it = options.snapshot_id, options.commit
    if commit_it:
        check_committable(table)
    snapshot = table.snapshot(snapshot_id) if snapshot_id is not None \
        else table.current_snapshot()
    if snapshot is None:
        raise PuffinError("the table has no snapshot: no partition statistics to compute"
                          if snapshot_id is None else f"no snapshot {snapshot_id}",
                          code="partition-stats.snapshot", path=table.metadata.path)
    done = compute(table, snapshot, full=options.full)
    label = str(table.table_dir)
    sid = snapshot.snapshot_id
    if done.mode == FRESH:
        return PartitionStatsResult(label, sid, done.mode, done.base_snapshot_id, None,
                                    None, done.base_path, None, False, None)
    name = file_name(sid)
    local = join(table.statistics_dir, name) if commit_it or output_dir is None \
        else join(output_dir, name)
    size = write_rows(local, done.rows, done.unified, table.metadata.format_version,
                      fileio=table.fileio)
    location = table.location_of(local) if commit_it else local
    metadata_file = None
    if commit_it:
        entry = PartitionStatisticsFileEntry(sid, location, size)

        def build(base: Table) -> TableChange:
            require_snapshot(base, sid, "partition statistics")
            return TableChange(table_requirements(base), (SetPartitionStatistics(entry),))

        metadata_file = commit(table, build, written=[local]).metadata_file
    return PartitionStatsResult(label, sid, done.mode, done.base_snapshot_id, done.reason,
                                len(done.rows), location, size, commit_it, metadata_file)
