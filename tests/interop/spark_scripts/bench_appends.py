"""Appends to the benchmark table of benchmarks/bench_spark.py, for the incremental figures of
benchmarks/bench_incremental.py (Spark 3.5 + Iceberg 1.10.2).

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python bench_appends.py OUT_DIR CONF_JSON ROWS TAG
        OUT_DIR/warehouse/db/bench (built by ``stats_tables.py bench``, whose current snapshot
        has Iceberg's ``compute_table_stats``) gets two branches off that snapshot, each one
        append of new rows in one Spark partition (ids from ROWS on, the columns' expressions
        of the table build): ``<TAG>_pct``, 1% of ROWS rows, and ``<TAG>_1m``, 1,000,000 rows.
        The main branch is unchanged. Then the table property ``read.split.open-file-cost``
        is set to 16 MiB (the split size of the table: every data file its own Spark task).
        OUT_DIR/appends-<TAG>.json: the base snapshot, the two branch snapshots, their row
        counts, and the metadata files before and after the property.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from script_common import load_table, session

COLUMNS = ("id, CAST(id % 1000003 AS INT) AS n, (id % 2000000) * 0.25D AS x, "
           "concat('customer-', CAST(id % 5000000 AS STRING)) AS s, "
           "date_add(DATE'2000-01-01', CAST(id % 10000 AS INT)) AS dt, "
           "CAST((id % 777777) / 100.0 AS DECIMAL(12,2)) AS amount")


def main() -> None:
    out, conf, rows, tag = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    spark = session("puffin-cli bench appends", conf)
    t = "local.db.bench"
    base = int(load_table(spark, "bench").currentSnapshot().snapshotId())
    doc: dict[str, object] = {"base": base}
    start = rows
    for suffix, count in (("pct", rows // 100), ("1m", 1_000_000)):
        branch = f"{tag}_{suffix}"
        spark.sql(f"ALTER TABLE {t} CREATE BRANCH {branch}")
        spark.sql(f"INSERT INTO {t}.branch_{branch} SELECT {COLUMNS} "
                  f"FROM range({start}, {start + count}, 1, 1)")
        start += count
        snapshot = load_table(spark, "bench").refs().get(branch).snapshotId()
        doc[suffix] = {"snapshot": int(snapshot), "rows": count}
    doc["metadata-default"] = str(
        load_table(spark, "bench").operations().current().metadataFileLocation())
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('read.split.open-file-cost'='16777216')")
    doc["metadata"] = str(
        load_table(spark, "bench").operations().current().metadataFileLocation())
    (out / f"appends-{tag}.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    main()
