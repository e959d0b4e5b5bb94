"""Iceberg Java's reading of a table: ``read_table.py WAREHOUSE NAME CONF SNAPSHOT...`` prints
(JSON) for each snapshot the files Iceberg Java plans (each data file with its delete files)
and the live ``id`` values Spark reads, so a test can check a table that puffin-cli committed
to with Iceberg itself as the judge."""

from __future__ import annotations

import json
import sys
from typing import Any

from script_common import load_table, session


def _long(value: Any) -> int | None:
    return None if value is None else int(value)


def planned(table: Any, snapshot_id: int) -> list[dict[str, Any]]:
    tasks = table.newScan().useSnapshot(snapshot_id).planFiles()
    out = []
    iterator = tasks.iterator()
    while iterator.hasNext():
        task = iterator.next()
        deletes = [{"path": d.location(), "format": str(d.format().toString()).lower(),
                    "referenced-data-file": d.referencedDataFile(),
                    "offset": _long(d.contentOffset()), "length": _long(d.contentSizeInBytes()),
                    "record-count": int(d.recordCount())} for d in list(task.deletes())]
        out.append({"data-file": task.file().location(),
                    "deletes": sorted(deletes, key=lambda d: d["path"])})
    tasks.close()
    return sorted(out, key=lambda t: t["data-file"])


def main() -> None:
    name, conf = sys.argv[1], json.loads(sys.argv[2])
    snapshots = [int(s) for s in sys.argv[3:]]
    spark = session("puffin-cli read table", conf)
    table = load_table(spark, name)
    doc: dict[str, Any] = {"current-snapshot-id": int(table.currentSnapshot().snapshotId()),
                           "snapshots": {}}
    for snapshot_id in snapshots:
        rows = (spark.read.format("iceberg").option("snapshot-id", snapshot_id)
                .load(f"local.db.{name}").select("id").collect())
        doc["snapshots"][str(snapshot_id)] = {
            "planned": planned(table, snapshot_id),
            "ids": sorted(int(r[0]) for r in rows)}
    print(json.dumps(doc))
    spark.stop()


if __name__ == "__main__":
    main()
