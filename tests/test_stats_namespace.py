"""``stats compute --catalog NAME NAMESPACE...`` / ``--all`` through real catalogs: a SQL catalog
on sqlite and the REST catalog server (tests/restcatalog.py), fixtures of test_catalog.py (the
S3-backed SQL catalog: test_catalog_s3.py). One broken table among good ones (exit 1, the good
ones committed through the catalog and registered for their current snapshot), the dry run
(no Spark, nothing written), a second run after an append (incremental for that table, fresh
for the others), a table whose deletes Iceberg cannot apply, and which tables a name stands
for (:func:`puffin_cli.analysis.catalog.table_names`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from test_catalog import (  # noqa: F401
    catalog,
    invoke,
    local_path,
    rest_catalog,
    spark,
    sql_catalog,
    tree_digest,
)
from test_stats_batch import run_no_spark

from puffin_cli.analysis import catalog as catalogs
from puffin_cli.errors import PuffinError

# One Spark task per data file, whatever the table's size (each file weighs the 4 MiB open
# cost, more than a split), so an appended file is a task of its own: incremental.
ONE_TASK_PER_FILE = {"read.split.target-size": "1024"}


def orders_rows(start: int, count: int) -> pa.Table:
    return pa.table({"order_id": pa.array(range(start, start + count), pa.int64()),
                     "shop": pa.array([f"s{i % 11}" for i in range(start, start + count)])})


def add_tables(where: Any, remove: Callable[[str], None] = lambda location:
               local_path(location).unlink()) -> None:
    """db.orders (two appends, one task per file) and db.broken (its current manifest list
    gone: ``remove(location)``) beside the fixture's db.events."""
    orders = where.create_table("db.orders", schema=orders_rows(0, 1).schema,
                                properties=ONE_TASK_PER_FILE)
    orders.append(orders_rows(0, 300))
    orders.append(orders_rows(300, 200))
    broken = where.create_table("db.broken", schema=orders_rows(0, 1).schema)
    broken.append(orders_rows(0, 100))
    remove(broken.current_snapshot().manifest_list)


def current_statistics(where: Any, identifier: str) -> list[str]:
    """The statistics files the catalog's current metadata registers for the current
    snapshot of ``identifier``."""
    metadata = where.load_table(identifier).metadata
    return [s.statistics_path for s in metadata.statistics
            if s.snapshot_id == metadata.current_snapshot_id]


def statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {t["table"]: t["status"] for t in doc["tables"]}


def committed_run(catalog_name: str, *names: str, expected: dict[str, str]) -> dict[str, Any]:
    """``stats compute --catalog CATALOG_NAME NAMES... --commit --json``, a run in which some
    table fails (exit 1) and every table has the ``expected`` status: its document."""
    outcome = invoke("stats", "compute", "--catalog", catalog_name, *names, "--commit",
                     "--master", "local[2]", "--json", "-q")
    assert outcome.exit_code == 1, outcome.output
    doc: dict[str, Any] = json.loads(outcome.stdout)
    assert statuses(doc) == expected
    return doc


