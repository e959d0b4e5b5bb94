"""Iceberg's task groups for a snapshot: which Spark task reads which byte ranges of which data
files, in which order. Pure Python, a replay of Iceberg 1.10.2's Spark 3.5 scan
(``SparkPartitioningAwareScan.taskGroups`` without storage-partitioned grouping, its default):

1. **Split size** (``SparkScan.adjustSplitSize``, ``TableScanUtil.adjustSplitSize``): the table
   property ``read.split.target-size`` (128 MiB). Unless ``read.split.adaptive-size.enabled``
   is false (default true), when the scan (the sum of the unsplit tasks' sizes) would make
   fewer splits than the parallelism (``ceil(scan / size) < parallelism``), the size becomes
   ``max(scan // parallelism, min(16 MiB, size))``.
2. **Splitting** (``BaseContentScanTask.split``): a file whose ``split_offsets`` are well
   defined (not empty, strictly ascending, the last one below the file size) becomes one
   split per offset, up to the next offset or the file's end, whatever the split size; any
   other file becomes consecutive splits of the split size (the last one shorter; a file of
   size 0 none).
3. **Weights**: a split weighs ``max(length + deletes, (1 + delete files) * open_cost)``
   (``read.split.open-file-cost``, 4 MiB), where the delete files are those Iceberg attaches
   to the data file (:class:`.files.DataFile`) and ``deletes`` their sizes
   (a deletion vector counts its blob's length, ``ScanTaskUtil.contentSizeInBytes``).
4. **Bin packing** (``BinPacking.PackingIterator``, largest bin first): each split, in order,
   goes to the first open bin it fits in (bin weight + weight <= split size), else to a new
   bin; when that makes more than ``read.split.planning-lookback`` (10) open bins, the
   heaviest (the first of equals) is emitted. At the end the open bins are emitted in order.
5. **Merging** (``TableScanUtil.mergeTasks``): within a group, a split that continues the
   previous one (same file, starting where it ends) is merged into it.

Splits come in the plan's order (:func:`.plan.plan_snapshot`): the order Iceberg's
``planFiles`` yields the files, its data manifests in a Java hash set's order
(:mod:`.manifest_order`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from puffin_cli.analysis.stats.files import DataFile
from puffin_cli.analysis.stats.plan import StatsPlan
from puffin_cli.errors import PuffinError

TARGET_SIZE = "read.split.target-size"
LOOKBACK = "read.split.planning-lookback"
OPEN_FILE_COST = "read.split.open-file-cost"
ADAPTIVE_SIZE = "read.split.adaptive-size.enabled"
DEFAULT_TARGET_SIZE = 128 * 1024 * 1024
DEFAULT_LOOKBACK = 10
DEFAULT_OPEN_FILE_COST = 4 * 1024 * 1024
MIN_SPLIT_SIZE = 16 * 1024 * 1024  # TableScanUtil.MIN_SPLIT_SIZE
# File property of puffin-cli's statistics files: the TaskPlanning their sketches' groups had.
TASK_PLANNING_PROPERTY = "puffin-cli.task-planning"
SPLITTABLE_FORMATS = frozenset({"parquet", "orc", "avro"})  # FileFormat.isSplittable


@dataclass(frozen=True)
class Split:
    """Bytes ``[start, start + length)`` of a data file: the row groups (stripes) Iceberg's
    reader takes for this range."""

    file: DataFile
    start: int
    length: int


@dataclass(frozen=True)
class TaskGroup:
    """One Spark task: its splits, read in this order."""

    splits: tuple[Split, ...]


@dataclass(frozen=True)
class SplitPlanning:
    """The table's split planning properties (Iceberg's defaults when unset)."""

    target_size: int = DEFAULT_TARGET_SIZE
    lookback: int = DEFAULT_LOOKBACK
    open_file_cost: int = DEFAULT_OPEN_FILE_COST
    adaptive: bool = True


@dataclass(frozen=True)
class TaskPlanning:
    """Every input of :func:`plan_task_groups` besides the data files: the table's split
    properties and the Spark session's planning parallelism."""

    split: SplitPlanning
    parallelism: int

    def to_property(self) -> str:
        """The compact JSON recorded as :data:`TASK_PLANNING_PROPERTY`."""
        return json.dumps({"target-size": self.split.target_size,
                           "open-file-cost": self.split.open_file_cost,
                           "lookback": self.split.lookback, "adaptive": self.split.adaptive,
                           "parallelism": self.parallelism}, separators=(",", ":"))

    @classmethod
    def from_property(cls, text: str) -> TaskPlanning:
        """The inverse of :meth:`to_property`; a ``ValueError`` saying what is wrong for any
        other text (each number an integer in the range Iceberg checks, ``adaptive`` a
        boolean)."""
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        limits = {"target-size": 1, "open-file-cost": 0, "lookback": 1, "parallelism": 1}
        numbers: dict[str, int] = {}
        for key, minimum in limits.items():
            value = doc.get(key)
            if type(value) is not int or value < minimum:
                raise ValueError(f"{key} is not an integer >= {minimum}")
            numbers[key] = value
        if not isinstance(doc.get("adaptive"), bool):
            raise ValueError("adaptive is not true or false")
        return cls(SplitPlanning(numbers["target-size"], numbers["lookback"],
                                 numbers["open-file-cost"], doc["adaptive"]),
                   numbers["parallelism"])

    def changes(self, now: TaskPlanning) -> list[str]:
        """What differs in ``now``, one phrase per input: ``"read.split.target-size
        16777216, now 33554432"``."""
        pairs = [(TARGET_SIZE, self.split.target_size, now.split.target_size),
                 (OPEN_FILE_COST, self.split.open_file_cost, now.split.open_file_cost),
                 (LOOKBACK, self.split.lookback, now.split.lookback),
                 (ADAPTIVE_SIZE, str(self.split.adaptive).lower(),
                  str(now.split.adaptive).lower()),
                 ("the planning parallelism", self.parallelism, now.parallelism)]
        return [f"{name} {then}, now {value}" for name, then, value in pairs if then != value]


