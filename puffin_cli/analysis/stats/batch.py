"""``stats compute`` over many tables (the namespaces of a catalog, ``--all``, several TABLEs)
and its plan (``--dry-run``): what each table's run did or would do, and the summary.

A run over many tables goes on when one fails: each table's outcome is ``computed``,
``fresh`` (its snapshot already had statistics for every column: left as it is), ``empty``
(no current snapshot: created and never written, nothing to compute; a table named alone is
an error instead, as that very table was asked for), ``failed`` (with the one-line error it
would have ended a one-table run with) or, in a dry run, ``planned``. The plan of a table
(:func:`refresh_plan`) comes from :func:`.incremental.decide_refresh`: metadata and
statistics files only, no data file and no Spark.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from puffin_cli.analysis.stats.incremental import ColumnDecision, RefreshDecision
from puffin_cli.analysis.stats.options import StatsOptions, TextEnum
from puffin_cli.analysis.stats.result import Chosen, Mode, StatsResult
from puffin_cli.errors import PuffinError

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.sketcher import Planning
    from puffin_cli.analysis.table.loading import Table


class Status(TextEnum):
    """What became of one table of a run."""

    COMPUTED = "computed"
    FRESH = "fresh"  # its statistics were there: left as it is
    EMPTY = "empty"  # no current snapshot: nothing to compute
    FAILED = "failed"
    PLANNED = "planned"  # a dry run's


@dataclass(frozen=True)
class RefreshPlan:
    """What refreshing a table's snapshot takes: ``spark_uses`` is the statistics file
    registered for exactly this snapshot (the one Spark's optimizer uses; ``None``: Spark has
    none), ``mode`` and ``mode_reason`` the refresh (``fresh``, ``incremental``, ``full``),
    ``files_to_read``/``rows_to_read`` what it reads of the snapshot's ``data_files``/``rows``
    (record counts, deletes not applied), ``columns`` the decision per column, ``sketcher``
    the sketcher the run would use and why."""

    snapshot_id: int
    spark_uses: str | None
    mode: Mode
    mode_reason: str
    data_files: int
    rows: int
    files_to_read: int
    rows_to_read: int
    columns: tuple[ColumnDecision, ...]
    sketcher: Chosen


@dataclass(frozen=True)
class TableError:
    code: str
    message: str  # the one line a one-table run ends with


@dataclass(frozen=True)
class TableOutcome:
    table: str
    status: Status
    seconds: float
    plan: RefreshPlan | None = None
    result: StatsResult | None = None
    error: TableError | None = None


@dataclass(frozen=True)
class BatchSummary:
    tables: int
    computed: int
    fresh: int
    empty: int
    failed: int
    planned: int
    rows_read: int
    seconds: float
    spark_started: bool  # a Spark session was started (or joined) for the run


@dataclass(frozen=True)
class StatsBatchResult:
    """``stats compute`` over several tables, or any ``--dry-run``."""

    catalog: str | None
    dry_run: bool
    commit: bool
    tables: tuple[TableOutcome, ...]
    summary: BatchSummary

    @property
    def failed(self) -> bool:
        return self.summary.failed > 0


def refresh_plan(decision: RefreshDecision, sketcher: Chosen) -> RefreshPlan:
    """The plan a dry run shows of a refresh decision and the sketcher chosen for it."""
    plan = decision.plan
    registered = [s.path for s in plan.metadata.statistics
                  if s.snapshot_id == decision.snapshot_id]
    rows = sum(f.record_count for f in plan.data_files)
    mode = decision.mode
    if mode is Mode.FULL:
        files, read = len(plan.data_files), rows
    elif mode is Mode.FRESH:
        files, read = 0, 0
    else:
        files, read = decision.new_data_files, decision.new_rows
    return RefreshPlan(decision.snapshot_id, registered[0] if registered else None, mode,
                       decision.reason, len(plan.data_files), rows, files, read,
                       decision.columns, sketcher)


@dataclass(frozen=True)
class TableTarget:
    """A table of a run: its name in the output, and how to load it (a table that cannot be
    loaded fails alone)."""

    label: str
    load: Callable[[], Table]


def run_tables(targets: Sequence[TableTarget], each: Callable[[Table, str], TableOutcome],
               on_done: Callable[[TableOutcome], None], *,
               empty_is_error: bool = False) -> tuple[TableOutcome, ...]:
    """``each(table, label)`` for every target in turn; a table whose work fails with a
    :class:`PuffinError` is ``failed`` and the run goes on. A table without a current snapshot
    is ``empty`` (``each`` is not called), unless ``empty_is_error`` (one table named alone:
    ``each`` fails it)."""
    outcomes = []
    for target in targets:
        start = time.monotonic()
        try:
            table = target.load()
            if not empty_is_error and table.current_snapshot() is None:
                outcome = TableOutcome(target.label, Status.EMPTY,
                                       round(time.monotonic() - start, 3))
            else:
                outcome = each(table, target.label)
        except PuffinError as exc:
            outcome = TableOutcome(target.label, Status.FAILED, round(time.monotonic() - start, 3),
                                   error=TableError(exc.code, str(exc)))
        outcomes.append(outcome)
        on_done(outcome)
    return tuple(outcomes)


def plan_table(table: Table, label: str, options: StatsOptions,
               planning: Planning) -> TableOutcome:
    """A dry run of one table: its :class:`RefreshPlan` for the run's ``options`` and the
    parallelism known without Spark (``planning``), from the table's metadata and manifests
    and the statistics files whose sketches a run would reuse (not metadata only:
    :func:`~.incremental.decide_refresh` reads them to know a base is usable)."""
    from puffin_cli.analysis.stats.incremental import decide_refresh
    from puffin_cli.analysis.stats.sketcher import Work, choose_sketcher

    start = time.monotonic()
    decision = decide_refresh(table, options.snapshot_id, options.column_list,
                              full=options.full, parallelism=planning.assumed,
                              uuid_hash=options.uuid_hash)
    chosen = choose_sketcher(options, decision, Work.of(decision), planning)
    return TableOutcome(label, Status.PLANNED, round(time.monotonic() - start, 3),
                        plan=refresh_plan(decision, chosen))


def batch_result(catalog: str | None, outcomes: tuple[TableOutcome, ...], *, dry_run: bool,
                 commit: bool, seconds: float, spark_started: bool) -> StatsBatchResult:
    def count(status: Status) -> int:
        return sum(1 for o in outcomes if o.status is status)

    summary = BatchSummary(len(outcomes), count(Status.COMPUTED), count(Status.FRESH),
                           count(Status.EMPTY), count(Status.FAILED), count(Status.PLANNED),
                           sum(o.result.rows_read for o in outcomes if o.result is not None),
                           round(seconds, 3), spark_started)
    return StatsBatchResult(catalog, dry_run, commit, outcomes, summary)