def test_namespace_run_one_broken_then_dry_run_then_incremental(
        catalog: Any, spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    add_tables(catalog)
    monkeypatch.chdir(tmp_path)
    doc = committed_run("test", "db", expected={"db.broken": "failed", "db.events": "computed",
                                                "db.orders": "computed"})
    assert doc["summary"] == {**doc["summary"], "tables": 3, "computed": 2, "failed": 1,
                              "spark-started": True}
    broken = next(t for t in doc["tables"] if t["table"] == "db.broken")
    assert broken["result"] is None and "\n" not in broken["error"]["message"]
    assert "snap-" in broken["error"]["message"]  # names the missing manifest list
    results = {t["table"]: t["result"] for t in doc["tables"] if t["result"]}
    for identifier, result in results.items():
        assert result["mode"] == "full"
        assert current_statistics(catalog, identifier) == [result["statistics-location"]]
        # `puffin table` through the catalog: registered for the snapshot Spark reads
        shown = invoke("table", "--catalog", "test", identifier, "--json")
        assert shown.exit_code == 0, shown.output
        [table] = json.loads(shown.output)["tables"]
        [snapshot] = [s for s in table["snapshots"]
                      if s["snapshot-id"] == table["current-snapshot-id"]]
        assert [s["path"] for s in snapshot["statistics"]] == [result["statistics-location"]]
        assert table["findings"] == []
    assert {c["name"]: c["ndv"] for c in results["db.orders"]["columns"]} == \
        {"order_id": 500, "shop": 11}

    orders = catalog.load_table("db.orders")
    base = orders.metadata.current_snapshot_id
    orders.append(orders_rows(500, 100))
    # the plan of every table of the catalog: metadata only, no Spark, nothing written
    warehouse = local_path(catalog.load_table("db.events").location()).parents[1]
    before = tree_digest(warehouse)
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "--all",
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (1, "", False)
    plans = json.loads(out)
    assert statuses(plans) == {"db.broken": "failed", "db.events": "planned",
                               "db.orders": "planned"}
    by_table = {t["table"]: t["plan"] for t in plans["tables"] if t["plan"]}
    assert by_table["db.events"]["mode"] == "fresh"
    assert by_table["db.events"]["spark-uses"] == results["db.events"]["statistics-location"]
    planned = by_table["db.orders"]
    assert (planned["mode"], planned["spark-uses"]) == ("incremental", None)
    assert (planned["files-to-read"], planned["rows-to-read"], planned["data-files"]) == \
        (1, 100, 3)
    assert {c["base-snapshot-id"] for c in planned["columns"]} == {base}
    assert plans["summary"]["spark-started"] is False
    assert tree_digest(warehouse) == before
    # the nightly run again: incremental for the appended table, fresh for the other
    doc = committed_run("test", "--all", expected={"db.broken": "failed", "db.events": "fresh",
                                                   "db.orders": "computed"})
    again = {t["table"]: t["result"] for t in doc["tables"] if t["result"]}
    refreshed = again["db.orders"]
    assert (refreshed["mode"], refreshed["base-snapshot-id"], refreshed["files-read"],
            refreshed["rows-read"]) == ("incremental", base, 1, 100)
    assert {c["name"]: c["ndv"] for c in refreshed["columns"]} == {"order_id": 600, "shop": 11}
    assert current_statistics(catalog, "db.orders") == [refreshed["statistics-location"]]
    assert again["db.events"]["statistics-location"] == \
        results["db.events"]["statistics-location"]


def test_each_table_of_a_run_has_its_own_fileio(sql_catalog: Any) -> None:  # noqa: F811
    """A SQL catalog merges a table's properties into its FileIO: two tables of one run, each
    read with its own (what a run loads for each table, not the first one's)."""
    from puffin_cli.cli.stats import _targets

    sql_catalog.create_table("db.other", schema=orders_rows(0, 1).schema,
                             properties={"s3.region": "eu-other-1"})
    loaded = {t.label: t.load() for t in _targets("test", ("db",), [])}
    assert sorted(loaded) == ["db.events", "db.other"]
    assert loaded["db.other"].fileio.properties["s3.region"] == "eu-other-1"
    assert "s3.region" not in loaded["db.events"].fileio.properties


def test_table_names(catalog: Any) -> None:  # noqa: F811
    """A name that is a table is that table; any other a namespace (its tables and those
    below it); none, the whole catalog; each table once, sorted."""
    catalog.create_namespace("sales")
    catalog.create_table("sales.orders", schema=orders_rows(0, 1).schema)
    catalog.create_table("db.a", schema=orders_rows(0, 1).schema)
    assert catalogs.table_names("test", []) == ["db.a", "db.events", "sales.orders"]
    assert catalogs.table_names("test", ["db"]) == ["db.a", "db.events"]
    assert catalogs.table_names("test", ["sales.orders", "db", "db.events"]) == \
        ["db.a", "db.events", "sales.orders"]
    for missing in ("nowhere", "db.missing"):
        with pytest.raises(PuffinError, match=f"catalog test: no table or namespace {missing}$"):
            catalogs.table_names("test", [missing])


def test_a_table_whose_deletes_iceberg_cannot_apply_fails_alone(
        rest_catalog: Any, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """dup_dv (Iceberg Java built it: two live deletion vectors for one data file, which every
    Iceberg scan refuses), registered in the REST catalog beside db.events: that table fails
    with the one line naming `puffin table` and the finding; db.events is committed."""
    from interop.broken import built_tables, copy_broken

    table = copy_broken(built_tables(), "dup_dv", tmp_path / "broken")
    metadata = sorted((table.root / "metadata").glob("v*.metadata.json"),
                      key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    rest_catalog.register_table(("db", "dup_dv"), str(metadata))
    doc = committed_run("test", "db", expected={"db.dup_dv": "failed", "db.events": "computed"})
    [failed] = [t for t in doc["tables"] if t["table"] == "db.dup_dv"]
    assert failed["error"]["code"] == "stats.dv"
    message = failed["error"]["message"]
    assert "\n" not in message
    assert f"2 deletion vectors for data file {table.built['duplicated']}" in message
    assert "run `puffin table` to see the finding (table.dv.duplicate)" in message
    [events] = [t["result"] for t in doc["tables"] if t["table"] == "db.events"]
    assert current_statistics(rest_catalog, "db.events") == [events["statistics-location"]]
    assert current_statistics(rest_catalog, "db.dup_dv") == []
    # the human view: one line per table, then the summary
    outcome = invoke("stats", "compute", "--catalog", "test", "db", "--commit", "--master",
                     "local[2]")
    lines = outcome.output.splitlines()
    assert lines[0].startswith("db.dup_dv: failed: 2 deletion vectors for data file ")
    assert lines[1].startswith("db.events: snapshot ") and "fresh, left as it is" in lines[1]
    assert lines[-1].startswith("2 tables: 0 computed, 1 fresh, 1 failed;")


def swap_metadata(where: Any, identifier: str, document: str) -> Path:
    """Make ``document`` the current metadata of SQL catalog table ``identifier``, as another
    engine's commit would: a new metadata file, and the catalog's row swapped to it."""
    from pyiceberg.catalog.sql import IcebergTables
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    old = where.load_table(identifier).metadata_location
    new = local_path(old).with_name("00099-other-engine.metadata.json")
    new.write_text(document)
    namespace, name = identifier.rsplit(".", 1)
    with Session(where.engine) as session:
        session.execute(update(IcebergTables).where(
            IcebergTables.table_namespace == namespace, IcebergTables.table_name == name
        ).values(metadata_location=new.as_uri(), previous_metadata_location=old))
        session.commit()
    return new


def test_sql_catalog_tables_pyiceberg_cannot_parse(sql_catalog: Any,  # noqa: F811
                                                   tmp_path: Path) -> None:
    """A SQL catalog table whose current metadata pyiceberg refuses: one with a statistics blob
    type beyond the two pyiceberg models (the spec allows any) is planned like any other (read
    at the location the catalog stores), a corrupt one fails alone with its file and what is
    wrong, both named among good tables (not a failed listing); a commit to the first is
    refused before any work, saying that pyiceberg cannot take its metadata."""
    sql_catalog.create_table("db.orders", schema=orders_rows(0, 1).schema).append(
        orders_rows(0, 10))
    sql_catalog.create_table("db.broken", schema=orders_rows(0, 1).schema).append(
        orders_rows(0, 10))
    table = sql_catalog.load_table("db.orders")
    document = json.loads(local_path(table.metadata_location).read_text())
    snapshot = document["current-snapshot-id"]
    document["statistics"] = [{
        "snapshot-id": snapshot, "statistics-path": f"{table.location()}/metadata/x.stats",
        "file-size-in-bytes": 100, "file-footer-size-in-bytes": 40,
        "blob-metadata": [{"type": "other-engine-bloom-v1", "snapshot-id": snapshot,
                           "sequence-number": 1, "fields": [2]}]}]
    swap_metadata(sql_catalog, "db.orders", json.dumps(document))
    corrupt = swap_metadata(sql_catalog, "db.broken", '{"format-version": 2, "table-uuid": ')
    warehouse = local_path(table.location()).parents[1]
    before = tree_digest(warehouse)
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.orders", "db.broken", "db.events",
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (1, "", False)
    doc = json.loads(out)
    assert statuses(doc) == {"db.broken": "failed", "db.events": "planned",
                             "db.orders": "planned"}
    [broken] = [t for t in doc["tables"] if t["table"] == "db.broken"]
    assert broken["error"]["message"].startswith(f"{corrupt}: table metadata is not valid JSON")
    [orders] = [t for t in doc["tables"] if t["table"] == "db.orders"]
    assert (orders["plan"]["mode"], orders["plan"]["rows"]) == ("full", 10)
    assert refused_commit(tmp_path, warehouse, before) == (
        "puffin: error: catalog test: cannot commit to db.orders: pyiceberg writes "
        "this catalog's metadata and cannot read the table's: "
        "2.statistics.0.blob-metadata.0.type: Input should be "
        "'apache-datasketches-theta-v1' or 'deletion-vector-v1'\n")


def refused_commit(tmp_path: Path, warehouse: Path, before: dict[str, str]) -> str:
    """``stats compute --catalog test db.orders --commit``, refused before any work: exit 1,
    no Spark, nothing on stdout, no statistics file, ``warehouse`` as ``before``; its stderr."""
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.orders", "--commit", cwd=tmp_path)
    assert (code, out, imported) == (1, "", False)
    assert tree_digest(warehouse) == before
    assert list(tmp_path.glob("*.stats")) == []
    return err


def rest_call(where: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``body`` to ``path`` of REST catalog ``where`` as another engine would (the
    server, Iceberg Java, writes the metadata pyiceberg may not model); its answer."""
    from urllib.request import Request, urlopen

    request = Request(f"{where.uri}/v1/{path}", data=json.dumps(body).encode(),
                      headers={"Content-Type": "application/json"}, method="POST")
    with urlopen(request, timeout=60) as answer:
        found: dict[str, Any] = json.loads(answer.read())
    return found


def other_engines_statistics(table: Any, tmp_path: Path, sequence_number: int
                             ) -> dict[str, Any]:
    """Another engine's statistics file for ``table``'s current snapshot (one blob,
    ``other-engine-bloom-v1`` of field 2), written in its metadata folder: the table
    metadata's entry for it."""
    snapshot = table.metadata.current_snapshot_id
    (tmp_path / "bloom.bin").write_bytes(b"\x01bloom bits")
    blob = {"type": "other-engine-bloom-v1", "fields": [2], "snapshot-id": snapshot,
            "sequence-number": sequence_number}
    (tmp_path / "spec.json").write_text(json.dumps({"blobs": [
        {**blob, "payload": {"file": "bloom.bin"}}]}))
    theirs = local_path(table.location()) / "metadata" / "other-engine.stats"
    written = invoke("write", str(theirs), "--spec", str(tmp_path / "spec.json"))
    assert written.exit_code == 0, written.output
    inspected = json.loads(invoke("inspect", str(theirs), "--json").output)["files"][0]
    return {"snapshot-id": snapshot, "statistics-path": theirs.as_uri(),
            "file-size-in-bytes": inspected["file-size"],
            "file-footer-size-in-bytes": inspected["footer"]["footer-size"],
            "blob-metadata": [blob]}


def test_rest_catalog_tables_pyiceberg_cannot_parse(rest_catalog: Any,  # noqa: F811
                                                    tmp_path: Path) -> None:
    """REST catalog tables whose load-table answer pyiceberg refuses (it parses the metadata
    the answer embeds): one whose statistics file holds another engine's blob type (the spec
    allows any; committed through the REST API) and a format 3 table with a ``variant``
    column (created by the server, Iceberg Java) are read by puffin-cli's reader at the
    answer's metadata-location: `table --catalog` checks them, a dry run plans the first by
    name and both among good tables (before: 'cannot load table' / 'cannot list tables');
    a commit to the first is refused before any work in one line."""
    rest_catalog.create_table("db.orders", schema=orders_rows(0, 1).schema).append(
        orders_rows(0, 10))
    table = rest_catalog.load_table("db.orders")
    statistics = other_engines_statistics(table, tmp_path, 1)
    rest_call(rest_catalog, "namespaces/db/tables/orders", {"requirements": [], "updates": [
        {"action": "set-statistics", "statistics": statistics}]})
    fields = [{"id": 1, "name": "id", "type": "long", "required": False},
              {"id": 2, "name": "payload", "type": "variant", "required": False}]
    rest_call(rest_catalog, "namespaces/db/tables", {
        "name": "shapes", "properties": {"format-version": "3"},
        "schema": {"type": "struct", "schema-id": 0, "fields": fields}})
    for identifier in ("db.orders", "db.shapes"):
        with pytest.raises(Exception, match="validation error"):
            rest_catalog.load_table(identifier)
    # the FileIO properties the catalog vends in the answer's config come along
    assert catalogs.load_table("test", "db.orders").io_properties["s3.region"] == "eu-vended-1"
    warehouse = local_path(table.location()).parents[1]
    before = tree_digest(warehouse)
    checked = invoke("table", "--catalog", "test", "db.orders", "--json")
    assert checked.exit_code == 0, checked.output
    [doc] = json.loads(checked.stdout)["tables"]
    assert (doc["format-version"], doc["findings"]) == (2, [])
    [shown] = doc["snapshots"][0]["statistics"]
    assert (shown["path"], [b["type"] for b in shown["blobs"]]) == \
        (statistics["statistics-path"], ["other-engine-bloom-v1"])
    checked = invoke("table", "--catalog", "test", "db.shapes", "--json")
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout)["tables"][0]["format-version"] == 3
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.orders", "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    [orders] = json.loads(out)["tables"]
    assert (orders["status"], orders["plan"]["mode"], orders["plan"]["rows"]) == \
        ("planned", "full", 10)
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "db",
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    assert statuses(json.loads(out)) == {"db.events": "planned", "db.orders": "planned",
                                         "db.shapes": "empty"}
    assert refused_commit(tmp_path, warehouse, before) == (
        "puffin: error: catalog test: cannot commit to db.orders: pyiceberg sends this "
        "catalog's commits and cannot read the table's: "
        "metadata.2.statistics.0.blob-metadata.0.type: Input should be "
        "'apache-datasketches-theta-v1' or 'deletion-vector-v1'\n")


def test_another_engines_blob_of_a_recomputed_column_is_kept(
        sql_catalog: Any, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """The snapshot's statistics file holds another engine's blob (not a theta sketch) of
    `city`: computing `city` again replaces no such blob, so the new file keeps it as stored
    and says so (before, it was neither kept nor dropped: gone without a word)."""
    from puffin_cli.format.reader import PuffinReader

    table = sql_catalog.load_table("db.events")
    document = json.loads(local_path(table.metadata_location).read_text())
    document["statistics"] = [other_engines_statistics(table, tmp_path, 2)]
    swap_metadata(sql_catalog, "db.events", json.dumps(document))
    out = tmp_path / "out.stats"
    outcome = invoke("stats", "compute", "--catalog", "test", "db.events", "--columns", "city",
                     "--master", "local[2]", "-o", str(out), "--json", "-q")
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.stdout)
    assert [(o["name"], o["blob-type"], o["kept"]) for o in doc["other-columns"]] == \
        [("city", "other-engine-bloom-v1", True)]
    with PuffinReader(out) as reader:
        assert [(b.type, b.fields) for b in reader.metadata.blobs] == \
            [("apache-datasketches-theta-v1", (2,)), ("other-engine-bloom-v1", (2,))]
        assert reader.read_raw(reader.metadata.blobs[1]) == b"\x01bloom bits"


def test_output_that_exists_is_refused_before_any_work_a_directory_taken(
        sql_catalog: Any, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    """-o naming a file that exists: refused before Spark starts (exit 2), the file as it
    was (before: the whole Spark job, then 'use --force', an option stats compute does not
    have); -o naming a directory: the statistics file is written into it."""
    taken = tmp_path / "taken.stats"
    taken.write_bytes(b"mine")
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "-o", str(taken), cwd=tmp_path)
    assert (code, out, imported) == (2, "", False)
    assert f"invalid value for -o: {taken} exists; the statistics file is created, never " \
        "overwritten" in err
    assert taken.read_bytes() == b"mine"
    # a new file in a folder that is missing or is a file: refused before Spark too (before:
    # the whole Spark job, then 'cannot write: No such file or directory', exit 1)
    for folder in (tmp_path / "missing", taken):
        code, out, err, imported = run_no_spark(
            "stats", "compute", "--catalog", "test", "db.events", "-o",
            str(folder / "x.stats"), cwd=tmp_path)
        assert (code, out, imported) == (2, "", False)
        assert f"invalid value for -o: {folder} is not a directory; the statistics file is " \
            "created in an existing one" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.db", "taken.stats",
                                                          "warehouse"]
    into = tmp_path / "into"
    into.mkdir()
    outcome = invoke("stats", "compute", "--catalog", "test", "db.events", "--master",
                     "local[2]", "-o", str(into), "--json", "-q")
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.stdout)
    [written] = list(into.iterdir())
    assert doc["statistics-path"] == str(written) and doc["in-table"] is False
    assert written.name.startswith(f"{doc['snapshot-id']}-") and written.suffix == ".stats"


def test_a_table_without_a_snapshot_is_empty_in_a_run_and_an_error_alone(
        sql_catalog: Any, tmp_path: Path) -> None:  # noqa: F811
    """A table created and never written (no current snapshot) in a namespace: nothing to
    compute, so the run and its plan say so (status ``empty``, counted), exit 0 with nothing
    written and no Spark (before: a failed table, exit 1, every night); named alone, the
    user asked for that very table: an error, exit 1, as before."""
    sql_catalog.create_namespace("fresh")
    sql_catalog.create_table("fresh.new", schema=orders_rows(0, 1).schema)
    warehouse = local_path(sql_catalog.load_table("db.events").location()).parents[1]
    before = tree_digest(warehouse)
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "--all",
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    doc = json.loads(out)
    assert statuses(doc) == {"db.events": "planned", "fresh.new": "empty"}
    [empty] = [t for t in doc["tables"] if t["table"] == "fresh.new"]
    assert (empty["plan"], empty["result"], empty["error"]) == (None, None, None)
    assert doc["summary"] == {**doc["summary"], "tables": 2, "planned": 1, "empty": 1,
                              "failed": 0}
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "--all",
                                            "--dry-run", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    assert "fresh.new: no snapshot: nothing to compute" in out.splitlines()
    assert out.splitlines()[-1].startswith("plan for 2 tables: 1 full (")
    assert out.splitlines()[-1].endswith(", 1 empty; nothing computed, no Spark started")
    # the run itself: a namespace of empty tables starts no Spark, commits nothing
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "fresh",
                                            "--commit", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    doc = json.loads(out)
    assert statuses(doc) == {"fresh.new": "empty"}
    assert doc["summary"] == {**doc["summary"], "tables": 1, "empty": 1, "computed": 0,
                              "failed": 0, "spark-started": False}
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "fresh",
                                            cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    assert out.splitlines() == ["fresh.new: no snapshot: nothing to compute",
                                "1 table: 0 computed, 0 fresh, 1 empty, 0 failed; 0 rows read "
                                "in " + out.splitlines()[-1].split(" in ", 1)[1]]
    assert out.splitlines()[-1].endswith(" s (no Spark needed)")
    assert tree_digest(warehouse) == before
    assert list(tmp_path.glob("*.stats")) == []
    # named alone: that table was asked for, and it has nothing to compute statistics of
    for extra in ((), ("--dry-run",)):
        code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                                "fresh.new", *extra, cwd=tmp_path)
        assert (code, imported) == (1, False)
        assert "the table has no current snapshot" in out + err


