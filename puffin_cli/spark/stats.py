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
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.plan import StatsPlan
from puffin_cli.analysis.stats.result import StatsResult
from puffin_cli.analysis.stats.steps import Sketches

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.batch import StatsBatchResult, TableOutcome, TableTarget
    from puffin_cli.analysis.table.loading import Table
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


class LazySession:
    """The Spark session of a run: started (or the active one joined) the first time a table
    needs it, then shared by every table; never started when none does."""

    def __init__(self, master: str | None, conf: dict[str, str] | None, *, quiet: bool,
                 on_phase: Callable[[str], None]) -> None:
        self.master, self.conf, self.quiet, self.on_phase = master, conf, quiet, on_phase
        self.session: Any = None

    def __call__(self) -> Any:
        if self.session is None:
            from puffin_cli.spark.session import get_session

            self.on_phase("starting Spark")
            self.session = get_session(self.master, self.conf, quiet=self.quiet)
        return self.session

    @property
    def started(self) -> bool:
        return self.session is not None


def compute_loaded(table: Table, label: str, spark: LazySession, *,
                   columns: list[str] | None = None, snapshot_id: int | None = None,
                   uuid_as_string: bool = True, commit: bool = False,
                   output: str | Callable[[int], str] | None = None,
                   on_phase: Callable[[str], None] | None = None,
                   progress: Progress | None = None) -> StatsResult:
    """One table's steps in a row: plan, sketch on ``spark``, write the statistics file (at
    ``output``, else in the table's metadata folder, where ``commit`` registers it) keeping
    the other columns of the snapshot's registered file, and commit. ``output`` is a path, or
    gives it for the snapshot's ID. A commit that cannot succeed is refused before any
    work."""
    from puffin_cli.analysis.stats import steps
    from puffin_cli.analysis.stats.kept import kept_blobs
    from puffin_cli.analysis.table.commit import check_committable

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    if commit:
        check_committable(table)
    plan = steps.plan_statistics(table, snapshot_id, columns)
    kept = kept_blobs(plan, "text" if uuid_as_string else "bytes")
    session = spark()
    phase(f"sketching {len(plan.columns)} columns of {len(plan.data_files)} data files")
    sketching = time.monotonic()
    sketches = compute_sketches(session, plan, uuid_as_string=uuid_as_string, progress=progress)
    sketch_seconds = time.monotonic() - sketching
    phase("writing the statistics file")
    target = output(plan.snapshot.snapshot_id) if callable(output) else output
    written = steps.write_statistics(plan, sketches, uuid_as_string=uuid_as_string,
                                     target=target, kept=kept)
    version = committed = None
    if commit:
        phase("committing")
        done = steps.commit_statistics(plan, written)
        version, committed = done.version, done.metadata_file
    snapshot = plan.snapshot
    return StatsResult(
        table=label, snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot.sequence_number, schema_id=plan.schema_id,
        columns=steps.column_stats(plan, sketches), skipped_columns=plan.skipped,
        rows_read=sketches.rows, data_files=len(plan.data_files),
        position_delete_files=len(plan.position_deletes),
        deletion_vectors=len(plan.deletion_vectors),
        statistics_path=written.path,
        statistics_location=written.location, file_size=written.file_size,
        footer_size=written.footer_size,
        seconds=round(time.monotonic() - start, 3), committed_version=version,
        committed_metadata=committed, sketch_seconds=round(sketch_seconds, 3),
        in_table=written.in_table, kept_from=kept.source, other_columns=written.others)


def compute_table_stats(table: str | os.PathLike[str], *, columns: list[str] | None = None,
                        snapshot_id: int | None = None, master: str | None = None,
                        spark_conf: dict[str, str] | None = None,
                        uuid_as_string: bool = True, commit: bool = False,
                        relocate: list[tuple[str, str]] | None = None,
                        quiet_spark: bool = True,
                        on_phase: Callable[[str], None] | None = None,
                        progress: Progress | None = None,
                        catalog: str | None = None,
                        fileio: FileIO | None = None,
                        output: str | Callable[[int], str] | None = None) -> StatsResult:
    """The steps in a row for one table: plan, sketch on Spark, write the statistics file
    (at ``output``, else in the table's metadata folder) and (with ``commit``) register it.
    With ``catalog``, ``table`` is a table identifier there, and the commit goes through it.
    The table is read with ``fileio`` (the CLI's) and its own FileIO properties on top."""
    from puffin_cli.analysis.table.loading import Table

    phase = on_phase or (lambda _text: None)
    phase("reading table metadata")
    loaded = Table.load(table, fileio=fileio, relocate=relocate, catalog=catalog)
    spark = LazySession(master, spark_conf, quiet=quiet_spark, on_phase=phase)
    return compute_loaded(loaded, str(table), spark, columns=columns, snapshot_id=snapshot_id,
                          uuid_as_string=uuid_as_string, commit=commit, output=output,
                          on_phase=phase, progress=progress)


def compute_tables(targets: Sequence[TableTarget], *, catalog: str | None = None,
                   columns: list[str] | None = None, master: str | None = None,
                   spark_conf: dict[str, str] | None = None, uuid_as_string: bool = True,
                   commit: bool = False, output: Callable[[str, int], str] | None = None,
                   quiet_spark: bool = True, on_phase: Callable[[str], None] | None = None,
                   progress: Progress | None = None,
                   on_done: Callable[[TableOutcome], None] | None = None) -> StatsBatchResult:
    """``stats compute`` over many tables in one Spark session (started only when a table
    needs it): each table's snapshot that already has statistics for every column is left
    as it is (``fresh``), the others computed (``output(label, snapshot_id)`` the file's path
    without ``commit``); a table that fails does not stop the others."""
    from puffin_cli.analysis.stats import batch
    from puffin_cli.analysis.stats.incremental import FRESH, decide_refresh
    from puffin_cli.analysis.table.commit import check_committable

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    spark = LazySession(master, spark_conf, quiet=quiet_spark, on_phase=phase)
    uuid_hash = "text" if uuid_as_string else "bytes"
    parallelism = batch.session_parallelism(master, spark_conf or {})
    done = 0

    def each(table: Table, label: str) -> batch.TableOutcome:
        nonlocal done
        done += 1
        where = f"[{done}/{len(targets)}] {label}"
        phase(f"{where}: reading table metadata")
        if commit:
            check_committable(table)
        decision = decide_refresh(table, None, columns, parallelism=parallelism,
                                  uuid_hash=uuid_hash)
        if decision.mode == FRESH:
            return batch.TableOutcome(label, batch.FRESH_STATUS, 0.0,
                                      plan=batch.refresh_plan(decision))
        result = compute_loaded(
            table, label, spark, columns=columns, uuid_as_string=uuid_as_string,
            commit=commit, output=None if output is None else partial(output, label),
            on_phase=lambda text: phase(f"{where}: {text}"), progress=progress)
        return batch.TableOutcome(label, batch.COMPUTED, result.seconds, result=result)

    outcomes = batch.run_tables(targets, each, on_done or (lambda _outcome: None))
    return batch.batch_result(catalog, outcomes, dry_run=False, commit=commit,
                              seconds=time.monotonic() - start, spark_started=spark.started)
