"""``--catalog``: tables of a pyiceberg SQL catalog on sqlite and of a REST catalog server
(Iceberg Java's REST handlers, tests/restcatalog.py), written by pyiceberg itself or built by
Spark + Iceberg and registered, for `table`, `inspect --table`, `stats compute` (``--commit``
through the catalog, a concurrent commit retried), `scan --catalog` and errors."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pytest
from click.testing import CliRunner
from interop.sparkenv import script_output
from test_stats_spark import SCRIPT as STATS_SCRIPT
from test_stats_spark import iceberg_statistics, read_blobs
from tiers import needs

from puffin_cli.analysis import catalog as catalogs
from puffin_cli.analysis.table.commit import commit_statistics
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import current_metadata_file
from puffin_cli.analysis.table.updates import StatisticsFileEntry
from puffin_cli.cli.main import cli
from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO

ROWS = 1000


@pytest.fixture
@needs("catalog")
def sql_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Catalog ``test``: SQL on sqlite, warehouse on local disk, configured through
    pyiceberg's environment variables; table ``db.events`` appended twice by pyiceberg."""
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    return with_events(_configure(monkeypatch, tmp_path, type="sql",
                                   uri=f"sqlite:///{tmp_path}/catalog.db",
                                   warehouse=warehouse.as_uri()))


# What the REST catalog vends with every table (a FileIO property, as credentials are sent).
VENDED = ("s3.region", "eu-vended-1")