def register_base_statistics(where: Any, identifier: str) -> None:
    """Statistics of the current snapshot of ``identifier`` written by ``puffin write
    --from-parquet --table`` (its live data files, no Spark) and registered through pyiceberg,
    as the base of an incremental refresh."""
    from pyiceberg.table.statistics import BlobMetadata, StatisticsFile

    table = where.load_table(identifier)
    files = [local_path(t.file.file_path) for t in table.scan().plan_files()]
    stats = local_path(table.location()) / "metadata" / "base.stats"
    written = invoke("write", str(stats), *[a for f in files for a in ("--from-parquet", str(f))],
                     "--table", str(local_path(table.metadata_location)))
    assert written.exit_code == 0, written.output
    [inspected] = json.loads(invoke("inspect", str(stats), "--json").output)["files"]
    blobs = [BlobMetadata(type=m["type"], snapshot_id=m["snapshot-id"],
                          sequence_number=m["sequence-number"], fields=m["fields"],
                          properties=m["properties"])
             for m in (b["metadata"] for b in inspected["blobs"])]
    with table.update_statistics() as update:
        update.set_statistics(StatisticsFile(
            snapshot_id=table.metadata.current_snapshot_id, statistics_path=stats.as_uri(),
            file_size_in_bytes=inspected["file-size"],
            file_footer_size_in_bytes=inspected["footer"]["footer-size"], blob_metadata=blobs))


