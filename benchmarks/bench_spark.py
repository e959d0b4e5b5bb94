"""Issue 6 figures: `puffin stats compute` and `puffin scan --spark`.

1. A table of PUFFIN_BENCH_SPARK_ROWS rows (default 20,000,000; 16 Parquet files, columns
   long, int, double, string, date, decimal(12,2); a DELETE of about 1.3% of the rows wrote
   deletion vectors), built once by Spark 3.5 + Iceberg 1.10.2 (the test interop environment,
   tests/interop/sparkenv.py) and cached; Iceberg's own `compute_table_stats` runs there too
   and its time and NDVs are recorded (with Spark's default `spark.sql.shuffle.partitions`,
   which sizes Iceberg's splits, as a user's session would have). In one PySpark 4.3 session
   (local[*], defaults): Spark's `approx_count_distinct` over the same six columns of the same
   data files (the issue's baseline: it reads every row, deleted or not), then `stats compute
   --full` (plan, one Spark job, statistics file), after a warm-up of each; in
   PUFFIN_BENCH_SPARK_REPEAT (3) pairs, one of each in turn: the medians of each and of the
   pairs' ratios. Also reported:
   how many columns' NDVs differ from Iceberg's, and the largest difference.
2. 10,000 small Puffin files: in one process with a running local[2] session, `scan --spark`
   (the files spread over a few tasks per core) against the same validation in this process
   (the issue's ratio, goal at least 0.5x); and, cold, `puffin scan DIR --spark --master
   local[2]` and `puffin validate -q DIR`, each a subprocess (the JVM's start included).
3. In the test S3 server (moto on 127.0.0.1, tests/s3server.py), same session: `stats compute`
   of the same table uploaded there (read by the executors through the storage layer) against
   the table on local disk (goal: at most 1.3x), and `scan --spark` of 1,000 small objects
   under a prefix against the same files on local disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from common import PUFFIN, run_measured

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "interop" / "spark_scripts" / "stats_tables.py"
ROWS = int(os.environ.get("PUFFIN_BENCH_SPARK_ROWS", "20000000"))
SCAN_FILES = int(os.environ.get("PUFFIN_BENCH_SCAN_FILES", "10000"))
COLUMNS = ("id", "n", "x", "s", "dt", "amount")
OBJECTS = 1000  # small Puffin files under one S3 prefix
REPEAT = int(os.environ.get("PUFFIN_BENCH_SPARK_REPEAT", "3"))  # pairs of stats compute runs


def bench_table() -> Path:
    """OUT_DIR holding warehouse/db/bench and bench.json (cached per script and size)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from interop.javaenv import cache_lock
    from interop.sparkenv import spark_env

    env = spark_env()
    key = hashlib.sha256(SCRIPT.read_bytes()).hexdigest()[:12]
    out = env.java.cache_dir / "bench-tables" / f"{key}-{ROWS}-default-shuffle"
    with cache_lock(env.java.cache_dir):
        if not (out / "bench.json").is_file():
            out.mkdir(parents=True, exist_ok=True)
            conf = env.session_conf(out / "warehouse")
            conf["spark.driver.memory"] = "4g"
            del conf["spark.sql.shuffle.partitions"]
            env.run(SCRIPT, "bench", str(out), json.dumps(conf), str(ROWS), timeout=3600)
    return out


def _seconds(run: Any) -> float:
    started = time.monotonic()
    run()
    return time.monotonic() - started


def _median(run: Any, repeat: int = 3) -> float:
    return statistics.median(_seconds(run) for _ in range(repeat))


