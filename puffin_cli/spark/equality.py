"""Applying equality delete files in Spark (``puffin stats compute``).

The plan (:mod:`puffin_cli.spark.planning`) lists, for each live data file, the equality delete
files that apply to it. Here, in the JVM (joins, no Python per row):

1. the data files with equality deletes are read by the pipeline's own reader with the
   sketched columns plus every equality column (matched by field ID; a column a file lacks
   reads as null, as the spec's projection rules say), then tagged, through a broadcast join
   on ``_metadata.file_path``, with their data sequence number and partition key;
2. the delete files are grouped by their set of equality field IDs; each group's files are
   read once (Parquet, the equality columns by field ID) and tagged, through a join on their
   own ``_metadata.file_path``, with their sequence number and partition key (null for a
   global delete);
3. per group, a ``left_anti`` join drops the data rows equal to a delete row on every equality
   column, **null-safe** (``<=>``: the spec's "a null value in a delete column matches a row
   if the row's value is null"), where the data sequence number is lower than the delete's
   and the delete is global or of the same partition key.

The result has the reader's columns (``c<field id>`` and ``_metadata``), so position deletes
and deletion vectors apply to it afterwards exactly as to a plain read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import reduce
from typing import Any

from puffin_cli.format.errors import PuffinError
from puffin_cli.spark.planning import Column, DataFile, EqualityDeleteFile
from puffin_cli.spark.stats import column_name, spark_paths, spark_type

# Groups of delete files with at most this many rows in all are broadcast to the data readers.
BROADCAST_DELETE_ROWS = 5_000_000
_FILE = "_eq_file"
_SEQ = "_eq_seq"
_PART = "_eq_part"
_DELETE_SEQ = "_eq_delete_seq"
_DELETE_PART = "_eq_delete_part"

Reader = Callable[[Any, Sequence[DataFile], Sequence[Column]], Any]


def delete_column_name(field_id: int) -> str:
    return f"e{field_id}"


def equality_groups(files: Sequence[DataFile]
                    ) -> dict[tuple[int, ...], list[EqualityDeleteFile]]:
    """The distinct delete files applying to ``files``, by sorted equality field IDs."""
    seen: dict[str, EqualityDeleteFile] = {}
    for f in files:
        for d in f.equality_deletes:
            seen.setdefault(d.location, d)
    groups: dict[tuple[int, ...], list[EqualityDeleteFile]] = {}
    for d in seen.values():
        groups.setdefault(tuple(sorted(c.field_id for c in d.columns)), []).append(d)
    return groups


def check_delete_file_columns(delete: EqualityDeleteFile) -> None:
    """The delete file's Parquet schema has every equality field ID (a missing column would
    read as null and delete the data rows whose value is null)."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(delete.local)
    except (OSError, ValueError) as exc:
        raise PuffinError(f"cannot read the equality delete file's Parquet schema: {exc}",
                          code="stats.equality-deletes", path=delete.location) from None
    present = set()
    for field in schema:
        value = (field.metadata or {}).get(b"PARQUET:field_id")
        if value is not None:
            present.add(int(value))
    missing = [c for c in delete.columns if c.field_id not in present]
    if missing:
        names = ", ".join(f"{c.name} (field {c.field_id})" for c in missing)
        raise PuffinError(f"{delete.location}: equality delete file has no column {names} of "
                          "its equality_ids", code="stats.equality-deletes")


def _deletes(spark: Any, ids: tuple[int, ...], deletes: Sequence[EqualityDeleteFile]) -> Any:
    """One group's delete rows: ``e<field id>`` per equality column, sequence number and
    partition key of the file each row comes from."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = {c.field_id: c for d in deletes for c in d.columns}
    schema = T.StructType([
        T.StructField(delete_column_name(i), spark_type(columns[i]), True,
                      {"parquet.field.id": i}) for i in ids])
    paths = spark_paths(spark, [d.local for d in deletes])
    tags = spark.createDataFrame(
        [(p, d.sequence_number, d.partition_key) for p, d in zip(paths, deletes, strict=True)],
        f"{_FILE} string, {_DELETE_SEQ} long, {_DELETE_PART} int")
    rows = (spark.read.schema(schema).option("__globPaths__", "false")
            .parquet(*[d.local for d in deletes])
            .select(*[delete_column_name(i) for i in ids],
                    F.col("_metadata.file_path").alias(_FILE)))
    return rows.join(F.broadcast(tags), _FILE).drop(_FILE)


def read_with_equality_deletes(spark: Any, files: Sequence[DataFile], columns: Sequence[Column],
                               read: Reader) -> Any:
    """What ``read(spark, files, columns)`` gives (``c<field id>`` columns and ``_metadata``)
    without the rows the files' equality deletes remove. ``read`` is the pipeline's reader
    (it is called with files stripped of their equality deletes)."""
    from pyspark.sql import functions as F

    plain = [f for f in files if not f.equality_deletes]
    affected = [f for f in files if f.equality_deletes]
    groups = equality_groups(affected)
    for group in groups.values():
        for delete in group:
            check_delete_file_columns(delete)
    wanted = {c.field_id for c in columns}
    extra: dict[int, Column] = {}
    for group in groups.values():
        for delete in group:
            for c in delete.columns:
                if c.field_id not in wanted:
                    extra.setdefault(c.field_id, c)
    names = [column_name(c.field_id) for c in columns]
    paths = spark_paths(spark, [f.local for f in affected])
    tags = spark.createDataFrame(
        [(p, f.sequence_number, f.partition_key) for p, f in zip(paths, affected, strict=True)],
        f"{_FILE} string, {_SEQ} long, {_PART} int")
    rows = read(spark, [replace(f, equality_deletes=()) for f in affected],
                [*columns, *extra.values()])
    rows = (rows.withColumn(_FILE, F.col("_metadata.file_path"))
            .join(F.broadcast(tags), _FILE).drop(_FILE))
    for ids, group in sorted(groups.items()):
        deletes = _deletes(spark, ids, group)
        if sum(d.record_count for d in group) <= BROADCAST_DELETE_ROWS:
            deletes = F.broadcast(deletes)
        condition = reduce(lambda a, b: a & b, [
            F.col(column_name(i)).eqNullSafe(F.col(delete_column_name(i))) for i in ids])
        condition = (condition & (F.col(_SEQ) < F.col(_DELETE_SEQ))
                     & (F.col(_DELETE_PART).isNull() | (F.col(_DELETE_PART) == F.col(_PART))))
        rows = rows.join(deletes, condition, "left_anti")
    frame = rows.select(*names, "_metadata")
    if plain:
        frame = read(spark, plain, columns).unionByName(frame)
    return frame
