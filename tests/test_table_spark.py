"""``puffin table`` on tables written by Spark + Iceberg Java: it lists exactly what Iceberg Java
reports (recorded by tests/tables/generate.py in the same session), and it finds every
inconsistency planted in a corrupt copy."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tables.corrupt import copy_table, edit_metadata, live_dvs, local, rewrite_manifests
from tables.fixtures import TABLES, java_report, spark_tables, table_dir  # noqa: F401  (session fixture)

from puffin_cli.analysis.table.walk import analyze_path
from puffin_cli.cli.main import cli
from puffin_cli.format.findings import Severity
from puffin_cli.storage import FileIO


def _run_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["table", "--json", *args])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("name", TABLES)
def test_lists_what_iceberg_java_reports(spark_tables: Path, name: str) -> None:  # noqa: F811
    oracle = java_report(spark_tables, name)
    code, doc = _run_json("--all-snapshots", "--limit", "1000000",
                          str(table_dir(spark_tables, name)))
    assert code == 0
    (table,) = doc["tables"]
    assert table["errors"] == 0
    assert table["format-version"] == oracle["format-version"]
    assert table["current-snapshot-id"] == oracle["current-snapshot-id"]
    assert [s["snapshot-id"] for s in table["snapshots"]] == \
        [s["snapshot-id"] for s in oracle["snapshots"]]
    ours_stats = [
        {"snapshot-id": f["snapshot-id"], "path": f["path"],
         "file-size-in-bytes": f["file-size"], "file-footer-size-in-bytes": f["footer-size"],
         "blobs": [{"type": b["type"], "snapshot-id": b["snapshot-id"],
                    "sequence-number": b["sequence-number"], "fields": b["fields"],
                    "columns": b["columns"], "properties": b["properties"]}
                   for b in f["blobs"]]}
        for s in table["snapshots"] for f in s["statistics"]]
    key = lambda f: (f["snapshot-id"], f["path"])  # noqa: E731
    assert sorted(ours_stats, key=key) == sorted(oracle["statistics"], key=key)
    for snapshot in table["snapshots"]:
        sid = str(snapshot["snapshot-id"])
        ours = sorted(({"data-file": dv["data-file"], "path": dv["path"],
                        "referenced-data-file": dv["data-file"], "offset": dv["offset"],
                        "length": dv["length"], "record-count": dv["record-count"]}
                       for dv in snapshot["deletion-vectors"]), key=lambda d: d["data-file"])
        planned = [{k: v for k, v in d.items() if k != "data-file-record-count"}
                   for d in oracle["planned-dvs"][sid]]
        assert ours == planned
        assert snapshot["deletion-vectors-omitted"] == 0
        assert snapshot["totals"]["deletion-vectors"] == len(planned)
        assert [{k: v for k, v in d.items() if k != "data-file"} for d in ours] == \
            oracle["delete-files"][sid]
        for dv in snapshot["deletion-vectors"]:
            assert dv["cardinality"] == dv["record-count"]
            assert dv["container"] == "puffin"
    registered = {os.path.realpath(f["path"]) for f in oracle["statistics"]}
    on_disk = {os.path.realpath(p) for p in
               (table_dir(spark_tables, name) / "metadata").glob("*.stats")}
    assert {os.path.realpath(p) for p in table["orphans"]} == on_disk - registered
    assert on_disk - registered  # every generated table re-ran statistics for one snapshot
    assert {f["code"] for f in table["findings"]} == {"table.orphan"}


@pytest.mark.parametrize("name", TABLES)
def test_jsonl_changes_replay_to_what_iceberg_java_plans(spark_tables: Path,  # noqa: F811
                                                         name: str) -> None:
    """Replaying the --jsonl deletion-vector changes snapshot by snapshot gives, for every
    snapshot, the DVs Iceberg Java's planning attaches."""
    oracle = java_report(spark_tables, name)
    done = CliRunner().invoke(cli, ["table", "--jsonl", "--all-snapshots",
                                    str(table_dir(spark_tables, name))])
    assert done.exit_code == 0
    live: set[tuple[str, str, int]] = set()
    replayed: dict[str, list[tuple[str, str, int]]] = {}
    records = [json.loads(line) for line in done.stdout.splitlines()]
    for record in records:
        if record["record"] == "deletion-vector":
            key = (record["data-file"], record["path"], record["offset"])
            if record["change"] == "added":
                live.add(key)
            else:
                live.remove(key)
            replayed[str(record["snapshot-id"])] = sorted(live)
        elif record["record"] == "snapshot":
            replayed[str(record["snapshot-id"])] = sorted(live)
    assert records[-1]["record"] == "end" and records[-1]["errors"] == 0
    for sid, planned in oracle["planned-dvs"].items():
        assert replayed[sid] == sorted((d["data-file"], d["path"], d["offset"])
                                       for d in planned)


