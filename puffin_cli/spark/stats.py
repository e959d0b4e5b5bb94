"""``puffin stats compute``'s Spark sketcher: the sketching step as one Spark job, the way Iceberg
Java's ``compute_table_stats`` does (:class:`SparkSketcher`, one implementation of
:class:`puffin_cli.analysis.stats.sketcher.Sketcher`); the rest of the pipeline (decide, write,
commit) is :mod:`puffin_cli.analysis.stats.pipeline`, which uses it for large work only.

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
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.options import UuidHash
from puffin_cli.analysis.stats.plan import StatsPlan
from puffin_cli.analysis.stats.result import Where
from puffin_cli.analysis.stats.sketcher import Planning
from puffin_cli.analysis.stats.steps import Progress, Sketches

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.task_groups import TaskGroup


# --- Iceberg's tasks --------------------------------------------------------------------------


def planning_parallelism(spark: Any) -> int:
    """The parallelism Iceberg's Spark scan sizes its splits for (``SparkReadConf``): the
    larger of the default parallelism and ``spark.sql.shuffle.partitions``."""
    shuffle = int(spark.conf.get("spark.sql.shuffle.partitions", "200"))
    return max(int(spark.sparkContext.defaultParallelism), shuffle)


# --- the job ----------------------------------------------------------------------------------


def compute_sketches(spark: Any, plan: StatsPlan, *, uuid_hash: UuidHash = UuidHash.TEXT,
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
    specs = task_specs(plan, groups, uuid_hash=uuid_hash)
    if not specs:
        return union_results(plan, ())
    ship_package(spark)
    sc = spark.sparkContext
    results = run_with_progress(
        spark, lambda: sc.parallelize(specs, len(specs)).map(
            run_task).collect(), progress, "puffin stats compute")
    return union_results(plan, results)


def _active_session() -> Any:
    """The running SparkSession of this process (spark-submit, a notebook), without importing
    pyspark when nothing did."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def local_parallelism(master: str | None, spark_conf: dict[str, str] | None) -> int | None:
    """The parallelism Iceberg's scan would plan for in a new session on ``master``, known
    without starting Spark: ``local``, ``local[N]`` and ``local[*]`` (the default) have
    ``N`` (the cores) as default parallelism, and ``spark.sql.shuffle.partitions`` is the
    ``--conf`` value or Spark's 200. ``None`` for a cluster, or a running session
    (spark-submit), whose parallelism only Spark knows."""
    if _active_session() is not None:
        return None
    found = re.fullmatch(r"local(?:\[(\*|[0-9]+)(?:,[0-9]+)?\])?", master or "local[*]")
    if found is None:
        return None
    cores = found.group(1)
    default = 1 if cores is None else (os.cpu_count() or 1) if cores == "*" else int(cores)
    shuffle = (spark_conf or {}).get("spark.sql.shuffle.partitions", "200")
    return max(default, int(shuffle)) if shuffle.isdigit() else None


# --- the sketcher -----------------------------------------------------------------------------


class SparkSketcher:
    """The Spark session of a run as a sketcher: started (or the active one joined) the first
    time a table's work needs it, then shared by every table of the run; never started when
    none does."""

    where = Where.SPARK

    def __init__(self, master: str | None = None, conf: dict[str, str] | None = None, *,
                 quiet: bool = True, on_phase: Callable[[str], None] | None = None) -> None:
        self.master, self.conf, self.quiet = master, conf, quiet
        self.on_phase = on_phase or (lambda _text: None)
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

    def planning(self) -> Planning:
        """Iceberg's planning parallelism when known without starting a session (a running
        one's, a local master's), else its least: ``spark.sql.shuffle.partitions``."""
        if self.started or _active_session() is not None:  # joined: it costs nothing
            return Planning(planning_parallelism(self()), 1)
        shuffle = (self.conf or {}).get("spark.sql.shuffle.partitions", "200")
        least = int(shuffle) if shuffle.isdigit() and int(shuffle) > 0 else 1
        return Planning(local_parallelism(self.master, self.conf), least)

    def parallelism(self) -> int:
        """Iceberg's planning parallelism: known, or the session's, started for it."""
        known = self.planning().known
        return planning_parallelism(self()) if known is None else known

    def sketch(self, plan: StatsPlan, groups: Sequence[TaskGroup], uuid_hash: UuidHash,
               progress: Progress | None) -> Sketches:
        return compute_sketches(self(), plan, uuid_hash=uuid_hash, progress=progress,
                                groups=groups)
