"""Regenerate the JSON golden files of every command: ``python tests/golden/regenerate.py``.

Each golden ``<name>.json`` is the JSON document of one run (:data:`CASES`) with the volatile
parts normalised (:func:`normalise`): where the samples and the temp folder are, generated
UUIDs and timings. ``tests/test_json_documents.py`` compares the same runs against these files.
``stats compute`` needs Spark and Iceberg-built tables: its golden is pinned by
``tests/test_stats_spark.py::test_cli_json`` (``PUFFIN_REGENERATE_GOLDEN=1`` rewrites it).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent
if str(GOLDEN.parent) not in sys.path:  # run as a script: make tests/helpers.py importable
    sys.path.insert(0, str(GOLDEN.parent))

from click.testing import CliRunner  # noqa: E402
from helpers import SAMPLES  # noqa: E402

from puffin_cli.cli.main import cli  # noqa: E402

REPO = GOLDEN.parents[1]
THETA = "{samples}/public/apache-datasketches-theta-v1.puffin"
DV64 = "{samples}/iceberg-java/dv-64bit.puffin"
MIXED = "{samples}/iceberg-java/multi-blob-mixed.puffin"

# name -> command line; {samples} is tests/data/foreign, {repo} this checkout, {tmp} a fresh
# temp folder, {table} a synthetic three-snapshot table in it, {stats_table} a two-snapshot
# table whose snapshots have statistics files (the second's covering two columns),
# {broken_stats_table} the same with a wrong file size, the second snapshot's file named
# wrong (missing; the file itself an orphan) and it registered for a snapshot the table lacks.
CASES: dict[str, list[str]] = {
    "inspect-apache-datasketches-theta-v1-default": ["inspect", "--json", THETA],
    "inspect-deletion-vector-v1-default": [
        "inspect", "--json", "{samples}/public/deletion-vector-v1.puffin"],
    "inspect-dv-64bit-limit2": ["inspect", "--json", "--limit", "2", DV64],
    "inspect-multi-blob-mixed-default": ["inspect", "--json", MIXED],
    "inspect-multi-blob-mixed-no-decode": ["inspect", "--json", "--no-decode", MIXED],
    "inspect-sample-metric-data-compressed-zstd-default": [
        "inspect", "--json", "{samples}/public/sample-metric-data-compressed-zstd.bin"],
    "inspect-empty-puffin-uncompressed-default": [
        "inspect", "--json", "{samples}/public/empty-puffin-uncompressed.bin"],
    "dump-blob-dv-64bit-limit2": ["dump-blob", "--json", "--limit", "2", DV64, "0"],
    "dump-blob-theta-by-field": ["dump-blob", "--json", THETA, "--field", "2"],
    "validate-java-profile": ["validate", "--json", "--profile", "java",
                              "{repo}/samples/lz4-footer.puffin", MIXED],
    "validate-strict": ["validate", "--json", "--strict", "{repo}/samples/stats.puffin"],
    "write-dv-and-copy": ["write", "--json", "{tmp}/out.puffin", "--dv",
                          "s3://bucket/t/data/f.parquet", "--positions", "0,2,4,10-20",
                          "--copy-blob", f"{THETA}:1"],
    "table-current": ["table", "--json", "{table}"],
    "table-all-snapshots": ["table", "--json", "--all-snapshots", "{table}"],
    "table-statistics": ["table", "--json", "--all-snapshots", "{stats_table}"],
    "scan-in-process": ["scan", "--json", "{repo}/samples"],
    "diff-codecs": ["diff", "--json", "{samples}/public/sample-metric-data-uncompressed.bin",
                    "{samples}/public/sample-metric-data-compressed-zstd.bin"],
    "diff-table": ["diff", "--json", "{stats_table}"],
    "repair-plan": ["repair", "--json", "{broken_stats_table}"],
    "repair-apply": ["repair", "--json", "--apply", "{broken_stats_table}"],
}
# Exit status of each case when it is not 0.
EXIT_CODES = {"validate-java-profile": 1, "repair-plan": 1, "diff-codecs": 1,
              "diff-table": 1}

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# Keys whose values change from run to run.
VOLATILE = {"seconds": 0.0, "sketch-seconds": 0.0}


def normalise(document: Any, tmp: Path | None = None) -> Any:
    """Replace the samples folder by ``<samples>``, this checkout by ``<repo>``, the temp
    folder by ``<tmp>``, generated UUIDs by ``<uuid>`` and timings by 0."""
    if isinstance(document, dict):
        return {k: VOLATILE[k] if k in VOLATILE else normalise(v, tmp)
                for k, v in document.items()}
    if isinstance(document, list):
        return [normalise(v, tmp) for v in document]
    if isinstance(document, str):
        text = document.replace(str(SAMPLES), "<samples>").replace(str(REPO), "<repo>")
        if tmp is not None:
            text = text.replace(str(tmp), "<tmp>")
        return _UUID.sub("<uuid>", text)
    return document


def _table(tmp: Path) -> Path:
    from tables.synthetic import dv_table

    root = tmp / "t"
    dv_table(root, snapshots=3, dvs_per_snapshot=2, carry=False).finish()
    return root


def _stats_table(tmp: Path, broken: bool = False) -> Path:
    from tables.synthetic import dv_table

    root = tmp / "ts"
    table = dv_table(root, snapshots=2, dvs_per_snapshot=1, carry=True)
    first, second = (s["snapshot-id"] for s in table.snapshots)
    table.statistics_file(first, {1: list(range(50))})
    table.statistics_file(second, {1: list(range(100)), 4: [0, 1, 1, 2]})
    if broken:
        table.statistics[0]["file-size-in-bytes"] += 10
        table.statistics.append({**table.statistics[1], "snapshot-id": 999})
        table.statistics[1]["statistics-path"] = table.uri("metadata/gone.stats")
    table.finish()
    return root


def run_case(name: str, tmp: Path) -> tuple[int, Any]:
    """Exit status and normalised JSON document of one case, run in the temp folder ``tmp``."""
    args = CASES[name]
    places = {"samples": str(SAMPLES), "repo": str(REPO), "tmp": str(tmp)}
    if any("{table}" in a for a in args):
        places["table"] = str(_table(tmp))
    if any("{stats_table}" in a for a in args):
        places["stats_table"] = str(_stats_table(tmp))
    if any("{broken_stats_table}" in a for a in args):
        places["broken_stats_table"] = str(_stats_table(tmp, broken=True))
    result = CliRunner().invoke(cli, [a.format(**places) for a in args])
    return result.exit_code, normalise(json.loads(result.stdout), tmp)


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"


def write_golden(name: str, document: Any) -> None:
    golden_path(name).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                                 encoding="utf-8")


def main() -> None:
    for name in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            code, document = run_case(name, Path(tmp))
        if code != EXIT_CODES.get(name, 0):
            raise SystemExit(f"{name}: puffin exited {code}")
        write_golden(name, document)
        print(f"wrote {golden_path(name)}")
    if os.environ.get("PUFFIN_REGENERATE_GOLDEN"):
        print("stats compute: run tests/test_stats_spark.py::test_cli_json")


if __name__ == "__main__":
    main()
