"""Tables whose partition tuples hold every transform over every source type that allows it,
written by Spark 3.5 + Iceberg 1.10.2, and what Iceberg Java reads as their partition values.

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python partition_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/<table>: the tables below. OUT_DIR/tables.json: per table, per
        snapshot, every live data and delete file with its spec ID and its partition tuple as
        Iceberg Java has it (``PartitionData`` from the manifests): per field, the value in
        JSON (Iceberg's ``SingleValueParser.toJson`` of the spec's partition type: an object by
        field ID) and in human form (the transform's ``toHumanString``, read back from
        ``spec.partitionToPath``, URL-decoded), and that path itself;
        also the rows of Spark's ``files`` metadata table (file path, spec ID), and
        ``timestamp_ns``: what became of writing a ``timestamp_ns`` column with Spark.

Tables:
- ``issue32_v3``: the layout of issue 32, made by Spark SQL: format 3, ``PARTITIONED BY
  (bucket(4, id), days(ts))``, merge-on-read DELETE and UPDATE (deletion vectors).
- ``matrix_v2`` (format 2, position delete files) and ``matrix_v3`` (format 3, deletion
  vectors): created through the Java API (uuid and fixed columns, the void transform), one
  partition spec of 41 fields: identity on every type (int, long, string with non-ASCII text
  and ``/ = % +`` in it, date, timestamp, timestamptz, decimal(9,2), decimal(38,0), binary,
  fixed[4], uuid, boolean), bucket on every type that allows it,
  truncate on int, long, string, decimal and binary, year/month/day on date, timestamp and
  timestamptz, hour on both timestamps (a time transform per source column: Iceberg refuses
  two on one), void on two columns. Rows from before 1970 and far from it, and one row of
  NULLs (every partition value null), each row twice. INSERT, merge-on-read DELETE (the NULL
  row too) and UPDATE, then a spec evolution (a bucket field removed, another added),
  INSERT, DELETE touching files of both specs. Iceberg Java writes the fixed[4] identity
  value in the manifests as Avro ``bytes`` (its length first) although their schema declares
  ``fixed`` of size 4 (``ValueWriters.FixedByteBufferWriter``, apache/iceberg#17501): a reader
  that follows the schema misreads every entry from there on.

Spark cannot write ``timestamp_ns`` (``timestamp_ns`` in tables.json says what
  it answered), so no table has one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from pyspark.sql import SparkSession
from script_common import load_table, session

TABLES = ("issue32_v3", "matrix_v2", "matrix_v3")
MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}

# (column, Iceberg type name, Spark SQL expression per row k of ROWS) for the matrix tables.
COLUMNS = ("k", "i", "l", "s", "d", "d2", "d3", "ts", "ts2", "ts3", "ts4", "tz", "tz2",
           "tz3", "tz4", "dec", "big", "bin", "fx", "u", "b")
# k, i, l, s, date, timestamp (without zone), timestamptz (UTC session), decimal(9,2),
# decimal(38,0), binary, fixed[4], uuid, boolean. None: NULL.
ROWS: list[tuple[Any, ...]] = [
    (0, -7, -7000000007, "ключ-日本-🙂", "1969-12-31", "1969-12-31 23:59:59.999999",
     "1969-12-31 23:00:00", "-0.01", "-99999999999999999999999999999999999999",
     "", "00000000", "00000000-0000-0000-0000-000000000000", True),
    (1, 0, 0, "", "1970-01-01", "1970-01-01 00:00:00", "1970-01-01 00:00:00",
     "0.00", "0", "00", "DEADBEEF", "f79c3e09-677c-4bbd-a479-3f349cb785e7", False),
    (2, 1, 1, "a", "2024-02-29", "2024-02-29 23:59:59", "2024-02-29 12:34:56.5",
     "1234567.89", "1", "DEADBEEF", "FFFFFFFF", "ffffffff-ffff-ffff-ffff-ffffffffffff", True),
    (3, 15, 4611686018427387904, "naïve/slash=eq%+ sp", "2024-03-02",
     "2024-03-02 10:00:00", "2024-03-02 10:30:15.123456", "-999999.99",
     "99999999999999999999999999999999999999", "FF00FF", "01020304",
     "123e4567-e89b-12d3-a456-426614174000", False),
    (4, 2147483647, 9223372036854775807, "Ωmega", "1900-01-01", "1900-01-01 00:00:00.000001",
     "1900-06-15 08:00:00", "10.65", "-1", "FBFF", "7F000001",
     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", True),
    (5, -2147483648, -9223372036854775808, "ab", "2262-04-11", "2262-04-11 23:47:16.854775",
     "2262-04-11 23:47:16.854775", "0.50", "12345678901234567890", "0102030405060708",
     "80000000", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", False),
    (6, 42, 42, "日本語テキスト長い", "2000-01-01", "2000-01-01 00:00:00.1",
     "1999-12-31 23:59:59.999", "7.00", "100000000000000000000", "61626364", "0000FFFF",
     "00000000-0000-0000-0000-000000000001", True),
    (7, None, None, None, None, None, None, None, None, None, None, None, None),
]


def sql_row(row: tuple[Any, ...]) -> str:
    k, i, long_, s, d, ts, tz, dec, big, bin_, fx, u, b = row

    def lit(value: Any, kind: str) -> str:
        if value is None:
            return f"CAST(NULL AS {kind})"
        if kind == "STRING":
            return "'" + str(value).replace("'", "''") + "'"
        if kind == "BINARY":
            return f"X'{value}'"
        if kind == "BOOLEAN":
            return "true" if value else "false"
        if kind in ("DATE", "TIMESTAMP_NTZ", "TIMESTAMP"):
            return f"{kind}'{value}'"
        return f"CAST('{value}' AS {kind})"

    date = lit(d, "DATE")
    ntz = lit(ts, "TIMESTAMP_NTZ")
    ltz = lit(tz, "TIMESTAMP")
    return ", ".join([str(k), lit(i, "INT"), lit(long_, "BIGINT"), lit(s, "STRING"), date, date,
                      date, ntz, ntz, ntz, ntz, ltz, ltz, ltz, ltz, lit(dec, "DECIMAL(9,2)"),
                      lit(big, "DECIMAL(38,0)"), lit(bin_, "BINARY"), lit(fx, "BINARY"),
                      lit(u, "STRING"), lit(b, "BOOLEAN")])


def create_matrix(spark: SparkSession, name: str, version: int) -> None:
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    t = jvm.org.apache.iceberg.types.Types
    kinds = {"k": t.IntegerType.get(), "i": t.IntegerType.get(), "l": t.LongType.get(),
             "s": t.StringType.get(), "dec": t.DecimalType.of(9, 2),
             "big": t.DecimalType.of(38, 0), "bin": t.BinaryType.get(),
             "fx": t.FixedType.ofLength(4), "u": t.UUIDType.get(), "b": t.BooleanType.get()}
    for column in ("d", "d2", "d3"):
        kinds[column] = t.DateType.get()
    for column in ("ts", "ts2", "ts3", "ts4"):
        kinds[column] = t.TimestampType.withoutZone()
    for column in ("tz", "tz2", "tz3", "tz4"):
        kinds[column] = t.TimestampType.withZone()
    fields = jvm.java.util.ArrayList()
    for index, column in enumerate(COLUMNS):
        fields.add(t.NestedField.optional(index + 1, column, kinds[column]))
    schema = jvm.org.apache.iceberg.Schema(fields)
    spec = jvm.org.apache.iceberg.PartitionSpec.builderFor(schema)
    for column in ("i", "l", "s", "d", "ts", "tz", "dec", "big", "bin", "fx", "u", "b"):
        spec = spec.identity(column)
    for column, buckets in (("i", 3), ("l", 4), ("s", 5), ("d", 3), ("ts", 4), ("tz", 4),
                            ("dec", 3), ("big", 2), ("bin", 3), ("fx", 3), ("u", 3)):
        spec = spec.bucket(column, buckets)
    for column, width in (("i", 10), ("l", 100), ("s", 2), ("dec", 50), ("bin", 2)):
        spec = spec.truncate(column, width)
    spec = (spec.year("d").month("d2").day("d3")
            .hour("ts").year("ts2").month("ts3").day("ts4")
            .hour("tz").year("tz2").month("tz3").day("tz4")
            .alwaysNull("k", "k_null").alwaysNull("s", "s_null"))
    settings = jvm.java.util.HashMap()
    for key, value in {"format-version": str(version), **MOR}.items():
        settings.put(key, value)
    catalog = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergCatalog(
        spark._jsparkSession, "local")  # type: ignore[attr-defined]
    catalog.createTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"),
                        schema, spec.build(), settings)


def matrix(spark: SparkSession, name: str, version: int) -> None:
    create_matrix(spark, name, version)
    t = f"local.db.{name}"
    # Every row twice (k and k + 10: one data file per partition tuple, of two rows), so that
    # a DELETE of one of them writes a delete file (deleting a whole file is a metadata
    # operation).
    values = ", ".join(f"({sql_row((row[0] + copy, *row[1:]))})"
                       for row in ROWS for copy in (0, 10))
    spark.sql(f"INSERT INTO {t} VALUES {values}")
    spark.sql(f"DELETE FROM {t} WHERE k IN (0, 3, 7)")
    spark.sql(f"UPDATE {t} SET dec = dec WHERE k IN (12, 15)")
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    expressions = jvm.org.apache.iceberg.expressions.Expressions
    (load_table(spark, name).updateSpec().removeField("l_bucket")
     .addField("i_bucket_7", expressions.bucket("i", 7)).commit())
    again = ", ".join(f"({sql_row((row[0] + copy, *row[1:]))})"
                      for row in ROWS for copy in (100, 110))
    spark.sql(f"INSERT INTO {t} VALUES {again}")
    spark.sql(f"DELETE FROM {t} WHERE k IN (1, 16, 104, 117)")


def issue32(spark: SparkSession) -> None:
    t = "local.db.issue32_v3"
    props = ", ".join(f"'{k}'='{v}'" for k, v in {"format-version": "3", **MOR}.items())
    spark.sql(f"CREATE TABLE {t} (id BIGINT, ts TIMESTAMP, v STRING) USING iceberg "
              f"PARTITIONED BY (bucket(4, id), days(ts)) TBLPROPERTIES ({props})")
    spark.sql(f"""INSERT INTO {t} SELECT id, TIMESTAMP'2024-02-28 22:00:00'
                  + make_interval(0, 0, 0, 0, CAST(id * 7 AS INT), 0, 0), CAST(id AS STRING)
                  FROM range(0, 60)""")
    spark.sql(f"DELETE FROM {t} WHERE id % 5 = 0")
    spark.sql(f"UPDATE {t} SET v = concat(v, '-u') WHERE id % 7 = 1")


def timestamp_ns(spark: SparkSession) -> dict[str, Any]:
    """Whether Spark 3.5 + Iceberg 1.10.2 writes a ``timestamp_ns`` column: the table is made
    through the Java API; Spark is asked to read and to INSERT into it."""
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    t = jvm.org.apache.iceberg.types.Types
    fields = jvm.java.util.ArrayList()
    fields.add(t.NestedField.optional(1, "id", t.IntegerType.get()))
    fields.add(t.NestedField.optional(2, "tn", t.TimestampNanoType.withoutZone()))
    schema = jvm.org.apache.iceberg.Schema(fields)
    spec = jvm.org.apache.iceberg.PartitionSpec.builderFor(schema).day("tn").build()
    settings = jvm.java.util.HashMap()
    settings.put("format-version", "3")
    catalog = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergCatalog(
        spark._jsparkSession, "local")  # type: ignore[attr-defined]
    ident = jvm.org.apache.iceberg.catalog.TableIdentifier.parse("db.nanos_v3")
    catalog.createTable(ident, schema, spec, settings)
    outcome: dict[str, Any] = {"created": True}
    try:
        spark.sql("INSERT INTO local.db.nanos_v3 VALUES (1, TIMESTAMP_NTZ'2024-03-02 10:00:00')")
        outcome["written"] = True
    except Exception as exc:  # recording Spark's refusal is the point
        outcome["written"] = False
        outcome["error"] = " ".join(str(exc).split())[:300]
    if not outcome["written"]:
        catalog.dropTable(ident, True)
    return outcome


def java_partitions(spark: SparkSession, name: str) -> dict[str, Any]:
    """Per snapshot, every live file's partition tuple as Iceberg Java reads it."""
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    table = load_table(spark, name)
    io = table.io()
    specs = table.specs()
    parser = jvm.org.apache.iceberg.SingleValueParser
    files = jvm.org.apache.iceberg.ManifestFiles
    out: dict[str, Any] = {}
    for snapshot in table.snapshots():
        listed = []
        for manifest in snapshot.allManifests(io):
            if manifest.content().toString() == "DATA":
                reader = files.read(manifest, io, specs)
            else:
                reader = files.readDeleteManifest(manifest, io, specs)
            iterator = reader.iterator()
            while iterator.hasNext():
                f = iterator.next()
                spec = specs.get(f.specId())
                ids = {str(field.fieldId()): field.name() for field in spec.fields()}
                by_id = json.loads(parser.toJson(spec.partitionType(), f.partition()))
                path = spec.partitionToPath(f.partition())
                human = {unquote_plus(name): unquote_plus(value) for name, value in
                         (part.split("=", 1) for part in path.split("/"))} if path else {}
                listed.append({"path": f.location(), "content": f.content().toString(),
                               "spec-id": f.specId(),
                               "partition": {ids[k]: v for k, v in by_id.items()},
                               "human": human, "partition-path": path})
            reader.close()
        out[str(snapshot.snapshotId())] = listed
    return out


def build(out: Path, conf: dict[str, str]) -> None:
    spark = session("partition-tables", conf)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    issue32(spark)
    matrix(spark, "matrix_v2", 2)
    matrix(spark, "matrix_v3", 3)
    report: dict[str, Any] = {"timestamp_ns": timestamp_ns(spark), "tables": {}}
    for name in TABLES:
        spark_files = [(r["file_path"], r["spec_id"], r["content"]) for r in spark.sql(
            f"SELECT file_path, spec_id, content FROM local.db.{name}.files").collect()]
        report["tables"][name] = {
            "current-snapshot-id": int(load_table(spark, name).currentSnapshot().snapshotId()),
            "snapshots": java_partitions(spark, name),
            "spark-files": sorted(spark_files)}
    (out / "tables.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    spark.stop()


if __name__ == "__main__":
    if sys.argv[1] != "build":
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
    build(Path(sys.argv[2]), json.loads(sys.argv[3]))
