"""Tables for the ``puffin stats compute`` tests, built and checked by Iceberg Java (Spark 3.5).

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli. The
driver JVM plans scans without Iceberg's worker pool (``ICEBERG_SCAN_PLAN_IN_WORKER_POOL``
false): in the pool, manifests read at the same time deliver their files in an order that
changes from run to run (a race), so Iceberg's own tasks, and its estimation-mode sketches,
would be those of an order nobody can replay (docs/spark.md, "Where the bytes can still
differ"). Every table's data files are written with a fixed number of Spark tasks per INSERT
(``range(..., N)``, ``write.distribution-mode`` none), so the layout does not depend on the
machine.

    python stats_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/<table>: every table below, each ending with Iceberg's own
        ``compute_table_stats`` on its current snapshot (the reference statistics file,
        registered in the table metadata). OUT_DIR/tables.json: per table, the current
        snapshot, its live row count, the statistics Iceberg registered, ``groups``: the task
        groups Iceberg's Spark scan of the current snapshot plans in the session that ran
        ``compute_table_stats`` (per Spark input partition, its splits in order, as
        ``[data file, start, length]``), and ``parallelism``: that session's planning
        parallelism (``max(defaultParallelism, spark.sql.shuffle.partitions)``).
    python stats_tables.py bench OUT_DIR CONF_JSON ROWS
        OUT_DIR/warehouse/db/bench: the benchmark table of benchmarks/bench_spark.py (format 3,
        ROWS rows in 16 files, columns long, int, double, string, date, decimal; a DELETE of
        about 1% of the rows writing deletion vectors), then Iceberg's ``compute_table_stats``;
        OUT_DIR/bench.json: live rows, that call's wall time and Iceberg's NDVs.
    python stats_tables.py stats CONF_JSON TABLE...
        prints, per table, the statistics files Iceberg Java's ``Table.statisticsFiles()``
        lists and, for each blob, its column and ``ndv`` property (JSON on stdout).

Tables (all with nulls, repeated values, ``-0.0``, ``NaN``, empty strings, negative decimals):
- ``types_v2``: format 2, merge-on-read DELETE (position delete files), a renamed column, a
  column added after the first files were written (null in the older files).
- ``types_v3``: format 3, DELETEs writing deletion vectors, partitioned, renamed column.
- ``orc_v2``: like ``types_v2`` with ORC data files (and ORC position delete files).
- ``avro_v2``: like ``types_v2`` with Avro data files (and Avro position delete files).
- ``uuid_v2``: a uuid column (created through the Java API), estimation mode, a DELETE.
- ``wide_v2``: 60,000 rows in 4 INSERTs of 2 files each, a merge-on-read DELETE (one
  file-scoped position delete file per data file), estimation mode (more than 4096 distinct
  values).
- ``layout_*``: the rows of ``wide_v2`` (4 INSERTs, 4 data manifests) plus ``b``, the INSERT's
  number, and ``p``, the row's data file within its INSERT (its Spark task), in other layouts
  (:data:`LAYOUTS`): files per INSERT, which DELETEs, split properties, parallelism. Each
  gives other task groups (delete files weigh in the bin packing, files of several manifests
  share tasks), and ``m`` (5,000 distinct values in every task) is in estimation mode, where
  the groups decide the sketch.
- ``groups_v2``: Iceberg's statistics of a base (6,000 rows in 2 files, read in one task),
  then an append of 300 rows in 1 file, whose target task groups differ from the base's (all
  three files in one task); Iceberg's ``compute_table_stats`` of the target is the oracle
  (``oracle`` in tables.json, its entry removed again so that the base's is the newest):
  ``id`` in estimation mode, ``city`` (40 values) and ``n`` (1,000 values) exact, ``n4``
  (4,000 values in the base, none new) exact but near the nominal 4,096 entries.
- ``migrated_v2``: plain Parquet files (no field IDs) added with ``add_files`` (which sets the
  name mapping), a rename (the mapping then gives both names), Iceberg-written files, a DELETE.
- ``positional_v2``: plain Parquet files whose column names are not the table's, added with
  ``add_files``, then the name mapping removed: Iceberg reads them by position.
- ``orc_unmapped_v2``: plain ORC files added with ``add_files``, a rename, the name mapping
  removed: Iceberg reads them by the read schema's names (the renamed column reads as nulls).
- ``hive_v2``: Hive-style partition directories (``cat=1/region=east``) added with
  ``add_files``: the identity partition columns are not in the files, Iceberg reads them from
  the partition values in the manifests.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from script_common import create_table, load_table, session

COLUMNS = ("i INT, l BIGINT, d DOUBLE, f FLOAT, s STRING, dt DATE, dec DECIMAL(10,2), "
           "big DECIMAL(30,4), ts TIMESTAMP, tsn TIMESTAMP_NTZ, b BOOLEAN, bin BINARY")


def rows(start: int, count: int) -> str:
    """Rows with nulls, repeats and the special values named in the module docstring."""
    return f"""
        SELECT
          CASE WHEN id % 17 = 0 THEN NULL ELSE CAST(id % 301 - 150 AS INT) END AS i,
          id * 7919 - 500000 AS l,
          CASE WHEN id % 50 = 1 THEN CAST('NaN' AS DOUBLE) WHEN id % 50 = 2 THEN -0.0D
               WHEN id % 50 = 3 THEN 0.0D ELSE (id % 997) / 3.0D END AS d,
          CASE WHEN id % 40 = 5 THEN -0.0F ELSE CAST((id % 613) / 7.0 AS FLOAT) END AS f,
          CASE WHEN id % 23 = 0 THEN '' WHEN id % 29 = 0 THEN NULL
               ELSE concat('s', CAST(id % 1201 AS STRING), '-é') END AS s,
          date_add(DATE'2023-12-25', CAST(id % 400 AS INT) - 200) AS dt,
          CAST((id % 2003 - 1000) / 100.0 AS DECIMAL(10,2)) AS dec,
          CAST((id % 1500 - 700) * 123456789.0123 AS DECIMAL(30,4)) AS big,
          TIMESTAMP'2024-03-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, (id % 777) * 61.5)
            AS ts,
          CAST(TIMESTAMP'2001-01-01 00:00:00' + make_interval(0, 0, 0, 0, CAST(id % 500 AS INT),
            0, 0) AS TIMESTAMP_NTZ) AS tsn,
          CASE WHEN id % 31 = 0 THEN NULL ELSE id % 3 = 0 END AS b,
          CASE WHEN id % 37 = 0 THEN X'' ELSE unhex(hex(id % 509)) END AS bin
        FROM range({start}, {start + count})"""


def _java_list(values: Any) -> list[Any]:
    """A Java collection's elements (py4j iterates only lists and arrays by itself)."""
    if values is None:
        return []
    if not hasattr(values, "iterator"):
        return list(values)
    items, iterator = [], values.iterator()
    while iterator.hasNext():
        items.append(iterator.next())
    return items


