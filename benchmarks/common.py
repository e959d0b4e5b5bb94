"""Helpers shared by the benchmark modules: timed subprocesses with their peak RSS."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PUFFIN = [sys.executable, "-m", "puffin_cli"]


def run_measured(argv: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, int]:
    """Run ``argv``; return (wall seconds, peak RSS in KiB) of that child alone."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        stderr = process.stderr.read().decode() if process.stderr else ""
        raise RuntimeError(f"{argv} exited {process.returncode}: {stderr}")
    if process.stderr:
        process.stderr.close()
    return elapsed, usage.ru_maxrss


def median_wall(argv: list[str], repeat: int = 7) -> float:
    return statistics.median(run_measured(argv)[0] for _ in range(repeat))


def sparse_puffin(path: Path, size: int) -> None:
    """A Puffin file of ``size`` bytes: one opaque blob spanning a sparse (unwritten) area and a
    real footer, so large files cost no disk writes."""
    from puffin_cli.format.metadata import BlobMetadata, FileMetadata
    from puffin_cli.format.spec import FOOTER_OVERHEAD, MAGIC

    def footer_for(length: int) -> bytes:
        blob = BlobMetadata("bench-opaque-v1", (1,), 1, 1, len(MAGIC), length)
        payload = FileMetadata((blob,), {"created-by": "puffin-cli bench"}).to_payload()
        return MAGIC + payload + len(payload).to_bytes(4, "little") + bytes(4) + MAGIC

    guess = footer_for(size)
    footer = footer_for(size - len(MAGIC) - len(guess))
    assert len(footer) == len(guess) and len(footer) >= FOOTER_OVERHEAD
    with open(path, "wb") as out:
        out.write(MAGIC)
        out.truncate(size - len(footer))
        out.seek(size - len(footer))
        out.write(footer)
