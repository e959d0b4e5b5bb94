"""Comparing a command's run on objects with its run on the local copy of the same bytes."""

from __future__ import annotations

import subprocess
from pathlib import Path


def same(remote: subprocess.CompletedProcess[bytes], local: subprocess.CompletedProcess[bytes],
         prefix: str, root: Path) -> None:
    """The runs agree (exit code, stdout, stderr) once ``prefix`` reads as ``root``."""
    def text(data: bytes) -> bytes:
        return data.replace(prefix.encode(), str(root).encode())

    assert (remote.returncode, text(remote.stdout), text(remote.stderr)) == \
        (local.returncode, local.stdout, local.stderr)