def statistics(spark: SparkSession, name: str) -> dict[str, Any]:
    jvm = spark._jvm  # type: ignore[attr-defined]
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"local.db.{name}")  # type: ignore[attr-defined]
    current = table.currentSnapshot()
    schema = table.schema()
    stats = []
    for sf in _java_list(table.statisticsFiles()):
        blobs = []
        for bm in _java_list(sf.blobMetadata()):
            fields = [int(f) for f in _java_list(bm.fields())]
            blobs.append({"type": bm.type(), "snapshot-id": int(bm.sourceSnapshotId()),
                          "sequence-number": int(bm.sourceSnapshotSequenceNumber()),
                          "fields": fields, "columns": [schema.findColumnName(f) for f in fields],
                          "properties": dict(bm.properties())})
        stats.append({"snapshot-id": int(sf.snapshotId()), "path": sf.path(),
                      "file-size-in-bytes": int(sf.fileSizeInBytes()),
                      "file-footer-size-in-bytes": int(sf.fileFooterSizeInBytes()),
                      "blobs": blobs})
    return {"current-snapshot-id": None if current is None else int(current.snapshotId()),
            "statistics": stats}


def create(spark: SparkSession, name: str, version: int, extra: str = "",
           partitioned: str = "") -> str:
    t = f"local.db.{name}"
    spark.sql(f"CREATE TABLE {t} ({COLUMNS}) USING iceberg {partitioned} TBLPROPERTIES "
              f"('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
              f"'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'{extra})")
    return t


