"""Partition statistics without Spark (issue 29): a synthetic v3 table (tests/tables/
synthetic.py), its file computed and committed by ``stats compute --partition-stats``, read by
``inspect`` (by name and type with ``--table``, ``--json``, ``--limit``), and files broken one
way each, every one named by ``puffin table`` with its code and facts. Iceberg Java's side is
in test_partition_stats.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from tables.synthetic import TableBuilder, data_entry, dv_entry

from puffin_cli.analysis.partition_stats.model import LEGACY_ID_SHIFT
from puffin_cli.analysis.partition_stats.parquet import PARQUET_FIELD_ID_KEY, arrow_table
from puffin_cli.analysis.table.commit import commit, table_requirements
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.updates import (
    PartitionStatisticsFileEntry,
    SetPartitionStatistics,
    TableChange,
)
from puffin_cli.cli.main import cli
from puffin_cli.storage import FileIO


def run(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def equality_entry(path: str, part: int, record_count: int) -> dict[str, Any]:
    entry = data_entry(path, part, record_count)
    entry["data_file"]["content"] = 2
    return entry


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """Snapshot 1001: data in part 0, 1, 2; snapshot 1002: a DV on part 0's file and an
    equality delete in part 2."""
    b = TableBuilder(tmp_path / "t")
    data = [data_entry(b.uri(f"data/p{p}.parquet"), p, 10 * (p + 1)) for p in range(3)]
    first = b.manifest(data, 0)
    b.snapshot([(first, 0, 1)])
    puffin, ranges = b.puffin([(b.uri("data/p0.parquet"), [1, 2, 3])])
    deletes = b.manifest([dv_entry(b.uri(puffin), b.uri("data/p0.parquet"), 0, *ranges[0], 3),
                          equality_entry(b.uri("data/eq.parquet"), 2, 4)], 1)
    b.snapshot([(first, 0, 1), (deletes, 1, 2)])
    b.finish()
    return b.root


def register(root: Path, path: Path) -> None:
    loaded = Table.load(root, fileio=FileIO())
    entry = PartitionStatisticsFileEntry(1002, str(path), path.stat().st_size)
    commit(loaded, lambda base: TableChange(table_requirements(base),
                                            (SetPartitionStatistics(entry),)))


def computed(root: Path) -> tuple[pa.Table, dict[str, Any]]:
    code, done = run("stats", "compute", str(root), "--partition-stats", "--commit")
    assert code == 0, done
    return pq.read_table(done["path"]), done


def findings(root: Path) -> list[dict[str, Any]]:
    _code, doc = run("table", str(root))
    return [f for f in doc["tables"][0]["findings"] if f["code"].startswith(
        "table.partition-stats.")]


def test_compute_commit_inspect_and_a_clean_check(table: Path) -> None:
    data, done = computed(table)
    assert (done["mode"], done["partitions"], done["committed"]) == ("full", 3, True)
    assert data.num_rows == 3 and findings(table) == []
    rows = data.to_pylist()
    assert [r["partition"] for r in rows] == [{"part": 0}, {"part": 1}, {"part": 2}]
    assert (rows[0]["dv_count"], rows[0]["position_delete_record_count"],
            rows[2]["equality_delete_file_count"], rows[1]["data_record_count"]) == (1, 3, 1, 20)
    assert [r["last_updated_snapshot_id"] for r in rows] == [1002, 1001, 1002]
    ids = {f.name: f.metadata[PARQUET_FIELD_ID_KEY] for f in data.schema}
    assert ids["partition"] == b"1" and ids["dv_count"] == b"13"
    # the second run: the snapshot has its file
    code, again = run("stats", "compute", str(table), "--partition-stats", "--commit")
    assert (code, again["mode"]) == (0, "fresh")

    code, shown = run("inspect", "--table", str(table), "--limit", "2", done["path"])
    (report,) = shown["files"]
    assert code == 0 and report["format"] == "iceberg-partition-statistics"
    assert (report["layout"], report["row-count"], len(report["rows"])) == ("iceberg-1.10", 3, 2)
    assert report["partition-type"] == [{"field-id": 1000, "name": "part", "type": "int"}]
    assert report["rows"][0]["partition"] == {"part": 0} and report["problems"] == []
    human = CliRunner().invoke(cli, ["inspect", done["path"], "--limit", "1"]).stdout
    assert "Iceberg partition statistics" in human and "{part=0}" in human
    assert "first 1 of 3 rows" in human


def _write(root: Path, name: str, data: pa.Table) -> Path:
    path = root / "metadata" / name
    pq.write_table(data, path)
    register(root, path)
    return path


def _rows_with(data: pa.Table, column: str, values: list[Any]) -> pa.Table:
    index = data.schema.get_field_index(column)
    field = data.schema.field(index)
    return data.set_column(index, field, pa.array(values, type=field.type))


def test_each_way_a_file_is_wrong_is_named(table: Path) -> None:
    data, _done = computed(table)
    rows = data.to_pylist()

    _write(table, "reversed.parquet", pa.Table.from_pylist(rows[::-1], schema=data.schema))
    assert [f["code"] for f in findings(table)] == ["table.partition-stats.order"]

    _write(table, "twice.parquet", pa.Table.from_pylist([rows[0], *rows], schema=data.schema))
    (found,) = findings(table)
    assert (found["code"], found["detail"]["actual"], found["detail"]["partition"]) == (
        "table.partition-stats.duplicate", 2, {"part": 0})

    _write(table, "short.parquet", pa.Table.from_pylist(rows[:2], schema=data.schema))
    (found,) = findings(table)
    assert (found["code"], found["detail"]["partition"]) == (
        "table.partition-stats.missing-row", {"part": 2})

    extra = dict(rows[0], partition={"part": 9})
    _write(table, "extra.parquet", pa.Table.from_pylist([*rows, extra], schema=data.schema))
    (found,) = findings(table)
    assert found["code"] == "table.partition-stats.extra-row"
    assert "partition {part=9} of spec 0" in found["message"]

    sizes = [r["total_data_file_size_in_bytes"] for r in rows]
    _write(table, "sizes.parquet", _rows_with(data, "total_data_file_size_in_bytes",
                                               [sizes[0], sizes[1] + 1, sizes[2]]))
    (found,) = findings(table)
    assert (found["code"], found["detail"]["column"], found["detail"]["expected"],
            found["detail"]["actual"], found["files"][0]["content"]) == (
        "table.partition-stats.count", "total_data_file_size_in_bytes", sizes[1], sizes[1] + 1,
        "partition-statistics")
    assert found["snapshot-id"] == 1002

    # part 1 has no deletes: its total is its data records; part 2's equality deletes make
    # it unknowable; part 0's DV: not checked from manifests
    _write(table, "totals.parquet", _rows_with(data, "total_record_count", [5, 21, 30]))
    totals = {(f["detail"]["partition"]["part"], f["detail"]["expected"])
              for f in findings(table)}
    assert totals == {(1, 20), (2, None)}
    assert all(f["code"] == "table.partition-stats.total-records" for f in findings(table))

    wide = data.schema.field("data_file_count").with_type(pa.int64())
    index = data.schema.get_field_index("data_file_count")
    _write(table, "wide.parquet", data.set_column(index, wide, data.column(index).cast(
        pa.int64())))
    (found,) = findings(table)
    assert (found["code"], found["detail"]["column"], found["detail"]["actual"]) == (
        "table.partition-stats.schema", "data_file_count", "long")

    garbage = table / "metadata" / "garbage.parquet"
    garbage.write_bytes(b"PAR1 not really")
    register(table, garbage)
    (found,) = findings(table)
    assert found["code"] == "table.partition-stats.unreadable"


def _shifted(field: pa.Field) -> pa.Field:
    fid = int(field.metadata[PARQUET_FIELD_ID_KEY]) + LEGACY_ID_SHIFT
    return field.with_metadata({PARQUET_FIELD_ID_KEY: str(fid).encode()})


def test_the_1_9_layout_is_named_and_read(table: Path) -> None:
    loaded = Table.load(table, fileio=FileIO())
    from puffin_cli.analysis.partition_stats.compute import compute_full
    from puffin_cli.analysis.partition_stats.model import unified_partition_type

    snapshot = loaded.current_snapshot()
    assert snapshot is not None
    # Iceberg 1.9.x counted a DV as a position delete file (no dv_count)
    rows = [dataclasses.replace(r, position_delete_file_count=r.dv_count, dv_count=0)
            for r in compute_full(loaded, snapshot)]
    ours = arrow_table(rows, unified_partition_type(loaded.metadata), 2)
    legacy = pa.schema([_shifted(f) for f in ours.schema])
    _write(table, "legacy.parquet", ours.cast(legacy))
    (found,) = findings(table)
    assert (found["code"], found["severity"]) == ("table.partition-stats.legacy-ids",
                                                  "warning")
    assert "Iceberg 1.9.x" in found["message"]
    code, done = run("stats", "compute", str(table), "--partition-stats", "--commit")
    assert (code, done["mode"]) == (0, "fresh")  # Iceberg returns the snapshot's own file
    code, shown = run("inspect", str(table / "metadata" / "legacy.parquet"))
    assert shown["files"][0]["layout"] == "iceberg-1.9.x"
    assert len(shown["files"][0]["rows"]) == 3


@pytest.mark.parametrize("counted", [False, True])
def test_the_1_9_layout_may_leave_dvs_out_of_position_delete_files(table: Path,
                                                                    counted: bool) -> None:
    """Without dv_count, a DV is a position delete file (Iceberg 1.9.x) or not counted at all
    (1.10's deprecated 1.9.x-layout writer): both are Iceberg's; another count is wrong."""
    loaded = Table.load(table, fileio=FileIO())
    from puffin_cli.analysis.partition_stats.compute import compute_full
    from puffin_cli.analysis.partition_stats.model import unified_partition_type

    snapshot = loaded.current_snapshot()
    assert snapshot is not None
    computed = compute_full(loaded, snapshot)
    assert any(r.dv_count for r in computed)
    rows = [dataclasses.replace(r, position_delete_file_count=r.dv_count if counted else 0,
                                dv_count=0) for r in computed]
    ours = arrow_table(rows, unified_partition_type(loaded.metadata), 2)
    _write(table, "legacy.parquet", ours.cast(pa.schema([_shifted(f) for f in ours.schema])))
    assert [f["code"] for f in findings(table)] == ["table.partition-stats.legacy-ids"]
    wrong = [dataclasses.replace(r, position_delete_file_count=r.position_delete_file_count + 2)
             for r in rows]  # 2 or 3 where there is 1 DV and no other position delete file
    ours = arrow_table(wrong, unified_partition_type(loaded.metadata), 2)
    _write(table, "wrong.parquet", ours.cast(pa.schema([_shifted(f) for f in ours.schema])))
    codes = {f["code"] for f in findings(table)}
    assert codes == {"table.partition-stats.legacy-ids", "table.partition-stats.count"}


@pytest.mark.parametrize("extra", [["--dry-run"], ["--columns", "part"], ["--spark"],
                                   ["--in-process"], ["--in-process-rows", "5"]])
def test_partition_stats_refuses_the_sketch_options(table: Path, extra: list[str]) -> None:
    result = CliRunner().invoke(cli, ["stats", "compute", str(table), "--partition-stats",
                                      *extra])
    assert result.exit_code == 2 and "--partition-stats computes one TABLE" in result.stderr
    assert not list((table / "metadata").glob("partition-stats-*"))
