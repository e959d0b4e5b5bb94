"""Broken format-3 tables, each made by Iceberg Java itself (Spark 3.5 + Iceberg 1.10.2 and its
Java API through py4j): what ``puffin repair`` heals (issue 20), with what Iceberg Java reads
from each (java_judge.py) recorded beside it.

Runs with the PySpark 3.5 venv (tests/interop/sparkenv.py); never imports puffin_cli.

    python broken_tables.py OUT_DIR CONF_JSON
        OUT_DIR/tables/<name>: each table, in a warehouse whose path is padded to at least
        200 characters (tests/interop/broken.py copies a table elsewhere by replacing its
        location, which must keep its length). OUT_DIR/<name>.json: ``root`` (the table's
        directory), ``java`` (the judge's report), ``built`` (what the build did: data files,
        the DVs involved, ``expected-ids``: the ids Iceberg Java should read once the table
        is repaired), ``orphans`` (for ``orphans``: path under the root -> age in days).
        Hadoop's ``.crc`` side files are removed (tables are edited after writing).

Every table has three data files of 100 rows each (ids 0-99, 100-199, 200-299, one file
each, position = id - first id) unless said; DELETE writes DVs with Iceberg's
``BaseDVFileWriter`` (DVs of one task share a Puffin file).
- ``dup_dv``: a branch ``side`` made before ``DELETE ... WHERE id % 7 = 0`` on main; a
  DELETE of ``id % 5 = 0`` in one data file on the branch; that branch DV committed to main by
  ``RowDelta`` validating from the current snapshot (it refuses otherwise): two live DVs for
  that data file, the first in a Puffin file with another data file's DV. Every Java read
  fails in planning ("Can't index multiple DVs"). The branch is dropped afterwards.
- ``bare_dv``: ``DELETE ... WHERE id % 7 = 0``, then the DVs of two data files replaced by
  bare DV blobs (the blob's bytes alone, no ``PFA1`` magic nor footer, as DuckDB <= 1.5.4
  wrote them): one file each, content_offset 0.
- ``moved_dv``: ``DELETE ... WHERE id % 7 = 0``; the Puffin file holding the first data
  file's DV rewritten with every blob's ``referenced-data-file`` under another location
  (``s3://old-bucket/...``, as after a table move) and its DVs replaced by the rewritten ones.
- ``bad_stats``: partitioned by ``part`` (ids mod 3), four INSERTs (snapshots 1-4), statistics
  computed for each; registered then, through ``UpdateStatistics``: snapshot 1's with
  ``file-size-in-bytes`` 4096 too large (its footer would start past the file's end),
  snapshot 2's with ``file-footer-size-in-bytes`` 1 too small, snapshot 3's file deleted,
  a copy of snapshot 4's file for a snapshot ID the table does not have
  (``UNKNOWN_SNAPSHOT``); snapshot 4's is right. Partition statistics (Iceberg 1.10's core
  ``PartitionStatsHandler``) for snapshots 2 (its file deleted) and 4 (right).
- ``orphans``: a DELETE (DVs) and statistics; statistics computed twice for the current
  snapshot (Iceberg leaves the first file); copies of a Puffin DV file and of a statistics
  file left in ``data/`` and ``metadata/``, under names nobody references. ``orphans`` in
  the JSON gives each orphan's intended age (days): tests/interop/broken.py sets the
  modification times when it copies the table.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from java_judge import judge
from pyspark.sql import SparkSession
from script_common import load_table, session

TABLES = ("dup_dv", "bare_dv", "moved_dv", "bad_stats", "orphans")
PROPS = ("'format-version'='3', 'write.delete.mode'='merge-on-read', "
         "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'")
UNKNOWN_SNAPSHOT = 4242424242
OLD_LOCATION = "s3://old-bucket/warehouse/db/moved_dv"
MIN_WAREHOUSE = 200


def _local(location: str) -> Path:
    return Path(location.removeprefix("file:"))


def _iterate(iterable: Any) -> Any:
    iterator = iterable.iterator()
    while iterator.hasNext():
        yield iterator.next()


def three_files(spark: SparkSession, name: str, partitioned: bool = False) -> str:
    t = f"local.db.{name}"
    columns = "id BIGINT, name STRING" + (", part INT" if partitioned else "")
    spark.sql(f"CREATE TABLE {t} ({columns}) USING iceberg "
              + ("PARTITIONED BY (part) " if partitioned else "") + f"TBLPROPERTIES ({PROPS})")
    for start in (0, 100, 200):
        extra = ", CAST(id % 3 AS INT) AS part" if partitioned else ""
        spark.sql(f"INSERT INTO {t} SELECT id, concat('n', CAST(id AS STRING)) AS name{extra} "
                  f"FROM range({start}, {start + 100}, 1, 1)")
    return t


def ids(spark: SparkSession, table: str) -> list[int]:
    return sorted(int(r[0]) for r in spark.sql(f"SELECT id FROM {table}").collect())


def planned_dvs(table: Any, ref: str | None = None) -> dict[str, Any]:
    """Data file -> its one planned DV (a Java DeleteFile), for the current snapshot or
    ``ref``."""
    table.refresh()
    scan = table.newScan() if ref is None else table.newScan().useRef(ref)
    out = {}
    tasks = scan.planFiles()
    for task in _iterate(tasks):
        for delete in _iterate(task.deletes()):
            out[str(task.file().location())] = delete
    tasks.close()
    return out


def data_files(spark: SparkSession, t: str) -> list[str]:
    """The table's data files, by their first id."""
    rows = spark.sql(f"SELECT _file, min(id) AS low FROM {t} GROUP BY _file ORDER BY low")
    return [str(r[0]) for r in rows.collect()]


