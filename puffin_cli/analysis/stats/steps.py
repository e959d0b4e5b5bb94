"""The steps of ``puffin stats compute``, each usable alone (no pyspark here):

1. :func:`plan_statistics`: the snapshot, its columns, live files and the deletes that apply
   (:mod:`.plan`); the task groups follow from it and a parallelism (:mod:`.task_groups`).
   This is all a dry run needs.
2. sketching: one task per task group (:mod:`.sketch_task`), the partial sketches unioned per
   column (:func:`union_results`, what Iceberg's final aggregate does): in this process
   (:func:`sketch_groups`) or on Spark, behind one interface (:mod:`.sketcher`);
   :mod:`.pipeline` runs the steps in a row.
3. :func:`write_statistics`: the Puffin file, one zstd theta blob per column with its ``ndv``,
   then the blobs of the snapshot's registered file that no column computed now replaces
   (:mod:`.kept`, copied as stored);
   its blob metadata, built once by the writer, is also what the table's ``statistics`` entry
   lists (:meth:`WrittenStatistics.entry`). The file records how uuid values were hashed in
   the property ``puffin-cli.uuid-hash`` (``text`` or ``bytes``, ``--uuid-hash``), so that a
   later union of its sketches with new ones can check it hashed the same way, and the inputs
   its sketches' task groups were planned with in ``puffin-cli.task-planning``
   (:class:`.task_groups.TaskPlanning`), so that a later refresh replays those groups.
4. :func:`commit_statistics`: registers the file through the one commit path
   (:func:`puffin_cli.analysis.table.commit.commit_statistics`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from puffin_cli.analysis.stats.kept import UUID_HASH_PROPERTY as UUID_HASH_PROPERTY
from puffin_cli.analysis.stats.kept import KeptBlobs, OtherColumn
from puffin_cli.analysis.stats.options import UuidHash
from puffin_cli.analysis.stats.plan import StatsPlan, plan_snapshot, stats_snapshot
from puffin_cli.analysis.stats.result import ColumnStats
from puffin_cli.blobs.theta import MAX_THETA, CompactTheta, ThetaAccumulator
from puffin_cli.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.spec import CODEC_ZSTD, NDV_PROPERTY, THETA_BLOB_TYPE
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import join

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.sketch_task import TaskFailure, TaskResult
    from puffin_cli.analysis.stats.task_groups import TaskGroup, TaskPlanning
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.analysis.table.updates import CommitResult, StatisticsFileEntry

Progress = Callable[[int, int], None]  # (completed tasks, total tasks)


@dataclass(frozen=True)
class Sketches:
    """The sketching step's result: one sketch per column (in plan order) and the live row
    count."""

    sketches: tuple[CompactTheta, ...]
    rows: int


@dataclass(frozen=True)
class WrittenStatistics:
    """A statistics file written for ``snapshot_id``: ``path`` the file written, ``location``
    how the table metadata names it, ``blobs`` its footer's blob metadata."""

    snapshot_id: int
    path: str
    location: str
    file_size: int
    footer_size: int
    blobs: tuple[BlobMetadata, ...]
    in_table: bool = True  # in the table's metadata folder, where a commit registers it
    # the registered file whose other columns were kept (None: none; "any": not looked at)
    based_on: str | Literal["any"] | None = "any"
    others: tuple[OtherColumn, ...] = ()  # what became of the other columns' blobs

    def entry(self) -> StatisticsFileEntry:
        """The table metadata's ``statistics`` entry for the file."""
        from puffin_cli.analysis.table.updates import StatisticsFileEntry

        return StatisticsFileEntry.for_blobs(
            self.snapshot_id, self.location, self.file_size, self.footer_size,
            [{"type": b.type, "snapshot-id": b.snapshot_id,
              "sequence-number": b.sequence_number, "fields": list(b.fields),
              "properties": dict(b.properties)} for b in self.blobs])


def plan_statistics(table: Table, snapshot_id: int | None,
                    columns: list[str] | None) -> StatsPlan:
    """The plan of ``snapshot_id`` (the current snapshot for ``None``); an error when no
    column can be sketched."""
    plan = plan_snapshot(table, stats_snapshot(table, snapshot_id), columns)
    if not plan.columns:
        raise PuffinError("no column of a supported primitive type to sketch",
                          code="stats.column", path=str(table.table_dir))
    return plan