def stats_figures(tmp: Path) -> list[tuple[str, float, str]]:
    from puffin_cli.analysis.stats.plan import plan_snapshot, stats_snapshot
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.spark.session import get_session
    from puffin_cli.storage import FileIO

    out = bench_table()
    from stats_compute import compute_stats  # tests/, on the path since bench_table
    table = out / "warehouse" / "db" / "bench"
    iceberg = json.loads((out / "bench.json").read_text())
    spark = get_session(None)
    loaded = Table.load(table, fileio=FileIO())
    plan = plan_snapshot(loaded, stats_snapshot(loaded, None), None)
    files = [f.local for f in plan.data_files]

    def approx() -> None:
        frame = spark.read.parquet(*files)
        frame.selectExpr(*[f"approx_count_distinct({c})" for c in COLUMNS]).collect()

    results = []

    def ours() -> None:  # --full: the snapshot has Iceberg's statistics (fresh otherwise)
        result = compute_stats(table, sketcher="spark", master=None, full=True)
        Path(result.statistics_path).unlink()
        results.append(result)

    approx()  # warm-up: JIT, file cache, the Python workers' imports
    ours()
    # in pairs, so that a busy machine slows both sides of each ratio alike
    pairs = [(_seconds(approx), _seconds(ours)) for _ in range(REPEAT)]
    baseline = statistics.median(a for a, _ in pairs)
    measured = statistics.median(b for _, b in pairs)
    ratio = statistics.median(b / a for a, b in pairs)
    result = results[-1]
    ndv_iceberg = {b["columns"][0]: int(b["properties"]["ndv"])
                   for s in iceberg["statistics"] for b in s["blobs"]}
    differing = [(c.name, c.ndv, ndv_iceberg[c.name]) for c in result.columns
                 if c.ndv != ndv_iceberg[c.name]]
    worst = max((abs(a - b) / b for _, a, b in differing), default=0.0)
    label = f"{ROWS / 1e6:g}M rows"
    return [
        (f"stats compute, {label}, 6 columns, DVs", measured, "s"),
        (f"approx_count_distinct, {label}, 6 columns", baseline, "s"),
        ("stats compute / approx_count_distinct (median of the pairs' ratios)", ratio, "x"),
        ("stats compute throughput", result.rows_read / measured, "rows/s"),
        ("Iceberg compute_table_stats (Spark 3.5, separate run)",
         float(iceberg["compute-table-stats-seconds"]), "s"),
        ("columns whose NDV differs from Iceberg's", float(len(differing)), "of 6"),
        ("largest NDV difference from Iceberg's", 100 * worst, "%"),
    ]


def scan_figures(tmp: Path) -> list[tuple[str, float, str]]:
    from puffin_cli.cli.validate import expand
    from puffin_cli.format.writer import PuffinWriter
    from puffin_cli.spark.scan import scan
    from puffin_cli.spark.session import get_session
    from puffin_cli.storage import FileIO

    tree = tmp / "puffin-files"
    for index in range(SCAN_FILES):
        directory = tree / f"d{index % 100:02d}"
        directory.mkdir(parents=True, exist_ok=True)
        with PuffinWriter(directory / f"f{index}.puffin") as writer:
            writer.add_blob("bench-blob", index.to_bytes(8, "little"), fields=[1])
    # Cold: each command a subprocess, the JVM's start and the Python workers' imports included.
    cold_scan, _ = run_measured([*PUFFIN, "scan", str(tree), "--spark", "--master",
                                 "local[2]"])
    cold_validate, _ = run_measured([*PUFFIN, "validate", "-q", str(tree)])
    # Warm: in one process with a running session (spark-submit, a notebook), the same files
    # through the same code, on Spark executors or in this process; median of 3 after a warm-up.
    spark = get_session("local[2]")
    master = spark.sparkContext.master
    files = expand([str(tree)])

    on_spark = partial(scan, files, max_blob_size=1 << 30, use_spark=True, fileio=FileIO())
    in_process = partial(scan, files, max_blob_size=1 << 30, use_spark=False,
                         fileio=FileIO())
    on_spark()
    spark_seconds = _median(on_spark)
    local_seconds = _median(in_process)
    return [
        (f"scan --spark {master}, {SCAN_FILES:,} files, running session",
         SCAN_FILES / spark_seconds, "files/s"),
        (f"validate in-process, {SCAN_FILES:,} files", SCAN_FILES / local_seconds, "files/s"),
        ("scan --spark / in-process validate, throughput", local_seconds / spark_seconds, "x"),
        (f"scan --spark local[2] subprocess (JVM start included), {SCAN_FILES:,} files",
         SCAN_FILES / cold_scan, "files/s"),
        (f"validate subprocess, {SCAN_FILES:,} files", SCAN_FILES / cold_validate, "files/s"),
    ]


