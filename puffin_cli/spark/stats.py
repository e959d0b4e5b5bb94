"""``puffin stats compute``: one Spark job sketches every column of a snapshot's live rows,
the way Iceberg Java's ``compute_table_stats`` does.

Iceberg's aggregate builds an Alpha-family theta sketch per Spark task, fed that task's rows in
order, and unions the partial sketches. An Alpha sketch's theta depends on the order in which
distinct values first arrive, so in estimation mode (more than 4096 distinct values in one
task) the NDV depends on which rows share a task and in what order. To give the same sketches,
the job replays Iceberg's own tasks:

1. plan the snapshot from the table metadata (:mod:`.analysis.stats.plan`) and group its
   data files into Iceberg's task groups (:mod:`.analysis.stats.task_groups`: split offsets, the
   adaptive split size, bin packing with lookback and open-file cost);
2. run one Spark task per task group (:mod:`.analysis.stats.sketch_task`, vectorized with
   pyarrow and numpy): read its splits in order, columns matched by Iceberg field ID, drop the
   rows deleted by deletion vectors, position delete files and equality delete files,
   serialize and hash every value as Iceberg does, and feed an Alpha sketch per column;
3. union the partial sketches per column on the driver (:class:`ThetaAccumulator`, what
   Iceberg's final aggregate does) and write ``<table>/metadata/<snapshot-id>-<uuid>.stats``
   (one zstd blob per column, ``ndv``); with ``commit``, register it.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from puffin_cli.analysis.stats.plan import StatsPlan
from puffin_cli.analysis.stats.result import ColumnStats, StatsResult
from puffin_cli.blobs.theta import MAX_THETA, CompactTheta, ThetaAccumulator
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.spec import CODEC_ZSTD, NDV_PROPERTY, THETA_BLOB_TYPE
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import FileIO, join

Progress = Callable[[int, int], None]  # (completed tasks, total tasks)


@dataclass(frozen=True)
class Sketches:
    """The Spark job's result: one sketch per column (in plan order) and the live row count."""

    sketches: tuple[CompactTheta, ...]
    rows: int


# --- Iceberg's tasks --------------------------------------------------------------------------


def planning_parallelism(spark: Any) -> int:
    """The parallelism Iceberg's Spark scan sizes its splits for (``SparkReadConf``): the
    larger of the default parallelism and ``spark.sql.shuffle.partitions``."""
    shuffle = int(spark.conf.get("spark.sql.shuffle.partitions", "200"))
    return max(int(spark.sparkContext.defaultParallelism), shuffle)


# --- the job ----------------------------------------------------------------------------------


def compute_sketches(spark: Any, plan: StatsPlan, *, uuid_as_string: bool = True,
                     progress: Progress | None = None) -> Sketches:
    """Run the one Spark job: a task per Iceberg task group, then the union of its partial
    sketches per column, as Iceberg's final aggregate does."""
    from puffin_cli.analysis.stats.sketch_task import TaskFailure, run_task, task_specs
    from puffin_cli.analysis.stats.task_groups import plan_task_groups
    from puffin_cli.spark.session import run_with_progress, ship_package
    groups = plan_task_groups(plan, planning_parallelism(spark))
    specs = task_specs(plan, groups, uuid_as_string=uuid_as_string)
    unions = [ThetaAccumulator() for _ in plan.columns]
    if not specs:
        return Sketches(tuple(u.result() for u in unions), 0)
    ship_package(spark)
    sc = spark.sparkContext
    results = run_with_progress(
        spark, lambda: sc.parallelize(specs, len(specs)).map(
            run_task).collect(), progress, "puffin stats compute")
    for result in results:
        if isinstance(result, TaskFailure):
            raise result.error()
        for union, sketch in zip(unions, result.sketches, strict=True):
            union.add(sketch)
    return Sketches(tuple(u.result() for u in unions), sum(r.rows for r in results))


# --- writing ----------------------------------------------------------------------------------


