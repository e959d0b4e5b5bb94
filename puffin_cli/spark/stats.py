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
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.plan import StatsPlan
from puffin_cli.analysis.stats.result import StatsResult
from puffin_cli.analysis.stats.steps import Sketches
from puffin_cli.format.text import plural

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.batch import StatsBatchResult, TableOutcome, TableTarget
    from puffin_cli.analysis.stats.kept import OtherColumn
    from puffin_cli.analysis.stats.task_groups import TaskGroup
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.storage import FileIO

Progress = Callable[[int, int], None]  # (completed tasks, total tasks)
# An increment of at most this many rows (record counts of the new data files) is sketched in
# this process, without starting Spark (--in-process-rows).
IN_PROCESS_ROWS = 1_000_000


# --- Iceberg's tasks --------------------------------------------------------------------------


def planning_parallelism(spark: Any) -> int:
    """The parallelism Iceberg's Spark scan sizes its splits for (``SparkReadConf``): the
    larger of the default parallelism and ``spark.sql.shuffle.partitions``."""
    shuffle = int(spark.conf.get("spark.sql.shuffle.partitions", "200"))
    return max(int(spark.sparkContext.defaultParallelism), shuffle)


# --- the job ----------------------------------------------------------------------------------


def compute_sketches(spark: Any, plan: StatsPlan, *, uuid_as_string: bool = True,
                     progress: Progress | None = None,
                     groups: Sequence[TaskGroup] | None = None) -> Sketches:
    """The sketching step as one Spark job: a task per Iceberg task group (``groups``, by
    default all of the plan's), then the union of its partial sketches per column, as
    Iceberg's final aggregate does."""
    from puffin_cli.analysis.stats.sketch_task import run_task, task_specs
    from puffin_cli.analysis.stats.steps import union_results
    from puffin_cli.analysis.stats.task_groups import plan_task_groups
    from puffin_cli.spark.session import run_with_progress, ship_package
    if groups is None:
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


def local_parallelism(master: str | None, spark_conf: dict[str, str] | None) -> int | None:
    """The parallelism Iceberg's scan would plan for in a new session on ``master``, known
    without starting Spark: ``local``, ``local[N]`` and ``local[*]`` (the default) have
    ``N`` (the cores) as default parallelism, and ``spark.sql.shuffle.partitions`` is the
    ``--conf`` value or Spark's 200. ``None`` for a cluster, or a running session
    (spark-submit), whose parallelism only Spark knows."""
    import sys

    if "pyspark" in sys.modules:
        from pyspark.sql import SparkSession

        if SparkSession.getActiveSession() is not None:
            return None
    found = re.fullmatch(r"local(?:\[(\*|[0-9]+)(?:,[0-9]+)?\])?", master or "local[*]")
    if found is None:
        return None
    cores = found.group(1)
    default = 1 if cores is None else (os.cpu_count() or 1) if cores == "*" else int(cores)
    shuffle = (spark_conf or {}).get("spark.sql.shuffle.partitions", "200")
    return max(default, int(shuffle)) if shuffle.isdigit() else None


# --- the command ------------------------------------------------------------------------------


class LazySession:
    """The Spark session of a run: started (or the active one joined) the first time a table
    needs it, then shared by every table of the run; never started when none does."""

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

    def parallelism(self) -> int:
        """Iceberg's planning parallelism: the running session's, else the one a new
        session would have when that is known without starting it (local masters), else
        the session's, started for it."""
        known = None if self.started else local_parallelism(self.master, self.conf)
        return planning_parallelism(self()) if known is None else known


