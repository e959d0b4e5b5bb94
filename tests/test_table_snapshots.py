"""``puffin table`` over many snapshots (synthetic tables, no Spark): shared manifests read once,
a DV listed by many snapshots checked once, totals per snapshot, ``--limit``, the evolution
chart and the ``--jsonl`` stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tables.synthetic import TableBuilder, data_entry, dv_entry, dv_table

from puffin_cli.analysis.table.walk import analyze_path
from puffin_cli.cli.main import cli
from puffin_cli.storage import FileIO


def _carried(tmp_path: Path, snapshots: int = 5, dvs: int = 3) -> Path:
    root = tmp_path / "t"
    dv_table(root, snapshots=snapshots, dvs_per_snapshot=dvs, carry=True).finish()
    return root


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["table", *args])


def test_manifests_shared_by_snapshots_are_read_once(tmp_path: Path) -> None:
    (report,) = analyze_path(_carried(tmp_path), all_snapshots=True, fileio=FileIO()).tables
    # 5 manifest lists and 10 manifests; read per snapshot it would be 5 + 2+4+6+8+10 = 35
    assert report.manifests_read == 15
    assert [v.totals.deletion_vectors for v in report.snapshots] == [3, 6, 9, 12, 15]
    assert [v.totals.deleted_rows for v in report.snapshots] == [9, 18, 27, 36, 45]
    assert [(v.totals.data_files, v.totals.data_rows) for v in report.snapshots] == [
        (3 * n, 300 * n) for n in range(1, 6)]
    assert [v.totals.dv_files for v in report.snapshots] == [1, 2, 3, 4, 5]


def test_every_snapshot_counts_what_it_lists_not_what_it_carried(tmp_path: Path) -> None:
    root = tmp_path / "t"
    dv_table(root, snapshots=4, dvs_per_snapshot=2, carry=False).finish()
    (report,) = analyze_path(root, all_snapshots=True, limit=None, fileio=FileIO()).tables
    assert [v.totals.deletion_vectors for v in report.snapshots] == [2, 2, 2, 2]
    assert [{dv.data_file.rsplit("/", 1)[1] for dv in v.deletion_vectors}
            for v in report.snapshots][1] == {"s2-f0.parquet", "s2-f1.parquet"}
    assert report.manifests_read == 12


def test_limit_lists_the_first_dvs_and_counts_the_rest(tmp_path: Path) -> None:
    root = _carried(tmp_path)
    (report,) = analyze_path(root, all_snapshots=True, limit=2, fileio=FileIO()).tables
    last = report.snapshots[-1]
    assert len(last.deletion_vectors) == 2
    assert last.deletion_vectors_omitted == 13
    assert [dv.data_file for dv in last.deletion_vectors] == sorted(
        dv.data_file or "" for dv in last.deletion_vectors)
    (whole,) = analyze_path(root, fileio=FileIO()).tables  # one snapshot: every DV by default
    assert len(whole.snapshots[0].deletion_vectors) == 15
    assert whole.snapshots[0].deletion_vectors_omitted == 0
    assert last.deletion_vectors == whole.snapshots[0].deletion_vectors[:2]


def test_all_snapshots_json_is_the_summary_unless_limit_asks(tmp_path: Path) -> None:
    root = _carried(tmp_path)
    summary = json.loads(_invoke("--json", "--all-snapshots", str(root)).stdout)
    snapshots = summary["tables"][0]["snapshots"]
    assert [s["deletion-vectors"] for s in snapshots] == [[]] * 5
    assert [s["deletion-vectors-omitted"] for s in snapshots] == [3, 6, 9, 12, 15]
    detailed = json.loads(_invoke("--json", "--all-snapshots", "--limit", "1",
                                  str(root)).stdout)
    assert [len(s["deletion-vectors"]) for s in detailed["tables"][0]["snapshots"]] == [1] * 5


def _bad_dv_table(tmp_path: Path) -> Path:
    """Three snapshots carrying one DV whose record_count (4) is not its bitmap's (3)."""
    table = TableBuilder(tmp_path / "bad")
    data = table.uri("data/a.parquet")
    data_manifest = table.manifest([data_entry(data, 0, 100)], 0)
    puffin, ((offset, length),) = table.puffin([(data, [0, 2, 4])])
    deletes = table.manifest([dv_entry(table.uri(puffin), data, 0, offset, length, 4)], 1)
    listed = [(data_manifest, 0, 1), (deletes, 1, 1)]
    for _ in range(3):
        table.snapshot(listed)
    table.finish()
    return table.root