def write_statistics(plan: StatsPlan, sketches: Sketches, *, file_name: str | None = None
                     ) -> tuple[str, str, int, int]:
    """Write the statistics file; (local path, location for the metadata, size, footer)."""
    snapshot = plan.snapshot
    name = file_name or f"{snapshot.snapshot_id}-{uuid.uuid4()}.stats"
    target = join(plan.table.statistics_dir, name)  # metadata/: there, as the table is
    with PuffinWriter(target, fileio=plan.table.fileio) as writer:
        for column, sketch in zip(plan.columns, sketches.sketches, strict=True):
            writer.add_blob(THETA_BLOB_TYPE, sketch.to_bytes(), fields=[column.field_id],
                            snapshot_id=snapshot.snapshot_id,
                            sequence_number=snapshot.sequence_number,
                            properties={NDV_PROPERTY: str(sketch.ndv)}, codec=CODEC_ZSTD)
        result = writer.finish()
    mapper_location = plan.table.statistics_location(name)
    return target, mapper_location, result.file_size, result.footer_size


def column_stats(plan: StatsPlan, sketches: Sketches) -> tuple[ColumnStats, ...]:
    return tuple(
        ColumnStats(c.field_id, c.name, str(c.type), s.ndv, s.estimate, s.retained,
                    s.theta_long >= MAX_THETA, s.theta_long)
        for c, s in zip(plan.columns, sketches.sketches, strict=True))


def compute_table_stats(table: str | os.PathLike[str], *, columns: list[str] | None = None,
                        snapshot_id: int | None = None, master: str | None = None,
                        spark_conf: dict[str, str] | None = None,
                        uuid_as_string: bool = True, commit: bool = False,
                        relocate: list[tuple[str, str]] | None = None,
                        quiet_spark: bool = True,
                        on_phase: Callable[[str], None] | None = None,
                        progress: Progress | None = None,
                        catalog: str | None = None,
                        fileio: FileIO | None = None) -> StatsResult:
    """Plan, sketch, write the statistics file and (with ``commit``) register it. With
    ``catalog``, ``table`` is a table identifier there, and the commit goes through it. The
    table is read with ``fileio`` (the CLI's) and its own FileIO properties on top."""
    from puffin_cli.analysis.stats.plan import plan_snapshot, stats_snapshot
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.spark.session import get_session

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    phase("reading table metadata")
    loaded = Table.load(table, fileio=fileio, relocate=relocate, catalog=catalog)
    snapshot = stats_snapshot(loaded, snapshot_id)
    plan = plan_snapshot(loaded, snapshot, columns)
    if not plan.columns:
        raise PuffinError(f"{table}: no column of a supported primitive type to sketch",
                          code="stats.column")
    phase("starting Spark")
    spark = get_session(master, spark_conf, quiet=quiet_spark)
    phase(f"sketching {len(plan.columns)} columns of {len(plan.data_files)} data files")
    sketching = time.monotonic()
    sketches = compute_sketches(spark, plan, uuid_as_string=uuid_as_string, progress=progress)
    sketch_seconds = time.monotonic() - sketching
    phase("writing the statistics file")
    path, location, size, footer = write_statistics(plan, sketches)
    version = committed = None
    if commit:
        from puffin_cli.analysis.table.commit import commit_statistics
        from puffin_cli.analysis.table.updates import StatisticsFileEntry

        phase("committing")
        entry = StatisticsFileEntry.for_blobs(snapshot.snapshot_id, location, size, footer,
                                              _blob_entries(plan, sketches))
        done = commit_statistics(loaded, entry)
        version, committed = done.version, done.metadata_file
    return StatsResult(
        table=str(table), snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot.sequence_number, schema_id=plan.schema_id,
        columns=column_stats(plan, sketches), skipped_columns=plan.skipped,
        rows_read=sketches.rows, data_files=len(plan.data_files),
        position_delete_files=len(plan.position_deletes),
        deletion_vectors=len(plan.deletion_vectors),
        statistics_path=path,
        statistics_location=location, file_size=size, footer_size=footer,
        seconds=round(time.monotonic() - start, 3), committed_version=version,
        committed_metadata=committed, sketch_seconds=round(sketch_seconds, 3))


def _blob_entries(plan: StatsPlan, sketches: Sketches) -> list[dict[str, Any]]:
    snapshot = plan.snapshot
    return [{"type": THETA_BLOB_TYPE, "snapshot-id": snapshot.snapshot_id,
             "sequence-number": snapshot.sequence_number, "fields": [c.field_id],
             "properties": {NDV_PROPERTY: str(s.ndv)}}
            for c, s in zip(plan.columns, sketches.sketches, strict=True)]
