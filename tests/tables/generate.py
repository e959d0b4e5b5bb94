"""Build real Iceberg table directories with Spark 3.5 + Iceberg Java, and record what Iceberg
Java itself reports about them.

Runs inside the PySpark 3.5 venv (tests/interop/sparkenv.py), never imports puffin_cli:

    python generate.py OUT_DIR CONF_JSON

Writes OUT_DIR/warehouse/db/<table>/ and, next to each table, OUT_DIR/<table>.oracle.json:
the statistics files (``table.statisticsFiles()``), and per snapshot the deletion vectors Iceberg
Java's scan planning attaches to data files and the ``delete_files`` metadata table rows.

Tables:
- ``stats_v1`` (format 1) and ``stats_v2`` (format 2): several column types,
  ``compute_table_stats`` on two snapshots, stats computed twice for one snapshot (the first
  file becomes an orphan), then a column renamed and a last snapshot without statistics.
- ``dv_v3`` (format 3, merge-on-read, partitioned): DELETEs writing deletion vectors over
  several snapshots (several DVs per Puffin file), stats on the last snapshot.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

COLUMNS = ("id BIGINT, name STRING, price DOUBLE, qty INT, day DATE, flag BOOLEAN, "
           "amount DECIMAL(10,2)")


def _rows(start: int, count: int) -> str:
    return (f"SELECT id, concat('n', CAST(id % 97 AS STRING)) AS name, id * 1.5 AS price, "
            f"CAST(id % 13 AS INT) AS qty, date_add(DATE'2024-01-01', CAST(id % 40 AS INT)) "
            f"AS day, id % 2 = 0 AS flag, CAST(id % 1000 AS DECIMAL(10,2)) / 4 AS amount "
            f"FROM range({start}, {start + count})")


def _java_list(values: Any) -> list[Any]:
    return list(values) if values is not None else []


def _long(value: Any) -> int | None:
    return None if value is None else int(value)


def record(spark: SparkSession, name: str, out: Path) -> None:
    jvm = spark._jvm  # type: ignore[attr-defined]
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"local.db.{name}")  # type: ignore[attr-defined]
    schemas = table.schemas()
    snapshots = []
    for snap in _java_list(table.snapshots()):
        parent = snap.parentId()
        snapshots.append({"snapshot-id": int(snap.snapshotId()),
                          "parent-id": _long(parent),
                          "sequence-number": int(snap.sequenceNumber()),
                          "schema-id": _long(snap.schemaId())})
    current = table.currentSnapshot()
    current_id = None if current is None else int(current.snapshotId())
    stats = []
    for sf in _java_list(table.statisticsFiles()):
        snap = table.snapshot(sf.snapshotId())
        schema = table.schema() if snap is None else schemas.get(snap.schemaId())
        blobs = []
        for bm in _java_list(sf.blobMetadata()):
            fields = [int(f) for f in _java_list(bm.fields())]
            blobs.append({"type": bm.type(), "snapshot-id": int(bm.sourceSnapshotId()),
                          "sequence-number": int(bm.sourceSnapshotSequenceNumber()),
                          "fields": fields,
                          "columns": [schema.findColumnName(f) for f in fields],
                          "properties": dict(bm.properties())})
        stats.append({"snapshot-id": int(sf.snapshotId()), "path": sf.path(),
                      "file-size-in-bytes": int(sf.fileSizeInBytes()),
                      "file-footer-size-in-bytes": int(sf.fileFooterSizeInBytes()),
                      "blobs": blobs})
    planned: dict[str, list[dict[str, Any]]] = {}
    delete_rows: dict[str, list[dict[str, Any]]] = {}
    for snap in snapshots:
        sid = snap["snapshot-id"]
        dvs = []
        tasks = table.newScan().useSnapshot(sid).planFiles()
        iterator = tasks.iterator()
        while iterator.hasNext():
            task = iterator.next()
            for delete in _java_list(task.deletes()):
                if str(delete.format().toString()).lower() != "puffin":
                    continue
                dvs.append({"data-file": task.file().location(),
                            "data-file-record-count": int(task.file().recordCount()),
                            "path": delete.location(),
                            "referenced-data-file": delete.referencedDataFile(),
                            "offset": _long(delete.contentOffset()),
                            "length": _long(delete.contentSizeInBytes()),
                            "record-count": int(delete.recordCount())})
        tasks.close()
        planned[str(sid)] = sorted(dvs, key=lambda d: d["data-file"])
        rows = (spark.read.format("iceberg").option("snapshot-id", sid)
                .load(f"local.db.{name}.delete_files")
                .where("file_format = 'PUFFIN'")
                .select("file_path", "referenced_data_file", "content_offset",
                        "content_size_in_bytes", "record_count").collect())
        delete_rows[str(sid)] = sorted(
            ({"path": r[0], "referenced-data-file": r[1], "offset": r[2], "length": r[3],
              "record-count": r[4]} for r in rows), key=lambda d: d["referenced-data-file"])
    doc = {"table": name, "format-version": int(table.operations().current().formatVersion()),
           "location": table.location(), "current-snapshot-id": current_id,
           "snapshots": snapshots, "statistics": stats, "planned-dvs": planned,
           "delete-files": delete_rows}
    (out / f"{name}.oracle.json").write_text(json.dumps(doc, indent=2, sort_keys=True))


def stats_table(spark: SparkSession, name: str, version: int) -> None:
    t = f"local.db.{name}"
    spark.sql(f"CREATE TABLE {t} ({COLUMNS}) USING iceberg "
              f"TBLPROPERTIES ('format-version'='{version}')")
    spark.sql(f"INSERT INTO {t} {_rows(0, 3000)}")
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}')")
    spark.sql(f"INSERT INTO {t} {_rows(3000, 2000)}")
    # Twice for the same snapshot: the first file is replaced in the metadata, left on disk.
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}', "
              f"columns => array('id', 'name'))")
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}')")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO customer_name")
    # A snapshot without statistics of its own: Trino falls back to its parent's file.
    spark.sql(f"INSERT INTO {t} {_rows(5000, 100)}")


def dv_table(spark: SparkSession) -> None:
    t = "local.db.dv_v3"
    spark.sql(f"CREATE TABLE {t} ({COLUMNS}, part INT) USING iceberg PARTITIONED BY (part) "
              "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {t} SELECT *, CAST(id % 6 AS INT) AS part FROM ({_rows(0, 6000)})")
    spark.sql(f"INSERT INTO {t} SELECT *, CAST(id % 3 AS INT) AS part FROM "
              f"({_rows(6000, 3000)})")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    spark.sql(f"DELETE FROM {t} WHERE id % 11 = 0 AND part < 4")
    spark.sql(f"INSERT INTO {t} SELECT *, 9 AS part FROM ({_rows(9000, 500)})")
    spark.sql(f"DELETE FROM {t} WHERE id % 5 = 0 AND part = 9")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.dv_v3')")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.dv_v3', "
              "columns => array('id', 'part'))")


def main() -> None:
    out = Path(sys.argv[1])
    conf: dict[str, str] = json.loads(sys.argv[2])
    builder = SparkSession.builder.appName("puffin-cli test tables")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    stats_table(spark, "stats_v1", 1)
    stats_table(spark, "stats_v2", 2)
    dv_table(spark)
    for name in ("stats_v1", "stats_v2", "dv_v3"):
        record(spark, name, out)
    spark.stop()


if __name__ == "__main__":
    main()
