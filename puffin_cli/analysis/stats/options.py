"""What one ``stats compute`` run is asked for, as one value (:class:`StatsOptions`) handed from
the command to the pipeline (:mod:`.pipeline`), and the choices it is made of.

The sketcher (:class:`SketcherChoice`) is chosen by the work, not by the mode: a full compute
or an increment that reads at most :data:`IN_PROCESS_ROWS` rows (record counts of the data files
its tasks read) and :data:`IN_PROCESS_BYTES` bytes of data files is sketched in this process;
larger work on Spark. Both give the same bytes (they run the same tasks); the thresholds are
where this process's rate and Spark's, its start counted, cross (docs/spark.md, "Which
sketcher").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

# Work of at most this many rows and data-file bytes is sketched in this process (measured:
# docs/spark.md, "Which sketcher"; benchmarks/bench_sketchers.py).
IN_PROCESS_ROWS = 20_000_000
IN_PROCESS_BYTES = 512 * 1024 * 1024


class TextEnum(str, Enum):
    """An enum of words: equal to its value, and shown as it (in f-strings too)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class UuidHash(TextEnum):
    """How uuid values are hashed into sketches (``--uuid-hash``): ``text``, the 36-character
    form (Iceberg's Spark procedure reads a uuid as a Spark string), or the spec's 16
    ``bytes``."""

    TEXT = "text"
    BYTES = "bytes"

    @property
    def as_text(self) -> bool:
        return self is UuidHash.TEXT


class SketcherChoice(TextEnum):
    """``auto`` (by the work's size), or forced: ``--in-process`` or ``--spark``."""

    AUTO = "auto"
    IN_PROCESS = "in-process"
    SPARK = "spark"


@dataclass(frozen=True)
class StatsOptions:
    """One run's options, the same for every table of the run. ``columns``: the columns to
    sketch (default every primitive column); ``snapshot_id``: one table's snapshot (default the
    current one); ``full``: read the whole snapshot even when its statistics are fresh or an
    ancestor's could be extended; ``commit``: register the file; ``in_process_rows`` and
    ``in_process_bytes``: the largest work the ``auto`` sketcher does in this process;
    ``partition_stats``: compute the snapshot's partition statistics file instead of sketches
    (one table, from its manifests, in this process: ``analysis/partition_stats/steps.py``)."""

    columns: tuple[str, ...] | None = None
    snapshot_id: int | None = None
    full: bool = False
    commit: bool = False
    uuid_hash: UuidHash = UuidHash.TEXT
    sketcher: SketcherChoice = SketcherChoice.AUTO
    in_process_rows: int = IN_PROCESS_ROWS
    in_process_bytes: int = IN_PROCESS_BYTES
    partition_stats: bool = False

    @property
    def column_list(self) -> list[str] | None:
        return None if self.columns is None else list(self.columns)
