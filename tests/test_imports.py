"""Start-up hygiene: single-file commands never load Spark, and the cheap paths stay cheap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import puffin_cli.format

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
HEAVY = ("pyspark", "pyarrow", "fastavro", "numpy", "datasketches", "pyroaring", "rich",
         "obstore", "pyiceberg", "sqlalchemy")

# Runs a command in-process, then reports which of the HEAVY top-level packages it imported.
PROBE = r"""
import json, os, sys
from puffin_cli.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = {name.split(".")[0] for name in sys.modules} & set(json.loads(os.environ["HEAVY"]))
print(json.dumps(sorted(heavy)), file=sys.stderr)
"""


def loaded_by(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          check=True, env={**os.environ, "HEAVY": json.dumps(HEAVY)})
    result: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return result


def test_json_metadata_only_loads_no_heavy_module() -> None:
    assert loaded_by("inspect", "--json", "--no-decode", str(SAMPLES / "stats.puffin")) == []


def test_human_inspect_loads_only_rich() -> None:
    """Uncompressed sketches with many entries (or exact ones) are summarized from their
    preamble: neither DataSketches nor numpy is loaded."""
    assert loaded_by("inspect", str(SAMPLES / "stats.puffin")) == ["rich"]


def test_help_loads_no_heavy_module() -> None:
    assert loaded_by("--help") == []


def test_validate_and_dump_blob_never_load_spark() -> None:
    for args in (("validate", str(SAMPLES)),
                 ("dump-blob", "--as", "positions", str(SAMPLES / "deletion-vectors.puffin"),
                  "0")):
        assert "pyspark" not in loaded_by(*args)


def test_only_catalog_commands_load_pyiceberg(tmp_path: Path) -> None:
    """A table by its location never loads pyiceberg; --catalog does."""
    table = tmp_path / "t" / "metadata"
    table.mkdir(parents=True)
    (table / "v1.metadata.json").write_text("{}")
    assert not {"pyiceberg", "sqlalchemy"} & set(loaded_by("table", str(tmp_path / "t")))
    assert "pyiceberg" in loaded_by("table", "--catalog", "nowhere", "db.t")


def test_format_package_exports_resolve() -> None:
    for name in puffin_cli.format.__all__:
        assert getattr(puffin_cli.format, name).__name__ == name
