"""``puffin stats compute``: one Spark job sketches every column of a snapshot's live rows.

Steps (see docs/spark.md):

1. plan the snapshot from the table metadata (:mod:`puffin_cli.spark.planning`);
2. read the data files with Spark's own readers by path, columns matched by Iceberg field ID
   (Parquet field-ID resolution; a column a file lacks reads as null);
3. drop deleted rows: data files with deletes are read with ``_metadata.file_path`` and
   ``_metadata.row_index`` and anti-joined with the (file, position) rows of their position
   delete files (read by Spark, joined to the data file's sequence number) and deletion
   vectors (decoded here, shipped as ranges, expanded by Spark); files without deletes are
   read plainly and the two parts unioned;
4. aggregate: ``theta_sketch_agg(input, 12)`` per column over the inputs of
   :mod:`puffin_cli.spark.expressions`, plus the row count, in one job;
5. turn Spark's compressed compact sketches into Iceberg's uncompressed serial-version-3 bytes
   (:class:`puffin_cli.blobs.theta.CompactTheta`) and write
   ``<table>/metadata/<snapshot-id>-<uuid>.stats`` (one zstd blob per column, ``ndv``).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from puffin_cli.blobs.theta import MAX_THETA, CompactTheta, ThetaAccumulator, hash_values
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.spec import CODEC_ZSTD, NDV_PROPERTY, THETA_BLOB_TYPE
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.spark.expressions import NEGATIVE_ZERO_DOUBLE, sketch_input
from puffin_cli.spark.planning import Column, DataFile, StatsPlan, statistics_location

LG_NOMINAL_ENTRIES = 12  # 4096 entries, Iceberg's default
_FILE = "_puffin_file"
_POS = "_puffin_pos"
# Deletes with at most this many positions are broadcast to the readers of the data.
BROADCAST_POSITIONS = 20_000_000

Progress = Callable[[int, int], None]  # (completed tasks, total tasks)


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


@dataclass(frozen=True)
class Sketches:
    """The Spark job's result: one sketch per column (in plan order) and the live row count."""

    sketches: tuple[CompactTheta, ...]
    rows: int


# --- paths ------------------------------------------------------------------------------------


