"""Issue 4 figures: `puffin write` building and writing a deletion vector of 100 million
positions, given as ranges and given as a file of numbers (wall time of the whole command,
positions per second, peak RSS).

- ranges on the command line: 1,000 ranges of 100,000 positions (`--positions`);
- ranges in a file: 1,000,000 lines `START-END` of 100 positions each (`--positions-file`);
- numbers in a file: 100,000,000 lines, every other position from 0 (`--positions-file`,
  about 1 GB of text).
"""

from __future__ import annotations

from pathlib import Path

from common import PUFFIN, run_measured

POSITIONS = 100_000_000


def _ranges_file(path: Path) -> None:
    count, width, gap = 1_000_000, 100, 28
    with open(path, "w") as out:
        for i in range(count):
            start = i * (width + gap)
            out.write(f"{start}-{start + width - 1}\n")


def _numbers_file(path: Path, count: int) -> None:
    import numpy as np

    from puffin_cli.blobs.deletion_vector import format_positions

    chunk = 1_000_000
    with open(path, "wb") as out:
        for start in range(0, count, chunk):
            out.write(format_positions(np.arange(start, min(start + chunk, count),
                                                 dtype=np.uint64) * 2))


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
    _ranges_file(ranges_file)
    rows += _measure("1M ranges in a file", tmp, ["--dv", "data.parquet", "--positions-file",
                                                  str(ranges_file)])
    ranges_file.unlink()
    numbers_file = tmp / "numbers.txt"
    _numbers_file(numbers_file, POSITIONS)
    rows += _measure("100M numbers in a file", tmp, ["--dv", "data.parquet",
                                                     "--positions-file", str(numbers_file)])
    numbers_file.unlink()
    return rows
