"""Varied tables for checking ``puffin stats compute`` against Iceberg Java's own
``compute_table_stats`` (Spark 3.5 + Iceberg 1.10.2), unlike those of stats_tables.py.

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python heldout_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/<table>: the tables below, each with one or more statistics files
        written by Iceberg's ``compute_table_stats`` (the current snapshot, and for some an
        older one through ``snapshot_id =>``). OUT_DIR/tables.json: per table, its current
        snapshot and, per statistics file, the snapshot, its number of data manifests, its
        live row count and its blobs (fields, the column names in that snapshot's schema,
        properties).

Tables:
- ``part_mor_v2``: partitioned by ``days(ts)`` and ``bucket(16, id)``; timestamps with and
  without zone (some before 1970), unicode strings, booleans, binary, a mostly-null double, an
  all-null int; merge-on-read UPDATE and MERGE INTO (position delete files), then
  ``rewrite_manifests``. Statistics: the first snapshot, the current one.
- ``trunc_dv_v3``: format 3, partitioned by ``truncate(2, s)``, decimal(38,0) up to 38 digits
  (negative too), decimal(38,10), an all-null string; DELETE, merge-on-read UPDATE and MERGE
  INTO (deletion vectors, some rewritten), ``rewrite_manifests``. Statistics: the snapshot
  after the first DELETE, the current one.
- ``evolve_cow_v2``: copy-on-write UPDATE, MERGE INTO and DELETE around a schema evolution:
  a rename, a column dropped and re-added under the same name (a new field ID), int to
  long, float to double, decimal(9,2) to decimal(18,2); older files keep the narrow types.
  Statistics: the first snapshot (old names, a column dropped since), the current one.
- ``eq_promote_v2``: equality delete files (Java API): on an int column, on two columns with
  nulls, one after one of them was renamed; position deletes too. (An int column promoted to
  long after an equality delete on it was written makes Iceberg 1.10.2's own read fail:
  "Not an instance of java.lang.Long".)
  Statistics: the snapshot of the first equality deletes, the current one.
- ``split_estim_v2``: small row groups and ``read.split.target-size``: files split across
  tasks, tasks of several row groups with more than 4096 distinct values (estimation mode);
  position deletes; one data manifest.
- ``avro_estim_v2``: Avro data files bigger than a split (fixed-size splits), estimation
  mode, Avro position deletes.
- ``orc_estim_v2``: ORC with small stripes and splits, estimation mode, an int column
  promoted to long, a DELETE.
- ``fixed_v3``: format 3 table made through the Java API with a ``fixed[6]`` column, DVs.
- ``eq_dv_v3``: format 3, deletion vectors and an equality delete file on the same files.
- ``nested_v2``: struct, list and map columns beside primitive ones (not sketched).
- ``migrated_legacy_v2``: a plain Parquet file added with ``add_files``, written by Spark
  with INT96 timestamps and its legacy format (decimal(9,2) as fixed-length bytes).
- ``avro_codecs_v2``: Avro data and delete files compressed with snappy, then zstd.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from script_common import create_table, load_table, session, write_equality_delete

TABLES = ("part_mor_v2", "trunc_dv_v3", "evolve_cow_v2", "eq_promote_v2", "split_estim_v2",
          "avro_estim_v2", "orc_estim_v2", "fixed_v3", "eq_dv_v3", "nested_v2",
          "migrated_legacy_v2", "avro_codecs_v2")
MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}
COW = {"write.delete.mode": "copy-on-write", "write.update.mode": "copy-on-write",
       "write.merge.mode": "copy-on-write"}


def create(spark: SparkSession, name: str, columns: str, props: dict[str, str],
           version: int = 2, partitioned: str = "") -> str:
    t = f"local.db.{name}"
    text = ", ".join(f"'{k}'='{v}'" for k, v in {"format-version": str(version),
                                                 **props}.items())
    spark.sql(f"CREATE TABLE {t} ({columns}) USING iceberg {partitioned} TBLPROPERTIES ({text})")
    return t




def compute(spark: SparkSession, name: str, snapshot: int | None = None) -> None:
    extra = "" if snapshot is None else f", snapshot_id => {snapshot}"
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}'{extra})")


def current(spark: SparkSession, name: str) -> int:
    return int(load_table(spark, name).currentSnapshot().snapshotId())


def part_mor(spark: SparkSession) -> None:
    t = create(spark, "part_mor_v2", "id BIGINT, ts TIMESTAMP, tsn TIMESTAMP_NTZ, s STRING, "
               "flag BOOLEAN, sparse DOUBLE, nothing INT, bin BINARY", MOR,
               partitioned="PARTITIONED BY (days(ts), bucket(16, id))")
    spark.sql(f"""INSERT INTO {t} SELECT id * 37 - 900 AS id,
          TIMESTAMP'2024-02-27 21:30:00' + make_interval(0, 0, 0, 0, 0, 0, id * 61.7) AS ts,
          CAST(TIMESTAMP'1969-12-31 23:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 1.5)
            AS TIMESTAMP_NTZ) AS tsn,
          CASE WHEN id % 19 = 0 THEN NULL WHEN id % 41 = 0 THEN ''
               ELSE concat('ключ-', CAST(id % 1700 AS STRING), '-日本-\U0001F642') END AS s,
          CASE WHEN id % 7 = 0 THEN NULL ELSE id % 2 = 1 END AS flag,
          CASE WHEN id % 10 = 0 THEN id / 8.0D ELSE NULL END AS sparse,
          CAST(NULL AS INT) AS nothing,
          CASE WHEN id % 13 = 0 THEN NULL ELSE unhex(sha2(CAST(id % 900 AS STRING), 224)) END
            AS bin
        FROM range(0, 6000)""")
    first = current(spark, "part_mor_v2")
    spark.sql(f"UPDATE {t} SET s = concat(s, '-upd'), sparse = -1.5D WHERE id % 111 = 0")
    spark.sql(f"""MERGE INTO {t} AS tgt
        USING (SELECT id * 37 - 900 AS k FROM range(5800, 6400)) src ON tgt.id = src.k
        WHEN MATCHED AND src.k % 3 = 0 THEN DELETE
        WHEN MATCHED THEN UPDATE SET flag = NOT flag, s = 'merged-ü'
        WHEN NOT MATCHED THEN INSERT (id, ts, tsn, s, flag, sparse, nothing, bin)
          VALUES (src.k, TIMESTAMP'2024-03-02 10:00:00', NULL, 'новый', true, NULL, NULL, X'00')
        """)
    spark.sql("CALL local.system.rewrite_manifests('db.part_mor_v2')")
    compute(spark, "part_mor_v2", first)
    compute(spark, "part_mor_v2")


DEC38 = ("CAST(concat(CASE WHEN id % 2 = 0 THEN '-' ELSE '' END, "
         "'9999999999999999999999999', lpad(CAST(id * 7 % 9000 AS STRING), 13, '0')) "
         "AS DECIMAL(38,0))")


def trunc_dv(spark: SparkSession) -> None:
    t = create(spark, "trunc_dv_v3", "s STRING, huge DECIMAL(38,0), frac DECIMAL(38,10), "
               "small DECIMAL(5,4), void STRING, n INT", MOR, version=3,
               partitioned="PARTITIONED BY (truncate(2, s))")
    spark.sql(f"""INSERT INTO {t} SELECT
          concat(substr('αβγδεζ', CAST(id % 6 AS INT) + 1, 1), CAST(id % 3 AS STRING),
                 '-', CAST(id % 2100 AS STRING)) AS s,
          CASE WHEN id = 1 THEN CAST('-99999999999999999999999999999999999999' AS DECIMAL(38,0))
               WHEN id = 2 THEN CAST('99999999999999999999999999999999999999' AS DECIMAL(38,0))
               WHEN id % 11 = 0 THEN NULL ELSE {DEC38} END AS huge,
          CAST(concat(CASE WHEN id % 3 = 0 THEN '-' ELSE '' END, CAST(id % 500 AS STRING), '.',
               lpad(CAST(id * 13 % 997 AS STRING), 10, '0')) AS DECIMAL(38,10)) AS frac,
          CAST((id % 19999 - 9999) / 10000.0 AS DECIMAL(5,4)) AS small,
          CAST(NULL AS STRING) AS void,
          CAST(id AS INT) AS n
        FROM range(0, 5000)""")
    spark.sql(f"DELETE FROM {t} WHERE n % 9 = 4")
    after_delete = current(spark, "trunc_dv_v3")
    spark.sql(f"UPDATE {t} SET huge = -huge, small = 0.0001 WHERE n % 17 = 3")
    spark.sql(f"""MERGE INTO {t} AS tgt
        USING (SELECT CAST(id AS INT) AS k FROM range(4500, 5300)) src ON tgt.n = src.k
        WHEN MATCHED AND src.k % 4 = 0 THEN DELETE
        WHEN MATCHED THEN UPDATE SET frac = frac * 2
        WHEN NOT MATCHED THEN INSERT (s, huge, frac, small, void, n)
          VALUES ('ωω', CAST(src.k AS DECIMAL(38,0)), NULL, -0.5, NULL, src.k)""")
    spark.sql(f"DELETE FROM {t} WHERE n % 9 = 5")
    spark.sql("CALL local.system.rewrite_manifests('db.trunc_dv_v3')")
    compute(spark, "trunc_dv_v3", after_delete)
    compute(spark, "trunc_dv_v3")


def evolve_cow(spark: SparkSession) -> None:
    t = create(spark, "evolve_cow_v2", "i INT, f FLOAT, dec DECIMAL(9,2), old STRING, "
               "gone STRING, n BIGINT", COW)
    base = """SELECT CASE WHEN id % 23 = 0 THEN NULL ELSE CAST(id % 3001 - 1500 AS INT) END AS i,
          CASE WHEN id % 50 = 1 THEN CAST('NaN' AS FLOAT) WHEN id % 50 = 2 THEN -0.0F
               ELSE CAST((id % 777) / 9.0 AS FLOAT) END AS f,
          CAST((id % 4001 - 2000) / 100.0 AS DECIMAL(9,2)) AS dec,
          concat('old-', CAST(id % 300 AS STRING)) AS old,
          concat('gone-', CAST(id % 77 AS STRING)) AS gone,
          id * 1000003 % 99991 AS n"""
    spark.sql(f"INSERT INTO {t} {base} FROM range(0, 6000)")
    first = current(spark, "evolve_cow_v2")
    spark.sql(f"INSERT INTO {t} {base} FROM range(6000, 9000)")
    spark.sql(f"UPDATE {t} SET old = concat(old, '!') WHERE n % 5 = 0 AND n > 90000")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN old TO renamed")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN gone")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN gone STRING")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN i TYPE BIGINT")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN f TYPE DOUBLE")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN dec TYPE DECIMAL(18,2)")
    spark.sql(f"""INSERT INTO {t} SELECT id * 4000000 - 20000000000 AS i,
          CASE WHEN id % 9 = 0 THEN CAST('NaN' AS DOUBLE) ELSE id / 7.0D END AS f,
          CAST((id - 500) * 1234567.89 AS DECIMAL(18,2)) AS dec,
          concat('new-', CAST(id % 40 AS STRING)) AS renamed,
          id * 1000003 % 99991 AS n,
          CASE WHEN id % 4 = 0 THEN NULL ELSE concat('back-', CAST(id % 60 AS STRING)) END
            AS gone
        FROM range(0, 1500)""")
    spark.sql(f"""MERGE INTO {t} AS tgt
        USING (SELECT id * 1000003 % 99991 AS k FROM range(8800, 9100)) src ON tgt.n = src.k
        WHEN MATCHED THEN UPDATE SET gone = 'merged'
        WHEN NOT MATCHED THEN INSERT (i, f, dec, renamed, n, gone)
          VALUES (3000000000, 1.5D, 0.01, 'ins', src.k, NULL)""")
    spark.sql(f"DELETE FROM {t} WHERE i BETWEEN 1000 AND 1200")
    spark.sql("CALL local.system.rewrite_manifests('db.evolve_cow_v2')")
    compute(spark, "evolve_cow_v2", first)
    compute(spark, "evolve_cow_v2")




def commit_deletes(spark: SparkSession, name: str, files: list[Any]) -> None:
    delta = load_table(spark, name).newRowDelta()
    for f in files:
        delta = delta.addDeletes(f)
    delta.commit()


def eq_promote(spark: SparkSession) -> None:
    name = "eq_promote_v2"
    t = create(spark, name, "id INT, cat STRING, v INT, dt DATE", MOR)
    rows = """SELECT CAST(id AS INT) AS id,
          CASE WHEN id % 10 = 0 THEN NULL ELSE concat('c', CAST(id % 12 AS STRING)) END AS cat,
          CASE WHEN id % 9 = 0 THEN NULL ELSE CAST(id % 40 AS INT) END AS v,
          date_add(DATE'1999-12-20', CAST(id % 30 AS INT)) AS dt"""
    spark.sql(f"INSERT INTO {t} {rows} FROM range(0, 2000)")
    spark.sql(f"INSERT INTO {t} {rows} FROM range(2000, 3000)")
    by_id = write_equality_delete(spark, name, ["id"],
                                  [(i,) for i in (0, 5, 17, 999, 1000, 2500, 2999, 4100)],
                                  "eq-id")
    pairs: list[tuple[Any, ...]] = [("c1", 1), ("c3", None), (None, 20), (None, None),
                                    ("c7", 31)]
    by_pair = write_equality_delete(spark, name, ["cat", "v"], pairs, "eq-cat-v")
    commit_deletes(spark, name, [by_id, by_pair])
    with_eq = current(spark, name)
    spark.sql(f"INSERT INTO {t} {rows} FROM range(3000, 4500)")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN cat TO category")
    spark.sql(f"INSERT INTO {t} SELECT id * 100, cat, v, dt "
              f"FROM ({rows} FROM range(4500, 5200))")
    by_category = write_equality_delete(spark, name, ["category"], [("c5",), (None,)],
                                        "eq-category")
    commit_deletes(spark, name, [by_category])
    spark.sql(f"DELETE FROM {t} WHERE v = 13")
    spark.sql(f"CALL local.system.rewrite_manifests('db.{name}')")
    compute(spark, name, with_eq)
    compute(spark, name)


WIDE = ("id * 104729 % 1000003 AS k, sha2(CAST(id AS STRING), 256) AS h, "
        "CAST(id % 6000 AS INT) AS m")


def split_estim(spark: SparkSession) -> None:
    t = create(spark, "split_estim_v2", "k BIGINT, h STRING, m INT", {
        **MOR, "write.parquet.row-group-size-bytes": "65536",
        "read.split.target-size": "400000", "read.split.open-file-cost": "10000",
        "write.distribution-mode": "none"})
    spark.sql(f"INSERT INTO {t} SELECT {WIDE} FROM range(0, 50000, 1, 2)")
    spark.sql(f"DELETE FROM {t} WHERE k % 11 = 0")
    compute(spark, "split_estim_v2")


def avro_estim(spark: SparkSession) -> None:
    t = create(spark, "avro_estim_v2", "k BIGINT, h STRING, m INT", {
        **MOR, "write.format.default": "avro", "write.delete.format.default": "avro",
        "read.split.target-size": "300000", "write.distribution-mode": "none"})
    spark.sql(f"INSERT INTO {t} SELECT {WIDE} FROM range(0, 30000, 1, 1)")
    spark.sql(f"DELETE FROM {t} WHERE m % 7 = 2")
    compute(spark, "avro_estim_v2")


def orc_estim(spark: SparkSession) -> None:
    t = create(spark, "orc_estim_v2", "k BIGINT, h STRING, m INT", {
        **MOR, "write.format.default": "orc", "write.orc.stripe-size-bytes": "200000",
        "write.orc.block-size-bytes": "400000",
        "read.split.target-size": "500000", "write.distribution-mode": "none"})
    spark.sql(f"INSERT INTO {t} SELECT {WIDE} FROM range(0, 40000, 1, 2)")
    spark.sql(f"ALTER TABLE {t} ALTER COLUMN m TYPE BIGINT")
    spark.sql(f"DELETE FROM {t} WHERE k % 13 = 1")
    compute(spark, "orc_estim_v2")


def fixed_table(spark: SparkSession) -> None:
    types: Any = spark._jvm.org.apache.iceberg.types.Types  # type: ignore[attr-defined]
    create_table(spark, "fixed_v3", [(1, "id", types.LongType.get(), False),
                                     (2, "fx", types.FixedType.ofLength(6), False),
                                     (3, "r", types.IntegerType.get(), True)],
                 {"format-version": "3", **MOR})
    spark.sql("INSERT INTO local.db.fixed_v3 SELECT id, CASE WHEN id % 8 = 0 THEN NULL ELSE "
              "substr(unhex(sha2(CAST(id % 2500 AS STRING), 256)), 1, 6) END, "
              "CAST(id % 3 AS INT) FROM range(0, 4000)")
    spark.sql("DELETE FROM local.db.fixed_v3 WHERE id % 6 = 1")
    compute(spark, "fixed_v3")


def eq_dv(spark: SparkSession) -> None:
    t = create(spark, "eq_dv_v3", "id INT, cat STRING, v INT", MOR, version=3)
    spark.sql(f"INSERT INTO {t} SELECT CAST(id AS INT), concat('c', CAST(id % 12 AS STRING)), "
              "CAST(id % 40 AS INT) FROM range(0, 3000)")
    spark.sql(f"DELETE FROM {t} WHERE id % 9 = 0")
    commit_deletes(spark, "eq_dv_v3",
                   [write_equality_delete(spark, "eq_dv_v3", ["cat"], [("c1",), ("c4",)],
                                          "eq-cat")])
    spark.sql(f"DELETE FROM {t} WHERE id % 11 = 0")
    spark.sql("CALL local.system.rewrite_manifests('db.eq_dv_v3')")
    compute(spark, "eq_dv_v3")


def nested(spark: SparkSession) -> None:
    t = create(spark, "nested_v2", "id BIGINT, st STRUCT<x: INT, y: STRING>, arr ARRAY<INT>, "
               "mp MAP<STRING, INT>, s STRING", MOR)
    spark.sql(f"INSERT INTO {t} SELECT id, named_struct('x', CAST(id AS INT), 'y', 'q'), "
              "array(1, 2), map('k', 1), concat('c', CAST(id % 77 AS STRING)) "
              "FROM range(0, 3000)")
    spark.sql(f"DELETE FROM {t} WHERE id % 5 = 0")
    compute(spark, "nested_v2")


LEGACY = ("SELECT id, CAST(id % 5000 AS INT) AS m, concat('v', CAST(id % 4500 AS STRING)) AS s, "
          "TIMESTAMP'2020-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 1.25) AS ts, "
          "CAST((id % 3000 - 1500) / 100.0 AS DECIMAL(9,2)) AS dec FROM range(0, 9000)")
LEGACY_COLUMNS = "id BIGINT, m INT, s STRING, ts TIMESTAMP, dec DECIMAL(9,2)"


def migrated_legacy(spark: SparkSession, out: Path) -> None:
    t = create(spark, "migrated_legacy_v2", LEGACY_COLUMNS, MOR)
    source = out / "warehouse" / "db" / "migrated_legacy_v2" / "imported"
    legacy = {"spark.sql.parquet.outputTimestampType": "INT96",
              "spark.sql.parquet.writeLegacyFormat": "true"}
    for key, value in legacy.items():
        spark.conf.set(key, value)
    spark.sql(LEGACY).repartition(1).write.parquet(str(source))
    for key in legacy:
        spark.conf.unset(key)
    spark.sql("CALL local.system.add_files(table => 'db.migrated_legacy_v2', "
              f"source_table => '`parquet`.`{source}`')")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    compute(spark, "migrated_legacy_v2")


def avro_codecs(spark: SparkSession) -> None:
    t = create(spark, "avro_codecs_v2", LEGACY_COLUMNS, {
        **MOR, "write.format.default": "avro", "write.delete.format.default": "avro",
        "write.avro.compression-codec": "snappy"})
    spark.sql(f"INSERT INTO {t} {LEGACY}")
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.avro.compression-codec'='zstd')")
    spark.sql(f"INSERT INTO {t} {LEGACY.replace('range(0, 9000)', 'range(9000, 12000)')}")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    spark.sql("CALL local.system.rewrite_manifests('db.avro_codecs_v2')")
    compute(spark, "avro_codecs_v2")


def statistics(spark: SparkSession, name: str) -> dict[str, Any]:
    table = load_table(spark, name)
    stats = []
    for sf in list(table.statisticsFiles()):
        snapshot = table.snapshot(sf.snapshotId())
        schema = table.schemas().get(snapshot.schemaId())
        blobs = []
        for bm in list(sf.blobMetadata()):
            fields = [int(f) for f in list(bm.fields())]
            blobs.append({"fields": fields, "columns": [schema.findColumnName(f) for f in fields],
                          "properties": dict(bm.properties())})
        live = spark.read.option("snapshot-id", str(sf.snapshotId())).format("iceberg") \
            .load(f"local.db.{name}").count()
        stats.append({"snapshot-id": int(sf.snapshotId()), "path": sf.path(),
                      "data-manifests": len(list(snapshot.dataManifests(table.io()))),
                      "live-rows": int(live), "blobs": blobs})
    return {"current-snapshot-id": int(table.currentSnapshot().snapshotId()),
            "statistics": stats}


def build(out: Path, conf: dict[str, str]) -> None:
    spark = session("puffin-cli held-out tables", conf)
    part_mor(spark)
    trunc_dv(spark)
    evolve_cow(spark)
    eq_promote(spark)
    split_estim(spark)
    avro_estim(spark)
    orc_estim(spark)
    fixed_table(spark)
    eq_dv(spark)
    nested(spark)
    migrated_legacy(spark, out)
    avro_codecs(spark)
    doc = {name: statistics(spark, name) for name in TABLES}
    (out / "tables.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    spark.stop()


def main() -> None:
    build(Path(sys.argv[2]), json.loads(sys.argv[3]))


if __name__ == "__main__":
    main()
