"""Issue 19 figures: incremental `puffin stats compute`.

The table of benchmarks/bench_spark.py (PUFFIN_BENCH_SPARK_ROWS rows, default 20,000,000, in
16 Parquet files of about 8.7 MB with deletion vectors; its current snapshot carries Iceberg's
own `compute_table_stats`, the base) gets two branches off that snapshot, each one append in one
new data file (tests/interop/spark_scripts/bench_appends.py, Spark 3.5 + Iceberg 1.10.2, cached
with the table): 1% of the rows, and 1,000,000 rows. Then the table property
`read.split.open-file-cost` is set to 16 MiB, the table's split size, so that every data file is
a Spark task of its own: with Iceberg's default cost (4 MiB) an 8.7 MB file leaves room in its
16 MiB split, the new file joins that task in Iceberg's bin packing, the base's sketches no longer
describe a task of the target, and the refresh is (rightly) full. Figures:

1. `puffin stats compute TABLE --snapshot <1% append>` (incremental: the new file, sketched in
   the command's process, unioned with Iceberg's base sketches) against `--full` of the same
   snapshot (Spark, local[*]), each a command as a nightly job runs it (JVM start included for
   `--full`), medians of 3; and the same two in one running Spark session (both on Spark).
   Checked: the incremental run's `mode` is `incremental` and every column's NDV and sketch
   bytes equal `--full`'s.
2. Peak RSS of the command sketching the 1,000,000-row append in its process (6 columns),
   against the 512 MiB limit; its NDVs and sketch bytes equal `--full`'s of that snapshot.
3. With Iceberg's default open-file cost, the 1% append: the mode and reason `stats compute`
   gives (full).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import bench_spark
from common import PUFFIN, run_measured

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "interop" / "spark_scripts" / "bench_appends.py"
LIMIT_MIB = 512


def appended_table() -> tuple[Path, dict[str, Any]]:
    """The benchmark table's directory and ``appends-<tag>.json`` (built once per version of
    the append script, on the cached table of bench_spark.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from interop.javaenv import cache_lock
    from interop.sparkenv import spark_env

    out = bench_spark.bench_table()
    env = spark_env()
    tag = "a" + hashlib.sha256(SCRIPT.read_bytes()).hexdigest()[:10]
    done = out / f"appends-{tag}.json"
    with cache_lock(env.java.cache_dir):
        if not done.is_file():
            conf = env.session_conf(out / "warehouse")
            env.run(SCRIPT, str(out), json.dumps(conf), str(bench_spark.ROWS), tag, timeout=3600)
    return out / "warehouse" / "db" / "bench", json.loads(done.read_text())


def local_path(location: str) -> str:
    return location.removeprefix("file:")


def sketches(path: str, mode: str) -> dict[int, bytes]:
    """The sketch bytes by field ID of a statistics file this run wrote (``mode`` not
    ``fresh``: a fresh result names the table's own file); the file is removed."""
    from puffin_cli.format.reader import PuffinReader

    assert mode != "fresh", f"{path} is the table's own statistics file"

    with PuffinReader(path) as reader:
        found = {b.fields[0]: reader.read_blob(b) for b in reader.metadata.blobs}
    Path(path).unlink()
    return found


def command(tmp: Path, metadata: str, snapshot: int,
            *extra: str) -> tuple[float, int, dict[str, Any], dict[int, bytes]]:
    """One `stats compute --json` subprocess: (seconds, peak RSS KiB, result, sketches)."""
    out = tmp / "result.json"
    with open(out, "wb") as handle:
        seconds, rss = run_measured([*PUFFIN, "stats", "compute", metadata, "--snapshot",
                                     str(snapshot), "--json", *extra], stdout=handle.fileno())
    result: dict[str, Any] = json.loads(out.read_text())
    return seconds, rss, result, sketches(result["statistics-path"], result["mode"])


def ndvs(result: dict[str, Any]) -> dict[str, int]:
    return {c["name"]: c["ndv"] for c in result["columns"]}