def evolve(spark: SparkSession, t: str) -> None:
    """Rename a column and add one: later files have it, earlier ones do not."""
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN s TO s_renamed")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN added BIGINT")


def types_table(spark: SparkSession, name: str, version: int, extra: str = "") -> None:
    t = create(spark, name, version, extra)
    spark.sql(f"INSERT INTO {t} {rows(0, 2500)}")
    spark.sql(f"INSERT INTO {t} {rows(2500, 1500)}")
    spark.sql(f"DELETE FROM {t} WHERE l % 13 = 0")
    evolve(spark, t)
    spark.sql(f"INSERT INTO {t} SELECT *, CAST(i AS BIGINT) * 3 AS added "
              f"FROM ({rows(4000, 700)})")
    spark.sql(f"DELETE FROM {t} WHERE i = 7 OR s_renamed = 's5-é'")
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}')")


def dv_table(spark: SparkSession) -> None:
    t = create(spark, "types_v3", 3, partitioned="PARTITIONED BY (b)")
    spark.sql(f"INSERT INTO {t} {rows(0, 3000)}")
    spark.sql(f"INSERT INTO {t} {rows(3000, 1200)}")
    spark.sql(f"DELETE FROM {t} WHERE l % 11 = 0")
    evolve(spark, t)
    spark.sql(f"INSERT INTO {t} SELECT *, CAST(i AS BIGINT) AS added FROM ({rows(4200, 500)})")
    spark.sql(f"DELETE FROM {t} WHERE i < -100 OR dt = DATE'2024-01-01'")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.types_v3')")


WIDE_ROWS = ("id * 104729 % 1000003 AS k, sha2(CAST(id AS STRING), 256) AS h, "
             "CAST(id % 5000 AS INT) AS m")
# name -> (data files per INSERT, DELETEs, extra table properties, spark.sql.shuffle.partitions
# of the session computing the statistics). DELETEs: "file" = k % 9 = 0 (one file-scoped
# position delete file per data file), "some" = the same in the first two files of each INSERT
# only (every data manifest alike, so that the task groups do not depend on the order the
# manifests' random names give them, manifest_order.py; in the first two INSERTs' files the
# groups were those of 3 orders in 6),
# "file+partition" = "file", then write.delete.granularity partition and k % 7 = 0 (a delete
# file scoped to the table's one partition: attached to every data file, beside its own).
LAYOUTS: dict[str, tuple[int, tuple[str, ...], str, int]] = {
    "layout_1_file": (1, ("file",), "", 2),  # 2 tasks, each of 2 INSERTs' files
    "layout_2_none": (2, (), "", 2),  # no deletes: 4 MiB a file, 4 files a task
    "layout_3_some": (3, ("some",), "", 2),  # 8+8 and 4+8+4 MiB tasks, across INSERTs
    "layout_2_two": (2, ("file+partition",), "", 2),  # 12 MiB a file: one task each
    "layout_2_cost": (2, ("file",), ", 'read.split.open-file-cost'='1048576', "
                      "'read.split.planning-lookback'='2'", 8),  # 2 MiB a file
}


