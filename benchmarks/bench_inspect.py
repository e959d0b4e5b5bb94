"""Issue 2 figures: inspect on huge files costs a few KiB of I/O, little memory and time.

(a) `inspect --json --no-decode` on a 1 GiB file: median wall time as a ratio to a bare Python
    process that only seeks and parses the footer; (b) bytes read from the file on 1 GiB and
    1 MiB files; (c) peak RSS on the 1 GiB file; (d) `dump-blob --as positions` on a
    100-million-position DV, positions per second; (e) cold `puffin inspect` (human view,
    sketches decoded) on samples/stats.puffin, median wall time, against the Java tool's 0.6 s.
"""

from __future__ import annotations

import sys
from pathlib import Path

from common import BARE_FOOTER_READER, PUFFIN, median_wall, run_measured, sparse_puffin

# Run inspect in-process after a warm-up on another file, so the count is the file's bytes only.
BYTES_READ = r"""
import sys
from puffin_cli.format import PuffinReader
from puffin_cli.cli.main import main
def rchar():
    with open("/proc/self/io") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("rchar"))
def run(path):
    try:
        main(["inspect", "--json", "--no-decode", path])
    except SystemExit:
        pass
run(sys.argv[2])
before = rchar()
run(sys.argv[1])
print(rchar() - before, file=sys.stderr)
"""

ROOT = Path(__file__).resolve().parents[1]


def _bytes_read(path: Path, warmup: Path) -> int:
    import subprocess

    done = subprocess.run([sys.executable, "-c", BYTES_READ, str(path), str(warmup)],
                          capture_output=True, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1])


def _big_dv(path: Path) -> int:
    """A DV of 100 million positions: runs, every other position (bitmap containers) and a
    sparse stretch above 2^32 (array containers)."""
    from pyroaring import BitMap64

    from puffin_cli.blobs.deletion_vector import dv_blob_properties, encode_deletion_vector
    from puffin_cli.format import PuffinWriter
    from puffin_cli.format.spec import DV_BLOB_TYPE, ROW_POSITION_FIELD_ID

    bitmap = BitMap64()
    bitmap.add_range(0, 60_000_000)
    bitmap.update(range(60_000_000, 120_000_000, 2))
    bitmap.update(range(1 << 32, (1 << 32) + 10_000_000 * 7, 7))
    with PuffinWriter(path) as writer:
        writer.add_blob(DV_BLOB_TYPE, encode_deletion_vector(bitmap),
                        fields=[ROW_POSITION_FIELD_ID],
                        properties=dv_blob_properties("data/big.parquet", len(bitmap)))
    return len(bitmap)


def run(tmp: Path) -> list[tuple[str, float, str]]:
    big, small = tmp / "big.puffin", tmp / "small.puffin"
    sparse_puffin(big, 1 << 30)
    sparse_puffin(small, 1 << 20)
    ours = median_wall([*PUFFIN, "inspect", "--json", "--no-decode", str(big)])
    bare = median_wall([sys.executable, "-c", BARE_FOOTER_READER, str(big)])
    _, rss = run_measured([*PUFFIN, "inspect", "--json", "--no-decode", str(big)])
    dv = tmp / "dv.puffin"
    positions = _big_dv(dv)
    dump, _ = run_measured([*PUFFIN, "dump-blob", "--as", "positions", str(dv), "0"])
    cold = median_wall([*PUFFIN, "inspect", str(ROOT / "samples" / "stats.puffin")])
    return [
        ("(a) inspect --json --no-decode 1 GiB, median wall", ours, "s"),
        ("(a) bare footer reader 1 GiB, median wall", bare, "s"),
        ("(a) ratio inspect / bare reader (goal <= 4)", ours / bare, "x"),
        ("(b) bytes read from a 1 GiB file by inspect", _bytes_read(big, small), "B"),
        ("(b) bytes read from a 1 MiB file by inspect", _bytes_read(small, big), "B"),
        ("(c) peak RSS inspect 1 GiB (goal < 60 MiB)", rss / 1024, "MiB"),
        ("(d) dump-blob --as positions, 100M-position DV", dump, "s"),
        ("(d) positions streamed per second", positions / dump, "pos/s"),
        ("(e) cold inspect samples/stats.puffin, median wall", cold, "s"),
        ("(e) ratio to the Java tool's 0.6 s (goal <= 0.33)", cold / 0.6, "x"),
    ]
