"""Regenerate the ``puffin inspect --json`` golden files: ``python tests/golden/regenerate.py``.

Each golden is ``inspect-<fixture>-<options>.json``: the JSON document for one sample file of
../shared/samples, with the volatile part (where the samples folder is) replaced by
``<samples>``. ``tests/test_cli_inspect.py`` compares the same runs against these files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent
if str(GOLDEN.parent) not in sys.path:  # run as a script: make tests/helpers.py importable
    sys.path.insert(0, str(GOLDEN.parent))

from click.testing import CliRunner  # noqa: E402
from helpers import SAMPLES  # noqa: E402

from puffin_cli.cli.main import cli  # noqa: E402

# name -> (sample file relative to the samples folder, extra options)
CASES: dict[str, tuple[str, list[str]]] = {
    "inspect-apache-datasketches-theta-v1-default": ("public/apache-datasketches-theta-v1.puffin",
                                                     []),
    "inspect-deletion-vector-v1-default": ("public/deletion-vector-v1.puffin", []),
    "inspect-dv-64bit-limit2": ("iceberg-java/dv-64bit.puffin", ["--limit", "2"]),
    "inspect-multi-blob-mixed-default": ("iceberg-java/multi-blob-mixed.puffin", []),
    "inspect-multi-blob-mixed-no-decode": ("iceberg-java/multi-blob-mixed.puffin",
                                           ["--no-decode"]),
    "inspect-sample-metric-data-compressed-zstd-default": (
        "public/sample-metric-data-compressed-zstd.bin", []),
    "inspect-empty-puffin-uncompressed-default": ("public/empty-puffin-uncompressed.bin", []),
}


def normalise(document: Any) -> Any:
    """Replace the absolute samples folder in every string by ``<samples>``."""
    if isinstance(document, dict):
        return {k: normalise(v) for k, v in document.items()}
    if isinstance(document, list):
        return [normalise(v) for v in document]
    if isinstance(document, str):
        return document.replace(str(SAMPLES), "<samples>")
    return document


def run_case(name: str) -> tuple[int, Any]:
    """Exit code and normalised JSON document of one golden case."""
    sample, options = CASES[name]
    result = CliRunner().invoke(cli, ["inspect", "--json", *options, str(SAMPLES / sample)])
    return result.exit_code, normalise(json.loads(result.stdout))


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"


def main() -> None:
    for name in CASES:
        code, document = run_case(name)
        if code != 0:
            raise SystemExit(f"{name}: puffin inspect exited {code}")
        golden_path(name).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
        print(f"wrote {golden_path(name)}")


if __name__ == "__main__":
    main()
