"""``puffin diff TABLE``: two snapshots of one table compared by their live files, deletion
vectors and each engine's statistics; its numbers at each end are those ``puffin table`` shows
for that snapshot (on synthetic tables, a pyiceberg table of a SQL catalog, and the Spark
tier's tables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tables.fixtures import TABLES, spark_tables, table_dir  # noqa: F401  (session fixture)
from tables.synthetic import TableBuilder, data_entry, dv_entry, dv_table
from test_catalog import local_path, sql_catalog  # noqa: F401  (fixture)

from puffin_cli.cli.main import cli, main
from puffin_cli.render.jsonout import SCHEMA_VERSIONS

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "stats.puffin"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["diff", *args])


def diff_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = run("--json", *args)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def table_snapshot(table: Path, snapshot_id: int) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["table", "--json", "--no-validate", "--snapshot",
                                      str(snapshot_id), str(table)])
    (view,) = json.loads(result.stdout)["tables"][0]["snapshots"]
    return dict(view)


def engine_ndvs(table: Path, view: dict[str, Any], engine: str) -> dict[int, int | None]:
    """The NDV per field ID of the statistics file ``table`` says ``engine`` uses for the
    snapshot ``view``: its single-field theta blobs, as ``table`` lists them for the
    snapshot the file belongs to."""
    path = view["statistics-used"][engine]
    if path is None:
        return {}
    owner = view["snapshot-id"] if engine == "spark" else \
        view["statistics-used"]["trino-snapshot-id"]
    files = table_snapshot(table, owner)["statistics"] if owner != view["snapshot-id"] \
        else view["statistics"]
    (found,) = [f for f in files if f["path"] == path][:1]
    return {b["fields"][0]: b["ndv"] for b in found["blobs"]
            if b["type"] == "apache-datasketches-theta-v1" and len(b["fields"]) == 1}


def assert_agrees_with_table(table: Path, doc: dict[str, Any]) -> None:
    """diff's numbers at each end are ``table --json``'s for that snapshot."""
    ends = {"from": doc["from-snapshot"], "to": doc["to-snapshot"]}
    for side, end in ends.items():
        if end["snapshot-id"] is None:
            assert (end["data-files"], end["data-rows"], end["deletion-vectors"]) == (0, 0, 0)
            continue
        view = table_snapshot(table, end["snapshot-id"])
        totals = view["totals"]
        registered = [p["path"] for p in view["partition-statistics"]]
        assert doc["partition-statistics"][f"path-{side}"] == (registered[0] if registered
                                                               else None)
        assert (end["data-files"], end["data-rows"], end["deletion-vectors"],
                end["deleted-rows"], end["other-delete-files"]) == \
            (totals["data-files"], totals["data-rows"], totals["deletion-vectors"],
             totals["deleted-rows"], totals["other-delete-files"])
        for stats in doc["statistics"]:
            engine = stats["engine"]
            assert stats[f"path-{side}"] == view["statistics-used"][engine]
            ndvs = {c["field-id"]: c[f"ndv-{side}"] for c in stats["columns"]
                    if c[f"ndv-{side}"] is not None}
            expected = {k: v for k, v in engine_ndvs(table, view, engine).items()
                        if v is not None}
            assert ndvs == expected
    files = doc["data-files"]
    a, b = ends["from"], ends["to"]
    assert b["data-files"] - a["data-files"] == files["added"] - files["removed"]
    assert b["data-rows"] - a["data-rows"] == files["rows-added"] - files["rows-removed"]
    deletes = doc["deletes"]
    assert b["deletion-vectors"] - a["deletion-vectors"] == \
        deletes["dvs-added"] - deletes["dvs-removed"]
    for stats in doc["statistics"]:
        for column in stats["columns"]:
            if column["ndv-from"] is not None and column["ndv-to"] is not None:
                assert column["change"] == column["ndv-to"] - column["ndv-from"]


def _edit(table: Path, **keys: Any) -> None:
    path = table / "metadata" / "v1.metadata.json"
    metadata = json.loads(path.read_text())
    metadata.update(keys)
    path.write_text(json.dumps(metadata))


@pytest.fixture
def stats_table(tmp_path: Path) -> Path:
    """Three snapshots each adding two data files with a DV each; statistics for the first
    (column id) and the third (id and part): the second has none of its own."""
    root = tmp_path / "t"
    table = dv_table(root, snapshots=3, dvs_per_snapshot=2, carry=True)
    first, _, third = (s["snapshot-id"] for s in table.snapshots)
    table.statistics_file(first, {1: list(range(50))})
    table.statistics_file(third, {1: list(range(100)), 4: [0, 1, 1, 2]})
    table.finish()
    return root


@pytest.fixture
def rewritten_table(tmp_path: Path) -> Path:
    """Snapshot 1001: data files a, b, c, d (100 rows each), DVs of a (3 positions), b (4) and
    c (2). Snapshot 1002: d compacted away; a's DV grown to 5 positions, b's replaced by one of
    4, c's removed, and a new data file e (50 rows) with a DV of 1 position."""
    root = tmp_path / "r"
    table = TableBuilder(root)
    a, b, c, d, e = (table.uri(f"data/part=0/{n}.parquet") for n in "abcde")
    data1 = table.manifest([data_entry(f, 0, 100) for f in (a, b, c, d)], 0)
    puffin1, r1 = table.puffin([(a, [0, 2, 4]), (b, [1, 3, 5, 7]), (c, [8, 9])])
    deletes1 = table.manifest([dv_entry(table.uri(puffin1), f, 0, off, length, n)
                               for f, (off, length), n in zip((a, b, c), r1, (3, 4, 2),
                                                               strict=True)], 1)
    table.snapshot([(data1, 0, 1), (deletes1, 1, 1)])
    data2 = table.manifest([data_entry(f, 0, 100, sequence_number=1) for f in (a, b, c)]
                           + [data_entry(e, 0, 50)], 0)
    puffin2, r2 = table.puffin([(a, [0, 2, 4, 6, 8]), (b, [1, 3, 5, 9]), (e, [0])])
    deletes2 = table.manifest([dv_entry(table.uri(puffin2), f, 0, off, length, n)
                               for f, (off, length), n in zip((a, b, e), r2, (5, 4, 1),
                                                               strict=True)], 1)
    table.snapshot([(data2, 0, 2), (deletes2, 1, 2)])
    table.finish()
    return root