def run(tmp: Path) -> list[tuple[str, float, str]]:
    from puffin_cli.spark.session import get_session
    _, appends = appended_table()
    from stats_compute import compute_stats  # tests/, on the path since appended_table
    metadata = local_path(appends["metadata"])
    pct, million = appends["pct"], appends["1m"]

    def cold(snapshot: int, *extra: str) -> tuple[float, int, dict[str, Any], dict[int, bytes]]:
        return command(tmp, metadata, snapshot, *extra)

    # 1. the 1% append, as commands
    cold(pct["snapshot"])  # warm-up: the page cache
    incremental = [cold(pct["snapshot"]) for _ in range(3)]
    full = [cold(pct["snapshot"], "--full") for _ in range(3)]
    inc, whole = incremental[-1], full[-1]
    assert inc[2]["mode"] == "incremental" and inc[2]["in-process"], inc[2]
    assert whole[2]["mode"] == "full", whole[2]
    equal = ndvs(inc[2]) == ndvs(whole[2]) and inc[3] == whole[3]
    inc_seconds = statistics.median(r[0] for r in incremental)
    full_seconds = statistics.median(r[0] for r in full)

    # 1b. the same in one running Spark session (both sketched on Spark)
    get_session(None)

    def in_session(full_compute: bool) -> tuple[float, str, dict[str, int], dict[int, bytes]]:
        result = compute_stats(metadata, snapshot_id=pct["snapshot"], full=full_compute,
                               sketcher="spark", master=None)
        return (result.seconds, result.mode, {c.name: c.ndv for c in result.columns},
                sketches(result.statistics_path, result.mode))

    in_session(True)  # warm-up
    warm_inc = [in_session(False) for _ in range(3)]
    warm_full = [in_session(True) for _ in range(3)]
    assert warm_inc[-1][1] == "incremental", warm_inc[-1][1]
    warm_equal = warm_inc[-1][2:] == warm_full[-1][2:]
    warm_inc_seconds = statistics.median(r[0] for r in warm_inc)
    warm_full_seconds = statistics.median(r[0] for r in warm_full)

    # 2. the 1,000,000-row increment in process: peak RSS
    _, rss, million_result, million_sketches = cold(million["snapshot"])
    assert million_result["mode"] == "incremental" and million_result["in-process"]
    _, _, million_full, million_full_sketches = cold(million["snapshot"], "--full")
    million_equal = (ndvs(million_result) == ndvs(million_full)
                     and million_sketches == million_full_sketches)
    rss_mib = rss / 1024

    # 3. Iceberg's default open-file cost: the new file shares a task with a base file
    default_seconds, _, default_result, _ = command(
        tmp, local_path(appends["metadata-default"]), pct["snapshot"])

    def same(flag: bool) -> str:
        return "=" if flag else "!="

    label = f"{bench_spark.ROWS / 1e6:g}M rows + {pct['rows']:,} appended"
    return [
        (f"stats compute, {label} (incremental, in process)", inc_seconds, "s"),
        ("stats compute --full, the same snapshot (Spark, JVM start)", full_seconds, "s"),
        (f"incremental / --full (mode incremental; NDVs, sketch bytes {same(equal)})",
         inc_seconds / full_seconds, "x"),
        ("incremental rows read / --full rows read",
         inc[2]["rows-read"] / whole[2]["rows-read"], "x"),
        ("in a running session: incremental (on Spark)", warm_inc_seconds, "s"),
        ("in a running session: --full", warm_full_seconds, "s"),
        (f"in a running session: incremental / --full (NDVs, bytes {same(warm_equal)})",
         warm_inc_seconds / warm_full_seconds, "x"),
        (f"peak RSS, in-process increment of {million['rows']:,} rows x 6 columns "
         f"(NDVs, bytes {same(million_equal)} --full's)", rss_mib, "MiB"),
        (f"that peak RSS / the {LIMIT_MIB} MiB limit", rss_mib / LIMIT_MIB, "x"),
        (f"default open-file cost, 1% append: mode {default_result['mode']} "
         f"({default_result['mode-reason']})", default_seconds, "s"),
    ]
