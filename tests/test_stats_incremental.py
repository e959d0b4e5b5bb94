"""Incremental ``stats compute`` (:mod:`puffin_cli.analysis.stats.incremental`) against Iceberg
1.10.2: tables built by Spark 3.5 (tests/interop/spark_scripts/incremental_tables.py, cached by
the script's hash) with Iceberg's statistics of a base snapshot and, as the oracle, Iceberg's
``compute_table_stats`` of the target snapshot. Whatever the mode (incremental from the base,
or full where the rules say so), every column's sketch bytes and ``ndv`` are Iceberg's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from interop.sparkenv import script_output
from stats_compute import SKETCHERS, compute_stats
from tiers import needs

from puffin_cli.analysis.stats.incremental import decide_refresh
from puffin_cli.analysis.table.loading import Table
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO

SCRIPT = (Path(__file__).resolve().parent / "interop" / "spark_scripts"
          / "incremental_tables.py")
PARALLELISM = 200  # local[2], Spark's 200 shuffle partitions: what the script's session had


@pytest.fixture(scope="session")
@needs("spark")
def incremental_tables() -> Path:
    """OUT_DIR with warehouse/db/<table> and tables.json (base, target, oracle)."""
    return script_output(SCRIPT, "incremental-tables", "build")


def copy(out: Path, name: str, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    table = tmp_path / name
    shutil.copytree(out / "warehouse" / "db" / name, table)
    doc: dict[str, Any] = json.loads((out / "tables.json").read_text())[name]
    return table, doc


def read_blobs(path: Path | str) -> dict[int, tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return {blob.fields[0]: (blob, reader.read_blob(blob)) for blob in reader.metadata.blobs}


def assert_oracle(table: Path, doc: dict[str, Any], written: str) -> None:
    oracle = read_blobs(table / "metadata" / doc["oracle"])
    ours = read_blobs(written)
    assert sorted(ours) == sorted(oracle)
    for fid, (blob, data) in ours.items():
        assert blob.properties == oracle[fid][0].properties, fid
        assert data == oracle[fid][1], fid


def modes(table: Path) -> dict[str, tuple[str, int | None]]:
    decision = decide_refresh(Table.load(table, fileio=FileIO()), None, None,
                              parallelism=PARALLELISM)
    return {c.name: (c.mode, c.base_snapshot_id) for c in decision.columns}


def test_appends_after_a_rename_refresh_incrementally_in_process(
        incremental_tables: Path, tmp_path: Path) -> None:
    """Two appends (and a renamed column: blobs name field IDs) on Iceberg's base: only the
    new files are read, in this process, and the bytes are Iceberg's full compute's."""
    table, doc = copy(incremental_tables, "inc_appends_v2", tmp_path)
    base = doc["base"]
    assert modes(table) == {"k": ("incremental", base), "h": ("incremental", base),
                            "m2": ("incremental", base), "p": ("incremental", base)}
    decision = decide_refresh(Table.load(table, fileio=FileIO()), None, None,
                              parallelism=PARALLELISM)
    assert (decision.mode, decision.new_data_files, decision.new_rows) == \
        ("incremental", 8, 16000)
    result = compute_stats(table, commit=True)
    assert (result.mode, result.base_snapshot_id, result.in_process) == \
        ("incremental", base, True)
    assert (result.files_read, result.rows_read, result.data_files) == (8, 16000, 16)
    assert sum(not c.exact for c in result.columns) == 3  # k, h, m2 in estimation mode
    assert_oracle(table, doc, result.statistics_path)
    # committed: the target is fresh now, and left as it is
    again = compute_stats(table)
    assert (again.mode, again.statistics_path, again.rows_read) == \
        ("fresh", result.statistics_path, 0)
    assert [c.ndv for c in again.columns] == [c.ndv for c in result.columns]


def test_a_base_written_by_puffin_cli(incremental_tables: Path, tmp_path: Path) -> None:
    """The base's statistics replaced by ours (a full compute of the base, committed): the
    refresh from them still gives Iceberg's bytes at the target."""
    table, doc = copy(incremental_tables, "inc_appends_v2", tmp_path)
    ours = compute_stats(table, snapshot_id=doc["base"], commit=True, full=True)
    assert ours.mode == "full"
    loaded = Table.load(table, fileio=FileIO())
    [entry] = [e for e in loaded.metadata.statistics if e.snapshot_id == doc["base"]]
    assert entry.path.endswith(Path(ours.statistics_path).name)
    result = compute_stats(table)
    assert (result.mode, result.base_snapshot_id) == ("incremental", doc["base"])
    assert_oracle(table, doc, result.statistics_path)


@pytest.mark.parametrize("sketcher", SKETCHERS)
@pytest.mark.parametrize("name", ["inc_compact_v2", "inc_delete_v2"])
def test_full_where_the_rules_say_so(incremental_tables: Path, tmp_path: Path,
                                     name: str, sketcher: str) -> None:
    """A compaction (replace) and a merge-on-read delete: every column full, still Iceberg's
    bytes, from either sketcher."""
    table, doc = copy(incremental_tables, name, tmp_path)
    decision = decide_refresh(Table.load(table, fileio=FileIO()), None, None,
                              parallelism=PARALLELISM)
    assert decision.mode == "full"
    assert {c.mode for c in decision.columns} == {"full"}
    reason = decision.columns[0].reason
    expected = {"inc_compact_v2": "is a replace", "inc_delete_v2": "since base"}[name]
    assert expected in reason, reason
    result = compute_stats(table, sketcher=sketcher)
    assert (result.mode, result.in_process, result.files_read) == \
        ("full", sketcher == "in-process", result.data_files)
    assert_oracle(table, doc, result.statistics_path)


