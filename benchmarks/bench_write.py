"""Issue 4 figures: `puffin write` building and writing a deletion vector of 100 million
positions, given as ranges and given as a file of numbers (wall time of the whole command,
positions per second, peak RSS).

- ranges on the command line: 1,000 ranges of 100,000 positions (`--positions`);
- ranges in a file: 1,000,000 lines `START-END` of 100 positions each (`--positions-file`);
- numbers in a file: 100,000,000 lines, every other position from 0 (`--positions-file`,
  about 1 GB of text).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from common import PUFFIN, run_measured

POSITIONS = 100_000_000


# Input files are made in a child process: a child's peak RSS counts the memory of the
# process it was forked from, so this one stays small.
MAKE_RANGES = r"""
import sys
count, width, gap = 1_000_000, 100, 28
with open(sys.argv[1], "w") as out:
    for i in range(count):
        start = i * (width + gap)
        out.write(f"{start}-{start + width - 1}\n")
"""

MAKE_NUMBERS = r"""
import sys
import numpy as np
from puffin_cli.blobs.deletion_vector import format_positions
count, chunk = int(sys.argv[2]), 1_000_000
with open(sys.argv[1], "wb") as out:
    for start in range(0, count, chunk):
        out.write(format_positions(np.arange(start, min(start + chunk, count),
                                             dtype=np.uint64) * 2))
"""


def _make(script: str, *args: str) -> None:
    subprocess.run([sys.executable, "-c", script, *args], check=True)


def _measure(name: str, tmp: Path, args: list[str]) -> list[tuple[str, float, str]]:
    out = tmp / f"{name}.puffin"
    seconds, rss_kib = run_measured([*PUFFIN, "write", str(out), "--force", *args])
    if not out.exists():
        raise RuntimeError(f"{name}: puffin write did not write {out}")
    size = out.stat().st_size
    out.unlink()
    return [(f"write DV of 100M positions, {name}: wall", seconds, "s"),
            (f"write DV of 100M positions, {name}: rate", POSITIONS / seconds, "positions/s"),
            (f"write DV of 100M positions, {name}: peak RSS", rss_kib / 1024, "MiB"),
            (f"write DV of 100M positions, {name}: file size", size / 1024, "KiB")]


def run(tmp: Path) -> list[tuple[str, float, str]]:
    rows: list[tuple[str, float, str]] = []
    width = POSITIONS // 1_000
    ranges = ",".join(f"{i * 2 * width}-{i * 2 * width + width - 1}" for i in range(1_000))
    rows += _measure("1,000 ranges via --positions", tmp, ["--dv", "data.parquet",
                                                           "--positions", ranges])
    ranges_file = tmp / "ranges.txt"
    _make(MAKE_RANGES, str(ranges_file))
    rows += _measure("1M ranges in a file", tmp, ["--dv", "data.parquet", "--positions-file",
                                                  str(ranges_file)])
    ranges_file.unlink()
    numbers_file = tmp / "numbers.txt"
    _make(MAKE_NUMBERS, str(numbers_file), str(POSITIONS))
    rows += _measure("100M numbers in a file", tmp, ["--dv", "data.parquet",
                                                     "--positions-file", str(numbers_file)])
    numbers_file.unlink()
    return rows