def test_defaults_compare_the_current_snapshot_with_its_parent(stats_table: Path) -> None:
    code, doc = diff_json(str(stats_table))
    assert code == 1
    assert list(doc)[:2] == ["schema-version", "command"]
    assert (doc["schema-version"], doc["command"]) == (SCHEMA_VERSIONS["diff table"],
                                                       "diff table")
    assert doc["same"] is False
    assert (doc["from-snapshot"]["snapshot-id"], doc["to-snapshot"]["snapshot-id"]) == \
        (1002, 1003)
    assert (doc["from-snapshot"]["ref"], doc["to-snapshot"]["ref"]) == (None, None)
    assert doc["data-files"] == {"added": 2, "removed": 0, "rows-added": 200,
                                 "rows-removed": 0}
    assert (doc["from-snapshot"]["deleted-rows"], doc["to-snapshot"]["deleted-rows"]) == (12, 18)
    assert doc["deletes"]["dvs-added"] == 2
    assert [c["change"] for c in doc["deletes"]["changes"]] == ["added", "added"]
    # two manifest lists; 1003 lists 1002's four manifests and two of its own: each read once
    assert doc["manifests-read"] == 2 + 6
    spark, trino = doc["statistics"]
    assert (spark["engine"], spark["state-from"], spark["state-to"]) == \
        ("spark", "missing", "current")
    assert (trino["engine"], trino["state-from"], trino["state-to"]) == \
        ("trino", "stale", "current")
    assert trino["file-snapshot-from"] == 1001
    assert [(c["column"], c["ndv-from"], c["ndv-to"], c["change"]) for c in trino["columns"]] \
        == [("id", 50, 100, 50), ("part", None, 3, None)]
    assert [(c["column"], c["ndv-from"]) for c in spark["columns"]] == [("id", None),
                                                                        ("part", None)]
    assert_agrees_with_table(stats_table, doc)


