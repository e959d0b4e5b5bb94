"""Issue 26 figures: the commands that read a snapshot's live files, on tables of 100k and 1M
data files, against Iceberg Java's own planning of the same table in the same run.

The tables are made by Iceberg Java 1.10.2 (tests/interop/java/ScaleTables.java, cached in the
interop cache): format 3, partitioned, N data files in 20 appends (not on disk: these
commands never open them), then N/10 deletion vectors in N/10,000 Puffin files in one row
delta. The baseline is ``table.newScan().planFiles()`` iterated to the end in a JVM of its own
(JVM start included). Reported per size: wall time and peak RSS of the baseline and of each
command, each command's ratio to the baseline, and per command the growth exponent of wall
time and peak RSS from 100k to 1M files (1.0: linear).

``PUFFIN_BENCH_SCALE_SIZES`` (default ``100000,1000000``) picks the sizes.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

from common import PUFFIN, run_measured

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (
    ("table --json", ["table", "--json"]),
    ("stats compute --dry-run --json", ["stats", "compute", "--dry-run", "--json"]),
    ("repair --json (plan)", ["repair", "--json"]),
    ("table --all-snapshots --jsonl", ["table", "--all-snapshots", "--jsonl"]),
)


def _sizes() -> list[int]:
    return [int(s) for s in os.environ.get("PUFFIN_BENCH_SCALE_SIZES",
                                           "100000,1000000").split(",")]


def run(tmp: Path) -> list[tuple[str, float, str]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from interop.scale import ScaleShape, plan_command, scale_table

    rows: list[tuple[str, float, str]] = []
    figures: dict[str, dict[int, tuple[float, int]]] = {}
    for files in _sizes():
        table = scale_table(ScaleShape(files, files // 10, max(files // 10_000, 1)))
        label = f"{files:,} files, {files // 10:,} DVs"
        java = min(run_measured(plan_command(table)) for _ in range(2))
        rows.append((f"{label}: Iceberg Java planFiles, wall", java[0], "s"))
        rows.append((f"{label}: Iceberg Java planFiles, peak RSS", java[1] / 1024, "MiB"))
        for name, args in COMMANDS:
            wall, rss = run_measured([*PUFFIN, *args, str(table)])
            figures.setdefault(name, {})[files] = (wall, rss)
            rows.append((f"{label}: {name}, wall", wall, "s"))
            rows.append((f"{label}: {name}, wall / Java planFiles", wall / java[0], "x"))
            rows.append((f"{label}: {name}, peak RSS", rss / 1024, "MiB"))
    sizes = _sizes()
    if len(sizes) > 1:
        small, big = sizes[0], sizes[-1]
        for name, by_size in figures.items():
            (t0, m0), (t1, m1) = by_size[small], by_size[big]
            scale = math.log(big / small)
            rows.append((f"{name}: growth exponent of wall time", math.log(t1 / t0) / scale,
                         ""))
            rows.append((f"{name}: growth exponent of peak RSS", math.log(m1 / m0) / scale, ""))
    return rows
