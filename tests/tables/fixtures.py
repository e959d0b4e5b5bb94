"""The Spark-built test tables, generated once per generator version and cached.

``spark_tables`` (session fixture) returns the directory holding ``warehouse/db/<table>`` and
``<table>.oracle.json``. The cache key is the hash of generate.py, so editing the generator
regenerates; CI caches the interop cache directory between runs. Setup errors fail the tests
(never a skip).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interop.sparkenv import script_output
from tiers import needs

GENERATOR = Path(__file__).resolve().parent / "generate.py"
TABLES = ("stats_v1", "stats_v2", "dv_v3")


def generated_tables() -> Path:
    return script_output(GENERATOR, "tables")


@pytest.fixture(scope="session")
@needs("spark")
def spark_tables() -> Path:
    return generated_tables()


def java_report(tables: Path, name: str) -> dict[str, Any]:
    """What Iceberg Java reported about table ``name`` (recorded by generate.py)."""
    loaded: dict[str, Any] = json.loads((tables / f"{name}.oracle.json").read_text())
    return loaded


def table_dir(tables: Path, name: str) -> Path:
    return tables / "warehouse" / "db" / name