def test_dvs_grown_replaced_removed_and_data_files_rewritten(rewritten_table: Path) -> None:
    code, doc = diff_json(str(rewritten_table))
    assert code == 1
    a, b, c, d, e = (f"{rewritten_table}/data/part=0/{n}.parquet" for n in "abcde")
    # a, b, c are carried into a new manifest with their sequence number: not changed
    assert doc["data-files"] == {"added": 1, "removed": 1, "rows-added": 50,
                                 "rows-removed": 100}
    changes = {ch["data-file"]: (ch["change"], ch["positions-from"], ch["positions-to"])
               for ch in doc["deletes"]["changes"]}
    assert changes == {a: ("grown", 3, 5), b: ("replaced", 4, 4), c: ("removed", 2, None),
                       e: ("added", None, 1)}
    deletes = doc["deletes"]
    assert (deletes["dvs-added"], deletes["dvs-grown"], deletes["dvs-replaced"],
            deletes["dvs-removed"], deletes["changes-omitted"]) == (1, 1, 1, 1, 0)
    assert (doc["from-snapshot"]["deleted-rows"], doc["to-snapshot"]["deleted-rows"]) == (9, 10)
    assert d not in changes
    assert_agrees_with_table(rewritten_table, doc)
    _, limited = diff_json("--limit", "1", str(rewritten_table))
    assert [ch["data-file"] for ch in limited["deletes"]["changes"]] == [a]
    assert limited["deletes"]["changes-omitted"] == 3


def test_the_same_snapshot_is_the_same(stats_table: Path) -> None:
    code, doc = diff_json("--from", "1002", "--to", "1002", str(stats_table))
    assert code == 0 and doc["same"] is True
    assert doc["deletes"]["changes"] == []
    assert run("--from", "1002", "--to", "1002", str(stats_table)).output.splitlines()[-1] \
        == "the same"


def test_first_snapshot_is_compared_with_the_empty_table(stats_table: Path) -> None:
    code, doc = diff_json("--to", "1001", str(stats_table))
    assert code == 1
    assert doc["from-snapshot"]["snapshot-id"] is None
    assert doc["to-snapshot"]["ref"] == "1001"
    assert doc["data-files"]["added"] == doc["to-snapshot"]["data-files"] == 2
    assert doc["deletes"]["dvs-added"] == 2
    assert [s["state-from"] for s in doc["statistics"]] == ["missing", "missing"]
    assert_agrees_with_table(stats_table, doc)
    assert "before the first snapshot" in run("--to", "1001", str(stats_table)).output


