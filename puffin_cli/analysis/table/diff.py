"""``puffin diff TABLE``: what changed between two snapshots of one table, from its metadata
and manifests (no data file, DV or Puffin statistics file is opened) and the partition
statistics files registered for the two snapshots.

- The ends (:func:`resolve_ref`): a snapshot ID, a branch or tag name, or a time (the snapshot
  that was current then). By default the current snapshot and its parent; ``--from`` alone
  compares with the current snapshot, ``--to`` alone with that snapshot's parent. A snapshot
  without a parent (the first) is compared with the empty table before it.
- Files: the live data files and their rows at each end and those added and removed between
  them, by file (:meth:`.live.LiveFiles.changes_since`: a data file rewritten with another data
  sequence number is both removed and added).
- Deletes: per data file, the positions its live deletion vectors delete at each end (their
  manifest ``record_count``): a DV added to a data file that had none, removed, grown (the new
  one deletes more positions) or replaced (as many or fewer); the deleted rows at each end
  (the sum over data files); other delete files (position delete files, equality deletes).
- Statistics: per engine (Spark, Trino) the file it uses at each end
  (:class:`.statistics.StatisticsView`) and whether it is the snapshot's own (``current``),
  an ancestor's (``stale``, Trino only) or there is none (``missing``), and per column the NDV
  read at each end and the change.
- Partition statistics (:func:`_partition_statistics`): the file the metadata's
  ``partition-statistics`` registers for each snapshot (``None``: none) and, when both ends
  have a readable one, per partition (spec ID and partition tuple) the data rows and data
  files at each end where they differ. A partition's row with zero counts is the same as no
  row (what Iceberg's incremental compute leaves when a partition's files are all removed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import ContentFile
from puffin_cli.analysis.table.metadata import Snapshot
from puffin_cli.analysis.table.statistics import ENGINES, EngineStatistics, StatisticsView
from puffin_cli.errors import ErrorKind, PuffinError
from puffin_cli.format.spec import DEFAULT_LIMIT

# How a data file's deletion vectors changed.
DV_ADDED, DV_REMOVED, DV_GROWN, DV_REPLACED = "added", "removed", "grown", "replaced"
# Which statistics file an engine uses at an end.
STATS_CURRENT, STATS_STALE, STATS_MISSING = "current", "stale", "missing"
_INTEGER = re.compile(r"^-?[0-9]{1,20}$")


@dataclass(frozen=True)
class DiffEnd:
    """One end of the diff: ``ref`` as given (``None``: the default), the snapshot it names
    (``snapshot_id`` ``None``: before the table's first snapshot) and its live files."""

    ref: str | None
    snapshot_id: int | None
    timestamp_ms: int | None
    operation: str | None
    data_files: int
    data_rows: int
    deletion_vectors: int
    deleted_rows: int
    other_delete_files: int


@dataclass(frozen=True)
class FilesDiff:
    """Live data files added and removed between the ends, and their rows."""

    added: int
    removed: int
    rows_added: int
    rows_removed: int


@dataclass(frozen=True)
class DvChange:
    """The deletion vectors of one data file: ``change`` (``added``, ``removed``, ``grown``,
    ``replaced``), the positions they delete at each end (``None``: no DV there) and the
    Puffin files holding them."""

    data_file: str
    change: str
    positions_from: int | None
    positions_to: int | None
    paths_from: tuple[str, ...]
    paths_to: tuple[str, ...]


@dataclass(frozen=True)
class DeletesDiff:
    """How the deletes changed: data files whose DVs were added, removed, grown, replaced;
    the first ``--limit`` of them (by data file) in ``changes``, the others counted in
    ``changes_omitted``; other delete files added and removed."""

    dvs_added: int
    dvs_removed: int
    dvs_grown: int
    dvs_replaced: int
    changes: tuple[DvChange, ...]
    changes_omitted: int
    other_added: int
    other_removed: int


@dataclass(frozen=True)
class ColumnDiff:
    """One column's NDV at each end (``None``: no NDV there) and ``change`` (to less from,
    ``None`` unless both ends have one). ``column`` is its name in the schema of the ``to``
    snapshot, else of the ``from`` snapshot (``None``: in neither)."""

    field_id: int
    column: str | None
    ndv_from: int | None
    ndv_to: int | None
    change: int | None


@dataclass(frozen=True)
class StatisticsDiff:
    """What one engine plans with at each end: the statistics file (``None``: none), the
    snapshot it was computed for, its state (``current``, ``stale``, ``missing``) and the NDVs
    per column (every field ID either end has one for)."""

    engine: str
    path_from: str | None
    path_to: str | None
    file_snapshot_from: int | None
    file_snapshot_to: int | None
    state_from: str
    state_to: str
    columns: tuple[ColumnDiff, ...]

    @property
    def same(self) -> bool:
        return self.path_from == self.path_to and all(
            c.ndv_from == c.ndv_to for c in self.columns)


@dataclass(frozen=True)
class PartitionChange:
    """One partition whose counts differ between the ends' partition statistics files: its
    spec ID, partition (field name -> value) and the data rows and files at each end
    (``None``: no row for it there)."""

    spec_id: int
    partition: dict[str, Any]
    rows_from: int | None
    rows_to: int | None
    files_from: int | None
    files_to: int | None


@dataclass(frozen=True)
class PartitionStatisticsDiff:
    """The partition statistics file registered for each end (``None``: none) and, when both
    are there and readable, the partitions whose data rows or files differ: how many
    (``partitions_changed``), the first ``--limit`` (by partition) in ``changes``, the others
    counted in ``changes_omitted``; ``problem``: why the files could not be compared (a file
    Iceberg cannot read), else ``None``."""

    path_from: str | None
    path_to: str | None
    partitions_changed: int
    changes: tuple[PartitionChange, ...]
    changes_omitted: int
    problem: str | None


@dataclass(frozen=True)
class TableDiff:
    """``puffin diff TABLE``'s result. ``same``: the ends have the same live files and every
    engine the same statistics file and NDVs (exit 0; else exit 1). ``path`` is the table's
    directory, ``location`` its metadata's ``location`` (the human view names files inside
    the table relative to it, as ``table`` does); ``manifests_read`` the manifest lists and
    manifests opened (each at most once)."""

    table: str
    metadata_file: str
    path: str
    location: str
    same: bool
    from_snapshot: DiffEnd
    to_snapshot: DiffEnd
    data_files: FilesDiff
    deletes: DeletesDiff
    statistics: tuple[StatisticsDiff, ...]
    manifests_read: int
    partition_statistics: PartitionStatisticsDiff


def resolve_ref(table: Table, ref: str) -> Snapshot:
    """The snapshot ``ref`` names: a branch or tag of the table's ``refs``, else a snapshot ID
    (:meth:`.Table.snapshot`), else an ISO 8601 time (UTC unless it gives an offset): the
    snapshot that was current then, by the table's ``snapshot-log`` (by the current snapshot's
    ancestors when the log is empty), as Iceberg's time travel reads it."""
    refs = table.metadata.raw.get("refs")
    if isinstance(refs, dict) and isinstance(refs.get(ref), dict):
        snapshot_id = refs[ref].get("snapshot-id")
        if not isinstance(snapshot_id, int) or isinstance(snapshot_id, bool):
            raise PuffinError(f"refs {ref!r} has no integer snapshot-id", code="table.metadata",
                              path=table.metadata.path)
        return _snapshot(table, table.snapshot(snapshot_id))
    if _INTEGER.match(ref):
        return _snapshot(table, table.snapshot(int(ref)))
    moment = _time(ref)
    if moment is None:
        names = ", ".join(sorted(refs)) if isinstance(refs, dict) and refs else "none"
        raise PuffinError(f"{ref!r} is no snapshot ID, branch or tag (refs: {names}) and no "
                          "ISO 8601 time", code="table.snapshot", path=table.metadata.path,
                          kind=ErrorKind.BAD_ARGUMENT)
    millis = int(moment.timestamp() * 1000)
    found = None
    for timestamp, snapshot_id in _history(table):
        if timestamp <= millis:
            found = snapshot_id
    if found is None:
        raise PuffinError(f"no snapshot was current at {moment.isoformat()}",
                          code="table.snapshot", path=table.metadata.path,
                          kind=ErrorKind.BAD_ARGUMENT)
    return _snapshot(table, table.snapshot(found))


def _snapshot(table: Table, snapshot: Snapshot | None) -> Snapshot:
    if snapshot is None:
        raise PuffinError("the table has no current snapshot", code="table.snapshot",
                          path=table.metadata.path)
    return snapshot


def _time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _history(table: Table) -> list[tuple[int, int]]:
    """(timestamp-ms, snapshot-id) of each snapshot made current, oldest first."""
    log = table.metadata.raw.get("snapshot-log")
    entries = [(e["timestamp-ms"], e["snapshot-id"]) for e in log or ()
               if isinstance(e, dict) and isinstance(e.get("timestamp-ms"), int)
               and isinstance(e.get("snapshot-id"), int)] if isinstance(log, list) else []
    if entries:
        return sorted(entries, key=lambda entry: entry[0])
    current = table.current_snapshot()
    chain = [] if current is None else list(table.ancestors(current))
    return [(s.timestamp_ms, s.snapshot_id) for s in reversed(chain)]


def diff_table(table: Table, *, name: str, from_ref: str | None = None,
               to_ref: str | None = None, limit: int = DEFAULT_LIMIT) -> TableDiff:
    """The diff of ``table`` (``name``: as the user gave it) from ``from_ref`` to ``to_ref``
    (module docstring); at most ``limit`` DV changes listed."""
    target = _snapshot(table, table.current_snapshot() if to_ref is None
                       else resolve_ref(table, to_ref))
    if from_ref is not None:
        base: Snapshot | None = resolve_ref(table, from_ref)
    else:
        base = None if target.parent_id is None else table.snapshot(target.parent_id)
    reader = table.manifests
    if base is None:
        before = LiveFiles()
        after = LiveFiles.of(reader, target)
    else:
        states = LiveFiles.walk(reader, [base, target])
        before = next(states)[1].copy()
        after = next(states)[1]
    changes = after.changes_since(before)
    data = FilesDiff(len(changes.data_added), len(changes.data_removed),
                     sum(e.record_count for e in changes.data_added),
                     sum(e.record_count for e in changes.data_removed))
    touched = {e.referenced_data_file or "" for _, e in (*changes.deletes_added,
                                                         *changes.deletes_removed) if e.is_dv}
    dv_changes = [c for c in (_dv_change(path, before.dvs_for(path), after.dvs_for(path))
                              for path in sorted(touched)) if c is not None]
    counts = {kind: sum(c.change == kind for c in dv_changes)
              for kind in (DV_ADDED, DV_REMOVED, DV_GROWN, DV_REPLACED)}
    deletes = DeletesDiff(
        counts[DV_ADDED], counts[DV_REMOVED], counts[DV_GROWN], counts[DV_REPLACED],
        tuple(dv_changes[:limit]), max(len(dv_changes) - limit, 0),
        sum(not e.is_dv for _, e in changes.deletes_added),
        sum(not e.is_dv for _, e in changes.deletes_removed))
    view = StatisticsView(table)
    names = table.field_names(target.snapshot_id)
    statistics = tuple(_statistics(engine, None if base is None else view.engine(base, engine),
                                   view.engine(target, engine), names.name)
                       for engine in ENGINES)
    same = not (changes.data_added or changes.data_removed or changes.deletes_added
                or changes.deletes_removed) and all(s.same for s in statistics)
    return TableDiff(name, table.metadata_file, table.table_dir, table.metadata.location,
                     same, _end(from_ref, base, before), _end(to_ref, target, after), data,
                     deletes, statistics, reader.files_opened,
                     _partition_statistics(table, base, target, limit))


def _positions(dvs: Iterable[ContentFile]) -> int:
    return sum(dv.record_count for dv in dvs)


def _end(ref: str | None, snapshot: Snapshot | None, live: LiveFiles) -> DiffEnd:
    dvs = [e for e in live.delete_files if e.is_dv]
    return DiffEnd(ref, None if snapshot is None else snapshot.snapshot_id,
                   None if snapshot is None else snapshot.timestamp_ms,
                   None if snapshot is None else snapshot.operation,
                   len(live.data), live.data_rows, len(dvs), _positions(dvs),
                   len(live.deletes) - len(dvs))


def _dv_change(data_file: str, before: tuple[ContentFile, ...],
               after: tuple[ContentFile, ...]) -> DvChange | None:
    """How the DVs of ``data_file`` changed (``None``: they did not, e.g. a DV carried into
    a new manifest unchanged)."""
    def key(dvs: tuple[ContentFile, ...]) -> set[tuple[object, ...]]:
        return {(d.path, d.content_offset, d.content_size, d.sequence_number) for d in dvs}

    if key(before) == key(after):
        return None
    old, new = _positions(before), _positions(after)
    if not before:
        change = DV_ADDED
    elif not after:
        change = DV_REMOVED
    else:
        change = DV_GROWN if new > old else DV_REPLACED
    return DvChange(data_file, change, old if before else None, new if after else None,
                    tuple(d.path for d in before), tuple(d.path for d in after))


def _statistics(engine: str, base: EngineStatistics | None, target: EngineStatistics,
                name: Callable[[int], str | None]) -> StatisticsDiff:
    old = {} if base is None else {c.field_id: c for c in base.columns}
    new = {c.field_id: c for c in target.columns}
    columns = []
    for field_id in sorted(old.keys() | new.keys()):
        a, b = old.get(field_id), new.get(field_id)
        ndv_a = None if a is None else a.ndv
        ndv_b = None if b is None else b.ndv
        column = name(field_id) or (None if a is None else a.column)
        columns.append(ColumnDiff(field_id, column, ndv_a, ndv_b,
                                  None if ndv_a is None or ndv_b is None else ndv_b - ndv_a))
    return StatisticsDiff(
        engine, None if base is None else base.path, target.path,
        None if base is None or base.entry is None else base.entry.snapshot_id,
        None if target.entry is None else target.entry.snapshot_id,
        _state(base), _state(target), tuple(columns))


def _state(statistics: EngineStatistics | None) -> str:
    if statistics is None or statistics.entry is None:
        return STATS_MISSING
    return STATS_STALE if statistics.stale else STATS_CURRENT


def _partition_file(table: Table, snapshot: Snapshot | None) -> str | None:
    if snapshot is None:
        return None
    return next((e.path for e in table.metadata.partition_statistics
                 if e.snapshot_id == snapshot.snapshot_id), None)


def _partition_statistics(table: Table, base: Snapshot | None, target: Snapshot,
                          limit: int) -> PartitionStatisticsDiff:
    """The partition statistics of the ends compared (module docstring); at most ``limit``
    changed partitions listed."""
    path_from, path_to = _partition_file(table, base), _partition_file(table, target)
    if path_from is None or path_to is None:
        return PartitionStatisticsDiff(path_from, path_to, 0, (), 0, None)
    from puffin_cli.analysis.partition_stats.checks import partition_values
    from puffin_cli.analysis.partition_stats.model import sort_key, unified_partition_type
    from puffin_cli.analysis.partition_stats.parquet import read_rows

    counts: list[dict[tuple[int, tuple[Any, ...]], tuple[int, int]]] = []
    try:
        unified = unified_partition_type(table.metadata)
        for path in (path_from, path_to):
            counts.append({
                r.key: (r.data_record_count, r.data_file_count)
                for r in read_rows(table.resolve(path), unified, table.metadata.format_version,
                                   fileio=table.fileio)
                if r.data_record_count or r.data_file_count})
    except PuffinError as exc:
        where = f"{exc.path}: " if exc.path else ""
        return PartitionStatisticsDiff(path_from, path_to, 0, (), 0, where + exc.message)
    old, new = counts
    key = sort_key(unified)
    changed = sorted((k for k in old.keys() | new.keys() if old.get(k) != new.get(k)),
                     key=lambda k: (key(k[1]), k[0]))
    changes = tuple(
        PartitionChange(spec_id, partition_values(unified, partition),
                        *_pair(old.get((spec_id, partition)), new.get((spec_id, partition))))
        for spec_id, partition in changed[:limit])
    return PartitionStatisticsDiff(path_from, path_to, len(changed), changes,
                                   max(len(changed) - limit, 0), None)


def _pair(a: tuple[int, int] | None, b: tuple[int, int] | None
          ) -> tuple[int | None, int | None, int | None, int | None]:
    """rows from, rows to, files from, files to."""
    return (None if a is None else a[0], None if b is None else b[0],
            None if a is None else a[1], None if b is None else b[1])