def spark_paths(spark: Any, local_paths: Sequence[str]) -> list[str]:
    """How Spark's ``_metadata.file_path`` spells each local path: the qualified Hadoop path
    as a URI (URL-encoded), asked of Spark itself, with ``file:///`` written ``file:/`` as
    Hadoop's local file listing does."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    out = []
    for local in local_paths:
        path = jvm.org.apache.hadoop.fs.Path(local)
        qualified = path.getFileSystem(conf).makeQualified(path)
        text = str(qualified.toUri().toString())
        out.append("file:/" + text[len("file:///"):] if text.startswith("file:///") else text)
    return out


# --- reading ----------------------------------------------------------------------------------


def spark_type(column: Column) -> Any:
    from pyspark.sql import types as T

    t = column.type
    simple = {
        "boolean": T.BooleanType(), "int": T.IntegerType(), "long": T.LongType(),
        "time": T.LongType(), "float": T.FloatType(), "double": T.DoubleType(),
        "date": T.DateType(), "timestamp": T.TimestampNTZType(),
        "timestamptz": T.TimestampType(), "string": T.StringType(), "uuid": T.BinaryType(),
        "fixed": T.BinaryType(), "binary": T.BinaryType(),
    }
    if t.name == "decimal":
        assert t.precision is not None and t.scale is not None
        return T.DecimalType(t.precision, t.scale)
    return simple[t.name]


def column_name(field_id: int) -> str:
    return f"c{field_id}"


def read_schema(columns: Sequence[Column]) -> Any:
    """The Spark read schema: one field per column, matched by field ID in Parquet files."""
    from pyspark.sql import types as T

    return T.StructType([
        T.StructField(column_name(c.field_id), spark_type(c), True,
                      {"parquet.field.id": c.field_id}) for c in columns])


def orc_field_names(spark: Any, local: str) -> dict[int, str]:
    """Field ID -> column name of an ORC data file (Iceberg's ``iceberg.id`` type attribute)."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    orc = jvm.org.apache.orc.OrcFile
    reader = orc.createReader(jvm.org.apache.hadoop.fs.Path(local), orc.readerOptions(conf))
    try:
        schema = reader.getSchema()
        out = {}
        for name, child in zip(schema.getFieldNames(), schema.getChildren(), strict=True):
            value = child.getAttributeValue("iceberg.id")
            if value is not None:
                out[int(value)] = str(name)
        return out
    finally:
        reader.close()


def _read_orc(spark: Any, files: Sequence[DataFile], columns: Sequence[Column]) -> list[Any]:
    """ORC files grouped by how they name the wanted field IDs (Spark's ORC reader matches by
    name); a field a file lacks reads as null."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def orc_type(column: Column) -> Any:
        # Spark reads an ORC timestamp (Iceberg's timestamp without zone, written in UTC)
        # only as TIMESTAMP; in the pipeline's UTC session its micros are the same.
        return T.TimestampType() if column.type.name == "timestamp" else spark_type(column)

    groups: dict[tuple[tuple[int, str], ...], list[str]] = {}
    for f in files:
        names = orc_field_names(spark, f.local)
        key = tuple((c.field_id, names[c.field_id]) for c in columns if c.field_id in names)
        groups.setdefault(key, []).append(f.local)
    frames = []
    for key, paths in groups.items():
        physical = dict(key)
        schema = T.StructType([T.StructField(physical[c.field_id], orc_type(c), True)
                               for c in columns if c.field_id in physical])
        frame = spark.read.schema(schema).option("__globPaths__", "false").orc(paths)
        frames.append(frame.select(*[
            (F.col(f"`{physical[c.field_id]}`") if c.field_id in physical
             else F.lit(None).cast(orc_type(c))).alias(column_name(c.field_id))
            for c in columns], "_metadata"))
    return frames


def _read(spark: Any, files: Sequence[DataFile], columns: Sequence[Column]) -> Any:
    """The files' rows: ``c<field id>`` columns and ``_metadata``."""
    # --- equality deletes (puffin_cli/spark/equality.py): files they apply to are read there,
    # without the rows they delete ---
    if any(f.equality_deletes for f in files):
        from puffin_cli.spark.equality import read_with_equality_deletes

        return read_with_equality_deletes(spark, files, columns, _read)
    # --- end equality deletes ---
    parquet = [f.local for f in files if f.file_format == "parquet"]
    frames = []
    if parquet:
        frame = (spark.read.schema(read_schema(columns)).option("__globPaths__", "false")
                 .parquet(*parquet))
        frames.append(frame.select("*", "_metadata"))
    frames.extend(_read_orc(spark, [f for f in files if f.file_format == "orc"], columns))
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame


def _position_deletes(spark: Any, plan: StatsPlan, data_table: Any) -> Any | None:
    """(file, pos) rows of the v2 position delete files, keeping only rows whose data file is
    live and not newer than the delete file."""
    from pyspark.sql import functions as F

    if not plan.position_deletes:
        return None
    by_sequence: dict[tuple[int, str], list[str]] = {}
    for d in plan.position_deletes:
        by_sequence.setdefault((d.sequence_number, d.file_format), []).append(d.local)
    frames = []
    for (sequence, fmt), paths in sorted(by_sequence.items()):
        rows = (spark.read.option("__globPaths__", "false").format(fmt).load(paths)
                .select(F.col("file_path").alias("_loc"), F.col("pos").alias(_POS),
                        F.lit(sequence).alias("_dseq")))
        frames.append(rows)
    rows = frames[0]
    for other in frames[1:]:
        rows = rows.unionByName(other)
    joined = rows.join(F.broadcast(data_table), "_loc")
    return joined.where(F.col("_dseq") >= F.col("_seq")).select(_FILE, _POS)


def _dv_ranges(plan: StatsPlan, spark_path: dict[str, str]) -> tuple[list[str], list[int],
                                                                        list[int]]:
    from puffin_cli.blobs.deletion_vector import decode_deletion_vector, iter_ranges
    from puffin_cli.format.io import RangeFile

    files: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for dv in plan.deletion_vectors:
        with RangeFile(dv.puffin_local) as source:
            data = source.read(dv.offset, dv.length)
        try:
            decoded = decode_deletion_vector(data, dv.offset)
        except PuffinError as exc:
            raise exc.with_path(dv.puffin_local) from None
        target = spark_path[dv.data_file]
        for start, end in iter_ranges(decoded):
            files.append(target)
            starts.append(start)
            ends.append(end)
    return files, starts, ends


def _dv_deletes(spark: Any, plan: StatsPlan, spark_path: dict[str, str]) -> Any | None:
    from pyspark.sql import functions as F

    if not plan.deletion_vectors:
        return None
    import pyarrow as pa

    files, starts, ends = _dv_ranges(plan, spark_path)
    table = pa.table({_FILE: pa.array(files, pa.string()), "_start": pa.array(starts, pa.int64()),
                      "_end": pa.array(ends, pa.int64())})
    ranges = spark.createDataFrame(table)
    return ranges.select(_FILE, F.explode(F.sequence("_start", "_end")).alias(_POS))


def live_rows(spark: Any, plan: StatsPlan, columns: Sequence[Column]) -> Any:
    """A DataFrame of the snapshot's live rows, one column ``c<field id>`` per column."""
    from pyspark.sql import functions as F

    names = [column_name(c.field_id) for c in columns]
    with_deletes: set[str] = {dv.data_file for dv in plan.deletion_vectors}
    if plan.position_deletes:
        newest = max(d.sequence_number for d in plan.position_deletes)
        with_deletes.update(f.location for f in plan.data_files if f.sequence_number <= newest)
    plain = [f for f in plan.data_files if f.location not in with_deletes]
    deleted = [f for f in plan.data_files if f.location in with_deletes]
    parts = []
    if plain:
        parts.append(_read(spark, plain, columns).select(*names))
    if deleted:
        orc = [f.location for f in deleted if f.file_format != "parquet"]
        if orc:
            more = f" (and {len(orc) - 1} more)" if len(orc) > 1 else ""
            raise PuffinError(f"{orc[0]}{more}: position deletes apply to this ORC data file, "
                              "and Spark's ORC reader has no row index to apply them with "
                              "(supported for Parquet data files)", code="stats.orc-deletes")
        paths = spark_paths(spark, [f.local for f in deleted])
        spark_path = {f.location: p for f, p in zip(deleted, paths, strict=True)}
        data_table = spark.createDataFrame(
            [(f.location, spark_path[f.location], f.sequence_number) for f in deleted],
            f"_loc string, {_FILE} string, _seq long")
        deletes = [d for d in (_position_deletes(spark, plan, data_table),
                               _dv_deletes(spark, plan, spark_path)) if d is not None]
        removed = deletes[0]
        for other in deletes[1:]:
            removed = removed.unionByName(other)
        estimate = (sum(d.record_count for d in plan.position_deletes)
                    + sum(dv.cardinality for dv in plan.deletion_vectors))
        if estimate <= BROADCAST_POSITIONS:
            removed = F.broadcast(removed)
        rows = _read(spark, deleted, columns).select(
            *names, F.col("_metadata.file_path").alias(_FILE),
            F.col("_metadata.row_index").alias(_POS))
        parts.append(rows.join(removed, [_FILE, _POS], "left_anti").select(*names))
    frame = parts[0]
    for other in parts[1:]:
        frame = frame.unionByName(other)
    return frame


# --- the job ----------------------------------------------------------------------------------


def _to_compact(sketch_bytes: bytes | None, negative_zero: bool) -> CompactTheta:
    import datasketches
    import numpy as np

    accumulator = ThetaAccumulator()
    if sketch_bytes is not None:
        sketch = datasketches.compact_theta_sketch.deserialize(bytes(sketch_bytes))
        hashes = np.sort(np.fromiter((int(h) for h in sketch), dtype=np.uint64,
                                     count=int(sketch.num_retained)))
        accumulator.add(CompactTheta(int(sketch.theta64), hashes, bool(sketch.is_empty())))
    if negative_zero:
        accumulator.update(hash_values([NEGATIVE_ZERO_DOUBLE]))
    return accumulator.result()


def _run_with_progress(spark: Any, action: Callable[[], Any], progress: Progress | None) -> Any:
    """Run ``action`` (a Spark action) in a thread; report its tasks to ``progress``."""
    if progress is None:
        return action()
    sc = spark.sparkContext
    group = f"puffin-{uuid.uuid4().hex}"
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            sc.setJobGroup(group, "puffin stats compute", interruptOnCancel=True)
            box["value"] = action()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="puffin-spark-job", daemon=True)
    thread.start()
    tracker = sc.statusTracker()
    try:
        while thread.is_alive():
            thread.join(0.25)
            done = total = 0
            for job_id in tracker.getJobIdsForGroup(group) or []:
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job is not None else ():
                    stage = tracker.getStageInfo(stage_id)
                    if stage is not None:
                        done += stage.numCompletedTasks
                        total += stage.numTasks
            progress(done, total)
    except KeyboardInterrupt:
        sc.cancelJobGroup(group)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


