"""The sketching step behind one interface, two implementations: :class:`InProcessSketcher`
(Iceberg's tasks one after another in this process) and Spark's
(:class:`puffin_cli.spark.stats.SparkSketcher`, a Spark task per Iceberg task). Both run the
same task (:mod:`.sketch_task`) over the same task groups (:mod:`.task_groups`) and union the
partial sketches the same way (:func:`.steps.union_results`), so they give the same bytes.

The task groups are planned for the parallelism of Iceberg's Spark scan in the session a run
would use (:meth:`Sketcher.planning`): a ``local`` master's is known without starting Spark; a
cluster's only Spark knows. Small work whose groups do not depend on it (the adaptive split
size at its floor) is planned without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from puffin_cli.analysis.stats.result import Where
from puffin_cli.analysis.stats.steps import Progress, Sketches, sketch_groups

if TYPE_CHECKING:
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
