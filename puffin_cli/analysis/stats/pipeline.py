"""``puffin stats compute``, one table's steps in a row and a run over many tables: decide
(:func:`.incremental.decide_refresh`: fresh, incremental or full), choose the sketcher by the
work (:func:`.sketcher.choose_sketcher`), sketch (:func:`.incremental.refresh_sketches` over the
sketcher's tasks), write the statistics file with the other columns of the snapshot's
registered file kept (:mod:`.kept`), commit, and delete the file the commit replaced when no
other entry names it (as Iceberg's ``expire_snapshots`` would). No pyspark here: the Spark
sketcher is handed in (:class:`Sketchers`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from puffin_cli.analysis.stats.incremental import RefreshDecision, decide_refresh
from puffin_cli.analysis.stats.options import StatsOptions
from puffin_cli.analysis.stats.result import Mode, StatsResult, Where
from puffin_cli.analysis.stats.sketcher import (
    InProcessSketcher,
    Sketcher,
    Work,
    choose_sketcher,
)
from puffin_cli.analysis.stats.steps import Progress, Sketches
from puffin_cli.errors import PuffinError
from puffin_cli.format.text import plural
from puffin_cli.storage import StorageError

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.batch import StatsBatchResult, TableOutcome, TableTarget
    from puffin_cli.analysis.stats.kept import OtherColumn
    from puffin_cli.analysis.stats.plan import StatsPlan
    from puffin_cli.analysis.stats.task_groups import TaskGroup
    from puffin_cli.analysis.table.loading import Table

# Where a statistics file goes without --commit: (table label, snapshot ID) -> path.
Output = Callable[[str, int], str]
Phase = Callable[[str], None]


@dataclass(frozen=True)
class Sketchers:
    """The two sketchers of a run: Spark's (started only when a table's work needs it, then
    shared) and this process's, which plans the groups for Spark's parallelism."""

    spark: Sketcher
    in_process: Sketcher

    @classmethod
    def around(cls, spark: Sketcher) -> Sketchers:
        return cls(spark, InProcessSketcher(spark.planning))

    def __getitem__(self, where: Where) -> Sketcher:
        return self.in_process if where is Where.IN_PROCESS else self.spark


def compute_loaded(table: Table, label: str, options: StatsOptions, sketchers: Sketchers, *,
                   output: Output | None = None, on_phase: Phase | None = None,
                   progress: Progress | None = None) -> StatsResult:
    """One table's steps in a row (module docstring). The file goes to ``output(label,
    snapshot_id)``, by default the table's metadata folder, where ``options.commit`` registers
    it. A snapshot whose statistics are fresh is left as it is (nothing written). A commit
    that cannot succeed is refused before any work."""
    from puffin_cli.analysis.stats import steps
    from puffin_cli.analysis.stats.incremental import refresh_sketches
    from puffin_cli.analysis.stats.kept import kept_blobs
    from puffin_cli.analysis.table.commit import check_committable

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    if options.commit:
        check_committable(table)
    planning = sketchers.spark.planning()

    def decide(parallelism: int) -> RefreshDecision:
        return decide_refresh(table, options.snapshot_id, options.column_list,
                              full=options.full, parallelism=parallelism,
                              uuid_hash=options.uuid_hash)

    decision = decide(planning.assumed)
    chosen = choose_sketcher(options, decision, Work.of(decision), planning)
    where = chosen.where
    sketcher = sketchers[where]
    if decision.mode is not Mode.FRESH:
        parallelism = sketcher.parallelism()  # Spark's session started here when needed
        if parallelism != planning.assumed:  # a running session: its own decides
            decision = decide(parallelism)
    plan = decision.plan

    def sketch(part: StatsPlan, groups: Sequence[TaskGroup]) -> Sketches:
        return sketcher.sketch(part, groups, options.uuid_hash, progress)

    if decision.mode is not Mode.FRESH:
        how = "in this process" if where is Where.IN_PROCESS else "on Spark"
        phase(f"sketching {plural(len(plan.columns), 'column')} ({decision.mode}) {how}")
    sketching = time.monotonic()
    done = refresh_sketches(decision, sketch)
    sketch_seconds = time.monotonic() - sketching
    decision = replace(decision, columns=done.columns)  # a union that was not exact: full
    sketches = done.sketches
    version = committed = kept_from = deleted = None
    others: tuple[OtherColumn, ...] = ()
    in_table = True
    if decision.mode is Mode.FRESH:
        existing = next(e for e in table.metadata.statistics
                        if e.snapshot_id == plan.snapshot.snapshot_id
                        and e.path == decision.columns[0].base_file)
        path, location = table.resolve(existing.path), existing.path
        file_size, footer_size = existing.file_size, existing.footer_size
    else:
        phase("writing the statistics file")
        kept = kept_blobs(plan, options.uuid_hash)
        target = None if output is None else output(label, plan.snapshot.snapshot_id)
        written = steps.write_statistics(plan, sketches, planning=decision.planning,
                                         uuid_hash=options.uuid_hash, target=target,
                                         kept=kept)
        path, location = written.path, written.location
        file_size, footer_size = written.file_size, written.footer_size
        kept_from, others, in_table = kept.source, written.others, written.in_table
        if options.commit:
            phase("committing")
            result = steps.commit_statistics(plan, written)
            version, committed = result.version, result.metadata_file
            deleted = _delete_replaced(table, result.replaced, location)
    snapshot = plan.snapshot
    missing = () if decision.mode is Mode.FRESH else _missing_columns(plan, others)
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
        in_process=where is Where.IN_PROCESS, in_table=in_table, kept_from=kept_from,
        other_columns=others, missing_columns=missing, deleted_file=deleted,
        follow_up=compute_command(table, label, options.commit) if missing else None,
        sketcher=chosen)


def _missing_columns(plan: StatsPlan, others: Sequence[OtherColumn]) -> tuple[str, ...]:
    """The columns ``stats compute`` sketches by default that the new file has no theta
    sketch of (``--columns`` named fewer, and the snapshot's file had none of them to keep)."""
    from puffin_cli.analysis.stats.plan import select_columns
    from puffin_cli.format.spec import THETA_BLOB_TYPE

    _schema, every, _skipped = select_columns(plan.metadata, plan.snapshot, None)
    have = {c.field_id for c in plan.columns} | {
        f for o in others if o.kept and o.blob_type == THETA_BLOB_TYPE for f in o.fields}
    return tuple(c.name for c in every if c.field_id not in have)


def compute_command(table: Table, label: str, commit: bool) -> str:
    """The ``stats compute`` of every column of the table's current snapshot, as a user
    types it."""
    import shlex

    named = table.catalog_table
    where = shlex.quote(label) if named is None else (
        f"--catalog {shlex.quote(named.catalog)} {shlex.quote(named.identifier)}")
    return f"puffin stats compute {where}{' --commit' if commit else ''}"


def _delete_replaced(table: Table, replaced: Sequence[str], location: str) -> str | None:
    """Delete the statistics file a commit replaced when no other entry of the table (another
    snapshot's statistics or partition statistics) names it, as Iceberg's ``expire_snapshots``
    deletes the files no metadata names; the file deleted, or ``None``."""
    if len(replaced) != 1 or replaced[0] == location:
        return None
    old = replaced[0]
    # the version the run read: its entry for the snapshot was the one replaced (the commit
    # is refused when another writer's replaced it meanwhile)
    entries = [e.path for e in table.metadata.statistics]
    partition = table.metadata.raw.get("partition-statistics")
    entries += [str(p.get("statistics-path")) for p in partition or [] if isinstance(p, dict)]
    if entries.count(old) != 1:  # another snapshot's entry names it too
        return None
    try:
        table.fileio.delete(table.resolve(old))
    except (StorageError, OSError, PuffinError):
        return None
    return old


def compute_tables(targets: Sequence[TableTarget], options: StatsOptions,
                   sketchers: Sketchers, *, catalog: str | None = None,
                   output: Output | None = None, on_phase: Phase | None = None,
                   progress: Progress | None = None,
                   on_done: Callable[[TableOutcome], None] | None = None) -> StatsBatchResult:
    """``stats compute`` over many tables: each as :func:`compute_loaded` does it, small work
    in this process and the rest on one Spark session (started only when a table needs it);
    a table that fails does not stop the others."""
    from puffin_cli.analysis.stats import batch

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    done = 0

    def each(table: Table, label: str) -> batch.TableOutcome:
        nonlocal done
        done += 1
        where = f"[{done}/{len(targets)}] {label}"
        phase(f"{where}: reading table metadata")
        result = compute_loaded(table, label, options, sketchers, output=output,
                                on_phase=lambda text: phase(f"{where}: {text}"),
                                progress=progress)
        status = batch.Status.FRESH if result.mode is Mode.FRESH else batch.Status.COMPUTED
        return batch.TableOutcome(label, status, result.seconds, result=result)

    outcomes = batch.run_tables(targets, each, on_done or (lambda _outcome: None))
    return batch.batch_result(catalog, outcomes, dry_run=False, commit=options.commit,
                              seconds=time.monotonic() - start,
                              spark_started=sketchers.spark.started)
