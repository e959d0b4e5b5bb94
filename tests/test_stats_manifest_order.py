"""The order of a snapshot's data manifests in Iceberg Java's scan planning
(:mod:`puffin_cli.analysis.stats.manifest_order`), against Iceberg 1.10.2 itself: tables with
several data manifests built by Spark 3.5 (tests/interop/spark_scripts/manifest_order_tables.py,
cached by the script's hash) whose hash-set order differs from their manifest list's, with the
Spark input partitions Iceberg read and Iceberg's ``compute_table_stats`` of the current
snapshot; and synthetic lists of manifest paths put into the same Java hash set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from interop.sparkenv import script_output
from stats_compute import SKETCHERS, compute_stats
from tiers import needs

from puffin_cli.analysis.stats.manifest_order import (
    hash_set_order,
    java_string_hash,
    manifest_hash,
)
from puffin_cli.analysis.stats.plan import plan_snapshot, stats_snapshot
from puffin_cli.analysis.stats.task_groups import plan_task_groups
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import current_metadata_file, load_metadata
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO

SCRIPT = (Path(__file__).resolve().parent / "interop" / "spark_scripts"
          / "manifest_order_tables.py")
TABLES = ("mo_appends_v2", "mo_many_v2")


@pytest.fixture(scope="session")
@needs("spark")
def manifest_order_tables() -> Path:
    """OUT_DIR with warehouse/db/<table> and tables.json (Iceberg's orders and layout)."""
    return script_output(SCRIPT, "manifest-order-tables", "build")


def recorded(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "tables.json").read_text())
    return doc


def test_java_hash_codes() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)  # wraps to Integer.MIN_VALUE
    assert java_string_hash("\U0001F642") == 0xD83D * 31 + 0xDE42  # two UTF-16 code units
    assert manifest_hash("hello") == 99162353
    assert manifest_hash("polygenelubricants") == -(2**31) + 31


def test_hash_set_order_is_javas(manifest_order_tables: Path) -> None:
    doc = recorded(manifest_order_tables)
    cases = doc["sets"]
    assert len(cases) == 74
    for case in cases:
        assert hash_set_order(case["paths"]) == case["java"], case["paths"]
    assert sum(c["paths"] != c["java"] for c in cases) > 60  # the order is seldom the list's
    for name in TABLES:
        assert hash_set_order(doc[name]["listed"]) == doc[name]["java"], name
        assert doc[name]["listed"] != doc[name]["java"], name


@pytest.mark.parametrize("name", TABLES)
def test_task_groups_follow_the_hash_set_order(manifest_order_tables: Path, name: str) -> None:
    expected = recorded(manifest_order_tables)[name]
    table = Table.load(manifest_order_tables / "warehouse" / "db" / name, fileio=FileIO())
    plan = plan_snapshot(table, stats_snapshot(table, None), None)
    assert len({f.location for f in plan.data_files}) == len(expected["listed"]) >= 6
    groups = plan_task_groups(plan, 2)
    assert [[s.file.location for s in g.splits] for g in groups] == expected["partitions"]
    assert len(groups) < len(plan.data_files)  # files of several manifests share a task


def read_blobs(path: Path | str) -> dict[int, tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return {blob.fields[0]: (blob, reader.read_blob(blob)) for blob in reader.metadata.blobs}


@pytest.mark.parametrize("sketcher", SKETCHERS)
@pytest.mark.parametrize("name", TABLES)
def test_statistics_equal_icebergs(manifest_order_tables: Path, name: str, sketcher: str,
                                   tmp_path: Path) -> None:
    """Every column in estimation mode in its tasks: the same NDVs and sketch bytes as
    Iceberg's, which depend on which files share a task and in which order."""
    table = tmp_path / name
    shutil.copytree(manifest_order_tables / "warehouse" / "db" / name, table)
    metadata = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    entry = next(s for s in metadata.statistics
                 if s.snapshot_id == metadata.current_snapshot_id)
    iceberg = read_blobs(table / "metadata" / Path(entry.path).name)
    result = compute_stats(table, sketcher=sketcher, full=True)
    ours = read_blobs(result.statistics_path)
    assert sorted(ours) == sorted(iceberg) == [1, 2, 3]
    assert not any(c.exact for c in result.columns)
    for column in result.columns:
        blob, data = ours[column.field_id]
        assert blob.properties == iceberg[column.field_id][0].properties, column.name
        assert data == iceberg[column.field_id][1], column.name
