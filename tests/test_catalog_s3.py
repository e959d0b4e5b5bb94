"""Catalog tables whose files live in the test S3 server (moto, tests/s3server.py): a SQL
catalog on sqlite whose warehouse is a bucket, configured only through pyiceberg's variables
(no AWS_* variable: the storage layer takes the table's FileIO properties from the catalog);
tables written by pyiceberg, or built by Spark + Iceberg and uploaded; Spark executors in
separate processes (``local-cluster``) reading the objects with the driver's configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from interop.sparkenv import script_output
from s3server import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from test_catalog import (  # noqa: F401 - the fixtures any_catalog asks for
    ROWS,
    assert_iceberg_sketches_committed,
    rest_catalog,
    sql_catalog,
    with_events,
)
from test_stats_spark import SCRIPT as STATS_SCRIPT
from test_stats_spark import iceberg_statistics, read_blobs
from tiers import needs

from puffin_cli.analysis.table.metadata import current_metadata_file
from puffin_cli.cli.main import cli
from puffin_cli.storage import FileIO, join

CLUSTER = "local-cluster[2,1,1024]"  # two executor JVMs, each with its own Python workers


@pytest.fixture
@needs("catalog", "objectstore")
def s3_catalog(s3_server: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
               ) -> tuple[Any, str, dict[str, str]]:
    """(catalog ``s3cat``, its bucket, the variables that configure it) with table
    ``db.events`` (two appends by pyiceberg) in the bucket."""
    from pyiceberg.catalog import load_catalog

    bucket = f"catalog-{uuid.uuid4().hex[:12]}"
    s3_server.client().create_bucket(Bucket=bucket)
    properties = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db",
                  "warehouse": f"s3://{bucket}/warehouse", "s3.endpoint": s3_server.endpoint,
                  "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY,
                  "s3.region": REGION}
    variables = {f"PYICEBERG_CATALOG__S3CAT__{key.upper().replace('.', '__').replace('-', '_')}":
                 value for key, value in properties.items()}
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return with_events(load_catalog("s3cat", **properties)), bucket, variables


@pytest.fixture(scope="module")
@needs("spark")
def spark() -> Any:
    from puffin_cli.spark.session import get_session

    return get_session("local[2]")


def invoke(*args: str) -> Any:
    outcome = CliRunner().invoke(cli, list(args))
    return outcome


def key_of(location: str, bucket: str) -> str:
    assert location.startswith(f"s3://{bucket}/"), location
    return location[len(f"s3://{bucket}/"):]


def test_table_stats_commit_and_scan_in_the_object_store(
        s3_catalog: tuple[Any, str, dict[str, str]], s3_server: S3Server, spark: Any) -> None:
    catalog, bucket, _ = s3_catalog
    client = s3_server.client()
    before = catalog.load_table("db.events")
    shown = invoke("table", "--catalog", "s3cat", "db.events", "--json")
    assert shown.exit_code == 0, shown.output
    [table] = json.loads(shown.output)["tables"]
    assert table["metadata-file"] == before.metadata_location
    assert table["current-snapshot-id"] == before.metadata.current_snapshot_id

    outcome = invoke("stats", "compute", "--catalog", "s3cat", "db.events", "--commit",
                     "--full", "--master", "local[2]", "--json")
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.output)
    assert {c["name"]: c["ndv"] for c in doc["columns"]} == {"id": ROWS, "city": 37}
    location = doc["statistics-location"]
    assert location == doc["statistics-path"]
    assert location.startswith(f"{before.location()}/metadata/")
    head = client.head_object(Bucket=bucket, Key=key_of(location, bucket))
    assert head["ContentLength"] == doc["file-size"]
    after = catalog.load_table("db.events")
    assert after.metadata_location == doc["committed-metadata"]
    assert [s.statistics_path for s in after.metadata.statistics] == [location]

    checked = json.loads(invoke("table", "--catalog", "s3cat", "db.events", "--json").output)
    [view] = checked["tables"][0]["snapshots"]
    assert [s["path"] for s in view["statistics"]] == [location]
    assert checked["tables"][0]["findings"] == []
    names = invoke("inspect", "--catalog", "s3cat", "--table", "db.events", "--json", location)
    assert names.exit_code == 0, names.output
    assert [b["columns"] for b in json.loads(names.output)["files"][0]["blobs"]] == \
        [["id"], ["city"]]

    orphan = f"{before.location()}/data/left-behind.puffin"
    body = client.get_object(Bucket=bucket, Key=key_of(location, bucket))["Body"].read()
    client.put_object(Bucket=bucket, Key=key_of(orphan, bucket), Body=body)
    scanned = invoke("scan", "--catalog", "s3cat", "--json")
    assert scanned.exit_code == 0, scanned.output
    result = json.loads(scanned.output)
    assert (result["tables"], result["files"], result["errors"], result["orphans"]) == \
        (1, 2, 0, [orphan])


@pytest.mark.parametrize("name", ["types_v2", "orc_v2", "avro_v2", "types_v3", "migrated_v2",
                                  "positional_v2", "orc_unmapped_v2", "hive_v2"])
def test_spark_built_table_uploaded_and_registered(
        s3_catalog: tuple[Any, str, dict[str, str]], s3_server: S3Server, spark: Any,
        tmp_path: Path, name: str) -> None:
    """A table written by Spark + Iceberg (format 2 with Parquet, ORC or Avro data files and
    position delete files; format 3 with deletion vectors; Parquet / ORC files without field
    IDs, read by name mapping, position or name; Hive-style partition directories whose
    identity values come from the manifests), its files uploaded to the bucket
    and its metadata registered: read from the store (--relocate maps its original location
    there), with each file's field IDs read from the object itself, the sketches are
    Iceberg's own, byte for byte, and the commit goes through the catalog (a SQL catalog
    cannot commit format 3 metadata: pyiceberg 0.12, test_catalog.py)."""
    catalog, bucket, _ = s3_catalog
    built = script_output(STATS_SCRIPT, "stats-tables", "build")
    source = built / "warehouse" / "db" / name
    _, iceberg = iceberg_statistics(source)
    client = s3_server.client()
    prefix = f"s3://{bucket}/spark/{name}"
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        client.upload_file(str(path), bucket, f"spark/{name}/{path.relative_to(source)}")
    metadata = Path(current_metadata_file(source, fileio=FileIO()))
    catalog.register_table(("db", name), f"{prefix}/metadata/{metadata.name}")
    original = json.loads(metadata.read_text())["location"]
    commit = name != "types_v3"
    local = tmp_path / "ours.stats"
    # without --commit the file is written where -o says, not under the table
    outcome = invoke("stats", "compute", "--catalog", "s3cat", f"db.{name}",
                     *(["--commit"] if commit else ["-o", str(local)]), "--full", "--relocate",
                     f"{original}={prefix}", "--master", "local[2]", "--json")
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.output)
    if commit:
        client.download_file(bucket, key_of(doc["statistics-path"], bucket), str(local))
    else:
        assert doc["statistics-path"] == str(local) and not doc["in-table"]
    ours = read_blobs(local)
    if commit:
        assert_iceberg_sketches_committed(ours, iceberg, catalog, doc, f"db.{name}")
    else:
        assert {f: data for f, (_, data) in ours.items()} == \
            {f: data for f, (_, data) in iceberg.items()}


def test_namespace_run_in_the_object_store(s3_catalog: tuple[Any, str, dict[str, str]],
                                           s3_server: S3Server, spark: Any,
                                           tmp_path: Path) -> None:
    """``stats compute --catalog s3cat db``: one broken table among good ones (exit 1, the
    good ones committed through the catalog, their files in the bucket), the dry run (no
    Spark, not an object written), and after an append the refresh is incremental for that
    table and fresh for the other."""
    from test_stats_batch import run_no_spark
    from test_stats_namespace import (
        add_tables,
        committed_run,
        current_statistics,
        orders_rows,
    )

    catalog, bucket, _ = s3_catalog
    client = s3_server.client()

    def bucket_digest() -> dict[str, str]:
        listed = client.list_objects_v2(Bucket=bucket, MaxKeys=1000)
        assert not listed["IsTruncated"]
        return {o["Key"]: o["ETag"] for o in listed.get("Contents", [])}

    add_tables(catalog, lambda location: client.delete_object(
        Bucket=bucket, Key=key_of(location, bucket)))
    doc = committed_run("s3cat", "db", expected={"db.broken": "failed", "db.events": "computed",
                                                 "db.orders": "computed"})
    results = {t["table"]: t["result"] for t in doc["tables"] if t["result"]}
    for identifier, result in results.items():
        location = result["statistics-location"]
        assert current_statistics(catalog, identifier) == [location]
        assert client.head_object(Bucket=bucket, Key=key_of(location, bucket))[
            "ContentLength"] == result["file-size"]
    orders = catalog.load_table("db.orders")
    base = orders.metadata.current_snapshot_id
    orders.append(orders_rows(500, 100))
    before = bucket_digest()
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "s3cat", "db",
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (1, "", False)
    plans = {t["table"]: t["plan"] for t in json.loads(out)["tables"] if t["plan"]}
    assert {k: p["mode"] for k, p in plans.items()} == {"db.events": "fresh",
                                                        "db.orders": "incremental"}
    assert bucket_digest() == before
    doc = committed_run("s3cat", "db", expected={"db.broken": "failed", "db.events": "fresh",
                                                 "db.orders": "computed"})
    [refreshed] = [t["result"] for t in doc["tables"] if t["table"] == "db.orders"]
    assert (refreshed["mode"], refreshed["base-snapshot-id"], refreshed["rows-read"]) == \
        ("incremental", base, 100)
    assert current_statistics(catalog, "db.orders") == [refreshed["statistics-location"]]


def test_executors_in_other_processes_read_the_objects_themselves(
        s3_catalog: tuple[Any, str, dict[str, str]], s3_server: S3Server) -> None:
    """On a local cluster (separate executor JVMs and Python workers) with no AWS variable
    anywhere: stats compute's tasks read the data files, and scan --spark's tasks the Puffin
    objects, with the storage configuration the driver resolved (the catalog's FileIO
    properties; --io)."""
    catalog, _bucket, variables = s3_catalog
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **variables}
    done = subprocess.run(
        [sys.executable, "-m", "puffin_cli", "stats", "compute", "--catalog", "s3cat",
         "db.events", "--commit", "--full", "-q", "--master", CLUSTER, "--json"],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {c["name"]: c["ndv"] for c in doc["columns"]} == {"id": ROWS, "city": 37}
    location = doc["statistics-location"]
    table_location = catalog.load_table("db.events").location()
    io = ["--io", f"s3.endpoint={s3_server.endpoint}", "--io", f"s3.access-key-id={ACCESS_KEY}",
          "--io", f"s3.secret-access-key={SECRET_KEY}", "--io", f"s3.region={REGION}"]
    done = subprocess.run(
        [sys.executable, "-m", "puffin_cli", "scan", table_location, "--spark", "--master",
         CLUSTER, *io, "--json"],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    scanned = json.loads(done.stdout)
    assert (scanned["files"], scanned["errors"]) == (1, 0)
    assert location.startswith(table_location)


@pytest.mark.objectstore  # the README's script starts moto itself
@pytest.mark.catalog
def test_readme_catalog_example(tmp_path: Path) -> None:
    """The README's "Catalogs" example, run as written after the "Object stores" one (whose
    server and variables it continues), from a folder holding the samples."""
    import shutil

    from test_object_store import SAMPLES, readme_scripts, run_readme_script

    (objects,) = readme_scripts("Object stores")
    (catalogs,) = readme_scripts("Catalogs")
    shutil.copytree(SAMPLES, tmp_path / "samples")
    bin_dir = str(Path(sys.executable).parent)
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("AWS_", "GOOGLE_", "PYICEBERG_"))}
    env = {**keep, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "80", "NO_COLOR": "1", "AWS_EC2_METADATA_DISABLED": "true",
           "PYICEBERG_HOME": str(tmp_path)}
    output, returncode = run_readme_script(objects + catalogs, tmp_path, env, 600)
    lines = output.splitlines()
    assert returncode == 0, output
    assert "  statistics       none registered for this snapshot or its ancestors" in lines
    assert "  id             1  long                      1,000  exact" in lines, output
    assert "  city           2  string                       37  exact" in lines, output
    assert any(line.startswith("committed as 00002-") for line in lines), output
    # the dry run plans namespace db before any statistics; the namespace run after the
    # commit finds them fresh
    planned = [line for line in lines if line.startswith("db.events: snapshot ")]
    assert len(planned) == 2, output
    assert planned[0].endswith(": full in process, reads 1 data file, 1,000 rows of 1 file (no "
                               "ancestor has statistics of this column); Spark uses: none"), output
    assert "plan for 1 table: 1 full (1 data file, 1,000 rows); nothing computed, no Spark " \
        "started" in lines, output
    assert ": fresh, left as it is (s3://demo/catalog/" in planned[1], output
    assert any(line.startswith("1 table: 0 computed, 1 fresh, 0 failed; 0 rows read in ")
               and line.endswith(" (no Spark needed)") for line in lines), output
    assert lines.count("  no findings; 2 manifest file(s) read") == 2, output
    assert lines[-2] == ("1 table of catalog demo; 0 orphan Puffin files (under a table, "
                         "referenced by none of its metadata)"), output
    assert lines[-1].startswith("scanned "), output


@pytest.fixture(params=[pytest.param("sql", marks=pytest.mark.catalog),
                        pytest.param("rest", marks=[pytest.mark.catalog, pytest.mark.java]),
                        pytest.param("s3", marks=[pytest.mark.catalog, pytest.mark.objectstore])])
def any_catalog(request: pytest.FixtureRequest) -> tuple[Any, str]:
    """(catalog, its name): SQL and REST on local disk (test_catalog.py), SQL on the S3 server."""
    if request.param == "s3":
        return request.getfixturevalue("s3_catalog")[0], "s3cat"
    return request.getfixturevalue(f"{request.param}_catalog"), "test"


@pytest.mark.parametrize("other", ["append", "statistics"])
def test_another_writer_commits_while_stats_compute_commits(
        any_catalog: tuple[Any, str], other: str, spark: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Another writer commits when an incremental `stats compute --commit` is about to commit
    (its "committing" phase). An append: both commits kept, ours registering statistics of
    exactly the snapshot it read (the 1,200 rows, not the writer's 10 more). Statistics of
    other columns registered for that snapshot meanwhile: ours is refused in one line (exit 1,
    theirs kept, our file removed: no statistics file in the table that nothing registers)."""
    import pyarrow as pa

    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.cli.main import main
    from puffin_cli.render.progress import ProgressDisplay

    catalog, name = any_catalog

    def rows(start: int, count: int) -> Any:
        return pa.table({"id": pa.array(range(start, start + count), pa.int64()),
                         "city": pa.array([f"c{i % 41}" for i in range(start, start + count)])})

    with catalog.load_table("db.events").transaction() as change:
        change.set_properties({"read.split.target-size": "1024"})  # a task per file
    first = invoke("stats", "compute", "--catalog", name, "db.events", "--commit", "--columns",
                   "id", "--master", "local[2]")
    assert first.exit_code == 0, first.output
    catalog.load_table("db.events").append(rows(ROWS, 200))
    target = catalog.load_table("db.events").metadata.current_snapshot_id
    theirs: list[str] = []
    phase = ProgressDisplay.phase

    def racing_phase(self: ProgressDisplay, text: str) -> None:
        if text == "committing" and not theirs:
            theirs.append(text)
            if other == "append":
                catalog.load_table("db.events").append(rows(5000, 10))
            else:
                done = invoke("stats", "compute", "--catalog", name, "db.events", "--commit",
                              "--columns", "city", "--full", "--master", "local[2]", "--json")
                assert done.exit_code == 0, done.output
                theirs[0] = json.loads(done.stdout)["statistics-location"]
        phase(self, text)

    monkeypatch.setattr(ProgressDisplay, "phase", racing_phase)
    with pytest.raises(SystemExit) as exited:
        main(["stats", "compute", "--catalog", name, "db.events", "--commit", "--columns",
              "id", "--json"])
    out, err = capsys.readouterr()
    final = catalog.load_table("db.events")
    registered = {s.statistics_path: s.snapshot_id for s in final.metadata.statistics}
    if other == "append":
        assert (exited.value.code, err) == (0, "")
        doc = json.loads(out)
        assert (doc["mode"], doc["snapshot-id"], doc["rows-read"]) == ("incremental", target,
                                                                        200)
        assert [c["ndv"] for c in doc["columns"]] == [ROWS + 200]
        assert len(final.snapshots()) == 4 and final.metadata.current_snapshot_id != target
        assert registered[doc["statistics-location"]] == target
    else:
        assert (exited.value.code, out) == (1, "")
        assert err.startswith(f"puffin: error: catalog {name}: table db.events: another "
                              f"writer registered statistics for snapshot {target} meanwhile "
                              f"({theirs[0]}); statistics not committed") and \
            err.count("\n") == 1, err
        assert registered[theirs[0]] == target
    table = Table.load("db.events", catalog=name, fileio=FileIO())
    written = [f.location for f in table.fileio.list_files(join(table.table_dir, "metadata"))
               if f.location.endswith(".stats")]
    assert sorted(map(local_location, written)) == sorted(map(local_location, registered))