def dv_facts(dv: Any) -> dict[str, Any]:
    return {"path": str(dv.location()), "referenced-data-file": str(dv.referencedDataFile()),
            "offset": int(dv.contentOffset()), "length": int(dv.contentSizeInBytes()),
            "record-count": int(dv.recordCount())}


def commit_replacing(table: Any, removed: list[Any], added: list[Any]) -> None:
    """One RowDelta: ``removed`` delete files out, ``added`` in, validated from the current
    snapshot (so an added DV for a data file that has one is not refused)."""
    table.refresh()
    delta = table.newRowDelta()
    for dv in removed:
        delta = delta.removeDeletes(dv)
    for dv in added:
        delta = delta.addDeletes(dv)
    delta.validateFromSnapshot(table.currentSnapshot().snapshotId()).commit()


def dup_dv(spark: SparkSession) -> dict[str, Any]:
    t = three_files(spark, "dup_dv")
    files = data_files(spark, t)
    spark.sql(f"ALTER TABLE {t} CREATE BRANCH side")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    table = load_table(spark, "dup_dv")
    main = planned_dvs(table)
    paths = [dv.location() for dv in main.values()]
    # the data file whose DV shares its Puffin file with another data file's DV
    target = next(f for f in files if paths.count(main[f].location()) >= 2)
    low = files.index(target) * 100
    spark.sql(f"DELETE FROM {t}.branch_side WHERE id % 5 = 0 AND id >= {low} "
              f"AND id < {low + 100}")
    second = planned_dvs(table, "side")[target]
    commit_replacing(table, [], [second])
    spark.sql(f"ALTER TABLE {t} DROP BRANCH side")
    expected = [i for i in range(300)
                if i % 7 != 0 and not (i % 5 == 0 and low <= i < low + 100)]
    return {"data-files": files, "duplicated": target,
            "dvs": [dv_facts(main[target]), dv_facts(second)],
            "shared-with": [f for f in files
                            if f != target and main[f].location() == main[target].location()],
            "expected-ids": expected}


