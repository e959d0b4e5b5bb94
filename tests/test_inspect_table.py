"""``puffin inspect --table``/``--metadata``: column names next to field IDs, from the schema of
each blob's snapshot. On Spark-built tables the names equal what Iceberg Java recorded (the
generator stores them beside each table); a hand-written table covers unknown IDs and the
metadata read once for every snapshot; a bad table path is one line on stderr and exit 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tables.corrupt import local
from tables.fixtures import TABLES, java_report, spark_tables, table_dir  # noqa: F401  (session fixture)
from test_cli_inspect import inspect_json, run

from puffin_cli.analysis.table import loading as table_loading
from puffin_cli.analysis.table import metadata as table_metadata
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import current_metadata_file
from puffin_cli.cli.main import main
from puffin_cli.format.spec import ROW_POSITION_FIELD_ID, THETA_BLOB_TYPE
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import FileIO

# --------------------------------------------------------------------------------------------
# Spark-built tables: the names Iceberg Java recorded


@pytest.mark.parametrize("name", TABLES)
def test_registered_statistics_files_show_iceberg_javas_column_names(
        spark_tables: Path, name: str) -> None:  # noqa: F811
    oracle = java_report(spark_tables, name)
    table = table_dir(spark_tables, name)
    assert oracle["statistics"]
    for entry in oracle["statistics"]:
        path = local(table, entry["path"], oracle["location"])
        (report,) = inspect_json("--no-decode", "--table", str(table), str(path))["files"]
        assert [b["metadata"]["fields"] for b in report["blobs"]] == \
            [b["fields"] for b in entry["blobs"]]
        assert [b["columns"] for b in report["blobs"]] == [b["columns"] for b in entry["blobs"]]


def test_a_renamed_column_keeps_its_name_at_the_blobs_snapshot(
        spark_tables: Path) -> None:  # noqa: F811
    oracle = java_report(spark_tables, "stats_v2")
    table = table_dir(spark_tables, "stats_v2")
    # Field 2 was renamed after the statistics were computed: the current schema says
    # customer_name, the statistics' snapshot (and Iceberg Java) say name.
    assert Table.load(table, fileio=FileIO()).field_names(None).name(2) == "customer_name"
    parent = next(s["parent-id"] for s in oracle["snapshots"]
                  if s["snapshot-id"] == oracle["current-snapshot-id"])
    entry = next(e for e in oracle["statistics"] if e["snapshot-id"] == parent)
    java = {f: c for b in entry["blobs"] for f, c in zip(b["fields"], b["columns"], strict=True)}
    assert java[2] == "name"
    path = local(table, entry["path"], oracle["location"])
    result = run("--table", str(table), str(path))
    assert result.exit_code == 0, result.output
    assert "  fields           2 (name)\n" in result.stdout
    assert "customer_name" not in result.stdout
    for field_id, column in java.items():
        assert f"  fields           {field_id} ({column})\n" in result.stdout


def test_deletion_vector_files_show_pos(spark_tables: Path) -> None:  # noqa: F811
    table = table_dir(spark_tables, "dv_v3")
    files = sorted((table / "data").glob("*.puffin"))
    assert len(files) >= 3
    document = inspect_json("--no-decode", "--table", str(table), *map(str, files))
    assert document["errors"] == []
    blobs = [b for f in document["files"] for b in f["blobs"]]
    assert len(blobs) >= len(files)
    for blob in blobs:
        assert blob["metadata"]["snapshot-id"] == -1
        assert blob["metadata"]["fields"] == [ROW_POSITION_FIELD_ID]
        assert blob["columns"] == ["_pos"]
    result = run("--table", str(table), str(files[0]))
    assert result.exit_code == 0, result.output
    assert f"  fields           {ROW_POSITION_FIELD_ID} (_pos)\n" in result.stdout


def test_metadata_option_names_the_metadata_json(spark_tables: Path) -> None:  # noqa: F811
    oracle = java_report(spark_tables, "dv_v3")
    table = table_dir(spark_tables, "dv_v3")
    (entry,) = [e for e in oracle["statistics"]
                if e["snapshot-id"] == oracle["current-snapshot-id"]]
    path = str(local(table, entry["path"], oracle["location"]))
    dv_file = str(sorted((table / "data").glob("*.puffin"))[0])
    metadata = str(current_metadata_file(table, fileio=FileIO()))
    by_metadata = inspect_json("--metadata", metadata, path, dv_file)
    assert by_metadata == inspect_json("--table", str(table), path, dv_file)
    stats, dvs = by_metadata["files"]
    assert [b["columns"] for b in stats["blobs"]] == [b["columns"] for b in entry["blobs"]]
    assert {c for b in dvs["blobs"] for c in b["columns"]} == {"_pos"}


# --------------------------------------------------------------------------------------------
# A hand-written table: per-snapshot schemas, unknown IDs, one metadata read per snapshot

_OLD, _NEW = 11, 22


def _schema(schema_id: int, second: str) -> dict[str, Any]:
    return {"type": "struct", "schema-id": schema_id, "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": second, "required": False, "type": "string"},
        {"id": 3, "name": "address", "required": False, "type": {
            "type": "struct", "fields": [
                {"id": 4, "name": "city", "required": False, "type": "string"}]}},
    ]}


def _table(root: Path) -> Path:
    """A v2 table whose column 2 was renamed from ``name`` (snapshot 11) to ``customer_id``
    (snapshot 22, current)."""
    (root / "metadata").mkdir(parents=True)
    metadata = {
        "format-version": 2, "table-uuid": "00000000-0000-0000-0000-000000000001",
        "location": str(root), "last-sequence-number": 2, "last-updated-ms": 0,
        "last-column-id": 4, "current-schema-id": 1,
        "schemas": [_schema(0, "name"), _schema(1, "customer_id")],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
        "current-snapshot-id": _NEW,
        "snapshots": [
            {"snapshot-id": _OLD, "sequence-number": 1, "timestamp-ms": 0, "schema-id": 0,
             "summary": {"operation": "append"}},
            {"snapshot-id": _NEW, "parent-snapshot-id": _OLD, "sequence-number": 2,
             "timestamp-ms": 0, "schema-id": 1, "summary": {"operation": "append"}},
        ],
    }
    (root / "metadata" / "v1.metadata.json").write_text(json.dumps(metadata))
    return root


def _stats_file(path: Path, blobs: list[tuple[list[int], int]]) -> Path:
    with PuffinWriter(path) as writer:
        for fields, snapshot_id in blobs:
            writer.add_blob(THETA_BLOB_TYPE, b"not a sketch", fields=fields,
                            snapshot_id=snapshot_id, sequence_number=1)
    return path


def test_each_blob_uses_its_snapshots_schema_and_unknown_ids_are_null(
        tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    stats = _stats_file(tmp_path / "s.puffin", [([2], _OLD), ([2, 4], _NEW), ([99, 1], _NEW),
                                                ([ROW_POSITION_FIELD_ID], -1)])
    (report,) = inspect_json("--no-decode", "--table", str(table), str(stats))["files"]
    assert [b["columns"] for b in report["blobs"]] == [
        ["name"], ["customer_id", "address.city"], [None, "id"], ["_pos"]]
    result = run("--no-decode", "--table", str(table), str(stats))
    assert result.exit_code == 0, result.output
    fields = [line for line in result.stdout.splitlines() if line.startswith("  fields")]
    assert fields == [
        "  fields           2 (name)",
        "  fields           2 (customer_id), 4 (address.city)",
        "  fields           99 (?), 1 (id)",
        f"  fields           {ROW_POSITION_FIELD_ID} (_pos)",
    ]


def test_without_a_table_columns_is_null_and_fields_are_bare(tmp_path: Path) -> None:
    stats = _stats_file(tmp_path / "s.puffin", [([2, 4], _NEW)])
    (report,) = inspect_json("--no-decode", str(stats))["files"]
    assert report["blobs"][0]["columns"] is None
    assert "  fields           2, 4\n" in run("--no-decode", str(stats)).stdout


def test_metadata_is_read_once_for_every_snapshot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path / "t")
    first = _stats_file(tmp_path / "a.puffin", [([1], _OLD), ([2], _OLD), ([2], _NEW)])
    second = _stats_file(tmp_path / "b.puffin", [([1], _NEW), ([ROW_POSITION_FIELD_ID], -1),
                                                 ([ROW_POSITION_FIELD_ID], -1)])
    reads: list[str] = []
    load = table_metadata.load_metadata

    def counting(path: str, fileio: FileIO | None = None,
                 **options: int) -> table_metadata.TableMetadata:
        reads.append(path)
        return load(path, fileio, **options)

    monkeypatch.setattr(table_loading, "load_metadata", counting)
    document = inspect_json("--no-decode", "--table", str(table), str(first), str(second))
    assert [b["columns"] for f in document["files"] for b in f["blobs"]] == [
        ["id"], ["name"], ["customer_id"], ["id"], ["_pos"], ["_pos"]]
    assert reads == [str(table / "metadata" / "v1.metadata.json")]  # snapshots 11, 22 and -1


def _main_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", *args])
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


def test_bad_table_path_is_one_error_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    stats = str(_stats_file(tmp_path / "s.puffin", [([1], _OLD)]))
    missing = tmp_path / "nope"
    assert _main_error(capsys, "--table", str(missing), stats) == (
        f"puffin: error: {missing}: no such file or directory; expected an Iceberg table "
        "directory or a *.metadata.json file\n")
    assert _main_error(capsys, "--table", str(missing / "v1.metadata.json"), stats) == (
        f"puffin: error: {missing / 'v1.metadata.json'}: no such file or directory; expected "
        "an Iceberg table directory or a *.metadata.json file\n")
    assert _main_error(capsys, "--table", str(tmp_path), stats) == (
        f"puffin: error: {tmp_path}: a directory without metadata/*.metadata.json; expected "
        "an Iceberg table directory or a *.metadata.json file\n")
    not_json = tmp_path / "v1.metadata.json"
    not_json.write_text("{")
    assert _main_error(capsys, "--table", str(not_json), "--json", stats) == (
        f"puffin: error: {not_json}: table metadata is not valid JSON: Expecting property "
        "name enclosed in double quotes at line 1 column 2\n")


def test_current_snapshot_renamed_later_shows_the_name_at_that_snapshot(
        tmp_path: Path) -> None:
    # Renaming a column changes the current schema without a new snapshot: statistics of the
    # current snapshot describe the column under the name the snapshot was written with.
    table = _table(tmp_path / "t")
    path = table / "metadata" / "v1.metadata.json"
    metadata = json.loads(path.read_text())
    metadata["schemas"].append(_schema(2, "buyer"))
    metadata["current-schema-id"] = 2
    path.write_text(json.dumps(metadata))
    stats = _stats_file(tmp_path / "s.puffin", [([2], _NEW)])
    (report,) = inspect_json("--no-decode", "--table", str(table), str(stats))["files"]
    assert report["blobs"][0]["columns"] == ["customer_id"]
    assert Table.load(table, fileio=FileIO()).field_names(None).name(2) == "buyer"
