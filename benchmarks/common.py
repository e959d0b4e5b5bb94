"""Helpers shared by the benchmark modules: timed subprocesses with their peak RSS."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

PUFFIN = [sys.executable, "-m", "puffin_cli"]


# Linux counts the memory a process had when it forked (and exec'd) into the child's peak RSS,
# and the benchmark runner grows large (Spark, numpy). So measured commands are started by this
# small launcher, which times its own child and reports (seconds, peak RSS KiB, exit code).
_LAUNCHER = r"""
import os, sys, time
report, argv = int(sys.argv[1]), sys.argv[2:]
started = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ)
_, status, usage = os.wait4(pid, 0)
elapsed = time.perf_counter() - started
os.write(report, f"{elapsed} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}".encode())
"""


def run_measured(argv: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, int]:
    """Run ``argv``; return (wall seconds, peak RSS in KiB) of that command alone."""
    read_end, write_end = os.pipe()
    try:
        done = subprocess.run([sys.executable, "-c", _LAUNCHER, str(write_end), *argv],
                              stdout=stdout, stderr=subprocess.PIPE, pass_fds=(write_end,),
                              check=True)
        os.close(write_end)
        write_end = -1
        elapsed, rss, code = os.read(read_end, 200).decode().split()
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    if int(code) not in (0, 1):
        raise RuntimeError(f"{argv} exited {code}: {done.stderr.decode()}")
    return float(elapsed), int(rss)


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


# The baseline of the inspect benches: seek to the footer, parse it and serialize it again.
BARE_FOOTER_READER = r"""
import json, os, struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(-12, os.SEEK_END)
    size, _flags = struct.unpack("<i4s", f.read(8))
    f.seek(-(12 + size), os.SEEK_END)
    json.dumps(json.loads(f.read(size)))
"""