def split_planning(plan: StatsPlan) -> SplitPlanning:
    """The split planning properties of the plan's table metadata, checked as Iceberg checks
    them (``PropertyUtil``, ``TableScanUtil.validatePlanningArguments``)."""
    properties = plan.metadata.raw.get("properties")
    props = properties if isinstance(properties, dict) else {}

    def number(name: str, default: int, minimum: int) -> int:
        text = props.get(name)
        if text is None:
            return default
        # Long.parseLong / Integer.parseInt: an optional sign and ASCII digits
        value = int(text) if re.fullmatch(r"[+-]?[0-9]+", str(text)) else None
        if value is None or value < minimum:
            raise PuffinError(f"{plan.metadata.path}: table property {name}={text!r} is not "
                              f"an integer >= {minimum}", code="stats.split-planning")
        return value

    adaptive = props.get(ADAPTIVE_SIZE)
    return SplitPlanning(
        target_size=number(TARGET_SIZE, DEFAULT_TARGET_SIZE, 1),
        lookback=number(LOOKBACK, DEFAULT_LOOKBACK, 1),
        open_file_cost=number(OPEN_FILE_COST, DEFAULT_OPEN_FILE_COST, 0),
        # Boolean.parseBoolean: "true" in any case is true, anything else false
        adaptive=True if adaptive is None else str(adaptive).lower() == "true",
    )


def deletes_size(f: DataFile) -> tuple[int, int]:
    """(bytes, count) of the delete files Iceberg attaches to ``f``'s scan task."""
    size = sum(d.file_size for d in f.equality_deletes)
    count = len(f.equality_deletes)
    if f.deletion_vector is not None:
        return size + f.deletion_vector.length, count + 1
    return size + sum(d.file_size for d in f.position_deletes), count + len(f.position_deletes)


