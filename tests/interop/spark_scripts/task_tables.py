"""Tables whose Spark scans exercise Iceberg's task-group planning, with the layout Iceberg's
Spark 3.5 source gives each (built and read by Iceberg 1.10.2).

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python task_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/<table>: the tables below. OUT_DIR/tables.json, per table:
        ``partitions``: for each Spark input partition of ``spark.table(...)`` (in order), the
        runs of consecutive rows from one data file, as ``[file, [_pos, ...]]``;
        ``deletes``: per data file, the delete files Iceberg's scan planning attaches to it.

Every table is written so that its snapshot has one data manifest (one commit of data, or
``rewrite_manifests``): with several, Iceberg plans manifests in parallel and the order of its
scan tasks varies. Data files are written one per Spark task (``write.distribution-mode`` none)
with rows ``id, cat = id % 3, name, pad`` (``pad``: 64 hex characters, so sizes follow row
counts). Tables (format 2 unless told):

- ``t_default``: 11 files of different sizes, default split properties (split size 16 MiB after
  the adaptive adjustment, open-file cost 4 MiB: four files a task);
- ``t_sizes``: 14 files, ``read.split.target-size`` 8000, open-file cost 600, lookback 3;
- ``t_part``: partitioned by ``cat``, 6 tasks x 3 partitions, target 8000, cost 600;
- ``t_pos_file``: merge-on-read DELETE writing file-scoped position delete files;
- ``t_pos_part``: partitioned, ``write.delete.granularity`` partition (partition-scoped position
  deletes), then more rows (newer than the deletes), then ``rewrite_manifests``;
- ``t_dv``: format 3, DELETEs writing deletion vectors (one rewritten by a second DELETE);
- ``t_eq``: equality delete files (Java API): one on ``id`` overlapping one file's id range,
  one deleting NULL names (only files with null names get it), one on a name above every
  file's upper bound (no file gets it);
  ``t_dv`` and ``t_eq`` have an open-file cost (20000) above most files' sizes, so a task's
  weight counts its attached delete files;
- ``t_splits``: small row groups (``write.parquet.row-group-size-bytes`` 4096) and target
  20000: files split at their row groups, packed and merged back;
- ``t_fixed``: the files of ``t_fixed_stage`` (small row groups) appended without split offsets:
  fixed-size splits of the target size 9000, row groups taken by their midpoint.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from script_common import load_table, session, write_equality_delete

SCHEMA = "id INT, cat INT, name STRING, pad STRING"
TABLES = ("t_default", "t_sizes", "t_part", "t_pos_file", "t_pos_part", "t_dv", "t_eq",
          "t_splits", "t_fixed")


def _row(i: int) -> tuple[int, int, str | None, str]:
    name = None if i >= 1000 and i % 11 == 0 else f"n{i % 97:02d}"
    return i, i % 3, name, hashlib.sha256(str(i).encode()).hexdigest()


def frame(spark: SparkSession, sizes: list[int], start: int = 0) -> DataFrame:
    """One Spark partition per entry of ``sizes``, with that many rows (ids from ``start``)."""
    firsts = []
    for size in sizes:
        firsts.append((start, size))
        start += size
    rdd = spark.sparkContext.parallelize(firsts, len(firsts)).flatMap(
        lambda t: [_row(i) for i in range(t[0], t[0] + t[1])])
    return spark.createDataFrame(rdd, SCHEMA)


def create(spark: SparkSession, name: str, props: dict[str, str], version: int = 2,
           partitioned: bool = False) -> str:
    table = f"local.db.{name}"
    all_props = {"format-version": str(version), "write.distribution-mode": "none",
                 "write.delete.mode": "merge-on-read", **props}
    text = ", ".join(f"'{k}'='{v}'" for k, v in all_props.items())
    spark.sql(f"CREATE TABLE {table} ({SCHEMA}) USING iceberg "
              f"{'PARTITIONED BY (cat) ' if partitioned else ''}TBLPROPERTIES ({text})")
    return table






def build_tables(spark: SparkSession) -> None:
    small = {"read.split.target-size": "8000", "read.split.open-file-cost": "600"}
    frame(spark, [40, 700, 15, 300, 90, 1200, 5, 60, 450, 30, 800]).writeTo(
        create(spark, "t_default", {})).append()
    frame(spark, [50, 900, 10, 400, 20, 30, 700, 120, 250, 60, 5, 800, 35, 140]).writeTo(
        create(spark, "t_sizes", {**small, "read.split.planning-lookback": "3"})).append()
    frame(spark, [120, 600, 45, 300, 900, 75]).writeTo(
        create(spark, "t_part", small, partitioned=True)).append()

    deletes = {"read.split.target-size": "10000", "read.split.open-file-cost": "1500"}
    t = create(spark, "t_pos_file", deletes)
    frame(spark, [300, 80, 500, 150, 40, 260, 90, 700]).writeTo(t).append()
    spark.sql(f"DELETE FROM {t} WHERE id % 5 = 0 AND id < 1300")
    t = create(spark, "t_pos_part", {**deletes, "write.delete.granularity": "partition"},
               partitioned=True)
    frame(spark, [300, 80, 500, 150]).writeTo(t).append()
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    frame(spark, [200, 60, 90], start=5000).writeTo(t).append()
    spark.sql("CALL local.system.rewrite_manifests(table => 'db.t_pos_part')")
    # open-file cost 20000, above most files' sizes: each attached delete file adds a cost
    by_count = {"read.split.target-size": "60000", "read.split.open-file-cost": "20000"}
    t = create(spark, "t_dv", by_count, version=3)
    frame(spark, [300, 80, 500, 150, 40, 260, 90, 700]).writeTo(t).append()
    spark.sql(f"DELETE FROM {t} WHERE id % 6 = 0 AND id < 900")
    spark.sql(f"DELETE FROM {t} WHERE id % 9 = 1 AND id < 400")

    t = create(spark, "t_eq", by_count)
    frame(spark, [100, 300, 60, 500, 200, 40, 700, 150]).writeTo(t).append()
    files = [write_equality_delete(spark, "t_eq", ["id"], [(3,), (5,)], "eq-id"),
             write_equality_delete(spark, "t_eq", ["name"], [(None,)], "eq-null-name"),
             write_equality_delete(spark, "t_eq", ["name"], [("zzz",)], "eq-above")]
    delta = load_table(spark, "t_eq").newRowDelta()
    for f in files:
        delta = delta.addDeletes(f)
    delta.commit()

    row_groups = {"write.parquet.row-group-size-bytes": "4096",
                  "read.split.open-file-cost": "1000"}
    frame(spark, [2000, 700, 1500, 300, 1100]).writeTo(create(spark, "t_splits", {
        **row_groups, "read.split.target-size": "20000",
        "read.split.planning-lookback": "4"})).append()
    frame(spark, [1500, 900, 400]).writeTo(
        create(spark, "t_fixed_stage", row_groups)).append()
    create(spark, "t_fixed", {**row_groups, "read.split.target-size": "9000"})
    copy_without_offsets(spark, "t_fixed_stage", "t_fixed")


def copy_without_offsets(spark: SparkSession, source: str, target: str) -> None:
    """Append ``source``'s data files to ``target`` (same schema, unpartitioned) with their
    split offsets left out."""
    jvm: Any = spark._jvm
    dst = load_table(spark, target)
    tasks = load_table(spark, source).newScan().planFiles()
    iterator = tasks.iterator()
    append = dst.newAppend()
    while iterator.hasNext():
        f = iterator.next().file()
        append = append.appendFile(jvm.org.apache.iceberg.DataFiles.builder(dst.spec())
                                   .copy(f).withSplitOffsets(None).build())
    tasks.close()
    append.commit()


def planned_deletes(spark: SparkSession, name: str) -> dict[str, list[str]]:
    """Data file -> the delete files Iceberg's scan planning attaches to it."""
    out: dict[str, list[str]] = {}
    tasks = load_table(spark, name).newScan().planFiles()
    iterator = tasks.iterator()
    while iterator.hasNext():
        task = iterator.next()
        out[str(task.file().location())] = sorted(str(d.location()) for d in task.deletes())
    tasks.close()
    return out


def _runs(index: int, rows: Any) -> Any:
    runs: list[list[Any]] = []
    for row in rows:
        if runs and runs[-1][0] == row[1]:
            runs[-1][1].append(int(row[2]))
        else:
            runs.append([row[1], [int(row[2])]])
    yield index, runs


def layout(spark: SparkSession, name: str) -> list[list[list[Any]]]:
    """Per Spark input partition, the runs of rows of one data file: [file, [_pos, ...]]."""
    frame = spark.table(f"local.db.{name}").select("id", "_file", "_pos")
    parts = dict(frame.rdd.mapPartitionsWithIndex(_runs).collect())
    return [parts[i] for i in range(len(parts))]


def build(out: Path, conf: dict[str, str]) -> None:
    spark = session("puffin-cli task tables", conf)
    build_tables(spark)
    doc = {name: {"partitions": layout(spark, name), "deletes": planned_deletes(spark, name)}
           for name in TABLES}
    (out / "tables.json").write_text(json.dumps(doc, indent=1, sort_keys=True))
    spark.stop()


def main() -> None:
    build(Path(sys.argv[2]), json.loads(sys.argv[3]))


if __name__ == "__main__":
    main()
