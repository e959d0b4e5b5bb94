"""A table with equality delete files, built and checked by Iceberg Java (Spark 3.5).

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python equality_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/eq_v2 (the table below, ending with Iceberg's own
        ``compute_table_stats`` on its current snapshot) and OUT_DIR/tables.json: the current
        snapshot, its live row count (Iceberg's read applies the deletes), the statistics
        Iceberg registered, and, per data file, the equality delete files Iceberg's scan
        planning applies to it.

Spark SQL's DELETE writes position deletes only, so the equality delete files are written with
Iceberg's Java API through py4j (``GenericAppenderFactory.newEqDeleteWriter``, committed with
``newRowDelta().addDeletes``). ``eq_v2`` (format 2), in commit order (sequence numbers 1..):

1. rows 0..599, unpartitioned (spec 0);
2. partition field ``cat`` added (spec 1); rows 600..1499 in partitions cat = 0, 1, 2;
3. equality deletes, one commit: on ``name`` in partition cat = 0 (values ``n5``, ``n607``
   and NULL: deletes the null names there), on ``id`` in cat = 1 (a list of ids); neither
   applies to the unpartitioned files of step 1 (another spec). The same commit adds a data
   file in cat = 0 with those names (written with the Java API, other columns NULL): not
   deleted (same sequence number);
4. rows 1500..2099 in cat = 0, 1, 2, with the values deleted in step 3 (not deleted: the
   deletes are older);
5. a global equality delete (written with the unpartitioned spec 0) on (``id``, ``name``),
   with rows whose name is NULL, one whose id is NULL, and rows of every data file so far;
6. rows 2100..2399 with the values of step 5 (not deleted);
7. a merge-on-read DELETE (position delete files on the same files), a rename of ``name``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from script_common import load_table, session, write_equality_delete

TABLE = "eq_v2"
COLUMNS = ("id INT, cat INT, name STRING, code INT, dt DATE, amount DECIMAL(10,2), "
           "flag BOOLEAN, ts TIMESTAMP")


def rows(start: int, count: int) -> str:
    """Rows with nulls and repeated values in every column; cat = id % 3."""
    return f"""
        SELECT CAST(id AS INT) AS id,
          CAST(id % 3 AS INT) AS cat,
          CASE WHEN id % 13 = 0 THEN NULL ELSE concat('n', CAST(id % 700 AS STRING)) END
            AS name,
          CASE WHEN id % 11 = 0 THEN NULL ELSE CAST(id % 97 AS INT) END AS code,
          date_add(DATE'2024-01-01', CAST(id % 50 AS INT)) AS dt,
          CAST((id % 401 - 200) / 10.0 AS DECIMAL(10,2)) AS amount,
          CASE WHEN id % 17 = 0 THEN NULL ELSE id % 2 = 0 END AS flag,
          TIMESTAMP'2024-03-01 00:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id % 300 AS INT),
            0) AS ts
        FROM range({start}, {start + count})"""






def write_data_file(spark: SparkSession, spec_id: int, partition: int,
                    records: list[dict[str, Any]], name: str) -> Any:
    """A data file of ``records`` (columns left out are NULL) in partition cat =
    ``partition`` of spec ``spec_id``, not committed."""
    jvm = spark._jvm  # type: ignore[attr-defined]
    table = load_table(spark, TABLE)
    schema = table.schema()
    spec = table.specs().get(spec_id)
    factory = jvm.org.apache.iceberg.data.GenericAppenderFactory(schema, spec)
    key = jvm.org.apache.iceberg.data.GenericRecord.create(spec.partitionType())
    key.set(0, partition)
    output = jvm.org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(
        table.io().newOutputFile(f"{table.location()}/data/cat={partition}/{name}.parquet"))
    writer = factory.newDataWriter(output, jvm.org.apache.iceberg.FileFormat.PARQUET, key)
    for values in records:
        record = jvm.org.apache.iceberg.data.GenericRecord.create(schema)
        for column, value in values.items():
            record.setField(column, value)
        writer.write(record)
    writer.close()
    return writer.toDataFile()


def commit_deletes(spark: SparkSession, files: list[Any], data_files: tuple[Any, ...] = ()
                   ) -> None:
    delta = load_table(spark, TABLE).newRowDelta()
    for f in data_files:
        delta = delta.addRows(f)
    for f in files:
        delta = delta.addDeletes(f)
    delta.commit()


def planned_deletes(spark: SparkSession) -> dict[str, list[str]]:
    """Data file -> the equality delete files Iceberg's scan planning applies to it."""
    out: dict[str, list[str]] = {}
    tasks = load_table(spark, TABLE).newScan().planFiles()
    iterator = tasks.iterator()
    while iterator.hasNext():
        task = iterator.next()
        equality = [str(d.location()) for d in list(task.deletes())
                    if d.content().toString() == "EQUALITY_DELETES"]
        out[str(task.file().location())] = sorted(equality)
    tasks.close()
    return out