def test_the_dv_table_has_shared_puffin_files_and_several_dv_snapshots(
        spark_tables: Path) -> None:  # noqa: F811
    oracle = java_report(spark_tables, "dv_v3")
    with_dvs = [dvs for dvs in oracle["planned-dvs"].values() if dvs]
    assert len(with_dvs) >= 3
    current = oracle["planned-dvs"][str(oracle["current-snapshot-id"])]
    paths = [d["path"] for d in current]
    assert max(paths.count(p) for p in paths) >= 2
    assert len({Path(d["data-file"]).parent.name for d in current}) >= 3  # partitions


def test_renamed_column_and_trino_fallback(spark_tables: Path) -> None:  # noqa: F811
    oracle = java_report(spark_tables, "stats_v2")
    code, doc = _run_json(str(table_dir(spark_tables, "stats_v2")))
    assert code == 0
    (current,) = doc["tables"][0]["snapshots"]
    assert current["statistics"] == []
    used = current["statistics-used"]
    parent = current["parent-id"]
    registered = {f["snapshot-id"]: f["path"] for f in oracle["statistics"]}
    assert used == {"spark": None, "trino": registered[parent], "trino-snapshot-id": parent}
    code, doc = _run_json("--snapshot", str(parent), str(table_dir(spark_tables, "stats_v2")))
    (view,) = doc["tables"][0]["snapshots"]
    columns = [c for b in view["statistics"][0]["blobs"] for c in b["columns"]]
    assert "name" in columns  # the snapshot's own schema, before the rename
    expected = next(f for f in oracle["statistics"] if f["snapshot-id"] == parent)
    assert columns == [c for b in expected["blobs"] for c in b["columns"]]


def test_current_snapshot_reads_only_its_own_manifests(spark_tables: Path) -> None:  # noqa: F811
    import fastavro

    table = table_dir(spark_tables, "dv_v3")
    meta = json.loads(sorted((table / "metadata").glob("v*.metadata.json"),
                             key=lambda p: int(p.name[1:].split(".")[0]))[-1].read_text())
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    with open(local(table, snap["manifest-list"], meta["location"]), "rb") as f:
        manifests = list(fastavro.reader(f))
    (report,) = analyze_path(table, fileio=FileIO()).tables
    assert report.manifests_read == 1 + len(manifests)
    (all_report,) = analyze_path(table, all_snapshots=True, fileio=FileIO()).tables
    assert all_report.manifests_read > report.manifests_read


# --- corrupt copies ---------------------------------------------------------------------------

Mutation = Callable[[Path], None]


def _stats(field: str, delta: int) -> Mutation:
    def mutate(table: Path) -> None:
        def edit(obj: dict[str, Any]) -> None:
            obj["statistics"][0][field] += delta
        edit_metadata(table, edit)
    return mutate


def _blob_meta(key: str, value: Any) -> Mutation:
    def mutate(table: Path) -> None:
        def edit(obj: dict[str, Any]) -> None:
            obj["statistics"][0]["blob-metadata"][0][key] = value
        edit_metadata(table, edit)
    return mutate


def _stats_snapshot(table: Path) -> None:
    def edit(obj: dict[str, Any]) -> None:
        obj["statistics"][0]["snapshot-id"] = 12345
    edit_metadata(table, edit)


def _delete_stats_file(table: Path) -> None:
    obj = edit_metadata(table, lambda o: None)
    local(table, obj["statistics"][0]["statistics-path"], obj["location"]).unlink()