def compute_sketches(spark: Any, plan: StatsPlan, *, uuid_as_string: bool = False,
                     progress: Progress | None = None) -> Sketches:
    """Run the one aggregation job over the plan's live rows."""
    from pyspark.sql import functions as F

    columns = plan.columns
    if not plan.data_files:
        return Sketches(tuple(_to_compact(None, False) for _ in columns), 0)
    frame = live_rows(spark, plan, columns)
    projections: list[Any] = []
    aggregates: list[Any] = [F.count(F.lit(1)).alias("_rows")]
    flagged: list[int] = []
    for index, column in enumerate(columns):
        spec = sketch_input(column_name(column.field_id), column.type,
                            uuid_as_string=uuid_as_string)
        projections.append(F.expr(spec.projection).alias(f"v{index}"))
        aggregates.append(F.expr(f"theta_sketch_agg(v{index}, {LG_NOMINAL_ENTRIES})")
                          .alias(f"s{index}"))
        if spec.negative_zero is not None:
            projections.append(F.expr(f"CAST({spec.negative_zero} AS INT)").alias(f"z{index}"))
            aggregates.append(F.max(f"z{index}").alias(f"z{index}"))
            flagged.append(index)
    job = frame.select(*projections).agg(*aggregates)
    row = _run_with_progress(spark, lambda: job.collect()[0], progress)
    sketches = tuple(
        _to_compact(row[f"s{i}"], i in flagged and bool(row[f"z{i}"]))
        for i in range(len(columns)))
    return Sketches(sketches, int(row["_rows"]))


