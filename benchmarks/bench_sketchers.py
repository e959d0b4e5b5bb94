"""Issue 28: which sketcher runs `stats compute`, measured (docs/spark.md, "Which sketcher").

Tables written by pyiceberg (SQL catalog on sqlite, local warehouse; columns long, string,
int as in bench_stats_namespace.py), each `puffin stats compute TABLE --full -o FILE` a cold
subprocess on `--master local[2]` (the machine's two cores), so the JVM's start is counted:

1. the crossover: tables of PUFFIN_BENCH_SKETCH_ROWS rows (default 2,000,000 and 20,000,000,
   appended 2,000,000 rows at a time: one data file, so one Spark task, each; ids in order,
   names one of 1,000,000 random strings, a bucket of 13) sketched `--in-process` and
   `--spark`: each one's rows/s (the JVM start counted), its cost modelled as fixed seconds
   plus rows over a rate (from the two sizes), and the rows where the two costs cross (none
   when this process's rate is the higher: it is then faster at any size measured);
2. a table of 1,000 rows, cold, chosen by size (in process) against `--spark`, today's
   (goal <= 0.1x);
3. a namespace of 20 tables of 1,000 rows in one run, chosen by size (no JVM) against
   `--spark` (goal <= 0.2x).
"""

from __future__ import annotations

import os
from pathlib import Path

from bench_stats_namespace import build_tables
from common import PUFFIN, run_measured

SIZES = tuple(int(n) for n in os.environ.get(
    "PUFFIN_BENCH_SKETCH_ROWS", "2000000,20000000").split(","))
APPEND = 2_000_000  # rows per append (per data file)
COMMON = ["--full", "--master", "local[2]", "-q"]


def build_table(warehouse: Path, rows: int) -> str:
    """A table of ``rows`` rows, ``APPEND`` rows a data file; its metadata file."""
    import numpy as np
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse.mkdir()
    catalog = SqlCatalog("bench", uri="sqlite:///:memory:", warehouse=warehouse.as_uri())
    catalog.create_namespace("db")
    random = np.random.default_rng(28)
    names = pa.array([f"name-{n:07}" for n in range(1_000_000)])
    table = None
    for start in range(0, rows, APPEND):
        count = min(APPEND, rows - start)
        ids = np.arange(start, start + count, dtype=np.int64)
        data = pa.table({"id": pa.array(ids),
                         "name": names.take(pa.array(random.integers(0, len(names), count))),
                         "bucket": pa.array((ids % 13).astype(np.int32))})
        if table is None:
            table = catalog.create_table("db.t", schema=data.schema)
        table.append(data)
    assert table is not None
    return str(table.metadata_location.removeprefix("file://"))


def data_bytes(metadata: str) -> int:
    from puffin_cli.analysis.stats.plan import plan_snapshot, stats_snapshot
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.storage import FileIO

    table = Table.load(metadata, fileio=FileIO())
    return sum(f.file_size for f in plan_snapshot(table, stats_snapshot(table, None),
                                                  None).data_files)


def compute(tmp: Path, table: str, *extra: str) -> float:
    return compute_measured(tmp, table, *extra)[0]


def compute_measured(tmp: Path, table: str, *extra: str) -> tuple[float, int]:
    """(seconds, peak RSS KiB) of one cold command."""
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    seconds, rss = run_measured([*PUFFIN, "stats", "compute", table, *COMMON, *extra,
                                  "-o", str(out)])
    found = list(out.glob("*.stats"))
    assert len(found) == 1, found
    found[0].unlink()
    return seconds, rss


def crossover(small: tuple[int, float], large: tuple[int, float],
              small_spark: tuple[int, float], large_spark: tuple[int, float]
              ) -> tuple[float, float, float, float, float | None]:
    """(in-process fixed s, rows/s, Spark fixed s, rows/s, crossover rows or None)."""
    def line(a: tuple[int, float], b: tuple[int, float]) -> tuple[float, float]:
        per_row = (b[1] - a[1]) / (b[0] - a[0])
        return a[1] - a[0] * per_row, per_row

    fixed_in, per_in = line(small, large)
    fixed_spark, per_spark = line(small_spark, large_spark)
    cross = None if per_in <= per_spark else (fixed_spark - fixed_in) / (per_in - per_spark)
    return (fixed_in, 1 / per_in if per_in > 0 else float("inf"), fixed_spark,
            1 / per_spark if per_spark > 0 else float("inf"), cross)


def run(tmp: Path) -> list[tuple[str, float, str]]:
    rows: list[tuple[str, float, str]] = []
    points: dict[str, list[tuple[int, float]]] = {"in-process": [], "spark": []}
    for size in SIZES:
        table = build_table(tmp / f"w{size}", size)
        compute(tmp, table, "--in-process")  # warm-up: the page cache
        for sketcher in points:
            seconds, rss = compute_measured(tmp, table, f"--{sketcher}")
            if sketcher == "in-process":
                rows.append((f"{size:,} rows, --in-process: peak RSS", rss / 1024, "MiB"))
            points[sketcher].append((size, seconds))
            rows.append((f"{size:,} rows, --{sketcher}, cold command", seconds, "s"))
            rows.append((f"{size:,} rows, --{sketcher}: rows/s, start included",
                         size / seconds, "rows/s"))
        rows.append((f"{size:,} rows: data file bytes per row", data_bytes(table) / size, "B"))
    fixed_in, rate_in, fixed_spark, rate_spark, cross = crossover(
        points["in-process"][0], points["in-process"][-1], points["spark"][0],
        points["spark"][-1])
    rows += [("in process: fixed cost", fixed_in, "s"), ("in process: rate", rate_in, "rows/s"),
             ("Spark local[2], JVM start included: fixed cost", fixed_spark, "s"),
             ("Spark local[2]: rate", rate_spark, "rows/s"),
             ("crossover (-1: in process faster at every size measured)",
              -1.0 if cross is None else cross, "rows")]

    small = build_table(tmp / "w1000", 1000)
    compute(tmp, small)
    by_size, spark = compute(tmp, small), compute(tmp, small, "--spark")
    rows += [("1,000 rows --full, chosen by size (in process), cold", by_size, "s"),
             ("1,000 rows --full --spark (today's), cold", spark, "s"),
             ("by size / today's (goal <= 0.1x)", by_size / spark, "x")]

    tables = build_tables(tmp / "namespace")
    runs = {}
    for name, extra in (("by size", []), ("--spark", ["--spark"])):
        out = tmp / f"namespace-{name.strip('-')}"
        out.mkdir()
        runs[name], _rss = run_measured([*PUFFIN, "stats", "compute", *tables, *COMMON,
                                         *extra, "-o", str(out)])
        assert len(list(out.glob("*.stats"))) == len(tables)
    rows += [(f"{len(tables)} tables of 1,000 rows, one run, by size (no JVM)",
              runs["by size"], "s"),
             (f"{len(tables)} tables of 1,000 rows, one run, --spark (today's)",
              runs["--spark"], "s"),
             ("by size / today's (goal <= 0.2x)", runs["by size"] / runs["--spark"], "x")]
    return rows