def _warning_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One snapshot with a statistics file whose sketch's ndv property is off by one: a
    warning (theta.ndv-property), no error."""
    import puffin_cli.blobs.theta as theta

    build = theta.build_theta_blob
    monkeypatch.setattr(theta, "build_theta_blob",
                        lambda *a, **k: (build(*a, **k)[0], build(*a, **k)[1] + 1))
    table = TableBuilder(tmp_path / "warn")
    table.snapshot([(table.manifest([data_entry(table.uri("data/a.parquet"), 0, 100)], 0),
                     0, 1)])
    table.statistics_file(1001, {1: [1, 2, 3]})
    table.finish()
    return table.root


def test_ci_options_of_validate_work_on_table(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    bad, warned = _bad_dv_table(tmp_path), _warning_table(tmp_path, monkeypatch)
    quiet = _invoke("-q", str(bad))
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (1, "", "")
    assert _invoke("--quiet", str(warned)).exit_code == 0
    strict = _invoke("--strict", "-q", str(warned))
    assert (strict.exit_code, strict.stdout) == (1, "")
    assert _invoke("--strict", "--jsonl", str(warned)).exit_code == 1
    assert _invoke("--jsonl", str(warned)).exit_code == 0
    github = _invoke("--github", str(bad))
    assert github.exit_code == 1
    lines = github.stdout.splitlines()
    # on the file the finding is about (the DV's Puffin file), where it was read
    dv_file = next((bad / "data").glob("*-deletes.puffin"))
    assert lines[0].startswith(f"::error file={dv_file},title=table.dv.record-count::")
    assert lines[-1] == "1 table checked: 1 error, 0 warnings"
    warning = _invoke("--github", "--strict", str(warned))
    assert warning.exit_code == 1
    assert warning.stdout.splitlines()[0].startswith(
        f"::warning file={warned / 'metadata' / '1001-stats.puffin'},title=theta.ndv-property::")
    assert warning.stdout.splitlines()[-1] == "1 table checked: 0 errors, 1 warning"
    both = _invoke("--github", "--json", str(bad))
    assert both.exit_code == 2 and "--json and --github exclude each other" in both.stderr


def test_a_dv_carried_by_many_snapshots_is_checked_once(tmp_path: Path) -> None:
    (report,) = analyze_path(_bad_dv_table(tmp_path), all_snapshots=True, fileio=FileIO()).tables
    codes = [f.code for f in report.findings]
    assert codes == ["table.dv.record-count"]
    assert report.findings[0].message.startswith("snapshot 1001: ")
    assert [v.totals.deletion_vectors for v in report.snapshots] == [1, 1, 1]


def test_a_duplicate_dv_is_reported_once_when_it_appears(tmp_path: Path) -> None:
    table = TableBuilder(tmp_path / "dup")
    data = table.uri("data/a.parquet")
    data_manifest = table.manifest([data_entry(data, 0, 100)], 0)
    puffin, ((offset, length),) = table.puffin([(data, [1])])
    first = table.manifest([dv_entry(table.uri(puffin), data, 0, offset, length, 1)], 1)
    second = table.manifest([dv_entry(table.uri(puffin), data, 0, offset, length, 1)], 1)
    table.snapshot([(data_manifest, 0, 1), (first, 1, 1)])
    table.snapshot([(data_manifest, 0, 1), (first, 1, 1), (second, 1, 2)])
    table.snapshot([(data_manifest, 0, 1), (first, 1, 1), (second, 1, 2)])
    table.finish()
    (report,) = analyze_path(table.root, all_snapshots=True, fileio=FileIO()).tables
    duplicates = [f.message for f in report.findings if f.code == "table.dv.duplicate"]
    assert duplicates == [f"snapshot 1002: 2 deletion vectors for data file {data}; at most "
                          "one is allowed"]


def test_deleted_rows_of_two_dvs_for_one_data_file_are_the_size_of_their_union(
        tmp_path: Path) -> None:
    """Positions 0-9 and 5-14 of one data file delete 15 rows, not 20 (pyiceberg applies
    both DVs; Iceberg Java refuses to plan): in each snapshot's totals and in the chart."""
    table = TableBuilder(tmp_path / "dup")
    data = table.uri("data/a.parquet")
    data_manifest = table.manifest([data_entry(data, 0, 100)], 0)
    one, ((o1, l1),) = table.puffin([(data, list(range(10)))])
    two, ((o2, l2),) = table.puffin([(data, list(range(5, 15)))])
    first = table.manifest([dv_entry(table.uri(one), data, 0, o1, l1, 10)], 1)
    second = table.manifest([dv_entry(table.uri(two), data, 0, o2, l2, 10)], 1)
    table.snapshot([(data_manifest, 0, 1), (first, 1, 1)])
    table.snapshot([(data_manifest, 0, 1), (first, 1, 1), (second, 1, 2)])
    table.snapshot([(data_manifest, 0, 1), (second, 1, 2)])
    table.finish()
    (report,) = analyze_path(table.root, all_snapshots=True, fileio=FileIO()).tables
    assert [v.totals.deleted_rows for v in report.snapshots] == [10, 15, 10]
    assert [v.totals.deletion_vectors for v in report.snapshots] == [1, 2, 1]
    (current,) = analyze_path(table.root, snapshot_id=1002, fileio=FileIO()).tables
    assert current.snapshots[0].totals.deleted_rows == 15
    chart = _invoke("--all-snapshots", str(table.root)).output
    (line,) = [row for row in chart.splitlines() if row.lstrip().startswith("1002")]
    assert line.split()[3:6] == ["2", "15", "15.0%"], line


