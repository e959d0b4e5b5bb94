"""Issue 3 figures: validate streams blob by blob, at a speed comparable to CRC-32 alone.

(a) throughput of `validate_file` on a 1 GiB file of deletion-vector blobs, as a ratio to
    `zlib.crc32` over the same bytes in the same run (done means: at least 0.5); and, to
    separate the validator's own cost (reading, releasing) from the DV check, the same run with
    a handler that only computes each blob's CRC-32;
(b) peak RSS of `puffin validate` on a file with one 300 MiB blob, and on a tiny file for
    the baseline, each in its own process.
"""

from __future__ import annotations

import time
import zlib
from pathlib import Path

from common import PUFFIN, run_measured, sparse_puffin

GIB = 1 << 30
MIB = 1 << 20
CHUNK = 16 * MIB


def _dv_blob() -> tuple[bytes, int]:
    """About 1 MiB of DV: bitmap, array and run containers across 64-bit keys."""
    from pyroaring import BitMap64

    from puffin_cli.blobs.deletion_vector import encode_deletion_vector

    positions = BitMap64(range(0, 1 << 23, 2))               # 128 bitmap containers
    positions.update(range(1 << 24, (1 << 24) + (1 << 22)))  # runs
    positions.update(range(1 << 32, (1 << 32) + (1 << 26), 97))  # sparse arrays, key 1
    return encode_deletion_vector(positions), len(positions)


def _dv_file(path: Path, size: int) -> None:
    from puffin_cli.blobs.deletion_vector import dv_blob_properties
    from puffin_cli.format import PuffinWriter

    blob, cardinality = _dv_blob()
    writer = PuffinWriter(path, overwrite=True)
    for i in range(size // len(blob)):
        writer.add_stored_blob("deletion-vector-v1", blob, fields=[2147483645],
                               properties=dv_blob_properties(f"file:/data/{i:05d}.parquet",
                                                             cardinality))
    writer.finish()


def _crc_seconds(path: Path) -> float:
    started = time.perf_counter()
    crc = 0
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(CHUNK):
            crc = zlib.crc32(chunk, crc)
    return time.perf_counter() - started


def _validate_seconds(path: Path) -> float:
    from puffin_cli.analysis.validate import validate_file
    from puffin_cli.storage import FileIO

    started = time.perf_counter()
    report = validate_file(path, fileio=FileIO())
    elapsed = time.perf_counter() - started
    assert report.errors == 0 and report.warnings == 0, report.findings[:3]
    return elapsed


def _crc_only(data: bytes, meta: object) -> list[object]:
    zlib.crc32(data)
    return []


def _crc_only_validate_seconds(path: Path) -> float:
    """``_validate_seconds`` with a DV check that only computes the blob's CRC-32."""
    from unittest import mock

    from puffin_cli.blobs.deletion_vector import HANDLER

    with mock.patch.object(HANDLER, "check", _crc_only):
        return _validate_seconds(path)


def run(tmpdir: Path) -> list[tuple[str, float, str]]:
    big = tmpdir / "dv-1gib.puffin"
    _dv_file(big, GIB)
    size = big.stat().st_size
    _crc_seconds(big)  # warm the page cache
    crc = min(_crc_seconds(big) for _ in range(3))
    validate = min(_validate_seconds(big) for _ in range(3))
    crc_only = min(_crc_only_validate_seconds(big) for _ in range(3))
    big.unlink()

    one_blob = tmpdir / "one-300mib-blob.puffin"
    sparse_puffin(one_blob, 300 * MIB + 4096)
    _, rss_big = run_measured([*PUFFIN, "validate", "-q", str(one_blob)])
    tiny = tmpdir / "tiny.puffin"
    sparse_puffin(tiny, 4096)
    _, rss_tiny = run_measured([*PUFFIN, "validate", "-q", str(tiny)])
    return [
        ("validate 1 GiB of DV blobs: throughput", size / validate / MIB, "MiB/s"),
        ("zlib.crc32 over the same bytes: throughput", size / crc / MIB, "MiB/s"),
        ("validate throughput / crc32 throughput (>= 0.5)", crc / validate, "x"),
        ("validate with a CRC-only DV check / crc32 (overhead)", crc / crc_only, "x"),
        ("validate peak RSS, one 300 MiB blob", rss_big / 1024, "MiB"),
        ("validate peak RSS, tiny file (baseline)", rss_tiny / 1024, "MiB"),
    ]