def test_plan_reasons_count_in_the_singular(sql_catalog: Any, tmp_path: Path) -> None:  # noqa: F811
    """A base with statistics and one more append: one new file in a task of its own is
    incremental from "1 new task"; packed with the base's one file, "1 of the base's 1 Spark
    task reads other splits at the target (1 task)" (before: "1 tasks")."""
    for name, properties in (("db.apart", ONE_TASK_PER_FILE), ("db.packed", {})):
        table = sql_catalog.create_table(name, schema=orders_rows(0, 1).schema,
                                         properties=properties)
        table.append(orders_rows(0, 300))
        register_base_statistics(sql_catalog, name)
        sql_catalog.load_table(name).append(orders_rows(300, 100))
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "db.apart",
                                            "db.packed", "--dry-run", "--master", "local[1]",
                                            "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    plans = {t["table"]: t["plan"] for t in json.loads(out)["tables"]}
    assert plans["db.apart"]["mode"] == "incremental"
    assert plans["db.apart"]["mode-reason"].endswith(") and 1 new task")
    # packed: its exact columns are incremental though the groups differ (docs/spark.md, rule
    # 8), each full should its union turn out an estimate, for the reason the groups give
    packed = plans["db.packed"]
    assert packed["mode"] == "incremental"
    assert packed["mode-reason"].endswith(
        ") and 1 new task; exact sketches, the same for any Spark tasks while their union "
        "holds at most 4,096 hashes")
    assert {c["if-inexact"] for c in packed["columns"]} == {
        "new rows share a Spark task with older files, so Iceberg would sketch them "
        "differently (1 of the base's 1 Spark task reads other splits at the target (1 "
        "task)), and the base's sketch with the new rows' holds more than 4,096 hashes (an "
        "estimate); setting the table property read.split.open-file-cost=16777216 (this "
        "snapshot's split size) gives every file a Spark task of its own (run once with "
        "--full after setting it)"}


