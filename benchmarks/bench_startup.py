"""Issue 12 start-up figures, each against a baseline measured in this run on this Python.

(a) cold human `puffin inspect samples/stats.puffin` (six sketches decoded) against Iceberg
    Java's reader of the same file (the interop oracle's `read`: a JVM, Iceberg's Puffin reader
    and DataSketches decoding every blob), median wall time; goal <= 0.2x.
(b) `inspect --json --no-decode` of a file with 1,024 blobs against a bare Python footer read
    (seek, parse, re-serialize); goal <= 2x.
(c) `puffin --help` minus `python -c pass`; goal <= 60 ms.
"""

from __future__ import annotations

import sys
from pathlib import Path

from common import BARE_FOOTER_READER, PUFFIN, median_wall

ROOT = Path(__file__).resolve().parents[1]
STATS = ROOT / "samples" / "stats.puffin"
BLOBS = 1024


def _many_blobs(path: Path) -> None:
    """A Puffin file of 1,024 small blobs with Iceberg-like metadata (fields, snapshot IDs,
    an ndv property, zstd)."""
    from puffin_cli.format import PuffinWriter

    with PuffinWriter(path, properties={"created-by": "puffin-cli bench"}) as writer:
        for index in range(BLOBS):
            writer.add_blob("apache-datasketches-theta-v1", bytes(64), fields=[index + 1],
                            snapshot_id=3055729675574597004 + index, sequence_number=index,
                            properties={"ndv": str(index * 1000)}, codec="zstd")


def _java_reader() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from interop.javaenv import java_env

    return java_env().oracle_command("read", str(STATS))


def run(tmp: Path) -> list[tuple[str, float, str]]:
    java = median_wall(_java_reader(), repeat=5)
    human = median_wall([*PUFFIN, "inspect", str(STATS)])
    many = tmp / "many.puffin"
    _many_blobs(many)
    ours = median_wall([*PUFFIN, "inspect", "--json", "--no-decode", str(many)])
    bare = median_wall([sys.executable, "-c", BARE_FOOTER_READER, str(many)])
    helped = median_wall([*PUFFIN, "--help"])
    python = median_wall([sys.executable, "-c", "pass"])
    return [
        ("(a) Iceberg Java's reader, samples/stats.puffin, median wall", java, "s"),
        ("(a) human inspect samples/stats.puffin, median wall", human, "s"),
        ("(a) ratio inspect / Java reader (goal <= 0.2)", human / java, "x"),
        ("(b) inspect --json --no-decode, 1,024 blobs, median wall", ours, "s"),
        ("(b) bare footer read, 1,024 blobs, median wall", bare, "s"),
        ("(b) ratio inspect / bare read (goal <= 2)", ours / bare, "x"),
        ("(c) puffin --help, median wall", helped, "s"),
        ("(c) python -c pass, median wall", python, "s"),
        ("(c) --help minus python start (goal <= 0.060)", helped - python, "s"),
    ]