@pytest.fixture
@needs("catalog", "java")
def rest_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Catalog ``test``: a REST catalog server (Iceberg Java's REST handlers, tests/restcatalog.py)
    on loopback, configured through pyiceberg's environment variables; ``db.events`` as in
    :func:`sql_catalog`, appended by pyiceberg through the REST protocol."""
    from restcatalog import rest_catalog as serve

    with serve(tmp_path / "rest-warehouse", "=".join(VENDED)) as uri:
        yield with_events(_configure(monkeypatch, tmp_path, type="rest", uri=uri))


@pytest.fixture(params=[pytest.param("sql", marks=pytest.mark.catalog),
                        pytest.param("rest", marks=[pytest.mark.catalog, pytest.mark.java])])
def catalog(request: pytest.FixtureRequest) -> Any:
    """Catalog ``test`` of each kind the tests run: SQL on sqlite, or REST."""
    return request.getfixturevalue(f"{request.param}_catalog")


def _configure(monkeypatch: pytest.MonkeyPatch, home: Path, **properties: str) -> Any:
    """Catalog ``test`` configured as a user would (PYICEBERG_CATALOG__TEST__*, no user
    .pyiceberg.yaml), and the same catalog loaded here."""
    from pyiceberg.catalog import load_catalog

    monkeypatch.setenv("PYICEBERG_HOME", str(home))
    for key, value in properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__TEST__{key.upper()}", value)
    return load_catalog("test", **properties)


def with_events(catalog: Any) -> Any:
    catalog.create_namespace("db")
    rows = pa.table({"id": pa.array(range(ROWS), pa.int64()),
                     "city": pa.array([f"c{i % 37}" for i in range(ROWS)])})
    table = catalog.create_table("db.events", schema=rows.schema)
    table.append(rows.slice(0, 600))
    table.append(rows.slice(600))
    return catalog


def local_path(location: str) -> Path:
    """The file a local location names (a SQL catalog says file:///…, the REST one /…)."""
    return Path(unquote(urlparse(location).path))


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
@needs("spark")
def spark() -> Any:
    from puffin_cli.spark.session import get_session

    return get_session("local[2]")


def test_table_by_identifier(catalog: Any) -> None:
    """The catalog's current metadata, reported exactly as the table's directory is."""
    outcome = invoke("table", "--catalog", "test", "db.events", "--json")
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.output)
    [table] = doc["tables"]
    loaded = catalog.load_table("db.events")
    assert Path(table["metadata-file"]) == local_path(loaded.metadata_location)
    assert table["current-snapshot-id"] == loaded.metadata.current_snapshot_id
    assert [s["snapshot-id"] for s in table["snapshots"]] == [loaded.metadata.current_snapshot_id]
    by_directory = invoke("table", str(local_path(loaded.location())), "--json")
    assert by_directory.exit_code == 0, by_directory.output
    assert json.loads(by_directory.output) == doc


def test_configured_by_pyiceberg_yaml(sql_catalog: Any, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The same catalog, configured by .pyiceberg.yaml in PYICEBERG_HOME instead."""
    for key in ("TYPE", "URI", "WAREHOUSE"):
        monkeypatch.delenv(f"PYICEBERG_CATALOG__TEST__{key}")
    with pytest.raises(PuffinError, match="catalog 'test' is not configured"):
        catalogs.load_table("test", "db.events")
    (tmp_path / ".pyiceberg.yaml").write_text(
        "catalog:\n  test:\n    type: sql\n"
        f"    uri: sqlite:///{tmp_path}/catalog.db\n"
        f"    warehouse: {(tmp_path / 'warehouse').as_uri()}\n")
    found = catalogs.load_table("test", "db.events")
    assert found.metadata_location == sql_catalog.load_table("db.events").metadata_location
    assert found.identifier == "db.events"


@pytest.mark.parametrize(("args", "message", "code"), [
    (("--catalog", "nowhere", "db.events"), "catalog 'nowhere' is not configured; configure "
     "it as pyiceberg does: a .pyiceberg.yaml in $PYICEBERG_HOME, ~ or the working directory, "
     "or PYICEBERG_CATALOG__NOWHERE__URI and friends", 2),
    (("--catalog", "test", "db.missing"), "catalog test: no table db.missing", 1),
    (("--catalog", "test", "other.events"), "catalog test: no table other.events", 1),
    (("--catalog", "test", "events"), "'events': expected a table identifier NAMESPACE.TABLE",
     2),
])
def test_catalog_errors_are_one_line(catalog: Any, args: tuple[str, ...], message: str,
                                     code: int, capsys: pytest.CaptureFixture[str]) -> None:
    from puffin_cli.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["table", *args])
    assert exited.value.code == code  # a name that is no table identifier or catalog: usage
    assert capsys.readouterr().err == f"puffin: error: {message}\n"


def test_inspect_catalog_needs_table(catalog: Any) -> None:
    outcome = invoke("inspect", "--catalog", "test", "x.puffin")
    assert outcome.exit_code == 2
    assert "--catalog names the catalog of --table NAMESPACE.TABLE; give --table too" in \
        outcome.output


def test_stats_compute_commits_through_the_catalog(catalog: Any, spark: Any) -> None:
    before = catalog.load_table("db.events")
    outcome = invoke("stats", "compute", "--catalog", "test", "db.events", "--commit",
                     "--full", "--master", "local[2]", "--json")
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.output)
    assert doc["table"] == "db.events"
    assert {c["name"]: c["ndv"] for c in doc["columns"]} == {"id": ROWS, "city": 37}
    after = catalog.load_table("db.events")
    assert local_path(after.metadata_location) == local_path(doc["committed-metadata"])
    assert after.metadata_location != before.metadata_location
    assert doc["committed-version"] == int(Path(after.metadata_location).name.split("-")[0])
    [stats] = after.metadata.statistics
    assert stats.snapshot_id == before.metadata.current_snapshot_id
    assert stats.statistics_path == doc["statistics-location"]
    assert stats.file_size_in_bytes == doc["file-size"]
    blobs = read_blobs(doc["statistics-path"])
    assert [b.properties for b in stats.blob_metadata] == \
        [dict(blobs[f][0].properties) for f in (1, 2)]
    # the table command sees it through the catalog, with no finding, as in the directory
    shown = json.loads(invoke("table", "--catalog", "test", "db.events", "--json").output)
    assert json.loads(invoke("table", str(local_path(after.location())), "--json").output) \
        == shown
    [view] = shown["tables"][0]["snapshots"]
    assert [s["path"] for s in view["statistics"]] == [stats.statistics_path]
    assert shown["tables"][0]["findings"] == []
    # and inspect --table names the columns from the catalog's table
    inspected = invoke("inspect", "--catalog", "test", "--table", "db.events", "--json",
                       doc["statistics-path"])
    assert inspected.exit_code == 0, inspected.output
    names = [b["columns"] for b in json.loads(inspected.output)["files"][0]["blobs"]]
    assert names == [["id"], ["city"]]


def test_concurrent_commit_keeps_both_changes(catalog: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer commits between our load of the table and our commit. A SQL catalog
    swaps the metadata location only from the one our commit read, so it refuses ours and we
    apply it again to the new version; a REST server applies our update (which requires
    nothing of the table) to its current metadata. Either way both changes are kept."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.catalog.sql import SqlCatalog

    table = catalog.load_table("db.events")
    snapshot = table.metadata.current_snapshot_id
    entry = StatisticsFileEntry.for_blobs(
        snapshot, f"{table.location()}/metadata/{snapshot}-x.stats", 100, 40,
        [{"type": "apache-datasketches-theta-v1", "snapshot-id": snapshot,
          "sequence-number": 2, "fields": [1], "properties": {"ndv": "1000"}}])
    raced: list[str] = []

    def race() -> None:
        if not raced:
            raced.append("yes")
            other = catalog.load_table("db.events")
            with other.transaction() as change:
                change.set_properties({"written-by": "another writer"})

    if isinstance(catalog, SqlCatalog):  # just before the metadata location is swapped
        write_metadata = SqlCatalog._write_metadata

        def racing_write(*args: Any, **kwargs: Any) -> None:
            race()
            write_metadata(*args, **kwargs)

        monkeypatch.setattr(SqlCatalog, "_write_metadata", staticmethod(racing_write))
    else:  # just before the commit request is sent
        commit_table = RestCatalog.commit_table

        def racing_commit(self: Any, *args: Any, **kwargs: Any) -> Any:
            race()
            return commit_table(self, *args, **kwargs)

        monkeypatch.setattr(RestCatalog, "commit_table", racing_commit)
    result = commit_statistics(Table.load("db.events", catalog="test", fileio=FileIO()), entry)
    assert raced and result.attempts == (2 if isinstance(catalog, SqlCatalog) else 1)
    final = catalog.load_table("db.events")
    assert local_path(final.metadata_location) == local_path(result.metadata_file)
    assert final.properties["written-by"] == "another writer"
    assert [s.statistics_path for s in final.metadata.statistics] == [entry.path]


def test_rest_catalog_vends_its_fileio_properties(rest_catalog: Any) -> None:
    """The FileIO properties a REST catalog sends with a table (credentials, endpoints) are
    what the storage layer reads that table's files with."""
    assert catalogs.load_table("test", "db.events").io_properties[VENDED[0]] == VENDED[1]
    table = Table.load("db.events", catalog="test", fileio=FileIO())
    assert table.fileio.properties[VENDED[0]] == VENDED[1]


def test_commit_refuses_an_expired_snapshot(catalog: Any) -> None:
    entry = StatisticsFileEntry.for_blobs(1234, "file:///x.stats", 10, 4, [])
    with pytest.raises(PuffinError, match="snapshot 1234 is no longer in the table"):
        commit_statistics(Table.load("db.events", catalog="test", fileio=FileIO()), entry)


def register_spark_table(catalog: Any, name: str, tmp_path: Path) -> Path:
    """A private copy of a table Spark 3.5 + Iceberg 1.10.2 built, registered as db.NAME."""
    built = script_output(STATS_SCRIPT, "stats-tables", "build")
    table_dir = tmp_path / "spark" / name
    shutil.copytree(built / "warehouse" / "db" / name, table_dir)
    catalog.register_table(("db", name), str(current_metadata_file(table_dir, fileio=FileIO())))
    return table_dir


@pytest.mark.catalog  # the catalog fixture is got by name (request.getfixturevalue)
@pytest.mark.parametrize(("kind", "name"), [("sql", "types_v2"), ("rest", "types_v2"),
                                          ("rest", "types_v3")])
def test_spark_built_table_registered_in_the_catalog(kind: str, name: str, spark: Any,
                                                     tmp_path: Path,
                                                     request: pytest.FixtureRequest) -> None:
    """A table written by Spark (position delete files or deletion vectors, every type, a
    column in estimation mode), registered in the catalog: the sketches are Iceberg's own,
    byte for byte, and the commit through the catalog replaces Iceberg's statistics for that
    snapshot. A REST catalog writes the metadata on its server (Iceberg Java), so it takes the
    commit of a format 3 table too (a SQL catalog cannot: the test below)."""
    catalog = request.getfixturevalue(f"{kind}_catalog")
    table_dir = register_spark_table(catalog, name, tmp_path)
    _, iceberg = iceberg_statistics(table_dir)
    outcome = invoke("stats", "compute", "--catalog", "test", f"db.{name}", "--commit",
                     "--full", "--master", "local[2]", "--json")
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.output)
    ours = read_blobs(doc["statistics-path"])
    assert_iceberg_sketches_committed(ours, iceberg, catalog, doc, f"db.{name}")


def assert_iceberg_sketches_committed(ours: dict[Any, Any], iceberg: dict[Any, Any],
                                      catalog: Any, doc: dict[str, Any],
                                      identifier: str) -> None:
    """Our blobs carry Iceberg's sketch bytes for the same fields, and the catalog's current
    snapshot of ``identifier`` lists exactly the statistics file the command wrote."""
    assert sorted(ours) == sorted(iceberg)
    assert all(ours[f][1] == iceberg[f][1] for f in ours)
    after = catalog.load_table(identifier)
    current = [s for s in after.metadata.statistics
               if s.snapshot_id == after.metadata.current_snapshot_id]
    assert [s.statistics_path for s in current] == [doc["statistics-location"]]


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` and the SHA-256 of its bytes."""
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.spark
def test_format_3_commit_is_refused_before_any_work(sql_catalog: Any, tmp_path: Path) -> None:
    """pyiceberg 0.12 cannot write format 3 metadata, so a SQL catalog (whose metadata
    pyiceberg writes) cannot take the commit of a v3 table: refused in one line before Spark
    starts, exit 1, nothing written (the table, the catalog's warehouse, the working
    directory); the same table alone or in a namespace run, and in its --dry-run plan."""
    from test_stats_batch import run_no_spark

    table_dir = register_spark_table(sql_catalog, "types_v3", tmp_path)
    before = sql_catalog.load_table("db.types_v3").metadata_location
    trees = [table_dir, tmp_path / "warehouse"]
    digests = [tree_digest(t) for t in trees]
    refusal = ("catalog test: cannot commit to db.types_v3: pyiceberg writes this catalog's "
               "metadata and cannot write format 3: Writing V3 is not yet supported")
    code, out, err, imported = run_no_spark(
        "stats", "compute", "--catalog", "test", "db.types_v3", "--commit", "--full", "-q",
        "--master", "local[2]", cwd=tmp_path)
    assert (code, out, imported) == (1, "", False)
    assert err.startswith(f"puffin: error: {refusal}") and err.count("\n") == 1, err
    code, out, err, imported = run_no_spark(
        "stats", "compute", "--catalog", "test", "db", "--commit", "--dry-run", "--json",
        cwd=tmp_path)
    assert (code, err, imported) == (1, "", False)
    outcomes = {t["table"]: t for t in json.loads(out)["tables"]}
    assert outcomes["db.events"]["status"] == "planned"
    assert outcomes["db.types_v3"]["status"] == "failed"
    assert outcomes["db.types_v3"]["error"]["message"].startswith(refusal)
    assert [tree_digest(t) for t in trees] == digests
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["catalog.db", "warehouse", "spark"])
    assert sql_catalog.load_table("db.types_v3").metadata_location == before


def test_scan_catalog_checks_every_referenced_puffin_file_and_orphans(
        catalog: Any, spark: Any, tmp_path: Path) -> None:
    """Every Puffin file the tables reference (Iceberg's statistics file, the deletion vector
    files of every snapshot) and an orphan under a table are validated, on Spark or in this
    process alike; a namespace limits the scan to its tables."""
    table_dir = register_spark_table(catalog, "types_v3", tmp_path)
    on_disk = sorted(str(p) for p in table_dir.rglob("*") if p.suffix in (".puffin", ".stats"))
    assert any(p.endswith(".stats") for p in on_disk) and any(p.endswith(".puffin")
                                                               for p in on_disk)
    orphan = table_dir / "metadata" / "left-behind.stats"
    orphan.write_bytes(b"PFA1 not really")  # an orphan that is also broken
    catalog.create_namespace("other")
    catalog.create_table("other.empty", schema=pa.schema([("x", pa.int32())]))
    results = {}
    for mode in ((), ("--spark", "--master", "local[2]")):
        out = tmp_path / f"findings{len(mode)}.jsonl"
        outcome = invoke("scan", "--catalog", "test", *mode, "--json", "--output", str(out))
        assert outcome.exit_code == 1, outcome.output  # the orphan is not a Puffin file
        doc = json.loads(outcome.output)
        records = {r["path"]: r for r in map(json.loads, out.read_text().splitlines())}
        assert sorted(records) == sorted([*on_disk, str(orphan)])
        assert [p for p, r in records.items() if r["errors"]] == [str(orphan)]
        assert (doc["catalog"], doc["tables"], doc["orphans"]) == ("test", 3, [str(orphan)])
        results[mode] = json.dumps([doc["files"], doc["errors"], doc["codes"]])
    assert len(set(results.values())) == 1
    only_other = json.loads(invoke("scan", "--catalog", "test", "other", "--json").output)
    assert (only_other["tables"], only_other["files"]) == (1, 0)


def test_scan_catalog_unknown_namespace(catalog: Any, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    from puffin_cli.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["scan", "--catalog", "test", "nowhere"])
    assert exited.value.code == 1
    assert capsys.readouterr().err == "puffin: error: catalog test: no namespace nowhere\n"