def _dvs(edit: Callable[[list[dict[str, Any]]], None]) -> Mutation:
    def mutate(table: Path) -> None:
        def apply(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
            edit(records)
            return records
        assert rewrite_manifests(table, 1, apply) >= 1
    return mutate


def _swap_offsets(records: list[dict[str, Any]]) -> None:
    """Swap the offsets of two DVs stored in the same Puffin file (in a manifest that has two)."""
    by_file: dict[str, list[dict[str, Any]]] = {}
    for record in live_dvs(records):
        by_file.setdefault(record["data_file"]["file_path"], []).append(record["data_file"])
    pair = next((dvs for dvs in by_file.values() if len(dvs) >= 2), None)
    if pair is not None:
        first, second = pair[0], pair[1]
        first["content_offset"], second["content_offset"] = \
            second["content_offset"], first["content_offset"]


def _first_dv(key: str, change: Callable[[Any], Any]) -> Callable[[list[dict[str, Any]]], None]:
    def edit(records: list[dict[str, Any]]) -> None:
        data_file = live_dvs(records)[0]["data_file"]
        data_file[key] = change(data_file[key])
    return edit


def _duplicate(records: list[dict[str, Any]]) -> None:
    records.append(json.loads(json.dumps(live_dvs(records)[0])))


def _dv_sequence(records: list[dict[str, Any]]) -> None:
    live_dvs(records)[0]["sequence_number"] = 0


def _data(edit: Callable[[dict[str, Any]], None]) -> Mutation:
    """Edit, in the data manifests, the data file of the current snapshot's first DV."""
    def mutate(table: Path) -> None:
        seen: list[str] = []

        def find(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
            seen.extend(r["data_file"]["referenced_data_file"] for r in live_dvs(records))
            return records

        def apply(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
            for r in records:
                if r["data_file"]["file_path"] == seen[0] and r["status"] != 2:
                    edit(r)
            return records
        rewrite_manifests(table, 1, find)
        rewrite_manifests(table, 0, apply)
    return mutate


def _not_live(entry: dict[str, Any]) -> None:
    entry["status"] = 2


def _few_rows(entry: dict[str, Any]) -> None:
    entry["data_file"]["record_count"] = 10


def _delete_dv_file(table: Path) -> None:
    for path in (table / "data").glob("*.puffin"):
        path.unlink()


def _clobber_dv_magic(table: Path) -> None:
    for path in (table / "data").glob("*.puffin"):
        data = bytearray(path.read_bytes())
        data[8:12] = b"\x00\x00\x00\x00"  # the first blob's magic (it starts at byte 4)
        path.write_bytes(bytes(data))


CASES: list[tuple[str, str, Mutation, str]] = [
    ("stats-size", "stats_v2", _stats("file-size-in-bytes", 1), "table.stats.size"),
    ("stats-footer-size", "stats_v2", _stats("file-footer-size-in-bytes", -1),
     "table.stats.footer-size"),
    ("stats-blob-ndv", "stats_v2", _blob_meta("properties", {"ndv": "1"}),
     "table.stats.blob-metadata"),
    ("stats-blob-type", "stats_v1", _blob_meta("type", "other-v1"),
     "table.stats.blob-metadata"),
    ("stats-field", "stats_v2", _blob_meta("fields", [99]), "table.stats.field"),
    ("stats-snapshot", "stats_v2", _stats_snapshot, "table.stats.snapshot"),
    ("stats-missing", "dv_v3", _delete_stats_file, "table.stats.missing"),
    ("dv-offset-swapped", "dv_v3", _dvs(_swap_offsets), "table.dv.offset"),
    ("dv-length", "dv_v3", _dvs(_first_dv("content_size_in_bytes", lambda v: v - 1)),
     "table.dv.length"),
    ("dv-record-count", "dv_v3", _dvs(_first_dv("record_count", lambda v: v + 1)),
     "table.dv.record-count"),
    ("dv-referenced-null", "dv_v3", _dvs(_first_dv("referenced_data_file", lambda v: None)),
     "table.dv.referenced-file"),
    ("dv-referenced-other", "dv_v3",
     _dvs(_first_dv("referenced_data_file", lambda v: v + ".gone")),
     "table.dv.referenced-file"),
    ("dv-not-live", "dv_v3", _data(_not_live), "table.dv.not-live"),
    ("dv-duplicate", "dv_v3", _dvs(_duplicate), "table.dv.duplicate"),
    ("dv-sequence", "dv_v3", _dvs(_dv_sequence), "table.dv.sequence"),
    ("dv-partition", "dv_v3", _dvs(_first_dv("partition", lambda v: {"part": 77})),
     "table.dv.partition"),
    ("dv-position-range", "dv_v3", _data(_few_rows), "table.dv.position-range"),
    ("dv-missing", "dv_v3", _delete_dv_file, "table.dv.missing"),
    ("dv-container", "dv_v3", _clobber_dv_magic, "table.dv.container"),
]


@pytest.mark.parametrize(("case", "name", "mutate", "code"), CASES, ids=[c[0] for c in CASES])
def test_corrupt_copy_is_caught(spark_tables: Path, tmp_path: Path, case: str,  # noqa: F811
                                name: str, mutate: Mutation, code: str) -> None:
    table = copy_table(table_dir(spark_tables, name), tmp_path / name)
    mutate(table)
    code_exit, doc = _run_json("--all-snapshots", str(table))
    (report,) = doc["tables"]
    assert code_exit == 1
    found = {f["code"] for f in report["findings"] if f["severity"] != "info"}
    assert code in found, report["findings"]
    assert report["relocated"][0][1] == str(table.resolve())


def test_clean_copy_has_no_errors(spark_tables: Path, tmp_path: Path) -> None:  # noqa: F811
    table = copy_table(table_dir(spark_tables, "dv_v3"), tmp_path / "dv_v3")
    (report,) = analyze_path(table, all_snapshots=True, fileio=FileIO()).tables
    assert report.errors == 0
    assert all(f.severity is Severity.INFO for f in report.findings)
    assert report.relocated == ((str(table_dir(spark_tables, "dv_v3")), str(table.resolve())),)