def union_results(plan: StatsPlan, results: Iterable[TaskResult | TaskFailure]) -> Sketches:
    """The tasks' partial sketches unioned per column, as Iceberg's final aggregate does (the
    first failed task's error raised)."""
    from puffin_cli.analysis.stats.sketch_task import TaskFailure

    unions = [ThetaAccumulator() for _ in plan.columns]
    rows = 0
    for result in results:
        if isinstance(result, TaskFailure):
            raise result.error()
        for union, sketch in zip(unions, result.sketches, strict=True):
            union.add(sketch)
        rows += result.rows
    return Sketches(tuple(u.result() for u in unions), rows)


def sketch_groups(plan: StatsPlan, groups: Sequence[TaskGroup], *,
                  uuid_hash: UuidHash = UuidHash.TEXT,
                  progress: Progress | None = None) -> Sketches:
    """The sketches of ``groups`` (some of the plan's task groups), one task after another in
    this process (``progress`` told the tasks done)."""
    from puffin_cli.analysis.stats.sketch_task import run_task, task_specs

    specs = task_specs(plan, groups, uuid_hash=uuid_hash)

    def results() -> Iterator[TaskResult | TaskFailure]:
        for done, spec in enumerate(specs):
            if progress is not None:
                progress(done, len(specs))
            yield run_task(spec)
        if progress is not None:
            progress(len(specs), len(specs))

    return union_results(plan, results())


def statistics_file_name(snapshot_id: int) -> str:
    """A new statistics file's name, as Iceberg names them: ``<snapshot-id>-<uuid>.stats``."""
    return f"{snapshot_id}-{uuid.uuid4()}.stats"


def write_statistics(plan: StatsPlan, sketches: Sketches, *, planning: TaskPlanning,
                     uuid_hash: UuidHash = UuidHash.TEXT, target: str | None = None,
                     kept: KeptBlobs | None = None) -> WrittenStatistics:
    """Write the statistics file at ``target`` or, by default, where a commit registers it:
    ``<table>/metadata/<snapshot-id>-<uuid>.stats``. The sketches come first, then the
    ``kept`` blobs of the snapshot's registered file (:mod:`.kept`), copied as stored.
    ``planning`` is what the sketches' task groups were planned with."""
    from puffin_cli.analysis.stats.task_groups import TASK_PLANNING_PROPERTY

    snapshot = plan.snapshot
    in_table = target is None
    name = statistics_file_name(snapshot.snapshot_id)
    path = join(plan.table.statistics_dir, name) if target is None else target
    others: tuple[OtherColumn, ...] = ()
    properties = {UUID_HASH_PROPERTY: uuid_hash.value,
                  TASK_PLANNING_PROPERTY: planning.to_property()}
    with PuffinWriter(path, properties=properties, fileio=plan.table.fileio) as writer:
        for column, sketch in zip(plan.columns, sketches.sketches, strict=True):
            writer.add_blob(THETA_BLOB_TYPE, sketch.to_bytes(), fields=[column.field_id],
                            snapshot_id=snapshot.snapshot_id,
                            sequence_number=snapshot.sequence_number,
                            properties={NDV_PROPERTY: str(sketch.ndv)}, codec=CODEC_ZSTD)
        if kept is not None:
            others = kept.copy_into(writer, plan)
        result = writer.finish()
    location = plan.table.statistics_location(name) if in_table else path
    return WrittenStatistics(snapshot.snapshot_id, path, location, result.file_size,
                             result.footer_size, result.metadata.blobs, in_table,
                             "any" if kept is None else kept.source, others)


def commit_statistics(plan: StatsPlan, written: WrittenStatistics) -> CommitResult:
    """Register ``written`` in a new version of the plan's table (the one commit path); the
    file is removed when the commit fails, and refused when another writer registered other
    statistics for the snapshot since the file's kept blobs were read."""
    from puffin_cli.analysis.table.commit import commit_statistics as commit

    return commit(plan.table, written.entry(), written=[written.path],
                  based_on=written.based_on)


def column_stats(plan: StatsPlan, sketches: Sketches) -> tuple[ColumnStats, ...]:
    """What the result shows of each column's sketch."""
    return tuple(
        ColumnStats(c.field_id, c.name, str(c.type), s.ndv, s.estimate, s.retained,
                    s.theta_long >= MAX_THETA, s.theta_long)
        for c, s in zip(plan.columns, sketches.sketches, strict=True))