def compute_loaded(table: Table, label: str, spark: LazySession, *,
                   columns: list[str] | None = None, snapshot_id: int | None = None,
                   uuid_as_string: bool = True, commit: bool = False,
                   output: str | Callable[[int], str] | None = None,
                   on_phase: Callable[[str], None] | None = None,
                   progress: Progress | None = None, full: bool = False,
                   in_process_rows: int = IN_PROCESS_ROWS) -> StatsResult:
    """One table's steps in a row: decide
    (:func:`~puffin_cli.analysis.stats.incremental.decide_refresh`: fresh, incremental or
    full; ``full`` forces a full compute), sketch (an increment of at most
    ``in_process_rows`` rows in this process, else on ``spark``), write the statistics file
    (at ``output``, a path or a function of the snapshot ID giving it; by default in the
    table's metadata folder, where ``commit`` registers it) with the other columns of the
    snapshot's registered file kept (:mod:`~puffin_cli.analysis.stats.kept`), and commit. A
    snapshot whose statistics are fresh is left as it is (nothing written). A commit that
    cannot succeed is refused before any work."""
    from puffin_cli.analysis.stats import steps
    from puffin_cli.analysis.stats.incremental import FRESH, INCREMENTAL, decide_refresh
    from puffin_cli.analysis.stats.incremental import refresh_sketches as refresh
    from puffin_cli.analysis.stats.kept import kept_blobs
    from puffin_cli.analysis.table.commit import check_committable

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    if commit:
        check_committable(table)
    uuid_hash = "text" if uuid_as_string else "bytes"
    known = spark.parallelism()
    decision = decide_refresh(table, snapshot_id, columns, full=full, parallelism=known,
                              uuid_hash=uuid_hash)
    plan = decision.plan
    in_process = decision.mode == INCREMENTAL and decision.new_rows <= in_process_rows
    if decision.mode != FRESH and not in_process:
        parallelism = planning_parallelism(spark())
        if parallelism != known:  # a running session: its own parallelism decides
            decision = decide_refresh(table, snapshot_id, columns, full=full,
                                      parallelism=parallelism, uuid_hash=uuid_hash)
            plan = decision.plan

    def sketch(part: StatsPlan, groups: Sequence[TaskGroup]) -> Sketches:
        if in_process:
            return steps.sketch_groups(part, groups, uuid_as_string=uuid_as_string)
        return compute_sketches(spark(), part, uuid_as_string=uuid_as_string,
                                progress=progress, groups=groups)

    if decision.mode != FRESH:
        where = "in this process" if in_process else "on Spark"
        phase(f"sketching {plural(len(plan.columns), 'column')} ({decision.mode}) {where}")
    sketching = time.monotonic()
    done = refresh(decision, sketch)
    sketch_seconds = time.monotonic() - sketching
    sketches = done.sketches
    version = committed = None
    kept_from: str | None = None
    others: tuple[OtherColumn, ...] = ()
    in_table = True
    if decision.mode == FRESH:
        existing = next(e for e in table.metadata.statistics
                        if e.snapshot_id == plan.snapshot.snapshot_id
                        and e.path == decision.columns[0].base_file)
        path, location = table.resolve(existing.path), existing.path
        file_size, footer_size = existing.file_size, existing.footer_size
    else:
        phase("writing the statistics file")
        kept = kept_blobs(plan, uuid_hash)
        target = output(plan.snapshot.snapshot_id) if callable(output) else output
        written = steps.write_statistics(plan, sketches, planning=decision.planning,
                                         uuid_as_string=uuid_as_string, target=target,
                                         kept=kept)
        path, location = written.path, written.location
        file_size, footer_size = written.file_size, written.footer_size
        kept_from, others, in_table = kept.source, written.others, written.in_table
        if commit:
            phase("committing")
            result = steps.commit_statistics(plan, written)
            version, committed = result.version, result.metadata_file
    snapshot = plan.snapshot
    bases = {c.base_snapshot_id for c in decision.columns if c.mode == decision.mode}
    columns_out = tuple(
        replace(stats, mode=c.mode, base_snapshot_id=c.base_snapshot_id, mode_reason=c.reason)
        for stats, c in zip(steps.column_stats(plan, sketches), decision.columns, strict=True))
    return StatsResult(
        table=label, snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot.sequence_number, schema_id=plan.schema_id,
        columns=columns_out, skipped_columns=plan.skipped,
        rows_read=sketches.rows, data_files=len(plan.data_files),
        position_delete_files=len(plan.position_deletes),
        deletion_vectors=len(plan.deletion_vectors),
        statistics_path=path, statistics_location=location, file_size=file_size,
        footer_size=footer_size,
        seconds=round(time.monotonic() - start, 3), committed_version=version,
        committed_metadata=committed, sketch_seconds=round(sketch_seconds, 3),
        mode=decision.mode, base_snapshot_id=bases.pop() if len(bases) == 1 else None,
        mode_reason=decision.reason, files_read=done.files_read,
        in_process=in_process, in_table=in_table, kept_from=kept_from,
        other_columns=others)