def adjust_split_size(scan_size: int, parallelism: int, split_size: int) -> int:
    """``TableScanUtil.adjustSplitSize``."""
    if parallelism <= 0:
        raise PuffinError(f"parallelism must be > 0, got {parallelism}",
                          code="stats.split-planning")
    expected_splits = -(-scan_size // split_size)
    if expected_splits < parallelism:
        return max(scan_size // parallelism, min(MIN_SPLIT_SIZE, split_size))
    return split_size


def split_size(plan: StatsPlan, parallelism: int,
               planning: SplitPlanning | None = None) -> int:
    """The split size Iceberg's Spark scan plans the snapshot with, for a Spark session whose
    parallelism (``max(defaultParallelism, spark.sql.shuffle.partitions)``) is given (and the
    table's split properties, or ``planning``'s)."""
    planning = split_planning(plan) if planning is None else planning
    if not planning.adaptive:
        return planning.target_size
    scan_size = sum(f.file_size + deletes_size(f)[0] for f in plan.data_files)
    return adjust_split_size(scan_size, parallelism, planning.target_size)


def well_defined_offsets(f: DataFile) -> tuple[int, ...] | None:
    """``f.split_offsets`` when Iceberg splits by them (``BaseFile.splitOffsetArray`` and
    ``ArrayUtil.isStrictlyAscending``), else ``None``."""
    offsets = f.split_offsets
    if not offsets or offsets[-1] >= f.file_size:
        return None
    if any(b <= a for a, b in pairwise(offsets)):
        return None
    return offsets


def file_splits(f: DataFile, size: int) -> list[Split]:
    """The splits of one data file's scan task (``BaseContentScanTask.split``)."""
    if f.file_format not in SPLITTABLE_FORMATS:
        return [Split(f, 0, f.file_size)]
    offsets = well_defined_offsets(f)
    if offsets is not None:
        ends = (*offsets[1:], f.file_size)
        return [Split(f, start, end - start) for start, end in zip(offsets, ends, strict=True)]
    return [Split(f, start, min(size, f.file_size - start))
            for start in range(0, f.file_size, size)]


def pack(items: Sequence[Split], weights: Sequence[int], target: int,
         lookback: int) -> Iterator[list[Split]]:
    """``BinPacking.PackingIterator`` with ``largestBinFirst``: the bins, in emission order."""
    bins: list[tuple[list[Split], list[int]]] = []  # (items, [weight])
    for item, weight in zip(items, weights, strict=True):
        for members, total in bins:
            if total[0] + weight <= target:
                members.append(item)
                total[0] += weight
                break
        else:
            bins.append(([item], [weight]))
            if len(bins) > lookback:
                heaviest = max(range(len(bins)), key=lambda i: bins[i][1][0])  # first of equals
                yield bins.pop(heaviest)[0]
    for members, _ in bins:
        yield members


def merge(splits: Sequence[Split]) -> tuple[Split, ...]:
    """``TableScanUtil.mergeTasks``: adjacent splits of one file joined."""
    merged: list[Split] = []
    for split in splits:
        last = merged[-1] if merged else None
        if (last is not None and last.file.location == split.file.location
                and last.start + last.length == split.start):
            merged[-1] = Split(last.file, last.start, last.length + split.length)
        else:
            merged.append(split)
    return tuple(merged)


def plan_task_groups(plan: StatsPlan, parallelism: int,
                     planning: SplitPlanning | None = None) -> list[TaskGroup]:
    """Iceberg's task groups for the plan's data files: one Spark task each, in order; with
    the table's split properties, or those of ``planning`` (what older sketches had)."""
    planning = split_planning(plan) if planning is None else planning
    size = split_size(plan, parallelism, planning)
    splits: list[Split] = []
    weights: list[int] = []
    for f in plan.data_files:
        extra, count = deletes_size(f)
        for split in file_splits(f, size):
            splits.append(split)
            weights.append(max(split.length + extra, (1 + count) * planning.open_file_cost))
    return [TaskGroup(merge(group))
            for group in pack(splits, weights, size, planning.lookback)]
