"""``puffin stats compute``: NDV statistics of an Iceberg table, computed with Spark."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import click

from puffin_cli.analysis.stats.options import (
    IN_PROCESS_ROWS,
    SketcherChoice,
    StatsOptions,
    UuidHash,
)
from puffin_cli.cli.exit_codes import EXIT_BAD_FILE, EXIT_OK
from puffin_cli.cli.grammar import Group, emit, renamed_flag, settings
from puffin_cli.cli.options import (
    catalog_option,
    io_option,
    json_option,
    quiet_option,
    relocate_option,
    snapshot_option,
    spark_conf_option,
    uuid_hash_option,
)

if TYPE_CHECKING:
    from puffin_cli.analysis.stats import batch
    from puffin_cli.analysis.stats.batch import TableOutcome, TableTarget
    from puffin_cli.analysis.stats.pipeline import Output
    from puffin_cli.analysis.stats.result import StatsResult
    from puffin_cli.analysis.stats.sketcher import Planning
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.storage import FileInfo


@click.group("stats", cls=Group,
             short_help="Table statistics: small tables in this process, others on Spark.")
def stats() -> None:
    """Table statistics, as Iceberg's Spark procedure computes them: small work runs in this
    process (no JVM), large work on Apache Spark (the `spark` extra: pyspark 4.1+)."""


def _columns(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("give column names separated by commas", param_hint="--columns")
    return names


def _one_table(catalog: str | None, targets: tuple[str, ...], every: bool) -> bool:
    """One TABLE (today's result) or many (the run's result): one name that is a table (a
    path, or with --catalog a table of the catalog) is one table; several names, --all, or a
    catalog name that is no table (a namespace) are many."""
    if every or len(targets) != 1:
        return False
    return catalog is None or _is_catalog_table(catalog, targets[0])


def _is_catalog_table(catalog: str, name: str) -> bool:
    from puffin_cli.analysis.catalog import load_table
    from puffin_cli.errors import PuffinError

    try:
        load_table(catalog, name)
    except PuffinError as exc:
        if exc.code in ("catalog.no-table", "catalog.identifier"):
            return False
        raise
    return True


def _target(catalog: str | None, name: str, relocate: list[tuple[str, str]],
            label: str | None = None) -> TableTarget:
    """A table of the run: a path, or with ``catalog`` an identifier there."""
    from puffin_cli.analysis.stats.batch import TableTarget
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.storage import default_io

    return TableTarget(name if label is None else label, partial(
        Table.load, name, catalog=catalog, fileio=default_io(), relocate=relocate))


def _targets(catalog: str | None, names: tuple[str, ...], relocate: list[tuple[str, str]]
             ) -> list[TableTarget]:
    from puffin_cli.storage import name_of

    if catalog is None:
        return [_target(None, n, relocate, name_of(n.rstrip("/")) or n) for n in names]
    from puffin_cli.analysis.catalog import table_names

    return [_target(catalog, n, relocate) for n in table_names(catalog, names)]


@stats.command("compute", renamed={"--uuid-as-bytes": renamed_flag("--uuid-hash", "bytes")})
@click.argument("targets", metavar="TABLE...", nargs=-1)
@click.option("--columns", metavar="A,B", default=None,
              help="Columns to sketch (default: every top-level column of primitive type).")
@snapshot_option("Snapshot to compute statistics for (default: the current one).")
@click.option("--commit", is_flag=True,
              help="Register the statistics file in a new table metadata version (through "
                   "the catalog with --catalog, else the file-system table protocol), "
                   "replacing older statistics of that snapshot (their other columns kept).")
@click.option("-o", "--output", default=None, metavar="PATH",
              help="Without --commit: write the statistics file to PATH, a new file or an "
                   "existing directory or an object store prefix ending in / (several "
                   "tables: a directory), not registered (default: the current directory).")
@click.option("--all", "every", is_flag=True,
              help="With --catalog: every table of every namespace of the catalog.")
@click.option("--dry-run", is_flag=True,
              help="Show the plan (per table: fresh, incremental from which snapshot or full, "
                   "what it reads, and in this process or on Spark and why) from the table's "
                   "metadata, manifests and statistics files; start no Spark, write nothing.")
@click.option("--full", is_flag=True,
              help="Read the whole snapshot, even when its statistics are fresh or an "
                   "ancestor's sketches could be extended (the default: incremental).")
@click.option("--in-process", is_flag=True,
              help="Sketch in this process whatever the size (no JVM started).")
@click.option("--spark", "on_spark", is_flag=True,
              help="Sketch on Spark whatever the size.")
@click.option("--in-process-rows", type=click.IntRange(min=0), default=None, metavar="N",
              help="Without --spark or --in-process: sketch work of at most N rows to read "
                   f"in this process, larger work on Spark (default {IN_PROCESS_ROWS}; 0: "
                   "always Spark).")
@click.option("--master", default=None, metavar="URL",
              help="Spark master (default local[*]; ignored under spark-submit).")
@click.option("--partition-stats", is_flag=True,
              help="Compute the snapshot's partition statistics file instead (Parquet, one "
                   "row per partition, from the manifests alone, in this process; "
                   "incremental from an ancestor's file as Iceberg does); one TABLE.")
@uuid_hash_option
@spark_conf_option
@relocate_option
@catalog_option
@quiet_option
@json_option
@io_option
@click.pass_context
def compute(ctx: click.Context, targets: tuple[str, ...], columns: str | None,
            snapshot_id: int | None, commit: bool, output: str | None, every: bool,
            dry_run: bool, full: bool, in_process: bool, on_spark: bool,
            in_process_rows: int | None, master: str | None, partition_stats: bool,
            uuid_hash: str, spark_conf: dict[str, str], relocate: list[tuple[str, str]],
            catalog: str | None, quiet: bool, as_json: bool) -> None:
    """Compute Theta-sketch NDV statistics of TABLE, as Iceberg's compute_table_stats does.

    TABLE is a table directory or a *.metadata.json file; with --catalog, a table identifier
    NAMESPACE.TABLE of that catalog (and --commit commits through the catalog). Reads the
    snapshot's live rows (position delete files, deletion vectors and equality deletes
    applied) in Iceberg's Spark tasks, matching columns by field ID, and writes a statistics
    file: one
    zstd-compressed apache-datasketches-theta-v1 blob per column with its `ndv`, plus the
    other columns' blobs of the snapshot's statistics file (kept, not lost). With --commit it
    is written to TABLE/metadata/<snapshot-id>-<uuid>.stats and registered (a table that
    cannot be committed to is refused before any work; a failed commit leaves no file);
    without, to -o PATH or the current directory, and no engine uses it. The file a commit
    replaces is deleted when no other entry names it.

    Small work runs in this process, no JVM: a full compute or an increment that reads at
    most --in-process-rows rows (and 512 MiB of data files); larger work on Spark (one
    session for the run, started only when a table needs it). --in-process and --spark
    choose one whatever the size; both give the same bytes.

    Many tables in one run: several TABLEs, or with --catalog a NAMESPACE (a name
    that is not a table of the catalog: every table in it and below it) or --all. A table
    whose snapshot already has statistics of every column is left as it is, one without a
    snapshot (never written) has nothing to compute (an error when named alone); one line
    per table, a summary, exit 1 when any table failed (the others are done).

    Incremental by default: when an ancestor snapshot has statistics and only appends
    followed (Iceberg's tasks unchanged), only the new data files are sketched and unioned
    with its sketches, which gives the same bytes as a full compute; a snapshot whose
    statistics are already there is left as it is. --full reads everything.

    \b
    Examples:
      puffin stats compute warehouse/db/orders --commit
      puffin stats compute warehouse/db/orders --columns id,customer -o orders.stats
      puffin stats compute warehouse/db/orders --master spark://host:7077 --json
      puffin stats compute --catalog prod sales.orders --commit
      puffin stats compute --catalog prod sales --dry-run
      puffin stats compute --catalog prod sales marketing --commit
    """
    if every and (catalog is None or targets):
        raise click.UsageError("--all takes no TABLE and needs --catalog NAME")
    if not targets and not every:
        raise click.UsageError("name a TABLE (or with --catalog a NAMESPACE, or --all)")
    if output is not None and commit:
        raise click.UsageError("-o writes an unregistered file; --commit writes it in the "
                               "table's metadata folder: give one of them")
    if in_process and on_spark:
        raise click.UsageError("--in-process and --spark each choose the sketcher: give one")
    debug = settings(ctx).debug
    from puffin_cli.render.progress import ProgressDisplay

    if dry_run and snapshot_id is not None:
        raise click.UsageError("--dry-run plans the current snapshot; it excludes --snapshot")
    one = not dry_run and _one_table(catalog, targets, every)
    if snapshot_id is not None and not one:
        raise click.UsageError("--snapshot names a snapshot of one table")
    names = _columns(columns)
    choice = (SketcherChoice.IN_PROCESS if in_process else SketcherChoice.SPARK if on_spark
              else SketcherChoice.AUTO)
    if partition_stats and (not one or names is not None or in_process or on_spark
                            or in_process_rows is not None):
        raise click.UsageError("--partition-stats computes one TABLE's partition statistics "
                               "file in this process (no --dry-run, --columns or sketcher "
                               "options)")
    options = StatsOptions(
        columns=None if names is None else tuple(names), snapshot_id=snapshot_id, full=full,
        commit=commit, partition_stats=partition_stats,
        uuid_hash=UuidHash(uuid_hash), sketcher=choice,
        **({} if in_process_rows is None else {"in_process_rows": in_process_rows}))
    from puffin_cli.storage import default_io

    if options.partition_stats:
        _partition_stats(ctx, _target(catalog, targets[0], relocate), options, output,
                         quiet=quiet, as_json=as_json)
        return
    if one:
        where = _one_output(output, commit)
        run = [_target(catalog, targets[0], relocate)]
    else:
        run = _targets(catalog, targets, relocate)
        if output is not None and not dry_run and not _is_directory(
                output, default_io().stat(output)):
            raise click.BadParameter("with several tables, PATH is an existing directory (in "
                                     "an object store: a prefix ending in /)", param_hint="-o")
        where = None if commit else partial(_file_in, output or os.getcwd(), True)
    from puffin_cli.analysis.stats import batch
    from puffin_cli.spark.stats import SparkSketcher

    with ProgressDisplay(not quiet) as display:
        spark = SparkSketcher(master, spark_conf, quiet=not debug, on_phase=display.phase)
        if dry_run:
            alone = not every and len(targets) == 1 and (
                catalog is None or [t.label for t in run] == list(targets))
            result: StatsResult | batch.StatsBatchResult = _plan(
                run, catalog, options, spark.planning(), on_done=display.line, alone=alone)
        elif one:
            from puffin_cli.analysis.stats.pipeline import Sketchers, compute_loaded

            display.phase("reading table metadata")
            result = compute_loaded(run[0].load(), targets[0], options,
                                    Sketchers.around(spark), output=where,
                                    on_phase=display.phase, progress=display.advance)
        else:
            from puffin_cli.analysis.stats.pipeline import Sketchers, compute_tables

            result = compute_tables(
                run, options, Sketchers.around(spark), catalog=catalog, output=where,
                on_phase=display.phase, progress=display.advance,
                on_done=lambda outcome: display.line(_outcome_line(outcome)))
    from puffin_cli.render.stats import batch_view, stats_view

    if as_json:
        emit(ctx, result)
    elif not quiet:
        emit(ctx, result, stats_view if one else batch_view)
    failed = isinstance(result, batch.StatsBatchResult) and result.failed
    sys.exit(EXIT_BAD_FILE if failed else EXIT_OK)


def _partition_stats(ctx: click.Context, target: TableTarget, options: StatsOptions,
                     output: str | None, *, quiet: bool, as_json: bool) -> None:
    """``--partition-stats``: one table's partition statistics file, into the table with
    --commit, else into -o's directory or the current one (checked before any work)."""
    from puffin_cli.analysis.partition_stats.steps import compute_partition_stats
    from puffin_cli.storage import default_io

    where = output if output is not None else (None if options.commit else os.getcwd())
    if where is not None and not _is_directory(where, default_io().stat(where)):
        raise click.BadParameter("with --partition-stats, PATH is an existing directory",
                                 param_hint="-o")
    result = compute_partition_stats(target.load(), options, output_dir=where)
    if as_json:
        emit(ctx, result)
    elif not quiet:
        from puffin_cli.render.partition_stats import computed_view

        emit(ctx, result, computed_view)


def _outcome_line(outcome: TableOutcome) -> str:
    from puffin_cli.render.stats import outcome_line

    return outcome_line(outcome)


def _file_in(directory: str, named: bool, label: str, snapshot_id: int) -> str:
    """The statistics file of ``snapshot_id`` in ``directory``, named after the table
    (``label``) when a run writes several (``named``)."""
    from puffin_cli.analysis.stats.steps import statistics_file_name
    from puffin_cli.storage import join

    name = statistics_file_name(snapshot_id)
    return join(directory, f"{label}-{name}" if named else name)


def _plan(run: list[TableTarget], catalog: str | None, options: StatsOptions,
          planning: Planning, *, on_done: Callable[[str], None],
          alone: bool) -> batch.StatsBatchResult:
    """The dry run: every table's plan from its metadata, manifests and the statistics files
    of its snapshot and its ancestors (no Spark: a cluster's parallelism is taken to be its
    least, ``spark.sql.shuffle.partitions``). ``alone``: one TABLE named
    (not a namespace), whose run would fail without a current snapshot: so does its plan."""
    from puffin_cli.analysis.stats import batch
    from puffin_cli.analysis.table.commit import check_committable
    from puffin_cli.render.stats import outcome_line

    start = time.monotonic()

    def each(table: Table, label: str) -> TableOutcome:
        if options.commit:
            check_committable(table)
        return batch.plan_table(table, label, options, planning)

    outcomes = batch.run_tables(run, each, lambda outcome: on_done(outcome_line(outcome)),
                                empty_is_error=alone)
    return batch.batch_result(catalog, outcomes, dry_run=True, commit=options.commit,
                              seconds=time.monotonic() - start, spark_started=False)


def _one_output(output: str | None, commit: bool) -> Output | None:
    """Where one table's file goes: into the table (``None``) with --commit; else -o's file
    or directory, or the current directory, checked before any work (a run never ends unable
    to write)."""
    from puffin_cli.storage import default_io, is_remote, parent

    if commit:
        return None
    if output is None:  # not in the table: no engine would see it there
        return partial(_file_in, os.getcwd(), False)
    found = default_io().stat(output)
    if _is_directory(output, found):
        return partial(_file_in, output, False)
    if found is not None:
        raise click.BadParameter(f"{output} exists; the statistics file is created, never "
                                 "overwritten: name a new file or a directory",
                                 param_hint="-o")
    if not is_remote(output):  # an object store has prefixes, not folders to miss
        folder = output if output.endswith("/") else parent(output) or "."
        holder = default_io().stat(folder)
        if holder is None or holder.kind != "dir":
            raise click.BadParameter(f"{folder} is not a directory; the statistics file is "
                                     "created in an existing one", param_hint="-o")
    return lambda _label, _snapshot_id: output


def _is_directory(output: str, found: FileInfo | None) -> bool:
    """Whether -o names a directory (``found``: what the storage layer stats there): an
    existing one, or in an object store a prefix ending in ``/`` (it has no folders to make
    first; before, the slash was dropped and the file written as an object named like the
    prefix)."""
    from puffin_cli.storage import is_remote

    return (found is not None and found.kind == "dir") or (
        is_remote(output) and output.endswith("/"))
