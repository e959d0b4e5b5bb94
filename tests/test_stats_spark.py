"""``puffin stats compute`` against Iceberg Java's own ``compute_table_stats``.

The tables are built once (and cached) by Spark 3.5 + Iceberg 1.10.2
(tests/interop/spark_scripts/stats_tables.py), each ending with Iceberg's statistics of its
current snapshot. puffin-cli's pipeline runs on PySpark 4.3 in this process (one session for
the whole test run) and must give the same NDVs and, in exact mode, the same sketch bytes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from golden.regenerate import golden_path, normalise, write_golden
from interop.sparkenv import script_output, spark_env
from stats_compute import SKETCHERS, compute_stats
from tables.fixtures import TABLES, spark_tables, table_dir  # noqa: F401
from tiers import needs

from puffin_cli.analysis.stats.plan import plan_snapshot, stats_snapshot
from puffin_cli.analysis.stats.result import StatsResult
from puffin_cli.analysis.stats.task_groups import (
    TASK_PLANNING_PROPERTY,
    TaskPlanning,
    plan_task_groups,
    split_planning,
)
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import current_metadata_file, load_metadata
from puffin_cli.errors import PuffinError
from puffin_cli.format.reader import PuffinReader
from puffin_cli.spark.stats import planning_parallelism
from puffin_cli.storage import FileIO

SCRIPT = Path(__file__).resolve().parent / "interop" / "spark_scripts" / "stats_tables.py"


@pytest.fixture(scope="session")
@needs("spark")
def stats_tables() -> Path:
    """OUT_DIR with warehouse/db/<table> and tables.json (Iceberg's own view)."""
    return script_output(SCRIPT, "stats-tables", "build")


@pytest.fixture(scope="session")
@needs("spark")
def spark() -> Any:
    from puffin_cli.spark.session import get_session

    return get_session("local[2]")


def copy_table(stats_tables: Path, name: str, tmp_path: Path) -> Path:
    """A private copy (the pipeline writes into the table's metadata directory)."""
    target = tmp_path / "warehouse" / "db" / name
    shutil.copytree(stats_tables / "warehouse" / "db" / name, target)
    return target


def iceberg_statistics(table: Path) -> tuple[Any, dict[int, tuple[Any, bytes]]]:
    """Iceberg's statistics file for the current snapshot: (entry, field id -> (blob, bytes))."""
    metadata = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    entry = next(s for s in metadata.statistics if s.snapshot_id == metadata.current_snapshot_id)
    local = table / "metadata" / Path(entry.path).name
    return entry, read_blobs(local)


def read_blobs(path: Path | str) -> dict[int, tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return {blob.fields[0]: (blob, reader.read_blob(blob)) for blob in reader.metadata.blobs}


def run(table: Path, spark: Any, sketcher: str = "spark", **options: Any) -> StatsResult:
    """A full compute (on Spark unless ``sketcher`` says otherwise)."""
    return compute_stats(table, sketcher=sketcher, **{"full": True, **options})


@pytest.mark.parametrize("sketcher", SKETCHERS)
@pytest.mark.parametrize("name", ["types_v2", "types_v3"])
def test_sketch_bytes_equal_icebergs(name: str, sketcher: str, stats_tables: Path, spark: Any,
                                     tmp_path: Path) -> None:
    """Exact mode (and one column in estimation mode), every supported type, deletes (v2
    position delete files / v3 deletion vectors), a renamed column and a column older files
    lack: identical sketches, from either sketcher."""
    table = copy_table(stats_tables, name, tmp_path)
    expected = json.loads((stats_tables / "tables.json").read_text())[name]
    _, iceberg = iceberg_statistics(table)
    result = run(table, spark, sketcher)
    assert result.in_process == (sketcher == "in-process")
    assert result.rows_read == expected["live-rows"]
    assert result.snapshot_id == expected["current-snapshot-id"]
    if name == "types_v2":
        assert (result.position_delete_files, result.deletion_vectors) == (6, 0)
    else:
        assert (result.position_delete_files, result.deletion_vectors) == (0, 9)
    names = [c.name for c in result.columns]
    assert names == ["i", "l", "d", "f", "s_renamed", "dt", "dec", "big", "ts", "tsn", "b",
                     "bin", "added"]
    ours = read_blobs(result.statistics_path)
    assert sorted(ours) == sorted(iceberg)
    for column in result.columns:
        blob, data = ours[column.field_id]
        ice_blob, ice_data = iceberg[column.field_id]
        assert data == ice_data, column.name
        assert blob.properties == ice_blob.properties == {"ndv": str(column.ndv)}
        assert (blob.type, blob.snapshot_id, blob.sequence_number, blob.compression_codec) == \
            (ice_blob.type, ice_blob.snapshot_id, ice_blob.sequence_number, "zstd")
        # l has 4,370 distinct values in types_v2: estimation mode, still identical.
        assert column.exact == (name == "types_v3" or column.name != "l"), column.name
    with PuffinReader(result.statistics_path) as reader:
        properties = reader.metadata.properties
        assert sorted(properties) == ["created-by", TASK_PLANNING_PROPERTY,
                                      "puffin-cli.uuid-hash"]
        assert properties["puffin-cli.uuid-hash"] == "text"
        assert properties["created-by"].startswith("puffin-cli ")
        # the task planning the sketches had: the table's split properties, the session's
        # planning parallelism
        loaded = Table.load(table, fileio=FileIO())
        planned = TaskPlanning(split_planning(plan_snapshot(loaded, stats_snapshot(
            loaded, None), None)), planning_parallelism(spark))
        assert TaskPlanning.from_property(properties[TASK_PLANNING_PROPERTY]) == planned
        assert [b.fields[0] for b in reader.metadata.blobs] == [c.field_id
                                                                for c in result.columns]
    assert Path(result.statistics_path).parent == table / "metadata"
    assert Path(result.statistics_path).name.startswith(f"{result.snapshot_id}-")


@pytest.mark.parametrize("sketcher", SKETCHERS)
def test_estimation_mode(sketcher: str, stats_tables: Path, spark: Any,
                         tmp_path: Path) -> None:
    """More than 4096 distinct values: Iceberg's sketch depends on which rows each of its Spark
    tasks saw and in what order (an Alpha sketch per task). m has 5,000 distinct values in each
    of 4 INSERTs (2 files each, 2 files a task), so one task's Alpha theta falls below the
    column's 4097th smallest hash and the NDV is not the "4096 smallest hashes" one (4999):
    replaying Iceberg's tasks gives its sketch byte for byte, NDV 5009 included (other
    layouts: test_stats_layouts.py)."""
    table = copy_table(stats_tables, "wide_v2", tmp_path)
    _, iceberg = iceberg_statistics(table)
    result = run(table, spark, sketcher)
    ours = read_blobs(result.statistics_path)
    by_name = {c.name: c for c in result.columns}
    for name in ("k", "h", "m"):
        column = by_name[name]
        assert not column.exact
        assert ours[column.field_id][1] == iceberg[column.field_id][1], name
        assert ours[column.field_id][0].properties == iceberg[column.field_id][0].properties
    m = by_name["m"]
    assert m.retained < 4096 and m.ndv == 5009
    assert (by_name["k"].retained, by_name["h"].retained) == (4096, 4096)


def test_sketches_in_process_equal_icebergs(stats_tables: Path, tmp_path: Path) -> None:
    """The steps without Spark: the same task groups sketched in this process give Iceberg's
    sketches (estimation mode included); the statistics entry lists the blob metadata the
    writer wrote."""
    from puffin_cli.analysis.stats import steps

    table = copy_table(stats_tables, "wide_v2", tmp_path)
    _, iceberg = iceberg_statistics(table)
    plan = steps.plan_statistics(Table.load(table, fileio=FileIO()), None, None)
    # local[2]: max(2, 200 shuffle partitions)
    sketches = steps.sketch_groups(plan, plan_task_groups(plan, 200))
    written = steps.write_statistics(
        plan, sketches, planning=TaskPlanning(split_planning(plan), 200))
    ours = read_blobs(written.path)
    assert sorted(ours) == sorted(iceberg)
    for field_id, (blob, data) in ours.items():
        assert data == iceberg[field_id][1], field_id
        assert blob.properties == iceberg[field_id][0].properties
    entry = written.entry().to_json()
    assert entry["file-size-in-bytes"] == Path(written.path).stat().st_size
    assert entry["blob-metadata"] == [
        {"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
         "fields": list(b.fields), "properties": b.properties}
        for b, _ in (ours[c.field_id] for c in plan.columns)]


def test_columns_and_snapshot_options(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    table = copy_table(stats_tables, "types_v2", tmp_path)
    metadata = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    first = metadata.snapshots[0]
    # The old name of a renamed column finds it in the older snapshot's schema.
    result = run(table, spark, columns=["s", "l"], snapshot_id=first.snapshot_id)
    assert [(c.name, c.field_id) for c in result.columns] == [("s", 5), ("l", 2)]
    assert result.snapshot_id == first.snapshot_id
    assert result.rows_read == 2500 and result.data_files == 2
    blobs = read_blobs(result.statistics_path)
    assert {b.sequence_number for b, _ in blobs.values()} == {first.sequence_number}
    # The current name works for the old snapshot too (same field ID).
    again = run(table, spark, columns=["s_renamed"], snapshot_id=first.snapshot_id)
    # The generator's s for ids 0..2499 (its first INSERT): '' every 23rd, NULL every 29th.
    distinct = {f"s{i % 1201}-é" for i in range(2500) if i % 23 and i % 29}
    assert [(c.name, c.field_id, c.ndv) for c in again.columns] == [("s", 5, len(distinct))]


def test_orc_data_files(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    """ORC columns are matched by their iceberg.id attribute: the first snapshot of orc_v2
    (before any delete or rename) gives exactly the sketches of the same rows in Parquet
    (types_v2); the current snapshot (position delete files on ORC data files, a renamed
    column, a column older files lack) gives Iceberg's own sketches byte for byte."""
    orc = copy_table(stats_tables, "orc_v2", tmp_path)
    parquet = copy_table(stats_tables, "types_v2", tmp_path)
    io = FileIO()
    first = {t: load_metadata(current_metadata_file(t, io), io).snapshots[0].snapshot_id
             for t in (orc, parquet)}
    ours = run(orc, spark, snapshot_id=first[orc])
    reference = run(parquet, spark, snapshot_id=first[parquet])
    assert ours.rows_read == reference.rows_read == 2500
    orc_blobs, parquet_blobs = read_blobs(ours.statistics_path), \
        read_blobs(reference.statistics_path)
    assert sorted(orc_blobs) == list(range(1, 13))
    for field_id, (blob, data) in orc_blobs.items():
        assert data == parquet_blobs[field_id][1], field_id
        assert blob.properties == parquet_blobs[field_id][0].properties
    assert_equals_icebergs(stats_tables, orc, spark)


def assert_equals_icebergs(stats_tables: Path, table: Path, spark: Any) -> None:
    """The current snapshot's statistics equal Iceberg's own, blob for blob."""
    expected = json.loads((stats_tables / "tables.json").read_text())[table.name]
    _, iceberg = iceberg_statistics(table)
    current = run(table, spark)
    assert current.rows_read == expected["live-rows"] and current.position_delete_files > 0
    ours = read_blobs(current.statistics_path)
    assert sorted(ours) == sorted(iceberg)
    for field_id, (blob, data) in ours.items():
        assert data == iceberg[field_id][1], field_id
        assert blob.properties == iceberg[field_id][0].properties


def test_uuid_column_hashed_as_text(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    """Iceberg's Spark procedure reads a uuid column as a Spark string and hashes its text:
    so does the default; --uuid-hash bytes (the spec's 16 bytes) gives another estimate."""
    table = copy_table(stats_tables, "uuid_v2", tmp_path)
    assert_equals_icebergs(stats_tables, table, spark)
    as_bytes = run(table, spark, columns=["u"], uuid_hash="bytes")
    _, iceberg = iceberg_statistics(table)
    assert as_bytes.columns[0].ndv != int(iceberg[2][0].properties["ndv"])
    with PuffinReader(as_bytes.statistics_path) as reader:
        assert reader.metadata.properties["puffin-cli.uuid-hash"] == "bytes"


def test_avro_data_files(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    """Avro data files (columns by their field-id attribute) with Avro position delete files,
    a renamed column and a column older files lack: Iceberg's sketches byte for byte."""
    assert_equals_icebergs(stats_tables, copy_table(stats_tables, "avro_v2", tmp_path), spark)


@pytest.mark.parametrize("name", ["migrated_v2", "positional_v2", "orc_unmapped_v2"])
def test_data_files_without_field_ids(name: str, stats_tables: Path, spark: Any,
                                      tmp_path: Path) -> None:
    """Plain Parquet / ORC files added with add_files (no Iceberg field IDs), read as Iceberg
    reads them: by the name mapping (migrated_v2: a renamed column, both names mapped, beside
    Iceberg-written files), by position without a mapping (positional_v2: the files' column
    names are not the table's), by the read schema's names without a mapping (orc_unmapped_v2:
    the renamed column reads as nulls). Iceberg's sketches byte for byte."""
    table = copy_table(stats_tables, name, tmp_path)
    assert_equals_icebergs(stats_tables, table, spark)
    ndv = {c["columns"][0]: c["properties"]["ndv"] for c in json.loads(
        (stats_tables / "tables.json").read_text())[name]["statistics"][0]["blobs"]}
    renamed = {"migrated_v2": "1200", "positional_v2": None, "orc_unmapped_v2": "0"}[name]
    assert ndv.get("s_renamed") == renamed and ndv["l"] != "0"


def test_identity_partition_columns_come_from_the_manifests(stats_tables: Path, spark: Any,
                                                             tmp_path: Path) -> None:
    """Hive-style partition directories added with add_files: the files do not store the
    identity partition columns (cat, region); their values come from the manifests' partition
    tuples, as in Iceberg's readers. Iceberg's sketches byte for byte."""
    table = copy_table(stats_tables, "hive_v2", tmp_path)
    assert_equals_icebergs(stats_tables, table, spark)
    ndv = {c["columns"][0]: c["properties"]["ndv"] for c in json.loads(
        (stats_tables / "tables.json").read_text())["hive_v2"]["statistics"][0]["blobs"]}
    assert (ndv["cat"], ndv["region"]) == ("3", "2")


@pytest.mark.parametrize("kind", ["data", "position delete"])
def test_missing_file_is_one_line_exit_1(kind: str, stats_tables: Path, spark: Any,
                                         tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    """A file the plan needs but the disk lacks fails the Spark task that reads it; the user
    gets one line naming it (exit 1), not the worker's traceback."""
    from puffin_cli.cli.main import main

    table = copy_table(stats_tables, "types_v2", tmp_path)
    loaded = Table.load(table, fileio=FileIO())
    plan = plan_snapshot(loaded, stats_snapshot(loaded, None), None)
    missing = Path(plan.data_files[-1].local if kind == "data"
                   else plan.position_deletes[-1].local)
    missing.unlink()
    with pytest.raises(PuffinError) as caught:
        run(table, spark)
    assert (caught.value.code, str(caught.value)) == ("stats.read",
                                                      f"{missing}: parquet file not found")
    with pytest.raises(SystemExit) as exited:
        main(["stats", "compute", str(table), "--full", "--master", "local[2]", "-q",
              "-o", str(tmp_path / "out.stats")])
    assert exited.value.code == 1
    assert capsys.readouterr().err == f"puffin: error: {missing}: parquet file not found\n"


def test_unknown_column_and_snapshot(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    table = copy_table(stats_tables, "types_v3", tmp_path)
    metadata = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    with pytest.raises(PuffinError) as caught:
        run(table, spark, columns=["nope"])
    assert caught.value.code == "stats.column"
    assert str(caught.value) == (
        f"--columns: no top-level column 'nope' in schema 2 of snapshot "
        f"{metadata.current_snapshot_id} (columns: i, l, d, f, s_renamed, dt, dec, big, ts, "
        "tsn, b, bin, added)")
    with pytest.raises(PuffinError) as caught:
        run(table, spark, snapshot_id=42)
    assert caught.value.code == "table.snapshot"
    assert str(caught.value).startswith(f"{metadata.path}: no snapshot 42 (latest snapshots: ")


def test_commit_is_seen_by_iceberg_java(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    """After --commit, Iceberg Java loads the table and lists our statistics file (replacing
    its own for that snapshot) with our NDVs."""
    table = copy_table(stats_tables, "types_v3", tmp_path)
    before = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    result = run(table, spark, commit=True)
    assert result.committed_version is not None
    after = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    assert Path(after.path).name == f"v{result.committed_version}.metadata.json"
    assert [s.snapshot_id for s in after.statistics].count(result.snapshot_id) == 1
    assert len(after.statistics) == len(before.statistics)
    env = spark_env()
    warehouse = tmp_path / "warehouse"
    seen = json.loads(env.run(SCRIPT, "stats", json.dumps(env.session_conf(warehouse)),
                              "types_v3"))["types_v3"]
    current = [s for s in seen["statistics"] if s["snapshot-id"] == result.snapshot_id]
    assert len(current) == 1
    stats = current[0]
    assert stats["path"] == result.statistics_location
    assert (stats["file-size-in-bytes"], stats["file-footer-size-in-bytes"]) == \
        (result.file_size, result.footer_size)
    java_ndv = {b["columns"][0]: b["properties"]["ndv"] for b in stats["blobs"]}
    assert java_ndv == {c.name: str(c.ndv) for c in result.columns}


def test_cli_json(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    from puffin_cli.cli.main import cli

    table = copy_table(stats_tables, "types_v3", tmp_path)
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--columns", "l,b", "--full",
                                       "--master", "local[2]", "--json", "-q",
                                       "-o", str(tmp_path / "out.stats")])
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.stdout)
    # The table is built by Iceberg (a random snapshot ID, whose digits the file sizes follow).
    pinned = {key: value.replace(str(doc["snapshot-id"]), "<snapshot-id>")
              if isinstance(value, str) else value
              for key, value in normalise(doc, tmp_path).items()}
    pinned.update({"snapshot-id": 0, "file-size": 0, "footer-size": 0})
    # Iceberg's statistics file, named by the table's location (where the table was built)
    pinned["kept-from"] = "<location>/" + pinned["kept-from"].rsplit("/", 1)[-1]
    golden = golden_path("stats-compute-types-v3")
    if os.environ.get("PUFFIN_REGENERATE_GOLDEN"):
        write_golden(golden.stem, pinned)
    assert pinned == json.loads(golden.read_text(encoding="utf-8"))
    assert doc["file-size"] == Path(doc["statistics-path"]).stat().st_size
    assert [(c["name"], c["ndv"], c["exact"]) for c in doc["columns"]] == [("l", 3615, True),
                                                                          ("b", 2, True)]
    assert doc["rows-read"] == 3615 and doc["deletion-vectors"] == 9
    assert doc["committed-version"] is None
    assert Path(doc["statistics-path"]).is_file()


def test_spark_conf_reaches_the_session(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    """--conf KEY=VALUE goes to the session (a running one takes its spark.sql.* settings):
    spark.sql.shuffle.partitions is what Iceberg's adaptive split size divides by."""
    from puffin_cli.cli.main import cli
    from puffin_cli.spark.session import get_session

    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        assert get_session(None, {"spark.sql.shuffle.partitions": "3"}) is spark
        assert planning_parallelism(spark) == 3  # local[2]: max(2, 3)
        table = copy_table(stats_tables, "types_v3", tmp_path)
        outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--columns", "l",
                                           "--full", "--conf", "spark.sql.shuffle.partitions=5",
                                           "-q", "--json", "-o", str(tmp_path / "out.stats")])
        assert outcome.exit_code == 0, outcome.output
        assert spark.conf.get("spark.sql.shuffle.partitions") == "5"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    bad = CliRunner().invoke(cli, ["stats", "compute", str(table), "--conf", "nokey"])
    assert bad.exit_code == 2
    assert "'nokey': expected KEY=VALUE (e.g. spark.sql.shuffle.partitions=64)" in bad.output


def test_session_talks_to_its_python_workers_over_unix_sockets(spark: Any) -> None:
    """Over TCP each Python task waited about 40 ms on its socket (docs/spark.md)."""
    from puffin_cli.spark.session import UNIX_SOCKETS

    assert spark.sparkContext.getConf().get(UNIX_SOCKETS) == "true"
    assert spark.sparkContext.parallelize(range(4), 4).map(lambda x: x * 2).sum() == 12


def test_cli_human_summary(stats_tables: Path, spark: Any, tmp_path: Path) -> None:
    from puffin_cli.cli.main import cli

    table = copy_table(stats_tables, "types_v2", tmp_path)
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--columns", "i",
                                       "--commit", "--full"])
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.output.splitlines()
    assert lines[0].endswith(": 6 data files, deletes: 6 position delete files")
    assert lines[1] == "full: read 6 data files, 4,376 live rows (--full)"
    assert lines[3].split() == ["column", "field", "ID", "type", "ndv", "sketch"]
    assert lines[4].split() == ["i", "1", "int", "300", "exact"]
    assert lines[-2].startswith("committed as v10.metadata.json (statistics for snapshot ")
    # Iceberg's file for the snapshot, replaced and named by no other entry: deleted
    assert lines[-1] == ("deleted the snapshot's statistics file above, which the commit "
                         "replaced (no other entry names it)")


# --- the projected inputs hash as Iceberg serializes (Spark 4.3 theta_sketch_agg) -------------


@pytest.mark.parametrize("name", TABLES)
def test_every_statistics_file_of_the_table_tiers(name: str, spark_tables: Path,  # noqa: F811
                                                  spark: Any,
                                                  tmp_path: Path) -> None:
    """Every statistics file Iceberg registered on the tables of tests/tables (several
    snapshots, a column subset, partitions, deletion vectors, estimation-mode id columns whose
    files Iceberg bin-packs into one task): the same snapshot and columns give the same NDVs,
    and the same bytes for every exact-mode sketch. (With several data manifests, Iceberg
    reads them in parallel threads and its order of files within a task is not fixed; an
    estimation-mode sketch of such a task depends on that order, see docs/spark.md.)"""
    table = tmp_path / name
    shutil.copytree(table_dir(spark_tables, name), table)
    metadata = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    assert metadata.statistics
    for entry in metadata.statistics:
        iceberg = read_blobs(table / "metadata" / Path(entry.path).name)
        schema = dict(metadata.schema_for(entry.snapshot_id)[1])
        names = {f["id"]: f["name"] for f in schema["fields"]}
        result = run(table, spark, snapshot_id=entry.snapshot_id,
                     columns=[names[field_id] for field_id in iceberg])
        ours = read_blobs(result.statistics_path)
        assert sorted(ours) == sorted(iceberg)
        for column in result.columns:
            blob, data = ours[column.field_id]
            where = (entry.snapshot_id, column.name)
            assert blob.properties == iceberg[column.field_id][0].properties, where
            if column.exact:
                assert data == iceberg[column.field_id][1], where
