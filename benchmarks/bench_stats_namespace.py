"""Issue 19's "a namespace of 20 small tables in one run vs 20 separate `stats compute` runs".

20 tables of 1,000 rows each (columns long, string, int; two appends by pyiceberg, so two
data files), written with pyiceberg's SQL catalog on an in-memory sqlite into a local
warehouse and named by their metadata files. Measured, each a cold subprocess on
``--master local[2]``, ``--spark`` (small tables run in process by default:
bench_sketchers.py measures that): `puffin stats compute T1 ... T20 --full -o DIR` (one
Spark session for every table), against 20 runs of `puffin stats compute Ti --full -o FILE`
one after another (a JVM started for each). ``--full`` so that every table is read whatever
its statistics.
"""

from __future__ import annotations

from pathlib import Path

from common import PUFFIN, run_measured

TABLES = 20
ROWS = 1000


def build_tables(warehouse: Path) -> list[str]:
    """The metadata files of the ``TABLES`` tables."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse.mkdir()
    catalog = SqlCatalog("bench", uri="sqlite:///:memory:", warehouse=warehouse.as_uri())
    catalog.create_namespace("db")
    locations = []
    for number in range(TABLES):
        rows = pa.table({
            "id": pa.array(range(number * ROWS, (number + 1) * ROWS), pa.int64()),
            "name": pa.array([f"n{i % 97}" for i in range(ROWS)]),
            "bucket": pa.array([i % 13 for i in range(ROWS)], pa.int32())})
        table = catalog.create_table(f"db.t{number:02}", schema=rows.schema)
        table.append(rows.slice(0, ROWS // 2))
        table.append(rows.slice(ROWS // 2))
        locations.append(table.metadata_location.removeprefix("file://"))
    return locations


def run(tmp: Path) -> list[tuple[str, float, str]]:
    tables = build_tables(tmp / "warehouse")
    common = ["--full", "--spark", "--master", "local[2]", "-q"]
    together = tmp / "together"
    together.mkdir()
    one_run, _rss = run_measured([*PUFFIN, "stats", "compute", *tables, *common,
                                  "-o", str(together)])
    assert len(list(together.glob("*.stats"))) == TABLES
    separate = 0.0
    for number, table in enumerate(tables):
        seconds, _rss = run_measured([*PUFFIN, "stats", "compute", table, *common,
                                      "-o", str(tmp / f"t{number:02}.stats")])
        separate += seconds
    assert len(list(tmp.glob("t*.stats"))) == TABLES
    return [
        (f"{TABLES} tables of {ROWS:,} rows in one `stats compute` run", one_run, "s"),
        (f"{TABLES} separate `stats compute` runs, one after another", separate, "s"),
        ("one run / separate runs", one_run / separate, "x"),
    ]
