"""Tables with several data manifests, for checking the order in which Iceberg Java's scan
planning reads them (Spark 3.5 + Iceberg 1.10.2), and Iceberg's ``compute_table_stats`` on them.

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli. The
driver JVM plans scans without Iceberg's worker pool (``ICEBERG_SCAN_PLAN_IN_WORKER_POOL``
false), so Iceberg reads the manifests one after the other and its order is fixed.

    python manifest_order_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/<table>: the tables below, each with Iceberg's statistics of its
        current snapshot. OUT_DIR/tables.json: per table, ``listed`` (its data manifests in
        manifest-list order), ``java`` (their order in Iceberg's relocated Guava
        ``Sets.newHashSet`` of the snapshot's ``dataManifests``, what ``ManifestGroup`` builds)
        and ``partitions`` (per Spark input partition of the table, the data files it reads, in
        order); ``sets``: synthetic lists of manifest paths with the iteration order of the
        same ``Sets.newHashSet`` over a list of elements hashing and comparing as
        ``GenericManifestFile`` does (a one-element ``java.util.List`` of the path:
        ``31 + path.hashCode()``, equal by path).

Tables (format 2, unpartitioned, one data file per append, ``commit.manifest-merge.enabled``
false so every append adds a data manifest; appends continue past the minimum until the
hash-set order differs from the list order), 6,000 rows per file: ``k`` bigint distinct on
every row, ``m`` int the values 0 to 5,999 in an order of the file's own, ``h`` string the
SHA-256 of ``m``. Four files of 4 MiB open cost share a 16 MiB split, so a Spark task's Alpha
sketch of ``m`` (or ``h``) takes its theta from the first file it reads, and the union of the
tasks keeps the smallest theta: the NDVs depend on which file comes first in which task.
- ``mo_appends_v2``: at least 6 appends: two Spark tasks.
- ``mo_many_v2``: at least 13 appends (a set of 13 or more manifests: 32 buckets or more in
  Java 17).
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from script_common import load_table, session

TABLES = {"mo_appends_v2": 6, "mo_many_v2": 13}
ROWS = 6000
STEPS = (7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 49, 53, 59, 61, 67, 71, 73, 77)
PROPS = {"format-version": "2", "commit.manifest-merge.enabled": "false",
         "write.distribution-mode": "none"}
MAX_APPENDS = len(STEPS)  # each coprime to ROWS


def sets_class(spark: SparkSession) -> Any:
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    return jvm.org.apache.iceberg.relocated.com.google.common.collect.Sets


def manifest_orders(spark: SparkSession, name: str) -> tuple[list[str], list[str]]:
    """(data manifests in list order, in ``Sets.newHashSet(dataManifests)`` order)."""
    table = load_table(spark, name)
    listed = table.currentSnapshot().dataManifests(table.io())
    hashed = sets_class(spark).newHashSet(listed)
    return ([str(m.path()) for m in listed], [str(m.path()) for m in hashed.iterator()])


def java_order(spark: SparkSession, paths: list[str]) -> list[str]:
    """The iteration order of ``Sets.newHashSet`` of a list of manifest-like elements."""
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    elements = jvm.java.util.ArrayList()
    for path in paths:
        one = jvm.java.util.ArrayList()
        one.add(path)
        elements.add(one)
    return [str(e.get(0)) for e in sets_class(spark).newHashSet(elements).iterator()]


def bucket(spark: SparkSession, path: str, capacity: int) -> int:
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    one = jvm.java.util.ArrayList()
    one.add(path)
    h = int(one.hashCode()) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def synthetic_sets(spark: SparkSession) -> list[dict[str, Any]]:
    """Lists of 1 to 70 random manifest paths (some non-ASCII, one outside the BMP), and lists
    with 9 to 12 paths in one bucket of 16 (the set doubles its table instead of making a
    tree)."""
    rng = random.Random(19)
    chars = "abcdef0123456789-_/ü€"

    def path() -> str:
        tail = "".join(rng.choice(chars) for _ in range(rng.randint(8, 40)))
        extra = "\U0001F642" if rng.random() < 0.05 else ""
        return f"s3://bucket/warehouse/db/t/metadata/{tail}{extra}-m{rng.randint(0, 3)}.avro"

    cases = [[path() for _ in range(n)] for n in range(1, 71)]
    for crowd in (9, 10, 12):
        same: list[str] = []
        while len(same) < crowd:
            candidate = path()
            if bucket(spark, candidate, 16) == 5:
                same.append(candidate)
        cases.append([*same[:4], path(), *same[4:], path()])
    cases.append([*cases[10], *cases[10][:3]])  # duplicates count in the initial size
    return [{"paths": c, "java": java_order(spark, c)} for c in cases]


def layout(spark: SparkSession, name: str) -> list[list[str]]:
    """Per Spark input partition, the data files it reads, in order."""
    def files(index: int, rows: Any) -> Any:
        seen: list[str] = []
        for row in rows:
            if not seen or seen[-1] != row[0]:
                seen.append(row[0])
        yield index, seen

    frame = spark.table(f"local.db.{name}").select("_file")
    parts = dict(frame.rdd.mapPartitionsWithIndex(files).collect())
    return [parts[i] for i in range(len(parts))]


def build_table(spark: SparkSession, name: str, appends: int) -> dict[str, Any]:
    text = ", ".join(f"'{k}'='{v}'" for k, v in PROPS.items())
    spark.sql(f"CREATE TABLE local.db.{name} (k BIGINT, h STRING, m INT) USING iceberg "
              f"TBLPROPERTIES ({text})")
    done = 0
    while done < MAX_APPENDS:
        m = f"CAST((id * {STEPS[done]} + {done * 977}) % {ROWS} AS INT)"
        spark.sql(f"INSERT INTO local.db.{name} SELECT id * 104729 % 1000003 AS k, "
                  f"sha2(CAST({m} AS STRING), 256) AS h, {m} AS m "
                  f"FROM range({done * ROWS}, {(done + 1) * ROWS}, 1, 1)")
        done += 1
        listed, hashed = manifest_orders(spark, name)
        if done >= appends and listed != hashed:
            break
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}')")
    listed, hashed = manifest_orders(spark, name)
    return {"listed": listed, "java": hashed, "partitions": layout(spark, name)}


def build(out: Path, conf: dict[str, str]) -> None:
    os.environ["ICEBERG_SCAN_PLAN_IN_WORKER_POOL"] = "false"  # read by the driver JVM
    spark = session("puffin-cli manifest order tables", conf)
    doc: dict[str, Any] = {name: build_table(spark, name, appends)
                           for name, appends in TABLES.items()}
    doc["sets"] = synthetic_sets(spark)
    (out / "tables.json").write_text(json.dumps(doc, indent=1, sort_keys=True))
    spark.stop()


def main() -> None:
    build(Path(sys.argv[2]), json.loads(sys.argv[3]))


if __name__ == "__main__":
    main()