def wide_table(spark: SparkSession) -> None:
    t = "local.db.wide_v2"
    spark.sql(f"CREATE TABLE {t} (k BIGINT, h STRING, m INT) USING iceberg TBLPROPERTIES "
              "('format-version'='2', 'write.delete.mode'='merge-on-read', "
              "'write.distribution-mode'='none')")
    for start in range(0, 60000, 15000):
        spark.sql(f"INSERT INTO {t} SELECT {WIDE_ROWS} FROM range({start}, {start + 15000}, 1, 2)")
    spark.sql(f"DELETE FROM {t} WHERE k % 9 = 0")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.wide_v2')")


def layout_table(spark: SparkSession, name: str) -> None:
    files, deletes, extra, partitions = LAYOUTS[name]
    t = f"local.db.{name}"
    spark.sql(f"CREATE TABLE {t} (k BIGINT, h STRING, m INT, b INT, p INT) USING iceberg "
              "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
              f"'write.distribution-mode'='none'{extra})")
    for b, start in enumerate(range(0, 60000, 15000)):
        spark.sql(f"INSERT INTO {t} SELECT {WIDE_ROWS}, {b} AS b, spark_partition_id() AS p "
                  f"FROM range({start}, {start + 15000}, 1, {files})")
    for kind in deletes:
        if kind == "some":
            spark.sql(f"DELETE FROM {t} WHERE k % 9 = 0 AND p < 2")
            continue
        spark.sql(f"DELETE FROM {t} WHERE k % 9 = 0")
        if kind == "file+partition":
            spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES "
                      "('write.delete.granularity'='partition')")
            spark.sql(f"DELETE FROM {t} WHERE k % 7 = 0")
    with shuffle_partitions(spark, partitions):
        spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}')")


@contextmanager
def shuffle_partitions(spark: SparkSession, partitions: int) -> Iterator[None]:
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        yield
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def groups_table(spark: SparkSession) -> dict[str, Any]:
    """``groups_v2`` (module docstring): base, append, Iceberg's statistics of the target as
    the oracle, its entry removed again."""
    t = "local.db.groups_v2"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, city STRING, n INT, n4 INT) USING iceberg "
              "TBLPROPERTIES ('format-version'='2', 'write.distribution-mode'='none')")
    rows = ("id, concat('city-', CAST(id % 40 AS STRING)) AS city, CAST(id % 1000 AS INT) AS n, "
            "CAST(id % 4000 AS INT) AS n4")
    spark.sql(f"INSERT INTO {t} SELECT {rows} FROM range(0, 6000, 1, 2)")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.groups_v2')")
    base = int(load_table(spark, "groups_v2").currentSnapshot().snapshotId())
    spark.sql(f"INSERT INTO {t} SELECT {rows} FROM range(6000, 6300, 1, 1)")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.groups_v2')")
    table = load_table(spark, "groups_v2")
    target = int(table.currentSnapshot().snapshotId())
    oracle = next(sf for sf in _java_list(table.statisticsFiles()) if sf.snapshotId() == target)
    table.updateStatistics().removeStatistics(target).commit()
    return {"base": base, "target": target, "oracle": str(oracle.path()).rsplit("/", 1)[-1]}


def task_groups(spark: SparkSession, name: str) -> list[list[list[Any]]]:
    """The task groups of Iceberg's Spark scan of the table's current snapshot: per input
    partition, its splits in order (``[data file, start, length]``)."""
    plan = spark.table(f"local.db.{name}")._jdf.queryExecution().executedPlan()
    nodes, scan = [plan], None
    while nodes and scan is None:
        node = nodes.pop()
        if node.getClass().getSimpleName() == "BatchScanExec":
            scan = node
        children = node.children()
        nodes.extend(children.apply(i) for i in range(children.size()))
    assert scan is not None, f"no BatchScanExec in the plan of {name}"
    return [[[str(task.file().location()), int(task.start()), int(task.length())]
             for task in _java_list(partition.taskGroup().tasks())]
            for partition in scan.batch().planInputPartitions()]


def planning_parallelism(spark: SparkSession) -> int:
    """Iceberg's ``SparkReadConf.parallelism``."""
    return max(spark.sparkContext.defaultParallelism,
               int(spark.conf.get("spark.sql.shuffle.partitions")))