def build_table(spark: SparkSession) -> None:
    t = f"local.db.{TABLE}"
    spark.sql(f"CREATE TABLE {t} ({COLUMNS}) USING iceberg TBLPROPERTIES "
              "('format-version'='2', 'write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {t} {rows(0, 600)}")
    spark.sql(f"ALTER TABLE {t} ADD PARTITION FIELD cat")
    spark.sql(f"INSERT INTO {t} {rows(600, 900)}")
    by_name = write_equality_delete(spark, TABLE, ["name"], [("n5",), ("n607",), (None,)],
                                    "eq-name-cat0", spec_id=1, partition=0)
    by_id = write_equality_delete(spark, TABLE, ["id"],
                                  [(i,) for i in (601, 604, 700, 703, 1000, 1498, 3, 9)],
                                  "eq-id-cat1", spec_id=1, partition=1)
    same_commit = write_data_file(spark, 1, 0, [
        {"id": 5000 + i, "cat": 0, "name": name}
        for i, name in enumerate(["n5", "n607", None, "n5", "n1"])], "same-commit")
    commit_deletes(spark, [by_name, by_id], (same_commit,))
    spark.sql(f"INSERT INTO {t} {rows(1500, 600)}")
    pairs: list[tuple[Any, ...]] = [(13 * k, None) for k in range(0, 180, 7)]
    pairs += [(i, f"n{i % 700}") for i in (1, 2, 610, 611, 1600, 1601, 2000, 2099)]
    pairs += [(1602, "no such name"), (None, "n4"), (5004, "n1")]
    global_delete = write_equality_delete(spark, TABLE, ["id", "name"], pairs, "eq-global",
                                          spec_id=0)
    commit_deletes(spark, [global_delete])
    spark.sql(f"INSERT INTO {t} {rows(2100, 300)}")
    spark.sql(f"INSERT INTO {t} SELECT * FROM ({rows(0, 40)}) WHERE name IS NULL OR id < 3")
    spark.sql(f"DELETE FROM {t} WHERE code = 42")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO label")
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{TABLE}')")


def statistics(spark: SparkSession) -> dict[str, Any]:
    table = load_table(spark, TABLE)
    current = table.currentSnapshot()
    stats = []
    for sf in list(table.statisticsFiles()):
        stats.append({"snapshot-id": int(sf.snapshotId()), "path": sf.path(),
                      "blobs": [{"fields": [int(f) for f in list(bm.fields())],
                                 "properties": dict(bm.properties())}
                                for bm in list(sf.blobMetadata())]})
    return {"current-snapshot-id": int(current.snapshotId()), "statistics": stats}


def build(out: Path, conf: dict[str, str]) -> None:
    spark = session("puffin-cli equality tables", conf)
    build_table(spark)
    info = statistics(spark)
    frame = spark.table(f"local.db.{TABLE}")
    info["live-rows"] = frame.count()
    info["live-ids"] = sorted(int(r[0]) for r in frame.select("id").collect())
    info["equality-deletes"] = planned_deletes(spark)
    (out / "tables.json").write_text(json.dumps({TABLE: info}, indent=2, sort_keys=True))
    spark.stop()


def main() -> None:
    build(Path(sys.argv[2]), json.loads(sys.argv[3]))


if __name__ == "__main__":
    main()