def test_refs_are_branches_tags_ids_and_times(stats_table: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # Snapshot 1002 was made current at 1_700_000_000_002 ms (2023-11-14T22:13:20.002Z).
    _edit(stats_table, refs={"main": {"snapshot-id": 1003, "type": "branch"},
                             "nightly": {"snapshot-id": 1001, "type": "tag"}},
          **{"snapshot-log": [{"timestamp-ms": 1_700_000_000_000 + i, "snapshot-id": 1000 + i}
                              for i in (1, 2, 3)]})
    metadata = str(stats_table / "metadata" / "v1.metadata.json")
    _, doc = diff_json("--from", "nightly", "--to", "main", metadata)
    assert (doc["from-snapshot"]["snapshot-id"], doc["to-snapshot"]["snapshot-id"]) == \
        (1001, 1003)
    assert (doc["from-snapshot"]["ref"], doc["to-snapshot"]["ref"]) == ("nightly", "main")
    assert_agrees_with_table(stats_table, doc)
    _, doc = diff_json("--from", "2023-11-14T22:13:20.002", str(stats_table))
    assert doc["from-snapshot"]["snapshot-id"] == 1002
    _, doc = diff_json("--from", "2023-11-14T23:13:20.0025+01:00", "--to", "1003",
                       str(stats_table))
    assert doc["from-snapshot"]["snapshot-id"] == 1002
    for ref, code, message in (
            ("nope", 2, "'nope' is no snapshot ID, branch or tag (refs: main, nightly) and no "
                        "ISO 8601 time"),
            ("2020-01-01", 2, "no snapshot was current at 2020-01-01T00:00:00+00:00"),
            ("77", 1, "no snapshot 77 (latest snapshots: 1001, 1002, 1003)")):
        with pytest.raises(SystemExit) as caught:
            main(["diff", "--from", ref, str(stats_table)])
        assert caught.value.code == code
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


def test_human_view_on_a_pipe_is_plain_lines(stats_table: Path) -> None:
    result = run(str(stats_table))
    assert result.exit_code == 1
    assert "\x1b[" not in result.output
    lines = result.output.splitlines()
    assert lines[0] == f"table {stats_table}"
    assert lines[1].startswith("from  1002  ") and lines[2].startswith("to    1003  ")
    assert "data files         4 -> 6 (+2): 2 added, 0 removed" in lines
    assert "deleted rows       12 -> 18 (+6)" in lines
    assert any(line.split() == ["id", "1", "50", "100", "+50"] for line in lines)
    assert lines[-1] == "different"


def test_a_table_is_told_from_two_puffin_files(stats_table: Path, tmp_path: Path) -> None:
    metadata = str(stats_table / "metadata" / "v1.metadata.json")
    cases = [
        ([str(SAMPLE)], "is a file, not a table"),
        ([str(stats_table), str(SAMPLE)], f"{stats_table} is a table, not a Puffin file"),
        ([str(SAMPLE), metadata], "is a table, not a Puffin file"),
        (["--from", "1", str(SAMPLE), str(SAMPLE)], "--from: for one TABLE, not two Puffin"),
        ([], "give one TABLE or two Puffin files A B (got 0)"),
        ([str(SAMPLE)] * 3, "(got 3)"),
    ]
    for args, message in cases:
        result = run(*args)
        assert result.exit_code == 2, args
        assert message in " ".join(result.output.split()), (args, result.output)
    assert run(str(SAMPLE), str(SAMPLE)).exit_code == 0  # still the file diff
    assert run(metadata).exit_code == 1


@pytest.mark.parametrize("name", TABLES)
def test_agrees_with_table_on_spark_tables(spark_tables: Path, name: str) -> None:  # noqa: F811
    """On the tables Spark and Iceberg Java wrote (v1 and v2 with statistics, v3 with DVs,
    compute_table_stats run twice for one snapshot, a column renamed, a snapshot without
    statistics of its own): every snapshot against its parent, and the first against the
    current one, give at each end what ``table`` gives for that snapshot."""
    table = table_dir(spark_tables, name)
    listed = CliRunner().invoke(cli, ["table", "--json", "--no-validate", "--all-snapshots",
                                      str(table)])
    snapshots = json.loads(listed.stdout)["tables"][0]["snapshots"]
    assert len(snapshots) >= 3
    pairs = [(None, str(s["snapshot-id"])) for s in snapshots]
    pairs.append((str(snapshots[0]["snapshot-id"]), None))
    ndv_changes = grown = 0
    for from_ref, to_ref in pairs:
        args = [*(["--from", from_ref] if from_ref else []),
                *(["--to", to_ref] if to_ref else []), str(table)]
        code, doc = diff_json(*args)
        assert code == (0 if doc["same"] else 1)
        assert_agrees_with_table(table, doc)
        ndv_changes += sum(c["change"] is not None and c["change"] != 0
                           for s in doc["statistics"] for c in s["columns"])
        grown += doc["deletes"]["dvs-grown"]
    if name == "dv_v3":  # the second DELETE grows the first one's DVs
        assert grown > 0
    else:  # statistics for the first and second snapshots, with other NDVs
        assert ndv_changes > 0


def test_catalog_table_by_branch_and_time(sql_catalog: Any) -> None:  # noqa: F811
    """A table pyiceberg wrote (appended twice) through a SQL catalog: the default ends, and
    the same ends named by the ``main`` branch and by the first snapshot's commit time."""
    from datetime import datetime, timezone

    loaded = sql_catalog.load_table("db.events")
    first, second = loaded.metadata.snapshots
    code, doc = diff_json("--catalog", "test", "db.events")
    assert code == 1
    assert (doc["from-snapshot"]["snapshot-id"], doc["to-snapshot"]["snapshot-id"]) == \
        (first.snapshot_id, second.snapshot_id)
    assert (doc["from-snapshot"]["data-rows"], doc["to-snapshot"]["data-rows"]) == (600, 1000)
    assert doc["data-files"]["rows-added"] == 400
    assert_agrees_with_table(local_path(loaded.location()), doc)
    when = datetime.fromtimestamp(first.timestamp_ms / 1000, timezone.utc).isoformat()
    _, named = diff_json("--catalog", "test", "--from", when, "--to", "main", "db.events")
    assert {k: v for k, v in named.items() if k not in ("from-snapshot", "to-snapshot")} == \
        {k: v for k, v in doc.items() if k not in ("from-snapshot", "to-snapshot")}
    assert (named["from-snapshot"]["ref"], named["to-snapshot"]["ref"]) == (when, "main")


def test_terminal_gets_fitted_colour_lines_and_a_pipe_whole_ones(stats_table: Path) -> None:
    import re

    from test_terminal import on_terminal, through_pipes

    code, out = on_terminal("diff", str(stats_table), columns=60)
    assert code == 1
    assert b"\x1b[" in out
    lines = re.sub(r"\x1b\[[0-9;]*m", "", out.decode()).splitlines()
    assert lines[-1] == "different"
    assert max(len(line) for line in lines) <= 60
    done = through_pipes("diff", str(stats_table))
    assert done.returncode == 1 and b"\x1b" not in done.stdout
    assert len(f"table {stats_table}") > 60  # folded on the terminal, whole on the pipe
    assert f"table {stats_table}" in done.stdout.decode().splitlines()


def _with_partition_statistics(root: Path, snapshot_ids: list[int]) -> None:
    """Register for each of ``snapshot_ids`` the partition statistics file Iceberg would
    compute for it (written as Iceberg 1.10 writes them, committed as Iceberg commits)."""
    from puffin_cli.analysis.partition_stats.compute import compute_full
    from puffin_cli.analysis.partition_stats.model import unified_partition_type
    from puffin_cli.analysis.partition_stats.parquet import write_rows
    from puffin_cli.analysis.table.commit import commit, table_requirements
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.analysis.table.updates import (
        PartitionStatisticsFileEntry,
        SetPartitionStatistics,
        TableChange,
    )
    from puffin_cli.storage import FileIO

    for snapshot_id in snapshot_ids:
        loaded = Table.load(root, fileio=FileIO())
        snapshot = loaded.snapshot(snapshot_id)
        assert snapshot is not None
        path = root / "metadata" / f"partition-stats-{snapshot_id}.parquet"
        size = write_rows(str(path), compute_full(loaded, snapshot),
                          unified_partition_type(loaded.metadata),
                          loaded.metadata.format_version, fileio=FileIO())
        entry = PartitionStatisticsFileEntry(snapshot_id, str(path), size)
        commit(loaded, lambda base, entry=entry: TableChange(
            table_requirements(base), (SetPartitionStatistics(entry),)))


@pytest.fixture
def partitioned_table(tmp_path: Path) -> Path:
    """1001: a file in part 0 and one in part 1; 1002 adds a file to part 1 and one in part 2;
    1003 appends to part 0. 1001 and 1002 have partition statistics files, 1003 none."""
    b = TableBuilder(tmp_path / "t")
    first = b.manifest([data_entry(b.uri("data/p0.parquet"), 0, 10),
                        data_entry(b.uri("data/p1.parquet"), 1, 20)], 0)
    b.snapshot([(first, 0, 1)])
    second = b.manifest([data_entry(b.uri("data/p1b.parquet"), 1, 5),
                         data_entry(b.uri("data/p2.parquet"), 2, 7)], 0)
    b.snapshot([(first, 0, 1), (second, 0, 2)])
    third = b.manifest([data_entry(b.uri("data/p0b.parquet"), 0, 3)], 0)
    b.snapshot([(first, 0, 1), (second, 0, 2), (third, 0, 3)])
    b.finish()
    _with_partition_statistics(b.root, [1001, 1002])
    return b.root


def test_partition_statistics_changes_per_partition(partitioned_table: Path) -> None:
    code, doc = diff_json("--from", "1001", "--to", "1002", str(partitioned_table))
    parts = doc["partition-statistics"]
    assert code == 1
    assert (Path(parts["path-from"]).name, Path(parts["path-to"]).name) == (
        "partition-stats-1001.parquet", "partition-stats-1002.parquet")
    assert (parts["partitions-changed"], parts["changes-omitted"], parts["problem"]) == (2, 0,
                                                                                           None)
    assert parts["changes"] == [
        {"spec-id": 0, "partition": {"part": 1}, "rows-from": 20, "rows-to": 25,
         "files-from": 1, "files-to": 2},
        {"spec-id": 0, "partition": {"part": 2}, "rows-from": None, "rows-to": 7,
         "files-from": None, "files-to": 1}]
    assert_agrees_with_table(partitioned_table, doc)  # the files `table` lists, its totals
    # --limit bounds the list; the others are counted
    _code, limited = diff_json("--limit", "1", "--from", "1001", "--to", "1002",
                               str(partitioned_table))
    assert [c["partition"] for c in limited["partition-statistics"]["changes"]] == [{"part": 1}]
    assert limited["partition-statistics"]["changes-omitted"] == 1
    human = run("--limit", "1", "--from", "1001", "--to", "1002", str(partitioned_table)).stdout
    assert "partition statistics" in human and "{part=1}" in human and "{part=2}" not in human
    assert "1 more partition (--limit shows more)" in human


def test_partition_statistics_at_one_end_only(partitioned_table: Path) -> None:
    _code, doc = diff_json(str(partitioned_table))  # 1002 -> 1003: none at 1003
    parts = doc["partition-statistics"]
    assert Path(parts["path-from"]).name == "partition-stats-1002.parquet"
    assert (parts["path-to"], parts["partitions-changed"], parts["changes"]) == (None, 0, [])
    human = run(str(partitioned_table)).stdout
    assert "partition statistics" in human and "to   none" in human
    # the same file at both ends: nothing changed
    _code, same = diff_json("--from", "1002", "--to", "1002", str(partitioned_table))
    assert (same["partition-statistics"]["partitions-changed"], same["same"]) == (0, True)


def test_an_unreadable_partition_statistics_file_is_named(partitioned_table: Path) -> None:
    (partitioned_table / "metadata" / "partition-stats-1001.parquet").write_bytes(b"not parquet")
    result = run("--from", "1001", "--to", "1002", str(partitioned_table))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "not a readable Parquet file" in result.stdout
    _code, doc = diff_json("--from", "1001", "--to", "1002", str(partitioned_table))
    problem = doc["partition-statistics"]["problem"]
    assert "partition-stats-1001.parquet" in problem and "Parquet" in problem
