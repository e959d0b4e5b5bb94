"""What Iceberg Java (1.10.2, in Spark 3.5) reads from a table directory: the judge of the
broken tables (broken_tables.py) and of what repairs them.

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python java_judge.py serve CONF_JSON
        one request a line on stdin, ``{"table": DIR}``; one reply a line on stdout,
        ``JUDGE <json>`` (other stdout lines are Spark's, ignored by tests/interop/judge.py)

:func:`judge` is the reply (documented in tests/interop/README.md, "The judge"): the table is
loaded fresh each time through ``HadoopTables`` (a file-system table: the newest
``metadata/v<N>.metadata.json``), its current snapshot planned with Iceberg's scan planning,
its live rows read through Spark's Iceberg source, and each statistics and partition
statistics file read with the sizes the metadata registers.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pyspark.sql import SparkSession
from script_common import session


def java_error(exc: BaseException) -> str:
    """The text of a Java exception and its causes (``Class: message`` each, `` <- ``
    between), or the Python exception's text."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return f"{type(exc).__name__}: {exc}"
    texts = []
    while java is not None and len(texts) < 8:
        texts.append(str(java.toString()))
        java = java.getCause()
    return " <- ".join(texts)


def _iterate(iterable: Any) -> Any:
    iterator = iterable.iterator()
    while iterator.hasNext():
        yield iterator.next()


def _long(value: Any) -> int | None:
    return None if value is None else int(value)


def _plan(table: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    tasks = []
    try:
        planned = table.newScan().planFiles()
        try:
            for task in _iterate(planned):
                deletes = [{"path": str(d.location()),
                            "format": str(d.format().toString()).lower(),
                            "referenced-data-file": d.referencedDataFile(),
                            "offset": _long(d.contentOffset()),
                            "length": _long(d.contentSizeInBytes()),
                            "record-count": int(d.recordCount())}
                           for d in _iterate(task.deletes())]
                tasks.append({"data-file": str(task.file().location()),
                              "record-count": int(task.file().recordCount()),
                              "deletes": sorted(deletes, key=lambda d: d["path"])})
        finally:
            planned.close()
    except Exception as exc:  # the judge reports what Java raised
        return None, java_error(exc)
    return sorted(tasks, key=lambda t: t["data-file"]), None


def _rows(spark: SparkSession, location: str) -> tuple[list[list[Any]] | None, str | None]:
    try:
        rows = (spark.read.format("iceberg").load(location)
                .select("id", "_file", "_pos").collect())
    except Exception as exc:
        return None, java_error(exc)
    return sorted([int(r[0]), str(r[1]), int(r[2])] for r in rows), None


def _statistics(table: Any, jvm: Any) -> list[dict[str, Any]]:
    out = []
    for sf in _iterate(table.statisticsFiles()):
        entry: dict[str, Any] = {
            "snapshot-id": int(sf.snapshotId()), "path": str(sf.path()),
            "file-size-in-bytes": int(sf.fileSizeInBytes()),
            "file-footer-size-in-bytes": int(sf.fileFooterSizeInBytes()),
            "snapshot-exists": table.snapshot(sf.snapshotId()) is not None,
            "blob-metadata-snapshot-ids": [int(b.sourceSnapshotId())
                                           for b in _iterate(sf.blobMetadata())],
            "blob-snapshot-ids": None, "blobs-read": None, "error": None}
        try:
            reader = (jvm.org.apache.iceberg.puffin.Puffin
                      .read(table.io().newInputFile(sf.path(), sf.fileSizeInBytes()))
                      .withFileSize(sf.fileSizeInBytes())
                      .withFooterSize(sf.fileFooterSizeInBytes()).build())
            try:
                blobs = reader.fileMetadata().blobs()
                entry["blob-snapshot-ids"] = [int(b.snapshotId()) for b in _iterate(blobs)]
                entry["blobs-read"] = sum(1 for _ in _iterate(reader.readAll(blobs)))
            finally:
                reader.close()
        except Exception as exc:
            entry["error"] = java_error(exc)
        out.append(entry)
    return sorted(out, key=lambda e: (e["snapshot-id"], e["path"]))


def _partition_statistics(table: Any, jvm: Any) -> list[dict[str, Any]]:
    """Each registered partition statistics file as Iceberg 1.10's core
    ``PartitionStatsHandler`` reads it with the table's schema: its ``rows``, or ``error``
    (a file of Iceberg 1.9.x's field IDs is one it cannot read)."""
    from partition_stats_tables import stats_rows

    out = []
    for pf in _iterate(table.partitionStatisticsFiles()):
        rows, error = None, None
        try:
            rows = stats_rows(jvm, table, str(pf.path()))
        except Exception as exc:
            error = java_error(exc)
        out.append({"snapshot-id": int(pf.snapshotId()), "path": str(pf.path()),
                    "file-size-in-bytes": int(pf.fileSizeInBytes()),
                    "rows-read": None if rows is None else len(rows), "rows": rows,
                    "error": error})
    return sorted(out, key=lambda e: (e["snapshot-id"], e["path"]))


def judge(spark: SparkSession, location: str) -> dict[str, Any]:
    """What Iceberg Java reads from the file-system table at ``location`` (see the module)."""
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    conf = spark._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
    try:
        table = jvm.org.apache.iceberg.hadoop.HadoopTables(conf).load(location)
    except Exception as exc:
        return {"load-error": java_error(exc)}
    current = table.currentSnapshot()
    tasks, planning_error = _plan(table)
    rows, read_error = _rows(spark, location)
    return {"load-error": None, "location": str(table.location()),
            "current-snapshot-id": None if current is None else int(current.snapshotId()),
            "snapshot-ids": sorted(int(s.snapshotId()) for s in _iterate(table.snapshots())),
            "tasks": tasks, "planning-error": planning_error,
            "rows": rows, "read-error": read_error,
            "statistics": _statistics(table, jvm),
            "partition-statistics": _partition_statistics(table, jvm)}


def serve(conf: dict[str, str]) -> None:
    spark = session("puffin-cli java judge", conf)
    print("JUDGE " + json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print("JUDGE " + json.dumps(judge(spark, request["table"])), flush=True)
    spark.stop()


if __name__ == "__main__":
    serve(json.loads(sys.argv[2]))