def compute_table_stats(table: str | os.PathLike[str], *, columns: list[str] | None = None,
                        snapshot_id: int | None = None, master: str | None = None,
                        spark_conf: dict[str, str] | None = None,
                        uuid_as_string: bool = True, commit: bool = False,
                        relocate: list[tuple[str, str]] | None = None,
                        quiet_spark: bool = True,
                        on_phase: Callable[[str], None] | None = None,
                        progress: Progress | None = None,
                        catalog: str | None = None,
                        fileio: FileIO, full: bool = False,
                        in_process_rows: int = IN_PROCESS_ROWS,
                        output: str | Callable[[int], str] | None = None) -> StatsResult:
    """:func:`compute_loaded` for one table: ``table`` is a table directory or metadata file,
    or with ``catalog`` a table identifier there (the commit then goes through it). The table
    is read with ``fileio`` (the CLI's) and its own FileIO properties on top."""
    from puffin_cli.analysis.table.loading import Table

    phase = on_phase or (lambda _text: None)
    phase("reading table metadata")
    loaded = Table.load(table, fileio=fileio, relocate=relocate, catalog=catalog)
    spark = LazySession(master, spark_conf, quiet=quiet_spark, on_phase=phase)
    return compute_loaded(loaded, str(table), spark, columns=columns, snapshot_id=snapshot_id,
                          uuid_as_string=uuid_as_string, commit=commit, output=output,
                          on_phase=phase, progress=progress, full=full,
                          in_process_rows=in_process_rows)


def compute_tables(targets: Sequence[TableTarget], *, catalog: str | None = None,
                   columns: list[str] | None = None, master: str | None = None,
                   spark_conf: dict[str, str] | None = None, uuid_as_string: bool = True,
                   commit: bool = False, output: Callable[[str, int], str] | None = None,
                   quiet_spark: bool = True, on_phase: Callable[[str], None] | None = None,
                   progress: Progress | None = None, full: bool = False,
                   in_process_rows: int = IN_PROCESS_ROWS,
                   on_done: Callable[[TableOutcome], None] | None = None) -> StatsBatchResult:
    """``stats compute`` over many tables in one Spark session (started only when a table
    needs it): each table as :func:`compute_loaded` does it (``output(label, snapshot_id)``
    the file's path without ``commit``); a table that fails does not stop the others."""
    from puffin_cli.analysis.stats import batch

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    spark = LazySession(master, spark_conf, quiet=quiet_spark, on_phase=phase)
    done = 0

    def each(table: Table, label: str) -> batch.TableOutcome:
        nonlocal done
        done += 1
        where = f"[{done}/{len(targets)}] {label}"
        phase(f"{where}: reading table metadata")
        result = compute_loaded(
            table, label, spark, columns=columns, uuid_as_string=uuid_as_string,
            commit=commit, output=None if output is None else partial(output, label),
            on_phase=lambda text: phase(f"{where}: {text}"), progress=progress, full=full,
            in_process_rows=in_process_rows)
        status = batch.FRESH_STATUS if result.mode == "fresh" else batch.COMPUTED
        return batch.TableOutcome(label, status, result.seconds, result=result)

    outcomes = batch.run_tables(targets, each, on_done or (lambda _outcome: None))
    return batch.batch_result(catalog, outcomes, dry_run=False, commit=commit,
                              seconds=time.monotonic() - start, spark_started=spark.started)