def add_plain_files(spark: SparkSession, out: Path, name: str, fmt: str, query: str) -> None:
    """Write ``query``'s rows as plain files (no Iceberg IDs) under the table's directory and
    add them to it with ``add_files``."""
    source = out / "warehouse" / "db" / name / "imported"
    spark.sql(query).repartition(2).write.format(fmt).save(str(source))
    spark.sql(f"CALL local.system.add_files(table => 'db.{name}', "
              f"source_table => '`{fmt}`.`{source}`')")


def migrated_tables(spark: SparkSession, out: Path) -> None:
    t = create(spark, "migrated_v2", 2)
    add_plain_files(spark, out, "migrated_v2", "parquet", rows(0, 3000))
    evolve(spark, t)
    spark.sql(f"INSERT INTO {t} SELECT *, CAST(i AS BIGINT) * 5 AS added "
              f"FROM ({rows(3000, 800)})")
    spark.sql(f"DELETE FROM {t} WHERE l % 7 = 0 OR s_renamed = 's9-é'")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.migrated_v2')")

    t = create(spark, "positional_v2", 2)
    names = [c.split()[0] for c in COLUMNS.split(", ")]
    renamed = ", ".join(f"{n} AS file_{n}" for n in names)
    add_plain_files(spark, out, "positional_v2", "parquet",
                    f"SELECT {renamed} FROM ({rows(0, 2600)})")
    spark.sql(f"ALTER TABLE {t} UNSET TBLPROPERTIES ('schema.name-mapping.default')")
    spark.sql(f"DELETE FROM {t} WHERE l % 5 = 0")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.positional_v2')")

    t = "local.db.orc_unmapped_v2"
    spark.sql(f"CREATE TABLE {t} (i INT, l BIGINT, s STRING, dt DATE, dec DECIMAL(10,2), "
              "b BOOLEAN, bin BINARY) USING iceberg TBLPROPERTIES ('format-version'='2', "
              "'write.delete.mode'='merge-on-read', 'write.format.default'='orc')")
    add_plain_files(spark, out, "orc_unmapped_v2", "orc",
                    f"SELECT i, l, s, dt, dec, b, bin FROM ({rows(0, 2400)})")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN s TO s_renamed")
    spark.sql(f"ALTER TABLE {t} UNSET TBLPROPERTIES ('schema.name-mapping.default')")
    spark.sql(f"DELETE FROM {t} WHERE l % 3 = 0")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.orc_unmapped_v2')")

    # Hive-style partition directories: cat and region are in the paths, not in the files.
    t = "local.db.hive_v2"
    spark.sql(f"CREATE TABLE {t} (l BIGINT, s STRING, dt DATE, cat INT, region STRING) "
              "USING iceberg PARTITIONED BY (cat, region) TBLPROPERTIES ("
              "'format-version'='2', 'write.delete.mode'='merge-on-read')")
    source = out / "warehouse" / "db" / "hive_v2" / "imported"
    spark.sql(f"SELECT l, s, dt, CAST(abs(l) % 3 AS INT) AS cat, CASE WHEN l % 2 = 0 THEN "
              f"'east' ELSE 'west' END AS region FROM ({rows(0, 3000)})").write \
        .partitionBy("cat", "region").parquet(str(source))
    spark.sql(f"CALL local.system.add_files(table => 'db.hive_v2', "
              f"source_table => '`parquet`.`{source}`')")
    spark.sql(f"DELETE FROM {t} WHERE l % 7 = 0")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.hive_v2')")


