"""Start-up hygiene: single-file commands never load Spark, and the cheap paths stay cheap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import puffin_cli.format

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
HEAVY = ("pyspark", "pyarrow", "fastavro", "polars", "numpy", "datasketches", "pyroaring",
         "rich", "obstore", "pyiceberg", "sqlalchemy")

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


def test_json_metadata_only_imports_no_typing_and_no_table_facts() -> None:
    """The metadata-only path (goal (b) of benchmarks/bench_startup.py) imports neither
    ``typing`` (a few ms) nor the classes of a table finding's facts (17 dataclasses, ~7 ms):
    reading a footer makes findings, never facts."""
    probe = ("import sys\nfrom puffin_cli.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
             "except SystemExit:\n    pass\n"
             "print(sorted({'typing', 'puffin_cli.analysis.table.facts'} & set(sys.modules)), "
             "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe, "inspect", "--json", "--no-decode",
                           str(SAMPLES / "stats.puffin")], capture_output=True, text=True,
                          check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]"


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


def test_known_blob_modules_match_the_scan() -> None:
    """KNOWN_MODULES (the fast lookup) names exactly the handler modules the scan finds."""
    import importlib

    from puffin_cli import blobs

    scanned = blobs._load()
    assert sorted(blobs.KNOWN_MODULES) == sorted(scanned)
    for type_name, module in blobs.KNOWN_MODULES.items():
        handler = importlib.import_module(f"puffin_cli.blobs.{module}").HANDLER
        assert handler is scanned[type_name] is blobs.handler_for(type_name)


def test_inspecting_sketches_imports_no_other_blob_module() -> None:
    """A file of Theta sketches imports the Theta handler only: not the deletion-vector
    modules, nor the Iceberg value serializers that computing sketches needs."""
    probe = ("import sys\nfrom puffin_cli.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
             "except SystemExit:\n    pass\nprint(sorted(m for m in sys.modules"
             " if m.startswith('puffin_cli.blobs.')), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe, "inspect", str(SAMPLES / "stats.puffin")],
                          capture_output=True, text=True, check=True)
    loaded = done.stderr.strip().splitlines()[-1]
    assert "puffin_cli.blobs.theta.handler" in loaded
    assert "deletion_vector" not in loaded
    assert "iceberg_values" not in loaded
