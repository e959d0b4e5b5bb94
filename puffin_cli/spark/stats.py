"""``puffin stats compute`` on Spark: the sketching step runs as one Spark job, the way Iceberg
Java's ``compute_table_stats`` does; the other steps (plan, write, commit) are
:mod:`puffin_cli.analysis.stats.steps`.

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
3. union the partial sketches per column on the driver (what Iceberg's final aggregate does)
   and write ``<table>/metadata/<snapshot-id>-<uuid>.stats`` (one zstd blob per column,
   ``ndv``); with ``commit``, register it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.plan import StatsPlan
from puffin_cli.analysis.stats.result import StatsResult
from puffin_cli.analysis.stats.steps import Sketches

if TYPE_CHECKING:
    from puffin_cli.storage import FileIO

Progress = Callable[[int, int], None]  # (completed tasks, total tasks)


# --- Iceberg's tasks --------------------------------------------------------------------------


def planning_parallelism(spark: Any) -> int:
    """The parallelism Iceberg's Spark scan sizes its splits for (``SparkReadConf``): the
    larger of the default parallelism and ``spark.sql.shuffle.partitions``."""
    shuffle = int(spark.conf.get("spark.sql.shuffle.partitions", "200"))
    return max(int(spark.sparkContext.defaultParallelism), shuffle)


# --- the job ----------------------------------------------------------------------------------


def compute_sketches(spark: Any, plan: StatsPlan, *, uuid_as_string: bool = True,
                     progress: Progress | None = None) -> Sketches:
    """The sketching step as one Spark job: a task per Iceberg task group, then the union of
    its partial sketches per column, as Iceberg's final aggregate does."""
    from puffin_cli.analysis.stats.sketch_task import run_task, task_specs
    from puffin_cli.analysis.stats.steps import union_results
    from puffin_cli.analysis.stats.task_groups import plan_task_groups
    from puffin_cli.spark.session import run_with_progress, ship_package
    groups = plan_task_groups(plan, planning_parallelism(spark))
    specs = task_specs(plan, groups, uuid_as_string=uuid_as_string)
    if not specs:
        return union_results(plan, ())
    ship_package(spark)
    sc = spark.sparkContext
    results = run_with_progress(
        spark, lambda: sc.parallelize(specs, len(specs)).map(
            run_task).collect(), progress, "puffin stats compute")
    return union_results(plan, results)


# --- the command ------------------------------------------------------------------------------


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
    """The steps in a row: plan, sketch on Spark, write the statistics file and (with
    ``commit``) register it. With ``catalog``, ``table`` is a table identifier there, and the
    commit goes through it. The table is read with ``fileio`` (the CLI's) and its own FileIO
    properties on top."""
    from puffin_cli.analysis.stats import steps
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.spark.session import get_session

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    phase("reading table metadata")
    plan = steps.plan_statistics(
        Table.load(table, fileio=fileio, relocate=relocate, catalog=catalog), snapshot_id,
        columns)
    phase("starting Spark")
    spark = get_session(master, spark_conf, quiet=quiet_spark)
    phase(f"sketching {len(plan.columns)} columns of {len(plan.data_files)} data files")
    sketching = time.monotonic()
    sketches = compute_sketches(spark, plan, uuid_as_string=uuid_as_string, progress=progress)
    sketch_seconds = time.monotonic() - sketching
    phase("writing the statistics file")
    written = steps.write_statistics(plan, sketches, uuid_as_string=uuid_as_string)
    version = committed = None
    if commit:
        phase("committing")
        done = steps.commit_statistics(plan, written)
        version, committed = done.version, done.metadata_file
    snapshot = plan.snapshot
    return StatsResult(
        table=str(table), snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot.sequence_number, schema_id=plan.schema_id,
        columns=steps.column_stats(plan, sketches), skipped_columns=plan.skipped,
        rows_read=sketches.rows, data_files=len(plan.data_files),
        position_delete_files=len(plan.position_deletes),
        deletion_vectors=len(plan.deletion_vectors),
        statistics_path=written.path,
        statistics_location=written.location, file_size=written.file_size,
        footer_size=written.footer_size,
        seconds=round(time.monotonic() - start, 3), committed_version=version,
        committed_metadata=committed, sketch_seconds=round(sketch_seconds, 3))