@pytest.mark.parametrize("sketcher", SKETCHERS)
def test_exact_bases_are_incremental_while_their_unions_stay_exact(
        incremental_tables: Path, tmp_path: Path, sketcher: str) -> None:
    """inc_small_v2, whose new files share the base's one Spark task at the target (rule 8's
    groups differ), every base sketch exact: every column is decided incremental on the
    condition that its union with the new files' sketch stays exact. Sketched, k, h and m pass
    the nominal 4,096 hashes (estimation mode, where the groups decide the bytes) and are
    computed in full, for the groups' reason; p (4 values) stays incremental; the bytes of
    every column are Iceberg's compute_table_stats of the target, from either sketcher."""
    table, doc = copy(incremental_tables, "inc_small_v2", tmp_path)
    base = doc["base"]
    decision = decide_refresh(Table.load(table, fileio=FileIO()), None, None,
                              parallelism=PARALLELISM)
    assert {c.name: (c.mode, c.base_snapshot_id) for c in decision.columns} == {
        name: ("incremental", base) for name in ("k", "h", "m", "p")}
    shared = ("new rows share a Spark task with older files, so Iceberg would sketch them "
              "differently (1 of the base's 1 Spark task reads other splits at the target (1 "
              "task)), and the base's sketch with the new rows' holds more than 4,096 hashes "
              "(an estimate)")
    assert all((c.if_inexact or "").startswith(shared) for c in decision.columns)
    result = compute_stats(table, sketcher=sketcher)
    assert {c.name: (c.mode, c.exact) for c in result.columns} == {
        "k": ("full", False), "h": ("full", False), "m": ("full", False),
        "p": ("incremental", True)}
    assert {c.mode_reason for c in result.columns if c.mode == "full"} == {
        decision.columns[0].if_inexact}
    assert (result.mode, result.files_read, result.data_files) == ("full", 4, 4)
    assert_oracle(table, doc, result.statistics_path)


def test_a_promoted_column_is_full_the_others_incremental(incremental_tables: Path,
                                                          tmp_path: Path) -> None:
    table, doc = copy(incremental_tables, "inc_promote_v2", tmp_path)
    base = doc["base"]
    decided = modes(table)
    assert decided == {"k": ("incremental", base), "h": ("incremental", base),
                       "m": ("incremental", base), "p": ("full", None)}
    decision = decide_refresh(Table.load(table, fileio=FileIO()), None, None,
                              parallelism=PARALLELISM)
    assert "type changed from int" in decision.columns[3].reason
    result = compute_stats(table)
    assert result.mode == "full"
    assert [c.mode for c in result.columns] == ["incremental"] * 3 + ["full"]
    # the whole snapshot is read once for p (3 appends of 8,000 rows); the new files' second
    # read for k, h and m adds no rows to what was read
    assert (result.rows_read, result.files_read, result.data_files) == (24000, 12, 12)
    assert_oracle(table, doc, result.statistics_path)


def test_a_partitioned_table(incremental_tables: Path, tmp_path: Path) -> None:
    table, doc = copy(incremental_tables, "inc_part_v2", tmp_path)
    assert set(modes(table).values()) == {("incremental", doc["base"])}
    result = compute_stats(table, in_process_rows=0)
    assert (result.mode, result.in_process) == ("incremental", False)  # on Spark
    assert_oracle(table, doc, result.statistics_path)


def test_a_missing_or_corrupt_base_file_means_full(incremental_tables: Path,
                                                   tmp_path: Path) -> None:
    table, doc = copy(incremental_tables, "inc_appends_v2", tmp_path)
    loaded = Table.load(table, fileio=FileIO())
    [entry] = [e for e in loaded.metadata.statistics if e.snapshot_id == doc["base"]]
    base_file = table / "metadata" / Path(entry.path).name
    data = base_file.read_bytes()
    base_file.write_bytes(data[:-9] + b"\0" * 9)  # footer length and magic broken
    decision = decide_refresh(Table.load(table, fileio=FileIO()), None, None,
                              parallelism=PARALLELISM)
    assert {c.mode for c in decision.columns} == {"full"}
    assert "fails its checks" in decision.columns[0].reason
    base_file.unlink()
    decision = decide_refresh(Table.load(table, fileio=FileIO()), None, None,
                              parallelism=PARALLELISM)
    assert {c.mode for c in decision.columns} == {"full"}
    assert "fails its checks" in decision.columns[0].reason
    result = compute_stats(table)
    assert result.mode == "full"
    assert_oracle(table, doc, result.statistics_path)


def test_full_flag_and_cli_json(incremental_tables: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from puffin_cli.cli.main import cli

    table, doc = copy(incremental_tables, "inc_appends_v2", tmp_path)
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--full", "--json",
                                       "-q", "--master", "local[2]",
                                       "-o", str(tmp_path / "full.stats")])
    assert outcome.exit_code == 0, outcome.output
    shown = json.loads(outcome.output)
    assert (shown["mode"], shown["base-snapshot-id"], shown["mode-reason"]) == \
        ("full", None, "--full")
    assert {c["mode"] for c in shown["columns"]} == {"full"}
    assert_oracle(table, doc, shown["statistics-path"])
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--master", "local[2]",
                                       "-o", str(tmp_path / "incremental.stats")])
    assert outcome.exit_code == 0, outcome.output
    assert f"incremental: read 8 data files, 16,000 live rows; base snapshot {doc['base']}" \
        in outcome.output
