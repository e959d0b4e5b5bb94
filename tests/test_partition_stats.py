"""Partition statistics (issue 29) against Iceberg 1.10.2: tables built by Spark 3.5
(tests/interop/spark_scripts/partition_stats_tables.py, cached by the script's hash) with the
files Iceberg's ``PartitionStatsHandler`` / ``compute_partition_stats`` computed, full and
incremental, v2 (identity and transform partitions, three specs, position and equality
deletes, a DELETED entry) and v3 (bucket + identity, deletion vectors replaced, a file with
Iceberg 1.9.x's field IDs). Iceberg is the judge: the rows it reads back from our files are
the rows it computed itself."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from interop.broken import java_judge_fixture  # noqa: F401  (fixture)
from interop.judge import JavaJudge
from interop.sparkenv import script_output
from tiers import needs

from puffin_cli.analysis.partition_stats.compute import (
    FULL,
    INCREMENTAL,
    compute,
    compute_full,
    compute_incremental,
)
from puffin_cli.analysis.partition_stats.model import unified_partition_type
from puffin_cli.analysis.partition_stats.parquet import read_rows
from puffin_cli.analysis.table.commit import commit, table_requirements
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.updates import (
    PartitionStatisticsFileEntry,
    RemovePartitionStatistics,
    SetPartitionStatistics,
    TableChange,
)
from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO

SCRIPT = (Path(__file__).resolve().parent / "interop" / "spark_scripts"
          / "partition_stats_tables.py")


@pytest.fixture(scope="session")
@needs("spark")
def ps_tables() -> Path:
    return script_output(SCRIPT, "partition-stats-tables", "build")


def run_json(args: list[str]) -> tuple[int, dict[str, Any]]:
    from puffin_cli.cli.main import cli

    result = CliRunner().invoke(cli, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def _doc(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "tables.json").read_text())
    return doc


def _copy(out: Path, name: str, tmp_path: Path) -> Path:
    table = tmp_path / name
    shutil.copytree(out / "warehouse" / "db" / name, table)
    return table


def _java_form(row: Any) -> dict[str, Any]:
    found = dataclasses.asdict(row)
    found["partition"] = list(found["partition"])
    return found


def _file(doc: dict[str, Any], name: str, how: str) -> dict[str, Any]:
    return next(f for f in doc[name]["files"] if f["how"] == how)


def _change(table: Table, *updates: Any) -> None:
    commit(table, lambda base: TableChange(table_requirements(base), tuple(updates)))


@pytest.mark.parametrize("name", ["ps_v2", "ps_v3"])
def test_rows_equal_icebergs_full_and_incremental(ps_tables: Path, name: str) -> None:
    doc = _doc(ps_tables)
    table = Table.load(ps_tables / "warehouse" / "db" / name, fileio=FileIO())
    unified = unified_partition_type(table.metadata)
    files = doc[name]["files"]
    first, full, incremental = files[0], files[1], files[2]
    assert full["how"] == "full" and not full["registered"]
    assert incremental["how"] == "incremental"
    snapshot = table.snapshot(full["snapshot-id"])
    assert snapshot is not None
    ours = [_java_form(r) for r in compute_full(table, snapshot)]
    assert ours == full["rows"] and len(ours) > 5
    base = read_rows(table.resolve(first["path"]), unified, table.metadata.format_version,
                     fileio=FileIO())
    grown = compute_incremental(table, snapshot, first["snapshot-id"], base)
    assert [_java_form(r) for r in grown] == incremental["rows"]
    if name == "ps_v2":  # incremental keeps rows of zeros a full compute drops
        assert len(incremental["rows"]) == len(full["rows"])
    else:
        assert any(r["dv_count"] for r in ours)


def test_unpartitioned_is_refused_as_iceberg_does(ps_tables: Path) -> None:
    assert _doc(ps_tables)["ps_unpart"]["error"] == "Table must be partitioned"
    table = Table.load(ps_tables / "warehouse" / "db" / "ps_unpart", fileio=FileIO())
    snapshot = table.current_snapshot()
    assert snapshot is not None
    with pytest.raises(PuffinError, match="Table must be partitioned"):
        compute(table, snapshot)


def test_committed_files_read_by_iceberg_give_its_rows(ps_tables: Path, tmp_path: Path,
                                                       java_judge: JavaJudge) -> None:
    """v2: with the incremental file unregistered, our commit is incremental from the first
    file; v3: the newest ancestor's file has 1.9.x's IDs, so ours is full, as Iceberg's."""
    doc = _doc(ps_tables)
    v2 = _copy(ps_tables, "ps_v2", tmp_path)
    target = _file(doc, "ps_v2", "incremental")
    _change(Table.load(v2, fileio=FileIO()), RemovePartitionStatistics(target["snapshot-id"]))
    code, done = run_json(["stats", "compute", str(v2), "--partition-stats", "--commit"])
    assert code == 0 and (done["mode"], done["base-snapshot-id"]) == (
        INCREMENTAL, doc["ps_v2"]["files"][0]["snapshot-id"])
    judged = {e["path"]: e for e in java_judge.reads(v2)["partition-statistics"]}
    assert judged[done["path"]]["error"] is None
    assert judged[done["path"]]["rows"] == target["rows"]

    v3 = _copy(ps_tables, "ps_v3", tmp_path)
    after = _file(doc, "ps_v3", "after-legacy")
    code, done = run_json(["stats", "compute", str(v3), "--partition-stats", "--commit"])
    assert code == 0 and done["mode"] == FULL and "1.9.x" in done["reason"]
    judged = {e["path"]: e for e in java_judge.reads(v3)["partition-statistics"]}
    assert judged[done["path"]]["rows"] == after["rows"]
    legacy = _file(doc, "ps_v3", "legacy")
    assert judged[legacy["path"]]["error"] is not None  # 1.10's core reader refuses it
    code, report = run_json(["table", str(v3), "--all-snapshots"])
    report = report["tables"][0]
    codes = {(f["code"], f["severity"]) for f in report["findings"]}
    assert ("table.partition-stats.legacy-ids", "warning") in codes
    assert not [f for f in report["findings"] if f["severity"] == "error"]


def test_wrong_counts_are_named_by_partition_and_field(ps_tables: Path,
                                                       tmp_path: Path) -> None:
    doc = _doc(ps_tables)
    v2 = _copy(ps_tables, "ps_v2", tmp_path)
    target = _file(doc, "ps_v2", "incremental")
    data = pq.read_table(target["path"].removeprefix("file:"))
    column = data.column("data_file_count").to_pylist()
    column[3] += 1
    index = data.schema.get_field_index("data_file_count")
    wrong = data.set_column(index, data.schema.field(index),
                            pa.array(column, type=data.schema.field(index).type))
    bad = v2 / "metadata" / "wrong-counts.parquet"
    pq.write_table(wrong, bad)
    table = Table.load(v2, fileio=FileIO())
    _change(table, SetPartitionStatistics(PartitionStatisticsFileEntry(
        target["snapshot-id"], str(bad), bad.stat().st_size)))
    code, report = run_json(["table", str(v2)])
    report = report["tables"][0]
    assert code == 1
    (found,) = [f for f in report["findings"] if f["code"] == "table.partition-stats.count"]
    detail = found["detail"]
    row = target["rows"][3]
    assert (detail["column"], detail["expected"], detail["actual"], detail["spec-id"]) == (
        "data_file_count", row["data_file_count"], row["data_file_count"] + 1, row["spec_id"])
    assert "data_file_count is" in found["message"] and "partition {" in found["message"]
