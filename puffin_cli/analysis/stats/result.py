"""What ``puffin stats compute`` reports: the result the pipeline (:mod:`.pipeline`) returns
and :mod:`puffin_cli.render.stats` shows, and the words it is made of."""

from __future__ import annotations

from dataclasses import dataclass

from puffin_cli.analysis.stats.kept import OtherColumn
from puffin_cli.analysis.stats.options import TextEnum


class Mode(TextEnum):
    """How a column's (or a snapshot's) statistics are made (:mod:`.incremental`)."""

    FRESH = "fresh"  # the snapshot has them already: nothing written
    INCREMENTAL = "incremental"  # an ancestor's sketch unioned with the new tasks'
    FULL = "full"  # every task of the snapshot


class Where(TextEnum):
    """Which sketcher ran the tasks (:mod:`.sketcher`)."""

    IN_PROCESS = "in-process"
    SPARK = "spark"


class SketcherReason(TextEnum):
    """Why a run's sketcher is the one it is: a stable code (docs/json.md), with
    :class:`Chosen`'s text for people."""

    FRESH = "fresh"  # nothing to sketch: no Spark
    FORCED_IN_PROCESS = "forced-in-process"  # --in-process
    FORCED_SPARK = "forced-spark"  # --spark
    SMALL = "small"  # rows and bytes to read at most the thresholds
    ROWS = "rows-above-threshold"  # more rows to read than --in-process-rows
    BYTES = "bytes-above-threshold"  # more data-file bytes to read than IN_PROCESS_BYTES
    # small, but its task groups depend on a cluster's parallelism, which only Spark knows
    PARALLELISM = "parallelism-unknown"


@dataclass(frozen=True)
class Chosen:
    """The sketcher of a table's run (``where``), why (``reason``) and that in words
    (``text``)."""

    where: Where
    reason: SketcherReason
    text: str


@dataclass(frozen=True)
class ColumnStats:
    field_id: int
    name: str
    type: str
    ndv: int
    estimate: float
    retained: int
    exact: bool
    theta_long: int
    mode: Mode = Mode.FULL
    base_snapshot_id: int | None = None  # the snapshot whose sketch was reused
    mode_reason: str = ""  # why full, or which base was used


@dataclass(frozen=True)
class StatsResult:
    """What ``puffin stats compute`` did. ``statistics_path`` is the local file written,
    ``statistics_location`` how the table metadata names it."""

    table: str
    snapshot_id: int
    sequence_number: int
    schema_id: int
    columns: tuple[ColumnStats, ...]
    skipped_columns: tuple[tuple[str, str], ...]
    rows_read: int
    data_files: int
    position_delete_files: int
    deletion_vectors: int
    statistics_path: str
    statistics_location: str
    file_size: int
    footer_size: int
    seconds: float
    committed_version: int | None = None
    committed_metadata: str | None = None  # the metadata file the commit published
    sketch_seconds: float = 0.0  # the sketching job's wall time (no Spark start-up)
    mode: Mode = Mode.FULL  # the columns' modes: fresh only when every column is
    base_snapshot_id: int | None = None  # the base of the incremental columns, when one
    mode_reason: str = ""
    files_read: int = 0  # data files the sketching read (all of them for a full compute)
    in_process: bool = False  # sketched in this process (small work), not on Spark
    # where the file is: in the table's metadata folder (registered with --commit) or not
    in_table: bool = True
    kept_from: str | None = None  # the snapshot's registered statistics file, if any
    other_columns: tuple[OtherColumn, ...] = ()  # its blobs no column computed replaces
    # columns of the snapshot's schema the new file has no statistics of (--columns)
    missing_columns: tuple[str, ...] = ()
    follow_up: str | None = None  # the command that adds them
    # the statistics file the commit replaced, deleted after it (no other entry named it)
    deleted_file: str | None = None
    sketcher: Chosen | None = None  # the sketcher chosen and why
