"""Issue 13 figures: `puffin write` of a Paimon BLOB file from 50,000 entry files (wall time of
the whole command, entries/s, peak RSS), against a baseline in the same run: a bare Python
loop that copies the same files into one file (open, read, write each; no CRC, no index).
Then `validate` (every record's CRC) and `inspect --json` of the written file, and `inspect`
of a file whose index is just under the default memory limit (21 MiB, 22 million rows)."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

from common import PUFFIN, run_measured

ENTRIES = 50_000


def _baseline(names: list[str], out: Path) -> float:
    started = time.perf_counter()
    with open(out, "wb") as target:
        for name in names:
            with open(name, "rb") as source:
                target.write(source.read())
    return time.perf_counter() - started


def run(tmp: Path) -> list[tuple[str, float, str]]:
    folder = tmp / "entries"
    folder.mkdir()
    names = []
    for number in range(ENTRIES):
        path = folder / f"{number:05d}.bin"
        path.write_bytes(os.urandom(64 + number % 1984))
        names.append(str(path))
    listing = tmp / "entries.txt"
    listing.write_text("".join(f"{name}\n" for name in names))
    total = sum(os.path.getsize(name) for name in names)
    baseline = min(_baseline(names, tmp / "copy.bin") for _ in range(3))
    out = tmp / "out.blob"
    runs = []
    for _ in range(3):
        runs.append(run_measured([*PUFFIN, "write", str(out), "--force", "--entries-from",
                                  str(listing)]))
    seconds, rss = min(runs)
    validate_s, validate_rss = run_measured([*PUFFIN, "validate", str(out)])
    inspect_s, _ = run_measured([*PUFFIN, "inspect", "--json", str(out)])
    index_length = 21 << 20  # every row a 16-byte record: one varint byte each
    big = tmp / "big-index.blob"
    with open(big, "wb") as handle:
        handle.truncate(index_length * 16)  # sparse: the records are never read
        handle.seek(index_length * 16)
        handle.write(bytes([32]) + bytes(index_length - 1) + struct.pack("<IB", index_length, 1))
    big_s, big_rss = run_measured([*PUFFIN, "inspect", "--json", str(big)])
    label = f"write {ENTRIES:,} entries ({total / 2**20:.0f} MiB)"
    return [(f"{label}: wall", seconds, "s"),
            (f"{label}: rate", ENTRIES / seconds, "entries/s"),
            (f"{label}: vs bare Python copy loop ({baseline:.2f} s)", seconds / baseline, "x"),
            (f"{label}: peak RSS", rss / 1024, "MiB"),
            ("validate that file (every CRC): wall", validate_s, "s"),
            ("validate that file: peak RSS", validate_rss / 1024, "MiB"),
            ("inspect --json that file (20 rows): wall", inspect_s, "s"),
            ("inspect a 21 MiB index (22M rows): wall", big_s, "s"),
            ("inspect a 21 MiB index (22M rows): peak RSS", big_rss / 1024, "MiB")]
