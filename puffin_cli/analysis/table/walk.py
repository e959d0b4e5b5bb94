"""``puffin table`` over the selected snapshots of each table, one snapshot after another.

Snapshots are walked oldest first. Between one snapshot and the next only the manifests that
differ are applied to the live state (data files, deletion vectors and their counts), so a
table whose snapshots carry their manifests forward costs each manifest once, and a deletion
vector listed by many snapshots is checked once (against the same data file entry; again when
that entry changes), its findings naming the first snapshot that listed it. The cross-checks
themselves are :mod:`.checks`.

Each snapshot's view lists at most ``limit`` deletion vectors (all counted in its totals);
:meth:`TableWalk.snapshots` also gives the deletion vectors that appeared and disappeared since
the snapshot before, for a caller that streams (``puffin table --jsonl``).
"""

from __future__ import annotations

import heapq
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from puffin_cli.analysis.table.checks import TableChecks
from puffin_cli.analysis.table.facts import (
    ABOUT_FILE,
    ABOUT_SNAPSHOT,
    DATA,
    DELETES,
    Duplicate,
    Facts,
    FileProblem,
    FileRef,
)
from puffin_cli.analysis.table.live import DeleteId, LiveChanges, LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import Snapshot, find_tables, is_table_dir
from puffin_cli.analysis.table.report import (
    DeletionVector,
    SnapshotView,
    StatisticsFile,
    TableReport,
    TablesReport,
    Totals,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE, THETA_BLOB_TYPE
from puffin_cli.storage import FileIO

# (snapshots done, snapshots in all): called after each snapshot of a table.
Progress = Callable[[int, int], None]


def _order(dv: DeletionVector) -> tuple[str, str]:
    return dv.data_file or "", dv.path


@dataclass(frozen=True)
class SnapshotChanges:
    """The deletion vectors of a snapshot that the snapshot walked before did not have
    (``added``, or checked again because their data file changed) and those it has no more
    (``removed``)."""

    added: tuple[DeletionVector, ...]
    removed: tuple[DeletionVector, ...]


class _WalkState:
    """The deletion vectors of the snapshot being walked, checked, kept up to date from the
    changes of its :class:`LiveFiles`."""

    def __init__(self, checks: TableChecks) -> None:
        self.checks = checks
        self.files = LiveFiles()
        self.dvs: dict[DeleteId, DeletionVector] = {}
        self.dv_files: Counter[str] = Counter()
        self.dv_bytes = 0
        self.deleted_rows = 0
        self.by_data_file: dict[str | None, dict[DeleteId, DeletionVector]] = {}
        self.data_file_rows: dict[str | None, int] = {}
        self.duplicates_reported: set[tuple[str, int]] = set()

    @property
    def other_deletes(self) -> int:
        return len(self.files.deletes) - self.files.dv_count

    def _set(self, dv_id: DeleteId, view: DeletionVector | None) -> DeletionVector | None:
        """Put ``view`` in place of the DV's current view (``None`` drops it); the old one."""
        old = self.dvs.pop(dv_id, None)
        if old is not None:
            self.dv_files[old.path] -= 1
            if not self.dv_files[old.path]:
                del self.dv_files[old.path]
            self.dv_bytes -= old.length or 0
            self._count(old.data_file, dv_id, None)
        if view is not None:
            self.dvs[dv_id] = view
            self.dv_files[view.path] += 1
            self.dv_bytes += view.length or 0
            self._count(view.data_file, dv_id, view)
        return old

    def _count(self, data_file: str | None, dv_id: DeleteId,
               view: DeletionVector | None) -> None:
        """Put ``view`` in place of the DV's view among its data file's, and count the rows
        that data file's DVs delete again."""
        dvs = self.by_data_file.setdefault(data_file, {})
        if view is None:
            dvs.pop(dv_id, None)
        else:
            dvs[dv_id] = view
        self.deleted_rows -= self.data_file_rows.pop(data_file, 0)
        if not dvs:
            del self.by_data_file[data_file]
            return
        rows = (self.checks.deleted_rows(tuple(dvs.values())) if data_file is not None
                else sum(dv.record_count for dv in dvs.values()))
        self.data_file_rows[data_file] = rows
        self.deleted_rows += rows

    def advance(self, snapshot_id: int, changes: LiveChanges) -> SnapshotChanges:
        """Check what ``changes`` (the live files' move to the snapshot) brought."""
        files = self.files
        added: list[DeletionVector] = []
        removed: list[DeletionVector] = []
        for dv_id, entry in changes.deletes_removed:
            if entry.is_dv:
                old = self._set(dv_id, None)
                if old is not None:
                    removed.append(old)
        changed_data = {e.path for e in changes.data_removed + changes.data_added}
        for path in changed_data:  # DVs already live whose data file changed
            for dv_id in files.dvs_by_data_file.get(path, ()):
                if dv_id in self.dvs:
                    view = self.checks.deletion_vector(snapshot_id, files.deletes[dv_id],
                                                       files.data)
                    if view is not self.dvs[dv_id]:
                        old = self._set(dv_id, view)
                        assert old is not None
                        removed.append(old)
                        added.append(view)
        for dv_id, entry in changes.deletes_added:
            if entry.is_dv:
                view = self.checks.deletion_vector(snapshot_id, entry, files.data)
                self._set(dv_id, view)
                added.append(view)
        self._duplicates(snapshot_id, {dv.data_file for dv in added if dv.data_file})
        return SnapshotChanges(tuple(sorted(added, key=_order)),
                               tuple(sorted(removed, key=_order)))

    def _duplicates(self, snapshot_id: int, data_files: set[str]) -> None:
        for data_file in sorted(data_files):
            count = len(self.files.dvs_by_data_file.get(data_file, ()))
            if count > 1 and (data_file, count) not in self.duplicates_reported:
                self.duplicates_reported.add((data_file, count))
                entries = sorted(self.files.dvs_for(data_file),
                                 key=lambda e: (e.path, e.content_offset or 0))
                files = (FileRef(DATA, data_file), *(
                    FileRef(DELETES, e.path, e.content_offset, e.content_size) for e in entries))
                self.checks.add("table.dv.duplicate", Facts(
                    data_file, self.checks.elsewhere(data_file), snapshot_id, ABOUT_SNAPSHOT,
                    files, Duplicate(count)))

    def listed(self, limit: int | None) -> tuple[DeletionVector, ...]:
        """The first ``limit`` DVs (all for ``None``) in (data file, path) order."""
        if limit is None:
            return tuple(sorted(self.dvs.values(), key=_order))
        return tuple(heapq.nsmallest(limit, self.dvs.values(), key=_order)) if limit else ()


def _select(table: Table, snapshot_id: int | None, all_snapshots: bool) -> list[Snapshot]:
    if all_snapshots:
        return table.snapshots()
    snapshot = table.snapshot(snapshot_id)
    return [] if snapshot is None else [snapshot]


class TableWalk:
    """One table analysed snapshot by snapshot: :meth:`snapshots` yields each selected
    snapshot's view as it is done, and :meth:`finish` (after it) checks the rest and returns
    the report. :func:`analyze_table` collects it; ``--jsonl`` streams it."""

    def __init__(self, table: Table, *, snapshot_id: int | None = None,
                 all_snapshots: bool = False, validate: bool = True, limit: int | None = None,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> None:
        self.table = table
        self.checks = TableChecks(self.table, validate, max_blob_size)
        self.selected = _select(self.table, snapshot_id, all_snapshots)
        self.all_snapshots = all_snapshots
        self.limit = limit
        self.views: list[SnapshotView] = []

    def snapshots(self, progress: Progress | None = None
                  ) -> Iterator[tuple[SnapshotView, SnapshotChanges]]:
        live = _WalkState(self.checks)
        total = len(self.selected)
        every = LiveFiles.walk(self.table.manifests, self.selected)
        for done, (snapshot, files, moved) in enumerate(every, 1):
            live.files = files
            changes = live.advance(snapshot.snapshot_id, moved)
            view = self._view(snapshot, live)
            self.views.append(view)
            if progress is not None:
                progress(done, total)
            yield view, changes

    def _view(self, snapshot: Snapshot, live: _WalkState) -> SnapshotView:
        sid = snapshot.snapshot_id
        checks = self.checks
        stats = checks.statistics_files(sid)
        listed = live.listed(self.limit)
        totals = Totals(
            statistics_files=len(stats),
            statistics_blobs=sum(len(s.blobs) for s in stats),
            deletion_vectors=len(live.dvs),
            dv_files=len(live.dv_files),
            dv_bytes=live.dv_bytes,
            deleted_rows=live.deleted_rows,
            other_delete_files=live.other_deletes,
            data_files=len(live.files.data),
            data_rows=live.files.data_rows,
        )
        return SnapshotView(
            snapshot_id=sid, parent_id=snapshot.parent_id,
            sequence_number=snapshot.sequence_number, timestamp_ms=snapshot.timestamp_ms,
            operation=snapshot.operation,
            current=sid == self.table.metadata.current_snapshot_id,
            schema_id=self.table.metadata.schema_for(sid)[0], statistics=stats,
            statistics_used=checks.statistics_used(snapshot),
            partition_statistics=checks.partition_statistics(sid),
            deletion_vectors=listed, totals=totals,
            deletion_vectors_omitted=len(live.dvs) - len(listed),
            columns_without_statistics=self._unsketched(sid, stats),
            removed_rows=snapshot.removed_rows)

    def _unsketched(self, snapshot_id: int, stats: tuple[StatisticsFile, ...]
                    ) -> tuple[str, ...]:
        """The columns ``stats compute`` sketches that no theta blob of the snapshot's
        statistics files covers (none listed when it has no file: that is said already)."""
        if not stats:
            return ()
        from puffin_cli.analysis.stats.files import primitive_type, top_level_fields

        covered = {f for s in stats for b in s.blobs if b.type == THETA_BLOB_TYPE
                   for f in b.fields}
        schema = self.table.metadata.schema_for(snapshot_id)[1]
        return tuple(str(f["name"]) for f in top_level_fields(schema)
                     if primitive_type(f) is not None and f["id"] not in covered)

    def finish(self) -> TableReport:
        checks, metadata = self.checks, self.table.metadata
        selected = {v.snapshot_id for v in self.views}
        for entry in metadata.statistics:  # registered for a snapshot the table does not have
            if entry.snapshot_id not in selected and metadata.snapshot(entry.snapshot_id) is None:
                checks.statistics_file(entry)
        return self._report(checks.orphans(everywhere=self.all_snapshots))

    def failed(self, error: PuffinError) -> TableReport:
        """The report of a walk that ``error`` stopped (a table of a warehouse: the run goes
        on with the next one): the snapshots done, and the error as a finding."""
        self.checks.findings.append(unreadable(error, str(self.table.metadata_file)))
        return self._report(())

    def _report(self, orphans: tuple[str, ...]) -> TableReport:
        table, checks, metadata = self.table, self.checks, self.table.metadata
        errors = sum(f.severity is Severity.ERROR for f in checks.findings)
        warnings = sum(f.severity is Severity.WARNING for f in checks.findings)
        return TableReport(
            path=str(table.table_dir), metadata_file=str(table.metadata_file),
            format_version=metadata.format_version, table_uuid=metadata.table_uuid,
            location=metadata.location, relocated=tuple(table.mapper.rules),
            current_snapshot_id=metadata.current_snapshot_id, snapshots=tuple(self.views),
            orphans=orphans, manifests_read=table.manifests.files_opened, errors=errors,
            warnings=warnings, findings=tuple(checks.findings))


def analyze_table(table: Table, *, snapshot_id: int | None = None,
                  all_snapshots: bool = False, validate: bool = True, limit: int | None = None,
                  progress: Progress | None = None,
                  max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> TableReport:
    """Analyze one loaded table; each snapshot lists at most ``limit`` deletion vectors (all
    for ``None``); ``max_blob_size`` bounds every file and blob read (``--max-blob-size``)."""
    walk = TableWalk(table, snapshot_id=snapshot_id, all_snapshots=all_snapshots,
                     validate=validate, limit=limit, max_blob_size=max_blob_size)
    for _done in walk.snapshots(progress):
        pass
    return walk.finish()


UNREADABLE = "table.unreadable"


def unreadable(error: PuffinError, where: str) -> Finding:
    """The finding of a table of a warehouse that ``error`` kept from being read (its metadata,
    a manifest list, a manifest), naming the file (``where`` when the error does not)."""
    facts = Facts(error.path or where, None, None, ABOUT_FILE, (), FileProblem(error.message))
    return Finding(UNREADABLE, Severity.ERROR, facts.message(), error.offset, facts=facts)


def unreadable_table(location: str, error: PuffinError) -> TableReport:
    """The report of a table of a warehouse whose metadata could not be read: its error."""
    return TableReport(
        path=location, metadata_file=error.path, format_version=None, table_uuid=None,
        location=location, relocated=(), current_snapshot_id=None, snapshots=(), orphans=(),
        manifests_read=0, errors=1, warnings=0, findings=(unreadable(error, location),))


class Tables:
    """The tables at ``path`` (a location), each loaded when the one before is done (iterate
    it): a table directory, a metadata JSON file, or a warehouse (every table under it,
    ``warehouse`` true); with ``catalog``, ``path`` is one table's identifier there. In a
    warehouse each table is reported on its own: one whose metadata cannot be read is given
    as its report (:func:`unreadable_table`) and the others are still read; the error of a
    single table is raised."""

    def __init__(self, path: str | os.PathLike[str], *, fileio: FileIO,
                 catalog: str | None = None, relocate: list[tuple[str, str]] | None = None,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> None:
        self.locations, self.warehouse = _table_locations(path, catalog, fileio)
        self._load = dict(fileio=fileio, relocate=relocate, catalog=catalog,
                          max_blob_size=max_blob_size)

    def __iter__(self) -> Iterator[Table | TableReport]:
        for location in self.locations:
            try:
                table = Table.load(location, **self._load)  # type: ignore[arg-type]
            except PuffinError as exc:
                if not self.warehouse:
                    raise
                yield unreadable_table(os.fspath(location), exc)
                continue
            yield table

    def walks(self, **options: Any) -> Iterator[TableWalk | TableReport]:
        """A :class:`TableWalk` (``options``) of each table, or the report of one that
        could not be read."""
        for table in self:
            if isinstance(table, TableReport):
                yield table
                continue
            try:
                walk = TableWalk(table, **options)
            except PuffinError as exc:
                if not self.warehouse:
                    raise
                yield unreadable_table(str(table.table_dir), exc)
                continue
            yield walk


def load_tables(path: str | os.PathLike[str], *, fileio: FileIO, catalog: str | None = None,
                relocate: list[tuple[str, str]] | None = None,
                max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> Tables:
    """The tables at ``path`` (:class:`Tables`)."""
    return Tables(path, fileio=fileio, catalog=catalog, relocate=relocate,
                  max_blob_size=max_blob_size)


def _table_locations(path: str | os.PathLike[str], catalog: str | None,
                     fileio: FileIO) -> tuple[list[str | os.PathLike[str]], bool]:
    """The tables' locations, and whether ``path`` is a warehouse."""
    if catalog is not None:
        return [path], False
    target = os.fspath(path)
    found = fileio.stat(target)
    if found is None:
        raise PuffinError("no such file or directory", code="table.not-found", path=target)
    if found.kind != "dir" or is_table_dir(target, fileio):
        return [target], False
    tables = find_tables(target, fileio)
    if not tables:
        raise PuffinError("no Iceberg table found (no directory with metadata/*.metadata"
                          ".json)", code="table.not-found", path=str(path))
    return list(tables), True


def analyze_path(path: str | os.PathLike[str], *, fileio: FileIO,
                 snapshot_id: int | None = None, all_snapshots: bool = False,
                 relocate: list[tuple[str, str]] | None = None, validate: bool = True,
                 limit: int | None = None, progress: Progress | None = None,
                 catalog: str | None = None,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> TablesReport:
    """The report of every table of :func:`load_tables`, as :func:`analyze_table` makes it (in
    a warehouse, a table that cannot be read is the report of its error: :class:`Tables`)."""
    tables = load_tables(path, fileio=fileio, catalog=catalog, relocate=relocate,
                         max_blob_size=max_blob_size)
    reports = []
    for walk in tables.walks(snapshot_id=snapshot_id, all_snapshots=all_snapshots,
                             validate=validate, limit=limit, max_blob_size=max_blob_size):
        if isinstance(walk, TableReport):
            reports.append(walk)
            continue
        try:
            for _done in walk.snapshots(progress):
                pass
            reports.append(walk.finish())
        except PuffinError as exc:
            if not tables.warehouse:
                raise
            reports.append(walk.failed(exc))
    return TablesReport(tuple(reports))
