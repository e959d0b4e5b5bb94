"""The installed ``puffin`` console script, run as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from puffin_cli import __version__

PUFFIN = str(Path(sys.executable).parent / "puffin")


def test_version_and_a_bad_file(tmp_path: Path) -> None:
    version = subprocess.run([PUFFIN, "--version"], capture_output=True, text=True, check=False)
    assert version.returncode == 0
    assert version.stdout == f"puffin, version {__version__}\n"

    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"PFA1" + bytes(40))
    result = subprocess.run([PUFFIN, "inspect", str(bad)], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (f"puffin: error: {bad}: footer end magic is 00000000, expected "
                             "50464131 (PFA1) (at byte 40)\n")
    assert "Traceback" not in result.stderr