def test_evolution_chart_one_line_per_snapshot_with_bar_and_statistics_mark(
        tmp_path: Path) -> None:
    table = TableBuilder(tmp_path / "evo")
    listed: list[tuple[str, int, int]] = []
    for n in (1, 2, 4):  # deletes 1, 2 and 4 rows of 10 in three snapshots
        data = table.uri(f"data/f{n}.parquet")
        puffin, ((offset, length),) = table.puffin([(data, list(range(n)))])
        sequence = len(table.snapshots) + 1
        listed = [(table.manifest([data_entry(data, 0, 10)], 0), 0, sequence),
                  (table.manifest([dv_entry(table.uri(puffin), data, 0, offset, length, n)],
                                  1), 1, sequence)]
        table.snapshot(listed)
    table.statistics.append({"snapshot-id": 1002, "statistics-path": table.uri("metadata/s.stats"),
                             "file-size-in-bytes": 1, "file-footer-size-in-bytes": 1,
                             "blob-metadata": []})
    # a copy-on-write delete: files of 10 rows replaced by files of 7
    table.snapshots[-1]["summary"].update({"operation": "overwrite", "deleted-records": "10",
                                           "added-records": "7"})
    table.finish()
    done = CliRunner().invoke(cli, ["table", "--all-snapshots", str(table.root)],
                              env={"COLUMNS": "120"})
    lines = done.stdout.splitlines()
    start = lines.index("  deletes and statistics by snapshot, oldest first")
    head, rows = lines[start + 1], lines[start + 2:start + 5]
    assert head.split()[:7] == ["snapshot", "committed", "(UTC)", "seq", "operation", "DVs",
                                "deleted"]
    assert head.split()[-3:] == ["rows", "removed", "stats"]
    assert [r.split()[:5] for r in rows] == [
        ["1001", "2023-11-14", "22:13", "1", "append"],
        ["1002", "2023-11-14", "22:13", "2", "append"],
        ["1003*", "2023-11-14", "22:13", "3", "overwrite"]]
    assert [r.split()[5:7] for r in rows] == [["1", "1"], ["1", "2"], ["1", "4"]]
    bars = [r.count("█") for r in rows]
    assert bars[0] < bars[1] < bars[2] and rows[2].count("█") == len(rows[2].split()[7])
    assert [r.split()[-3:] for r in rows] == [["10.0%", "0", "·"], ["20.0%", "0", "●"],
                                              ["40.0%", "3", "○"]]
    assert "snapshot 1003" not in done.stdout  # no per-snapshot detail without --limit
    assert done.stderr == ""  # no progress display when stderr is not a terminal
    # wide: the bar stays short; narrow: no bar, then no commit time, nothing wrapped
    wide = CliRunner().invoke(cli, ["table", "--all-snapshots", str(table.root)],
                              env={"COLUMNS": "200"}).stdout.splitlines()
    assert max(r.count("█") + ("▏" in r) for r in wide) == 24
    assert max(len(r) for r in wide[start:start + 5]) < 120
    narrow = CliRunner().invoke(cli, ["table", "--all-snapshots", str(table.root)],
                                env={"COLUMNS": "80"}).stdout.splitlines()
    assert narrow[start + 1].split() == ["snapshot", "seq", "operation", "DVs", "deleted", "of",
                                         "rows", "removed", "stats"]
    assert narrow[start + 4].split() == ["1003*", "3", "overwrite", "1", "4", "40.0%", "3", "○"]
    assert max(len(r) for r in narrow) <= 80


