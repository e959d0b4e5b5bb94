"""Tables for the ``puffin stats compute`` tests, built and checked by Iceberg Java (Spark 3.5).

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python stats_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/<table>: every table below, each ending with Iceberg's own
        ``compute_table_stats`` on its current snapshot (the reference statistics file,
        registered in the table metadata). OUT_DIR/tables.json: per table, the current
        snapshot, its live row count, and the statistics Iceberg registered.
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
- ``wide_v2``: 60,000 rows in several files, estimation mode (more than 4096 distinct values).
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
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from script_common import create_table, session

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
    return list(values) if values is not None else []


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


def wide_table(spark: SparkSession) -> None:
    t = "local.db.wide_v2"
    spark.sql(f"CREATE TABLE {t} (k BIGINT, h STRING, m INT) USING iceberg TBLPROPERTIES "
              "('format-version'='2', 'write.delete.mode'='merge-on-read')")
    for start in range(0, 60000, 15000):
        spark.sql(f"INSERT INTO {t} SELECT id * 104729 % 1000003 AS k, "
                  f"sha2(CAST(id AS STRING), 256) AS h, CAST(id % 5000 AS INT) AS m "
                  f"FROM range({start}, {start + 15000})")
    spark.sql(f"DELETE FROM {t} WHERE k % 9 = 0")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.wide_v2')")


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
    doc = {}
    for name in ("types_v2", "types_v3", "orc_v2", "avro_v2", "wide_v2", "migrated_v2",
                 "positional_v2", "orc_unmapped_v2", "hive_v2", "uuid_v2"):
        info = statistics(spark, name)
        info["live-rows"] = int(spark.sql(f"SELECT count(*) FROM local.db.{name}").first()[0])
        doc[name] = info
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