def uuid_table(spark: SparkSession) -> None:
    """A uuid column (Spark SQL has no uuid type: created through Iceberg's Java API; Spark
    reads and writes it as a string), more than 4096 distinct values, a DELETE."""
    types = spark._jvm.org.apache.iceberg.types.Types  # type: ignore[attr-defined]
    create_table(spark, "uuid_v2", [(1, "id", types.LongType.get(), False),
                                    (2, "u", types.UUIDType.get(), False)],
                 {"format-version": "2", "write.delete.mode": "merge-on-read"})
    spark.sql("INSERT INTO local.db.uuid_v2 SELECT id, CASE WHEN id % 10 = 0 THEN NULL ELSE "
              "lower(concat(lpad(hex(id % 5000), 8, '0'), '-0000-4000-8000-', "
              "lpad(hex(id * 7919), 12, '0'))) END FROM range(0, 6000)")
    spark.sql("DELETE FROM local.db.uuid_v2 WHERE id % 7 = 3")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.uuid_v2')")


def build(out: Path, conf: dict[str, str]) -> None:
    spark = session("puffin-cli stats tables", conf)
    types_table(spark, "types_v2", 2)
    dv_table(spark)
    types_table(spark, "orc_v2", 2, ", 'write.format.default'='orc'")
    types_table(spark, "avro_v2", 2, ", 'write.format.default'='avro'")
    wide_table(spark)
    migrated_tables(spark, out)
    uuid_table(spark)
    for name in LAYOUTS:
        layout_table(spark, name)
    groups = groups_table(spark)
    doc: dict[str, Any] = {}
    for name in ("types_v2", "types_v3", "orc_v2", "avro_v2", "wide_v2", "migrated_v2",
                 "positional_v2", "orc_unmapped_v2", "hive_v2", "uuid_v2", *LAYOUTS):
        info = statistics(spark, name)
        info["live-rows"] = int(spark.sql(f"SELECT count(*) FROM local.db.{name}").first()[0])
        with shuffle_partitions(spark, LAYOUTS[name][3] if name in LAYOUTS else
                                int(spark.conf.get("spark.sql.shuffle.partitions"))):
            info["groups"] = task_groups(spark, name)
            info["parallelism"] = planning_parallelism(spark)
        doc[name] = info
    doc["groups_v2"] = groups
    (out / "tables.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    spark.stop()


def bench(out: Path, conf: dict[str, str], rows: int) -> None:
    import time

    spark = session("puffin-cli stats tables", conf)
    t = "local.db.bench"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, n INT, x DOUBLE, s STRING, dt DATE, "
              "amount DECIMAL(12,2)) USING iceberg TBLPROPERTIES ('format-version'='3', "
              "'write.delete.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(id % 1000003 AS INT) AS n, "
              "(id % 2000000) * 0.25D AS x, concat('customer-', CAST(id % 5000000 AS STRING)) "
              "AS s, date_add(DATE'2000-01-01', CAST(id % 10000 AS INT)) AS dt, "
              "CAST((id % 777777) / 100.0 AS DECIMAL(12,2)) AS amount "
              f"FROM range(0, {rows}, 1, 16)")
    spark.sql(f"DELETE FROM {t} WHERE id % 97 = 5 OR (id BETWEEN 1000 AND 50999)")
    started = time.monotonic()
    spark.sql("CALL local.system.compute_table_stats(table => 'db.bench')")
    seconds = time.monotonic() - started
    info = statistics(spark, "bench")
    info["live-rows"] = int(spark.sql(f"SELECT count(*) FROM {t}").first()[0])
    info["compute-table-stats-seconds"] = seconds
    (out / "bench.json").write_text(json.dumps(info, indent=2, sort_keys=True))
    spark.stop()


def main() -> None:
    os.environ["ICEBERG_SCAN_PLAN_IN_WORKER_POOL"] = "false"  # read by the driver JVM
    if sys.argv[1] == "bench":
        bench(Path(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4]))
        return
    if sys.argv[1] == "build":
        build(Path(sys.argv[2]), json.loads(sys.argv[3]))
        return
    spark = session("puffin-cli stats tables", json.loads(sys.argv[2]))
    print(json.dumps({name: statistics(spark, name) for name in sys.argv[3:]}))
    spark.stop()


if __name__ == "__main__":
    main()