# --- writing ----------------------------------------------------------------------------------


def write_statistics(plan: StatsPlan, sketches: Sketches, *, file_name: str | None = None
                     ) -> tuple[str, str, int, int]:
    """Write the statistics file; (local path, location for the metadata, size, footer)."""
    snapshot = plan.snapshot
    name = file_name or f"{snapshot.snapshot_id}-{uuid.uuid4()}.stats"
    directory = plan.statistics_dir
    os.makedirs(directory, exist_ok=True)
    target = directory / name
    with PuffinWriter(target) as writer:
        for column, sketch in zip(plan.columns, sketches.sketches, strict=True):
            writer.add_blob(THETA_BLOB_TYPE, sketch.to_bytes(), fields=[column.field_id],
                            snapshot_id=snapshot.snapshot_id,
                            sequence_number=snapshot.sequence_number,
                            properties={NDV_PROPERTY: str(sketch.ndv)}, codec=CODEC_ZSTD)
        result = writer.finish()
    mapper_location = statistics_location(plan.metadata, plan.table_dir, name)
    return str(target), mapper_location, result.file_size, result.footer_size


def column_stats(plan: StatsPlan, sketches: Sketches) -> tuple[ColumnStats, ...]:
    return tuple(
        ColumnStats(c.field_id, c.name, str(c.type), s.ndv, s.estimate, s.retained,
                    s.theta_long >= MAX_THETA, s.theta_long)
        for c, s in zip(plan.columns, sketches.sketches, strict=True))


def compute_table_stats(table: str | os.PathLike[str], *, columns: list[str] | None = None,
                        snapshot_id: int | None = None, master: str | None = None,
                        uuid_as_string: bool = False, commit: bool = False,
                        relocate: list[tuple[str, str]] | None = None,
                        quiet_spark: bool = True,
                        on_phase: Callable[[str], None] | None = None,
                        progress: Progress | None = None) -> StatsResult:
    """Plan, sketch, write the statistics file and (with ``commit``) register it."""
    from puffin_cli.spark.planning import choose_snapshot, load_table, plan_snapshot
    from puffin_cli.spark.session import get_session

    start = time.monotonic()
    phase = on_phase or (lambda _text: None)
    phase("reading table metadata")
    metadata, table_dir, mapper = load_table(table, relocate)
    snapshot = choose_snapshot(metadata, snapshot_id)
    plan = plan_snapshot(metadata, table_dir, mapper, snapshot, columns)
    if not plan.columns:
        raise PuffinError(f"{table}: no column of a supported primitive type to sketch",
                          code="stats.column")
    phase("starting Spark")
    spark = get_session(master, quiet=quiet_spark)
    phase(f"sketching {len(plan.columns)} columns of {len(plan.data_files)} data files")
    sketches = compute_sketches(spark, plan, uuid_as_string=uuid_as_string, progress=progress)
    phase("writing the statistics file")
    path, location, size, footer = write_statistics(plan, sketches)
    version = None
    if commit:
        from puffin_cli.analysis.commit import StatisticsFileEntry, commit_statistics

        phase("committing")
        entry = StatisticsFileEntry.for_blobs(snapshot.snapshot_id, location, size, footer,
                                              _blob_entries(plan, sketches))
        version = commit_statistics(table_dir, entry).version
    return StatsResult(
        table=str(table), snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot.sequence_number, schema_id=plan.schema_id,
        columns=column_stats(plan, sketches), skipped_columns=plan.skipped,
        rows_read=sketches.rows, data_files=len(plan.data_files),
        position_delete_files=len(plan.position_deletes),
        deletion_vectors=len(plan.deletion_vectors),
        statistics_path=path,
        statistics_location=location, file_size=size, footer_size=footer,
        seconds=round(time.monotonic() - start, 3), committed_version=version)


def _blob_entries(plan: StatsPlan, sketches: Sketches) -> list[dict[str, Any]]:
    snapshot = plan.snapshot
    return [{"type": THETA_BLOB_TYPE, "snapshot-id": snapshot.snapshot_id,
             "sequence-number": snapshot.sequence_number, "fields": [c.field_id],
             "properties": {NDV_PROPERTY: str(s.ndv)}}
            for c, s in zip(plan.columns, sketches.sketches, strict=True)]
