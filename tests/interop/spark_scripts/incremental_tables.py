"""Tables for incremental ``stats compute``: Iceberg Java's statistics of a base snapshot, then
more commits, then Iceberg's ``compute_table_stats`` of the target snapshot as the oracle
(Spark 3.5 + Iceberg 1.10.2).

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli. The
driver JVM plans scans without Iceberg's worker pool, so its manifest order is fixed.

    python incremental_tables.py build OUT_DIR CONF_JSON
        OUT_DIR/warehouse/db/<table>: the tables below; the target's statistics entry is
        removed again after Iceberg computed it, so the base's are the newest; the oracle
        file stays in metadata/. OUT_DIR/tables.json: per table, ``base`` and ``target``
        (snapshot IDs) and ``oracle`` (the file name of Iceberg's statistics of the target).

Every append writes 4 data files of 2,000 rows (``k`` bigint distinct, ``h`` string the
SHA-256 of ``m``, ``m`` int a per-append permutation of 0..5,999 in steps, ``p`` int 0..3), one
data manifest each (manifest merging off). Four files of 4 MiB open cost fill a 16 MiB split,
so each append is one Spark task of its own and ``k``, ``h`` and ``m`` are in estimation mode
in every task.
- ``inc_appends_v2``: 2 appends, base; ``m`` renamed ``m2``; 2 appends, target.
- ``inc_compact_v2``: 2 appends, base; 1 append; ``rewrite_data_files`` (replace), target.
- ``inc_delete_v2``: 2 appends, base; 1 append; a merge-on-read DELETE, target.
- ``inc_promote_v2``: 2 appends, base; ``p`` int promoted to bigint; 1 append, target.
- ``inc_part_v2``: partitioned by ``identity(p)``, hash distribution (one file per partition
  and append); 2 appends, base; 2 appends, target.
- ``inc_small_v2``: 1 append of 2 files, base; 1 append of 2 files, target: all four files
  in one task at the target, two at the base.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from script_common import load_table, session

ROWS = 2000
STEPS = (7, 11, 13, 17, 19, 23)
PROPS = {"format-version": "2", "commit.manifest-merge.enabled": "false",
         "write.distribution-mode": "none"}


def create(spark: SparkSession, name: str, extra: dict[str, str] | None = None,
           partitioned: bool = False) -> None:
    props = {**PROPS, **(extra or {})}
    text = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    part = " PARTITIONED BY (p)" if partitioned else ""
    spark.sql(f"CREATE TABLE local.db.{name} (k BIGINT, h STRING, m INT, p INT) USING iceberg"
              f"{part} TBLPROPERTIES ({text})")


def append(spark: SparkSession, name: str, n: int, files: int = 4) -> None:
    m = f"CAST((id * {STEPS[n % len(STEPS)]} + {n * 977}) % 6000 AS INT)"
    start = n * ROWS * 4
    spark.sql(f"INSERT INTO local.db.{name} SELECT id * 104729 % 100000007 AS k, "
              f"sha2(CAST({m} AS STRING), 256) AS h, {m} AS m, CAST(id % 4 AS INT) AS p "
              f"FROM range({start}, {start + ROWS * files}, 1, {files})")


def current(spark: SparkSession, name: str) -> int:
    return int(load_table(spark, name).currentSnapshot().snapshotId())


def stats(spark: SparkSession, name: str) -> None:
    spark.sql(f"CALL local.system.compute_table_stats(table => 'db.{name}')")


def oracle(spark: SparkSession, name: str, base: int) -> dict[str, Any]:
    """Iceberg's statistics of the current snapshot, then its entry removed."""
    target = current(spark, name)
    stats(spark, name)
    table = load_table(spark, name)
    found = [s for s in table.statisticsFiles() if int(s.snapshotId()) == target]
    path = str(found[0].path())
    table.updateStatistics().removeStatistics(target).commit()
    return {"base": base, "target": target, "oracle": path.rsplit("/", 1)[-1]}


def build_tables(spark: SparkSession) -> dict[str, Any]:
    doc: dict[str, Any] = {}

    create(spark, "inc_appends_v2")
    append(spark, "inc_appends_v2", 0)
    append(spark, "inc_appends_v2", 1)
    stats(spark, "inc_appends_v2")
    base = current(spark, "inc_appends_v2")
    spark.sql("ALTER TABLE local.db.inc_appends_v2 RENAME COLUMN m TO m2")
    append(spark, "inc_appends_v2", 2)
    append(spark, "inc_appends_v2", 3)
    doc["inc_appends_v2"] = oracle(spark, "inc_appends_v2", base)

    create(spark, "inc_compact_v2")
    append(spark, "inc_compact_v2", 0)
    append(spark, "inc_compact_v2", 1)
    stats(spark, "inc_compact_v2")
    base = current(spark, "inc_compact_v2")
    append(spark, "inc_compact_v2", 2)
    spark.sql("CALL local.system.rewrite_data_files(table => 'db.inc_compact_v2', "
              "options => map('min-input-files', '2', 'target-file-size-bytes', '200000'))")
    doc["inc_compact_v2"] = oracle(spark, "inc_compact_v2", base)

    create(spark, "inc_delete_v2", {"write.delete.mode": "merge-on-read"})
    append(spark, "inc_delete_v2", 0)
    append(spark, "inc_delete_v2", 1)
    stats(spark, "inc_delete_v2")
    base = current(spark, "inc_delete_v2")
    append(spark, "inc_delete_v2", 2)
    spark.sql("DELETE FROM local.db.inc_delete_v2 WHERE k % 7 = 0")
    doc["inc_delete_v2"] = oracle(spark, "inc_delete_v2", base)

    create(spark, "inc_promote_v2")
    append(spark, "inc_promote_v2", 0)
    append(spark, "inc_promote_v2", 1)
    stats(spark, "inc_promote_v2")
    base = current(spark, "inc_promote_v2")
    spark.sql("ALTER TABLE local.db.inc_promote_v2 ALTER COLUMN p TYPE BIGINT")
    append(spark, "inc_promote_v2", 2)
    doc["inc_promote_v2"] = oracle(spark, "inc_promote_v2", base)

    create(spark, "inc_part_v2", {"write.distribution-mode": "hash"}, partitioned=True)
    append(spark, "inc_part_v2", 0)
    append(spark, "inc_part_v2", 1)
    stats(spark, "inc_part_v2")
    base = current(spark, "inc_part_v2")
    append(spark, "inc_part_v2", 2)
    append(spark, "inc_part_v2", 3)
    doc["inc_part_v2"] = oracle(spark, "inc_part_v2", base)

    create(spark, "inc_small_v2")
    append(spark, "inc_small_v2", 0, files=2)
    stats(spark, "inc_small_v2")
    base = current(spark, "inc_small_v2")
    append(spark, "inc_small_v2", 1, files=2)
    doc["inc_small_v2"] = oracle(spark, "inc_small_v2", base)
    return doc


def build(out: Path, conf: dict[str, str]) -> None:
    os.environ["ICEBERG_SCAN_PLAN_IN_WORKER_POOL"] = "false"  # read by the driver JVM
    spark = session("puffin-cli incremental tables", conf)
    doc = build_tables(spark)
    (out / "tables.json").write_text(json.dumps(doc, indent=1, sort_keys=True))
    spark.stop()


def main() -> None:
    build(Path(sys.argv[2]), json.loads(sys.argv[3]))


if __name__ == "__main__":
    main()