def local_location(location: str) -> str:
    """A location without the file: scheme's spellings (file:/, file:///) a catalog uses."""
    return location.replace("file:///", "/").replace("file:/", "/")


def test_output_to_a_new_prefix_of_the_object_store(
        s3_catalog: tuple[Any, str, dict[str, str]], s3_server: S3Server, spark: Any) -> None:
    """-o s3://BUCKET/PREFIX/ (nothing under it yet): the statistics file is written under
    the prefix, for one table and for a namespace run (before: one table's file was written
    as the object PREFIX, the slash dropped; a run refused the prefix as no existing
    directory), and nothing is written in the table's folders."""
    _, bucket, _ = s3_catalog
    client = s3_server.client()
    io = ["--io", f"s3.endpoint={s3_server.endpoint}", "--io", f"s3.access-key-id={ACCESS_KEY}",
          "--io", f"s3.secret-access-key={SECRET_KEY}", "--io", f"s3.region={REGION}"]

    def keys() -> list[str]:
        listed = client.list_objects_v2(Bucket=bucket, MaxKeys=1000)
        assert not listed["IsTruncated"]
        return sorted(o["Key"] for o in listed.get("Contents", []))

    before = keys()
    one = invoke("stats", "compute", "--catalog", "s3cat", "db.events", "-o",
                 f"s3://{bucket}/one/", *io, "--master", "local[2]", "--json", "-q")
    assert one.exit_code == 0, one.output
    doc = json.loads(one.stdout)
    key = key_of(doc["statistics-path"], bucket)
    assert key.startswith(f"one/{doc['snapshot-id']}-") and key.endswith(".stats")
    assert not doc["in-table"]
    run = invoke("stats", "compute", "--catalog", "s3cat", "db", "-o", f"s3://{bucket}/nightly/",
                 *io, "--master", "local[2]", "--json", "-q")
    assert run.exit_code == 0, run.output
    [result] = [t["result"] for t in json.loads(run.stdout)["tables"]]
    nightly = key_of(result["statistics-path"], bucket)
    assert nightly.startswith("nightly/db.events-") and nightly.endswith(".stats")
    assert keys() == sorted([*before, key, nightly])