def test_a_catalog_table_whose_metadata_file_is_missing(sql_catalog: Any,  # noqa: F811
                                                         tmp_path: Path) -> None:
    """The SQL catalog names a current metadata file that was deleted: the error names the
    catalog, the table and the missing file (before: "...; expected an Iceberg table directory
    or a *.metadata.json file", about a path the user never gave), alone, in a namespace run,
    for `puffin table --catalog`, and among the tables `puffin scan --catalog` reports."""
    table = sql_catalog.create_table("db.items", schema=orders_rows(0, 1).schema)
    table.append(orders_rows(0, 10))
    location = sql_catalog.load_table("db.items").metadata_location
    local_path(location).unlink()
    message = f"catalog test: table db.items: its metadata file {location} is missing"
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "db.items",
                                            cwd=tmp_path)
    assert (code, out, err, imported) == (1, "", f"puffin: error: {message}\n", False)
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "db",
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (1, "", False)
    [items] = [t for t in json.loads(out)["tables"] if t["table"] == "db.items"]
    assert (items["status"], items["error"]["message"]) == ("failed", message)
    code, out, err, _imported = run_no_spark("table", "--catalog", "test", "db.items",
                                             cwd=tmp_path)
    assert (code, out, err) == (1, "", f"puffin: error: {message}\n")
    # a catalog's scan reports the table it cannot read and scans the others (issue 27 §5)
    code, out, err, _imported = run_no_spark("scan", "--catalog", "test", cwd=tmp_path)
    assert (code, err) == (1, "")
    assert f"  db.items: {message}" in out.splitlines()
