"""What one Spark task of ``puffin stats compute`` runs: read its file slices in order, drop
deleted rows, and feed one Alpha Theta sketch per column, as Iceberg Java's ``ThetaSketchAgg``
does over the same rows (see :mod:`puffin_cli.blobs.theta`).

Pure Python (pyarrow, numpy, fastavro; no pyspark): the driver builds :class:`TaskSpec` objects
and Spark calls :func:`sketch_task` in its Python workers, so everything here pickles.

Reading: :mod:`.data_files`; deletes: :mod:`.row_deletes`.

Each column is serialized and hashed by :mod:`puffin_cli.blobs.arrow_values` (converted to
the column's current Iceberg type first), in chunks of :data:`.data_files.CHUNK_ROWS` rows;
nulls and empty strings or binaries are skipped.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.data_files import SliceSpec, read_batches
from puffin_cli.analysis.stats.files import (
    Column,
)
from puffin_cli.analysis.stats.options import UuidHash
from puffin_cli.analysis.stats.row_deletes import RowDeletes, equality_keep
from puffin_cli.blobs.arrow_values import SerializedColumn, serialize_column
from puffin_cli.blobs.theta import AlphaSketch, CompactTheta
from puffin_cli.errors import PuffinError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

    from puffin_cli.analysis.stats.plan import StatsPlan
    from puffin_cli.analysis.stats.task_groups import TaskGroup

    BoolArray = npt.NDArray[np.bool_]


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class TaskSpec:
    slices: tuple[SliceSpec, ...]
    columns: tuple[Column, ...]
    uuid_as_string: bool = False


def task_specs(plan: StatsPlan, groups: Sequence[TaskGroup], *,
               uuid_hash: UuidHash = UuidHash.TEXT) -> list[TaskSpec]:
    """One :class:`TaskSpec` per Iceberg task group: its splits in order, each with the
    deletes that apply to its data file (the task reads every file's own schema)."""
    return [TaskSpec(tuple(SliceSpec(
        location=split.file.location, local=split.file.local,
        file_format=split.file.file_format, start=split.start, length=split.length,
        split_offsets=split.file.split_offsets, deletion_vector=split.file.deletion_vector,
        position_deletes=split.file.position_deletes,
        equality_deletes=split.file.equality_deletes, name_mapping=plan.name_mapping,
        constants=split.file.constants, fileio=plan.table.fileio) for split in group.splits),
        plan.columns, uuid_hash.as_text)
        for group in groups]


@dataclass(frozen=True)
class TaskResult:
    rows: int  # live rows read
    sketches: tuple[CompactTheta, ...]  # per column of the task, in order


@dataclass(frozen=True)
class TaskFailure:
    """A :class:`PuffinError` raised in a Spark task, returned as a value by :func:`run_task`."""

    message: str
    code: str
    path: str | None
    offset: int | None

    def error(self) -> PuffinError:
        return PuffinError(self.message, code=self.code, path=self.path, offset=self.offset)


_CONSTANT_TYPES = {"boolean": "bool_", "int": "int32", "long": "int64", "float": "float32",
                   "double": "float64", "date": "int32", "time": "int64", "timestamp": "int64",
                   "timestamptz": "int64", "string": "string", "binary": "binary",
                   "fixed": "binary", "uuid": "binary"}


def _constant(column: Column, value: Any, rows: int) -> Any:
    """``rows`` copies of an identity partition value (as fastavro decoded it from the
    manifest) as the column's Arrow values: what Iceberg's readers give for such a column,
    whether the file stores it or not."""
    import uuid

    import pyarrow as pa

    if value is None:
        return pa.nulls(rows)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        value = (value - _EPOCH) // datetime.timedelta(microseconds=1)
    elif isinstance(value, datetime.date):
        value = (value - _EPOCH.date()).days
    elif isinstance(value, datetime.time):
        value = (((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
                 + value.microsecond)
    elif isinstance(value, uuid.UUID):
        value = value.bytes
    kind = column.type  # one of planning.SUPPORTED_TYPES
    arrow = (pa.decimal128(kind.precision or 38, kind.scale or 0) if kind.name == "decimal"
             else getattr(pa, _CONSTANT_TYPES[kind.name])())
    return pa.repeat(pa.scalar(value, arrow), rows)


def _serialize(s: SliceSpec, column: Column, arrays: dict[int, Any], rows: int,
               uuid_as_string: bool) -> SerializedColumn:
    """:func:`serialize_column`, its errors naming the file and the column."""
    try:
        return serialize_column(column.type, arrays.get(column.field_id), rows, uuid_as_string)
    except PuffinError as exc:
        raise PuffinError(f"column {column.name} (field {column.field_id}): {exc.message}",
                          code=exc.code, path=s.local) from None


def sketch_task(spec: TaskSpec) -> TaskResult:
    """Read the task's slices in order and sketch every column of the live rows."""
    import numpy as np

    sketches = [AlphaSketch() for _ in spec.columns]
    by_id = {c.field_id: c for c in spec.columns}
    deletes = RowDeletes()
    live = 0
    for s in spec.slices:
        deleted = deletes.positions(s)
        equality = [(d, deletes.equality_keys(d, s.fileio)) for d in s.equality_deletes]
        equality = [(d, k) for d, k in equality if k is not None]
        reading: dict[int, Column] = {}
        for c in [*spec.columns, *(c for d, _ in equality for c in d.columns)]:
            reading.setdefault(c.field_id, c)
        for first, rows, arrays in read_batches(s, list(reading.values())):
            for field_id, value in s.constants:
                if field_id in reading:
                    arrays[field_id] = _constant(reading[field_id], value, rows)
            keep = np.ones(rows, dtype=bool)
            low, high = np.searchsorted(deleted, [first, first + rows])
            keep[deleted[low:high] - first] = False
            serialized = {c.field_id: _serialize(s, c, arrays, rows, spec.uuid_as_string)
                          for c in spec.columns}
            # the sketch serialization serves equality too, except uuids hashed as text
            reusable = {c.field_id: serialized[c.field_id] for c in spec.columns
                        if not (spec.uuid_as_string and c.type.name == "uuid")}
            for d, keys in equality:
                keep &= equality_keep(d, keys, arrays, rows, {
                    c.field_id: reusable[c.field_id] for c in d.columns
                    if c.field_id in reusable and by_id[c.field_id].type == c.type})
            live += int(keep.sum())
            for sketch, c in zip(sketches, spec.columns, strict=True):
                sketch.update(serialized[c.field_id].hashes(keep))
    return TaskResult(live, tuple(s.result() for s in sketches))


def run_task(spec: TaskSpec) -> TaskResult | TaskFailure:
    """:func:`sketch_task` as a Spark task runs it: a bad or missing file comes back as a
    value, so that the driver reports it as one line (an exception would reach the driver as
    the worker's traceback, after Spark retried the task in vain). Each slice carries its
    table's FileIO, shipped with the task: the executor reads the data, delete and Puffin
    files itself with it."""
    try:
        return sketch_task(spec)
    except PuffinError as exc:
        return TaskFailure(exc.message, exc.code, exc.path, exc.offset)
