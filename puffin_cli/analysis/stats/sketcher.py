"""The sketching step behind one interface, two implementations: :class:`InProcessSketcher`
(Iceberg's tasks one after another in this process) and Spark's
(:class:`puffin_cli.spark.stats.SparkSketcher`, a Spark task per Iceberg task). Both run the
same task (:mod:`.sketch_task`) over the same task groups (:mod:`.task_groups`) and union the
partial sketches the same way (:func:`.steps.union_results`), so they give the same bytes.
Which one a table's run uses is chosen by the work (:func:`choose_sketcher`), with its reason.

The task groups are planned for the parallelism of Iceberg's Spark scan in the session a run
would use (:meth:`Sketcher.planning`): a ``local`` master's is known without starting Spark; a
cluster's only Spark knows. Small work whose groups do not depend on it (the adaptive split
size at its floor) is planned without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from puffin_cli.analysis.stats.options import SketcherChoice, StatsOptions
from puffin_cli.analysis.stats.result import Chosen, Mode, SketcherReason, Where
from puffin_cli.analysis.stats.steps import Progress, Sketches, sketch_groups
from puffin_cli.format.text import plural

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.incremental import RefreshDecision
    from puffin_cli.analysis.stats.options import UuidHash
    from puffin_cli.analysis.stats.plan import StatsPlan
    from puffin_cli.analysis.stats.task_groups import TaskGroup


@dataclass(frozen=True)
class Planning:
    """The planning parallelism of Iceberg's Spark scan: ``known`` (without starting Spark),
    else at least ``least`` (``spark.sql.shuffle.partitions``: Iceberg takes the larger of it
    and Spark's default parallelism)."""

    known: int | None
    least: int

    @property
    def assumed(self) -> int:
        return self.least if self.known is None else self.known


class Sketcher(Protocol):
    """Runs task groups of a plan and unions their partial sketches per column."""

    where: Where

    @property
    def started(self) -> bool:
        """Whether it started something a run must report (a Spark session)."""
        ...

    def planning(self) -> Planning:
        """The parallelism the task groups are planned for, known without starting Spark."""
        ...

    def parallelism(self) -> int:
        """The parallelism the sketches' groups must have been planned for, started if need
        be (Spark's session): :meth:`planning`'s ``known`` when given."""
        ...

    def sketch(self, plan: StatsPlan, groups: Sequence[TaskGroup], uuid_hash: UuidHash,
               progress: Progress | None) -> Sketches:
        ...


class InProcessSketcher:
    """Iceberg's tasks one after another in this process, no JVM. ``planning`` is the
    parallelism of the Spark session the groups are planned for (the Spark sketcher's)."""

    where = Where.IN_PROCESS
    started = False

    def __init__(self, planning: Callable[[], Planning]) -> None:
        self._planning = planning

    def planning(self) -> Planning:
        return self._planning()

    def parallelism(self) -> int:
        return self._planning().assumed

    def sketch(self, plan: StatsPlan, groups: Sequence[TaskGroup], uuid_hash: UuidHash,
               progress: Progress | None) -> Sketches:
        return sketch_groups(plan, groups, uuid_hash=uuid_hash, progress=progress)


@dataclass(frozen=True)
class Work:
    """What a refresh reads: data files, their rows (record counts, deletes not applied) and
    bytes."""

    files: int
    rows: int
    bytes: int

    @classmethod
    def of(cls, decision: RefreshDecision) -> Work:
        if decision.mode is Mode.FRESH:
            return cls(0, 0, 0)
        if decision.mode is Mode.FULL:
            groups: Sequence[TaskGroup] = decision.groups
        else:
            groups = [g for _base, gs in decision.new_groups for g in gs]
        files = {s.file.location: s.file for g in groups for s in g.splits}
        return cls(len(files), sum(f.record_count for f in files.values()),
                   sum(f.file_size for f in files.values()))


def groups_settled(plan: StatsPlan, least: int) -> bool:
    """Whether the plan's task groups are the same for every parallelism of at least
    ``least``: the adaptive split size is then at its floor (``min(16 MiB, target size)``),
    which it is for any larger parallelism too (it only shrinks as the parallelism grows)."""
    from puffin_cli.analysis.stats.task_groups import split_size

    return split_size(plan, least) == split_size(plan, 2**31 - 1)


def choose_sketcher(options: StatsOptions, decision: RefreshDecision, work: Work,
                    planning: Planning) -> Chosen:
    """Nothing for a fresh snapshot; ``--spark`` / ``--in-process`` as forced; else this
    process for work of at most ``options.in_process_rows`` rows and ``in_process_bytes``
    bytes (whose task groups are known without a Spark session), Spark for more; with the
    reason, a stable code and its words."""
    if decision.mode is Mode.FRESH:
        return Chosen(Where.IN_PROCESS, SketcherReason.FRESH,
                      "the snapshot's statistics are fresh: nothing to sketch")
    if options.sketcher is SketcherChoice.SPARK:
        return Chosen(Where.SPARK, SketcherReason.FORCED_SPARK, "--spark")
    if options.sketcher is SketcherChoice.IN_PROCESS:
        return Chosen(Where.IN_PROCESS, SketcherReason.FORCED_IN_PROCESS, "--in-process")
    reads = f"{plural(work.rows, 'row')} to read"
    if work.rows > options.in_process_rows:
        return Chosen(Where.SPARK, SketcherReason.ROWS,
                      f"{reads}: more than --in-process-rows {options.in_process_rows:,}")
    if work.bytes > options.in_process_bytes:
        return Chosen(Where.SPARK, SketcherReason.BYTES,
                      f"{work.bytes:,} bytes of data files to read: more than "
                      f"{options.in_process_bytes:,}")
    if planning.known is None and not groups_settled(decision.plan, planning.least):
        return Chosen(Where.SPARK, SketcherReason.PARALLELISM,
                      "its task groups depend on the cluster's parallelism, which only Spark "
                      "knows")
    return Chosen(Where.IN_PROCESS, SketcherReason.SMALL,
                  f"{reads} and {work.bytes:,} bytes: at most --in-process-rows "
                  f"{options.in_process_rows:,} and {options.in_process_bytes:,} bytes")