def test_totals_name_the_live_data_files_and_rows(tmp_path: Path) -> None:
    root = tmp_path / "t"
    table = dv_table(root, snapshots=2, dvs_per_snapshot=2, carry=True)
    table.snapshots[-1]["summary"].update({"deleted-records": "250", "added-records": "50"})
    table.finish()
    done = CliRunner().invoke(cli, ["table", str(root)], env={"COLUMNS": "200"})
    assert ("  totals           4 live data file(s), 400 row(s); 0 statistics file(s), 0 blob(s); "
            "4 deletion vector(s) in 2 file(s), ") in done.stdout
    assert "bytes; 12 deleted row(s); 200 row(s) removed by replaced data files\n" in done.stdout


def _records(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines()]


def test_jsonl_streams_each_dv_once_with_its_changes(tmp_path: Path) -> None:
    root = tmp_path / "t"
    dv_table(root, snapshots=3, dvs_per_snapshot=2, carry=False).finish()
    records = _records(_invoke("--jsonl", "--all-snapshots", str(root)).stdout)
    kinds = [r["record"] for r in records]
    assert kinds == ["table", "snapshot", "deletion-vector", "deletion-vector",
                     *(["snapshot", *["deletion-vector"] * 4] * 2), "end"]
    assert records[0]["schema-version"] == 2 and records[0]["current-snapshot-id"] == 1003
    changes = [(r["snapshot-id"], r["change"], r["data-file"].rsplit("/", 1)[1])
               for r in records if r["record"] == "deletion-vector"]
    assert changes[:4] == [(1001, "added", "s1-f0.parquet"), (1001, "added", "s1-f1.parquet"),
                           (1002, "removed", "s1-f0.parquet"),
                           (1002, "removed", "s1-f1.parquet")]
    snapshot = records[1]
    assert "deletion-vectors" not in snapshot
    assert snapshot["totals"]["deletion-vectors"] == 2
    assert records[-1] == {"record": "end", "path": str(root), "orphans": [],
                           "manifests-read": 9, "errors": 0, "warnings": 0}


def test_jsonl_carried_table_lists_each_dv_once_and_findings_as_they_come(
        tmp_path: Path) -> None:
    records = _records(_invoke("--jsonl", "--all-snapshots", str(_carried(tmp_path))).stdout)
    dvs = [r for r in records if r["record"] == "deletion-vector"]
    assert len(dvs) == 15 and {r["change"] for r in dvs} == {"added"}
    bad = _records(_invoke("--jsonl", "--all-snapshots", str(_bad_dv_table(tmp_path))).stdout)
    kinds = [r["record"] for r in bad]
    assert kinds == ["table", "snapshot", "deletion-vector", "finding", "snapshot", "snapshot",
                     "end"]
    assert bad[3]["code"] == "table.dv.record-count"
    assert bad[-1]["errors"] == 1


def test_jsonl_and_json_exclude_each_other(tmp_path: Path) -> None:
    done = _invoke("--json", "--jsonl", str(_carried(tmp_path)))
    assert done.exit_code == 2
    assert "--json and --jsonl exclude each other" in done.output
