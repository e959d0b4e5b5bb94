"""pypaimon, Apache Paimon's Python implementation, for the Paimon BLOB interop tests.

pypaimon 2.1.0 pins ``pyarrow<20`` and ``backports.zstd<1.4``, older than puffin-cli's own
environment, so it lives in its own venv under the interop cache (as PySpark 3.5 does), built
once with pip from PyPI. Tests drive it through ``paimon_oracle.py`` (:class:`PaimonOracle`):
its ``BlobFormatWriter`` writes files, its ``FormatBlobReader`` reads them back.
See tests/interop/README.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tiers import need

from interop.javaenv import InteropSetupError, cache_dir, cache_lock, run_checked

PYPAIMON_PACKAGE = "pypaimon==2.1.0"
ORACLE_SCRIPT = Path(__file__).resolve().parent / "paimon_oracle.py"


@dataclass(frozen=True)
class PaimonOracle:
    """Runs ``paimon_oracle.py`` in the pypaimon venv: one process per batch of jobs."""

    python: Path

    def run(self, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each job's result: ``{"rows": ...}`` or ``{"error": message}``."""
        proc = subprocess.run([str(self.python), str(ORACLE_SCRIPT)], input=json.dumps(jobs),
                              capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            raise InteropSetupError(f"paimon_oracle.py failed (exit {proc.returncode}):\n"
                                    + "\n".join(proc.stderr.strip().splitlines()[-20:]))
        results: list[dict[str, Any]] = json.loads(proc.stdout)
        return results

    def write(self, path: Path, column: str, rows: list[Any], key_type: str = "STRING") -> None:
        """Write ``rows`` (see paimon_oracle.py for their JSON form) with BlobFormatWriter."""
        self._one({"op": "write", "path": str(path), "column": column, "key-type": key_type,
                   "rows": rows})

    def read(self, path: Path, column: str, key_type: str = "STRING") -> list[Any]:
        """Every row of ``path`` as FormatBlobReader reads it, in the same JSON form."""
        rows: list[Any] = self._one({"op": "read", "path": str(path), "column": column,
                                     "key-type": key_type})
        return rows

    def _one(self, job: dict[str, Any]) -> Any:
        (result,) = self.run([job])
        if "error" in result:
            raise PaimonOracleError(result["error"])
        return result["rows"]


class PaimonOracleError(RuntimeError):
    """pypaimon refused a file or a row (its exception, in one line)."""


def paimon_oracle() -> PaimonOracle:
    """Create (once) the pypaimon venv and return the oracle that runs in it."""
    need("paimon", "pypaimon (the interop cache's venv)")
    cache = cache_dir()
    venv = cache / "paimon-venv"
    python = venv / "bin" / "python"
    marker = venv / ".ready"
    with cache_lock(cache):
        if not marker.is_file() or marker.read_text().strip() != PYPAIMON_PACKAGE:
            run_checked([sys.executable, "-m", "venv", "--clear", str(venv)],
                        "create pypaimon venv")
            run_checked([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                         "-q", PYPAIMON_PACKAGE], f"pip install {PYPAIMON_PACKAGE} into {venv}")
            marker.write_text(PYPAIMON_PACKAGE + "\n")
    if not python.is_file():
        raise InteropSetupError(f"interop setup: {python} is missing")
    return PaimonOracle(python)
