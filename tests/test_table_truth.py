"""What ``puffin table`` says about real tables (pyiceberg in a SQL catalog) is true (issue 27
§5): an ancestor's statistics file an engine uses is checked, a broken table of a warehouse is
a finding of that table while the others are shown (in `scan --catalog` of a namespace too), a
Puffin file is not a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner
from test_catalog import local_path, sql_catalog  # noqa: F401  (fixture)

from puffin_cli.cli.main import cli
from puffin_cli.format.spec import NDV_PROPERTY, THETA_BLOB_TYPE
from puffin_cli.format.writer import PuffinWriter


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def register_statistics(table: Any, snapshot_id: int, values: list[int]) -> str:
    """A statistics file of one theta blob (field 1) for ``snapshot_id``, committed by
    pyiceberg; its location."""
    from pyiceberg.table.statistics import BlobMetadata, StatisticsFile

    from puffin_cli.blobs.theta import build_theta_blob
    from puffin_cli.format.reader import PuffinReader

    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    location = f"{table.location()}/metadata/{snapshot_id}-stats.puffin"
    path = local_path(location)
    data, ndv = build_theta_blob("long", values)
    with PuffinWriter(path, properties={"created-by": "puffin-cli tests"}) as writer:
        writer.add_blob(THETA_BLOB_TYPE, data, fields=[1], snapshot_id=snapshot_id,
                        sequence_number=snapshot.sequence_number,
                        properties={NDV_PROPERTY: str(ndv)})
    with PuffinReader(path) as reader:
        footer_size = reader.footer.footer_size
    with table.update_statistics() as update:
        update.set_statistics(StatisticsFile(
            snapshot_id=snapshot_id, statistics_path=location,
            file_size_in_bytes=path.stat().st_size, file_footer_size_in_bytes=footer_size,
            blob_metadata=[BlobMetadata(type=THETA_BLOB_TYPE, snapshot_id=snapshot_id,
                                        sequence_number=snapshot.sequence_number, fields=[1],
                                        properties={NDV_PROPERTY: str(ndv)})]))
    return location


def error_of(*args: str) -> tuple[int | str | None, list[str]]:
    """The exit status and the stderr lines of the command as `puffin` runs it."""
    import contextlib
    import io

    from puffin_cli.cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exited:
        main(list(args))
    return exited.value.code, err.getvalue().splitlines()


def table_json(*args: str) -> tuple[int, dict[str, Any]]:
    outcome = invoke("table", "--json", *args)
    return outcome.exit_code, json.loads(outcome.stdout)


def test_an_ancestors_statistics_file_trino_uses_is_checked(
        sql_catalog: Any) -> None:  # noqa: F811
    table = sql_catalog.load_table("db.events")
    first, current = table.snapshots()
    assert current.parent_snapshot_id == first.snapshot_id
    location = register_statistics(table, first.snapshot_id, list(range(600)))
    code, doc = table_json("--catalog", "test", "db.events")
    (view,) = doc["tables"][0]["snapshots"]
    assert view["snapshot-id"] == current.snapshot_id
    assert view["statistics-used"] == {"spark": None, "trino": location,
                                       "trino-snapshot-id": first.snapshot_id}
    assert (code, doc["tables"][0]["findings"]) == (0, [])
    local_path(location).unlink()
    code, doc = table_json("--catalog", "test", "db.events")
    (found,) = doc["tables"][0]["findings"]
    assert (found["code"], found["path"], found["snapshot-id"]) == \
        ("table.stats.missing", location, first.snapshot_id)
    assert code == 1


def test_a_broken_table_of_a_warehouse_hides_none_of_the_others(
        sql_catalog: Any, tmp_path: Path) -> None:  # noqa: F811
    """`puffin table WAREHOUSE` with a 0-byte metadata file a failed create left and a table
    whose manifest list is gone: each is a `table.unreadable` finding of that table (the
    empty file named as such, not "not valid JSON"), the good table is reported in full, in
    the human view, `--json` and `--jsonl` alike; exit 1. One table alone still fails with one
    line on stderr."""
    warehouse = tmp_path / "warehouse"
    leftover = warehouse / "db.db" / "leftover" / "metadata"
    leftover.mkdir(parents=True)
    (leftover / "00000-0b1e2c3d-0000-0000-0000-000000000000.metadata.json").write_bytes(b"")
    gone = sql_catalog.create_table("db.gone", schema=pa.schema([("x", pa.int64())]))
    gone.append(pa.table({"x": pa.array([1, 2], pa.int64())}))
    manifest_list = local_path(gone.current_snapshot().manifest_list)
    manifest_list.unlink()
    code, doc = table_json(str(warehouse))
    assert code == 1
    tables = {Path(t["path"]).name: t for t in doc["tables"]}
    assert sorted(tables) == ["events", "gone", "leftover"]
    assert (tables["events"]["errors"], tables["events"]["findings"]) == (0, [])
    assert len(tables["events"]["snapshots"]) == 1
    empty, = tables["leftover"]["findings"]
    assert (empty["code"], tables["leftover"]["format-version"]) == ("table.unreadable", None)
    assert empty["message"].endswith("metadata.json: table metadata is an empty file (0 bytes)")
    missing, = tables["gone"]["findings"]
    assert missing["code"] == "table.unreadable" and manifest_list.name in missing["message"]
    assert tables["gone"]["format-version"] == 2

    streamed = invoke("table", "--jsonl", str(warehouse))
    assert streamed.exit_code == 1, streamed.output
    records = [json.loads(line) for line in streamed.stdout.splitlines()]
    ends = {Path(r["path"]).name: r["errors"] for r in records if r["record"] == "end"}
    assert ends == {"events": 0, "gone": 1, "leftover": 1}
    assert sum(r["record"] == "snapshot" for r in records) == 1
    assert [r["code"] for r in records if r["record"] == "finding"] == ["table.unreadable"] * 2

    shown = invoke("table", str(warehouse))
    assert shown.exit_code == 1
    assert "snapshot " in shown.stdout and "table metadata is an empty file" in shown.stdout
    assert "the table's metadata could not be read (see findings)" in shown.stdout

    assert error_of("table", str(leftover.parent)) == (1, [
        f"puffin: error: {next(leftover.iterdir())}: table metadata is an empty file "
        "(0 bytes)"])


def test_a_puffin_file_given_to_table_gets_the_command_that_reads_it(
        sql_catalog: Any) -> None:  # noqa: F811
    """`puffin table x.stats` said "table metadata is not UTF-8": it is a Puffin file, and
    the one line says which command reads it; a usage error (exit 2), as for any argument
    that is not what the command takes."""
    table = sql_catalog.load_table("db.events")
    location = register_statistics(table, table.current_snapshot().snapshot_id,
                                   list(range(10)))
    path = str(local_path(location))
    assert error_of("table", path) == (2, [
        f"puffin: error: {path}: this is a Puffin file, not table metadata: puffin inspect "
        f"{path} shows it (puffin validate {path} checks it)"])


def test_scan_catalog_of_a_namespace_with_a_broken_table_scans_the_others(
        sql_catalog: Any) -> None:  # noqa: F811
    """`scan --catalog test db` with a table whose manifest list is gone stopped at it with
    one error line, the other tables unscanned: now their Puffin files are scanned, the broken
    table is named with its error (`unreadable-tables`), exit 1."""
    events = sql_catalog.load_table("db.events")
    stats = register_statistics(events, events.current_snapshot().snapshot_id, [1, 2, 3])
    gone = sql_catalog.create_table("db.gone", schema=pa.schema([("x", pa.int64())]))
    gone.append(pa.table({"x": pa.array([1, 2], pa.int64())}))
    manifest_list = local_path(gone.current_snapshot().manifest_list)
    manifest_list.unlink()
    outcome = invoke("scan", "--catalog", "test", "db", "--json")
    assert outcome.exit_code == 1, outcome.output
    doc = json.loads(outcome.stdout)
    assert (doc["tables"], doc["files"], doc["files-failed"]) == (2, 1, 0)
    (broken,) = doc["unreadable-tables"]
    assert broken.startswith("db.gone: ") and manifest_list.name in broken
    shown = invoke("scan", "--catalog", "test", "db")
    assert shown.exit_code == 1
    assert f"1 table could not be read (its Puffin files not scanned):\n  {broken}\n" \
        in shown.stdout
    assert local_path(stats).is_file()