def object_store_figures(tmp: Path) -> list[tuple[str, float, str]]:
    """The same 20M-row table and 1,000 small Puffin files, on local disk and in the test S3
    server (moto on 127.0.0.1, tests/s3server.py), in one running local Spark session: the
    executors read the objects themselves with the driver's storage configuration."""
    sys.path.insert(0, str(ROOT / "tests"))
    from s3server import ACCESS_KEY, REGION, SECRET_KEY, start_server

    from puffin_cli.analysis.table.metadata import current_metadata_file
    from puffin_cli.cli.validate import expand
    from puffin_cli.format.writer import PuffinWriter
    from puffin_cli.spark.scan import scan
    from puffin_cli.storage import configure

    table = bench_table() / "warehouse" / "db" / "bench"
    from stats_compute import compute_stats
    server = start_server()
    try:
        fileio = configure({"s3.endpoint": server.endpoint, "s3.access-key-id": ACCESS_KEY,
                   "s3.secret-access-key": SECRET_KEY, "s3.region": REGION})
        client = server.client()
        client.create_bucket(Bucket="bench")
        for path in sorted(p for p in table.rglob("*") if p.is_file()):
            client.upload_file(str(path), "bench", f"bench/{path.relative_to(table)}")
        metadata = Path(current_metadata_file(table, fileio))
        location = f"s3://bench/bench/metadata/{metadata.name}"
        original = json.loads(metadata.read_text())["location"]
        relocate = [(original, "s3://bench/bench")]

        def on_disk() -> None:
            result = compute_stats(table, sketcher="spark", master=None, full=True,
                                   fileio=fileio)
            Path(result.statistics_path).unlink()

        def in_store() -> None:  # its statistics objects stay in the server's bucket
            compute_stats(location, relocate=relocate, sketcher="spark", master=None,
                          full=True, fileio=fileio)

        on_disk()  # warm-up: the session, the page cache
        local_seconds = _median(on_disk)
        store_seconds = _median(in_store)

        tree = tmp / "objects"
        for index in range(OBJECTS):
            path = tree / f"d{index % 10}" / f"f{index}.puffin"
            path.parent.mkdir(parents=True, exist_ok=True)
            with PuffinWriter(path) as writer:
                writer.add_blob("bench-blob", index.to_bytes(8, "little"), fields=[1])
            client.upload_file(str(path), "bench", f"objects/{path.relative_to(tree)}")
        local_files = expand([str(tree)])
        objects = expand(["s3://bench/objects"])
        assert len(objects) == len(local_files) == OBJECTS

        scan_local = partial(scan, local_files, max_blob_size=1 << 30, use_spark=True,
                             fileio=fileio)
        scan_objects = partial(scan, objects, max_blob_size=1 << 30, use_spark=True,
                               fileio=fileio)
        scan_objects()
        scan_local_seconds = _median(scan_local)
        scan_store_seconds = _median(scan_objects)
    finally:
        server.stop()
        configure({})
    label = f"{ROWS / 1e6:g}M rows"
    return [
        (f"stats compute, {label}, in the S3 server", store_seconds, "s"),
        (f"stats compute, {label}, on local disk", local_seconds, "s"),
        ("stats compute S3 / local disk", store_seconds / local_seconds, "x"),
        (f"scan --spark, {OBJECTS:,} objects under an S3 prefix", OBJECTS / scan_store_seconds,
         "files/s"),
        (f"scan --spark, the same {OBJECTS:,} files on local disk",
         OBJECTS / scan_local_seconds, "files/s"),
        ("scan --spark S3 / local disk, wall time", scan_store_seconds / scan_local_seconds,
         "x"),
    ]


def run(tmp: Path) -> list[tuple[str, float, str]]:
    return stats_figures(tmp) + scan_figures(tmp) + object_store_figures(tmp)
