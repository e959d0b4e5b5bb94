"""Running ``puffin`` on hostile input in a subprocess: exit code, stderr lines, peak memory.

``run`` starts the CLI under a small wrapper that reports the child's peak resident memory
(``ru_maxrss`` of its children), so a resource test asserts a generous bound (512 MiB) rather
than a time. Every run has a timeout that only guards against a hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEMORY_BOUND_MIB = 512
_WRAPPER = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:])\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "sys.stderr.write(f'\\nPEAK-KIB {peak}\\n')\n"
    "sys.exit(r.returncode)\n"
)


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: bytes
    lines: list[str]  # stderr, without the wrapper's report
    peak_mib: float

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)


def run(*args: str | os.PathLike[str], stdin: Any = subprocess.DEVNULL, timeout: float = 120,
        stdout: Any = subprocess.PIPE, env: dict[str, str] | None = None) -> Outcome:
    command = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "puffin_cli",
               *map(os.fsdecode, args)]
    done = subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                          timeout=timeout, env={**os.environ, **(env or {})})
    text = done.stderr.decode("utf-8", "backslashreplace").rstrip("\n").split("\n")
    peak = int(text[-1].split()[1]) / 1024
    lines = [line for line in text[:-1] if line]
    return Outcome(done.returncode, done.stdout or b"", lines, peak)


def assert_one_line(outcome: Outcome, code: int, *needles: str) -> None:
    """Exit ``code``, exactly one line on stderr holding every needle, no traceback, and peak
    memory under the bound."""
    assert outcome.code == code, (outcome.code, outcome.lines)
    assert len(outcome.lines) == 1, outcome.lines
    assert "Traceback" not in outcome.stderr
    for needle in needles:
        assert needle in outcome.lines[0], (needle, outcome.lines[0])
    assert outcome.peak_mib < MEMORY_BOUND_MIB, outcome.peak_mib


def assert_clean(outcome: Outcome, *codes: int) -> None:
    """Exit with one of ``codes`` (0 or 1 by default), at most one stderr line, bounded."""
    assert outcome.code in (codes or (0, 1)), (outcome.code, outcome.lines)
    assert len(outcome.lines) <= 1, outcome.lines
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr
    assert outcome.peak_mib < MEMORY_BOUND_MIB, outcome.peak_mib


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def assert_usage(outcome: Outcome, *needles: str) -> None:
    """A usage error: exit 2, the problem on one line and where to get help on a second."""
    assert outcome.code == 2, (outcome.code, outcome.lines)
    assert len(outcome.lines) == 2 and outcome.lines[1].startswith("Try '"), outcome.lines
    for needle in needles:
        assert needle in outcome.lines[0], (needle, outcome.lines[0])
