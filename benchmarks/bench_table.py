"""Issue 5 figures: `puffin table` on a table with 1,000 snapshots and 10,000 DVs.

Two synthetic v3 tables (fastavro manifests, real Puffin DV files, 10 DVs per snapshot):
(a) "independent": each snapshot lists only its own two manifests, so the current snapshot has
    10 DVs while the table holds 10,000; the current snapshot must cost 3 Avro files;
(b) "carried": every snapshot keeps all earlier manifests, so the current snapshot has all
    10,000 DVs in 2,000 manifests (its own, all of which it must read).
Reported: median wall time of `puffin table --json` (a subprocess), and the number of manifest
files (manifest list + manifests) opened, from the report's `manifests-read`.

Issue 12's warehouse-scale table: 300 snapshots, 20 DVs each, every snapshot carrying all
earlier manifests (6,000 DVs; 903,000 snapshot-DV pairs; 600 manifests). `table
--all-snapshots` in its three forms (human summary, `--json`, `--jsonl`): wall time, peak RSS,
output size, against a bare fastavro read of every Avro file of the table once in the same
run (the floor: reading the manifests at all). Before issue 12 the human form took 2 min 32 s
and printed ~1 million lines, and `--json` wrote 463 MB.

Issue 30's page: `table --all-snapshots --html` of the independent table (1,000 snapshots,
10,000 DVs): wall time against `--json` of the same snapshots, the page's size, and (where
Chromium is installed; the rows are left out otherwise) the time headless Chromium takes to
load and render it offline (tests/browser.py) against loading an empty page, i.e. the
browser's own start-up.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import PUFFIN, median_wall, run_measured

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = 1000
DVS_PER_SNAPSHOT = 10
WAREHOUSE_SNAPSHOTS = 300
WAREHOUSE_DVS_PER_SNAPSHOT = 20
# Reads every manifest list and manifest of a table once: the floor of --all-snapshots.
_BARE_AVRO = """
import glob, sys, fastavro
for path in sorted(glob.glob(sys.argv[1] + "/metadata/*.avro")):
    with open(path, "rb") as f:
        for _ in fastavro.reader(f):
            pass
"""


def _build(root: Path, carry: bool) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from tables.synthetic import dv_table

    dv_table(root, snapshots=SNAPSHOTS, dvs_per_snapshot=DVS_PER_SNAPSHOT, carry=carry).finish()


def _manifests_read(argv: list[str]) -> int:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return int(json.loads(done.stdout)["tables"][0]["manifests-read"])


def _output_size(argv: list[str], out: Path) -> int:
    with open(out, "wb") as sink:
        subprocess.run(argv, stdout=sink, check=False)
    return out.stat().st_size


def warehouse_rows(tmp: Path) -> list[tuple[str, float, str]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from tables.synthetic import dv_table

    table = tmp / "warehouse-scale"
    dv_table(table, snapshots=WAREHOUSE_SNAPSHOTS, dvs_per_snapshot=WAREHOUSE_DVS_PER_SNAPSHOT,
             carry=True).finish()
    bare = min(run_measured([sys.executable, "-c", _BARE_AVRO, str(table)])[0]
               for _ in range(3))
    rows = [("300 snapshots x 6,000 DVs: bare fastavro read of every manifest", bare, "s")]
    for label, flags in (("summary", []), ("--json", ["--json"]), ("--jsonl", ["--jsonl"])):
        argv = [*PUFFIN, "table", "--all-snapshots", *flags, str(table)]
        wall, rss = min(run_measured(argv) for _ in range(3))
        rows.append((f"  --all-snapshots {label}: wall", wall, "s"))
        rows.append((f"  --all-snapshots {label}: wall / bare read", wall / bare, "x"))
        rows.append((f"  --all-snapshots {label}: peak RSS", rss / 1024, "MiB"))
        rows.append((f"  --all-snapshots {label}: output", _output_size(argv, tmp / "out") / 1024,
                     "KiB"))
    rows.append(("  --all-snapshots: manifest files opened",
                 float(_manifests_read([*PUFFIN, "table", "--json", "--all-snapshots",
                                        str(table)])), "files"))
    return rows


def _browser_load(page: Path) -> float:
    """Median wall seconds of headless Chromium loading ``page`` and running its scripts."""
    from browser import dump_dom

    def once() -> float:
        started = time.perf_counter()
        dom = dump_dom(page)
        elapsed = time.perf_counter() - started
        if page.name != "empty.html" and 'data-ready="1"' not in dom:
            raise RuntimeError(f"{page}: its scripts did not finish")
        return elapsed
    return statistics.median(once() for _ in range(3))


def page_rows(table: Path, tmp: Path) -> list[tuple[str, float, str]]:
    page = tmp / "history.html"
    html = [*PUFFIN, "table", "--all-snapshots", "--force", "--html", str(page), str(table)]
    wall = median_wall(html, repeat=3)
    json_wall = median_wall([*PUFFIN, "table", "--all-snapshots", "--json", str(table)],
                            repeat=3)
    rows = [("independent: --all-snapshots --html, wall", wall, "s"),
            ("independent: --all-snapshots --html, wall / --json", wall / json_wall, "x"),
            ("independent: --all-snapshots --html, page size", page.stat().st_size / 1024,
             "KiB")]
    if shutil.which("chromium") is None:
        return rows  # no browser here: the load rows are left out
    empty = tmp / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body><main></main></body></html>\n",
                     encoding="utf-8")
    load, baseline = _browser_load(page), _browser_load(empty)
    rows.append(("independent: page load in headless Chromium", load, "s"))
    rows.append(("independent: page load / empty page load", load / baseline, "x"))
    return rows


def run(tmp: Path) -> list[tuple[str, float, str]]:
    rows: list[tuple[str, float, str]] = warehouse_rows(tmp)
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
            rows.extend(page_rows(table, tmp))
    return rows