def with_dvs(spark: SparkSession, name: str) -> tuple[list[str], Any, dict[str, Any]]:
    """Table ``name`` of three data files after ``DELETE ... WHERE id % 7 = 0``: its data
    files, Iceberg's Table, and the DV of each data file."""
    t = three_files(spark, name)
    files = data_files(spark, t)
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    table = load_table(spark, name)
    return files, table, planned_dvs(table)


def bare_dv(spark: SparkSession) -> dict[str, Any]:
    files, table, dvs = with_dvs(spark, "bare_dv")
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    removed, added, bare = [], [], []
    for index, data_file in enumerate(files[:2]):
        old = dvs[data_file]
        with open(_local(old.location()), "rb") as f:
            f.seek(int(old.contentOffset()))
            blob = f.read(int(old.contentSizeInBytes()))
        path = f"{table.location()}/data/bare-dv-{index}.puffin"
        _local(path).write_bytes(blob)
        new = (jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec()).copy(old)
               .withReferencedDataFile(old.referencedDataFile()).withPath(path)
               .withFileSizeInBytes(len(blob)).withContentOffset(0)
               .withContentSizeInBytes(len(blob)).build())
        removed.append(old)
        added.append(new)
        bare.append(dv_facts(new))
    commit_replacing(table, removed, added)
    return {"data-files": files, "bare": bare, "kept": dv_facts(dvs[files[2]]),
            "expected-ids": [i for i in range(300) if i % 7 != 0]}


def moved_dv(spark: SparkSession) -> dict[str, Any]:
    files, table, dvs = with_dvs(spark, "moved_dv")
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    source = dvs[files[0]].location()
    old = [dv for dv in dvs.values() if dv.location() == source]
    puffin = jvm.org.apache.iceberg.puffin
    reader = puffin.Puffin.read(table.io().newInputFile(source)).build()
    path = f"{table.location()}/data/moved-dvs.puffin"
    writer = puffin.Puffin.write(table.io().newOutputFile(path)) \
        .createdBy("puffin-cli test: a moved table").build()
    location = str(table.location())
    for pair in _iterate(reader.readAll(reader.fileMetadata().blobs())):
        meta, data = pair.first(), pair.second()
        props = jvm.java.util.HashMap(meta.properties())
        props.put("referenced-data-file",
                  OLD_LOCATION + str(props.get("referenced-data-file"))[len(location):])
        writer.write(puffin.Blob(meta.type(), meta.inputFields(), meta.snapshotId(),
                                 meta.sequenceNumber(), data, None, props))
    reader.close()
    writer.close()
    written = {str(m.properties().get("referenced-data-file")): m
               for m in _iterate(writer.writtenBlobsMetadata())}
    added = []
    for dv in old:
        meta = written[OLD_LOCATION + str(dv.referencedDataFile())[len(location):]]
        added.append(jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
                     .copy(dv).withReferencedDataFile(dv.referencedDataFile())
                     .withPath(path).withFileSizeInBytes(writer.fileSize())
                     .withContentOffset(meta.offset()).withContentSizeInBytes(meta.length())
                     .build())
    commit_replacing(table, old, added)
    return {"data-files": files, "moved": [dv_facts(dv) for dv in added],
            "old-location": OLD_LOCATION,
            "expected-ids": [i for i in range(300) if i % 7 != 0]}


