"""Issue 5 figures: `puffin table` on a table with 1,000 snapshots and 10,000 DVs.

Two synthetic v3 tables (fastavro manifests, real Puffin DV files, 10 DVs per snapshot):
(a) "independent": each snapshot lists only its own two manifests, so the current snapshot has
    10 DVs while the table holds 10,000; the current snapshot must cost 3 Avro files;
(b) "carried": every snapshot keeps all earlier manifests, so the current snapshot has all
    10,000 DVs in 2,000 manifests (its own, all of which it must read).
Reported: median wall time of `puffin table --json` (a subprocess), and the number of manifest
files (manifest list + manifests) opened, from the report's `manifests-read`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from common import PUFFIN, median_wall

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = 1000
DVS_PER_SNAPSHOT = 10


def _build(root: Path, carry: bool) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from tables.synthetic import dv_table

    dv_table(root, snapshots=SNAPSHOTS, dvs_per_snapshot=DVS_PER_SNAPSHOT, carry=carry).finish()


def _manifests_read(argv: list[str]) -> int:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return int(json.loads(done.stdout)["tables"][0]["manifests-read"])


def run(tmp: Path) -> list[tuple[str, float, str]]:
    rows: list[tuple[str, float, str]] = []
    for label, carry in (("independent", False), ("carried", True)):
        table = tmp / label
        _build(table, carry)
        current = [*PUFFIN, "table", "--json", str(table)]
        rows.append((f"{label}: current snapshot, wall", median_wall(current, repeat=3), "s"))
        rows.append((f"{label}: current snapshot, manifest files opened",
                     float(_manifests_read(current)), "files"))
        first = [*PUFFIN, "table", "--json", "--snapshot", "1001", str(table)]
        rows.append((f"{label}: first snapshot, manifest files opened",
                     float(_manifests_read(first)), "files"))
        if not carry:
            every = [*PUFFIN, "table", "--json", "--all-snapshots", str(table)]
            rows.append((f"{label}: --all-snapshots (10,000 DVs), wall",
                         median_wall(every, repeat=1), "s"))
            rows.append((f"{label}: --all-snapshots, manifest files opened",
                         float(_manifests_read(every)), "files"))
    return rows