def bad_stats(spark: SparkSession) -> dict[str, Any]:
    t = three_files(spark, "bad_stats", partitioned=True)
    spark.sql(f"INSERT INTO {t} SELECT id, concat('n', CAST(id AS STRING)) AS name, "
              f"CAST(id % 3 AS INT) AS part FROM range(300, 330, 1, 1)")
    table = load_table(spark, "bad_stats")
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    snapshots = [int(s.snapshotId()) for s in _iterate(table.snapshots())]
    for sid in snapshots:
        spark.sql(f"CALL local.system.compute_table_stats(table => 'db.bad_stats', "
                  f"snapshot_id => {sid})")
    table.refresh()
    stats = {int(sf.snapshotId()): sf for sf in _iterate(table.statisticsFiles())}
    generic = jvm.org.apache.iceberg.GenericStatisticsFile
    s1, s2, s3, s4 = (stats[s] for s in snapshots)
    copy = f"{table.location()}/metadata/stats-for-an-unknown-snapshot.stats"
    shutil.copyfile(_local(s4.path()), _local(copy))
    update = table.updateStatistics()
    update = update.setStatistics(generic(s1.snapshotId(), s1.path(), s1.fileSizeInBytes() + 4096,
                                          s1.fileFooterSizeInBytes(), s1.blobMetadata()))
    update = update.setStatistics(generic(s2.snapshotId(), s2.path(), s2.fileSizeInBytes(),
                                          s2.fileFooterSizeInBytes() - 1, s2.blobMetadata()))
    update = update.setStatistics(generic(UNKNOWN_SNAPSHOT, copy, s4.fileSizeInBytes(),
                                          s4.fileFooterSizeInBytes(), s4.blobMetadata()))
    update.commit()
    _local(s3.path()).unlink()
    handler = jvm.org.apache.iceberg.PartitionStatsHandler  # 1.10's (the spec's field IDs)
    partition = {}
    for sid in (snapshots[1], snapshots[3]):
        table.refresh()
        written = handler.computeAndWriteStatsFile(table, sid)
        table.updatePartitionStatistics().setPartitionStatistics(written).commit()
        partition[sid] = str(written.path())
    _local(partition[snapshots[1]]).unlink()
    return {"snapshots": snapshots,
            "statistics": {"size": s1.path(), "footer-size": s2.path(), "missing": s3.path(),
                           "unknown-snapshot": copy, "fine": s4.path()},
            "partition-statistics": {"missing": partition[snapshots[1]],
                                     "fine": partition[snapshots[3]]},
            "unknown-snapshot-id": UNKNOWN_SNAPSHOT,
            "expected-ids": list(range(330))}


def orphans(spark: SparkSession) -> dict[str, Any]:
    t = three_files(spark, "orphans")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.orphans', "
              "columns => array('id'))")
    spark.sql("CALL local.system.compute_table_stats(table => 'db.orphans')")
    table = load_table(spark, "orphans")
    root = _local(table.location())
    registered = {str(_local(sf.path())) for sf in _iterate(table.statisticsFiles())}
    (replaced,) = [p for p in (root / "metadata").glob("*.stats") if str(p) not in registered]
    dv_file = _local(next(iter(planned_dvs(table).values())).location())
    stats_file = _local(next(iter(registered)))
    ages = {str(replaced.relative_to(root)): 5.0}
    for target, source, days in (("data/uncommitted-young.puffin", dv_file, 0.05),
                                 ("data/abandoned-old.puffin", dv_file, 30.0),
                                 ("metadata/uncommitted-young.stats", stats_file, 1.0),
                                 ("metadata/abandoned-old.stats", stats_file, 10.0)):
        shutil.copyfile(source, root / target)
        ages[target] = days
    return {"orphans": ages, "expected-ids": [i for i in range(300) if i % 7 != 0]}


BUILDERS = {"dup_dv": dup_dv, "bare_dv": bare_dv, "moved_dv": moved_dv,
            "bad_stats": bad_stats, "orphans": orphans}


def main() -> None:
    out = Path(sys.argv[1])
    conf: dict[str, str] = json.loads(sys.argv[2])
    base = out / "tables"
    warehouse = base / ("w" + "-" * max(0, MIN_WAREHOUSE - len(str(base)) - 2))
    conf["spark.sql.catalog.local.warehouse"] = str(warehouse)
    spark = session("puffin-cli broken tables", conf)
    for name in TABLES:
        built = BUILDERS[name](spark)
        root = warehouse / "db" / name
        for crc in list(root.rglob(".*.crc")):
            crc.unlink()
        doc = {"table": name, "root": str(root), "built": built,
               "java": judge(spark, str(root))}
        (out / f"{name}.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    spark.stop()
    os.sync()


if __name__ == "__main__":
    main()
